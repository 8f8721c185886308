"""Benchmark: recipe evaluation over every job, on the real tree and on a generated one.

Real tree (``--real DIR``, default the shared InferenceX snapshot when present),
each figure the median of ``--runs`` runs, every process pinned to one core
(``taskset -c 0``), peak RSS of that process alone, compiled modules cached
as in an installed tool (one warm-up run of each implementation writes the
cache, outside the work tree):

- ``ci-tools recipe show '*' --format json`` (load configs, expand all 1,820
  jobs, evaluate every recipe, write the JSON) -- target <= 3 s, <= 150 MiB;
  beside the same command of the previous implementation (``--baseline REV``,
  default the merge base with ``main``, extracted with ``git archive``), and
  a check that both print the same text (``--format text``, byte for byte) and the same JSON
  documents (``--format json``, compared parsed: the encoders differ in spacing), but for the jobs
  of the config keys given with ``--changed`` (evaluated differently on purpose);
- in-process evaluation of the 1,172 single-node jobs with each job's
  environment from the oracle (``expected/job-env.json`` plus the runners'
  variables as unknown, see tests/real_jobs.py), current and previous, each
  as ``recipe show`` runs it (the cyclic collector paused where the
  implementation pauses it).

Generated tree (``--synthetic``): 250 configs, one recipe each (distinct
contents), ``recipe lint`` beside ``bash -n`` over the same files.

Run: .venv/bin/python bench/bench_recipes.py [--runs 5] [--baseline REV] [--changed KEY_GLOB] [--synthetic]
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchlib import (ROOT, Table, bench_arguments, ci_tools_at, driver_reports, load_average, measure, measure_call,  # noqa: E402
                      median_of, merge_base_with_main, tool_env)
from benchlib import FULL_CORPUS as REAL_TREE  # noqa: E402

sys.path.insert(0, str(ROOT))

FRAMEWORKS = (("atom", "python3 -m atom.entrypoints.openai_server"),
              ("vllm", "vllm serve"),
              ("sglang", "python3 -m sglang.launch_server"))

LIB = r'''#!/usr/bin/env bash
# Shared helpers (benchmark copy).
check_env_vars() {
    local missing=()
    local name
    for name in "$@"; do
        if [ -z "${!name:-}" ]; then
            missing+=("$name")
        fi
    done
    if [ "${#missing[@]}" -ne 0 ]; then
        echo "missing: ${missing[*]}" >&2
        exit 1
    fi
}

result_name() {
    local seq="${EXP_NAME:-${MODEL_PREFIX}}"
    echo "${seq}_${FRAMEWORK}_${PRECISION}_tp${TP}_ep${EP_SIZE}_conc${CONC}"
}

wait_for_server_ready() {
    local server_port="$1" pid="$2" log="$3" timeout="${4:-3600}"
    local waited=0
    while [ "$waited" -lt "$timeout" ]; do
        if ! kill -0 "$pid" 2>/dev/null; then
            tail -n 50 "$log" >&2
            return 1
        fi
        if curl --silent --fail --max-time 5 "http://127.0.0.1:${server_port}/health" >/dev/null 2>&1; then
            return 0
        fi
        sleep 5
        waited=$((waited + 5))
    done
    return 1
}

run_benchmark_serving() {
    check_env_vars MODEL PORT ISL OSL CONC RESULT_DIR
    local artifact_dir
    artifact_dir="$RESULT_DIR/$(result_name)"
    mkdir -p "$artifact_dir"
    aiperf profile \
        --model "$MODEL" \
        --url "http://127.0.0.1:${PORT}" \
        --concurrency "$CONC" \
        --request-count "$((CONC * 10))" \
        --synthetic-input-tokens-mean "$ISL" \
        --output-tokens-mean "$OSL" \
        --artifact-dir "$artifact_dir" || return 1
}

run_gsm8k_eval() {
    check_env_vars MODEL PORT RESULT_DIR
    lm_eval --model local-completions --tasks gsm8k --output_path "$RESULT_DIR/$(result_name)_gsm8k"
}

run_client() {
    local client="$1"
    if [ "${EVAL_ONLY:-false}" != "true" ]; then
        "$client" || return 1
    fi
    if [ "${RUN_EVAL:-false}" = "true" ] || [ "${EVAL_ONLY:-false}" = "true" ]; then
        run_gsm8k_eval || return 1
    fi
}

serve_and_run() {
    local pid="$1" log="$2" client="$3"
    trap "kill $pid" EXIT
    wait_for_server_ready "$PORT" "$pid" "$log"
    run_client "$client"
}
'''

RECIPE = r'''#!/usr/bin/env bash
# Model {i}: {framework} on MI355X, fixed sequence lengths.
set -euo pipefail

source "$(dirname "$0")/../../benchmark_lib.sh"

check_env_vars MODEL TP EP_SIZE DP_ATTENTION CONC ISL OSL MAX_MODEL_LEN RESULT_DIR PORT

MAX_NUM_SEQS=$(( CONC < {cap} ? 2 * CONC : {cap} ))
MAX_BATCHED_TOKENS=$(( {tokens} * TP / 8 ))
GPU_MEM_UTIL="0.{util}"
EXTRA_ARGS=(--max-num-batched-tokens "$MAX_BATCHED_TOKENS")

export HIP_FORCE_DEV_KERNARG=1
export NCCL_MIN_NCHANNELS={channels}

if [ "$DP_ATTENTION" = "true" ]; then
    if [ "$EP_SIZE" -ne "$TP" ]; then
        echo "DP attention needs EP_SIZE == TP" >&2
        exit 1
    fi
    export MOE_ALL2ALL=rccl
    EXTRA_ARGS+=(--enable-dp-attention --expert-parallel-size "$EP_SIZE")
elif [ "$EP_SIZE" -gt 1 ]; then
    EXTRA_ARGS+=(--expert-parallel-size "$EP_SIZE")
fi

case "$CONC" in
    1|2|4) SCHED_POLICY=latency ;;
    8|16|32) SCHED_POLICY=balanced ;;
    *) SCHED_POLICY=throughput ;;
esac

if [[ "$ISL" -ge 8192 ]]; then
    CHUNKED_PREFILL=$((ISL / 4))
else
    CHUNKED_PREFILL=2048
fi

SERVER_LOG="$RESULT_DIR/$(result_name).server.log"
mkdir -p "$RESULT_DIR"

{server} \
    --model "$MODEL" \
    --port "$PORT" \
    --tensor-parallel-size "$TP" \
    --max-model-len "$MAX_MODEL_LEN" \
    --max-num-seqs "$MAX_NUM_SEQS" \
    --gpu-memory-utilization "$GPU_MEM_UTIL" \
    --chunked-prefill-size "$CHUNKED_PREFILL" \
    --scheduling-policy "$SCHED_POLICY" \
    --kv-cache-dtype fp8 \
    --trust-remote-code \
    "${EXTRA_ARGS[@]}" \
    >"$SERVER_LOG" 2>&1 &
serve_and_run "$!" "$SERVER_LOG" run_benchmark_serving
'''


def generate(root: Path, configs: int) -> int:
    (root / "configs").mkdir(parents=True)
    recipes = root / "benchmarks" / "single_node" / "fixed_seq_len"
    recipes.mkdir(parents=True)
    (root / "benchmarks" / "benchmark_lib.sh").write_text(LIB)
    (root / "configs" / "runners.yaml").write_text(
        "labels:\n  mi355x:\n  - mi355x-amds_00\n  - mi355x-amds_01\n"
        "hardware:\n  mi355x:\n    available-cpu-dram-mib: 3095781\n    gpus-per-node: 8\n")
    (root / "perf-changelog.yaml").write_text(
        "- config-keys:\n  - '*'\n  description:\n  - Initial.\n  pr-link: https://github.com/o/r/pull/1\n")
    master = []
    jobs = 0
    for i in range(configs):
        framework, server = FRAMEWORKS[i % len(FRAMEWORKS)]
        precision = ("fp4", "fp8")[i % 2]
        prefix = f"model{i}"
        master.append(
            f"{prefix}-{precision}-mi355x-{framework}:\n"
            f"  image: rocm/{framework}:v{i}\n  model: org/{prefix}\n  model-prefix: {prefix}\n"
            f"  runner: mi355x\n  precision: {precision}\n  framework: {framework}\n  multinode: false\n"
            f"  scenarios:\n    fixed-seq-len:\n"
            f"    - isl: 1024\n      osl: 1024\n      search-space:\n"
            f"      - {{ tp: 8, conc-start: 4, conc-end: 64 }}\n"
            f"    - isl: 8192\n      osl: 1024\n      search-space:\n"
            f"      - {{ tp: 8, ep: 8, dp-attn: true, conc-list: [32, 64] }}\n"
        )
        jobs += 5 + 2
        values = {"i": i, "framework": framework, "server": server, "cap": 128 + i, "tokens": 8192 + 16 * i,
                  "util": 80 + i % 15, "channels": 16 + i % 48}
        body = RECIPE
        for name, value in values.items():
            body = body.replace("{" + name + "}", str(value))
        (recipes / f"{prefix}_{precision}_mi355x_{framework}.sh").write_text(body)
    (root / "configs" / "amd-master.yaml").write_text("\n".join(master))
    return jobs


def _clear(parse: object) -> None:
    for name in ("_CACHE", "_BY_CONTENT", "_BY_OBJECT"):
        getattr(parse, name).clear()


def _in_process(root: Path, naive: bool, limit: int | None = None) -> tuple[float, int]:
    """Wall seconds of evaluating the generated tree's jobs in this process, and how many there were."""
    from ci_tools.config import load_config
    from ci_tools.jobs.matrix import expand
    from ci_tools.model.repository import load_repo
    from ci_tools.shell import parse
    from ci_tools.evaluation.evaluate import evaluate_job
    from ci_tools.revision.snapshot import WorkTreeSnapshot

    config = load_config(root)
    snapshot = WorkTreeSnapshot(config.root)
    jobs = expand(load_repo(snapshot, config))[:limit]
    _clear(parse)

    def evaluate_all() -> None:
        for job in jobs:
            if naive:
                _clear(parse)
            evaluate_job(job, config, snapshot)

    return measure_call(evaluate_all)[1].wall_s, len(jobs)


# Evaluates the real tree's single-node jobs with the oracle environment; prints seconds and counts.
ORACLE_DRIVER = r"""
import contextlib, json, sys, time
sys.path[:0] = [sys.argv[1], sys.argv[2]]
import real_jobs
from ci_tools.evaluation.evaluate import evaluate_recipe
try:  # as `recipe show` runs them: the cyclic collector paused where the implementation pauses it
    from ci_tools.shell.collector import collection_paused
except ImportError:
    collection_paused = contextlib.nullcontext
config, snapshot, jobs = real_jobs.real_jobs_at(real_jobs.Path(sys.argv[3]))
start, cpu = time.perf_counter(), time.process_time()
reached = 0
with collection_paused():
    for rj in jobs:
        if rj.recipe is not None:
            reached += bool(evaluate_recipe(rj.recipe, rj.env, config, snapshot).servers)
print(json.dumps({"seconds": time.perf_counter() - start, "cpu": time.process_time() - cpu, "jobs": len(jobs),
                  "reached": reached}))
"""


def _show_cmd(impl: Path, tree: Path, fmt: str = "json") -> list[str]:
    code = (f"import sys; sys.path.insert(0, {str(impl)!r}); from ci_tools.cli.main import main; "
            f"sys.exit(main(['recipe', 'show', '*', '--format', {fmt!r}, '--repo', {str(tree)!r}]))")
    return [sys.executable, "-c", code]


def _digest(output: bytes, fmt: str, changed: tuple[str, ...] = ()) -> str:
    """The text output byte for byte; the JSON output as the documents it holds (encoders differ in
    spacing and in escaping non-ASCII text, not in what they mean).  Jobs of the config keys matching
    ``changed`` are left out (their evaluation is meant to differ)."""
    if fmt == "json":
        docs = [d for d in json.loads(output) if not _changed(str(d["job"].get("config-key", "")), changed)]
        output = json.dumps(docs, sort_keys=True, ensure_ascii=True).encode()
    elif changed:
        # one block per job, its first word the config key
        blocks = output.decode("utf-8", "replace").split("\n\n")
        output = "\n\n".join(b for b in blocks if not _changed(b.split(" ", 1)[0], changed)).encode()
    return hashlib.sha256(output).hexdigest()


def _changed(key: str, changed: tuple[str, ...]) -> bool:
    return any(fnmatch.fnmatchcase(key, pattern) for pattern in changed)


def same_show_outputs(impls: list[Path], tree: Path, env: dict[str, str], changed: tuple[str, ...] = ()) -> None:
    """A faster evaluation must show exactly what the previous one showed: ``recipe show '*'`` of every
    implementation, the text byte for byte and the JSON document for document (stops the benchmark when
    they differ), but for the jobs of ``--changed`` config keys."""
    left_out = f", jobs of {', '.join(changed)} left out" if changed else ""
    for fmt in ("json", "text"):
        outputs = {_digest(subprocess.run(_show_cmd(impl, tree, fmt), capture_output=True, env=env, cwd=ROOT,
                                          check=True).stdout, fmt, changed) for impl in impls}
        if len(outputs) != 1:
            raise SystemExit(f"recipe show '*' --format {fmt}: the implementations' outputs differ{left_out}")
        same = "byte-identical to" if fmt == "text" else "the same documents (parsed) as"
        print(f"  recipe show '*' --format {fmt}: output {same} the previous implementation's{left_out}")


def _oracle_run(impl: Path, tree: Path, runs: int) -> dict[str, float]:
    reports = driver_reports([sys.executable, "-c", ORACLE_DRIVER, str(impl), str(ROOT / "tests"), str(tree)], runs,
                             ROOT, pin=True)
    return {"seconds": median_of(reports, "seconds"), "cpu": median_of(reports, "cpu"), "jobs": reports[0]["jobs"],
            "reached": reports[0]["reached"]}


def real_tree(tree: Path, runs: int, baseline: str, changed: tuple[str, ...] = ()) -> None:
    with tempfile.TemporaryDirectory(prefix="bench-recipes-base-") as tmp:
        base = ci_tools_at(baseline, Path(tmp) / "impl").root
        env = tool_env(Path(tmp) / "pycache")
        rows = [("current", ROOT), (f"previous ({baseline[:12]})", base)]
        print(f"real tree {tree}: median of {runs} runs, one core (taskset -c 0), bytecode cached as installed; "
              f"{load_average()}")
        table = Table(label_width=50)
        table.print_header("  recipe show '*' --format json (whole process)")
        # The warm-up run of each writes its bytecode cache.
        shown = {label: measure(_show_cmd(impl, tree), runs, ROOT, env, ok=(0,), pin=True) for label, impl in rows}
        for label, got in shown.items():
            table.print_row(f"    {label}", got, None if label != "current" else shown[rows[1][0]])
        same_show_outputs([impl for _, impl in rows], tree, env, changed)
        print("  single-node jobs, oracle environment, in process  wall       CPU      server reached")
        for label, impl in rows:
            if not (impl / "ci_tools" / "jobs" / "contract.py").is_file():
                # tests/real_jobs.py (this build's) imports the package by its current layout.
                print(f"    {label:<44} not measured: its package predates the current layout")
                continue
            r = _oracle_run(impl, tree, runs)
            print(f"    {label:<44} {r['seconds']:6.2f} s  {r['cpu']:6.2f} s  {int(r['reached'])} of {int(r['jobs'])}")


def synthetic(configs: int, runs: int) -> None:
    with tempfile.TemporaryDirectory(prefix="bench-recipes-") as tmp:
        root = Path(tmp)
        jobs = generate(root, configs)
        files = sorted(str(p) for p in (root / "benchmarks").rglob("*.sh"))
        cli = [sys.executable, "-m", "ci_tools", "recipe", "lint", "--repo", str(root), "--format", "json"]
        tool = measure(cli, runs, ROOT, ok=(0,), warmup=False)
        bash_cmd = ["bash", "-c", 'for f in "$@"; do bash -n "$f" || exit 1; done', "bash", *files]
        bash = measure(bash_cmd, runs, ROOT, warmup=False)
        cached = statistics.median(_in_process(root, naive=False)[0] for _ in range(3))
        # The naive variant is slow: measured on the first 350 jobs (50 recipes), per job.
        naive_time, naive_jobs = _in_process(root, naive=True, limit=350)
        print(f"generated tree: {configs} recipes, {jobs} jobs, median of {runs} runs (wall / CPU)")
        table = Table(label_width=40)
        table.print_header()
        table.print_row("  ci-tools recipe lint (whole process)", tool, bash)
        table.print_row(f"  baseline: bash -n over {len(files)} files", bash)
        print(f"  in-process evaluation, cached trees     {cached:7.3f} s   ({cached / jobs * 1000:.2f} ms/job)")
        print(f"  in-process, naive re-parse per job      {naive_time:7.3f} s   ({naive_time / naive_jobs * 1000:.2f} ms/job,"
              f" first {naive_jobs} jobs)")


def main() -> int:
    ap = bench_arguments(__doc__, runs=5)
    ap.add_argument("--real", type=Path, default=REAL_TREE, help="the real tree (default: tests/data/inferencex-843c625)")
    ap.add_argument("--baseline-rev", "--baseline", dest="baseline", default=None,
                    help="revision of the previous implementation (default: merge base with main; on main the commit before)")
    ap.add_argument("--synthetic", action="store_true", help="also run the generated-tree benchmark")
    ap.add_argument("--changed", action="append", default=[], metavar="KEY_GLOB",
                    help="config keys whose jobs this build evaluates differently on purpose: left out of the "
                         "same-output check (repeatable)")
    ap.add_argument("--configs", type=int, default=250)
    args = ap.parse_args()
    if args.real.is_dir():
        baseline = args.baseline or merge_base_with_main()
        real_tree(args.real, args.runs, baseline, tuple(args.changed))
    else:
        print(f"real tree not found at {args.real}: skipped")
    if args.synthetic or not args.real.is_dir():
        synthetic(args.configs, args.runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
