"""GitHub workflow-command annotations, one per finding.

``::error file=F,line=L,col=C,endLine=..,endColumn=..,title=T::MESSAGE``.
The message (data) escapes ``%``, CR and LF; property values also escape
``:`` and ``,``, which would otherwise end the value or the property list.
GitHub shows at most 10 error and 10 warning annotations per step, which is why
:mod:`ci_tools.render.summary_file` writes the full list to the job summary.
"""

from __future__ import annotations

from ..findings import Finding, Location, Severity, summarize

_COMMANDS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.NOTE: "notice"}


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _properties(location: Location, title: str) -> str:
    props = [("file", location.path)]
    if location.line > 0:
        props.append(("line", str(location.line)))
        if location.column > 0:
            props.append(("col", str(location.column)))
        if location.end_line >= location.line:
            props.append(("endLine", str(location.end_line)))
            # GitHub accepts endColumn only for annotations on a single line.
            if location.end_line == location.line and location.end_column > location.column > 0:
                props.append(("endColumn", str(location.end_column)))
    props.append(("title", title))
    return ",".join(f"{name}={escape_property(value)}" for name, value in props)


def annotation(finding: Finding) -> str:
    message = finding.message
    for r in finding.related:
        note = f" ({r.note})" if r.note else ""
        message += f"\nrelated: {r.as_text()}{note}"
    title = f"ci-tools {finding.rule}"
    return f"::{_COMMANDS[finding.severity]} {_properties(finding.location, title)}::{escape_data(message)}"


def render(findings: list[Finding]) -> str:
    lines = [annotation(f) for f in findings]
    if findings:
        s = summarize(findings)
        lines.append(f"{s['error']} error(s), {s['warning']} warning(s), {s['note']} note(s)")
    return "\n".join(lines) + ("\n" if lines else "")
