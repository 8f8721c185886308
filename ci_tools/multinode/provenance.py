"""Where each part of a built string was written, so that words run from it can point there.

The AMD server scripts build a server's command line as a string
(``PREFILL_CMD="... ${PREFILL_SERVER_CONFIG}"``, itself echoed by a
function from ``$MODEL_BASE_FLAGS``, a value of ``models.yaml``) and run it
later (``bash -c "$PREFILL_CMD"``).  Once the string is parsed, a flag's
word is only a position in that string.  The chain interpreter therefore
gives the strings it builds :attr:`Value.spans <ci_tools.recipes.model.Value.spans>`:
byte ranges of the text and where each was written (:data:`Segment`),
innermost first (a string made of a variable whose own value was built from
others gives the ranges of those others).  A word of the run string that
lies within one range points at that place (a ``models.yaml`` line, the
assignment of ``PREFILL_TP_SIZE``), else at the line that built the string.
Spans travel with the values, through memoized calls too.
"""

from __future__ import annotations

from typing import Iterable

from ..findings import Location
from ..recipes.model import Value

# A byte range of a string's text and where it was written.
Segment = tuple[int, int, Location]


class Printed(str):
    """A command's output (``echo "$config"``) that remembers where its parts were written."""

    segments: tuple[Segment, ...] = ()


def joined(parts: Iterable[tuple[str, Value | Location | None]]) -> tuple[Segment, ...]:
    """Segments of texts written one after the other, each from a value or at a location (None: not kept)."""
    out: list[Segment] = []
    at = 0
    for text, origin in parts:
        size = len(text.encode())
        if origin is not None and size:
            if isinstance(origin, Location):
                out.append((at, at + size, origin))
            elif origin.spans and text == origin.text:
                out.extend((at + a, at + b, loc) for a, b, loc in origin.spans)
            else:
                out.append((at, at + size, origin.location))
        at += size
    return tuple(out)


def with_spans(value: Value, segments: tuple[Segment, ...]) -> Value:
    """``value`` carrying ``segments`` (itself when there are none)."""
    if not segments or segments == value.spans:
        return value
    v = value
    return Value(v.text, v.location, v.conditional, v.expression, v.alternatives, v.known_prefix, v.parts, v.lines,
                 segments)


def printed(text: str, parts: Iterable[tuple[str, Value | Location | None]]) -> str:
    """``text`` (what a command printed from ``parts``) carrying their segments."""
    segments = joined(parts)
    if not segments:
        return text
    out = Printed(text)
    out.segments = segments
    return out


def output_segments(outputs: list[str | None], size: int) -> tuple[Segment, ...]:
    """Segments of the outputs of a command substitution, joined and cut to ``size`` bytes (trailing newlines)."""
    out: list[Segment] = []
    at = 0
    for text in outputs:
        if text is None:
            return ()
        if isinstance(text, Printed):
            out.extend((at + a, min(at + b, size), loc) for a, b, loc in text.segments if at + a < size)
        at += len(text.encode())
    return tuple(out)


def written_at(segments: tuple[Segment, ...], start: int, end: int) -> Location | None:
    """Where the bytes ``start``..``end`` of a string were written, when one place wrote all of them."""
    for a, b, loc in segments:
        if a <= start and end <= b:
            return loc
    return None
