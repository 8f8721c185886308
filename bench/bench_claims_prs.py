"""The claims checker on pull requests as they were proposed: text that never reached the default branch.

Every pull request's head (``refs/pull/N/head`` of SemiAnalysisAI/InferenceX) that is not part of the default
branch and appends changelog lines never seen on it is checked as ``ci-tools check`` checks a pull request:
the entries its head appends over its merge base with the default branch, at its head.  That text, drafts
reworded before a squash merge and proposals never merged, was never read while the checker was built: it is
the held-back part measured last (``prs`` in ``bench_claims_history.py``'s words), judged finding by finding
in ``tests/data/ix-judged-history/prs.yaml``.

A finding counts only where the changelog line it points at never stood on the default branch (its text
would otherwise be judged, or held back, in the history's parts already); the others are counted apart.
Of those, a fixed sample is judged: the first ``--sample`` (96) in the order of a SHA-256 of each finding's key
(commit, line, subject, claimed value), which no reading of the text chose.

With ``--drafts`` the commits of each branch before its head are checked the same way: drafts rewritten before the
head, whose lines neither the default branch nor any head ever held (a part nobody read while the checker was built,
after the heads were used up); a finding the branch repeats commit after commit is counted once.

With ``--branches`` the commits of branches no pull request ever held (work pushed and never proposed) are checked
the same way, against their merge base with the default branch: only lines neither the default branch nor any pull
request's commits ever held count, each finding once (the part measured after the drafts were used up).

With ``--forks`` the commits of forks' branches (fetched under ``refs/forks/<fork>/*``) that neither the default
branch, nor a pull request, nor a branch of the repository itself holds are checked the same way: only lines none of
those ever held count, each finding once (the part measured after the repository's own branches were used up).
Bring a fork's branches in with ``git -C CLONE fetch FORK '+refs/heads/*:refs/forks/NAME/*'``.

Get the heads once: ``git -C CLONE fetch origin '+refs/pull/*/head:refs/pull/*/head'``.

Run: .venv/bin/python bench/bench_claims_prs.py --ix CLONE [--main REV] [--save FILE | --report FILE]
     [--draw N FILE] [--show-heldback] [--strict] [--drafts | --branches | --forks]
(a replay of the ~570 heads takes a few minutes; --save keeps its findings, --report reads them again)
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import re
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchlib import ROOT, read_report, require  # noqa: E402
from ci_tools.claims.verdict.rules import DISAGREEMENT_RULES  # noqa: E402

JUDGED = ROOT / "tests" / "data" / "ix-judged-history" / "prs.yaml"
CHANGELOG = "perf-changelog.yaml"
SCORED_RULES = DISAGREEMENT_RULES
SHORT_LINE = 15  # a line this short ("- config-keys:", "pr-link: ...") says nothing of its own
# Which part each judged sample was drawn from: the heads (default), the earlier drafts (--drafts), or branches no
# pull request ever held (--branches).
SAMPLE_PART = {"E": "drafts", "F": "branches", "G": "forks"}


def _git(ix: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(["git", "-C", str(ix), *args], capture_output=True, text=True, errors="replace", check=False)
    if check and done.returncode != 0:
        raise SystemExit(f"git {' '.join(args)}: {done.stderr.strip()}")
    return done


def _added_lines(diff: str) -> list[str]:
    return [line[1:].strip() for line in diff.splitlines() if line.startswith("+") and not line.startswith("+++")]


@dataclass(frozen=True)
class Proposal:
    """A pull request's head, the merge base it is compared with, and how many of its lines are new text."""

    number: int
    head: str
    base: str
    unseen: int


def _lines_of(ix: Path, refs: list[str]) -> set[str]:
    """Every changelog line a commit reachable from ``refs`` appends."""
    if not refs:
        return set()
    return set(_added_lines(_git(ix, "log", "-p", "--format=", "--no-renames", *refs, "--", CHANGELOG).stdout))


def main_lines(ix: Path, main: str) -> set[str]:
    """Every changelog line the default branch ever held."""
    return _lines_of(ix, [main])


def _unseen(ix: Path, base: str, commit: str, held: set[str]) -> list[str] | None:
    """The changelog lines ``commit`` appends over ``base`` that ``held`` does not hold (lines too short to say
    anything aside); None when git cannot compare the two."""
    diff = _git(ix, "diff", "--no-renames", base, commit, "--", CHANGELOG, check=False)
    if diff.returncode != 0:
        return None
    return [t for t in _added_lines(diff.stdout) if len(t) > SHORT_LINE and t not in held]


def proposals(ix: Path, main: str, every: bool = False) -> tuple[list[Proposal], set[str]]:
    """The heads to replay (with ``every``, those too whose lines all stood on the default branch), and every
    changelog line the default branch ever held."""
    seen = main_lines(ix, main)
    found: list[Proposal] = []
    refs = _git(ix, "for-each-ref", "--format=%(refname) %(objectname)", "refs/pull").stdout.split("\n")
    if not any(refs):
        raise SystemExit(f"{ix} has no refs/pull/*: git -C {ix} fetch origin '+refs/pull/*/head:refs/pull/*/head'")
    for ref, head in (r.split() for r in refs if r):
        if _git(ix, "merge-base", "--is-ancestor", head, main, check=False).returncode == 0:
            continue  # merged as it stood: its entries are the default branch's
        base = _git(ix, "merge-base", head, main, check=False).stdout.strip()
        if not base:
            continue
        unseen = _unseen(ix, base, head, seen)
        if unseen is not None and (unseen or every):
            found.append(Proposal(int(ref.split("/")[2]), head, base, len(unseen)))
    return sorted(found, key=lambda p: p.number), seen


def earlier_drafts(ix: Path, heads: list[Proposal], seen: set[str]) -> tuple[list[Proposal], set[str]]:
    """The commits of each pull request's branch before its head that append changelog lines neither the default
    branch nor any pull request's head ever held: drafts rewritten before the head (the part ``--drafts`` measures),
    with every line a head appends added to ``seen``."""
    at_heads = set(seen)
    for p in heads:
        at_heads |= set(_added_lines(_git(ix, "diff", "--no-renames", p.base, p.head, "--", CHANGELOG,
                                          check=False).stdout))
    found: list[Proposal] = []
    for p in heads:
        for commit in _git(ix, "rev-list", f"{p.base}..{p.head}", "--", CHANGELOG).stdout.split():
            if commit == p.head:
                continue
            unseen = _unseen(ix, p.base, commit, at_heads)
            if unseen:
                found.append(Proposal(p.number, commit, p.base, len(unseen)))
    return sorted(found, key=lambda p: (p.number, p.head)), at_heads


def _refs(ix: Path, prefix: str) -> list[str]:
    return [r for r in _git(ix, "for-each-ref", "--format=%(refname)", prefix).stdout.split() if r]


def _own_commits(ix: Path, main: str, tips: list[str], others: list[str], held: set[str]) -> list[Proposal]:
    """The commits reachable from ``tips`` and from neither the default branch nor ``others`` that append changelog
    lines ``held`` does not hold, each compared with its merge base with the default branch."""
    found: list[Proposal] = []
    if not tips:
        return found
    for commit in _git(ix, "rev-list", *tips, f"^{main}", *(f"^{r}" for r in others), "--",
                       CHANGELOG).stdout.split():
        base = _git(ix, "merge-base", commit, main, check=False).stdout.strip()
        if not base:
            continue
        unseen = _unseen(ix, base, commit, held)
        if unseen:
            found.append(Proposal(0, commit, base, len(unseen)))
    return sorted(found, key=lambda p: p.head)


def unproposed_branches(ix: Path, main: str, seen: set[str]) -> tuple[list[Proposal], set[str]]:
    """The commits of branches that no pull request ever held (reachable from no ``refs/pull/*`` and not from the
    default branch) appending changelog lines that neither the default branch nor any pull request's commits ever
    held: work pushed and never proposed (the part ``--branches`` measures).  Each is compared with its merge base
    with the default branch; ``seen`` comes back with every line a pull request's commits append."""
    pulls = _refs(ix, "refs/pull")
    held = set(seen) | _lines_of(ix, pulls)
    return _own_commits(ix, main, _refs(ix, "refs/heads"), pulls, held), held


def fork_commits(ix: Path, main: str, seen: set[str]) -> tuple[list[Proposal], set[str]]:
    """The commits of forks' branches (``refs/forks/*``) that the repository itself never held (reachable from no
    pull request and no branch of its own, nor from the default branch), appending changelog lines none of those ever
    held: text written where the repository's own refs never saw it (the part ``--forks`` measures)."""
    forks = _refs(ix, "refs/forks")
    if not forks:
        raise SystemExit(f"{ix} has no refs/forks/*: git -C {ix} fetch FORK '+refs/heads/*:refs/forks/NAME/*'")
    own = _refs(ix, "refs/pull") + _refs(ix, "refs/heads")
    held = set(seen) | _lines_of(ix, own)
    return _own_commits(ix, main, forks, own, held), held


def replay(ix: Path, chosen: list[Proposal]) -> list[dict[str, Any]]:
    """Findings of every proposal's appended entries, each as the JSON report gives it, with its PR number."""
    from ci_tools.claims.verdict.history import replay_pairs
    from ci_tools.config import load_config
    from ci_tools.report.json_format import render

    config = load_config(ix)
    number = {p.head: p.number for p in chosen}
    rows: list[dict[str, Any]] = json.loads(render(replay_pairs(config, [(p.head, p.base) for p in chosen])))["findings"]
    for row in rows:
        row["pr"] = number.get(str(row.get("data", {}).get("commit", "")))
    return rows


def line_at(ix: Path, head: str, line: int, cache: dict[str, list[str]]) -> str:
    if head not in cache:
        cache[head] = _git(ix, "show", f"{head}:{CHANGELOG}", check=False).stdout.splitlines()
    lines = cache[head]
    return lines[line - 1].strip() if 0 < line <= len(lines) else ""


def _key(row: dict[str, Any]) -> tuple[str, int, str, str]:
    data = row.get("data", {})
    return (str(data.get("commit", "")), int(row.get("line", 0)), str(data.get("subject", "")),
            str(data.get("claimed", "")))


def load_judged() -> dict[tuple[str, int, str, str], dict[str, Any]]:
    if not JUDGED.exists():
        return {}
    judged: dict[tuple[str, int, str, str], dict[str, Any]] = {}
    for i, item in enumerate(yaml.safe_load(JUDGED.read_text(encoding="utf-8"))["findings"]):
        missing = [k for k in ("commit", "line", "disagreement", "reason", "evidence") if k not in item]
        if missing:
            raise SystemExit(f"{JUDGED.relative_to(ROOT)} finding {i + 1}: missing {', '.join(missing)}")
        if item["disagreement"] not in ("all", "some", "none"):
            raise SystemExit(f"{JUDGED.relative_to(ROOT)} finding {i + 1}: disagreement must be all, some or none")
        judged[(str(item["commit"]), int(item["line"]), str(item.get("subject", "")), str(item.get("claimed", "")))] = item
    return judged


def _once_per_pull_request(rows: list[dict[str, Any]], ix: Path, cache: dict[str, list[str]]) -> list[dict[str, Any]]:
    """One finding for each pull request, line text, subject and claimed value: the drafts of a branch repeat their
    lines commit after commit (the one first in the fixed order stands for the others).  Commits of branches no pull
    request holds all have number 0: one finding for each line text, subject and claimed value."""
    kept: dict[tuple[object, str, str, str], dict[str, Any]] = {}
    for row in sorted(rows, key=sample_order):
        _, line, subject, claimed = _key(row)
        text = line_at(ix, str(row["data"].get("commit", "")), line, cache)
        kept.setdefault((row.get("pr"), text, subject, claimed), row)
    return list(kept.values())


def sample_order(row: dict[str, Any]) -> str:
    commit, line, subject, claimed = _key(row)
    return hashlib.sha256(f"{commit}:{line}:{subject}:{claimed}".encode()).hexdigest()


def wilson(hits: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """The 95 % Wilson score interval of a proportion."""
    p = hits / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def verdict(disagreement: str, severity: str) -> float:
    """1 for a true finding, 0 for a false one, 0.5 for an error on a claim only some of its jobs contradict."""
    if disagreement == "none":
        return 0.0
    return 0.5 if disagreement == "some" and severity == "error" else 1.0


def _print_sample(name: str, pairs: list[tuple[dict[str, Any], dict[str, Any]]], show: bool) -> None:
    """One judged sample's figures: precision by severity, with its interval, and its false findings' families."""
    score = Counter[str]()
    true: dict[str, float] = {"error": 0.0, "warning": 0.0}
    families = Counter[str]()
    for row, record in pairs:
        score[row["severity"]] += 1
        true[row["severity"]] += verdict(str(record["disagreement"]), row["severity"])
        if record["disagreement"] == "none":
            families[str(record.get("family", record.get("mechanism", "?")))] += 1
        if show:
            print(f"  #{row['pr']} {row['severity']} {record['disagreement']}: {row['message'][:160]}")
    total = sum(score.values())
    hits = sum(true.values())
    low, high = wilson(hits, total)
    print(f"sample {name}: {total} judged findings still reported: errors {true['error']:g} of {score['error']} true, "
          f"warnings {true['warning']:g} of {score['warning']} true; precision {hits:g} of {total} "
          f"({100 * hits / total:.0f} %, 95 % Wilson interval {100 * low:.0f}-{100 * high:.0f} %)")
    if families:
        print(f"sample {name}: false findings by family: " + ", ".join(f"{m} {n}" for m, n in families.most_common()))


# What a finding says is missing or different, told by the claims checker's own message forms: its rule tells an
# error whose arms or setting are missing, but not a warning's kind, nor the kind of a replay saved before those
# rules (all claim-contradicted).
_KINDS = (("arm missing", re.compile(r"but no job is ")),
          ("setting missing", re.compile(r"but the recipe (?:does not pass|never sets|sets no) ")),
          ("arm present", re.compile(r"but the config runs ")),
          ("sweep size", re.compile(r"but the config generates \d+ (?:jobs|concurrency points?)\b")),
          ("concurrencies", re.compile(r"but the config generates concurrency ")))


def finding_kind(message: str) -> str:
    """The kind of disagreement a claims finding reports: one of _KINDS, else "value" (a setting's value)."""
    return next((kind for kind, form in _KINDS if form.search(message)), "value")


def _print_by_kind(pairs: list[tuple[dict[str, Any], dict[str, Any]]]) -> None:
    """How often each kind of finding is true, by severity, over every judged finding still reported: which
    disagreements a repository can let fail its pull requests."""
    score: Counter[tuple[str, str]] = Counter()
    true: dict[tuple[str, str], float] = {}
    for row, record in pairs:
        key = (finding_kind(str(row["message"])), str(row["severity"]))
        score[key] += 1
        true[key] = true.get(key, 0.0) + verdict(str(record["disagreement"]), row["severity"])
    print("judged findings by kind: " + "; ".join(
        f"{kind} {severity}s {true[(kind, severity)]:g} of {n} true"
        for (kind, severity), n in sorted(score.items(), key=lambda kv: (-kv[1], kv[0]))))


def per_proposal(pairs: list[tuple[dict[str, Any], dict[str, Any]]]) -> Counter[str]:
    """How the check of each proposal (a pull request, or a commit no pull request holds) would have read to its
    author, by its judged findings: failed by a true error, failed only by false ones, or warned only (truly or not)."""
    errors: dict[object, list[bool]] = {}
    warnings: dict[object, list[bool]] = {}
    for row, record in pairs:
        unit = row.get("pr") or row["data"].get("commit")
        true = record["disagreement"] != "none"
        (errors if row["severity"] == "error" else warnings).setdefault(unit, []).append(true)
    outcome = Counter[str]()
    for unit in set(errors) | set(warnings):
        if unit in errors:
            outcome["a true error" if any(errors[unit]) else "only false errors"] += 1
        else:
            outcome["a true warning" if any(warnings[unit]) else "only false warnings"] += 1
    return outcome


def _print_per_proposal(pairs: list[tuple[dict[str, Any], dict[str, Any]]], proposals: int, part: str) -> None:
    """The daily loop's figure: of the proposals checked, how many a false error alone would have failed."""
    unit = "pull requests" if part in ("heads", "drafts") else "commits"
    outcome = per_proposal(pairs)
    kinds = ("a true error", "only false errors", "a true warning", "only false warnings")
    print(f"{unit} given judged findings: {sum(outcome.values())} of {proposals} checked: "
          + ", ".join(f"{kind} {outcome[kind]}" for kind in kinds))


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--ix", type=Path, required=True, help="a clone of SemiAnalysisAI/InferenceX with refs/pull/*")
    parser.add_argument("--main", default="HEAD", help="the default branch's revision (default: HEAD of the clone)")
    parser.add_argument("--save", type=Path, help="write the replay's findings to this JSON file")
    parser.add_argument("--report", type=Path, help="read findings a --save wrote instead of replaying")
    parser.add_argument("--draw", nargs=2, metavar=("N", "FILE"), help="write the next N unjudged findings to FILE")
    parser.add_argument("--sample", type=int, default=0, help="with --strict: how many unjudged findings fail it")
    parser.add_argument("--show-heldback", action="store_true", help="list every judged finding with its verdict")
    parser.add_argument("--strict", action="store_true", help="exit 1 while a finding of --sample is unjudged")
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--drafts", action="store_true",
                       help="the earlier commits of each pull request's branch, not its head: text neither the "
                            "default branch nor any head ever held (each finding counted once per pull request)")
    which.add_argument("--branches", action="store_true",
                       help="commits of branches no pull request ever held: text neither the default branch nor "
                            "any pull request's commits held (each finding counted once)")
    which.add_argument("--forks", action="store_true",
                       help="commits of forks' branches (refs/forks/*) the repository never held: text neither its "
                            "default branch, nor a pull request, nor its own branches held (each finding counted once)")
    args = parser.parse_args()
    part = "forks" if args.forks else "branches" if args.branches else "drafts" if args.drafts else "heads"
    require(args.ix)
    main_rev = _git(args.ix, "rev-parse", args.main).stdout.strip()
    if part == "branches":
        chosen, seen = unproposed_branches(args.ix, main_rev, main_lines(args.ix, main_rev))
    elif part == "forks":
        chosen, seen = fork_commits(args.ix, main_rev, main_lines(args.ix, main_rev))
    else:
        chosen, seen = proposals(args.ix, main_rev, every=part == "drafts")
    if part == "drafts":  # a squash-merged branch's drafts too, whose head's lines all reached the default branch
        chosen, seen = earlier_drafts(args.ix, chosen, seen)
    if args.report:
        rows: list[dict[str, Any]] = read_report(args.report)["findings"]
    else:
        rows = replay(args.ix, chosen)
        if args.save:
            args.save.write_text(json.dumps({"main": main_rev, "findings": rows}, indent=1), encoding="utf-8")
    if part == "forks":
        print(f"commits of forks' branches with changelog text neither {main_rev[:12]}, nor a pull request, nor the "
              f"repository's own branches held: {len(chosen)}")
    elif part == "branches":
        print(f"commits of branches no pull request held, with changelog text neither {main_rev[:12]} nor a pull "
              f"request's commits held: {len(chosen)}")
    elif part == "drafts":
        print(f"earlier drafts with changelog text neither {main_rev[:12]} nor a pull request's head held: "
              f"{len(chosen)} commits of {len({p.number for p in chosen})} pull requests")
    else:
        print(f"pull requests with changelog text never on {main_rev[:12]}: {len(chosen)} "
              f"({sum(p.unseen for p in chosen)} lines)")
    cache: dict[str, list[str]] = {}
    scored = [r for r in rows if r["rule"] in SCORED_RULES and r.get("path") == CHANGELOG]
    fresh = [r for r in scored if line_at(args.ix, str(r["data"].get("commit", "")), int(r["line"]), cache) not in seen]
    if part != "heads":
        fresh = _once_per_pull_request(fresh, args.ix, cache)
    print(f"scored findings: {len(scored)}, on text never on the default branch: {len(fresh)} "
          f"(errors {sum(r['severity'] == 'error' for r in fresh)}, warnings {sum(r['severity'] == 'warning' for r in fresh)})")
    judged = load_judged()
    by_sample: dict[str, list[tuple[dict[str, Any], dict[str, Any]]]] = {}
    for row in fresh:
        record = judged.get(_key(row))
        if record is not None:
            by_sample.setdefault(str(record.get("sample", "A")), []).append((row, record))
    for name in sorted(by_sample):
        _print_sample(name, by_sample[name], args.show_heldback)
    if by_sample:
        _print_by_kind([pair for pairs in by_sample.values() for pair in pairs])
        _print_per_proposal([pair for pairs in by_sample.values() for pair in pairs],
                            len({p.number or p.head for p in chosen}), part)
    # A change of the checker may drop judged findings: the true ones among them are findings it lost.
    now = {_key(r) for r in fresh}
    for name in sorted(n for n in {str(item.get("sample", "A")) for item in judged.values()}
                       if SAMPLE_PART.get(n, "heads") == part):
        gone = [item for key, item in judged.items() if key not in now and str(item.get("sample", "A")) == name]
        if gone:
            lost = [item for item in gone if item["disagreement"] != "none"]
            print(f"sample {name}: judged findings no longer reported: {len(gone)} (true ones among them: {len(lost)})")
    # The next findings to judge: those no sample holds, in the fixed order.
    unjudged = sorted((r for r in fresh if _key(r) not in judged), key=sample_order)
    print(f"unjudged: {len(unjudged)} of {len(fresh)}" + (" (--draw N FILE writes the next N to judge)" if unjudged else ""))
    if args.draw:
        count, out = int(args.draw[0]), Path(args.draw[1])
        out.write_text(json.dumps(unjudged[:count], indent=1), encoding="utf-8")
        print(f"wrote the next {min(count, len(unjudged))} unjudged findings to {out}")
    return 1 if args.strict and unjudged[:args.sample] else 0


if __name__ == "__main__":
    raise SystemExit(main())
