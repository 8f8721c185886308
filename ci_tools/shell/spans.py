"""Where the parts of a text were written: resolving :attr:`Value.spans <ci_tools.shell.model.Value.spans>`.

A value built from other values (a command string, the flags of a recipe
YAML's ``extra-args``) keeps its parts in order, each its length in bytes and
where it was written (a location, or the value it was copied from, whose own
spans say more).  These functions answer where a byte range of such a text
was written, so that a word split off it, or a word of a string run later,
points there instead of at the line that assigned the whole text.
"""

from __future__ import annotations

from typing import Iterator

from ..findings import Location
from .model import Value

# A part of a text: its length in bytes, and where it was written (or the value it was copied from).
Span = tuple[int, "Location | Value"]
# A byte range of a text and where it was written.
Segment = tuple[int, int, Location]
_MAX_DEPTH = 32


def segments(spans: tuple[Span, ...], start: int = 0, end: int | None = None, depth: int = 0) -> Iterator[Segment]:
    """The byte ranges of a text with ``spans`` (from ``start``, cut at ``end``) and where each was written."""
    at = start
    for size, origin in spans:
        stop = at + size if end is None else min(at + size, end)
        if stop <= at:
            break
        if isinstance(origin, Value):
            if origin.spans and depth < _MAX_DEPTH:
                yield from segments(origin.spans, at, stop, depth + 1)
            else:
                yield at, stop, origin.location
        else:
            yield at, stop, origin
        at += size


def written_at(spans: tuple[Span, ...], start: int, end: int) -> Location | None:
    """Where the bytes ``start``..``end`` of a text with ``spans`` were written, when one place wrote all of them."""
    for a, b, loc in segments(spans):
        if a <= start and end <= b:
            return loc
        if a > start:
            break
    return None
