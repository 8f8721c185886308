"""The full list of findings in the GitHub job summary.

GitHub shows only 10 error and 10 warning annotations per step; the job
summary (``$GITHUB_STEP_SUMMARY``) has room for all of them, up to 1 MiB per
step.  The table is cut before that limit, with a note saying how many rows
were left out, so that the upload never fails and never silently drops rows;
the caller learns how many rows were written and says so in the log too.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ..findings import Finding
from . import markdown

SUMMARY_LIMIT = 1024 * 1024
# Room kept for the truncation note and for other tools writing to the same step.
_MARGIN = 4096


@dataclass(frozen=True)
class StepSummary:
    """What was written: ``rows`` of the ``total`` findings (fewer when the size limit cut the table)."""

    rows: int
    total: int
    limit: int

    @property
    def truncated(self) -> bool:
        return self.rows < self.total


def _rows(findings: list[Finding], limit: int) -> tuple[str, int]:
    """The Markdown for the job summary, at most ``limit`` bytes of UTF-8, and the number of rows in it.

    Errors come first, then warnings, then notes: when the table must be cut,
    what is cut is the least important.
    """
    text = markdown.heading(findings)
    if not findings:
        return text, 0
    text += "\n" + markdown.HEADER
    budget = max(limit - _MARGIN, 0)
    used = len(text.encode("utf-8"))
    rows: list[str] = []
    ordered = sorted(findings, key=lambda f: f.severity.rank)  # stable: file order within a severity
    for index, finding in enumerate(ordered):
        row = markdown.row(finding)
        size = len(row.encode("utf-8"))
        if used + size > budget:
            left = len(findings) - index
            note = (f"\n**{left} more finding(s) not shown**: the job summary is limited to "
                    f"{limit // 1024} KiB. Run `ci-tools` with `--format json` or `--format sarif` for the full list.\n")
            return text + "".join(rows) + note, index
        rows.append(row)
        used += size
    return text + "".join(rows), len(rows)


def summary_text(findings: list[Finding], limit: int = SUMMARY_LIMIT) -> str:
    """The Markdown for the job summary, at most ``limit`` bytes of UTF-8."""
    return _rows(findings, limit)[0]


def write_step_summary(findings: list[Finding]) -> StepSummary | None:
    """Append the table to ``$GITHUB_STEP_SUMMARY`` when that variable is set; None when it is not."""
    target = os.environ.get("GITHUB_STEP_SUMMARY")
    if not target:
        return None
    path = Path(target)
    existing = path.stat().st_size if path.exists() else 0
    limit = max(SUMMARY_LIMIT - existing, 0)
    text, rows = _rows(findings, limit)
    with path.open("a", encoding="utf-8") as out:
        out.write(text)
    return StepSummary(rows, len(findings), limit)
