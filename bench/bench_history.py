"""Benchmark: `claims --history` over the real InferenceX history, against an earlier ci-tools.

Replays every commit since 2026-07-02 that touched perf-changelog.yaml (224
commits up to 843c6254f) in a clone of SemiAnalysisAI/InferenceX, once with
this build and once with ci-tools as it was at ``--baseline-rev`` (default:
main after the evaluation merge), in the same run.  Reports wall time, CPU
time (with the worker processes), peak RSS (of the largest process) and the
number of findings of each.  Targets: <= 30 s and <= 400 MiB.

The clone is not part of this repository: fetch SemiAnalysisAI/InferenceX
(e.g. ``git clone https://github.com/SemiAnalysisAI/InferenceX``) and pass
its path with ``--ix``.

Run: .venv/bin/python bench/bench_history.py --ix PATH [--since REV] [--baseline-rev REV] [--no-baseline]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from benchlib import ci_tools_at, drop_worktree, load_average, timed_cpu

SINCE = "1c08b4369e6d"  # the last commit before 2026-07-02
BASELINE_REV = "c891bff"  # main when this work began: the evaluation merge, before the arms and the worker chunks


def replay(cli: list[str], ix: Path, since: str, out: Path) -> tuple[float, float, int, dict[str, int]]:
    elapsed, cpu, rss = timed_cpu([*cli, "claims", "--repo", str(ix), "--history", "--since", since, "--head", "HEAD",
                                   "--format", "json", "--output", str(out)], ix)
    summary = json.loads(out.read_text())["summary"]
    return elapsed, cpu, rss, summary


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--ix", type=Path, required=True, help="a clone of SemiAnalysisAI/InferenceX")
    parser.add_argument("--since", default=SINCE)
    parser.add_argument("--baseline-rev", default=BASELINE_REV)
    parser.add_argument("--no-baseline", action="store_true")
    args = parser.parse_args()
    ix = args.ix.resolve()
    if not (ix / ".git").exists():
        print(f"{ix} is not a git clone of InferenceX", file=sys.stderr)
        return 2
    print(f"load average {load_average()}")
    rows = []
    with tempfile.TemporaryDirectory() as tmp_dir:
        tmp = Path(tmp_dir)
        builds = [("this build", [sys.executable, "-m", "ci_tools"])]
        if not args.no_baseline:
            builds.append((f"ci-tools at {args.baseline_rev}", ci_tools_at(args.baseline_rev, tmp / "baseline")))
        try:
            for name, cli in builds:
                t, cpu, rss, summary = replay(cli, ix, args.since, tmp / f"{len(rows)}.json")
                rows.append((name, t, rss, summary))
                print(f"  {name:28s} {t:7.2f} s wall {cpu:7.2f} s CPU   peak RSS {rss / 1024:7.1f} MiB   "
                      f"{summary['error']} errors, {summary['warning']} warnings, {summary['note']} notes", flush=True)
        finally:
            if not args.no_baseline:
                drop_worktree(tmp / "baseline")
    print("targets: <= 30 s, <= 400 MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
