#!/usr/bin/env bash
# Shared helpers sourced by every recipe (a small stand-in for the real library).

check_env_vars() {
    local name
    for name in "$@"; do
        if [ -z "${!name:-}" ]; then
            echo "missing env var $name" >&2
            exit 1
        fi
    done
}

result_name() {
    echo "${EXP_NAME}_tp${TP}_ep${EP_SIZE}_c${CONC}"
}

serve_and_run() {
    local pid="$1" log="$2" client="$3"
    "$client"
    kill "$pid"
}

run_agentic_replay() {
    aiperf profile --url "http://localhost:$PORT" --concurrency "$CONC"
}
