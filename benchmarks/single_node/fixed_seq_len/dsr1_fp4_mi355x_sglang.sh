#!/usr/bin/env bash
# DeepSeek-R1-0528 MXFP4, fixed-seq-len, SGLang on one MI355X node.
# Config: dsr1-fp4-mi355x-sglang (TP4 and TP8, no expert or DP-attention
# parallelism).
set -euo pipefail

# shellcheck source=benchmarks/benchmark_lib.sh
source "$(dirname "$0")/../../benchmark_lib.sh"

check_env_vars MODEL TP EP_SIZE DP_ATTENTION CONC ISL OSL MAX_MODEL_LEN PORT RESULT_DIR

if [ "$EP_SIZE" -ne 1 ] || [ "$DP_ATTENTION" = "true" ]; then
    echo "dsr1 SGLang recipe: only pure TP is tuned here, found EP_SIZE=$EP_SIZE DP_ATTENTION=$DP_ATTENTION" >&2
    exit 1
fi

# AITER kernels for MLA decode and the MXFP4 MoE.
export SGLANG_USE_AITER=1

mkdir -p "$RESULT_DIR"
SERVER_LOG="$RESULT_DIR/$(result_name).server.log"

# One prefill chunk holds a whole batch of 8k prompts; the running-request cap
# and the largest CUDA graph both follow the concurrency.
python3 -m sglang.launch_server \
    --model-path "$MODEL" \
    --host 0.0.0.0 \
    --port "$PORT" \
    --tp "$TP" \
    --trust-remote-code \
    --context-length "$MAX_MODEL_LEN" \
    --kv-cache-dtype fp8_e4m3 \
    --attention-backend aiter \
    --chunked-prefill-size 196608 \
    --max-prefill-tokens 196608 \
    --mem-fraction-static 0.8 \
    --max-running-requests "$CONC" \
    --cuda-graph-max-bs "$CONC" \
    --num-continuous-decode-steps 4 \
    --disable-radix-cache \
    >"$SERVER_LOG" 2>&1 &
serve_and_run "$!" "$SERVER_LOG" run_benchmark_serving
