"""The inference server's command line: found by pattern, parsed into flags.

A command is a server launch when its expanded argv contains one of the
configured patterns (``vllm serve``, ``python3 -m sglang.launch_server``)
as consecutive words, so wrappers in front (``exec``, ``nohup``,
``numactl ...``, ``env X=1``) do not hide it.  The words after the pattern
are parsed as flags: ``--flag value``, ``--flag=value``, and boolean flags
(followed by another flag or by nothing).  Positional words (the model in
``vllm serve MODEL``) are not flags and are skipped.
"""

from __future__ import annotations

import re
from functools import lru_cache

from .expand import Field, Piece, significant
from .model import ServerFlag, Value

UNKNOWN_FLAG = "<unknown>"
_NEGATIVE_NUMBER = re.compile(r"^-[0-9.]")


@lru_cache(maxsize=8)
def split_patterns(patterns: tuple[str, ...]) -> list[list[str]]:
    return [p.split() for p in patterns if p.split()]


def find_pattern(words: list[str | None], patterns: list[list[str]]) -> int | None:
    """Index just after the first pattern occurrence in ``words``, or None."""
    firsts = {p[0] for p in patterns}
    if not any(w is not None and (w in firsts or _basename(w) in firsts) for w in words):
        return None
    for start in range(len(words)):
        for pat in patterns:
            if _basename(words[start]) != pat[0]:
                continue
            end = _match_rest(words, start + 1, pat[1:])
            if end is not None:
                return end
    return None


def _match_rest(words: list[str | None], at: int, rest: list[str]) -> int | None:
    """Match the pattern's remaining words, skipping interpreter options (``python3 -u -m ...``)."""
    for word in rest:
        while at < len(words) and words[at] != word and _is_option(words[at]) and not _is_option(word):
            at += 1
        if at >= len(words) or words[at] != word:
            return None
        at += 1
    return at


def _is_option(word: str | None) -> bool:
    return word is not None and word.startswith("-") and word != "-m"


def _basename(word: str | None) -> str | None:
    return word.rsplit("/", 1)[-1] if word else word


def _is_flag(text: str | None) -> bool:
    return text is not None and text.startswith("-") and not _NEGATIVE_NUMBER.match(text) and text != "-"


def _after_equals(field: Field, value: Value) -> Value:
    """The part of ``--flag=VALUE`` after ``=``, attributed to its variable when one makes it up."""
    for i, p in enumerate(field.pieces):
        if p.text is None:
            break
        if "=" in p.text:
            rest_text = p.text.split("=", 1)[1]
            rest = significant(([Piece(rest_text, p.origin)] if rest_text else []) + field.pieces[i + 1:])
            if len(rest) == 1 and rest[0].origin is not None and rest[0].text == rest[0].origin.text:
                return rest[0].origin
            texts = [r.text for r in rest]
            text = None if any(t is None for t in texts) else "".join(t for t in texts if t is not None)
            return Value(text, value.location, value.conditional, value.expression)
    tail = value.text.split("=", 1)[1] if value.text and "=" in value.text else None
    return Value(tail, value.location, value.conditional, value.expression)


def parse_flags(fields: list[Field], values: list[Value]) -> list[ServerFlag]:
    """Flags of a server argv (the words after the pattern)."""
    flags: list[ServerFlag] = []
    i = 0
    while i < len(values):
        v = values[i]
        text = v.text
        if text is None:
            # An unknown word where a flag is expected: it could be anything.
            flags.append(ServerFlag(UNKNOWN_FLAG, v, v.location, v.conditional))
            i += 1
            continue
        if not _is_flag(text):
            i += 1  # positional argument
            continue
        if text.startswith("--") and "=" in text:
            name = text.split("=", 1)[0]
            flags.append(ServerFlag(name, _after_equals(fields[i], v), v.location, v.conditional))
            i += 1
            continue
        nxt = values[i + 1] if i + 1 < len(values) else None
        if nxt is None or _is_flag(nxt.text):
            flags.append(ServerFlag(text, None, v.location, v.conditional))
            i += 1
        else:
            flags.append(ServerFlag(text, nxt, v.location, v.conditional))
            i += 2
    return flags
