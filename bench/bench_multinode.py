"""Benchmark: where `ci-tools recipe show '*'` spends its time on the real tree, beside the previous implementation.

Runs on the shared copy of InferenceX at 843c6254f (1,820 jobs, 648 of them
multinode: srt-slurm YAML recipes and the AMD disaggregated script chain),
each process pinned to one core (``taskset -c 0``), the previous
implementation (``--baseline REV``, default the merge base with ``main``,
extracted with ``git archive``) measured in the same run:

- in process, CPU time per kind of job, each kind evaluated the way
  ``recipe show`` evaluates it (the cyclic collector paused where the
  implementation pauses it): the 1,172 single-node jobs, the srt-slurm and
  external multinode jobs (each YAML parsed once) and the jobs that follow a
  bash script chain (launcher -> recipe -> submit.sh -> job.slurm ->
  server_*.sh), then the JSON documents of every job;
- peak RSS of that process.

``bench_recipes.py`` measures the whole ``recipe show '*'`` process.

Run: .venv/bin/python bench/bench_multinode.py [--runs 3] [--tree DIR] [--baseline REV]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TREE = ROOT.parent / "shared" / "corpus" / "inferencex-843c625-full"

# Evaluates every job of the tree by kind in one process; prints CPU seconds per kind and peak RSS.
DRIVER = r"""
import contextlib, json, resource, sys, time
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from ci_tools.config import load_config
from ci_tools.contract import resolve_recipe
from ci_tools.matrix import expand
from ci_tools.model.repository import load_repo
from ci_tools.recipes.evaluate import evaluate_job
from ci_tools.snapshot import WorkTreeSnapshot
from ci_tools.cli import recipe_cmd
try:
    from ci_tools.recipes.collector import collection_paused
except ImportError:  # an implementation that does not pause the collector
    collection_paused = contextlib.nullcontext
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
        results += [(job, evaluate_job(job, config, snapshot)) for job in group]
        out[name] = [time.process_time() - start, len(group)]
    start = time.process_time()
    for job, result in results:
        json.dumps(recipe_cmd._shown_json(job, result, resolve_recipe(job, config, snapshot), False))
    out["JSON documents"] = [time.process_time() - start, len(results)]
out["peak RSS MiB"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(out))
"""


def _pinned(cmd: list[str]) -> list[str]:
    taskset = shutil.which("taskset")
    return [taskset, "-c", "0", *cmd] if taskset else cmd


def _extract(rev: str, dest: Path) -> None:
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "ci_tools", "schemas"],
                             capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive.stdout, check=True)


def _measure(impl: Path, tree: Path, runs: int) -> dict[str, list[float]]:
    samples = []
    for _ in range(runs):
        done = subprocess.run(_pinned([sys.executable, "-c", DRIVER, str(impl), str(tree)]),
                              capture_output=True, text=True, cwd=ROOT)
        if done.returncode != 0:
            raise SystemExit(f"driver failed for {impl}:\n{done.stderr[-2000:]}")
        samples.append(json.loads(done.stdout.strip().splitlines()[-1]))
    return {k: [statistics.median(s[k][0] for s in samples), samples[0][k][1]] if isinstance(samples[0][k], list)
            else [statistics.median(s[k] for s in samples), 0] for k in samples[0]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--tree", type=Path, default=TREE)
    parser.add_argument("--baseline", default=None,
                        help="revision of the previous implementation (default: merge base with main)")
    args = parser.parse_args()
    if not args.tree.is_dir():
        raise SystemExit(f"real tree not found at {args.tree}")
    baseline = args.baseline or subprocess.run(["git", "-C", str(ROOT), "merge-base", "HEAD", "main"],
                                               capture_output=True, text=True, check=True).stdout.strip()
    with tempfile.TemporaryDirectory(prefix="bench-multinode-base-") as tmp:
        _extract(baseline, Path(tmp))
        rows = [("current", _measure(ROOT, args.tree, args.runs)),
                (f"previous ({baseline[:12]})", _measure(Path(tmp), args.tree, args.runs))]
    print(f"real tree {args.tree}: in process, CPU seconds, median of {args.runs} runs, one core (taskset -c 0)")
    names = [k for k in rows[0][1] if k != "peak RSS MiB"]
    print(f"  {'':<28}" + "".join(f"{label:>26}" for label, _ in rows))
    for name in names:
        jobs = int(rows[0][1][name][1])
        print(f"  {name + f' ({jobs})':<28}" + "".join(f"{r[name][0]:>24.2f} s" for _, r in rows))
    total = [sum(r[n][0] for n in names) for _, r in rows]
    print(f"  {'total':<28}" + "".join(f"{t:>24.2f} s" for t in total))
    print(f"  {'peak RSS':<28}" + "".join(f"{r['peak RSS MiB'][0]:>22.0f} MiB" for _, r in rows))


if __name__ == "__main__":
    main()
