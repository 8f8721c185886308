"""The one line ``check`` ends with: what was compared, how much was checked, the result.

A clean run used to print nothing, which reads the same as a run that
checked nothing.  The line is built from what the check context already
loaded (the stages loaded the head's configs and the changelog), plus the
jobs those configs generate, which cost a few milliseconds to count.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..findings import Finding, baseline_counts, summarize

if TYPE_CHECKING:
    from . import CheckContext


@dataclass(frozen=True)
class CheckSummary:
    compared: str
    changed_files: int | None  # None: nothing compared
    master_files: int
    configs: int
    jobs: int
    changelog: str  # "773 changelog entries (1 appended)", or why they were not counted
    findings: dict[str, int]
    hidden: int  # findings dropped by --select/--ignore
    baseline: dict[str, int] | None = None  # new / unchanged / absent, when the base was checked too
    suppressed: int = 0  # findings `ignore:` in .ci-tools.yaml suppressed

    def line(self) -> str:
        changed = "" if self.changed_files is None else f", {self.changed_files:,} file(s) changed"
        counts = [f"{self.findings[k]:,} {k}(s)" for k in ("error", "warning", "note") if self.findings[k]]
        result = ", ".join(counts) if counts else "no findings"
        marked = self.baseline
        if marked is not None and (counts or marked["absent"]):
            fixed = f", {marked['absent']:,} fixed" if marked["absent"] else ""
            result = f"{marked['new']:,} new, {marked['unchanged']:,} already on the base{fixed} ({result})"
        if self.suppressed:
            result += f"; {self.suppressed:,} suppressed by `ignore` in .ci-tools.yaml"
        if self.hidden:
            result += f" ({self.hidden:,} more left out by --select/--ignore)"
        return (f"ci-tools check: {self.compared}{changed}; {self.master_files} master file(s), {self.configs:,} configs, "
                f"{self.jobs:,} jobs, {self.changelog}: {result}")


def _changelog_counts(ctx: CheckContext) -> str:
    change = ctx.changelog
    if change.head_bytes is None:
        return f"no {change.path}"
    if change.oversized:
        return f"{change.path} not read (over the size limit)"
    if change.binary is not None:
        return f"{change.path} not read (not text)"
    total = len(change.head.blocks) if change.head is not None else 0
    appended = f" ({len(change.diff.new_blocks):,} appended)" if ctx.compared and change.diff is not None else ""
    return f"{total:,} changelog entries{appended}"


def summarize_check(ctx: CheckContext, kept: list[Finding], hidden: int, suppressed: int = 0) -> CheckSummary:
    """The summary of a finished check; ``kept`` are the findings reported, ``hidden`` those --select/--ignore
    left out, ``suppressed`` those ``ignore:`` in .ci-tools.yaml did."""
    from ..jobs.matrix import count_jobs

    comparison = ctx.comparison
    head = comparison.head or "the work tree"
    if ctx.compared:
        base = ctx.base_snapshot
        named = "" if base.sha.startswith(base.rev) else f"{base.rev}, "
        compared = f"base {base.sha[:12]} ({named}{comparison.source}) against {head}"
        changed: int | None = len(ctx.changed_paths)
    else:
        compared = f"{head} alone ({comparison.source or 'no base revision'})"
        changed = None
    repo = ctx.head_configs_repo
    return CheckSummary(compared, changed, len(repo.master_files), len(repo.configs), count_jobs(repo),
                        _changelog_counts(ctx), summarize(kept), hidden, baseline_counts(kept), suppressed)
