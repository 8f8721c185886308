"""The claims checker on commit messages read as PR descriptions: prose about each change nobody tuned it on.

Every commit of the default branch of SemiAnalysisAI/InferenceX that appends changelog entries is replayed as
``claims --history`` replays it, with its commit message given as its PR description (``--pr-body``): a squash
merge writes the pull request's title and its commits' messages, the prose its authors wrote about the change
while they made it.  Only the findings on that text count, and of those only the ones that do not repeat a
finding of the commit's own changelog entries (the same subject and claimed value: the changelog's text is judged
in ``bench_claims_history.py``'s parts already); each is counted once per commit, line text, subject and claimed
value.

The findings are judged by reading the files at their commit (``tests/data/ix-judged-history/messages.yaml``,
the verdicts, reasons and evidence). Commits whose id begins with 0-4 are the held-back part, as in the history:
their first verdicts were given on the findings of the first replay, before any change of the checker made from
this text; the rest is the tuning part.  A finding the checker no longer gives is counted apart, by its verdict:
a true one lost is recall lost.

Run: .venv/bin/python bench/bench_claims_messages.py --ix CLONE [--save FILE | --report FILE] [--draw FILE]
     [--since REV] [--list] [--strict]
(a replay of the 831 changelog commits with their messages takes about two minutes)
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_claims_prs import sample_order, verdict, wilson  # noqa: E402
from benchlib import ROOT, read_report, require  # noqa: E402
from ci_tools.claims.verdict.rules import DISAGREEMENT_RULES  # noqa: E402

JUDGED = ROOT / "tests" / "data" / "ix-judged-history" / "messages.yaml"
SCORED_RULES = DISAGREEMENT_RULES
DESCRIPTION = "PR description"
HELD_BACK_PREFIXES = tuple("01234")
REQUIRED = ("commit", "line", "subject", "claimed", "severity", "disagreement", "reason", "evidence", "wording")

Key = tuple[str, int, str, str]


def _git(ix: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(ix), *args], capture_output=True, text=True, errors="replace", check=False)
    if done.returncode != 0:
        raise SystemExit(f"git {' '.join(args)}: {done.stderr.strip()}")
    return done.stdout


def messages(ix: Path, commits: list[str]) -> dict[str, str]:
    """Each commit's message, asked of git at once."""
    out = _git(ix, "log", "--no-walk=unsorted", "--format=%H%x00%B%x01", *commits) if commits else ""
    bodies: dict[str, str] = {}
    for record in out.split("\x01"):
        sha, nul, body = record.strip("\n").partition("\x00")
        if nul:
            bodies[sha.strip()] = body
    return bodies


def replay(ix: Path, since: str | None = None) -> list[dict[str, Any]]:
    """Findings of every changelog commit's entries (after ``since``) and of its message read as its PR
    description."""
    from ci_tools.claims.verdict.history import changelog_commits, replay_pairs
    from ci_tools.config import load_config
    from ci_tools.report.json_format import render

    config = load_config(ix)
    commits = changelog_commits(config, since, "HEAD")
    bodies = messages(ix, [sha for sha, _ in commits])
    rows: list[dict[str, Any]] = json.loads(render(replay_pairs(config, commits, descriptions=bodies)))["findings"]
    return rows


def key(row: dict[str, Any]) -> Key:
    data = row.get("data", {})
    return (str(data.get("commit", "")), int(row.get("line", 0)), str(data.get("subject", "")),
            str(data.get("claimed", "")))


def prose_lines(ix: Path, commit: str, cache: dict[str, list[str]]) -> list[str]:
    """The message's lines as the checker read them (code blocks and comments blanked, positions kept)."""
    from ci_tools.claims.text.markdown import prose_of

    if commit not in cache:
        cache[commit] = prose_of(_git(ix, "log", "-1", "--format=%B", commit)).splitlines()
    return cache[commit]


def scored(rows: list[dict[str, Any]], ix: Path, cache: dict[str, list[str]]) -> list[dict[str, Any]]:
    """The description's findings that are its own: not a repeat of a finding of the commit's changelog entries,
    each once per commit, line text, subject and claimed value."""
    of_entries = {(c, s, v) for c, _, s, v in (key(r) for r in rows if r.get("path") != DESCRIPTION)}
    kept: dict[tuple[str, str, str, str], dict[str, Any]] = {}
    for row in sorted(rows, key=sample_order):
        commit, line, subject, claimed = key(row)
        if row.get("path") != DESCRIPTION or row["rule"] not in SCORED_RULES or (commit, subject, claimed) in of_entries:
            continue
        lines = prose_lines(ix, commit, cache)
        text = lines[line - 1].strip() if 0 < line <= len(lines) else ""
        row["sentence"] = text
        kept.setdefault((commit, text, subject, claimed), row)
    return list(kept.values())


def part_of(commit: str) -> str:
    return "held-back" if commit.startswith(HELD_BACK_PREFIXES) else "tuning"


@dataclass
class Judged:
    records: dict[Key, dict[str, Any]]

    @classmethod
    def load(cls) -> Judged:
        if not JUDGED.exists():
            return cls({})
        records: dict[Key, dict[str, Any]] = {}
        for i, item in enumerate(yaml.safe_load(JUDGED.read_text(encoding="utf-8"))["findings"]):
            where = f"{JUDGED.relative_to(ROOT)} finding {i + 1}"
            missing = [k for k in REQUIRED if k not in item]
            if missing:
                raise SystemExit(f"{where}: missing {', '.join(missing)}")
            if item["disagreement"] not in ("all", "some", "none"):
                raise SystemExit(f"{where}: disagreement must be all, some or none, not {item['disagreement']!r}")
            if item["disagreement"] == "none" and "family" not in item:
                raise SystemExit(f"{where}: a false finding needs its family")
            records[(str(item["commit"]), int(item["line"]), str(item["subject"]), str(item["claimed"]))] = item
        return cls(records)


def _figures(name: str, pairs: list[tuple[dict[str, Any], dict[str, Any]]]) -> list[str]:
    count = Counter[str]()
    true: dict[str, float] = {"error": 0.0, "warning": 0.0}
    families = Counter[str]()
    for row, record in pairs:
        count[row["severity"]] += 1
        true[row["severity"]] = true.get(row["severity"], 0.0) + verdict(str(record["disagreement"]), row["severity"])
        if record["disagreement"] == "none":
            families[str(record["family"])] += 1
    total = sum(count.values())
    if not total:
        return [f"{name}: no judged finding reported"]
    hits = sum(true.values())
    low, high = wilson(hits, total)
    out = [f"{name}: errors {true['error']:g} of {count['error']} true, warnings {true['warning']:g} of "
           f"{count['warning']} true; precision {hits:g} of {total} ({100 * hits / total:.0f} %, 95 % Wilson "
           f"interval {100 * low:.0f}-{100 * high:.0f} %)"]
    if families:
        out.append(f"{name}: false findings by family: " + ", ".join(f"{f} {n}" for f, n in families.most_common()))
    return out


def draw(rows: list[dict[str, Any]], judged: Judged, out: Path) -> int:
    """The unjudged findings, written for whoever judges them (the fields a record copies, the line read)."""
    fresh = [r for r in rows if key(r) not in judged.records]
    items = [{"commit": c, "line": n, "subject": s, "claimed": v, "severity": r["severity"], "part": part_of(c),
              "text": r["sentence"], "message": r["message"]} for r in fresh for c, n, s, v in [key(r)]]
    out.write_text(yaml.safe_dump({"findings": items}, sort_keys=False, allow_unicode=True, width=120),
                   encoding="utf-8")
    return len(items)


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--ix", type=Path, required=True, help="a clone of SemiAnalysisAI/InferenceX")
    parser.add_argument("--save", type=Path, help="write the replay's findings to this JSON file")
    parser.add_argument("--report", type=Path, help="read findings a --save wrote instead of replaying")
    parser.add_argument("--draw", type=Path, help="write the unjudged findings to this YAML file")
    parser.add_argument("--since", help="only the commits after this revision (default: the whole history)")
    parser.add_argument("--list", action="store_true", help="list every finding with its verdict")
    parser.add_argument("--strict", action="store_true", help="exit 1 while a finding is unjudged")
    args = parser.parse_args()
    require(args.ix)
    if args.report:
        rows: list[dict[str, Any]] = read_report(args.report)["findings"]
    else:
        rows = replay(args.ix, args.since)
        if args.save:
            args.save.write_text(json.dumps({"findings": rows}, indent=1), encoding="utf-8")
    cache: dict[str, list[str]] = {}
    own = scored(rows, args.ix, cache)
    judged = Judged.load()
    described = sum(r.get("path") == DESCRIPTION and r["rule"] in SCORED_RULES for r in rows)
    print(f"errors and warnings on the commit messages: {described}; their own (not a repeat of the changelog's, "
          f"once per line text): {len(own)} (held-back {sum(part_of(key(r)[0]) == 'held-back' for r in own)})")
    unjudged = 0
    now = {key(r) for r in own}
    for name in ("tuning", "held-back"):
        pairs = [(r, judged.records[key(r)]) for r in own if part_of(key(r)[0]) == name and key(r) in judged.records]
        missing = sum(1 for r in own if part_of(key(r)[0]) == name and key(r) not in judged.records)
        unjudged += missing
        for line in _figures(name, pairs):
            print(line)
        gone = [item for k, item in judged.records.items() if part_of(k[0]) == name and k not in now]
        lost = sum(item["disagreement"] != "none" for item in gone)
        print(f"{name}: judged findings no longer reported: {len(gone)} ({lost} of them true)"
              + (f"; UNJUDGED {missing}: figures provisional" if missing else ""))
        if args.list:
            for row, record in pairs:
                print(f"  {row['severity']} {record['disagreement']}: {row['message'][:160]}")
    blind = [item for item in judged.records.values() if item.get("sample") == "blind"]
    if blind:
        hits = sum(verdict(str(item["disagreement"]), str(item["severity"])) for item in blind)
        low, high = wilson(hits, len(blind))
        print(f"held-back, first measured (blind, at {blind[0].get('seen-with', '?')}): {hits:g} of {len(blind)} true "
              f"({100 * hits / len(blind):.0f} %, 95 % Wilson interval {100 * low:.0f}-{100 * high:.0f} %)")
    if args.draw:
        print(f"{draw(own, judged, args.draw)} unjudged findings written to {args.draw}")
    return 1 if args.strict and unjudged else 0


if __name__ == "__main__":
    raise SystemExit(main())
