#!/usr/bin/env bash
# GPT-OSS 120B (MXFP4), fixed-seq-len, vLLM on one MI355X node.
# Config: gptoss-fp4-mi355x-vllm (TP1, TP2 and TP8).
set -euo pipefail

# shellcheck source=benchmarks/benchmark_lib.sh
source "$(dirname "$0")/../../benchmark_lib.sh"

check_env_vars MODEL TP EP_SIZE CONC ISL OSL MAX_MODEL_LEN PORT RESULT_DIR

if [ "$EP_SIZE" -ne 1 ]; then
    echo "gptoss vLLM recipe: the MoE runs tensor parallel only, found EP_SIZE=$EP_SIZE" >&2
    exit 1
fi

# AITER unified attention and MoE kernels for MI355X.
export VLLM_ROCM_USE_AITER=1
export VLLM_USE_AITER_UNIFIED_ATTENTION=1
export VLLM_ROCM_USE_AITER_MHA=0

mkdir -p "$RESULT_DIR"
SERVER_LOG="$RESULT_DIR/$(result_name).server.log"

# Prefix caching is off: the synthetic prompts share no prefix, and the cache
# bookkeeping would only cost throughput.
vllm serve "$MODEL" \
    --host 0.0.0.0 \
    --port "$PORT" \
    --tensor-parallel-size "$TP" \
    --max-model-len "$MAX_MODEL_LEN" \
    --max-num-seqs "$CONC" \
    --max-num-batched-tokens 8192 \
    --gpu-memory-utilization 0.95 \
    --block-size 64 \
    --no-enable-prefix-caching \
    --async-scheduling \
    --compilation-config '{"cudagraph_mode":"FULL_AND_PIECEWISE"}' \
    >"$SERVER_LOG" 2>&1 &
serve_and_run "$!" "$SERVER_LOG" run_benchmark_serving
