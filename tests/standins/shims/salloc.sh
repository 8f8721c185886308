# salloc: grants the allocation at once, with the messages launchers grep; runs a command in it when given one.
. "$_standin_root/lib/slurm-lib.sh"
_name=interactive _nodes=1 _shell=1
while (( $# )); do
    case "$1" in
        --job-name=*) _name=${1#*=} ;;
        -J|--job-name) _name=$2; shift ;;
        --nodes=*) _nodes=${1#*=} ;;
        -N|--nodes) _nodes=$2; shift ;;
        --no-shell) _shell= ;;
        --*=*) ;;
        -*) if _slurm_takes_value "$1"; then shift; fi ;;
        *) break ;;
    esac
    shift
done
_job=$(_slurm_new "$_name" "${_nodes%%-*}")
_slurm_job_nodes "$_job"
echo "salloc: Granted job allocation $_job" >&2
echo "salloc: Nodes $_slurm_nodes are ready for job" >&2
if [[ -z "$_shell" || $# -eq 0 ]]; then exit 0; fi
_slurm_step_env "$_job" "$_name"
"$@"
_rc=$?
_slurm_end "$_job"
echo "salloc: Relinquishing job allocation $_job" >&2
exit "$_rc"
