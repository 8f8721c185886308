#!/usr/bin/env bash
# DeepSeek-V4-Pro FP4, fixed-seq-len, ATOM on one MI355X node.
# Config: dsv4-fp4-mi355x-atom.
# - TP band (dp-attn false): TP8, EP1.
# - DEP band (dp-attn true): DP attention on every rank with expert-parallel
#   MoE (EP_SIZE == TP); two-batch overlap (TBO) from concurrency 256 on,
#   where it hides the all-to-all; below that it only adds overhead.
set -euo pipefail

# shellcheck source=benchmarks/benchmark_lib.sh
source "$(dirname "$0")/../../benchmark_lib.sh"

check_env_vars MODEL TP EP_SIZE DP_ATTENTION CONC ISL OSL MAX_MODEL_LEN PORT RESULT_DIR

PARALLEL_ARGS=()
if [ "$DP_ATTENTION" = "true" ]; then
    if [ "$EP_SIZE" -ne "$TP" ]; then
        echo "dsv4 ATOM recipe: DEP needs EP_SIZE == TP, found EP_SIZE=$EP_SIZE TP=$TP" >&2
        exit 1
    fi
    PARALLEL_ARGS=(--enable-dp-attention --expert-parallel-size "$EP_SIZE")
    if [ "$CONC" -ge 256 ]; then
        PARALLEL_ARGS+=(--enable-tbo)
    fi
elif [ "$EP_SIZE" -ne 1 ]; then
    echo "dsv4 ATOM recipe: the TP band runs EP1, found EP_SIZE=$EP_SIZE" >&2
    exit 1
fi

mkdir -p "$RESULT_DIR"
SERVER_LOG="$RESULT_DIR/$(result_name).server.log"

# Every DP-attention rank keeps a full KV pool, so the sequence cap stays at
# the concurrency on both bands instead of ATOM's large default.
python3 -m atom.entrypoints.openai_server \
    --model "$MODEL" \
    --host 0.0.0.0 \
    --server-port "$PORT" \
    --tensor-parallel-size "$TP" \
    --kv-cache-dtype fp8 \
    --max-model-len "$MAX_MODEL_LEN" \
    --max-num-seqs "$CONC" \
    --max-num-batched-tokens 16384 \
    --gpu-memory-utilization 0.9 \
    "${PARALLEL_ARGS[@]}" \
    >"$SERVER_LOG" 2>&1 &
serve_and_run "$!" "$SERVER_LOG" run_benchmark_serving
