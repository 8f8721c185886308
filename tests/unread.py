"""The rule no clause escapes: a clause that names a known setting beside a value gives a claim or a note.

The detector here is the tests' own, simpler than the reader's: a setting is named by its identifier as the
catalog spells it (``--flag``, ``flag-name``, ``flag_name``, ``NAME``, a key's path or its end), a value is a
number, a dtype or true/false written apart from that name (or after its ``=``).  A clause with both must be
the place of a claim or of a ``claim-unverified`` note; :func:`silent_clauses` lists those that are neither.
"""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path
from typing import Any, Iterable

from ci_tools.claims.text.claim import Extraction
from ci_tools.claims.text.sentences import Clause, SourceText, split_clauses
from ci_tools.claims.text.subjects import Catalog, ClaimsSettings
from ci_tools.findings import Location

HISTORY = Path(__file__).resolve().parent / "data" / "claims_history" / "clauses.json.gz"

_WORD = re.compile(r"--?[A-Za-z][\w.-]*(?:=[^\s,;)`'\"]+)?|[A-Za-z_][\w.-]*(?:=[^\s,;)`'\"]+)?|\d[\d.,]*[kKmM%]?")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*[kKmM%]?")
_VALUE_WORDS = {"fp4", "fp8", "bf16", "fp16", "fp32", "bfloat16", "float16", "int8", "int4", "true", "false",
                # on/off said as a verb or a word
                "enable", "enables", "enabled", "disable", "disables", "disabled", "on", "off"}


def load_history() -> tuple[list[Catalog], list[tuple[str, int, str]]]:
    """The catalogs and (commit, catalog index, text) of every changelog bullet of the recorded history."""
    with gzip.open(HISTORY, "rt", encoding="utf-8") as stream:
        data: dict[str, Any] = json.load(stream)
    names: list[str] = data["names"]
    catalogs = []
    for record in data["catalogs"]:
        cat = Catalog(settings=ClaimsSettings())
        for i in record["subjects"]:
            kind, _, name = names[i].partition(" ")
            cat.add(kind, name)
        cat.boolean_flags = {names[i].partition(" ")[2] for i in record["boolean"]}
        cat.values = {names[int(i)].partition(" ")[2]: set(v) for i, v in record["values"].items()}
        cat.spelled_flags = frozenset(record["spelled"])
        cat.lists = {n: tuple(items) for n, items in record["lists"].items()}
        catalogs.append(cat)
    return catalogs, [(c, at, text) for c, at, text in data["texts"]]


def spellings(cat: Catalog) -> set[str]:
    """Every way the catalog's identifiers are written: the name, without its dashes, in snake case, and a key
    by its path and by the last two parts of its address."""
    out: set[str] = set()
    for s in cat.subjects.values():
        out.add(s.name)
        bare = s.name.lstrip("-")
        if s.kind == "flag" and "-" in bare:
            out.update({bare, bare.replace("-", "_")})
        if s.kind == "key":
            parts = [p.replace("-", "_") for p in bare.split(".")]
            out.update({".".join(parts[-2:]), s.key_path})
    # A plain lower-case word ("model", a shell variable) is no identifier a sentence would spell.
    return {x for x in out if x.startswith("--") or re.search(r"[-_.]", x) or (x.isupper() and len(x) > 3)}


def names_a_setting_and_a_value(text: str, known: set[str]) -> bool:
    words = _WORD.findall(text)
    named = False
    valued = False
    for w in words:
        name, eq, value = w.partition("=")
        if name in known:
            named = True
            valued = valued or bool(eq and value)
        elif _NUMBER.fullmatch(w) or w.lower() in _VALUE_WORDS:
            valued = True
    return named and valued


def _inside(loc: Location, clause: Location) -> bool:
    start, end = (clause.line, clause.column), (clause.end_line, clause.end_column)
    return start <= (loc.line, loc.column) < end or start < (loc.end_line, loc.end_column) <= end


def silent_clauses(source: SourceText, found: Extraction, known: set[str]) -> Iterable[Clause]:
    """Clauses of ``source`` that name a setting and a value, where the extraction left neither claim nor note."""
    places = [c.location for c in found.claims] + [u.location for u in found.unverified]
    for clause in split_clauses(source):
        if not names_a_setting_and_a_value(clause.text, known):
            continue
        where = source.location(clause.start, clause.end)
        if not any(_inside(p, where) for p in places):
            yield clause
