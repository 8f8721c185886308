"""The head's findings marked by the base's: new, unchanged, absent (see :mod:`ci_tools.check.baseline`)."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from typing import Sequence

from ..findings import Baseline, Finding, finding_key


def mark(head: Sequence[Finding], base: Sequence[Finding], relabel: tuple[str, str] | None = None) -> list[Finding]:
    """The head's findings marked new or unchanged, followed by the base's that the head lacks, marked absent.

    ``relabel`` (base label, head label): messages that name the revision they were found in (``does not
    exist in the work tree``) are compared as if found in the head.
    """
    def key(finding: Finding, at_base: bool) -> str:
        if at_base and relabel is not None and relabel[0] in finding.message:
            finding = replace(finding, message=finding.message.replace(relabel[0], relabel[1]))
        return finding_key(finding)

    left = Counter(key(f, True) for f in base)
    out: list[Finding] = []
    for finding in head:
        k = key(finding, False)
        if left[k] > 0:
            left[k] -= 1
            out.append(replace(finding, baseline=Baseline.UNCHANGED))
        else:
            out.append(replace(finding, baseline=Baseline.NEW))
    # The base's findings beyond what the head matched are the ones the change fixed (the last of equal ones).
    for finding in reversed(base):
        k = key(finding, True)
        if left[k] > 0:
            left[k] -= 1
            out.append(replace(finding, baseline=Baseline.ABSENT))
    return out
