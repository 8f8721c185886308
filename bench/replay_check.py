"""The PR job replayed over real history: `check --base C^ --head C` for each first-parent commit, two builds.

For every first-parent commit of a clone of SemiAnalysisAI/InferenceX in a
window (``--since``/``--until``, dates as git reads them) or named with
``--commits``, runs ``ci-tools check --base C^ --head C --format json`` with
this build and with ci-tools as it was at ``--baseline-rev`` (default: where
this branch left ``main``), and prints:

- the findings of each rule for each build (errors, warnings and notes
  apart), and how many commits each rule fired on: every finding of the
  head (a finding the build reports as fixed by the change, ``absent``, is
  not counted), and, for a build that compares with the base, how many of
  them are new (what fails the pull request);
- how many configs the coverage findings count in all (one finding groups
  the configs of one cause);
- per rule, the commits whose findings differ, with the findings one build
  has and the other lacks (``--show RULE`` prints them all, else the first
  few), so that each removed or added finding can be read against the
  commit;
- the CPU time of all the runs of each build (the runs are independent
  processes; compare builds within one run of this script).

A commit from before InferenceX moved its configs to the repository's root
(2026-07-02) is checked with a configuration naming ``.github/configs/``
(``--config``), as ``claims --history`` reads such revisions.

``--save DIR`` keeps each build's findings as JSON (one object per commit).
``--jobs N`` runs N checks at a time (default 1; this machine has 2 cores).

Run: ``.venv/bin/python bench/replay_check.py --ix CLONE [--since 2026-07-13] [--baseline-rev REV]
[--commits C ...] [--save DIR] [--show RULE]``
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchlib import THIS_BUILD, ci_tools_at, git, load_average, merge_base_with_main, tool_env  # noqa: E402

SINCE = "2026-07-13"  # #2096: InferenceX's current config format
# a finding: rule, severity, path, line, message, and "new"/"unchanged" against the base ("" for a build that
# does not compare)
Found = tuple[str, str, str, int, str, str]
LEGACY_CONFIG = "master-configs: [.github/configs/*-master.yaml]\nrunners: .github/configs/runners.yaml\n"


@dataclass
class Replayed:
    """One build's replay: each commit's findings ``(rule, severity, path, line, message, state)``, exit code,
    CPU."""

    findings: dict[str, list[Found]] = field(default_factory=dict)
    codes: dict[str, int] = field(default_factory=dict)
    cpu_s: float = 0.0
    wall_s: float = 0.0


def commits_of(ix: Path, since: str, until: str | None) -> list[str]:
    window = [f"--since={since}"] + ([f"--until={until}"] if until else [])
    listed = git(ix, "rev-list", "--first-parent", "--reverse", *window, "HEAD")
    return [c for c in listed.split() if c]


def legacy_layout(ix: Path, commit: str) -> bool:
    """Whether the commit keeps its master configs under .github/configs/ (before 2026-07-02)."""
    return not git(ix, "ls-tree", "--name-only", commit, "configs/") and bool(
        git(ix, "ls-tree", "--name-only", commit, ".github/configs/"))


def check_one(cli: list[str], ix: Path, commit: str, out: Path) -> tuple[int, float, list[Found]]:
    argv = [*cli, "check", "--repo", str(ix), "--base", f"{commit}^", "--head", commit, "--format", "json",
            "--output", str(out)]
    if legacy_layout(ix, commit):
        legacy = out.with_name("legacy.ci-tools.yaml")
        legacy.write_text(LEGACY_CONFIG, encoding="utf-8")
        argv += ["--config", str(legacy)]
    with tempfile.TemporaryFile("w+b") as err:
        proc = subprocess.Popen(argv, cwd=ix, env=tool_env(), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        code = os.waitstatus_to_exitcode(status)
        if code not in (0, 1):
            err.seek(0)
            print(f"  {commit[:12]}: exit {code}: {err.read().decode(errors='replace')[-400:]}", file=sys.stderr)
            return code, usage.ru_utime + usage.ru_stime, []
    report = json.loads(out.read_text(encoding="utf-8"))
    found = [(f["rule"], f["severity"], f["path"] or "", int(f["line"] or 0), f["message"], f.get("baseline") or "")
             for f in report["findings"] if f.get("baseline") != "absent"]
    return code, usage.ru_utime + usage.ru_stime, found


def replay(cli: list[str], ix: Path, commits: list[str], tmp: Path, jobs: int) -> Replayed:
    result = Replayed()
    start = time.perf_counter()

    def one(item: tuple[int, str]) -> tuple[str, tuple[int, float, list[Found]]]:
        n, commit = item
        return commit, check_one(cli, ix, commit, tmp / f"report-{n}.json")

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        for commit, (code, cpu, found) in pool.map(one, enumerate(commits)):
            result.codes[commit] = code
            result.cpu_s += cpu
            result.findings[commit] = found
    result.wall_s = time.perf_counter() - start
    return result


def load_saved(path: Path, commits: list[str]) -> Replayed:
    saved = json.loads(path.read_text(encoding="utf-8"))
    missing = [c[:12] for c in commits if c not in saved]
    if missing:
        raise SystemExit(f"{path} has no findings for {len(missing)} of the commits ({', '.join(missing[:5])} ...)")
    result = Replayed()
    for commit in commits:
        result.codes[commit] = saved[commit]["exit"]
        result.findings[commit] = [(str(rule), str(severity), str(path), int(line), str(message), str(state))
                                   for rule, severity, path, line, message, state in saved[commit]["findings"]]
    return result


def per_rule(result: Replayed, new_only: bool = False) -> dict[tuple[str, str], tuple[int, int]]:
    """(rule, severity) -> (findings, commits with any); with ``new_only`` only those new against the base."""
    count: collections.Counter[tuple[str, str]] = collections.Counter()
    commits: collections.Counter[tuple[str, str]] = collections.Counter()
    for found in result.findings.values():
        keys = [(f[0], f[1]) for f in found if not new_only or f[5] == "new"]
        count.update(keys)
        commits.update(set(keys))
    return {k: (count[k], commits[k]) for k in count}


# How a coverage finding that groups the configs of one cause begins, and how one for a single config names it.
_GROUPED = re.compile(r"(\d+) configs are affected")
_ONE_CONFIG = re.compile(r"config `([^`]+)` is affected")


def _subject(finding: Found) -> str:
    """What a finding is about, for pairing the two builds' findings: the config a coverage finding names
    (its line moves with the cause it points at), else the file and line, with the number of configs a grouped
    coverage finding counts (a cause that now counts 3 configs instead of 16 is another finding)."""
    named = _ONE_CONFIG.search(finding[4])
    if named:
        return f"config {named.group(1)}"
    grouped = _GROUPED.match(finding[4]) if finding[0] == "coverage-uncovered-key" else None
    return f"{finding[2]}:{finding[3]}" + (f" ({grouped.group(1)} configs)" if grouped else "")


def configs_counted(result: Replayed) -> int:
    """How many configs the coverage findings of every commit count (a grouped finding counts its configs)."""
    total = 0
    for found in result.findings.values():
        for f in found:
            if f[0] == "coverage-uncovered-key":
                grouped = _GROUPED.match(f[4])
                total += int(grouped.group(1)) if grouped else 1
    return total


def print_differences(before: Replayed, after: Replayed, ix: Path, show: str | None, limit: int) -> None:
    """Per rule, the commits whose findings differ (by subject, so a reworded finding is the same finding)."""
    rules = sorted({f[0] for r in (before, after) for found in r.findings.values() for f in found})
    for rule in rules:
        differing: list[tuple[str, list[str]]] = []
        for commit in after.findings:
            old = {_subject(f): f for f in before.findings.get(commit, []) if f[0] == rule}
            new = {_subject(f): f for f in after.findings[commit] if f[0] == rule}
            gone, came = sorted(set(old) - set(new)), sorted(set(new) - set(old))
            if not gone and not came:
                continue
            subject = git(ix, "log", "-1", "--format=%s", commit)[:70]
            details = []
            if show == rule:
                details += [f"      - {old[k][2]}:{old[k][3]}: {old[k][4][:220]}" for k in gone[:limit]]
                details += [f"      + {new[k][2]}:{new[k][3]}: {new[k][4][:220]}" for k in came[:limit]]
            differing.append((f"  {commit[:12]} ({subject}): -{len(gone)} +{len(came)}", details))
        if differing:
            print(f"{rule}: {len(differing)} commit(s) differ")
            for header, details in differing:
                print(header)
                if details:
                    print("\n".join(details))


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--ix", type=Path, required=True, help="a clone of SemiAnalysisAI/InferenceX")
    parser.add_argument("--since", default=SINCE)
    parser.add_argument("--until", default=None)
    parser.add_argument("--commits", nargs="*", default=None, help="these commits instead of a window")
    parser.add_argument("--baseline-rev", default=None, help="the ci-tools revision run beside this build")
    parser.add_argument("--no-baseline", action="store_true")
    parser.add_argument("--baseline-saved", type=Path, default=None,
                        help="the baseline's findings as --save wrote them in an earlier run, instead of running it")
    parser.add_argument("--baseline-only", action="store_true", help="run only the baseline (to --save it)")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--save", type=Path, default=None, help="write each build's findings here as JSON")
    parser.add_argument("--show", default=None, help="print every differing finding of this rule")
    parser.add_argument("--limit", type=int, default=40, help="findings printed per commit with --show")
    args = parser.parse_args()
    ix = args.ix.resolve()
    commits = ([git(ix, "rev-parse", c) for c in args.commits] if args.commits
               else commits_of(ix, args.since, args.until))
    print(load_average())
    print(f"{len(commits)} commits")
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        builds: list[tuple[str, list[str]]] = [] if args.baseline_only else [("this build", list(THIS_BUILD))]
        if args.baseline_saved is None and not args.no_baseline:
            rev = args.baseline_rev or merge_base_with_main()
            builds.append((f"ci-tools at {rev[:12]}", list(ci_tools_at(rev, tmp / "baseline").command)))
        results = []
        for n, (label, cli) in enumerate(builds):
            (tmp / str(n)).mkdir()
            results.append((label, replay(cli, ix, commits, tmp / str(n), args.jobs)))
        if args.baseline_saved is not None:
            results.append((f"saved {args.baseline_saved.stem}", load_saved(args.baseline_saved, commits)))
    for label, result in results:
        failed = sum(1 for c in result.codes.values() if c not in (0, 1))
        print(f"{label}: {result.cpu_s:.1f} s CPU, {result.wall_s:.1f} s wall"
              + (f", {failed} commit(s) ended with an internal error" if failed else ""))
        if args.save:
            args.save.mkdir(parents=True, exist_ok=True)
            slug = label.replace(" ", "-")
            (args.save / f"{slug}.json").write_text(json.dumps(
                {c: {"exit": result.codes[c], "findings": f} for c, f in result.findings.items()}, indent=1))
    # Every finding of the head per build, then the new ones of each build that compares with the base.
    columns = [(label, per_rule(r)) for label, r in results]
    columns += [(f"{label[:20]}: new", per_rule(r, new_only=True)) for label, r in results
                if any(f[5] for found in r.findings.values() for f in found)]
    counts = [c for _, c in columns]
    keys = sorted({k for c in counts for k in c}, key=lambda k: ({"error": 0, "warning": 1}.get(k[1], 2), k[0]))
    print(f"{'rule':40} {'severity':8} " + " ".join(f"{label[:26]:>26}" for label, _ in columns))
    for key in keys:
        cells = [f"{c.get(key, (0, 0))[0]:>8} in {c.get(key, (0, 0))[1]:>3} commits" for c in counts]
        print(f"{key[0]:40} {key[1]:8} " + " ".join(f"{cell:>26}" for cell in cells))
    print("configs coverage counts, all commits: "
          + ", ".join(f"{label} {configs_counted(result):,}" for label, result in results))
    if len(results) == 2:
        print_differences(results[1][1], results[0][1], ix, args.show, args.limit)
    return 0


if __name__ == "__main__":
    sys.exit(main())
