"""Precision of the claims checker over the whole InferenceX history, in three parts judged by hand.

``claims --history`` is replayed over every commit of a clone of SemiAnalysisAI/InferenceX that appended
changelog entries (or a report it wrote is read), and each error and warning is put in one part:

- window: commits after 1c08b4369e6d (2026-07-02 on), judged claim by claim in ``tests/data/ix-judged``
  (scored as ``bench_claims_judged.py`` scores them);
- tuning: earlier commits whose full id does not begin with 0-4, judged finding by finding in
  ``tests/data/ix-judged-history/tuning.yaml``;
- held-back: earlier commits whose full id begins with 0, 1, 2, 3 or 4, which the checker is not tuned on,
  in two parts by when they were first measured: ``heldback`` (2026-05-01 to the window,
  ``tests/data/ix-judged-history/heldback.yaml``) and ``heldback-older`` (the changelog's start to the move of
  the master configs' blocks under ``scenarios:``, first checked once :mod:`ci_tools.model.older_layout` read
  that layout; ``heldback-older.yaml``).

The held-back parts are shown as figures only: their findings, unjudged rows and messages are listed with
``--show-heldback`` alone (for whoever judges them), so that a run of this bench does not show them to whoever
changes the checker.

A finding is matched onto a judged record by commit, line, subject and claimed value (not by its message),
so a reworded message keeps its verdict; a record says whether its claim disagrees with every job it is
about, some or none, which gives the verdict for either severity (an error on a claim only partly
contradicted counts half).  A finding that matches no record is unjudged and listed: a figure is not final
while its part has unjudged findings (``--strict`` exits 1 then).

Wording is checked too: each judged record says whether the message as judged states the text's claim and
the jobs' state rightly, loosely (right disagreement, lost or widened scope) or wrongly; when the checker's
message has changed since, the record is listed to be read again.  Every finding (judged or not) also goes
through a polarity check: a message that says the changelog turns a setting off while the words it points at
turn it on (or the reverse) is listed.

Run: .venv/bin/python bench/bench_claims_history.py --ix CLONE [--report FILE] [--list] [--strict] [--show-heldback]
(CLONE: a clone of SemiAnalysisAI/InferenceX; without --report the replay runs, ~2 min on a busy machine)
"""

from __future__ import annotations

import argparse
import json
import math
import re
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_claims_judged as window  # noqa: E402
from benchlib import ROOT, THIS_BUILD, file_at, read_report, require  # noqa: E402
from ci_tools.claims.verdict.rules import DISAGREEMENT_RULES  # noqa: E402

HISTORY = ROOT / "tests" / "data" / "ix-judged-history"
PARTS = ("window", "tuning", "heldback", "heldback-older")
HELD_BACK_PARTS = ("heldback", "heldback-older")
# The held-back parts' last blind figure: true findings of all, and the checker commit it was measured at.  The
# readings made after it (a floor, a default's label, "alongside", a story's later sentence, an image tag cut
# after its first word) were made knowing the 6 false findings it counted, so later figures are not blind.
LAST_BLIND = (17, 23, "6bca05f")
# The commit that moved the master configs' blocks from `seq-len-configs:` to `scenarios:` (2026-05-01).
OLDER_LAYOUT_ENDS = "b7ae44045763aea560f63d0edcbcd5336acb59bf"
HELD_BACK_PREFIXES = tuple("01234")
SCORED_RULES = (*DISAGREEMENT_RULES, "yaml-syntax")
DISAGREEMENTS = ("all", "some", "none")
WORDINGS = ("right", "loose", "wrong")
REQUIRED = ("commit", "date", "line", "rule", "severity", "kind", "disagreement", "verdict", "reason", "evidence",
            "wording", "message")


@dataclass
class Record:
    """One hand-judged finding of tuning.yaml / heldback.yaml."""

    part: str
    data: dict[str, Any]
    found: list[dict[str, Any]] = field(default_factory=list)

    @property
    def commit(self) -> str:
        return str(self.data["commit"])

    @property
    def subject(self) -> str | None:
        subject = self.data.get("subject")
        return None if subject is None else str(subject)

    @property
    def claimed(self) -> str:
        return str(self.data.get("claimed", ""))

    def verdict_for(self, severity: str) -> str:
        """The verdict a finding of this severity gets: what the record says about its claim decides."""
        disagreement = self.data["disagreement"]
        if disagreement == "none":
            return "false"
        if disagreement == "some" and severity == "error":
            return "partly"
        return "true"


def load_records() -> list[Record]:
    """The judged records of every judged part, each checked for the fields and the part rule it must keep."""
    records: list[Record] = []
    for part in PARTS[1:]:
        path = HISTORY / f"{part}.yaml"
        require(path)
        for i, item in enumerate(yaml.safe_load(path.read_text(encoding="utf-8"))["findings"]):
            where = f"{path.relative_to(ROOT)} finding {i + 1}"
            missing = [k for k in REQUIRED if k not in item]
            if missing:
                raise SystemExit(f"{where}: missing {', '.join(missing)}")
            commit = str(item["commit"])
            if not re.fullmatch(r"[0-9a-f]{40}", commit):
                raise SystemExit(f"{where}: commit {commit!r} is not a full 40-hex id")
            if commit.startswith(HELD_BACK_PREFIXES) != (part in HELD_BACK_PARTS):
                raise SystemExit(f"{where}: commit {commit[:12]} belongs to the other part")
            if item["disagreement"] not in DISAGREEMENTS or item["wording"] not in WORDINGS:
                raise SystemExit(f"{where}: disagreement must be one of {DISAGREEMENTS}, wording one of {WORDINGS}")
            record = Record(part, item)
            shown = {True: "true", False: "false"}.get(item["verdict"], str(item["verdict"]))
            if shown != record.verdict_for(str(item["severity"])):
                raise SystemExit(f"{where}: verdict {shown} does not follow from disagreement "
                                 f"{item['disagreement']} for a {item['severity']}")
            records.append(record)
    return records


# --- matching a finding onto a record -----------------------------------------------------------------------

_ON = re.compile(r"\b(on|set|enabled?|true|present|passed)\b", re.I)
_OFF = re.compile(r"\b(off|disabled?|false|unset|absent|default|not|no)\b", re.I)


def _polarity(text: str) -> str | None:
    on, off = bool(_ON.search(text)), bool(_OFF.search(text))
    return None if on == off else ("on" if on else "off")


def _numbers(text: str) -> list[str]:
    return re.findall(r"\d+(?:\.\d+)?", text)


def _subject_keys(subject: str | None) -> set[str]:
    if subject is None:
        return {""}
    return window.finding_keys({"data": {"subject": subject}})


def same_claim(claimed: str, judged: str) -> bool:
    """The finding's claimed value is the judged one: the same numbers and the same on/off reading."""
    if _numbers(claimed) != _numbers(judged) or _polarity(claimed) != _polarity(judged):
        return False
    return bool(_numbers(judged)) or _polarity(judged) is not None or window._squash(claimed) == window._squash(judged)


def match(finding: dict[str, Any], records: list[Record]) -> Record | None:
    """The one record of this finding's commit, line and subject whose claimed value it repeats; None if none is."""
    commit = str(finding["data"].get("commit", ""))
    keys = _subject_keys(finding["data"].get("subject"))
    claimed = str(finding["data"].get("claimed", ""))
    candidates = [r for r in records if r.commit[:12] == commit[:12] and int(r.data["line"]) == int(finding["line"])
                  and keys & _subject_keys(r.subject) and same_claim(claimed, r.claimed)]
    exact = [r for r in candidates if window._squash(r.claimed) == window._squash(claimed)]
    if len(exact) == 1:
        return exact[0]
    return candidates[0] if len(candidates) == 1 else None


def message_core(message: str) -> str:
    """A message without its trailing job list and revision: what the wording verdict was given on."""
    message = re.sub(r"\s*\[at [0-9a-f]+\]\s*$", "", message)
    jobs = re.search(r" for (?:all \d+ |\d+ of \d+ |the )?[^()\[]*?jobs? of ", message)
    return message[:jobs.start()] if jobs else message


# --- the polarity check of every message ---------------------------------------------------------------------

_SPAN_ON = re.compile(r"\b(enabl\w*|turn(?:s|ed)? on|on)\b", re.I)
_SPAN_OFF = re.compile(r"\b(disabl\w*|turn(?:s|ed)? off|off|without|no)\b", re.I)


def polarity_mismatch(finding: dict[str, Any], changelog: str | None) -> str | None:
    """Why the message's 'says' part has the opposite on/off reading of the words the finding points at, if it has."""
    said = re.search(r"says (.*?) \((?:perf-changelog\.yaml|PR description)", finding["message"])
    if said is None or changelog is None or finding.get("end_line") != finding["line"]:
        return None
    lines = changelog.splitlines()
    if not 0 < int(finding["line"]) <= len(lines):
        return None
    span = lines[int(finding["line"]) - 1][int(finding["column"]) - 1:int(finding["end_column"]) - 1]
    said_on = _polarity(said.group(1)) if not _numbers(said.group(1)) else None
    span_on, span_off = bool(_SPAN_ON.search(span)), bool(_SPAN_OFF.search(span))
    span_reading = None if span_on == span_off else ("on" if span_on else "off")
    if said_on and span_reading and said_on != span_reading:
        return f"says {said.group(1)!r} where the text says {span!r}"
    return None


# --- scoring ---------------------------------------------------------------------------------------------------


@dataclass
class Tally:
    verdicts: dict[str, Counter[str]] = field(default_factory=lambda: {"error": Counter(), "warning": Counter()})
    unjudged: list[str] = field(default_factory=list)
    wording: Counter[str] = field(default_factory=Counter)
    recheck: list[str] = field(default_factory=list)
    mechanisms: Counter[str] = field(default_factory=Counter)

    def lines(self, name: str) -> list[str]:
        out = []
        for severity in ("error", "warning"):
            counts = self.verdicts[severity]
            total = sum(counts.values())
            true = counts["true"] + 0.5 * counts["partly"]
            shown = f"{true / total:.0%}" if total else "n/a"
            half = f" + {counts['partly']} half" if counts["partly"] else ""
            out.append(f"  {name:8s} {severity}s: {counts['true']}{half} of {total} true "
                       f"({counts['false']} false): precision {shown}")
        counts = self.verdicts["error"] + self.verdicts["warning"]
        total = sum(counts.values())
        if total:
            true = counts["true"] + 0.5 * counts["partly"]
            low, high = wilson(true, total)
            out.append(f"  {name:8s} both: {true:g} of {total} true, precision {true / total:.0%} "
                       f"(95 % Wilson interval {low:.0%}-{high:.0%})")
        state = "figures final" if not self.unjudged else f"{len(self.unjudged)} UNJUDGED: figures provisional"
        out.append(f"  {name:8s} {state}")
        if self.wording:
            out.append(f"  {name:8s} wording of the true findings: " +
                       ", ".join(f"{self.wording[w]} {w}" for w in WORDINGS) +
                       (f"; {len(self.recheck)} messages changed since judged (read again)" if self.recheck else ""))
        if self.mechanisms:
            out.append(f"  {name:8s} false findings by mechanism: " +
                       ", ".join(f"{k} {v}" for k, v in self.mechanisms.most_common()))
        return out


def wilson(successes: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval of a proportion: what a precision measured on a few dozen findings can be."""
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def history_dates(ix: Path) -> dict[str, str]:
    log = subprocess.run(["git", "-C", str(ix), "log", "--format=%H %cs", "HEAD"], capture_output=True, text=True,
                         check=True).stdout
    return dict(line.split() for line in log.splitlines() if line)


def window_commits(ix: Path) -> set[str]:
    return set(subprocess.run(["git", "-C", str(ix), "rev-list", f"{window.SINCE}..HEAD"], capture_output=True,
                              text=True, check=True).stdout.split())


def replay(ix: Path, out: Path) -> None:
    subprocess.run([*THIS_BUILD, "claims", "--repo", str(ix), "--history", "--head", "HEAD", "--format", "json",
                    "--output", str(out)], check=False, cwd=ix)


def older_layout_commits(ix: Path) -> set[str]:
    """Commits before the master configs' blocks moved under ``scenarios:``."""
    return set(subprocess.run(["git", "-C", str(ix), "rev-list", f"{OLDER_LAYOUT_ENDS}^"], capture_output=True,
                              text=True, check=True).stdout.split())


def part_of(commit: str, in_window: set[str], older: set[str]) -> str:
    if commit in in_window:
        return "window"
    if not commit.startswith(HELD_BACK_PREFIXES):
        return "tuning"
    return "heldback-older" if commit in older else "heldback"


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--ix", type=Path, required=True, help="a clone of SemiAnalysisAI/InferenceX")
    parser.add_argument("--report", type=Path, help="the JSON report of an earlier `claims --history` over the clone")
    parser.add_argument("--list", action="store_true", help="list every finding with its verdict")
    parser.add_argument("--strict", action="store_true", help="exit 1 while any finding is unjudged")
    parser.add_argument("--show-heldback", action="store_true",
                        help="also list the held-back parts' findings (for judging them; figures are always shown)")
    args = parser.parse_args()
    ix = args.ix.resolve()
    require(ix / ".git")
    if args.report:
        report = read_report(args.report)
    else:
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "report.json"
            replay(ix, out)
            report = json.loads(out.read_text())
    records = load_records()
    entries, verdicts, _ = window.load_judged()
    text = window.BulletText(ix)
    dates, in_window, older = history_dates(ix), window_commits(ix), older_layout_commits(ix)
    hidden = Counter[str]()  # held-back rows left out of the listing without --show-heldback
    tallies = {part: Tally() for part in PARTS}
    months: dict[str, Counter[str]] = {}
    changelogs: dict[str, str | None] = {}
    rows: list[str] = []
    polarity: list[str] = []
    for finding in report["findings"]:
        if finding["severity"] not in ("error", "warning"):
            continue
        commit = str(finding["data"].get("commit", ""))
        part = part_of(commit, in_window, older)
        shown = args.show_heldback or part not in HELD_BACK_PARTS
        months.setdefault(dates.get(commit, "?")[:7], Counter())[finding["severity"]] += 1
        tally = tallies[part]
        key = f"{commit[:12]}:{finding['line']} {finding['data'].get('subject')} = {finding['data'].get('claimed')}"
        if commit not in changelogs:
            changelogs[commit] = file_at(ix, commit, "perf-changelog.yaml")
        mismatch = polarity_mismatch(finding, changelogs[commit])
        if mismatch and not shown:
            hidden["polarity"] += 1
        elif mismatch:
            polarity.append(f"  {part:8s} {key}: {mismatch}")
        if finding["rule"] not in SCORED_RULES:
            continue
        verdict: str | None
        if part == "window":
            verdict = None if finding["rule"] == "yaml-syntax" else window.judge_finding(finding, entries, verdicts, text)
        else:
            record = match(finding, [r for r in records if r.part == part])
            verdict = record.verdict_for(finding["severity"]) if record else None
            if record is not None:
                record.found.append(finding)
                if verdict == "false":
                    tally.mechanisms[str(record.data.get("mechanism", "?"))] += 1
                elif message_core(finding["message"]) == record.data["message"]:
                    tally.wording[str(record.data["wording"])] += 1
                elif shown:
                    tally.recheck.append(key)
                else:
                    hidden["recheck"] += 1
        if verdict is None:
            tally.unjudged.append(f"  {part:8s} {finding['severity']:7s} {key}  {finding['message'][:200]}"
                                  if shown else "")
        else:
            tally.verdicts[finding["severity"]][verdict] += 1
        if shown:
            rows.append(f"  {(verdict or '?')[0]} {part:8s} {finding['severity']:7s} {key}  {finding['message'][:150]}")
    print(f"replay: {report['summary']['error']} errors, {report['summary']['warning']} warnings, "
          f"{report['summary']['note']} notes over the whole history")
    print("errors / warnings by month of the commit:")
    for month in sorted(months):
        print(f"  {month}  {months[month]['error']:3d} errors  {months[month]['warning']:3d} warnings")
    for part in PARTS:
        print("\n".join(tallies[part].lines(part)))
    true, total, at = LAST_BLIND
    low, high = wilson(true, total)
    print(f"  held-back, last measured blind (at {at}): {true} of {total} true, precision {true / total:.0%} "
          f"(95 % Wilson interval {low:.0%}-{high:.0%}); the figures above are not blind")
    gone = [r for r in records if not r.found]
    if gone:
        lost = [r for r in gone if r.data["disagreement"] != "none"]
        print(f"judged findings no longer given: {len(gone) - len(lost)} false ones gone, {len(lost)} true ones lost")
        for r in lost:
            if r.part in HELD_BACK_PARTS and not args.show_heldback:
                hidden["lost"] += 1
                continue
            print(f"  lost {r.part:8s} {r.commit[:12]}:{r.data['line']} {r.subject} = {r.claimed}")
    if polarity:
        print(f"messages whose on/off reading is the opposite of the words they point at: {len(polarity)}")
        print("\n".join(polarity))
    recheck = [f"  {part:8s} {key}" for part in PARTS for key in tallies[part].recheck]
    if recheck:
        print("judged true findings whose message changed (read the wording again):")
        print("\n".join(recheck))
    unjudged = [row for part in PARTS for row in tallies[part].unjudged]
    if unjudged:
        print(f"unjudged findings ({len(unjudged)}): judge them before stating a figure")
        print("\n".join(row for row in unjudged if row))
    hidden["unjudged"] = sum(1 for row in unjudged if not row)
    if +hidden:
        print("held-back rows not listed (--show-heldback lists them): " +
              ", ".join(f"{n} {what}" for what, n in sorted(hidden.items()) if n))
    if args.list:
        print("findings (t true, f false, p half, ? unjudged):")
        print("\n".join(rows))
    return 1 if args.strict and unjudged else 0


if __name__ == "__main__":
    sys.exit(main())
