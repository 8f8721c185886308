"""The full list of findings in the GitHub job summary.

GitHub shows only 10 error and 10 warning annotations per step; the job
summary (``$GITHUB_STEP_SUMMARY``) has room for all of them, up to 1 MiB per
step.  The report (:mod:`ci_tools.report.markdown`: the change's own findings
first, the rest in collapsed sections) is cut before that limit, with a note
saying how many rows were left out, so that the upload never fails and never
silently drops rows; the caller learns how many rows were written and says
so in the log too.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ..findings import Finding
from . import markdown
from .context import PLAIN, ReportContext

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


def summary_text(findings: list[Finding], limit: int = SUMMARY_LIMIT, context: ReportContext = PLAIN) -> str:
    """The Markdown for the job summary, at most ``limit`` bytes of UTF-8."""
    return markdown.document(findings, context, max(limit - _MARGIN, 0))[0]


def write_step_summary(findings: list[Finding], context: ReportContext = PLAIN) -> StepSummary | None:
    """Append the report to ``$GITHUB_STEP_SUMMARY`` when that variable is set; None when it is not."""
    target = os.environ.get("GITHUB_STEP_SUMMARY")
    if not target:
        return None
    path = Path(target)
    existing = path.stat().st_size if path.exists() else 0
    limit = max(SUMMARY_LIMIT - existing, 0)
    text, rows = markdown.document(findings, context, max(limit - _MARGIN, 0))
    with path.open("a", encoding="utf-8") as out:
        out.write(text)
    return StepSummary(rows, len(findings) + len(context.suppressed), limit)
