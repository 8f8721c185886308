"""The prose of a Markdown text (a PR description): fenced code blocks and HTML comments blanked out, tables
read as the sentences their rows state.

A code block in a PR description is a command run, a log, a repro or the old command line, and an HTML comment is
the PR template's own guidance: neither is what the change claims of its recipes.  They are replaced by spaces
(line breaks kept), so that every finding on the prose keeps its line and column.  A table that gives settings
(:mod:`.tables`) is replaced by one sentence a row, each character of which keeps the position of the cell it
came from.
"""

from __future__ import annotations

import re

from .sentences import SourceText, plain_source
from .tables import tables

# A fenced block: ``` or ~~~ at a line's start (up to three spaces in) to the same fence, or to the text's end.
_FENCED = re.compile(r"^[ ]{0,3}(?P<fence>`{3,}|~{3,})[^\n]*\n.*?(?:^[ ]{0,3}(?P=fence)[ \t]*$|\Z)",
                     re.MULTILINE | re.DOTALL)
_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)


def _blank(match: re.Match[str]) -> str:
    return re.sub(r"[^\n]", " ", match.group())


def prose_of(text: str) -> str:
    """``text`` with its fenced code blocks and HTML comments replaced by spaces, line breaks kept."""
    return _COMMENT.sub(_blank, _FENCED.sub(_blank, text))


def pr_body_source(path: str, text: str) -> SourceText:
    """A PR description as the claims checker reads it: its prose, without code blocks and template comments."""
    prose = prose_of(text)
    plain = plain_source(path, prose)
    found = tables(prose)
    if not found:
        return plain
    chars: list[str] = []
    positions: list[tuple[int, int]] = []
    cursor = 0
    for table in found:
        chars.append(prose[cursor:table.start])
        positions.extend(plain.positions[cursor:table.start])
        for row in table.rows:
            for piece, at in row.pieces:
                chars.append(piece)
                positions.extend(plain.positions[row.anchor] if at is None else plain.positions[at + k]
                                 for k in range(len(piece)))
            chars.append("\n")
            positions.append(plain.positions[row.anchor])
        cursor = table.end
    chars.append(prose[cursor:])
    positions.extend(plain.positions[cursor:])
    return SourceText(path, "".join(chars), tuple(positions))
