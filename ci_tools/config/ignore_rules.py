"""The rule about ``ignore:`` in ``.ci-tools.yaml`` (see :mod:`ci_tools.config.suppressions`)."""

from __future__ import annotations

from ..findings import Severity, register

IGNORE_UNUSED = register(
    "config-ignore-unused",
    summary="an `ignore` entry of .ci-tools.yaml suppresses no finding",
    what="After `check` has gathered its findings, reports each entry of `ignore:` that covered none of them, at the "
         "entry's line, naming its rule, path and reason.",
    why="A suppression outlives the defect it was written for: once the finding is fixed, a stale entry would "
        "silently hide the next finding of that rule in those files.",
    example="ignore:\n  - rule: runner-undefined\n    path: configs/nvidia-master.yaml\n"
            "    reason: gb300-nv is being renamed   # the rename has landed",
    fix="Remove the entry, or narrow it to what it is still meant to cover.",
    family="config",
    severity=Severity.WARNING,
)
