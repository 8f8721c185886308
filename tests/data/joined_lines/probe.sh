echo "== #4269 FSE / heterogeneous shared expert (FHMoE) =="
grep -rlF "shared_expert_id" "$T" --include='*.py' 2>/dev/null | sed 's|^|  hit: |' | head
grep -rlF "fhmoe" "$T" --include='*.py' 2>/dev/null | sed 's|^|  hit: |' | head
if [ -e "$T/configs/model_configs/dsv4_a8w8_blockscale_tuned_gemm.csv" ]; then
    grep -c '^6144,7168\|^65536,1536\|^7168,3072' "$T/configs/model_configs/dsv4_a8w8_blockscale_tuned_gemm.csv" \
        | sed 's|^|    dsv4 shapes present: |'
fi
SEEN=done
