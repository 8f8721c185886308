"""The inference server's command line: found by pattern, parsed into flags.

A command is a server launch when its expanded argv contains one of the
configured patterns (``vllm serve``, ``python* -m sglang.launch_server``)
as consecutive words, so wrappers in front (``exec``, ``nohup``, ``mpirun
-n 1``, ``env X=1``, an array of prefixes) do not hide it.  Pattern words
are shell globs; the first, the program, is matched on its basename
(``/usr/bin/python3``).  A program whose name is unknown until run time
(``"$SGLANG_PYTHON" -m sglang.launch_server``, the interpreter held in a
variable) matches when the rest of the pattern does.  Interpreter options
between pattern words (``python3 -u -m ...``) are skipped.  The words after the pattern
are parsed as flags: ``--flag value``, ``--flag=value``, and boolean flags
(followed by another flag or by nothing).  Positional words (the model in
``vllm serve MODEL``) are not flags and are skipped.  ``vllm serve``,
``sglang serve`` and ``trtllm-serve`` take the model as their first word:
that word is the positional model even when its value is unknown
(``vllm serve "$MODEL_PATH"``), not a word that may be a flag.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass
from functools import cached_property, lru_cache

from .expand import Field, Piece, known_prefix, significant
from .model import ServerFlag, Value

UNKNOWN_FLAG = "<unknown>"
_NEGATIVE_NUMBER = re.compile(r"^-[0-9.]")
_GLOB_CHARS = frozenset("*?[")


@dataclass(frozen=True)
class LaunchPattern:
    """One configured launch form: a program (glob, matched on its basename) and the words after it."""

    text: str
    program: str
    rest: tuple[str, ...]

    @cached_property
    def literal_words(self) -> tuple[str, ...]:
        """Words a command must spell to match (globs left out): a cheap pre-filter on source text."""
        words = ((self.program,) if self.program else ()) + self.rest
        return tuple(w for w in words if not _GLOB_CHARS & set(w))

    def program_matches(self, word: str | None) -> bool:
        if word is None:
            # An interpreter held in a variable ("$SGLANG_PYTHON" -m sglang.launch_server): the
            # words after it must then identify the launch on their own.
            return bool(self.rest)
        return _glob_match(_basename(word), self.program)

    def end_of_match(self, words: list[str | None], start: int) -> int | None:
        """Index just after the pattern when it starts at ``words[start]``, else None."""
        if not self.program_matches(words[start]):
            return None
        return _match_rest(words, start + 1, self.rest)


@lru_cache(maxsize=256)
def _glob_regex(pattern: str) -> re.Pattern[str]:
    return re.compile(fnmatch.translate(pattern))


def _glob_match(word: str, pattern: str) -> bool:
    if not _GLOB_CHARS & set(pattern):
        return word == pattern
    return _glob_regex(pattern).match(word) is not None


# Launch forms whose first argument is the model (`vllm serve MODEL`, `trtllm-serve MODEL`): (program, rest).
_POSITIONAL_MODEL = frozenset({("vllm", ("serve",)), ("sglang", ("serve",)), ("trtllm-serve", ())})


def takes_model_first(pattern: LaunchPattern) -> bool:
    """Whether the server this pattern starts takes the model as its first word."""
    return (pattern.program, pattern.rest) in _POSITIONAL_MODEL


@lru_cache(maxsize=8)
def split_patterns(patterns: tuple[str, ...]) -> tuple[LaunchPattern, ...]:
    out = []
    for p in patterns:
        words = p.split()
        if words:
            out.append(LaunchPattern(p, words[0], tuple(words[1:])))
    return tuple(out)


def find_pattern(words: list[str | None], patterns: tuple[LaunchPattern, ...]) -> int | None:
    """Index just after the first pattern occurrence in ``words``, or None."""
    found = find_launch(words, patterns)
    return found[0] if found is not None else None


def find_launch(words: list[str | None], patterns: tuple[LaunchPattern, ...]) -> tuple[int, LaunchPattern] | None:
    """The first pattern occurrence in ``words``: the index just after it, and the pattern; or None."""
    anchors = _ANCHORS.get(patterns)
    if anchors is None:
        anchors = _anchors(patterns)
    if anchors and not any(w is not None and (w in anchors or _basename(w) in anchors) for w in words):
        return None
    for start in range(len(words)):
        for pat in patterns:
            end = pat.end_of_match(words, start)
            if end is not None:
                return end, pat
    return None


_ANCHORS: dict[tuple[LaunchPattern, ...], frozenset[str]] = {}


def _anchors(patterns: tuple[LaunchPattern, ...]) -> frozenset[str]:
    """Words of which every match holds at least one: the last literal word of each pattern."""
    found = frozenset(p.literal_words[-1] for p in patterns if p.literal_words)
    if any(not p.literal_words for p in patterns):
        found = frozenset()  # a pattern of globs only: no pre-filter
    _ANCHORS[patterns] = found
    return found


def _match_rest(words: list[str | None], at: int, rest: tuple[str, ...]) -> int | None:
    """Match the pattern's remaining words, skipping interpreter options (``python3 -u -m ...``)."""
    for word in rest:
        while at < len(words) and not _word_matches(words[at], word) and _is_option(words[at]) and not _is_option(word):
            at += 1
        if at >= len(words) or not _word_matches(words[at], word):
            return None
        at += 1
    return at


def _word_matches(word: str | None, pattern: str) -> bool:
    return word is not None and _glob_match(word, pattern)


def _is_option(word: str | None) -> bool:
    return word is not None and word.startswith("-") and word != "-m"


def _basename(word: str) -> str:
    return word.rsplit("/", 1)[-1]


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


def _known_flag_name(field: Field, value: Value) -> str | None:
    """``--name`` of a ``--name=...`` word whose known leading text holds the ``=``."""
    prefix = known_prefix(field.pieces) or value.known_prefix
    if prefix.startswith("--") and "=" in prefix:
        return prefix.split("=", 1)[0]
    return None


def parse_flags(fields: list[Field], values: list[Value], model_first: bool = False) -> list[ServerFlag]:
    """Flags of a server argv (the words after the pattern).

    ``model_first``: the server takes the model as its first word (see :func:`takes_model_first`); a
    first word that is not a flag, known or not, is that positional argument.
    """
    flags: list[ServerFlag] = []
    i = 0
    if model_first and values and not _is_flag(values[0].text) and (
            values[0].text is not None or _known_flag_name(fields[0], values[0]) is None):
        i = 1
    while i < len(values):
        v = values[i]
        text = v.text
        if text is None:
            name = _known_flag_name(fields[i], v)
            if name is not None:
                # `--port=$PORT` with PORT unknown: the flag is known, its value is not.
                flags.append(ServerFlag(name, _after_equals(fields[i], v), v.location, v.conditional))
            else:
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
