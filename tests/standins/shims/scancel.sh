# scancel: ends stand-in jobs by id or --name.
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
for _id in "${_ids[@]}"; do _slurm_end "${_id%%.*}"; done
if [[ -n "$_name" ]]; then
    for _dir in "$_slurm_dir"/*/; do
        [[ -f "$_dir/name" && "$(<"$_dir/name")" == "$_name" ]] && rm -f "$_dir/running"
    done
fi
exit 0
