#!/usr/bin/env bash
# DeepSeek-V4-Pro FP4 AgentX on one MI355X node, ATOM with MTP.
# TP band (c1-16): TP8/EP1 with the golden synthetic acceptance length.
# DEP band (c48-256): native RCCL DEP (DPA8, EP8 over RCCL all-to-all).
set -euo pipefail

source "$(dirname "$0")/../../benchmark_lib.sh"

check_env_vars MODEL TP EP_SIZE DP_ATTENTION CONC RUN_EVAL EVAL_ONLY PORT RESULT_DIR

AGENTIC_MAX_MODEL_LEN=262144
MAX_NUM_SEQS=$((2 * CONC))

SPEC_ARGS=(--method mtp --num-speculative-tokens 3)
DP_ATTN_ARGS=()
DEP_ARGS=()
# Session affinity: the router pins each conversation to one DPA rank, so
# consecutive turns keep the prefix KV of the previous turn.
STATE_CHECKPOINT_INTERVAL_TOKENS=8192
if [ "$DP_ATTENTION" = "true" ]; then
    if [ "$EP_SIZE" -ne "$TP" ]; then
        echo "DEP needs EP_SIZE == TP" >&2
        exit 1
    fi
    export ATOM_DP_LB_REQ_EQUIV=512
    export AIPERF_HTTP_X_DYNAMO_SESSION_ID_FROM_CORRELATION_ID=true
    DP_ATTN_ARGS=(--enable-dp-attention --dp-session-affinity)
    DEP_ARGS=(--expert-parallel-size "$EP_SIZE" --all2all-backend rccl --dp-load-balance least_tokens --moe-backend standard)
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
    "${DEP_ARGS[@]}" \
    >"$SERVER_LOG" 2>&1 &
serve_and_run "$!" "$SERVER_LOG" run_agentic_replay
