"""Precision and recall of the claims checker on the hand-judged real InferenceX history.

``tests/data/ix-judged/part*.yaml`` hold every concrete claim of every
perf-changelog.yaml entry added to SemiAnalysisAI/InferenceX between
1c08b4369e6d and 843c6254f (2026-07-02 to 2026-08-22), each judged by reading
the files at the commit that added it: holds, contradicted, partly or
unverifiable.  ``tests/data/ix-judged/findings.yaml`` holds hand verdicts on
findings that do not map onto one judged claim.

This script replays ``ci-tools claims --history`` over that window (or reads
a report it wrote) and reports:

- precision: of the error (and, separately, warning) findings, how many
  say something true; a finding on a claim judged ``holds`` or
  ``unverifiable`` is false, on ``contradicted`` true, on ``partly`` true for
  a warning and half-true for an error;
- recall: of the judged disagreements (contradicted or partly) whose subject
  is a setting the checker models (a server flag, an environment variable, a
  key of a structured flag value, a config field, the image, concurrency or
  parallelism), how many a finding reports.  The others (row counts, pinned
  revisions of other repositories, which script functions exist) are listed
  as out of scope, not hidden.

A finding that matches no judged claim is listed as unjudged until a verdict
for it is added to findings.yaml; the figures say how many there are.

Run: .venv/bin/python bench/bench_claims_judged.py --ix PATH  (a clone of SemiAnalysisAI/InferenceX)
  or .venv/bin/python bench/bench_claims_judged.py --report FILE  (JSON of `claims --history`)
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchlib import ROOT, THIS_BUILD, file_at, read_report  # noqa: E402
from ci_tools.claims.verdict.rules import DISAGREEMENT_RULES  # noqa: E402

JUDGED = ROOT / "tests" / "data" / "ix-judged"
SINCE = "1c08b4369e6d"
DISAGREE = ("contradicted", "partly")
# Config fields, as the judged files name them; a subject made of them ("tp/conc") is one too.
CONFIG_FIELDS = {"image", "conc", "conc-list", "tp", "ep", "dp-attn", "dram-utilization", "kv-offloading",
                 "kv-offload-backend", "spec-decoding", "num-worker", "model", "precision"}
# How many points or search-space rows a sweep has (the judged files name the subject either way).
COUNT_SUBJECTS = {"points", "search-space rows"}


@dataclass
class JudgedClaim:
    commit: str
    entry_line: int
    subject: str
    claimed: str
    verdict: str
    sentence: str
    found_by: list[dict[str, Any]] = field(default_factory=list)

    @property
    def in_scope(self) -> bool:
        return bool(subject_keys(self.subject))


@dataclass
class JudgedEntry:
    commit: str
    line: int
    claims: list[JudgedClaim]
    part: str  # the judged file it comes from ("part1": July, "part2": August)


def _norm(name: str) -> str:
    return re.sub(r"[_\s]+", "-", name.strip().lower().lstrip("-"))


def subject_keys(subject: str) -> set[str]:
    """Comparable names of a judged subject: ``--attention-config.x`` -> {attention-config.x, x}; ``tp/conc`` -> fields."""
    subject = subject.strip()
    if subject in COUNT_SUBJECTS:
        return {"points"}
    if subject.startswith("--") or re.fullmatch(r"[A-Z][A-Z0-9_]+", subject):
        name = _norm(subject)
        keys = {name}
        if "." in name:
            keys.add(name.rsplit(".", 1)[1])
        return keys
    words = [w for w in re.split(r"[\s/,]+", subject.lower()) if w]
    fields = {w.removeprefix("decode.").removeprefix("prefill.") for w in words}
    fields = {"conc" if w == "conc-list" else w for w in fields if w not in {"decode", "prefill", "per", "isl"}}
    if fields and fields <= CONFIG_FIELDS | {"num-worker"}:
        return fields
    if re.fullmatch(r"[a-z0-9]+(?:-[a-z0-9]+)+", subject):  # a flag written without its dashes
        return {subject}
    return set()


def finding_keys(finding: dict[str, Any]) -> set[str]:
    """Comparable names of a finding's subject: a setting, or the config fields of an arm (``concurrency/tp/ep``)."""
    subject = str(finding["data"].get("subject", ""))
    if subject.split("/")[0] == "points":
        return {"points"}  # a count claim (its arms only narrow what is counted)
    if not subject.startswith("--") and "/" in subject or subject == "concurrency":
        fields = {w.removeprefix("prefill.").removeprefix("decode.") for w in subject.split("/")}
        # (the sequence lengths only narrow an arm, unless they are all it names: "no 8k/1k job runs")
        return {"conc" if w == "concurrency" else w for w in fields if w not in {"isl", "osl"}} or {"seq"}
    name = _norm(subject)
    keys = {name}
    if "." in name:
        keys.add(name.rsplit(".", 1)[1])
    return keys


Verdicts = dict[tuple[str, int, str, str], str]


def _finding_verdicts(items: list[dict[str, Any]], verdicts: Verdicts) -> None:
    """Hand verdicts on findings, keyed as the finding's JSON gives them (``true`` | ``false`` | ``partly``)."""
    for f in items:
        verdict = f["verdict"]
        shown = {True: "true", False: "false"}.get(verdict, str(verdict))
        verdicts[(str(f["commit"])[:12], int(f["line"]), str(f["subject"]), str(f["claimed"]))] = shown


def load_judged() -> tuple[dict[str, list[JudgedEntry]], Verdicts, dict[str, str]]:
    """Judged entries by commit, hand verdicts on findings, and the part each judged commit belongs to."""
    entries: dict[str, list[JudgedEntry]] = {}
    verdicts: Verdicts = {}
    parts: dict[str, str] = {}
    for path in sorted(JUDGED.glob("part*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        for e in data.get("entries") or []:
            claims = [JudgedClaim(e["commit"], int(e["entry-line"]), str(c["subject"]), str(c.get("claimed", "")),
                                  str(c["verdict"]), str(c.get("sentence", "")))
                      for c in e.get("claims") or []]
            entries.setdefault(e["commit"], []).append(JudgedEntry(e["commit"], int(e["entry-line"]), claims, path.stem))
            parts[e["commit"][:12]] = path.stem
        # Verdicts the judges gave on findings of an earlier ci-tools (same keys as findings.yaml).
        _finding_verdicts(data.get("tool-findings") or [], verdicts)
        for f in data.get("tool-findings") or []:
            parts.setdefault(str(f["commit"])[:12], path.stem)
    for items in entries.values():
        items.sort(key=lambda x: x.line)
    extra = JUDGED / "findings.yaml"
    if extra.is_file():
        found = yaml.safe_load(extra.read_text(encoding="utf-8")).get("findings") or []
        _finding_verdicts(found, verdicts)
        for f in found:
            if "part" in f:
                parts.setdefault(str(f["commit"])[:12], str(f["part"]))
    return entries, verdicts, parts


def entry_of(entries: dict[str, list[JudgedEntry]], commit: str, line: int) -> JudgedEntry | None:
    found = None
    for entry in entries.get(commit, []):
        if entry.line <= line:
            found = entry
    return found


def replay(ix: Path, out: Path) -> None:
    subprocess.run([*THIS_BUILD, "claims", "--repo", str(ix), "--history", "--since", SINCE,
                    "--head", "HEAD", "--format", "json", "--output", str(out)], check=False, cwd=ix)


def _first_number(text: str) -> str | None:
    found = re.search(r"\d+", text)
    return found.group() if found else None


def _squash(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "", text.lower())


class BulletText:
    """The changelog text a finding points at, read from the clone (to tell apart claims of one subject)."""

    def __init__(self, ix: Path | None) -> None:
        self.ix = ix
        self._files: dict[str, list[str]] = {}

    def at(self, commit: str, line: int, end_line: int) -> str | None:
        if self.ix is None:
            return None
        if commit not in self._files:
            self._files[commit] = (file_at(self.ix, commit, "perf-changelog.yaml") or "").splitlines()
        lines = self._files[commit]
        return " ".join(lines[line - 1:max(line, end_line)]) if lines else None


def said_on(claim: JudgedClaim, bullet: str) -> bool:
    """The judged claim's sentence (or its first words, for sentences the judges cut with ...) is in the bullet."""
    pieces = [_squash(p) for p in re.split(r"\.\.\.|…", claim.sentence) if len(_squash(p)) >= 8]
    return bool(pieces) and all(p[:60] in bullet for p in pieces)


def judge_finding(f: dict[str, Any], entries: dict[str, list[JudgedEntry]], verdicts: Verdicts,
                  text: BulletText) -> str | None:
    """``true`` | ``false`` | ``partly`` | None (unjudged); judged claims it maps onto get the finding recorded."""
    sev = f["severity"]
    commit = str(f["data"].get("commit", ""))
    key = (commit[:12], int(f["line"]), str(f["data"].get("subject")), str(f["data"].get("claimed")))
    explicit = verdicts.get(key)
    if explicit == "partly":
        explicit = "true" if sev == "warning" else "partly"
    entry = entry_of(entries, commit, int(f["line"]))
    if entry is None:
        return explicit or "false"  # no judged entry: the commit did not add one there
    keys = finding_keys(f)
    matches = [c for c in entry.claims if keys & subject_keys(c.subject)]
    if keys == {"points"}:
        # A count is about its own number: "23 configs" is not "13 for 1K/1K" of the same bullet.
        matches = [c for c in matches if _first_number(c.claimed) == _first_number(str(f["data"].get("claimed")))]
    bullet = text.at(commit, int(f["line"]), int(f.get("end_line") or f["line"]))
    if bullet is not None and matches:
        # Claims of the same subject in other bullets of the entry are not what this finding is about.
        squashed = _squash(bullet)
        matches = [c for c in matches if said_on(c, squashed)] or [c for c in matches if not c.sentence]
    judged = {c.verdict for c in matches}
    for c in matches:
        c.found_by.append(f)
    if explicit is not None:
        return explicit  # a hand verdict on this very finding
    if not matches:
        return None
    if "contradicted" in judged:
        return "true"
    if "partly" in judged:
        return "true" if sev == "warning" else "partly"
    return "false"


@dataclass
class Score:
    verdicts: dict[str, dict[str, float]] = field(default_factory=lambda: {"error": {}, "warning": {}})
    unjudged: int = 0

    def add(self, severity: str, verdict: str | None) -> None:
        if verdict is None:
            self.unjudged += 1
            return
        bucket = self.verdicts[severity]
        bucket[verdict] = bucket.get(verdict, 0) + 1

    def lines(self, name: str, claims: list[JudgedClaim]) -> list[str]:
        out = []
        disagree = [c for c in claims if c.verdict in DISAGREE]
        in_scope = [c for c in disagree if c.in_scope]
        found = [c for c in in_scope if c.found_by]
        for sev in ("error", "warning"):
            b = self.verdicts[sev]
            total = sum(b.values())
            true = b.get("true", 0) + 0.5 * b.get("partly", 0)
            shown = f"{true / total:.0%}" if total else "n/a"
            out.append(f"  {name:6s} {sev}s: {total:3.0f} judged, {b.get('true', 0):3.0f} true, "
                       f"{b.get('partly', 0):2.0f} half-true, {b.get('false', 0):3.0f} false: precision {shown}")
        rate = f" ({len(found) / len(in_scope):.0%})" if in_scope else ""
        out.append(f"  {name:6s} recall: {len(found)} of {len(in_scope)} in-scope disagreements reported{rate}; "
                   f"{self.unjudged} unjudged findings")
        return out


def main() -> int:
    parser = argparse.ArgumentParser()
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--ix", type=Path, help="a clone of SemiAnalysisAI/InferenceX (the replay is run)")
    source.add_argument("--report", type=Path, help="the JSON report of an earlier `claims --history` run")
    parser.add_argument("--text-from", type=Path, help="with --report: the clone to read changelog bullets from")
    parser.add_argument("--list", action="store_true", help="list every finding with its verdict, and every miss")
    args = parser.parse_args()
    if args.report:
        report = read_report(args.report)
        text = BulletText(args.text_from.resolve() if args.text_from else None)
    else:
        text = BulletText(args.ix.resolve())
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "report.json"
            replay(args.ix.resolve(), out)
            report = json.loads(out.read_text())
    entries, verdicts, parts = load_judged()
    scores = {"part1": Score(), "part2": Score(), "total": Score()}
    rows: list[str] = []
    for f in report["findings"]:
        if f["rule"] not in DISAGREEMENT_RULES:
            continue
        verdict = judge_finding(f, entries, verdicts, text)
        commit = str(f["data"].get("commit", ""))[:12]
        for name in (parts.get(commit), "total"):
            if name in scores:
                scores[name].add(f["severity"], verdict)
        key = (commit, int(f["line"]), str(f["data"].get("subject")), str(f["data"].get("claimed")))
        rows.append(f"  {(verdict or '?')[0]} {f['severity']:7s} {parts.get(commit, '?')} {key}  {f['message'][:160]}")
    claims = {name: [c for items in entries.values() for e in items if name in (e.part, "total") for c in e.claims]
              for name in scores}
    disagree = [c for c in claims["total"] if c.verdict in DISAGREE]
    in_scope = [c for c in disagree if c.in_scope]
    print(f"judged: {len(claims['total'])} claims in {sum(len(v) for v in entries.values())} entries; "
          f"{len(disagree)} disagreements, {len(in_scope)} about settings the checker models")
    for name, score in scores.items():
        print("\n".join(score.lines(name, claims[name])))
    if args.list:
        print("findings:")
        print("\n".join(rows))
        print("missed in-scope disagreements:")
        for c in in_scope:
            if not c.found_by:
                print(f"  {c.commit[:12]} {c.entry_line} {c.verdict:12s} {c.subject} = {c.claimed[:60]}")
        print("out of scope:")
        for c in disagree:
            if not c.in_scope:
                print(f"  {c.commit[:12]} {c.entry_line} {c.verdict:12s} {c.subject}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
