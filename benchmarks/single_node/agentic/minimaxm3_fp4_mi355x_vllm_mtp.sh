#!/usr/bin/env bash
# MiniMax-M3 MXFP4 AgentX (agentic-coding) on one MI355X node, vLLM with MTP.
# Config: minimaxm3-fp4-mi355x-vllm-agentic-mtp. Rows with kv-offloading dram
# add LMCache's host-DRAM tier under the GPU prefix cache.
set -euo pipefail

# shellcheck source=benchmarks/benchmark_lib.sh
source "$(dirname "$0")/../../benchmark_lib.sh"

check_env_vars MODEL TP EP_SIZE CONC KV_OFFLOADING DURATION PORT RESULT_DIR

if [ "$EP_SIZE" -ne 1 ]; then
    echo "minimaxm3 vLLM AgentX recipe: the MoE runs tensor parallel only, found EP_SIZE=$EP_SIZE" >&2
    exit 1
fi

export VLLM_ROCM_USE_AITER=1

AGENTIC_MAX_MODEL_LEN=196608
MAX_NUM_SEQS=$((2 * CONC))
SPEC_CONFIG='{"method":"mtp","num_speculative_tokens":3}'

OFFLOAD_ARGS=()
case "$KV_OFFLOADING" in
    none)
        ;;
    dram)
        check_env_vars KV_OFFLOAD_BACKEND TOTAL_CPU_DRAM_GB
        if [ "$KV_OFFLOAD_BACKEND" != "lmcache" ]; then
            echo "minimaxm3 vLLM AgentX recipe: DRAM offload is wired for lmcache, found $KV_OFFLOAD_BACKEND" >&2
            exit 1
        fi
        # LMCache sizes its CPU tier per worker: split the job's DRAM budget
        # over the TP ranks.
        export LMCACHE_LOCAL_CPU=True
        export LMCACHE_MAX_LOCAL_CPU_SIZE=$((TOTAL_CPU_DRAM_GB / TP))
        export LMCACHE_CHUNK_SIZE=256
        OFFLOAD_ARGS=(--kv-transfer-config '{"kv_connector":"LMCacheConnectorV1","kv_role":"kv_both"}')
        ;;
    *)
        echo "minimaxm3 vLLM AgentX recipe: unknown KV_OFFLOADING=$KV_OFFLOADING" >&2
        exit 1
        ;;
esac

mkdir -p "$RESULT_DIR"
SERVER_LOG="$RESULT_DIR/$(result_name).server.log"

vllm serve "$MODEL" \
    --host 0.0.0.0 \
    --port "$PORT" \
    --tensor-parallel-size "$TP" \
    --max-model-len "$AGENTIC_MAX_MODEL_LEN" \
    --max-num-seqs "$MAX_NUM_SEQS" \
    --gpu-memory-utilization 0.9 \
    --enable-prefix-caching \
    --trust-remote-code \
    --speculative-config "$SPEC_CONFIG" \
    --enable-auto-tool-choice \
    --tool-call-parser minimax_m2 \
    --reasoning-parser minimax_m2 \
    "${OFFLOAD_ARGS[@]}" \
    >"$SERVER_LOG" 2>&1 &
serve_and_run "$!" "$SERVER_LOG" run_agentic_replay
