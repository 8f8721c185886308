# Slurm jobs of the stand-ins, kept as directories under state/slurm/<id>/ (name, user, node; `running` while
# the job runs). Sourced by the salloc, srun, squeue, scancel and scontrol stand-ins.
_slurm_dir="$_standin_root/state/slurm"

# The machine's own name (the sandbox's host name), read without starting a process: a task of a multi-node
# step has HOSTNAME set to the node it runs on.
read -r _slurm_host < /proc/sys/kernel/hostname

# The nodes of an allocation of $1 nodes, comma-separated: this machine first, then <host>-1, <host>-2 ...
# (programs/common.py names them the same way).
_slurm_node_names() {
    local names=$_slurm_host k
    for (( k = 1; k < ${1:-1}; k++ )); do names+=",$_slurm_host-$k"; done
    printf '%s' "$names"
}

# The address node $1 listens on: node k of an allocation has 127.0.0.(k+1), each node its own loopback
# address, so that servers of different nodes may use the same port.
_slurm_node_addr() {
    local k=0
    [[ "$1" == "$_slurm_host"-+([0-9]) ]] && k=${1##*-}
    printf '127.0.0.%s' $((k + 1))
}

# Start a job named $1 with $2 nodes; its id on stdout.
_slurm_new() {
    local id=1000
    mkdir -p "$_slurm_dir"
    until mkdir "$_slurm_dir/$id" 2>/dev/null; do id=$((id + 1)); done
    printf '%s' "$1" > "$_slurm_dir/$id/name"
    printf '%s' "${USER:-root}" > "$_slurm_dir/$id/user"
    printf '%s' "${2:-1}" > "$_slurm_dir/$id/nodes"
    _slurm_node_names "${2:-1}" > "$_slurm_dir/$id/nodelist"
    : > "$_slurm_dir/$id/running"
    printf '%s\n' "$id"
}

_slurm_end() { rm -f "$_slurm_dir/$1/running"; }

# A task of job $1 on one of its nodes runs in process group $2 of its own, as slurmstepd runs a node's tasks:
# a recipe's `kill -- -$(ps -o pgid= ...)` on one node then reaches that node's processes only, never the batch
# script on the first node; scancel signals each such group with the job's own.
_slurm_task_group() { printf '%s\n' "$2" >> "$_slurm_dir/$1/pgids"; }

# The nodes of job $1, comma-separated, into _slurm_nodes (without a process: every srun reads them).
_slurm_job_nodes() {
    _slurm_nodes=$_slurm_host
    [[ -r "$_slurm_dir/$1/nodelist" ]] && read -r _slurm_nodes < "$_slurm_dir/$1/nodelist"
    return 0
}

# The variables of a job step of job $1 named $2 with $3 tasks, on the job's first node.
_slurm_step_env() {
    local nodes count
    _slurm_job_nodes "$1"
    nodes=$_slurm_nodes
    IFS=, read -r -a count <<< "$nodes"
    export SLURM_JOB_ID="$1" SLURM_JOBID="$1" SLURM_JOB_NAME="$2" SLURM_STEP_ID=0 SLURM_PROCID=0 \
        SLURM_LOCALID=0 SLURM_NODEID=0 SLURM_NTASKS="${3:-1}" SLURMD_NODENAME="$HOSTNAME" \
        SLURM_JOB_NODELIST="$nodes" SLURM_NODELIST="$nodes" SLURM_JOB_NUM_NODES=${#count[@]} \
        SLURM_NNODES=${#count[@]} SLURM_CLUSTER_NAME=standin
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
