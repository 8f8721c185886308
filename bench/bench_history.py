"""Benchmark: `claims --history` over the real InferenceX history, against an earlier ci-tools.

Replays every commit since 2026-07-02 that touched perf-changelog.yaml (224
commits up to 843c6254f) in a clone of SemiAnalysisAI/InferenceX, or with
``--since ''`` the whole history (831 commits touching the changelog, 774
adding entries), with this build and with ci-tools as it was at
``--baseline-rev`` (default: main after the evaluation merge) in the same
run, the builds taking turns ``--runs`` times.
Reports wall time, CPU time (with the worker processes), peak RSS (of the
largest process) and the number of findings of each, and whether the JSON
reports of the two builds are byte-identical.  Targets: <= 30 s and <= 400 MiB.

The clone is not part of this repository: fetch SemiAnalysisAI/InferenceX
(e.g. ``git clone https://github.com/SemiAnalysisAI/InferenceX``) and pass
its path with ``--ix``.

Run: .venv/bin/python bench/bench_history.py --ix PATH [--since REV|''] [--runs N] [--baseline-rev REV] [--no-baseline]
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

from benchlib import (THIS_BUILD, Measurement, Sample, Table, bench_arguments, ci_tools_at, load_average, run_once,
                      tool_env)

SINCE = "1c08b4369e6d"  # the last commit before 2026-07-02
BASELINE_REV = "c891bff"  # main when this work began: the evaluation merge, before the arms and the worker chunks


def replay(cli: list[str], ix: Path, since: str, out: Path) -> tuple[Sample, dict[str, int]]:
    """One replay (20-60 s: no warm-up); its figures and the report's summary."""
    window = ["--since", since] if since else []
    sample = run_once([*cli, "claims", "--repo", str(ix), "--history", *window, "--head", "HEAD",
                       "--format", "json", "--output", str(out)], ix, tool_env())
    return sample, json.loads(out.read_text())["summary"]


def main() -> int:
    parser = bench_arguments(__doc__, runs=1, baseline_rev=BASELINE_REV)
    parser.add_argument("--ix", type=Path, required=True, help="a clone of SemiAnalysisAI/InferenceX")
    parser.add_argument("--since", default=SINCE,
                        help=f"the last commit left out (default {SINCE}); '' for the whole history")
    args = parser.parse_args()
    ix = args.ix.resolve()
    if not (ix / ".git").exists():
        print(f"{ix} is not a git clone of InferenceX", file=sys.stderr)
        return 2
    print(load_average())
    table = Table(label_width=28)
    with tempfile.TemporaryDirectory() as tmp_dir:
        tmp = Path(tmp_dir)
        builds = [("this build", list(THIS_BUILD))]
        if not args.no_baseline:
            builds.append((f"ci-tools at {args.baseline_rev}", list(ci_tools_at(args.baseline_rev, tmp / "baseline").command)))
        samples: dict[str, list[Sample]] = {name: [] for name, _ in builds}
        summaries: dict[str, dict[str, int]] = {}
        for _ in range(args.runs):  # the builds take turns: a change of the machine's load hits both
            for i, (name, cli) in enumerate(builds):
                sample, summaries[name] = replay(cli, ix, args.since, tmp / f"{i}.json")
                samples[name].append(sample)
        same = None if args.no_baseline else (tmp / "0.json").read_bytes() == (tmp / "1.json").read_bytes()
    table.print_header()
    measured = {name: Measurement.of(found) for name, found in samples.items()}
    baseline = None if args.no_baseline else measured[builds[-1][0]]
    for name, _ in builds:
        summary = summaries[name]
        table.print_row(name, measured[name], baseline if name == "this build" else None,
                        f"{summary['error']} errors, {summary['warning']} warnings, {summary['note']} notes")
    if same is not None:
        print(f"JSON reports byte-identical: {'yes' if same else 'NO'}")
    print("targets: <= 30 s, <= 400 MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
