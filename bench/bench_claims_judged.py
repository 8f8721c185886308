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

ROOT = Path(__file__).resolve().parent.parent
JUDGED = ROOT / "tests" / "data" / "ix-judged"
SINCE = "1c08b4369e6d"
DISAGREE = ("contradicted", "partly")
# Config fields, as the judged files name them; a subject made of them ("tp/conc") is one too.
CONFIG_FIELDS = {"image", "conc", "conc-list", "tp", "ep", "dp-attn", "dram-utilization", "kv-offloading",
                 "kv-offload-backend", "spec-decoding", "num-worker", "model", "precision"}
TOPOLOGY = {"tp", "ep", "dp-attn"}


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


def _norm(name: str) -> str:
    return re.sub(r"[_\s]+", "-", name.strip().lower().lstrip("-"))


def subject_keys(subject: str) -> set[str]:
    """Comparable names of a judged subject: ``--attention-config.x`` -> {attention-config.x, x}; ``tp/conc`` -> fields."""
    subject = subject.strip()
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
    subject = str(finding["data"].get("subject", ""))
    if subject == "tp/ep/dp-attn":
        return set(TOPOLOGY)
    if subject == "concurrency":
        return {"conc"}
    name = _norm(subject)
    keys = {name}
    if "." in name:
        keys.add(name.rsplit(".", 1)[1])
    return keys


def load_judged() -> tuple[dict[str, list[JudgedEntry]], dict[tuple[str, int, str, str], str]]:
    entries: dict[str, list[JudgedEntry]] = {}
    for path in sorted(JUDGED.glob("part*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        for e in data.get("entries") or []:
            claims = [JudgedClaim(e["commit"], int(e["entry-line"]), str(c["subject"]), str(c.get("claimed", "")),
                                  str(c["verdict"]), str(c.get("sentence", "")))
                      for c in e.get("claims") or []]
            entries.setdefault(e["commit"], []).append(JudgedEntry(e["commit"], int(e["entry-line"]), claims))
    for items in entries.values():
        items.sort(key=lambda x: x.line)
    verdicts: dict[tuple[str, int, str, str], str] = {}
    extra = JUDGED / "findings.yaml"
    if extra.is_file():
        for f in yaml.safe_load(extra.read_text(encoding="utf-8")).get("findings") or []:
            verdicts[(str(f["commit"])[:12], int(f["line"]), str(f["subject"]), str(f["claimed"]))] = str(f["verdict"])
    return entries, verdicts


def entry_of(entries: dict[str, list[JudgedEntry]], commit: str, line: int) -> JudgedEntry | None:
    found = None
    for entry in entries.get(commit, []):
        if entry.line <= line:
            found = entry
    return found


def replay(ix: Path, out: Path) -> None:
    subprocess.run([sys.executable, "-m", "ci_tools", "claims", "--repo", str(ix), "--history", "--since", SINCE,
                    "--head", "HEAD", "--format", "json", "--output", str(out)], check=False, cwd=ix)


def main() -> int:
    parser = argparse.ArgumentParser()
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--ix", type=Path, help="a clone of SemiAnalysisAI/InferenceX (the replay is run)")
    source.add_argument("--report", type=Path, help="the JSON report of an earlier `claims --history` run")
    parser.add_argument("--list", action="store_true", help="list every finding with its verdict, and every miss")
    args = parser.parse_args()
    if args.report:
        report = json.loads(args.report.read_text())
    else:
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "report.json"
            replay(args.ix.resolve(), out)
            report = json.loads(out.read_text())
    entries, verdicts = load_judged()
    scored: dict[str, dict[str, float]] = {"error": {}, "warning": {}}
    unjudged: list[dict[str, Any]] = []
    rows: list[str] = []
    for f in report["findings"]:
        if f["rule"] not in ("claim-contradicted", "claim-partly-contradicted"):
            continue
        sev = f["severity"]
        commit = str(f["data"].get("commit", ""))
        key = (commit[:12], int(f["line"]), str(f["data"].get("subject")), str(f["data"].get("claimed")))
        verdict = verdicts.get(key)
        if verdict is None:
            entry = entry_of(entries, commit, int(f["line"]))
            if entry is None:
                verdict = "false"  # no judged entry: the commit did not add one there
            else:
                keys = finding_keys(f)
                matches = [c for c in entry.claims if keys & subject_keys(c.subject)]
                if matches:
                    judged = {c.verdict for c in matches}
                    for c in matches:
                        c.found_by.append(f)
                    if "contradicted" in judged:
                        verdict = "true"
                    elif "partly" in judged:
                        verdict = "true" if sev == "warning" else "partly"
                    else:
                        verdict = "false"
        if verdict is None:
            unjudged.append(f)
            rows.append(f"  ? {sev:7s} {key}  {f['message'][:160]}")
            continue
        bucket = scored[sev]
        bucket[verdict] = bucket.get(verdict, 0) + 1
        rows.append(f"  {verdict[0]} {sev:7s} {key}  {f['message'][:160]}")
    claims = [c for items in entries.values() for e in items for c in e.claims]
    disagree = [c for c in claims if c.verdict in DISAGREE]
    in_scope = [c for c in disagree if c.in_scope]
    found = [c for c in in_scope if c.found_by]
    print(f"judged: {len(claims)} claims in {sum(len(v) for v in entries.values())} entries; "
          f"{len(disagree)} disagreements, {len(in_scope)} about settings the checker models")
    for sev in ("error", "warning"):
        b = scored[sev]
        total = sum(b.values())
        true = b.get("true", 0) + 0.5 * b.get("partly", 0)
        shown = f"{true / total:.0%}" if total else "n/a"
        print(f"{sev}s: {total:.0f} judged, {b.get('true', 0):.0f} true, {b.get('partly', 0):.0f} half-true, "
              f"{b.get('false', 0):.0f} false: precision {shown}")
    print(f"unjudged findings: {len(unjudged)}")
    print(f"recall: {len(found)} of {len(in_scope)} in-scope disagreements reported"
          + (f" ({len(found) / len(in_scope):.0%})" if in_scope else ""))
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
