# amd-smi: the node's GPUs, idle: `metric ... -w N --csv` (a watch with its preamble and repeated headers, as
# benchmark_lib.sh filters it), `metric -E --csv` (energy accumulators), `static --json`, `list`, `version`.
. "$_standin_root/state/node.env"
case "$1" in
    metric)
        for _a in "$@"; do
            if [[ "$_a" == -E || "$_a" == --energy ]]; then
                echo "gpu,total_energy_consumption"
                for ((_i = 0; _i < GPUS; _i++)); do echo "$_i,$((178319501 + _i)).7"; done
                exit 0
            fi
        done
        _watch=
        for _a in "$@"; do [[ "$_a" == -w || "$_a" == --watch ]] && _watch=1; done
        [[ -n "$_watch" ]] && echo "'CTRL' + 'C' to stop watching output:"
        while :; do
            echo "timestamp,gpu,socket_power,gfx_clk,mem_clk,hotspot_temperature,gfx_activity,umc_activity"
            for ((_i = 0; _i < GPUS; _i++)); do echo "${EPOCHSECONDS},$_i,$((238 + _i)),2400,1900,40,0,0"; done
            [[ -n "$_watch" ]] || exit 0
            "$_standin_sleep" 0.2
        done ;;
    static)
        printf '{"gpu_data": ['
        for ((_i = 0; _i < GPUS; _i++)); do
            (( _i )) && printf ', '
            printf '{"gpu": %d, "asic": {"market_name": "%s", "vendor_name": "Advanced Micro Devices Inc. [AMD/ATI]"}}' \
                "$_i" "$GPU_NAME"
        done
        printf ']}\n' ;;
    list) for ((_i = 0; _i < GPUS; _i++)); do printf 'GPU: %d\n    BDF: 0000:%02x:00.0\n\n' "$_i" "$((5 + _i))"; done ;;
    version) echo "AMDSMI Tool: 26.0.0 | AMDSMI Library version: 26.0.0 | ROCm version: 7.0.0" ;;
esac
exit 0
