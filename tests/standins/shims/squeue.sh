# squeue: the stand-in jobs still running (--name, --jobs, --user; -h; -o with %A %i %j %u %T %t %N %D; %N is
# the job's nodes, comma-separated, which `scontrol show hostnames` reads as it reads Slurm's ranges).
. "$_standin_root/lib/slurm-lib.sh"
_name= _jobs= _user= _format= _header=1
while (( $# )); do
    case "$1" in
        --name=*) _name=${1#*=} ;;
        -n|--name) _name=$2; shift ;;
        --jobs=*) _jobs=${1#*=} ;;
        -j|--jobs) _jobs=$2; shift ;;
        --user=*) _user=${1#*=} ;;
        -u|--user) _user=$2; shift ;;
        --format=*) _format=${1#*=} ;;
        -o|--format) _format=$2; shift ;;
        -h|--noheader) _header= ;;
        --me) _user=${USER:-root} ;;
        -t|--states|-p|--partition|-w|--nodelist|-A|--account) shift ;;
    esac
    shift
done
[[ -n "$_header" && -z "$_format" ]] && echo "             JOBID PARTITION     NAME     USER ST       TIME  NODES NODELIST(REASON)"
for _dir in "$_slurm_dir"/*/; do
    [[ -e "$_dir/running" ]] || continue
    _id=${_dir%/}; _id=${_id##*/}
    _jname=$(<"$_dir/name"); _juser=$(<"$_dir/user")
    _slurm_job_nodes "$_id"
    IFS=, read -r -a _jnodes <<< "$_slurm_nodes"
    [[ -n "$_name" && "$_jname" != "$_name" ]] && continue
    [[ -n "$_user" && "$_juser" != "$_user" ]] && continue
    [[ -n "$_jobs" && ",$_jobs," != *",$_id,"* ]] && continue
    if [[ -n "$_format" ]]; then
        _line=${_format//%A/$_id}; _line=${_line//%i/$_id}; _line=${_line//%j/$_jname}; _line=${_line//%u/$_juser}
        _line=${_line//%T/RUNNING}; _line=${_line//%t/R}; _line=${_line//%N/$_slurm_nodes}
        _line=${_line//%D/${#_jnodes[@]}}
        printf '%s\n' "$_line"
    else
        printf '%18s %9s %8.8s %8.8s  R       0:01 %6s %s\n' "$_id" standin "$_jname" "$_juser" "${#_jnodes[@]}" \
            "$_slurm_nodes"
    fi
done
exit 0
