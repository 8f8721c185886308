#!/usr/bin/env bash
# DeepSeek-V4-Pro FP4 AgentX (agentic-coding) on one MI355X node, ATOM with
# MTP speculative decoding (three draft tokens).
# Config: dsv4-fp4-mi355x-atom-agentic-mtp, two bands:
# - TP band (dp-attn false, c1-16): TP8, EP1. Throughput runs use the golden
#   synthetic acceptance length 2.49 (thinking_on, three draft tokens) so the
#   result does not depend on how well the trace's turns are predicted; eval
#   runs measure real acceptance.
# - DEP band (dp-attn true, c48-256): native RCCL DEP, i.e. DP attention on
#   all eight ranks (DPA8) with expert-parallel MoE (EP_SIZE == TP) over RCCL
#   all-to-all and the standard MoE backend. TBO and EPLB stay off, and MTP
#   runs with real acceptance.
set -euo pipefail

# shellcheck source=benchmarks/benchmark_lib.sh
source "$(dirname "$0")/../../benchmark_lib.sh"

check_env_vars MODEL TP EP_SIZE DP_ATTENTION CONC RUN_EVAL EVAL_ONLY DURATION PORT RESULT_DIR

# Agentic jobs carry no ISL/OSL: the context budget covers the longest
# conversation of the trace plus headroom for the draft tokens.
AGENTIC_MAX_MODEL_LEN=262144
# AgentX sessions fan out into parallel tool calls: leave room for twice the
# concurrency in flight.
MAX_NUM_SEQS=$((2 * CONC))
# Hybrid-attention state snapshots, the granularity of prefix-cache reuse.
STATE_CHECKPOINT_INTERVAL_TOKENS=8192
# The first turns of every conversation only warm the prefix cache.
export AGENTIC_WARMUP_GRACE_SECONDS=3600

SPEC_ARGS=(--method mtp --num-speculative-tokens 3)
DP_ATTN_ARGS=()
DEP_ARGS=()
if [ "$DP_ATTENTION" = "true" ]; then
    if [ "$EP_SIZE" -ne "$TP" ]; then
        echo "dsv4 ATOM AgentX recipe: DEP needs EP_SIZE == TP, found EP_SIZE=$EP_SIZE TP=$TP" >&2
        exit 1
    fi
    # Least-tokens load balancing weighs each DPA rank by its prompt tokens
    # plus ATOM_DP_LB_REQ_EQUIV tokens per in-flight request.
    export ATOM_DP_LB_REQ_EQUIV=512
    # Session affinity: AIPerf sends the conversation's correlation id as
    # x-dynamo-session-id and the router pins each conversation to one DPA
    # rank; otherwise consecutive turns can land on another rank and lose the
    # prefix KV the previous turn produced.
    export AIPERF_HTTP_X_DYNAMO_SESSION_ID_FROM_CORRELATION_ID=true
    DP_ATTN_ARGS=(--enable-dp-attention --dp-session-affinity)
    DEP_ARGS=(--expert-parallel-size "$EP_SIZE" --all2all-backend rccl --dp-load-balance least_tokens --moe-backend standard)
else
    if [ "$EP_SIZE" -ne 1 ]; then
        echo "dsv4 ATOM AgentX recipe: the TP band runs EP1, found EP_SIZE=$EP_SIZE" >&2
        exit 1
    fi
    # Golden synthetic acceptance for throughput; eval measures the real one.
    if [ "$RUN_EVAL" != "true" ] && [ "$EVAL_ONLY" != "true" ]; then
        SPEC_ARGS+=(--synthetic-acceptance-length 2.49)
    fi
fi

mkdir -p "$RESULT_DIR"
SERVER_LOG="$RESULT_DIR/$(result_name).server.log"

python3 -m atom.entrypoints.openai_server \
    --model "$MODEL" \
    --host 0.0.0.0 \
    --server-port "$PORT" \
    --tensor-parallel-size "$TP" \
    --kv-cache-dtype fp8 \
    --max-model-len "$AGENTIC_MAX_MODEL_LEN" \
    --max-num-seqs "$MAX_NUM_SEQS" \
    --max-num-batched-tokens 16384 \
    --gpu-memory-utilization 0.9 \
    --enable-prefix-caching \
    --state-checkpoint-interval-tokens "$STATE_CHECKPOINT_INTERVAL_TOKENS" \
    --timeout-keep-alive 3600 \
    --reasoning-parser deepseek_v4 \
    --tool-call-parser deepseek_v4 \
    "${SPEC_ARGS[@]}" \
    "${DP_ATTN_ARGS[@]}" \
    "${DEP_ARGS[@]}" \
    >"$SERVER_LOG" 2>&1 &
serve_and_run "$!" "$SERVER_LOG" run_agentic_replay
