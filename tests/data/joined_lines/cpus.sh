echo "=== CPU Information Inside Container ==="
nproc
cat /proc/cpuinfo | grep processor | wc -l
cat /sys/fs/cgroup/cpuset/cpuset.cpus 2>/dev/null || echo "cpuset info not available"
echo "========================================"

PORT=8888
