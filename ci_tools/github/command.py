"""The ``/run-benchmark`` comment grammar.

Only the first non-blank line of a comment is read, the way Markdown renders
it: up to three leading spaces are ignored, four or more (or a tab) make an
indented code block, ``>`` a quote and a fence (```` ``` ```` / ``~~~``) a code
block; none of those is a command.  Everything after the first line is free
text for humans.

The grammar is deliberately small and strict: every word must be one this
module knows, every value is checked character by character, and anything else
is an error that says what was found and what is accepted.  A line that only
*looks* like the command (a Unicode slash look-alike, a zero-width character,
different case) is never a command; the caller may tell the author so.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Literal

COMMAND = "/run-benchmark"
SCENARIO_NAMES = ("fixed-seq-len", "agentic-coding")
# The longest first line considered; longer ones are refused without being parsed.
MAX_LINE = 1000
MAX_WORDS = 64
MAX_VALUES = 32
MAX_INT = 1_000_000
_GLOB = re.compile(r"^[A-Za-z0-9*][A-Za-z0-9._*-]{0,199}\Z")
_SHA = re.compile(r"^[0-9a-fA-F]{40}\Z")
_INT = re.compile(r"^[1-9][0-9]{0,6}\Z")
# Characters that render like "/" (UAX #39 confusables of U+002F, and the usual suspects).
SLASH_LOOKALIKES = {
    "\u2215": "DIVISION SLASH",
    "\uff0f": "FULLWIDTH SOLIDUS",
    "\u2044": "FRACTION SLASH",
    "\u29f8": "BIG SOLIDUS",
    "\u2571": "BOX DRAWINGS LIGHT DIAGONAL UPPER RIGHT TO LOWER LEFT",
    "\u27cb": "MATHEMATICAL RISING DIAGONAL",
    "\u3033": "VERTICAL KANA REPEAT MARK UPPER HALF",
    "\u30ce": "KATAKANA LETTER NO",
    "\u4e3f": "CJK UNIFIED IDEOGRAPH-4E3F",
    "\u2cc6": "COPTIC CAPITAL LETTER OLD COPTIC ESH",
    "\u1735": "PHILIPPINE SINGLE PUNCTUATION",
    "\u01c0": "LATIN LETTER DENTAL CLICK",
    "\u0338": "COMBINING LONG SOLIDUS OVERLAY",
}
USAGE = (
    "`/run-benchmark KEY-GLOB [KEY-GLOB ...] [conc=48,64] [tp=8] [ep=8] [scenario=agentic-coding] "
    "[evals] [baseline] [dry-run] [sha=<40 hex>]`, `/run-benchmark changelog [filters]` or `/run-benchmark help`"
)


@dataclass(frozen=True)
class Command:
    """A well-formed command, not yet checked against any repository."""

    action: Literal["run", "changelog", "help"]
    globs: tuple[str, ...] = ()
    conc: tuple[int, ...] = ()
    tp: tuple[int, ...] = ()
    ep: tuple[int, ...] = ()
    scenario: str | None = None
    evals: bool = False
    dry_run: bool = False
    sha: str | None = None
    # Also run the merge-base's recipes for the same points on the same runners, interleaved: a same-node baseline.
    baseline: bool = False


@dataclass(frozen=True)
class NotACommand:
    """The comment is not addressed to ci-tools.  ``note`` explains a near miss."""

    reason: str
    note: str | None = None


@dataclass(frozen=True)
class CommandError:
    """Addressed to ci-tools but malformed: ``problems`` say what and what is accepted."""

    problems: tuple[str, ...] = ()


ParseResult = Command | NotACommand | CommandError


def shown(text: str, limit: int = 40) -> str:
    """A user-supplied word made safe to quote inside a Markdown code span.

    Printable ASCII other than the backtick is kept; anything else becomes a
    ``\\uXXXX`` escape, so neither mentions, links, HTML nor invisible
    characters survive into a reply.
    """
    out: list[str] = []
    for ch in text[:limit]:
        if " " <= ch <= "~" and ch not in "`\\":
            out.append(ch)
        else:
            out.append(f"\\u{ord(ch):04x}" if ord(ch) <= 0xFFFF else f"\\U{ord(ch):08x}")
    return "".join(out) + ("..." if len(text) > limit else "")


def first_line(body: str) -> str | None:
    """The first non-blank line, CRLF/CR normalised, or None for an empty comment."""
    text = body.replace("\r\n", "\n").replace("\r", "\n")
    if text.startswith("\ufeff"):
        text = text[1:]
    for line in text.split("\n"):
        if line.strip(" \t"):
            return line
    return None


_HYPHEN_LOOKALIKES = "\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe58\ufe63\uff0d\u02d7\u2043"


def _skeleton(word: str) -> str:
    """What a word looks like: look-alike slashes and hyphens folded, invisible characters dropped, NFKC, casefold."""
    folded = "".join("/" if ch in SLASH_LOOKALIKES else "-" if ch in _HYPHEN_LOOKALIKES else ch for ch in word)
    folded = "".join(ch for ch in folded if unicodedata.category(ch) not in ("Cf", "Mn", "Zs"))
    return unicodedata.normalize("NFKC", folded).casefold()


def _near_miss(line: str) -> str | None:
    """Why a line that looks like the command is not one, or None when it does not look like it."""
    word = re.split(r"[ \t]", line, maxsplit=1)[0][:100]
    if word.startswith(COMMAND):
        nxt = word[len(COMMAND):][:1]
        if nxt and (unicodedata.category(nxt) in ("Cf", "Zs", "Zl", "Zp", "Cc", "Mn")):
            name = unicodedata.name(nxt, "a control character")
            return (f"the command word is followed by U+{ord(nxt):04X} {name}; "
                    f"separate words with ordinary spaces: {COMMAND} ...")
        return None
    if _skeleton(word) != _skeleton(COMMAND):
        return None
    if word[:1] in SLASH_LOOKALIKES:
        name = SLASH_LOOKALIKES[word[0]]
        return (f"this comment starts with U+{ord(word[0]):04X} {name}, which only looks like `/`; "
                f"commands start with the ASCII slash: {COMMAND}")
    odd = [ch for ch in word if not (" " <= ch <= "~")]
    if odd:
        name = unicodedata.name(odd[0], "unnamed character")
        return f"the command word contains U+{ord(odd[0]):04X} {name}; write it in plain ASCII: {COMMAND}"
    return f"`{shown(word)}` is not a command; commands are lowercase: {COMMAND}"


def parse_comment(body: str) -> ParseResult:
    """Parse a comment body (the whole text as GitHub delivers it)."""
    line = first_line(body)
    if line is None:
        return NotACommand("the comment is empty")
    indent = len(line) - len(line.lstrip(" "))
    if line[:indent + 1].endswith("\t") or indent >= 4:
        return NotACommand("the first line is an indented code block")
    stripped = line.strip(" \t")
    if stripped.startswith(">"):
        return NotACommand("the first line is a quotation")
    if stripped.startswith("```") or stripped.startswith("~~~"):
        return NotACommand("the comment starts with a fenced code block")
    if not (stripped == COMMAND or stripped.startswith(COMMAND + " ") or stripped.startswith(COMMAND + "\t")):
        note = _near_miss(stripped)
        return NotACommand("the first line does not start with " + COMMAND, note)
    if len(stripped) > MAX_LINE:
        return CommandError((f"the command line is {len(stripped)} characters long; at most {MAX_LINE} are accepted",))
    words = [w for w in re.split(r"[ \t]+", stripped[len(COMMAND):]) if w]
    if len(words) > MAX_WORDS:
        return CommandError((f"the command has {len(words)} words; at most {MAX_WORDS} are accepted",))
    return _parse_words(words)


def _int_list(name: str, value: str, problems: list[str]) -> tuple[int, ...]:
    parts = value.split(",")
    if not value or len(parts) > MAX_VALUES or not all(_INT.match(p) for p in parts):
        problems.append(f"`{shown(name + '=' + value)}`: expected `{name}=` followed by up to {MAX_VALUES} "
                        f"comma-separated positive integers, e.g. `{name}=8` or `{name}=48,64`")
        return ()
    numbers = sorted({int(p) for p in parts})
    if numbers[-1] > MAX_INT:
        problems.append(f"`{shown(name + '=' + value)}`: values above {MAX_INT} are not accepted")
        return ()
    return tuple(numbers)


def _not_a_word(word: str) -> str:
    return (f"`{shown(word)}` is not a word this command accepts: expected a config-key glob "
            "(letters, digits, `.`, `_`, `-` and `*`), `changelog`, `help` or an option")


def _parse_words(words: list[str]) -> ParseResult:
    problems: list[str] = []
    globs: list[str] = []
    seen: set[str] = set()
    values: dict[str, object] = {}
    flags = {"evals": False, "dry-run": False, "baseline": False}
    special: list[str] = []
    for word in words:
        name, eq, value = word.partition("=")
        key = name if eq else word
        if key in seen and (eq or key in flags or key in ("help", "changelog")):
            problems.append(f"`{shown(key)}` is given more than once")
            continue
        if eq:
            seen.add(key)
            if key in ("conc", "tp", "ep"):
                values[key] = _int_list(key, value, problems)
            elif key == "scenario":
                if value in SCENARIO_NAMES:
                    values[key] = value
                else:
                    problems.append(f"`{shown(word)}`: unknown scenario, expected one of: "
                                    + ", ".join(f"`{s}`" for s in SCENARIO_NAMES))
            elif key == "sha":
                if _SHA.match(value):
                    values[key] = value.lower()
                else:
                    problems.append(f"`{shown(word)}`: expected `sha=` followed by the full 40-hex-digit commit id")
            elif re.match(r"^[a-z][a-z-]*$", key):
                problems.append(f"`{shown(word)}`: unknown option `{shown(key)}=`, expected `conc=`, `tp=`, "
                                "`ep=`, `scenario=` or `sha=`")
            else:
                problems.append(_not_a_word(word))
        elif word in flags:
            seen.add(word)
            flags[word] = True
        elif word in ("help", "changelog"):
            seen.add(word)
            special.append(word)
        elif _GLOB.match(word):
            if word not in globs:
                globs.append(word)
        else:
            problems.append(_not_a_word(word))
    if "help" in special:
        if len(words) > 1:
            problems.append("`help` takes no other words")
        return CommandError(tuple(problems)) if problems else Command("help")
    if "changelog" in special and globs:
        problems.append("`changelog` selects the jobs of the changelog entries this pull request appends, "
                        "so it cannot be combined with config-key globs; use one or the other")
    if not special and not globs and not problems:
        problems.append("name what to run: one or more config-key globs (e.g. `dsr1-fp4-*`) or `changelog`")
    if problems:
        return CommandError(tuple(problems))

    def ints(k: str) -> tuple[int, ...]:
        v = values.get(k, ())
        return v if isinstance(v, tuple) else ()

    scenario = values.get("scenario")
    sha = values.get("sha")
    return Command(
        action="changelog" if special else "run",
        globs=tuple(globs),
        conc=ints("conc"),
        tp=ints("tp"),
        ep=ints("ep"),
        scenario=scenario if isinstance(scenario, str) else None,
        evals=flags["evals"],
        dry_run=flags["dry-run"],
        sha=sha if isinstance(sha, str) else None,
        baseline=flags["baseline"],
    )
