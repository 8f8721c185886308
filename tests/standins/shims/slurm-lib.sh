# Slurm jobs of the stand-ins, kept as directories under state/slurm/<id>/ (name, user, node; `running` while
# the job runs). Sourced by the salloc, srun, squeue, scancel and scontrol stand-ins.
_slurm_dir="$_standin_root/state/slurm"

# Start a job named $1 with $2 nodes; its id on stdout.
_slurm_new() {
    local id=1000
    mkdir -p "$_slurm_dir"
    until mkdir "$_slurm_dir/$id" 2>/dev/null; do id=$((id + 1)); done
    printf '%s' "$1" > "$_slurm_dir/$id/name"
    printf '%s' "${USER:-root}" > "$_slurm_dir/$id/user"
    printf '%s' "${2:-1}" > "$_slurm_dir/$id/nodes"
    : > "$_slurm_dir/$id/running"
    printf '%s\n' "$id"
}

_slurm_end() { rm -f "$_slurm_dir/$1/running"; }

# The variables of a job step of job $1 named $2 on this node.
_slurm_step_env() {
    export SLURM_JOB_ID="$1" SLURM_JOBID="$1" SLURM_JOB_NAME="$2" SLURM_STEP_ID=0 SLURM_PROCID=0 \
        SLURM_LOCALID=0 SLURM_NODEID=0 SLURM_NTASKS="${3:-1}" SLURMD_NODENAME="$HOSTNAME" \
        SLURM_JOB_NODELIST="$HOSTNAME" SLURM_NODELIST="$HOSTNAME" SLURM_JOB_NUM_NODES=1 SLURM_NNODES=1 \
        SLURM_CLUSTER_NAME=standin
}

# Options of salloc/srun/sbatch written as two words take a value; these do (long ones also with =).
_slurm_takes_value() {
    case "$1" in
        -A|-c|-C|-d|-D|-e|-G|-i|-J|-L|-m|-n|-N|-o|-p|-q|-t|-w|-x) return 0 ;;
        --account|--begin|--chdir|--constraint|--cpus-per-task|--dependency|--error|--export|--gpus|\
--gpus-per-node|--gres|--input|--job-name|--jobid|--mem|--mpi|--nodelist|--nodes|--ntasks|--ntasks-per-node|\
--output|--partition|--qos|--time|--exclude|--reservation|--container-image|--container-mounts|\
--container-workdir|--container-name|--container-env|--cpu-bind|--distribution|--comment|--mem-per-cpu|\
--mem-per-gpu|--gpus-per-task|--network) return 0 ;;
    esac
    return 1
}
