#!/usr/bin/env bash
# Shared helpers for the benchmark recipes under benchmarks/. Every recipe
# sources this file; it only defines functions and never runs anything itself.
#
# A recipe receives the job's environment from the launcher (MODEL, TP,
# EP_SIZE, DP_ATTENTION, CONC, ISL, OSL, RESULT_DIR, PORT, ...), starts one
# inference server in the background, waits for it with
# wait_for_server_ready, then runs one client: run_benchmark_serving for
# fixed-seq-len jobs, run_agentic_replay for agentic-coding jobs. Results land
# in $RESULT_DIR under the name result_name prints.

# Fail with one message naming every variable that is unset or empty.
check_env_vars() {
    local missing=()
    local name
    for name in "$@"; do
        if [ -z "${!name:-}" ]; then
            missing+=("$name")
        fi
    done
    if [ "${#missing[@]}" -ne 0 ]; then
        echo "benchmark_lib: missing required environment variables: ${missing[*]}" >&2
        exit 1
    fi
}

# The file stem every artifact of this job is written under.
result_name() {
    local seq="${EXP_NAME:-${MODEL_PREFIX}}"
    echo "${seq}_${FRAMEWORK}_${PRECISION}_tp${TP}_ep${EP_SIZE}_dpa${DP_ATTENTION}_conc${CONC}"
}

# Poll the server's health endpoint until it answers. Gives up when the
# server process dies (its log tail is printed) or after TIMEOUT seconds.
#   wait_for_server_ready PORT PID LOG [TIMEOUT]
wait_for_server_ready() {
    local server_port="$1" pid="$2" log="$3" timeout="${4:-3600}"
    local waited=0
    while [ "$waited" -lt "$timeout" ]; do
        if ! kill -0 "$pid" 2>/dev/null; then
            echo "benchmark_lib: server process $pid exited before becoming ready; last log lines:" >&2
            tail -n 50 "$log" >&2
            return 1
        fi
        if curl --silent --fail --max-time 5 "http://127.0.0.1:${server_port}/health" >/dev/null 2>&1; then
            echo "benchmark_lib: server ready on port $server_port after ${waited}s"
            return 0
        fi
        sleep 5
        waited=$((waited + 5))
    done
    echo "benchmark_lib: server on port $server_port not ready after ${timeout}s; last log lines:" >&2
    tail -n 50 "$log" >&2
    return 1
}

# Stop the server started by the recipe, and everything it spawned.
stop_server() {
    local pid="$1"
    if kill -0 "$pid" 2>/dev/null; then
        kill "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    fi
}

# Record what this job ran next to its measurements, so a result can be traced
# back to its config without the CI logs.
write_result_metadata() {
    local out
    out="$RESULT_DIR/$(result_name).meta.json"
    mkdir -p "$RESULT_DIR"
    {
        printf '{\n'
        printf '  "exp_name": "%s",\n' "${EXP_NAME:-}"
        printf '  "scenario_type": "%s",\n' "${SCENARIO_TYPE:-}"
        printf '  "model": "%s",\n' "$MODEL"
        printf '  "image": "%s",\n' "${IMAGE:-}"
        printf '  "framework": "%s",\n' "$FRAMEWORK"
        printf '  "precision": "%s",\n' "$PRECISION"
        printf '  "tp": %s,\n' "$TP"
        printf '  "ep": %s,\n' "$EP_SIZE"
        printf '  "dp_attention": %s,\n' "$DP_ATTENTION"
        printf '  "spec_decoding": "%s",\n' "${SPEC_DECODING:-none}"
        printf '  "conc": %s,\n' "$CONC"
        printf '  "isl": "%s",\n' "${ISL:-}"
        printf '  "osl": "%s",\n' "${OSL:-}"
        printf '  "kv_offloading": "%s",\n' "${KV_OFFLOADING:-none}"
        printf '  "runner": "%s"\n' "${RUNNER_NAME:-}"
        printf '}\n'
    } >"$out"
}

# Keep the client's aggregate export under the job's result name.
collect_client_export() {
    local artifact_dir="$1"
    local export_file="$artifact_dir/profile_export_aiperf.json"
    if [ ! -f "$export_file" ]; then
        echo "benchmark_lib: the benchmark client wrote no $export_file" >&2
        return 1
    fi
    cp "$export_file" "$RESULT_DIR/$(result_name).json"
}

# Fixed-seq-len client: CONC concurrent streams of ISL input and OSL output
# tokens (exact lengths: ignore_eos), ten requests per stream.
run_benchmark_serving() {
    check_env_vars MODEL PORT ISL OSL CONC RESULT_DIR
    local artifact_dir
    artifact_dir="$RESULT_DIR/$(result_name)"
    mkdir -p "$artifact_dir"
    aiperf profile \
        --model "$MODEL" \
        --url "http://127.0.0.1:${PORT}" \
        --endpoint-type completions \
        --streaming \
        --concurrency "$CONC" \
        --request-count "$((CONC * 10))" \
        --warmup-request-count "$CONC" \
        --synthetic-input-tokens-mean "$ISL" \
        --synthetic-input-tokens-stddev 0 \
        --output-tokens-mean "$OSL" \
        --output-tokens-stddev 0 \
        --extra-inputs ignore_eos:true \
        --artifact-dir "$artifact_dir" || return 1
    collect_client_export "$artifact_dir" || return 1
    write_result_metadata
}

# Agentic-coding client: replays the multi-turn AgentX coding trace with CONC
# concurrent conversations for DURATION seconds. A conversation's turns share
# their prefix, so the server's prefix cache (and KV offloading) matter.
# AGENTIC_WARMUP_GRACE_SECONDS bounds the cache warm-up before measuring.
run_agentic_replay() {
    check_env_vars MODEL PORT CONC DURATION RESULT_DIR
    local trace="${AGENTIC_TRACE:-/workspace/traces/agentx_coding_v2.jsonl}"
    local grace="${AGENTIC_WARMUP_GRACE_SECONDS:-600}"
    local artifact_dir
    artifact_dir="$RESULT_DIR/$(result_name)"
    if [ ! -f "$trace" ]; then
        echo "benchmark_lib: agentic trace $trace not found on this runner" >&2
        return 1
    fi
    mkdir -p "$artifact_dir"
    aiperf profile \
        --model "$MODEL" \
        --url "http://127.0.0.1:${PORT}" \
        --endpoint-type chat \
        --streaming \
        --input-file "$trace" \
        --custom-dataset-type multi_turn \
        --concurrency "$CONC" \
        --benchmark-duration "$DURATION" \
        --warmup-duration "$grace" \
        --artifact-dir "$artifact_dir" || return 1
    collect_client_export "$artifact_dir" || return 1
    write_result_metadata
}

# Accuracy check on GSM8K through the running server (RUN_EVAL=true).
run_gsm8k_eval() {
    check_env_vars MODEL PORT RESULT_DIR
    local out
    out="$RESULT_DIR/$(result_name)_gsm8k"
    mkdir -p "$out"
    lm_eval \
        --model local-completions \
        --model_args "model=${MODEL},base_url=http://127.0.0.1:${PORT}/v1/completions,num_concurrent=64,max_retries=3,tokenized_requests=False" \
        --tasks gsm8k \
        --num_fewshot 5 \
        --output_path "$out"
}

# The client half every recipe ends with: the benchmark unless EVAL_ONLY, the
# eval when RUN_EVAL or EVAL_ONLY asks for it.
run_client() {
    local client="$1"
    if [ "${EVAL_ONLY:-false}" != "true" ]; then
        "$client" || return 1
    fi
    if [ "${RUN_EVAL:-false}" = "true" ] || [ "${EVAL_ONLY:-false}" = "true" ]; then
        run_gsm8k_eval || return 1
    fi
}

# The tail of every recipe, right after it starts its server in the
# background: stop that server on exit, wait until it is ready, run CLIENT.
#   serve_and_run SERVER_PID SERVER_LOG CLIENT
serve_and_run() {
    local pid="$1" log="$2" client="$3"
    # shellcheck disable=SC2064 # the pid is fixed now, on purpose
    trap "stop_server $pid" EXIT
    wait_for_server_ready "$PORT" "$pid" "$log"
    run_client "$client"
}
