"""The unit of output: a finding with a rule id, a severity and locations, and the rules that make them.

Every command that inspects the repository produces a list of findings; the
renderers in :mod:`ci_tools.report` are pure functions of that list, so the
summary can never disagree with what was found.
"""

from __future__ import annotations

import enum
import importlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from .frozen import record


class Severity(str, enum.Enum):
    ERROR = "error"
    WARNING = "warning"
    NOTE = "note"

    @property
    def rank(self) -> int:
        return {"error": 0, "warning": 1, "note": 2}[self.value]


class Baseline(str, enum.Enum):
    """A finding of ``check`` beside the same check of the base revision (SARIF's ``baselineState``)."""

    NEW = "new"  # found at the head only: the change brings it
    UNCHANGED = "unchanged"  # found at the base too: it was there before the change
    ABSENT = "absent"  # found at the base only: the change fixes it


# Where findings about the pull request's description are located: text that is no file of the repository.
# Reports name it as such (SARIF: a logical location; GitHub: an annotation without `file=`), since code
# scanning and the diff view can attach nothing to a path that does not exist.
PR_DESCRIPTION = "PR description"


@record(order=True)
class Location:
    """A span in a repository file; lines and columns are 1-based.

    ``line == 0`` means the finding concerns the file as a whole.
    """

    path: str
    line: int = 0
    column: int = 0
    end_line: int = 0
    end_column: int = 0
    note: str = ""

    @property
    def in_repository(self) -> bool:
        """A file of the repository (not the PR description)."""
        return self.path != PR_DESCRIPTION

    def as_text(self) -> str:
        if self.line <= 0:
            return self.path
        if self.column <= 0:
            return f"{self.path}:{self.line}"
        return f"{self.path}:{self.line}:{self.column}"

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "path": self.path,
            "line": self.line,
            "column": self.column,
            "end_line": self.end_line or self.line,
            "end_column": self.end_column or self.column,
        }
        if self.note:
            out["note"] = self.note
        return out


@dataclass(frozen=True)
class Finding:
    rule: str
    severity: Severity
    message: str
    location: Location
    related: tuple[Location, ...] = ()
    data: Mapping[str, Any] = field(default_factory=dict)
    # Set by ``check`` when it compared the head with a base; None when nothing was compared.
    baseline: Baseline | None = None

    @property
    def counts(self) -> bool:
        """Part of the head's result (a finding the change fixed is reported, and counts for nothing)."""
        return self.baseline is not Baseline.ABSENT

    def sort_key(self) -> tuple[str, int, int, str, str]:
        loc = self.location
        return (loc.path, loc.line, loc.column, self.rule, self.message)

    def to_json(self) -> dict[str, Any]:
        loc = self.location.to_json()
        out = {
            "rule": self.rule,
            "severity": self.severity.value,
            "message": self.message,
            "path": loc["path"],
            "line": loc["line"],
            "column": loc["column"],
            "end_line": loc["end_line"],
            "end_column": loc["end_column"],
            "related": [r.to_json() for r in self.related],
            "data": dict(self.data),
        }
        if self.baseline is not None:
            out["baseline"] = self.baseline.value
        return out


# Positions inside a message ("first defined at line 12", "entry 773", "x.yaml:5:3") move when unrelated
# lines are added above; they are not what the finding is about.
_POSITIONS = re.compile(r"\b(lines?|entry|entries|item|row) \d+(?:-\d+)?|(?<=\w):\d+(?::\d+)?\b")


def finding_key(finding: Finding) -> str:
    """What identifies a finding across revisions: rule, file and message, without positions.

    SARIF's ``partialFingerprints`` (``ciToolsFindingHash/v1``) hash it, and ``check`` matches the head's
    findings with the base's by it, so a finding whose lines moved is the same finding.
    """
    message = _POSITIONS.sub(lambda m: f"{m.group(1)} #" if m.group(1) else "", finding.message)
    return "\0".join((finding.rule, finding.location.path, message))


def sort_findings(findings: list[Finding]) -> list[Finding]:
    """Stable, deterministic order: by file, position, then rule."""
    return sorted(findings, key=Finding.sort_key)


def summarize(findings: list[Finding]) -> dict[str, int]:
    """Counts by severity of the findings that are the head's result (not those a change fixed)."""
    counts = {"error": 0, "warning": 0, "note": 0}
    total = 0
    for f in findings:
        if f.counts:
            counts[f.severity.value] += 1
            total += 1
    counts["total"] = total
    return counts


def baseline_counts(findings: list[Finding]) -> dict[str, int] | None:
    """How many findings are new, unchanged and absent; None when nothing was compared with a base."""
    if not any(f.baseline is not None for f in findings):
        return None
    counts = {state.value: 0 for state in Baseline}
    for f in findings:
        if f.baseline is not None:
            counts[f.baseline.value] += 1
    return counts


# ---------------------------------------------------------------- rules
_RULES: dict[str, Rule] = {}
_DISCOVERED = False


@dataclass(frozen=True)
class Rule:
    """A rule's identity and its user documentation (ruff's four sections)."""

    id: str
    summary: str
    severity: Severity
    what: str
    why: str
    example: str
    fix: str
    family: str

    def docs(self) -> str:
        return (
            f"{self.id} ({self.severity.value}, {self.family})\n\n{self.summary}\n\n"
            f"What it does\n  {self.what}\n\nWhy\n  {self.why}\n\n"
            f"Example\n{_indent(self.example)}\n\nFix\n  {self.fix}\n"
        )


def _indent(text: str) -> str:
    return "\n".join("  " + line if line else "" for line in text.strip("\n").splitlines())


def register(
    id: str, *, summary: str, what: str, why: str, example: str, fix: str,
    family: str, severity: Severity = Severity.ERROR,
) -> Rule:
    if id in _RULES:
        raise RuntimeError(f"rule {id} registered twice")
    rule = Rule(id=id, summary=summary, severity=severity, what=what, why=why,
                example=example, fix=fix, family=family)
    _RULES[id] = rule
    return rule


def _discover() -> None:
    """Import every module that registers rules: a stage keeps its rules beside the code that raises them
    (``<stage>/rules.py``, ``<stage>/*_rules.py``), so a new family needs no list kept in step."""
    global _DISCOVERED
    if _DISCOVERED:
        return
    package = Path(__file__).resolve().parent
    for path in sorted(package.rglob("*rules.py")):
        if path.stem == "rules" or path.stem.endswith("_rules"):
            parts = path.relative_to(package).with_suffix("").parts
            importlib.import_module(".".join((__package__ or "ci_tools", *parts)))
    _DISCOVERED = True


def all_rules() -> list[Rule]:
    _discover()
    return sorted(_RULES.values(), key=lambda r: (r.family, r.id))


def get_rule(rule_id: str) -> Rule | None:
    _discover()
    return _RULES.get(rule_id)


def first_few(items: Sequence[str], shown: int = 4) -> str:
    """Items a message lists, the first ``shown`` of them joined by commas and "..." when there are more."""
    return ", ".join(items[:shown]) + (", ..." if len(items) > shown else "")


# Letters whose spoken name starts with a vowel: "an MTP", "an FP8", "an H200" (spelled out), but "a TP8".
_VOWEL_NAMED_LETTERS = frozenset("AEFHILMNORSX")
# Two consonants that can open a spoken word: "SLURM" is said as a word, "RDMA" letter by letter.
_ONSETS = frozenset({"BL", "BR", "CH", "CL", "CR", "DR", "FL", "FR", "GL", "GR", "PH", "PL", "PR", "SC", "SH", "SK",
                     "SL", "SM", "SN", "SP", "ST", "SW", "TH", "TR", "TW", "WH"})
# Words starting with "u" said with a "you": "a unified", "a user"; other u-words take "an" ("an unset").
_YOU_SOUND = re.compile(r"u(?:ni|s[aeiouy]|t[aeiouy]|r[aeiouy]|k|(?-i:[B-DF-HJ-NP-TV-Z]))", re.IGNORECASE)


def with_article(phrase: str) -> str:
    """``phrase`` after the indefinite article it is read with: "a TP8", "an EAGLE3", "an MTP", "an 8k1k", "an int"."""
    return ("an " if _vowel_sound(phrase.lstrip("-`'\"([{")) else "a ") + phrase


def _vowel_sound(word: str) -> bool:
    if not word:
        return False
    if word[0].isdigit():
        digits = _leading(word, "0123456789")
        return digits.startswith("8") or digits in ("11", "18")
    if _spelled(word):
        return word[0] in _VOWEL_NAMED_LETTERS
    if word[0] in "uU":
        return not _YOU_SOUND.match(word)
    return word[0] in "aeiouAEIOU"


def _leading(word: str, chars: str) -> str:
    return word[:len(word) - len(word.lstrip(chars))]


def _spelled(word: str) -> bool:
    """Whether ``word`` is read letter by letter: a lone capital before a digit or sign (H200), a run of two or three
    capitals (MTP, the SG of SGLang), or a longer run no English word could start with (RDMA, NVFP4, UCCL; not SLURM,
    NIXL or EAGLE, said as words)."""
    run = _leading(word, "ABCDEFGHIJKLMNOPQRSTUVWXYZ")
    if len(run) <= 1:
        return len(run) == 1 and not word[1:2].isalpha()
    if len(run) <= 3:
        return True
    if run[0] in "AEIOU":
        return run[0] == "U" and run[1] not in "AEIOU"
    return not re.search("[AEIOU]", run) or (run[1] not in "AEIOU" and run[:2] not in _ONSETS)


def make_finding(
    rule: Rule, message: str, location: Location, *,
    related: Iterable[Location] = (), data: Mapping[str, Any] | None = None,
    severity: Severity | None = None,
) -> Finding:
    return Finding(rule=rule.id, severity=severity or rule.severity, message=message,
                   location=location, related=tuple(related), data=dict(data or {}))


def matches(rule_id: str, patterns: Iterable[str]) -> bool:
    """``--select``/``--ignore`` match a whole id or a family prefix (``changelog-``)."""
    for p in patterns:
        if rule_id == p or (rule_id.startswith(p) and (p.endswith("-") or rule_id[len(p):].startswith("-"))):
            return True
    return False


def unknown_patterns(patterns: Iterable[str]) -> list[str]:
    """The ``--select``/``--ignore`` values that match no registered rule id.

    A typo there would otherwise hide every finding (``--select``) or none
    (``--ignore``) while the run reports success.
    """
    ids = [r.id for r in all_rules()]
    return [p for p in patterns if not any(matches(rule_id, [p]) for rule_id in ids)]


def filter_findings(findings: list[Finding], select: Iterable[str], ignore: Iterable[str]) -> list[Finding]:
    sel, ign = list(select), list(ignore)
    return [f for f in findings if (not sel or matches(f.rule, sel)) and not matches(f.rule, ign)]
