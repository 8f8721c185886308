# srun: a job step on this node, with its SLURM_* variables; with pyxis' --container-image, a container.
. "$_standin_root/lib/slurm-lib.sh"
for _a in "$@"; do
    case "$_a" in
        --container-image|--container-image=*) STANDIN_CALL="$_standin_call" exec "$_standin_python" -S -E \
            "$_standin_root/lib/main.py" "$_standin_root" srun "$@" ;;
    esac
done
_job=${SLURM_JOB_ID:-} _name=${SLURM_JOB_NAME:-} _ntasks=1 _chdir= _export=ALL
while (( $# )); do
    case "$1" in
        --jobid=*) _job=${1#*=} ;;
        --jobid) _job=$2; shift ;;
        --job-name=*) _name=${1#*=} ;;
        -J|--job-name) _name=$2; shift ;;
        --ntasks=*) _ntasks=${1#*=} ;;
        -n|--ntasks) _ntasks=$2; shift ;;
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
if [[ -z "$_job" ]]; then _job=$(_slurm_new "${_name:-$1}" 1); _new=1; fi
_slurm_step_env "$_job" "${_name:-$1}" "$_ntasks"
IFS=, read -r -a _items <<< "$_export"
for _item in "${_items[@]}"; do
    [[ "$_item" == *=* ]] && export "$_item"
done
[[ -n "$_chdir" ]] && cd "$_chdir"
if [[ -z "$_new" ]]; then exec "$@"; fi
"$@"
_rc=$?
_slurm_end "$_job"
exit "$_rc"
