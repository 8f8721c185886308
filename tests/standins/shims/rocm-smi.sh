# rocm-smi: the node's GPUs, idle (--showmemuse as wait_for_amd_gpu_clean parses it, --showproductname, --showfw).
. "$_standin_root/state/node.env"
echo "============================ ROCm System Management Interface ============================"
for ((_i = 0; _i < GPUS; _i++)); do
    case " $* " in
        *" --showmemuse "*) printf 'GPU[%d]\t\t: GPU Memory Allocated (VRAM%%): 0\n' "$_i" ;;
        *" --showproductname "*) printf 'GPU[%d]\t\t: Card Series: \t\t%s\n' "$_i" "$GPU_NAME" ;;
        *" --showfw "*) printf 'GPU[%d]\t\t: MEC firmware version: \t\t177\n' "$_i" ;;
        *) printf '%d       %d.0W   2400Mhz  1900Mhz  0%%   auto  0%%    0%%\n' "$_i" "$((238 + _i))" ;;
    esac
done
echo "==================================== End of ROCm SMI Log ==================================="
