"""Findings in the order a reader of a pull request wants them: the change's own, then the rest."""

from __future__ import annotations

from ..findings import Baseline, Finding

EXISTING_TITLE = "already on the base revision"
FIXED_TITLE = "fixed by this change"


def by_baseline(findings: list[Finding]) -> tuple[list[Finding], list[Finding], list[Finding]]:
    """(the change's own findings, or every finding when nothing was compared; those already on the base;
    those the change fixed), each in the order given."""
    current = [f for f in findings if f.baseline in (None, Baseline.NEW)]
    existing = [f for f in findings if f.baseline is Baseline.UNCHANGED]
    fixed = [f for f in findings if f.baseline is Baseline.ABSENT]
    return current, existing, fixed
