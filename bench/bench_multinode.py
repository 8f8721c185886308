"""Benchmark: where `ci-tools recipe show '*'` spends its time on the real tree, beside the previous implementation.

Runs on the committed copy of InferenceX (tests/data/inferencex-843c625) at 843c6254f (1,820 jobs, 648 of them
multinode: srt-slurm YAML recipes and the AMD disaggregated script chain),
each process pinned to one core (``taskset -c 0``), the previous
implementation (``--baseline REV``, default the merge base with ``main``,
extracted with ``git archive``) measured in the same run:

- in process, CPU time per kind of job, each kind evaluated the way
  ``recipe show`` evaluates it (the cyclic collector paused, and the stack
  room reserved, where the implementation does): the 1,172 single-node jobs, the srt-slurm and
  external multinode jobs (each YAML parsed once) and the jobs that follow a
  bash script chain (launcher -> recipe -> submit.sh -> job.slurm ->
  server_*.sh), then the JSON documents of every job (built and encoded as
  ``recipe show`` encodes them);
- peak RSS of that process.

``bench_recipes.py`` measures the whole ``recipe show '*'`` process.

Run: .venv/bin/python bench/bench_multinode.py [--runs 3] [--tree DIR] [--baseline REV]
"""

from __future__ import annotations

import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchlib import (ROOT, bench_arguments, ci_tools_at, driver_reports, load_average,  # noqa: E402
                      merge_base_with_main, ratio, require)
from benchlib import FULL_CORPUS as TREE  # noqa: E402

# Evaluates every job of the tree by kind in one process; prints CPU seconds per kind and peak RSS.
DRIVER = r"""
import contextlib, json, resource, sys, time
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from ci_tools.config import load_config
from ci_tools.jobs.contract import resolve_recipe
from ci_tools.jobs.matrix import expand
from ci_tools.model.repository import load_repo
from ci_tools.evaluation.evaluate import evaluate_job
from ci_tools.revision.snapshot import WorkTreeSnapshot
from ci_tools.cli import recipe_cmd
try:
    from ci_tools.shell.collector import collection_paused
except ImportError:  # an implementation that does not pause the collector
    collection_paused = contextlib.nullcontext
try:  # as `recipe show` calls the sweep: from a frame that keeps a large stack chunk mapped
    from ci_tools.shell.stack import with_room
except ImportError:
    with_room = lambda fn: fn()
tree = Path(sys.argv[2])
config = load_config(tree)
snapshot = WorkTreeSnapshot(tree)
jobs = expand(load_repo(snapshot, config))
kinds = {"single-node": [], "srt-slurm and external": [], "script chain": []}
for job in jobs:
    kind = resolve_recipe(job, config, snapshot).kind
    key = "single-node" if not job.multinode else "script chain" if kind == "script" else "srt-slurm and external"
    kinds[key].append(job)
out, results = {}, []
with collection_paused():
    for name, group in kinds.items():
        start = time.process_time()
        results += with_room(lambda: [(job, evaluate_job(job, config, snapshot)) for job in group])
        out[name] = [time.process_time() - start, len(group)]
    # Each document encoded as the implementation's `recipe show` encodes it.
    encode = getattr(recipe_cmd, "_compact_json", None) or json.JSONEncoder(check_circular=False).encode
    start = time.process_time()
    for job, result in results:
        encode(recipe_cmd._shown_json(job, result, resolve_recipe(job, config, snapshot), False))
    out["JSON documents"] = [time.process_time() - start, len(results)]
out["peak RSS MiB"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(out))
"""


def _measure(impl: Path, tree: Path, runs: int) -> dict[str, tuple[float, int]]:
    """Per kind: median CPU seconds over the runs and the number of jobs; the peak RSS as a kind of its own."""
    reports: list[dict[str, Any]] = driver_reports([sys.executable, "-c", DRIVER, str(impl), str(tree)], runs, ROOT,
                                                   pin=True)
    return {k: (statistics.median(r[k][0] for r in reports), reports[0][k][1]) if isinstance(v, list)
            else (statistics.median(r[k] for r in reports), 0) for k, v in reports[0].items()}


def main() -> None:
    parser = bench_arguments(__doc__, runs=3)
    parser.add_argument("--tree", type=Path, default=TREE)
    parser.add_argument("--baseline-rev", "--baseline", dest="baseline", default=None,
                        help="revision of the previous implementation (default: merge base with main)")
    args = parser.parse_args()
    require(args.tree)
    baseline = args.baseline or merge_base_with_main()
    with tempfile.TemporaryDirectory(prefix="bench-multinode-base-") as tmp:
        previous = ci_tools_at(baseline, Path(tmp))
        current, before = _measure(ROOT, args.tree, args.runs), _measure(previous.root, args.tree, args.runs)
    print(f"real tree {args.tree}: in process, CPU seconds, median of {args.runs} runs, one core (taskset -c 0); "
          f"{load_average()}")
    names = [k for k in current if k != "peak RSS MiB"]
    print(f"  {'':<28}{'current':>14}{f'previous ({baseline[:12]})':>26}{'current vs previous':>21}")
    for name in [*names, "total", "peak RSS MiB"]:
        if name == "total":
            now, then = (sum(r[n][0] for n in names) for r in (current, before))
        else:
            now, then = current[name][0], before[name][0]
        unit = " MiB" if name == "peak RSS MiB" else " s"
        label = "peak RSS" if name == "peak RSS MiB" else name + (f" ({current[name][1]})" if name in names else "")
        print(f"  {label:<28}{f'{now:.2f}{unit}':>14}{f'{then:.2f}{unit}':>26}{ratio(now, then):>21}")


if __name__ == "__main__":
    main()
