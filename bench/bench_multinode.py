"""Benchmark: `ci-tools recipe show '*'` over the real InferenceX tree, with and without multinode jobs.

Runs on the shared copy of InferenceX at 843c6254f (1,820 jobs, 648 of them
multinode: srt-slurm YAML recipes and the AMD disaggregated script chain).

Measured, median of several runs, whole process (wall time, peak RSS):
- ``recipe show '*'``: every job, single-node and multinode, as text;
- in-process, side by side: the evaluation of the 1,172 single-node jobs
  (the baseline: what ``recipe show`` cost before multinode jobs were
  evaluated) and of the multinode jobs, split into srt-slurm jobs (each
  YAML parsed once) and script-chain jobs (launcher -> recipe -> submit.sh
  -> job.slurm -> server_*.sh).

Run: .venv/bin/python bench/bench_multinode.py [--runs 3] [--tree DIR]
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
TREE = ROOT.parent / "shared" / "corpus" / "inferencex-843c625-full"


def _run(argv: list[str]) -> tuple[float, float]:
    start = time.perf_counter()
    proc = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return wall, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


def _in_process(tree: Path) -> tuple[float, float, float, int, int, int]:
    from ci_tools.config import load_config
    from ci_tools.matrix import expand
    from ci_tools.model.repository import load_repo
    from ci_tools.contract import resolve_recipe
    from ci_tools.multinode.evaluate import evaluate_multinode_job
    from ci_tools.recipes.evaluate import evaluate_job
    from ci_tools.snapshot import WorkTreeSnapshot

    config = load_config(tree)
    snapshot = WorkTreeSnapshot(tree)
    every = expand(load_repo(snapshot, config))
    single = [j for j in every if not j.multinode]
    start = time.perf_counter()
    for job in single:
        evaluate_job(job, config, snapshot)
    baseline = time.perf_counter() - start
    jobs = [j for j in every if j.multinode]
    scripts = [j for j in jobs if resolve_recipe(j, config, snapshot).kind == "script"]
    others = [j for j in jobs if j not in scripts]
    start = time.perf_counter()
    for job in others:
        evaluate_multinode_job(job, config, snapshot)
    middle = time.perf_counter()
    for job in scripts:
        evaluate_multinode_job(job, config, snapshot)
    return baseline, middle - start, time.perf_counter() - middle, len(single), len(others), len(scripts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--tree", type=Path, default=TREE)
    args = parser.parse_args()
    cli = str(ROOT / ".venv" / "bin" / "ci-tools")
    runs = [_run([cli, "recipe", "show", "*", "--repo", str(args.tree)]) for _ in range(args.runs)]
    baseline, srt, chain, n_single, n_srt, n_chain = _in_process(args.tree)
    print(f"tree: {args.tree}")
    print(f"recipe show '*' (every job, whole process): median {statistics.median(w for w, _ in runs):.2f} s, "
          f"peak RSS {max(m for _, m in runs):.0f} MiB")
    print(f"in-process: {n_single} single-node jobs {baseline:.2f} s (baseline) | multinode: "
          f"{n_srt} srt-slurm/other jobs {srt:.2f} s, {n_chain} script-chain jobs {chain:.2f} s")


if __name__ == "__main__":
    main()
