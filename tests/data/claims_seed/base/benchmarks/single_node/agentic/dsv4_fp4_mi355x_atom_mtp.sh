#!/usr/bin/env bash
# DeepSeek-V4-Pro FP4 AgentX on one MI355X node, ATOM with MTP.
# TP band (c1-16): TP8/EP1 with the golden synthetic acceptance length.
# DPA band (c48-256): DP attention with TBO on the default MoE transport.
set -euo pipefail

source "$(dirname "$0")/../../benchmark_lib.sh"

check_env_vars MODEL TP EP_SIZE DP_ATTENTION CONC RUN_EVAL EVAL_ONLY PORT RESULT_DIR

AGENTIC_MAX_MODEL_LEN=262144
MAX_NUM_SEQS=$((2 * CONC))
STATE_CHECKPOINT_INTERVAL_TOKENS=8192

SPEC_ARGS=(--method mtp --num-speculative-tokens 3)
DP_ATTN_ARGS=()
if [ "$DP_ATTENTION" = "true" ]; then
    export ATOM_DP_LB_REQ_EQUIV=512
    DP_ATTN_ARGS=(--enable-dp-attention --enable-tbo)
else
    if [ "$RUN_EVAL" != "true" ] && [ "$EVAL_ONLY" != "true" ]; then
        SPEC_ARGS+=(--synthetic-acceptance-length 2.49)
    fi
fi

mkdir -p "$RESULT_DIR"
SERVER_LOG="$RESULT_DIR/$(result_name).server.log"

python3 -m atom.entrypoints.openai_server \
    --model "$MODEL" \
    --server-port "$PORT" \
    --tensor-parallel-size "$TP" \
    --kv-cache-dtype fp8 \
    --max-model-len "$AGENTIC_MAX_MODEL_LEN" \
    --max-num-seqs "$MAX_NUM_SEQS" \
    --enable-prefix-caching \
    --state-checkpoint-interval-tokens "$STATE_CHECKPOINT_INTERVAL_TOKENS" \
    "${SPEC_ARGS[@]}" \
    "${DP_ATTN_ARGS[@]}" \
    >"$SERVER_LOG" 2>&1 &
serve_and_run "$!" "$SERVER_LOG" run_agentic_replay
