"""The stable JSON shape: ``{"findings": [...], "summary": {...}}``.

After a comparison with a base, each finding carries ``"baseline"`` (``new``,
``unchanged`` or ``absent``) and the summary the counts of each
(``"baseline": {"new", "unchanged", "absent"}``); ``"suppressed"`` counts what
``ignore:`` in .ci-tools.yaml left out.
"""

from __future__ import annotations

import json
from typing import Any

from ..findings import Finding, baseline_counts, summarize
from .context import PLAIN, ReportContext


def render(findings: list[Finding], context: ReportContext = PLAIN) -> str:
    summary: dict[str, Any] = dict(summarize(findings))
    marked = baseline_counts(findings)
    if marked is not None:
        summary["baseline"] = marked
    if context.suppressed:
        summary["suppressed"] = len(context.suppressed)
    doc = {"findings": [f.to_json() for f in findings], "summary": summary}
    return json.dumps(doc, indent=2, sort_keys=False, ensure_ascii=False) + "\n"
