"""A Markdown report (also the GitHub job summary): a heading with the counts and tables of findings.

After a comparison with a base, the change's own findings come first, in a
table of their own; those already on the base and those the change fixed
follow in collapsed sections, and so do the findings ``ignore:`` suppressed,
with their reasons.  Each rule id links to its documentation page; inside
GitHub Actions each location links to its line at the checked commit.  A
long message is cut to its first :data:`MESSAGE_CHARS` characters (the full
text is in the annotation, and in ``--format json`` or ``sarif``).
"""

from __future__ import annotations

import re
from typing import Iterator, Sequence

from ..findings import Finding, baseline_counts, summarize
from .context import PLAIN, ReportContext, rule_url
from .groups import EXISTING_TITLE, FIXED_TITLE, by_baseline

HEADER = "| Severity | Rule | Location | Message |\n|---|---|---|---|\n"
MESSAGE_CHARS = 240


def cell(text: str) -> str:
    """Table-safe text: pipes escaped, line breaks as <br>, no raw HTML."""
    return (text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace("|", "\\|").replace("\r\n", "<br>").replace("\n", "<br>").replace("\r", "<br>"))


def short(text: str, limit: int = MESSAGE_CHARS) -> str:
    """``text`` cut to at most ``limit`` characters at a word boundary, with an ellipsis when cut."""
    if len(text) <= limit:
        return text
    cut = text[:limit]
    space = cut.rfind(" ")
    return (cut[:space] if space > limit // 2 else cut).rstrip(" ,;:") + " …"


def _counts(findings: list[Finding]) -> str:
    s = summarize(findings)
    return f"{s['error']} error(s), {s['warning']} warning(s), {s['note']} note(s)"


def heading(findings: list[Finding]) -> str:
    marked = baseline_counts(findings)
    if marked is not None:
        fixed = f", {marked['absent']:,} fixed by this change" if marked["absent"] else ""
        return (f"### ci-tools: {marked['new']:,} new, {marked['unchanged']:,} already on the base{fixed} "
                f"({_counts(findings)})\n")
    if not findings:
        return "### ci-tools: no findings\n"
    return f"### ci-tools: {_counts(findings)}\n"


def _code(text: str) -> str:
    return f"`{text}`".replace("|", "\\|")


def row(finding: Finding, context: ReportContext = PLAIN) -> str:
    message = short(finding.message)
    for r in finding.related:
        note = f" ({r.note})" if r.note else ""
        message += f"\nrelated: {r.as_text()}{note}"
    where = finding.location
    location = _code(where.as_text()) if where.in_repository else cell(where.as_text())
    url = context.links.url(finding) if context.links is not None else None
    if url is not None:
        location = f"[{location}]({url})"
    rule = f"[{_code(finding.rule)}]({rule_url(finding.rule)})"
    return f"| {finding.severity.value} | {rule} | {location} | {cell(message)} |\n"


def _by_severity(findings: list[Finding]) -> list[Finding]:
    """Errors first, then warnings, then notes (stable: file order within a severity), so that a cut of the
    job summary drops the least important."""
    return sorted(findings, key=lambda f: f.severity.rank)


def _suppressed_rows(context: ReportContext) -> list[str]:
    return [f"| [{_code(f.rule)}]({rule_url(f.rule)}) | {_code(f.location.as_text())} | "
            f"{cell(short(s.reason))} (`.ci-tools.yaml:{s.line}`) |\n" for f, s in context.suppressed]


def _sections(findings: list[Finding], context: ReportContext) -> Iterator[tuple[str, Sequence[str], str]]:
    """(text before the rows, rows, text after them) of each part of the report, in order."""
    current, existing, fixed = by_baseline(findings)
    marked = baseline_counts(findings) is not None
    if current:
        yield "\n" + HEADER, [row(f, context) for f in _by_severity(current)], ""
    elif marked:
        yield "\nNo new findings.\n", [], ""
    for title, group in ((EXISTING_TITLE, existing), (FIXED_TITLE, fixed)):
        if group:
            yield (f"\n<details><summary>{len(group):,} {title}</summary>\n\n" + HEADER,
                   [row(f, context) for f in _by_severity(group)], "\n</details>\n")
    if context.suppressed:
        yield (f"\n<details><summary>{len(context.suppressed):,} suppressed by <code>ignore</code> in "
               ".ci-tools.yaml</summary>\n\n| Rule | Location | Reason |\n|---|---|---|\n",
               _suppressed_rows(context), "\n</details>\n")


def document(findings: list[Finding], context: ReportContext = PLAIN, limit: int | None = None) -> tuple[str, int]:
    """The report, at most ``limit`` bytes of UTF-8 when given, and how many finding rows it holds.

    When the limit cuts it, the rows that do not fit are counted in a note instead (the open section
    is closed first, so the Markdown stays well formed).
    """
    parts = [heading(findings)]
    used = len(parts[0].encode("utf-8"))
    rows = 0
    total = len(findings) + len(context.suppressed)
    for before, section, after in _sections(findings, context):
        needed = len(before.encode("utf-8")) + len(after.encode("utf-8"))
        if limit is not None and used + needed > limit and section:
            return "".join(parts) + _cut_note(total - rows), rows
        parts.append(before)
        used += len(before.encode("utf-8"))
        for text in section:
            size = len(text.encode("utf-8"))
            if limit is not None and used + size + len(after.encode("utf-8")) > limit:
                return "".join(parts) + after + _cut_note(total - rows), rows
            parts.append(text)
            used += size
            rows += 1
        parts.append(after)
        used += len(after.encode("utf-8"))
    return "".join(parts), rows


def _cut_note(left: int) -> str:
    return (f"\n**{left} more finding(s) not shown**: GitHub limits a step's job summary to 1 MiB. "
            "Run `ci-tools` with `--format json` or `--format sarif` for the full list.\n")


def render(findings: list[Finding], context: ReportContext = PLAIN) -> str:
    return document(findings, context)[0]


_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+!|~<>])")


def md_escape(text: str) -> str:
    """Inline text from a repository made inert: one line, Markdown specials escaped, no @mention, no HTML."""
    flat = " ".join(str(text).split())
    return _MD_SPECIAL.sub(r"\\\1", flat).replace("@", "&#64;")
