"""Where each part of a built string was written, so that words run from it can point there.

The AMD server scripts build a server's command line as a string
(``PREFILL_CMD="... ${PREFILL_SERVER_CONFIG}"``, itself echoed by a
function from ``$MODEL_BASE_FLAGS``, a value of ``models.yaml``) and run it
later (``bash -c "$PREFILL_CMD"``).  Once the string is parsed, a flag's
word is only a position in that string.  The chain interpreter therefore
gives the strings it builds :attr:`Value.spans <ci_tools.shell.model.Value.spans>`:
their parts in order, each its length and where it was written (a location,
or the value it was copied from, whose own spans say more).  A word of the
run string that lies within one part points at where that part was written
(a ``models.yaml`` line, the assignment of ``PREFILL_TP_SIZE``), else at the
line that built the string.  Spans travel with the values, through reused
calls too, and are resolved into byte ranges (:func:`segments`) only for the
strings that are run.
"""

from __future__ import annotations

from bisect import bisect_right
from typing import Iterable

from ...findings import Location
from ...shell.model import Value
from ...shell.spans import Segment, Span, segments, written_at

__all__ = ["Layout", "Printed", "Segment", "Span", "joined", "output_spans", "printed", "segments", "written_at"]


class Printed(str):
    """A command's output (``echo "$config"``) that remembers where its parts were written."""

    spans: tuple[Span, ...] = ()


def joined(parts: Iterable[tuple[str, Value | Location]]) -> tuple[Span, ...]:
    """Spans of texts written one after the other, each copied from a value or written at a location."""
    out: list[Span] = []
    for text, origin in parts:
        if not text:
            continue
        size = len(text.encode())
        if isinstance(origin, Value) and text != origin.text:
            origin = origin.location  # a piece of the value (a word split off): where the value was written
        if out and out[-1][1] is origin:
            out[-1] = (out[-1][0] + size, origin)
        else:
            out.append((size, origin))
    return tuple(out)


def printed(text: str, parts: Iterable[tuple[str, Value | Location]]) -> str:
    """``text`` (what a command printed from ``parts``) carrying their spans."""
    spans = joined(parts)
    if not spans:
        return text
    out = Printed(text)
    out.spans = spans
    return out


def output_spans(outputs: list[str | None]) -> tuple[Span, ...]:
    """Spans of the outputs of a command substitution, joined (text not printed by a modelled command: none)."""
    out: list[Span] = []
    for text in outputs:
        if text is None:
            return ()
        if isinstance(text, Printed):
            out.extend(text.spans)
        elif text:
            return ()
    return tuple(out)


class Layout:
    """The segments of one run string, resolved once: a string of many words is asked about each."""

    def __init__(self, spans: tuple[Span, ...]) -> None:
        found = list(segments(spans))
        self._starts = [a for a, _, _ in found]
        self._segments = found

    def written_at(self, start: int, end: int) -> Location | None:
        """As :func:`written_at`: the one segment that holds ``start``..``end`` (an empty range at a boundary
        belongs to the segment before it)."""
        i = bisect_right(self._starts, start) - 1
        if i < 0:
            return None
        if i > 0 and start == end and self._segments[i - 1][1] == start:
            i -= 1
        _, stop, loc = self._segments[i]
        if end <= stop:
            return loc
        # several parts, all written on one line (`--prefill http://${IP_ARRAY[$i]}:8000`): that line
        places = [loc]
        for a, stop, other in self._segments[i + 1:]:
            if a >= end:
                break
            places.append(other)
        if all(p.path == loc.path and p.line == p.end_line == loc.line for p in places):
            return Location(loc.path, loc.line, min(p.column for p in places), loc.line,
                            max(p.end_column for p in places))
        return None
