"""The stable JSON shape: ``{"findings": [...], "summary": {...}}``."""

from __future__ import annotations

import json

from ..findings import Finding, summarize


def render(findings: list[Finding]) -> str:
    doc = {"findings": [f.to_json() for f in findings], "summary": summarize(findings)}
    return json.dumps(doc, indent=2, sort_keys=False, ensure_ascii=False) + "\n"
