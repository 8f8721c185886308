# nvidia-smi: the node's GPUs, idle, in the formats benchmark_lib.sh's GPU monitor and the launchers read
# (--query-gpu ... --format=csv[,noheader][,nounits] [-l N], -L, -q, topo -m, the table).
. "$_standin_root/state/node.env"
_query= _format=csv _loop=
while (( $# )); do
    case "$1" in
        --query-gpu=*) _query=${1#*=} ;;
        --query-gpu) _query=$2; shift ;;
        --format=*) _format=${1#*=} ;;
        --format) _format=$2; shift ;;
        -l|--loop) _loop=$2; shift ;;
        --loop=*|-l=*) _loop=${1#*=} ;;
        -L|--list-gpus) for ((_i = 0; _i < GPUS; _i++)); do
                echo "GPU $_i: $GPU_NAME (UUID: GPU-00000000-0000-0000-0000-$(printf '%012d' "$_i"))"
            done; exit 0 ;;
        -q|--query) echo "Driver Version                            : 580.65.06"
            echo "Attached GPUs                             : $GPUS"
            for ((_i = 0; _i < GPUS; _i++)); do echo "    Product Name                          : $GPU_NAME"; done
            exit 0 ;;
        topo) for ((_i = 0; _i < GPUS; _i++)); do printf 'GPU%d\tX\n' "$_i"; done; exit 0 ;;
    esac
    shift
done
if [[ -z "$_query" ]]; then
    echo "| NVIDIA-SMI 580.65.06   Driver Version: 580.65.06   CUDA Version: 13.0 |"
    for ((_i = 0; _i < GPUS; _i++)); do
        echo "|   $_i  $GPU_NAME  On | 120W / 1000W |  0MiB / 183359MiB |  0% Default |"
    done
    echo "| No running processes found |"
    exit 0
fi
IFS=, read -r -a _fields <<< "${_query// /}"
_W=" W" _MHZ=" MHz" _PCT=" %" _MIB=" MiB"
[[ "$_format" == *nounits* ]] && _W= _MHZ= _PCT= _MIB=
if [[ "$_format" != *noheader* ]]; then
    _head=()
    for _f in "${_fields[@]}"; do
        case "$_f" in
            power.draw) _head+=("power.draw [W]") ;;
            clocks.current.sm|clocks.current.memory) _head+=("$_f [MHz]") ;;
            utilization.gpu|utilization.memory) _head+=("$_f [%]") ;;
            memory.total|memory.used|memory.free) _head+=("$_f [MiB]") ;;
            *) _head+=("$_f") ;;
        esac
    done
    (IFS=,; printf '%s\n' "${_head[*]}" | sed 's/,/, /g')
fi
while :; do
    printf -v _now '%(%Y/%m/%d %H:%M:%S)T.%s' -1 "${EPOCHREALTIME#*.}"
    for ((_i = 0; _i < GPUS; _i++)); do
        _row=()
        for _f in "${_fields[@]}"; do
            case "$_f" in
                timestamp) _row+=("${_now:0:23}") ;;
                index) _row+=("$_i") ;;
                name) _row+=("$GPU_NAME") ;;
                count) _row+=("$GPUS") ;;
                power.draw) _row+=("$((120 + _i)).00$_W") ;;
                temperature.gpu) _row+=(35) ;;
                clocks.current.sm) _row+=("1980$_MHZ") ;;
                clocks.current.memory) _row+=("3996$_MHZ") ;;
                utilization.gpu|utilization.memory) _row+=("0$_PCT") ;;
                memory.total|memory.free) _row+=("183359$_MIB") ;;
                memory.used) _row+=("0$_MIB") ;;
                uuid) printf -v _uuid 'GPU-00000000-0000-0000-0000-%012d' "$_i"; _row+=("$_uuid") ;;
                driver_version) _row+=(580.65.06) ;;
                *) _row+=("[N/A]") ;;
            esac
        done
        printf -v _line '%s, ' "${_row[@]}"
        printf '%s\n' "${_line%, }"
    done
    [[ -n "$_loop" ]] || exit 0
    "$_standin_sleep" 0.2
done
