"""``path:line:col: severity: message [rule]``, one finding a line."""

from __future__ import annotations

from ..findings import Finding, summarize


def render(findings: list[Finding]) -> str:
    lines = []
    for f in findings:
        lines.append(f"{f.location.as_text()}: {f.severity.value}: {f.message} [{f.rule}]")
        for r in f.related:
            note = f" ({r.note})" if r.note else ""
            lines.append(f"    related: {r.as_text()}{note}")
    s = summarize(findings)
    if findings:
        lines.append(f"{s['error']} error(s), {s['warning']} warning(s), {s['note']} note(s)")
    return "\n".join(lines) + ("\n" if lines else "")
