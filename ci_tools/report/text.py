"""``path:line:col: severity: message [rule]``, one finding a line.

After a comparison with a base, the change's own findings come first, then
those already on the base, then those the change fixed, each group under a
line naming it.  On a terminal (never in a pipe, a file or a CI log) the
severity, location and rule are coloured.
"""

from __future__ import annotations

from typing import Callable

from ..findings import Finding, baseline_counts, summarize
from .context import PLAIN, ReportContext
from .groups import EXISTING_TITLE, FIXED_TITLE, by_baseline

_STYLES = {"error": "bold red", "warning": "yellow", "note": "cyan", "path": "bold", "rule": "dim", "title": "bold"}


def _painter(colour: bool) -> Callable[[str, str], str]:
    if not colour:
        return lambda _style, text: text
    from rich.color import ColorSystem
    from rich.style import Style

    styles = {name: Style.parse(spec) for name, spec in _STYLES.items()}
    return lambda style, text: styles[style].render(text, color_system=ColorSystem.STANDARD)


def _lines(finding: Finding, paint: Callable[[str, str], str]) -> list[str]:
    severity = finding.severity.value
    out = [f"{paint('path', finding.location.as_text())}: {paint(severity, severity)}: {finding.message} "
           f"{paint('rule', f'[{finding.rule}]')}"]
    for r in finding.related:
        note = f" ({r.note})" if r.note else ""
        out.append(f"    related: {r.as_text()}{note}")
    return out


def counts_line(findings: list[Finding]) -> str:
    s = summarize(findings)
    line = f"{s['error']} error(s), {s['warning']} warning(s), {s['note']} note(s)"
    marked = baseline_counts(findings)
    if marked and (marked["unchanged"] or marked["absent"]):
        line += f": {marked['new']:,} new, {marked['unchanged']:,} already on the base"
        if marked["absent"]:
            line += f", {marked['absent']:,} fixed by this change"
    return line


def render(findings: list[Finding], context: ReportContext = PLAIN) -> str:
    paint = _painter(context.colour)
    current, existing, fixed = by_baseline(findings)
    lines: list[str] = []
    for title, group in (("", current), (EXISTING_TITLE, existing), (FIXED_TITLE, fixed)):
        if title and group:
            lines.append(paint("title", f"{title} ({len(group):,}):"))
        for f in group:
            lines.extend(_lines(f, paint))
    if findings:
        lines.append(counts_line(findings))
    return "\n".join(lines) + ("\n" if lines else "")
