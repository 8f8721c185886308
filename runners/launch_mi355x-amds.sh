#!/usr/bin/env bash
# Launcher of the mi355x-amds fleet: picks the recipe a job runs and starts it
# inside the job's container on this node.
#
# The workflow exports the job's environment (MODEL, IMAGE, TP, CONC, ...,
# see the env contract) and calls this script from the repository root. The
# recipe is the first existing of
#   benchmarks/single_node/<scenario dir>/<prefix>_<precision>_<gpu>_<framework>[_mtp].sh
#   benchmarks/single_node/<scenario dir>/<prefix>_<precision>_<gpu>[_trt|_atom][_mtp].sh
set -euo pipefail

GPU=mi355x
REPO_DIR="$(pwd)"

for name in IMAGE MODEL_PREFIX PRECISION FRAMEWORK SCENARIO_TYPE SPEC_DECODING RESULT_DIR; do
    if [ -z "${!name:-}" ]; then
        echo "launch_mi355x-amds: $name is not set" >&2
        exit 2
    fi
done

case "$SCENARIO_TYPE" in
    fixed-seq-len) SCENARIO_DIR=fixed_seq_len ;;
    agentic-coding) SCENARIO_DIR=agentic ;;
    *)
        echo "launch_mi355x-amds: unknown SCENARIO_TYPE=$SCENARIO_TYPE" >&2
        exit 2
        ;;
esac

MTP_SUFFIX=""
if [ "$SPEC_DECODING" = "mtp" ]; then
    MTP_SUFFIX=_mtp
fi
FRAMEWORK_SUFFIX=""
case "$FRAMEWORK" in
    trt) FRAMEWORK_SUFFIX=_trt ;;
    atom) FRAMEWORK_SUFFIX=_atom ;;
esac

RECIPE=""
for candidate in \
    "benchmarks/single_node/$SCENARIO_DIR/${MODEL_PREFIX}_${PRECISION}_${GPU}_${FRAMEWORK}${MTP_SUFFIX}.sh" \
    "benchmarks/single_node/$SCENARIO_DIR/${MODEL_PREFIX}_${PRECISION}_${GPU}${FRAMEWORK_SUFFIX}${MTP_SUFFIX}.sh"; do
    if [ -f "$REPO_DIR/$candidate" ]; then
        RECIPE="$candidate"
        break
    fi
done
if [ -z "$RECIPE" ]; then
    echo "launch_mi355x-amds: no recipe for ${MODEL_PREFIX} ${PRECISION} ${FRAMEWORK} ${SCENARIO_TYPE} (spec ${SPEC_DECODING})" >&2
    exit 2
fi
echo "launch_mi355x-amds: running $RECIPE in $IMAGE on ${RUNNER_NAME:-$(hostname)}"

# Pass the env contract through to the container, the result directory
# mounted at the same path so the recipe's writes land on the host.
ENV_ARGS=()
for name in MODEL MODEL_PREFIX IMAGE FRAMEWORK PRECISION ISL OSL MAX_MODEL_LEN TP PP_SIZE \
    DCP_SIZE PCP_SIZE EP_SIZE DP_ATTENTION CONC SPEC_DECODING DISAGG RUN_EVAL EVAL_ONLY \
    SCENARIO_TYPE IS_AGENTIC KV_OFFLOADING KV_OFFLOAD_BACKEND TOTAL_CPU_DRAM_GB DURATION \
    EXP_NAME RESULT_DIR PORT RUNNER_NAME GPU_COUNT HF_TOKEN; do
    if [ -n "${!name+set}" ]; then
        ENV_ARGS+=(--env "$name")
    fi
done

mkdir -p "$RESULT_DIR"
HF_CACHE="${HF_HUB_CACHE:-/mnt/models/huggingface}"
TRACE_DIR="${AGENTIC_TRACE_DIR:-/mnt/traces}"

docker run --rm \
    --device /dev/kfd --device /dev/dri \
    --group-add video --cap-add SYS_PTRACE --security-opt seccomp=unconfined \
    --ipc host --network host --shm-size 64g \
    --volume "$REPO_DIR:/workspace" \
    --volume "$RESULT_DIR:$RESULT_DIR" \
    --volume "$HF_CACHE:/root/.cache/huggingface" \
    --volume "$TRACE_DIR:/workspace/traces:ro" \
    --workdir /workspace \
    "${ENV_ARGS[@]}" \
    "$IMAGE" \
    bash "/workspace/$RECIPE"
