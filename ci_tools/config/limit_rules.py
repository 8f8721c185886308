"""Rules that bound the work of one run (``limits:`` in ``.ci-tools.yaml``)."""

from __future__ import annotations

from ..findings import register

FAMILY = "limits"

FILE_TOO_LARGE = register(
    "file-too-large",
    summary="a governed file is larger than `limits.max-file-bytes`",
    what="Measures every master config, the runners file and the changelog before parsing them, and reports a file "
         "larger than the limit (8 MiB by default) at the file instead of reading it.",
    why="A runaway append or a generated file would otherwise stall the PR job for minutes and flood its log; "
        "the real files are a few hundred KB.",
    example="# perf-changelog.yaml grew from 0.4 MB to 50 MB in one change\nperf-changelog.yaml: error: ... is 52,428,800 bytes",
    fix="Remove what was appended by mistake; if the file really has to be that large, raise `limits.max-file-bytes` "
        "in .ci-tools.yaml.",
    family=FAMILY,
)
TOO_MANY_APPENDED = register(
    "changelog-too-many-entries",
    summary="a change appends more changelog entries than `limits.max-appended-entries`",
    what="Counts the entries a change appends to the changelog before the claims and coverage checks read them; "
         "beyond the limit (100 by default) only the first entries up to the limit are checked further.",
    why="Every appended entry costs a recipe evaluation of each of its jobs; thousands of entries are a mistake "
        "(a duplicated file, a bad merge), not a benchmark change.",
    example="# 13 copies of the whole history appended at once\n- config-keys:\n    - dsr1-fp8-mi355x-atom\n...",
    fix="Append only the entries of this change; if a change really needs more, raise `limits.max-appended-entries`.",
    family=FAMILY,
)
