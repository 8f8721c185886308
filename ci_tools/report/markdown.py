"""A Markdown report: a heading with the counts and one table row per finding."""

from __future__ import annotations

import re

from ..findings import Finding, summarize

HEADER = "| Severity | Rule | Location | Message |\n|---|---|---|---|\n"


def cell(text: str) -> str:
    """Table-safe text: pipes escaped, line breaks as <br>, no raw HTML."""
    return (text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace("|", "\\|").replace("\r\n", "<br>").replace("\n", "<br>").replace("\r", "<br>"))


def heading(findings: list[Finding]) -> str:
    s = summarize(findings)
    if not findings:
        return "### ci-tools: no findings\n"
    return f"### ci-tools: {s['error']} error(s), {s['warning']} warning(s), {s['note']} note(s)\n"


def row(finding: Finding) -> str:
    message = finding.message
    for r in finding.related:
        note = f" ({r.note})" if r.note else ""
        message += f"\nrelated: {r.as_text()}{note}"
    location = f"`{finding.location.as_text()}`".replace("|", "\\|")
    return f"| {finding.severity.value} | `{finding.rule}` | {location} | {cell(message)} |\n"


def render(findings: list[Finding]) -> str:
    if not findings:
        return heading(findings)
    return heading(findings) + "\n" + HEADER + "".join(row(f) for f in findings)


_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+!|~<>])")


def md_escape(text: str) -> str:
    """Inline text from a repository made inert: one line, Markdown specials escaped, no @mention, no HTML."""
    flat = " ".join(str(text).split())
    return _MD_SPECIAL.sub(r"\\\1", flat).replace("@", "&#64;")
