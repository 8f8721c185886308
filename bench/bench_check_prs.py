"""`ci-tools check` on real pull requests' heads, as the PR job runs it: what an author would see.

Every ``--every``-th pull request from ``--from`` (by number, among ``refs/pull/N/head`` of a clone of
SemiAnalysisAI/InferenceX) is checked out in a throwaway work tree and checked with ``ci-tools check --base``
its merge base with ``--main`` and ``--pr-number`` its number, as its own process, by this build and, in turns
with it on the same head, by ci-tools as it was at ``--baseline-rev`` (default: where this branch left main;
``--no-baseline``: this build alone).  Printed per build: the CPU time of the runs, the pull requests a new error
fails and by which rules, and the new findings by rule and severity; then every pull request whose new findings
differ between the two builds, with the findings only one of them gives.  A run that ends other than 0 or 1 (a
traceback is exit 3) stops the benchmark with its stderr.

Get the heads once: ``git -C CLONE fetch origin '+refs/pull/*/head:refs/pull/*/head'``.

Run: .venv/bin/python bench/bench_check_prs.py --ix CLONE [--main REV] [--from N] [--every K] [--count M]
[--numbers N,N,...] [--baseline-rev REV | --no-baseline] [--keep DIR]   (50 heads take a few minutes per build)
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchlib import (GIT_ENV, THIS_BUILD, ci_tools_at, git, merge_base_with_main, require, run_once,  # noqa: E402
                      tool_env)

Finding = tuple[str, str, str, int, str]  # rule, severity, path, line, message


@dataclass
class BuildRuns:
    """One build's runs over the heads: its CPU seconds, and each pull request's new findings."""

    label: str
    command: list[str]
    cpu: list[float] = field(default_factory=list)
    new: dict[int, list[Finding]] = field(default_factory=dict)

    def summary(self, main_rev: str) -> list[str]:
        counted: Counter[tuple[str, str]] = Counter((f[0], f[1]) for found in self.new.values() for f in found)
        failing = {n: sorted({f[0] for f in found if f[1] == "error"}) for n, found in self.new.items()}
        failing = {n: rules for n, rules in failing.items() if rules}
        lines = [f"{self.label}: {len(self.cpu)} heads against their merge bases with {main_rev[:12]}, each ending 0 "
                 f"or 1; CPU per run {min(self.cpu):.2f}-{max(self.cpu):.2f} s, median "
                 f"{statistics.median(self.cpu):.2f} s, {sum(self.cpu):.1f} s in all",
                 f"  failed by a new error: {len(failing)}"]
        lines += [f"    #{number}: {', '.join(rules)}" for number, rules in sorted(failing.items())]
        lines.append(f"  new findings: {sum(counted.values())}: "
                     + ", ".join(f"{rule} {sev}s {n}" for (rule, sev), n in counted.most_common()))
        return lines


def heads(ix: Path, first: int, every: int, count: int, numbers: frozenset[int] = frozenset()) -> list[tuple[int, str]]:
    """(number, head) of every ``every``-th pull request from ``first``, at most ``count``; those of ``numbers``
    instead when given (each must have a head)."""
    refs = [line.split() for line in git(ix, "for-each-ref", "--format=%(refname) %(objectname)", "refs/pull")
            .splitlines() if line]
    numbered = sorted((int(ref.split("/")[2]), sha) for ref, sha in refs if ref.endswith("/head"))
    if not numbered:
        raise SystemExit(f"{ix} has no refs/pull/*/head: git -C {ix} fetch origin '+refs/pull/*/head:refs/pull/*/head'")
    if numbers:
        missing = sorted(numbers - {n for n, _ in numbered})
        if missing:
            raise SystemExit(f"{ix} has no head for pull request(s) {', '.join(map(str, missing))}")
        return [p for p in numbered if p[0] in numbers]
    return [p for p in numbered if p[0] >= first][every - 1::every][:count]


def pull_numbers(text: str) -> frozenset[int]:
    """``--numbers``: comma-separated pull request numbers."""
    words = [w.strip() for w in text.split(",") if w.strip()]
    wrong = [w for w in words if not w.isdigit()]
    if wrong:
        raise argparse.ArgumentTypeError(f"expected comma-separated pull request numbers, found {', '.join(wrong)}")
    return frozenset(int(w) for w in words)


def checkout(tree: Path, head: str) -> str:
    """Check ``head`` out in ``tree``; "" when done, else git's first line of why not (a blob the clone lacks:
    a mirror may hold a large file as absent)."""
    done = subprocess.run(["git", "-C", str(tree), "checkout", "-q", "-f", "--detach", head], capture_output=True,
                          env=GIT_ENV, check=False)
    if done.returncode == 0:
        return ""
    lines = done.stderr.decode(errors="replace").strip().splitlines()
    return lines[0] if lines else f"git checkout exited {done.returncode}"


def new_findings(report: Any) -> list[Finding]:
    return [(f["rule"], f["severity"], f.get("path") or "", int(f.get("line") or 0), f["message"])
            for f in report["findings"] if f.get("baseline") == "new"]


def differences(builds: list[BuildRuns]) -> list[str]:
    """Each pull request whose new findings differ between the first build and another, with what differs."""
    ours, lines = builds[0], []
    for other in builds[1:]:
        for number in sorted(ours.new):
            mine, theirs = Counter(ours.new[number]), Counter(other.new.get(number, []))
            if mine == theirs:
                continue
            lines.append(f"  #{number}:")
            for sign, found in (("-", theirs - mine), ("+", mine - theirs)):
                lines += [f"    {sign} {rule} {sev} {path}:{line}: {message}"
                          for rule, sev, path, line, message in sorted(found.elements())]
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--ix", type=Path, required=True, help="a clone of SemiAnalysisAI/InferenceX with refs/pull/*")
    parser.add_argument("--main", default="HEAD", help="the default branch's revision (default: HEAD of the clone)")
    parser.add_argument("--from", dest="first", type=int, default=1700, help="the first pull request number")
    parser.add_argument("--every", type=int, default=12, help="check every K-th pull request")
    parser.add_argument("--count", type=int, default=50, help="at most this many")
    parser.add_argument("--numbers", type=pull_numbers, default=frozenset(),
                        help="these pull requests instead (comma-separated numbers)")
    parser.add_argument("--baseline-rev", default=None, help="the ci-tools revision run beside this build")
    parser.add_argument("--no-baseline", action="store_true", help="run this build alone")
    parser.add_argument("--keep", type=Path, help="a directory to keep this build's JSON report of each pull request in (N.json)")
    args = parser.parse_args()
    require(args.ix)
    main_rev = git(args.ix, "rev-parse", args.main)
    with tempfile.TemporaryDirectory(prefix="ci-tools-prs-") as tmp:
        tree, report = Path(tmp) / "tree", Path(tmp) / "report.json"
        builds = [BuildRuns("this build", list(THIS_BUILD))]
        if not args.no_baseline:
            rev = args.baseline_rev or merge_base_with_main()
            builds.append(BuildRuns(f"ci-tools at {rev[:12]}", list(ci_tools_at(rev, Path(tmp) / "baseline").command)))
        git(args.ix, "worktree", "add", "-q", "--detach", str(tree), main_rev)
        skipped: list[str] = []
        try:
            chosen = heads(args.ix, args.first, args.every, args.count, args.numbers)
            for number, head in chosen:
                base = git(args.ix, "merge-base", head, main_rev)
                why = checkout(tree, head)
                if why:  # a head whose tree the clone does not hold whole: said, and the others still checked
                    skipped.append(f"#{number} ({why})")
                    continue
                for build in builds:  # in turns on the same head, so that the machine's load falls on both alike
                    # The PR job knows the pull request's number (from its event): a new entry's `pull/XXX` link is
                    # then the placeholder a pull request may use, not a main-branch entry's defect.
                    sample = run_once([*build.command, "check", "--base", base, "--pr-number", str(number),
                                       "--format", "json", "--output", str(report)], cwd=tree, env=tool_env())
                    build.cpu.append(sample.cpu_s)
                    build.new[number] = new_findings(json.loads(report.read_text(encoding="utf-8")))
                    if args.keep is not None and build is builds[0]:
                        args.keep.mkdir(parents=True, exist_ok=True)
                        (args.keep / f"{number}.json").write_bytes(report.read_bytes())
        finally:
            git(args.ix, "worktree", "remove", "--force", str(tree))
    print(f"pull requests checked: {len(chosen) - len(skipped)} " + (
        f"(#{','.join(str(n) for n, _ in chosen)})" if args.numbers else f"(every {args.every}th from #{args.first})"))
    if skipped:
        print(f"skipped, their head not checked out: {len(skipped)}: {'; '.join(skipped)}")
    for build in builds:
        print("\n".join(build.summary(main_rev)))
    if len(builds) > 1:
        changed = differences(builds)
        print(f"pull requests whose new findings differ (- {builds[1].label} only, + this build only): "
              f"{sum(1 for line in changed if line.startswith('  #'))}")
        print("\n".join(changed))
        print(f"CPU in all: this build {sum(builds[0].cpu):.1f} s, {builds[1].label} {sum(builds[1].cpu):.1f} s "
              f"({sum(builds[0].cpu) / sum(builds[1].cpu):.2f}x)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
