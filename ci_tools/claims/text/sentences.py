"""Prose split into sentences and clauses, every character tied to a file position.

A description bullet is a YAML scalar: its text differs from the bytes on disk
by quotes, escapes and line folding.  :func:`scalar_source` walks the raw
scalar once and records where each decoded character was written, so a claim
points at the exact line and column in ``perf-changelog.yaml``; when the walk
cannot reproduce the parsed value (an exotic scalar style), every character
maps to the scalar's start, which is still the right line.
"""

from __future__ import annotations

import bisect
import functools
import re
from dataclasses import dataclass

from ...findings import Location


@dataclass(frozen=True)
class SourceText:
    """A piece of prose and, per character, the (line, column) it was written at."""

    path: str
    text: str
    positions: tuple[tuple[int, int], ...]  # len(text) + 1 entries (the last is the end)

    def location(self, start: int, end: int, note: str = "") -> Location:
        start = max(0, min(start, len(self.text)))
        end = max(start, min(end, len(self.text)))
        line, col = self.positions[start]
        if end > start:
            end_line, end_col = self.positions[end - 1]
            end_col += 1
        else:
            end_line, end_col = line, col
        return Location(self.path, line, col, end_line, end_col, note)


@functools.lru_cache(maxsize=4)
def _line_starts(text: str) -> list[int]:
    """Offsets of each line's first character; cached: every description of one changelog reads the same text."""
    starts = [0]
    for m in re.finditer("\n", text):
        starts.append(m.end())
    return starts


def _pos(starts: list[int], offset: int) -> tuple[int, int]:
    i = bisect.bisect_right(starts, offset) - 1
    return (i + 1, offset - starts[i] + 1)


def plain_source(path: str, text: str, first_line: int = 1) -> SourceText:
    """A text file (a PR description): positions straight from the characters."""
    starts = _line_starts(text)
    positions = [(line + first_line - 1, col) for line, col in (_pos(starts, i) for i in range(len(text) + 1))]
    return SourceText(path, text, tuple(positions))


_ESCAPES = {"0": "\0", "a": "\a", "b": "\b", "t": "\t", "\t": "\t", "n": "\n", "v": "\v", "f": "\f",
            "r": "\r", "e": "\x1b", " ": " ", '"': '"', "/": "/", "\\": "\\", "N": "\x85", "_": "\xa0"}


def _walk_quoted(raw: str, i: int, quote: str) -> tuple[list[str], list[int]] | None:
    chars: list[str] = []
    offs: list[int] = []
    i += 1
    n = len(raw)
    while i < n:
        c = raw[i]
        if c == quote:
            if quote == "'" and i + 1 < n and raw[i + 1] == "'":
                chars.append("'")
                offs.append(i)
                i += 2
                continue
            return chars, offs
        if quote == '"' and c == "\\":
            if i + 1 >= n:
                return None
            e = raw[i + 1]
            if e == "\n":
                i += 2
                while i < n and raw[i] in " \t":
                    i += 1
                continue
            if e in "xuU":
                width = {"x": 2, "u": 4, "U": 8}[e]
                try:
                    chars.append(chr(int(raw[i + 2:i + 2 + width], 16)))
                except ValueError:
                    return None
                offs.append(i)
                i += 2 + width
                continue
            if e not in _ESCAPES:
                return None
            chars.append(_ESCAPES[e])
            offs.append(i)
            i += 2
            continue
        if c == "\n":
            # Line folding: trailing blanks dropped, one break -> space, more -> newlines.
            while chars and chars[-1] in " \t" and offs[-1] >= 0:
                chars.pop()
                offs.pop()
            breaks = 0
            j = i
            while j < n and raw[j] in " \t\n":
                if raw[j] == "\n":
                    breaks += 1
                j += 1
            if breaks == 1:
                chars.append(" ")
                offs.append(i)
            else:
                for _ in range(breaks - 1):
                    chars.append("\n")
                    offs.append(i)
            i = j
            continue
        chars.append(c)
        offs.append(i)
        i += 1
    return None


def _walk_plain(raw: str, i: int, value: str) -> tuple[list[str], list[int]] | None:
    chars: list[str] = []
    offs: list[int] = []
    n = len(raw)
    while i < n and len(chars) < len(value):
        c = raw[i]
        if c == "\n":
            j = i
            while j < n and raw[j] in " \t\n":
                j += 1
            chars.append(" ")
            offs.append(i)
            i = j
            continue
        chars.append(c)
        offs.append(i)
        i += 1
    return chars, offs


def scalar_source(path: str, file_text: str, line: int, column: int, value: str) -> SourceText:
    """Positions of a YAML scalar's characters, starting at 1-based (line, column)."""
    starts = _line_starts(file_text)
    fallback = SourceText(path, value, tuple([(line, column)] * (len(value) + 1)))
    if not 1 <= line <= len(starts):
        return fallback
    start = starts[line - 1] + column - 1
    if start >= len(file_text):
        return fallback
    first = file_text[start]
    walked = _walk_quoted(file_text, start, first) if first in "\"'" else (
        None if first in "|>" else _walk_plain(file_text, start, value))
    if walked is None:
        return fallback
    chars, offs = walked
    if "".join(chars) != value:
        return fallback
    end_off = offs[-1] + 1 if offs else start
    positions = [_pos(starts, o) for o in offs] + [_pos(starts, end_off)]
    return SourceText(path, value, tuple(positions))


@dataclass(frozen=True)
class Clause:
    source: SourceText
    start: int
    end: int
    sentence: int  # index of the sentence within its source
    index: int  # index of the clause within its sentence
    # For a clause cut out of a longer one (one band of "a ... band and a ... band"):
    # the whole clause, whose markers ("drop", "previously") still apply.
    whole: tuple[int, int] | None = None

    @property
    def text(self) -> str:
        return self.source.text[self.start:self.end]


# Sentence ends: ". " before a capital/number/quote/paren (not "e.g. ", "vs. ",
# "0.5.14"), "!", "?", ";", line breaks and the CJK full stops.
# The start of a list item's line: "- ", "* ", "+ ", "1. ", "2) " (the sentence splitter, a PR description's parts
# and a heading line's list all begin items so).
LIST_ITEM = r"[ \t]*(?:[-*+]|\d+[.)])[ \t]"
_SENTENCE_END = re.compile(
    r"(?<!\be\.g)(?<!\bi\.e)(?<!\bvs)(?<!\betc)(?<!\bapprox)[.!?](?=\s+[\"'(\[A-Z0-9\u4e00-\u9fff]|\s*$)"
    r"|;\s|[。！？；]"
    # Markdown: a blank line, or a line that starts a list item, heading, table row or quote.
    # A single line break inside a paragraph is a soft wrap, not the end of a sentence.
    r"|\n[ \t]*\n\s*|\n(?=" + LIST_ITEM + r"|[ \t]*(?:#|\||>))"
)
# Clause breaks inside a sentence.  A comma only breaks when a word (not a
# number, not "and <number>", not a point "c160") follows, so "concurrency 1, 2, 4, and 8",
# "c128, c160 and c196" and "[1, 4, 8]" stay whole.
_CLAUSE_BREAK = re.compile(
    # ... nor before a parallelism ("TP4, TP8, and DEP8 decode topologies" is one list), nor inside a condition
    # on sequence lengths and concurrency ("when ISL=8192, OSL=1024, and CONC>128").
    r",\s+(?=(?:and\s+|or\s+|but\s+|so\s+)?(?![0-9\[]|and\s+[0-9]|or\s+[0-9])"
    r"(?!(?:and\s+|or\s+)?(?:(?:TP|EP|DEP|TEP|DPA?|DCP)\d|(?:ISL|OSL|CONC)\s*(?:=|>|<|≥|≤)|c\d+\b))"
    r"[A-Za-z\-`'\"(\u4e00-\u9fff])"
    r"|:\s+|\s+(?:—|--|–)\s+|\s+(?:while|whereas|but|so that|so|because|since)\s+(?=[a-z])"
    # "... to 20260709 and retire the shims": a second verb starts a clause of its own.
    r"|,?\s+and\s+(?=(?:retire|remove|drop|delete|add|enable|disable|set|use|bump|switch|keep|retain|raise|lower|"
    r"pin|move|replace|update|increase|decrease|reduce|restore|revert|rename|tune|cap|limit|reserve|let|require|"
    r"follow|make|apply|pass|route|run|sweep|serve|export|gate|skip|force|fix|align|match|extend|expand)\s)"
    # ("、" before a point lists points, as in "c128、c160 和 c196": no clause starts there)
    r"|[，：]|、(?!\s*(?:c\d|并发|conc))|\s\(\s*(?=(?:was|previously|formerly|from)\b)"
)


# An arm's name, a colon and a number: the value of that arm ("TP: 64", "DEP8: 128", "MTP: 3").
_LABELLED_VALUE = re.compile(r"\b(?:TP|EP|DEP|TEP|DPA?|DCP)\d*:\s+\d\Z|\b(?:MTP|STP|non-MTP)\S*:\s+\d\Z", re.IGNORECASE)
# A setting's name and a colon ("--mem-fraction-static: 0.88", "moe_config.backend: CUTLASS", "kv-cache-dtype:
# fp8 -> bf16", "PYTHONUNBUFFERED: 1"): the colon gives the setting its value, as in a YAML mapping, and starts no clause.
_KEY_BEFORE = re.compile(r"(?:--?[A-Za-z][\w.-]*|[A-Za-z][A-Za-z0-9]*(?:[_.-][A-Za-z0-9]+)+|[A-Z][A-Z0-9]*_[A-Z0-9_]+|[A-Z][A-Z0-9]{5,})[`'\"]?\Z")
_VALUE = (r"[`'\"]?[\w.+%/\[\],-]+[`'\"]?(?:\s+[KkM](?!\w))?"
          r"(?:\s*(?:%|tokens?|seconds?|s|ms|GB|GiB|MB|MiB)(?!\w))?")
_ONE_VALUE = re.compile(_VALUE + r"(?:\s*(?:->|→|=>)\s*" + _VALUE + r")?"
                        r"(?:\s*[;)(]|\s*,\s|\s*\Z|\s+(?:on|for|in|at|to|across|with)\b)")


def _keyed_value(text: str, start: int, colon: int, end: int) -> bool:
    """``name: value`` with one value (or ``old -> new``) after the colon, up to the end of what it qualifies."""
    return bool(_KEY_BEFORE.search(text, start, colon)) and bool(_ONE_VALUE.match(text, colon + 1, end)
                                                                   if text[colon + 1:colon + 2] != " " else
                                                                   _ONE_VALUE.match(text, colon + 2, end))


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start] in " \t\n\"'":
        start += 1
    while end > start and text[end - 1] in " \t\n.":
        end -= 1
    return start, end


def split_sentences(source: SourceText) -> list[tuple[int, int]]:
    text = source.text
    out: list[tuple[int, int]] = []
    pos = 0
    for m in _SENTENCE_END.finditer(text):
        s, e = _trim(text, pos, m.start() + (1 if text[m.start()] in ".!?" else 0))
        if e > s:
            out.append((s, e))
        pos = m.end()
    s, e = _trim(text, pos, len(text))
    if e > s:
        out.append((s, e))
    return out


def _paren_depth(text: str, start: int, end: int) -> int:
    depth = 0
    for ch in text[start:end]:
        if ch in "(（":
            depth += 1
        elif ch in ")）" and depth:
            depth -= 1
    return depth


def split_clauses(source: SourceText) -> list[Clause]:
    """Every clause of every sentence, in reading order."""
    text = source.text
    clauses: list[Clause] = []
    for s_index, (s_start, s_end) in enumerate(split_sentences(source)):
        pos = s_start
        c_index = 0
        for m in _CLAUSE_BREAK.finditer(text, s_start, s_end):
            if _paren_depth(text, s_start, m.start()) > 0 and not m.group().lstrip().startswith("("):
                continue  # "(no EP, no DP-attention)" qualifies what precedes it
            if m.group().startswith(":") and _LABELLED_VALUE.search(text, s_start, m.end() + 1):
                continue  # "from TP: 64 / DEP: 128 to 256": an arm's value, not a new clause
            if m.group().startswith(":") and _keyed_value(text, s_start, m.start(), s_end):
                continue  # "--mem-fraction-static: 0.85 -> 0.88": the setting's value
            cs, ce = _trim(text, pos, m.start())
            if ce > cs:
                clauses.append(Clause(source, cs, ce, s_index, c_index))
                c_index += 1
            pos = m.end()
        cs, ce = _trim(text, pos, s_end)
        if ce > cs:
            clauses.append(Clause(source, cs, ce, s_index, c_index))
    return clauses
