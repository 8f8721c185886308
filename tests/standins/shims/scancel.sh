# scancel: ends stand-in jobs by id or --name, and a batch job's processes with them.
. "$_standin_root/lib/slurm-lib.sh"
_name=
_ids=()
while (( $# )); do
    case "$1" in
        --name=*) _name=${1#*=} ;;
        -n|--name) _name=$2; shift ;;
        -*) ;;
        *) _ids+=("$1") ;;
    esac
    shift
done
if [[ -n "$_name" ]]; then
    for _dir in "$_slurm_dir"/*/; do
        [[ -f "$_dir/name" && "$(<"$_dir/name")" == "$_name" ]] && { _id=${_dir%/}; _ids+=("${_id##*/}"); }
    done
fi
_ids=("${_ids[@]%%.*}")
for _id in "${_ids[@]}"; do _slurm_end "$_id"; done
# A batch job's processes (its script, its steps' tasks and what they started) end with it, as Slurm signals
# them; this one too when the job cancels itself (so every job is ended before any is signalled).
# The process group of each task of its steps on its nodes first: a job that cancels itself is signalled last.
for _id in "${_ids[@]}"; do
    if [[ -r "$_slurm_dir/$_id/pgids" ]]; then
        while read -r _group; do kill -TERM -- "-$_group" 2>/dev/null; done < "$_slurm_dir/$_id/pgids"
    fi
done
for _id in "${_ids[@]}"; do
    [[ -r "$_slurm_dir/$_id/pgid" ]] && kill -TERM -- "-$(<"$_slurm_dir/$_id/pgid")" 2>/dev/null
done
exit 0
