"""Concurrencies as prose writes them: ``conc 4-64``, ``c48 and above``, ``conc-list [1, 2, 4]``, ``c1/2/4``."""

from __future__ import annotations

import re
from dataclasses import dataclass

from .scope import Scope
from .sentences import Clause
from .values import Concurrency

# A number that another concurrency follows is the value of a setting there, not a point of this list ("8192 at conc
# 1/32 and 16384 at conc 512": the list is 1/32).
_VALUE_AT = r"(?!\d|\s+(?:at|for|on|in|with)\s+(?:conc|c\d))"
_CONC_LIST = (r"\[?\s*\d+(?:\s*(?:,\s*(?:and\s+|or\s+)?|/|\s+and\s+|\s+or\s+|\.\.|-|–|\s+to\s+|\s+through\s+)\s*\d+"
              + _VALUE_AT + r")*\s*\]?")
_CONC_RE = re.compile(
    r"(?<![\w-])(?:conc(?:urrenc(?:y|ies))?(?:-list)?|并发)\s*(?:=|:|of|-(?=\d))?\s*(?P<list>" + _CONC_LIST + r")(?![\w.])",
    re.IGNORECASE,
)
# ("c10::AcceleratorError" is a C++ namespace, "c924543" a commit: neither is a concurrency)
# ("c128, c160 and c196", "c128、c160 和 c196": one list, its last point after "and" as after a comma)
_C_RE = re.compile(r"(?<![\w/.-])c(?P<list>\d{1,5}(?:\s*(?:/|-|–)\s*c?\d{1,5}|(?:,|、)\s*(?:and\s+|or\s+)?c\d{1,5}|"
                   r"\s+(?:and|or|和|及)\s+c\d{1,5})*)(?![\w.:])")
# Capitals only as a list ("C1/C2/C4"), or alone in a clause that has such a list ("TP8 C1 and TP4
# C1/C5/C10"): a lone "C4" elsewhere may be something else (a dataset, a compiler).
_CAPITAL_C_LIST = re.compile(r"(?<![\w/.-])C(?P<list>\d+(?:/C\d+)+)(?![\w.])")
_CAPITAL_C = re.compile(r"(?<![\w/.-])C(?P<list>\d+(?:/C\d+)*)(?![\w.])")
_CONC_WORD = r"conc(?:urrenc(?:y|ies))?"  # "conc", "concurrency", "concurrencies"
# One number, not the start of a list or range ("over conc 4-64" is the range the sweep runs over, not a bound).
_ONE_NUMBER = r"(?P<{}>\d+)(?![\w.]|\s*(?:-|–|/|\.\.|,\s*\d|\s+(?:to|and|or|through)\s+\d))"
_ABOVE_WORDS = r"(?:above|over|beyond|past|exceeding|(?:greater|more|higher|larger)\s+than)"
_BELOW_WORDS = r"(?:below|under|(?:less|lower|smaller|fewer)\s+than)"
# A comparison names the jobs of a condition ("when CONC>128", "conc >= 64", "above conc 32"), never points the
# sweep is said to run.
_COMPARED = re.compile(r"(?<![\w-])(?:conc(?:urrency)?\s*(?P<op>>=|≥|>)\s*(?P<n>\d+)(?![\w.])|"
                       r"(?:" + _ABOVE_WORDS + r"\s+(?:" + _CONC_WORD + r"\s*=?\s*|c)|" + _CONC_WORD + r"\s+" +
                       _ABOVE_WORDS + r"\s+)" + _ONE_NUMBER.format("above") + ")", re.IGNORECASE)
# An upper bound names the jobs of a condition too ("conc <= 32", "concurrencies up to 32", "c32 and below",
# "below conc 64"); "below" and "under" leave the number out.
_AT_MOST = re.compile(r"(?<![\w-])(?:" + _CONC_WORD + r"\s*(?P<op><=|≤|<)\s*(?P<n>\d+)|"
                      + _CONC_WORD + r"\s+(?:of\s+)?(?:up\s+to|at\s+most|through)\s+(?P<n2>\d+)|"
                      r"(?:(?:" + _CONC_WORD + r"\s+(?:of\s+)?" + _BELOW_WORDS + r"\s+)|" + _BELOW_WORDS +
                      r"\s+(?:" + _CONC_WORD + r"\s*=?\s*|c))" + _ONE_NUMBER.format("below") + "|"
                      r"(?:" + _CONC_WORD + r"\s*|c)(?P<n3>\d+)\s+(?:and|or)\s+(?:below|lower|under|less))(?![\w.])",
                      re.IGNORECASE)
# ("c48+" glued: a "+" after a space joins two arms, "conc 1-32 + DP-attn conc 64-2048")
_AT_LEAST = re.compile(r"\s*(?:and above|and higher|or above|or higher|or more|及以上|以上)|\+")
_ONLY_AFTER = re.compile(r"\s*\)?\s*only\b", re.IGNORECASE)
_ONLY_BEFORE = re.compile(r"\bonly\s+(?:at\s+|on\s+|the\s+)?$", re.IGNORECASE)
# The points a purpose speaks of ("Lower X to 0.90 so concurrency 56 and 70 leave room for ..."): some of the sweep's,
# named for why, not every point of it.
_PURPOSE_BEFORE = re.compile(r"\bso(?:\s+that)?\s+(?:the\s+)?$", re.IGNORECASE)
# Where something was seen, not points run ("the device pool cliffs around conc 10-16", "49 points concentrated
# around concurrency 8-24"): an approximation names no point.
_APPROXIMATELY = re.compile(r"\b(?:around|about|roughly|approximately|near|nearly)\s*$|~\s*$", re.IGNORECASE)
# A list that adds points to a sweep names some of its points, not all of them.
_ADDITIVE = re.compile(r"\b(?:add|adds|added|adding|extend\w*|includ\w*|plus|also|new|more|extra|additional|"
                       r"append\w*|insert\w*|e\.g\.|such as|including|like)\b", re.IGNORECASE)


@dataclass(frozen=True)
class ConcSpec:
    value: Concurrency
    start: int  # character offsets in the source text
    end: int
    exhaustive: bool  # the text names every point of its arm: a list, a range, or "only"
    condition: bool = False  # a comparison ("CONC>128"): it narrows what the clause is about and claims nothing


# The points of a later arm of a parallel list, its noun left out after the first ("TP16 at concurrency 1-8, TEP16
# at 4-32, and DEP16 at 16-128", "concurrency 1-8 for latency, 4-32 for balanced"): a range or list of whole numbers
# after "at" or a list's separator, with no unit after it.
_GAPPED = re.compile(r"(?:\bat\s+|(?:,|;|\+|\band\b|\bplus\b)\s*(?:and\s+)?)"
                     r"(?P<list>\d+(?:\s*(?:-|–|/|,\s*(?:and\s+)?)\s*\d+)+)"
                     r"(?![\w.%/-]|\s*(?:[kKMG]\b|[GM]i?B\b|tokens?\b|x\b|ms\b|s\b|nodes?\b|GPUs?\b|%))")


# A colon right after a concurrency that opens its clause: the concurrency labels what follows.
_LABEL_AFTER = re.compile(r"[ \t]*:(?![\d/])")


def parse_conc(text: str) -> tuple[tuple[int, ...], bool]:
    body = text.strip().strip("[]")
    is_range = bool(re.search(r"\d\s*(?:-|–|\.\.|\bto\b|\bthrough\b)\s*c?\d", body))
    values = tuple(int(v) for v in re.findall(r"\d+", body))
    if is_range and len(values) == 2:
        # ("conc512-20" is a recipe file's name, its "range" running downwards: no points)
        return (values, True) if values[0] <= values[1] else ((), False)
    if is_range:
        return (), False  # "4-8, 16": too irregular to read
    return values, False


def conc_specs(clause: Clause) -> list[ConcSpec]:
    """Every concurrency spec of a clause, in reading order."""
    text = clause.source.text
    out: list[ConcSpec] = []
    seen: list[tuple[int, int]] = []
    additive = bool(_ADDITIVE.search(clause.text))
    capitals = _CAPITAL_C if _CAPITAL_C_LIST.search(text, clause.start, clause.end) else _CAPITAL_C_LIST
    for m in _COMPARED.finditer(text, clause.start, clause.end):
        n = int(m.group("above")) + 1 if m.group("above") else int(m.group("n")) + (1 if m.group("op") == ">" else 0)
        seen.append((m.start(), m.end()))
        out.append(ConcSpec(Concurrency(m.group(), (n,), at_least=n), m.start(), m.end(), False, condition=True))
    for m in _AT_MOST.finditer(text, clause.start, clause.end):
        if m.group("below"):
            n = int(m.group("below")) - 1
        else:
            n = int(m.group("n") or m.group("n2") or m.group("n3")) - (1 if m.group("op") == "<" else 0)
        seen.append((m.start(), m.end()))
        # every point up to the bound: a scope of the jobs that run one of them (a condition, no claim of points)
        out.append(ConcSpec(Concurrency(m.group(), tuple(range(1, n + 1))), m.start(), m.end(), False, condition=True))
    irregular: list[tuple[int, int]] = []
    for rx in (_CONC_RE, _C_RE, capitals):
        for m in rx.finditer(text, clause.start, clause.end):
            a, b = m.start(), m.end()
            if any(a < e and s < b for s, e in seen):
                continue
            values, is_range = parse_conc(m.group("list"))
            if not values or _APPROXIMATELY.search(text, max(clause.start, a - 16), a):
                irregular.append((a, b))  # "conc 1-2 and 32-64": too irregular to read, and no list to go on from
                continue
            tail = _AT_LEAST.match(text, b, clause.end)
            if tail and tail.group() == "+" and text[b - 1].isspace():
                tail = None  # (the list took the space before it)
            at_least = values[-1] if tail and len(values) == 1 else None
            if at_least is not None and tail:
                b = tail.end()
            seen.append((a, b))
            if "=" in text[a:b] and _LABEL_AFTER.match(text, b) and not text[clause.start:a].strip(" \t-*•("):
                # "conc=2048/4096: mega_moe deepep backend; ...": the recipe's branch (CONC=2048) that the
                # settings after it are for, a condition; not points the sweep is said to run ("conc 4096: drop
                # the 4p2d arm" names a point of the sweep)
                out.append(ConcSpec(Concurrency(text[a:b], values, is_range, at_least), a, b, False, condition=True))
                continue
            only = bool(_ONLY_AFTER.match(text, b, clause.end) or _ONLY_BEFORE.search(text, clause.start, a))
            # ("so" may be left at the end of the clause before)
            purpose = bool(_PURPOSE_BEFORE.search(text, max(0, clause.start - 10), a))
            exhaustive = at_least is None and not purpose and (only or ((is_range or len(values) > 1) and not additive))
            out.append(ConcSpec(Concurrency(text[a:b], values, is_range, at_least), a, b, exhaustive))
    out += _gapped_specs(clause, out, seen + irregular, additive)
    out.sort(key=lambda s: s.start)
    return out


def _gapped_specs(clause: Clause, found: list[ConcSpec], seen: list[tuple[int, int]], additive: bool) -> list[ConcSpec]:
    """The later points of a parallel list whose first named its noun (``TP16 at concurrency 1-8, TEP16 at 4-32``):
    read only after a concurrency written with its word that is a range or a list itself."""
    text = clause.source.text
    first = next((s for s in found if not s.condition and _CONC_RE.fullmatch(s.value.text)
                  and (s.value.is_range or len(s.value.values) > 1)), None)
    if first is None:
        return []
    out: list[ConcSpec] = []
    for m in _GAPPED.finditer(text, first.end, clause.end):
        a, b = m.start("list"), m.end("list")
        if any(m.start() <= e and s < b for s, e in seen):
            continue
        values, is_range = parse_conc(m.group("list"))
        if not values:
            continue
        seen.append((a, b))
        out.append(ConcSpec(Concurrency(text[a:b], values, is_range), a, b, not additive))
    return out


def conc_scope(spec: ConcSpec) -> Scope:
    """The jobs a concurrency spec names: its points, every point of its range, or those at its bound and above."""
    value = spec.value
    if value.at_least is not None:
        return Scope(conc_min=value.at_least)
    if value.is_range:
        return Scope(concs=frozenset(range(value.values[0], value.values[-1] + 1)))
    return Scope(concs=frozenset(value.values))


def doubling(lo: int, hi: int) -> list[int]:
    """The points of a range as the sweep generator steps it (each twice the one before)."""
    out: list[int] = []
    v = lo
    while 0 < v < hi:
        out.append(v)
        v *= 2
    out.append(hi)
    return out
