# sbatch: runs the batch script in the background as a job (programs/slurm.py), printing its id.
STANDIN_CALL="$_standin_call" exec "$_standin_python" -S -E "$_standin_root/lib/main.py" "$_standin_root" sbatch "$@"
