"""Markdown tables of a PR description, read as the sentences their rows state.

A description often gives its settings as a table rather than in prose::

    | Flag                    | Before | After |        | setting               | TP8  | TP4  |
    |-------------------------|--------|-------|        |-----------------------|------|------|
    | `--mem-fraction-static` | 0.80   | 0.88  |        | --mem-fraction-static | 0.82 | 0.95 |

Read as prose, a row is a subject with two bare numbers and no verb: at best a "no value next to the subject" note.
Each row whose first cell names something and whose header says what its other columns hold becomes the sentence
it stands for ("Change `--mem-fraction-static` from 0.80 to 0.88.", "Set --mem-fraction-static to 0.82 on TP8 and
0.95 on TP4."), every character of which points back at the cell it came from, so a finding lands on the row's
own line.  A column is read by its header: the state after the change ("After", "New", "Value", "Proposed"), the
state before it ("Before", "Old", "Current", "Baseline"), or an arm of the sweep ("TP8", "8k1k", "decode").  Any
other column (notes, results, reasons) is not read, and a table with no column of the state after the change or of
an arm (results, a before-only list) states nothing.  A table with the arms down its first column and a setting a
column ("| Arm | --max-num-seqs |" over "| TP8 | 128 |") states a sentence a cell, of the columns whose header
spells a setting as recipes do.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

from .arms import names_an_arm

# The header words of a column holding the state after the change, and before it (their first word decides:
# "New value", "After (this PR)", "Before (main)").
_NEW_WORDS = frozenset({"after", "new", "now", "to", "proposed", "updated", "value", "values"})
_OLD_WORDS = frozenset({"before", "old", "was", "from", "previous", "prev", "baseline", "main", "original",
                        "current"})
# A cell that gives no value: left empty, a dash, or said to be as it was.
_NO_VALUE = frozenset({"", "-", "--", "—", "–", "n/a", "na", "unchanged", "same", "(unchanged)", "(same)"})
_DELIMITER = re.compile(r"^\s*\|?\s*:?-+:?\s*(?:\|\s*:?-+:?\s*)*\|?\s*$")
# A column header that names a setting as the recipes spell one ("--max-num-seqs", "--tp", "`mem_fraction_static`",
# "SGLANG_USE_AITER", "PYTHONHASHSEED"), not a word of a result ("conc", "Throughput", "TTFT (ms)"): a row of arms states only those.
_SETTING_NAME = re.compile(r"`?(?:--[A-Za-z][\w.-]*|[A-Za-z][\w.]*[-_.][\w.-]*|[A-Z][A-Z0-9]{3,})`?")
# A trailing parenthesis of the first cell qualifies the row: "`--mem-fraction-static` (TP8)".
_QUALIFIED = re.compile(r"^(?P<subject>.*?\S)\s*\((?P<qualifier>[^()]+)\)$")


@dataclass(frozen=True)
class Cell:
    """A cell's text without its padding and emphasis, and where that text starts in the description."""

    text: str
    start: int

    def part(self, start: int, end: int) -> Cell:
        return Cell(self.text[start:end], self.start + start)


@dataclass(frozen=True)
class Row:
    """One sentence a table row states: its pieces, each a text and where in the description its first character
    was written (a cell's text), or None for the words joining them, which point at ``anchor``."""

    pieces: tuple[tuple[str, int | None], ...]
    anchor: int  # the row's first cell


@dataclass(frozen=True)
class Table:
    """A table of the description that states values: where it starts and ends, and its rows' sentences."""

    start: int
    end: int
    rows: tuple[Row, ...]


def _cell(text: str, start: int) -> Cell:
    """``text`` (a raw cell) without surrounding spaces and ``**``/``__`` emphasis."""
    lead = len(text) - len(text.lstrip())
    inner = text.strip()
    while len(inner) >= 4 and inner[:2] == inner[-2:] and inner[:2] in ("**", "__"):
        body = inner[2:-2]
        lead += 2 + len(body) - len(body.lstrip())
        inner = body.strip()
    return Cell(inner, start + lead)


def _cells(line: str, offset: int) -> list[Cell]:
    """The cells of a table line: split at ``|`` outside backticks and not escaped, the outer pipes dropped."""
    bounds: list[int] = []
    in_code = False
    for i, ch in enumerate(line):
        if ch == "`":
            in_code = not in_code
        elif ch == "|" and not in_code and (i == 0 or line[i - 1] != "\\"):
            bounds.append(i)
    edges = [-1, *bounds, len(line)]
    cells = [(edges[k] + 1, edges[k + 1]) for k in range(len(edges) - 1)]
    if cells and not line[cells[0][0]:cells[0][1]].strip():
        cells = cells[1:]  # "| a | b |": nothing before the first pipe
    if cells and not line[cells[-1][0]:cells[-1][1]].strip():
        cells = cells[:-1]
    return [_cell(line[a:b], offset + a) for a, b in cells]


def _header_kind(cell: Cell) -> str:
    """What a column holds by its header: "new", "old", "arm" or "" (not read)."""
    words = _words(cell.text)
    if not words:
        return ""
    if words[0] in _NEW_WORDS or " ".join(words[:2]) == "this pr":
        return "new"
    if words[0] in _OLD_WORDS:
        return "old"
    return "arm" if _names_arms(cell.text) else ""


def _words(text: str) -> list[str]:
    return [w for w in (w.strip("*_`()[]:,.") for w in text.lower().split()) if w]


def _names_arms(text: str) -> bool:
    """Every word of the cell names an arm of the sweep: "TP8", "TP4 decode", "8k1k"."""
    words = _words(text)
    return bool(words) and all(names_an_arm(w) for w in words)


def _value(cell: Cell | None) -> Cell | None:
    return None if cell is None or cell.text.lower() in _NO_VALUE else cell


def _sentence(subject: Cell, kinds: Sequence[str], header: Sequence[Cell], row: Sequence[Cell]) -> list[
        tuple[str, int | None]] | None:
    """The pieces of the sentence a row states, or None when it states no value of its subject."""
    cells: list[Cell | None] = [row[i] if i < len(row) else None for i in range(len(kinds))]
    qualifier: Cell | None = None
    m = _QUALIFIED.match(subject.text)
    if m:
        qualifier = subject.part(m.start("qualifier"), m.end("qualifier"))
        subject = subject.part(0, m.end("subject"))
    given = [(k, header[i] if i < len(header) else None, v) for i, (k, c) in enumerate(zip(kinds, cells))
             if (v := _value(c)) is not None]
    new = [v for k, _, v in given if k == "new"]
    old = [v for k, _, v in given if k == "old"]
    arms = [(h, v) for k, h, v in given if k == "arm" and h is not None]
    pieces: list[tuple[str, int | None]]
    if new:
        pieces = [("Change " if old else "Set ", None), (subject.text, subject.start)]
        if old:
            pieces += [(" from ", None), (old[0].text, old[0].start)]
        pieces += [(" to ", None), (new[0].text, new[0].start)]
    elif arms:
        pieces = [("Set ", None), (subject.text, subject.start), (" to ", None)]
        for n, (name, cell) in enumerate(arms):
            if n:
                pieces.append((" and ", None))
            pieces += [(cell.text, cell.start), (" on ", None), (name.text, name.start)]
    else:
        return None
    if qualifier is not None:  # "for TP8": the scope as prose words it (a parenthesis after a value reads less surely)
        pieces += [(" for ", None), (qualifier.text, qualifier.start)]
    return pieces + [_end_of(row)]


def _end_of(row: Sequence[Cell]) -> tuple[str, int | None]:
    """The full stop of a row's sentence, at the row's last character: the sentence then spans its row, whatever
    order its words take the cells in."""
    ends = [c.start + len(c.text) - 1 for c in row if c.text]
    return (".", max(ends) if ends else None)


def _across(arm: Cell, name: Cell, cell: Cell) -> tuple[tuple[str, int | None], ...]:
    """The sentence of one cell of a row of arms: "Set --max-num-seqs to 128 on TP8."  The setting's name points
    at the row (its first cell): the finding belongs there, not on the header."""
    return (("Set ", None), (name.text, None), (" to ", None), (cell.text, cell.start), (" on ", None),
            (arm.text, arm.start), _end_of([arm, cell]))


def tables(prose: str) -> list[Table]:
    """Every Markdown table of ``prose`` whose rows state a value, with those rows as sentences."""
    lines: list[tuple[int, str]] = []
    offset = 0
    for line in prose.split("\n"):
        lines.append((offset, line))
        offset += len(line) + 1
    out: list[Table] = []
    i = 0
    while i + 1 < len(lines):
        (start, head), (_, rule) = lines[i], lines[i + 1]
        if "|" not in head or "|" not in rule or not _DELIMITER.match(rule):
            i += 1
            continue
        header = _cells(head, start)
        body: list[tuple[int, str]] = []
        j = i + 2
        while j < len(lines) and "|" in lines[j][1] and lines[j][1].strip():
            body.append(lines[j])
            j += 1
        end = body[-1][0] + len(body[-1][1]) if body else lines[i + 1][0] + len(rule)
        rows = [_cells(text, row_start) for row_start, text in body]
        kinds = [""] + [_header_kind(c) for c in header[1:]]
        stated: list[Row] = []
        if header and _header_kind(header[0]) == "" and any(k in ("new", "arm") for k in kinds):
            for row in rows:
                if not row or not re.search(r"[A-Za-z]", row[0].text):
                    continue
                pieces = _sentence(row[0], kinds, header, row)
                if pieces is not None:
                    stated.append(Row(tuple(pieces), row[0].start))
        elif header and rows and all(row and _names_arms(row[0].text) for row in rows) and not any(kinds):
            # Arms down the first column, a setting a column: "| Arm | --mem-fraction-static |" / "| TP8 | 0.82 |".
            for row in rows:
                for name, cell in zip(header[1:], row[1:]):
                    if _value(cell) is not None and _SETTING_NAME.fullmatch(name.text):
                        stated.append(Row(_across(row[0], name, cell), row[0].start))
        if stated:
            out.append(Table(start, end, tuple(stated)))
        i = j
    return out
