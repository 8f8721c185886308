"""`ci-tools check` on real pull requests' heads, as the PR job runs it: what an author would see.

Every ``--every``-th pull request from ``--from`` (by number, among ``refs/pull/N/head`` of a clone of
SemiAnalysisAI/InferenceX) is checked out in a throwaway work tree and checked with ``ci-tools check --base``
its merge base with ``--main`` and ``--pr-number`` its number, as its own process.  Printed: the CPU time of the runs, the pull requests a new
error fails and by which rules, and the new findings by rule and severity.  A run that ends other than 0 or 1 (a
traceback is exit 3) stops the benchmark with its stderr.

Get the heads once: ``git -C CLONE fetch origin '+refs/pull/*/head:refs/pull/*/head'``.

Run: .venv/bin/python bench/bench_check_prs.py --ix CLONE [--main REV] [--from N] [--every K] [--count M] [--keep DIR]
(50 heads take a few minutes)
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchlib import THIS_BUILD, git, require, run_once, tool_env  # noqa: E402


def heads(ix: Path, first: int, every: int, count: int) -> list[tuple[int, str]]:
    """(number, head) of every ``every``-th pull request from ``first``, at most ``count``."""
    refs = [line.split() for line in git(ix, "for-each-ref", "--format=%(refname) %(objectname)", "refs/pull")
            .splitlines() if line]
    numbered = sorted((int(ref.split("/")[2]), sha) for ref, sha in refs if ref.endswith("/head"))
    if not numbered:
        raise SystemExit(f"{ix} has no refs/pull/*/head: git -C {ix} fetch origin '+refs/pull/*/head:refs/pull/*/head'")
    return [p for p in numbered if p[0] >= first][every - 1::every][:count]


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--ix", type=Path, required=True, help="a clone of SemiAnalysisAI/InferenceX with refs/pull/*")
    parser.add_argument("--main", default="HEAD", help="the default branch's revision (default: HEAD of the clone)")
    parser.add_argument("--from", dest="first", type=int, default=1700, help="the first pull request number")
    parser.add_argument("--every", type=int, default=12, help="check every K-th pull request")
    parser.add_argument("--count", type=int, default=50, help="at most this many")
    parser.add_argument("--keep", type=Path, help="a directory to keep each pull request's JSON report in (N.json)")
    args = parser.parse_args()
    require(args.ix)
    main_rev = git(args.ix, "rev-parse", args.main)
    new: Counter[tuple[str, str]] = Counter()
    failing: dict[int, list[str]] = {}
    cpu: list[float] = []
    with tempfile.TemporaryDirectory(prefix="ci-tools-prs-") as tmp:
        tree, report = Path(tmp) / "tree", Path(tmp) / "report.json"
        git(args.ix, "worktree", "add", "-q", "--detach", str(tree), main_rev)
        try:
            chosen = heads(args.ix, args.first, args.every, args.count)
            for number, head in chosen:
                base = git(args.ix, "merge-base", head, main_rev)
                git(tree, "checkout", "-q", "-f", "--detach", head)
                # The PR job knows the pull request's number (from its event): a new entry's `pull/XXX` link is then
                # the placeholder a pull request may use, not a main-branch entry's defect.
                sample = run_once([*THIS_BUILD, "check", "--base", base, "--pr-number", str(number), "--format", "json",
                                   "--output", str(report)], cwd=tree, env=tool_env())
                cpu.append(sample.cpu_s)
                if args.keep is not None:
                    args.keep.mkdir(parents=True, exist_ok=True)
                    (args.keep / f"{number}.json").write_bytes(report.read_bytes())
                fresh = [f for f in json.loads(report.read_text(encoding="utf-8"))["findings"]
                         if f.get("baseline") == "new"]
                new.update((f["rule"], f["severity"]) for f in fresh)
                errors = sorted({f["rule"] for f in fresh if f["severity"] == "error"})
                if errors:
                    failing[number] = errors
        finally:
            git(args.ix, "worktree", "remove", "--force", str(tree))
    print(f"pull requests checked: {len(chosen)} (every {args.every}th from #{args.first}), against their merge "
          f"bases with {main_rev[:12]}, each ending 0 or 1; CPU per run {min(cpu):.2f}-{max(cpu):.2f} s, "
          f"median {statistics.median(cpu):.2f} s")
    print(f"failed by a new error: {len(failing)}")
    for number, rules in sorted(failing.items()):
        print(f"  #{number}: {', '.join(rules)}")
    print(f"new findings: {sum(new.values())}: " + ", ".join(f"{rule} {sev}s {n}" for (rule, sev), n in new.most_common()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
