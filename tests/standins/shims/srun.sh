# srun: a job step, with its SLURM_* variables; with pyxis' --container-image, a container. A step of several
# tasks (--nodes, --nodelist or --ntasks over a job of several nodes) runs its command once per task, at once,
# each on its node: SLURM_PROCID and SLURM_NODEID its rank, HOSTNAME and STANDIN_NODE the node's name,
# STANDIN_NODE_ADDR the node's own address (the hostname, ip and server stand-ins answer with them).
. "$_standin_root/lib/slurm-lib.sh"
for _a in "$@"; do
    case "$_a" in
        --container-image|--container-image=*) STANDIN_CALL="$_standin_call" exec "$_standin_python" -S -E \
            "$_standin_root/lib/main.py" "$_standin_root" srun "$@" ;;
    esac
done
_job=${SLURM_JOB_ID:-} _name=${SLURM_JOB_NAME:-} _ntasks= _nnodes= _nodelist= _chdir= _export=ALL
while (( $# )); do
    case "$1" in
        --jobid=*) _job=${1#*=} ;;
        --jobid) _job=$2; shift ;;
        --job-name=*) _name=${1#*=} ;;
        -J|--job-name) _name=$2; shift ;;
        --ntasks=*) _ntasks=${1#*=} ;;
        -n|--ntasks) _ntasks=$2; shift ;;
        --nodes=*) _nnodes=${1#*=} ;;
        -N|--nodes) _nnodes=$2; shift ;;
        --nodelist=*) _nodelist=${1#*=} ;;
        -w|--nodelist) _nodelist=$2; shift ;;
        --chdir=*) _chdir=${1#*=} ;;
        -D|--chdir) _chdir=$2; shift ;;
        --export=*) _export=${1#*=} ;;
        --export) _export=$2; shift ;;
        --) shift; break ;;
        --*=*) ;;
        -*) if _slurm_takes_value "$1"; then shift; fi ;;
        *) break ;;
    esac
    shift
done
(( $# )) || { echo "srun: fatal: No command given to execute." >&2; exit 1; }
_new=
if [[ -z "$_job" ]]; then _job=$(_slurm_new "${_name:-$1}" "${_nnodes%%-*}"); _new=1; fi
# The step's nodes: those named, else the first --nodes of the job's, else as many as tasks asked (one task per
# node, as the launchers ask), else, in a job that exists, all of them (srun's default), else the first.
_slurm_job_nodes "$_job"
IFS=, read -r -a _all <<< "$_slurm_nodes"
if [[ -n "$_nodelist" ]]; then
    IFS=, read -r -a _step <<< "$_nodelist"
else
    _count=${_nnodes%%-*}
    if [[ -z "$_count" ]]; then
        # no size: as many nodes as tasks asked, else a step of a job is the whole job (one task per node)
        if [[ -n "$_ntasks" ]]; then _count=$_ntasks; elif [[ -z "$_new" ]]; then _count=${#_all[@]}; else _count=1; fi
    fi
    (( _count > ${#_all[@]} )) && _count=${#_all[@]}
    (( _count < 1 )) && _count=1
    _step=("${_all[@]:0:_count}")
fi
_tasks=${_ntasks:-${#_step[@]}}
_slurm_step_env "$_job" "${_name:-$1}" "$_tasks"
IFS=, read -r -a _items <<< "$_export"
for _item in "${_items[@]}"; do
    [[ "$_item" == *=* ]] && export "$_item"
done
[[ -n "$_chdir" ]] && cd "$_chdir"
if (( ${#_all[@]} > 1 )); then
    # A job of several nodes: every task says which node it is on, the first one too, and runs in a process group
    # of its own (job control: each background job is its own group; see _slurm_task_group).
    _pids=()
    set -m
    for (( _t = 0; _t < _tasks; _t++ )); do
        _node=${_step[_t % ${#_step[@]}]}
        SLURM_PROCID=$_t SLURM_NODEID=$((_t % ${#_step[@]})) SLURMD_NODENAME=$_node HOSTNAME=$_node \
            STANDIN_NODE=$_node STANDIN_NODE_ADDR=$(_slurm_node_addr "$_node") "$@" &
        _pids+=($!)
        _slurm_task_group "$_job" "$!"
    done
    set +m
    _rc=0
    for _pid in "${_pids[@]}"; do
        wait "$_pid"; _code=$?
        (( _code > _rc )) && _rc=$_code
    done
    [[ -n "$_new" ]] && _slurm_end "$_job"
    exit "$_rc"
fi
if [[ -z "$_new" ]]; then exec "$@"; fi
"$@"
_rc=$?
_slurm_end "$_job"
exit "$_rc"
