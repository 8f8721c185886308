"""The unit of output: a finding with a rule id, a severity and locations.

Every command that inspects the repository produces a list of findings; the
renderers in :mod:`ci_tools.render` are pure functions of that list, so the
summary can never disagree with what was found.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any, Mapping
from .frozen import record


class Severity(str, enum.Enum):
    ERROR = "error"
    WARNING = "warning"
    NOTE = "note"

    @property
    def rank(self) -> int:
        return {"error": 0, "warning": 1, "note": 2}[self.value]


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

    def sort_key(self) -> tuple[str, int, int, str, str]:
        loc = self.location
        return (loc.path, loc.line, loc.column, self.rule, self.message)

    def to_json(self) -> dict[str, Any]:
        loc = self.location.to_json()
        return {
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


def sort_findings(findings: list[Finding]) -> list[Finding]:
    """Stable, deterministic order: by file, position, then rule."""
    return sorted(findings, key=Finding.sort_key)


def summarize(findings: list[Finding]) -> dict[str, int]:
    counts = {"error": 0, "warning": 0, "note": 0}
    for f in findings:
        counts[f.severity.value] += 1
    counts["total"] = len(findings)
    return counts
