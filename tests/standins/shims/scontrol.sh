# scontrol: `show job ID` and `show hostnames LIST` for the stand-in jobs.
. "$_standin_root/lib/slurm-lib.sh"
if [[ "$1 $2" == "show hostnames" ]]; then
    IFS=, read -r -a _hosts <<< "${3:-$SLURM_JOB_NODELIST}"
    printf '%s\n' "${_hosts[@]}"
elif [[ "$1 $2" == "show job" ]]; then
    _dir="$_slurm_dir/$3"
    [[ -d "$_dir" ]] || { echo "slurm_load_jobs error: Invalid job id specified" >&2; exit 1; }
    _state=COMPLETED; [[ -e "$_dir/running" ]] && _state=RUNNING
    echo "JobId=$3 JobName=$(<"$_dir/name") UserId=$(<"$_dir/user") JobState=$_state NodeList=$HOSTNAME"
fi
exit 0
