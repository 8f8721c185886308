"""Words of a clause, each with its offsets in the source text."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from typing import AbstractSet, Sequence

from ...findings import Location
from .sentences import Clause, SourceText
from .values import IMAGE_RE


@dataclass(frozen=True)
class Tok:
    text: str
    start: int  # offsets in the clause's source text
    end: int
    kind: str  # flag | assign | image | word | cjk | arrow | punct

    @cached_property
    def low(self) -> str:  # asked of each token many times over (a million times in a replay of the history)
        return self.text.lower()


# "1,800", "2,097,152": one number with its thousands separators (a list has no 3-digit groups after commas).
THOUSANDS = r"\d{1,3}(?:,\d{3})+(?![\d,])"
# "--flag=[1, 2, 4]", "NAME=[1,2]": a bracketed list after "=" is read as a list (its own tokens), not glued to
# the name as a value "[1".
_TOKEN = re.compile(
    r"(?P<image>" + IMAGE_RE.pattern.replace("(?P<ref>", "(?:") + r")"
    r"|(?P<flag>--[A-Za-z0-9][A-Za-z0-9_-]*(?:\.[A-Za-z0-9_][A-Za-z0-9_-]*)*(?:=" + THOUSANDS + r"|=(?!\[)[^\s,;)\]`'\"]+)?)"
    r"|(?P<assign>[A-Za-z_][A-Za-z0-9_]*=(?:" + THOUSANDS + r"|(?!\[)[^\s,;)\]、，。`'\"]+))"
    r"|(?P<arrow>→|->|=>|⇒)"
    r"|(?P<thousands>" + THOUSANDS + r")"
    r"|(?P<word>[A-Za-z0-9_](?:[A-Za-z0-9_.+/%-]*[A-Za-z0-9_%])?)"
    r"|(?P<cjk>[\u4e00-\u9fff]+)"
    r"|(?P<punct>\S)"
)


# Marks that only set words apart (`--flag`, 'fp8', "auto"): not words of their own (what a quote says of
# somebody else's words is read from the text itself, see context.mask_history).
_QUOTE_MARKS = frozenset("`'\"‘’“”")


def back_over(toks: Sequence[Tok], i: int, words: AbstractSet[str], most: int = 3) -> int:
    """The index of the first token before ``i`` that is not one of ``words`` (lower-case), walking back over at
    most ``most`` of them (-1 when the clause starts first): where a negation that spans such words stands."""
    k = i - 1
    while k >= 0 and i - k <= most and toks[k].low in words:
        k -= 1
    return k


def tokenize(clause: Clause) -> list[Tok]:
    text = clause.source.text
    out: list[Tok] = []
    for m in _TOKEN.finditer(text, clause.start, clause.end):
        kind = m.lastgroup or "punct"
        if kind == "thousands":
            kind = "word"
        elif kind == "punct" and m.group() in _QUOTE_MARKS:
            continue
        out.append(Tok(m.group(), m.start(), m.end(), kind))
    return out


@dataclass
class Reading:
    """A clause's tokens and, per token, whether it is masked (history) or used (already read as a value)."""

    source: SourceText
    toks: list[Tok]
    masked: list[bool]
    used: list[bool]
    # Masked tokens a value link reads past: the default of "X is 256 by default and 128 on TP8", said beside the
    # value of the named jobs the clause's claim is about.
    passed: frozenset[int] = frozenset()

    def live(self, i: int) -> bool:
        return 0 <= i < len(self.toks) and not self.masked[i] and not self.used[i]

    def loc(self, start: int, end: int) -> Location:
        return self.source.location(self.toks[start].start, self.toks[end - 1].end)

    def masked_span(self, a: int, b: int) -> bool:
        """Any token overlapping the character span [a, b) is masked."""
        return any(self.masked[k] for k, t in enumerate(self.toks) if t.start < b and a < t.end)

    def use_span(self, a: int, b: int) -> None:
        for k, t in enumerate(self.toks):
            if t.start < b and a < t.end:
                self.used[k] = True

    def index_at(self, offset: int) -> int:
        """The token holding character ``offset`` (or the first one after it)."""
        for k, t in enumerate(self.toks):
            if t.end > offset:
                return k
        return len(self.toks)
