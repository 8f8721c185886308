"""GitHub workflow-command annotations for the most important findings.

``::error file=F,line=L,col=C,endLine=..,endColumn=..,title=T::MESSAGE``.
The message (data) escapes ``%``, CR and LF; property values also escape
``:`` and ``,``, which would otherwise end the value or the property list.

GitHub shows at most 10 error and 10 warning annotations per step (and 50 per
job); the rest are dropped without a word.  So at most
:data:`ANNOTATIONS_PER_SEVERITY` of each severity are emitted, chosen so that
every rule that fired is seen before any rule is seen twice, and the last line
says how many more there are; :mod:`ci_tools.report.summary_file` writes the
full list to the job summary.
"""

from __future__ import annotations

from collections import defaultdict

from ..findings import Finding, Location, Severity, summarize
from .context import PLAIN, ReportContext
from .groups import by_baseline
from .text import counts_line

ANNOTATIONS_PER_SEVERITY = 10

_COMMANDS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.NOTE: "notice"}


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _properties(location: Location, title: str) -> str:
    if not location.in_repository:  # the PR description: no file to attach to, so the annotation stands alone
        return f"title={escape_property(title)}"
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
    where = finding.location
    message = finding.message if where.in_repository else f"{where.as_text()}: {finding.message}"
    for r in finding.related:
        note = f" ({r.note})" if r.note else ""
        message += f"\nrelated: {r.as_text()}{note}"
    title = f"ci-tools {finding.rule}"
    return f"::{_COMMANDS[finding.severity]} {_properties(finding.location, title)}::{escape_data(message)}"


def most_important(findings: list[Finding], per_severity: int = ANNOTATIONS_PER_SEVERITY) -> list[Finding]:
    """At most ``per_severity`` findings of each severity, in the order given.

    Within a severity the rules take turns (each rule's first finding, then
    each rule's second, ...), so 592 `recipe-missing` errors cannot hide the
    one `changelog-entry-removed`.
    """
    chosen: set[int] = set()
    for severity in Severity:
        by_rule: dict[str, list[int]] = defaultdict(list)
        for index, finding in enumerate(findings):
            if finding.severity is severity:
                by_rule[finding.rule].append(index)
        queues = list(by_rule.values())
        picked = 0
        depth = 0
        while picked < per_severity and any(depth < len(q) for q in queues):
            for queue in queues:
                if depth < len(queue) and picked < per_severity:
                    chosen.add(queue[depth])
                    picked += 1
            depth += 1
    return [f for index, f in enumerate(findings) if index in chosen]


def render(findings: list[Finding], context: ReportContext = PLAIN) -> str:
    """Annotations for the change's own findings (every finding when nothing was compared with a base):
    those already on the base or fixed by the change are in the job summary, not on the diff."""
    current, existing, fixed = by_baseline(findings)
    shown = most_important(current)
    lines = [annotation(f) for f in shown]
    if findings:
        total, annotated = summarize(current), summarize(shown)
        lines.append(counts_line(findings))
        if len(shown) < len(current):
            counts = ", ".join(f"{total[k] - annotated[k]:,} {k}(s)" for k in ("error", "warning", "note")
                               if total[k] > annotated[k])
            lines.append(f"not annotated: {counts} (GitHub shows {ANNOTATIONS_PER_SEVERITY} annotations of each "
                         "severity per step); every finding is in the job summary, and in --format json or sarif")
        if existing or fixed:
            parts = [f"{len(existing):,} already on the base revision"] if existing else []
            parts += [f"{len(fixed):,} fixed by this change"] if fixed else []
            lines.append(f"not annotated: {' and '.join(parts)}; they are listed in the job summary")
    return "\n".join(lines) + ("\n" if lines else "")
