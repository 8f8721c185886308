#!/usr/bin/env bash
# DeepSeek-R1-0528 MXFP4, fixed-seq-len, ATOM on one MI355X node.
# Config: dsr1-fp4-mi355x-atom (TP4 and TP8, EP1).
set -euo pipefail

# shellcheck source=benchmarks/benchmark_lib.sh
source "$(dirname "$0")/../../benchmark_lib.sh"

check_env_vars MODEL TP EP_SIZE DP_ATTENTION CONC ISL OSL MAX_MODEL_LEN PORT RESULT_DIR

if [ "$EP_SIZE" -ne 1 ] || [ "$DP_ATTENTION" = "true" ]; then
    echo "dsr1 ATOM recipe: only pure TP is tuned here, found EP_SIZE=$EP_SIZE DP_ATTENTION=$DP_ATTENTION" >&2
    exit 1
fi

mkdir -p "$RESULT_DIR"
SERVER_LOG="$RESULT_DIR/$(result_name).server.log"

# The scheduler never holds more sequences than the benchmark sends.
python3 -m atom.entrypoints.openai_server \
    --model "$MODEL" \
    --host 0.0.0.0 \
    --server-port "$PORT" \
    --tensor-parallel-size "$TP" \
    --kv-cache-dtype fp8 \
    --max-model-len "$MAX_MODEL_LEN" \
    --max-num-seqs "$CONC" \
    --max-num-batched-tokens 32768 \
    --gpu-memory-utilization 0.9 \
    >"$SERVER_LOG" 2>&1 &
serve_and_run "$!" "$SERVER_LOG" run_benchmark_serving
