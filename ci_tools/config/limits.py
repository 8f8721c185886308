"""Bounds on what one run reads: the ``limits:`` section of ``.ci-tools.yaml``.

A governed file past these bounds is one finding at the file instead of a
job that runs for minutes and then buries its log in annotations: a 50 MB
append to the changelog took ``check`` over 500 s before these limits, and
``validate`` 20 s and 1.1 GB.  The defaults leave room to grow: the real
InferenceX changelog is 0.4 MB after two years, its largest master file
0.3 MB, and the most entries one commit of its history appended is 51.

Example::

    limits:
      max-file-bytes: 16777216      # every master config, the runners file, the changelog
      max-appended-entries: 200     # entries one change may append to the changelog
"""

from __future__ import annotations

from dataclasses import dataclass

from ..findings import Finding, Location, make_finding
from . import ProjectConfig
from .limit_rules import FILE_TOO_LARGE

DEFAULT_MAX_FILE_BYTES = 8 * 1024 * 1024
DEFAULT_MAX_APPENDED_ENTRIES = 100


@dataclass(frozen=True)
class Limits:
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES
    max_appended_entries: int = DEFAULT_MAX_APPENDED_ENTRIES


def limits_of(config: ProjectConfig) -> Limits:
    """The configured limits (the schema has checked that each is a positive integer)."""
    section = config.section("limits")
    return Limits(
        max_file_bytes=int(section.get("max-file-bytes", DEFAULT_MAX_FILE_BYTES)),
        max_appended_entries=int(section.get("max-appended-entries", DEFAULT_MAX_APPENDED_ENTRIES)),
    )


def describe_size(size: int) -> str:
    """``52,428,800 bytes (50.0 MiB)``, or ``640 bytes``, for messages."""
    mib = size / 1024 / 1024
    return f"{size:,} bytes ({mib:.1f} MiB)" if mib >= 1 else f"{size:,} bytes"


def too_large_finding(path: str, size: int, limit: int) -> Finding:
    """The one finding for a file over ``limits.max-file-bytes``; nothing else reads it."""
    return make_finding(
        FILE_TOO_LARGE,
        f"file is {describe_size(size)}, over the limit of {describe_size(limit)} (`limits.max-file-bytes` in "
        ".ci-tools.yaml), so it was not read; expected a smaller file, or a higher limit if it must be this large",
        Location(path), data={"path": path, "bytes": size, "limit": limit},
    )
