"""Where each word of a YAML string was written, so that a flag split off it points at its own line.

An llm-d recipe gives a role's vLLM flags as one folded string
(``extra-args: >-`` and one or two flags a line); ``server.sh`` splits it
into words on the command line.  :func:`word_spans` reads the string's
source text and gives :attr:`Value.spans <ci_tools.shell.model.Value.spans>`
with one span per word at its line and column, when the words of the source
are exactly the words of the loaded string (block scalars, plain scalars;
a quoted scalar with escapes that change a word is left whole).
"""

from __future__ import annotations

import re

from ...findings import Location
from ...shell.model import Value

_WORD = re.compile(r"\S+")


def word_spans(where: Location, source: bytes, text: str) -> tuple[tuple[int, Location | Value], ...]:
    """Spans of ``text`` (a string loaded from ``where`` in ``source``): each word at its source position,
    the blanks between words at ``where``; () when the source's words are not the string's."""
    written = _source_words(where, source.decode("utf-8", "replace").split("\n"))
    words = [m for m in _WORD.finditer(text)]
    if [w for w, _ in written] != [m.group() for m in words]:
        return ()
    out: list[tuple[int, Location | Value]] = []
    at = 0
    for m, (word, loc) in zip(words, written):
        if m.start() > at:
            out.append((len(text[at:m.start()].encode()), where))
        out.append((len(word.encode()), loc))
        at = m.end()
    if at < len(text):
        out.append((len(text[at:].encode()), where))
    return tuple(out)


def _source_words(where: Location, lines: list[str]) -> list[tuple[str, Location]]:
    """The words written between ``where``'s start and end, with their positions (a block scalar's
    indicator line left out; quotes around a quoted scalar taken off)."""
    first, column, last, end_column = where.line, where.column, where.end_line, where.end_column
    if not 0 < first <= last <= len(lines) + 1:
        return []
    out: list[tuple[str, Location]] = []
    for number in range(first, min(last, len(lines)) + 1):
        line = lines[number - 1]
        start = column - 1 if number == first else 0
        stop = end_column - 1 if number == last else len(line)
        chunk = line[start:stop]
        if number == first and chunk[:1] in (">", "|"):
            continue  # the block scalar's header (`>-`, `|2`): its words start on the next line
        if number == first and chunk[:1] in ("'", '"'):
            start, chunk = start + 1, chunk[1:]
        if number == last and chunk[-1:] in ("'", '"') and lines[first - 1][column - 1:column] == chunk[-1:]:
            chunk = chunk[:-1]
        for m in _WORD.finditer(chunk):
            col = start + m.start() + 1
            out.append((m.group(), Location(where.path, number, col, number, col + len(m.group()))))
    return out
