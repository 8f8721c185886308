"""What ``sed`` prints for the substitutions recipes pipe their command strings through.

``CONFIG=$(echo "$CONFIG" | sed -E "s/--tensor-parallel-size[[:space:]]+[0-9]+/--tensor-parallel-size 4/g")``
rewrites a server's options (InferenceX's AMD ``server_vllm.sh``); ``sed
's/ /,/g'`` joins a list.  Modelled: scripts of ``s`` commands only (given
as the first argument or with ``-e``, several joined by ``;``), any
delimiter, flags ``g`` or none, on standard input, in extended (``-E``,
``-r``) or basic syntax.  The expression is translated to Python's ``re``
only where the two agree: POSIX bracket classes (``[[:space:]]``), ``.``
``*`` ``+`` ``?`` ``{m,n}`` ``()`` ``[...]`` ``^`` ``$`` in extended syntax,
and basic syntax's ``\\(`` ``\\)`` ``\\{`` ``\\}`` ``\\+`` ``\\?`` for them (its bare
``+ ? ( ) { } |`` are characters).  Alternation (POSIX takes the longest
match, Python the first) and back-references in the expression are not
modelled; the replacement takes ``&``, ``\\1``..``\\9``, ``\\&``, ``\\\\``, ``\\/``
(the delimiter) and ``\\n``.  Anything else is unknown (None), never guessed.
"""

from __future__ import annotations

import re
from typing import Sequence

# POSIX classes inside a bracket expression, as Python writes them there.
_CLASSES = {"space": r"\s", "digit": "0-9", "alpha": "A-Za-z", "alnum": "A-Za-z0-9", "upper": "A-Z",
            "lower": "a-z", "blank": r" \t", "xdigit": "0-9A-Fa-f", "punct": re.escape("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")}


def substitute(args: Sequence[str | None], stdin: str | None) -> str | None:
    """The output of ``sed ARGS`` reading ``stdin``; None when it is not modelled or not known."""
    if stdin is None or any(a is None for a in args):
        return None
    extended, scripts, rest = False, [], [a for a in args if a is not None]
    while rest:
        word = rest.pop(0)
        if word in ("-E", "-r", "--regexp-extended"):
            extended = True
        elif word == "-e" and rest:
            scripts.append(rest.pop(0))
        elif word.startswith("-") or scripts:
            return None  # -n, -i, a file to read, ...
        else:
            scripts.append(word)
            if rest:
                return None  # a file operand
    commands = [c for script in scripts for c in _split_commands(script)]
    compiled = [_command(c, extended) for c in commands]
    if not compiled or any(c is None for c in compiled):
        return None
    out: list[str] = []
    for line in stdin.splitlines(keepends=True):
        body, end = (line[:-1], "\n") if line.endswith("\n") else (line, "")
        for found in compiled:
            assert found is not None
            pattern, replacement, count = found
            body = pattern.sub(replacement, body, count=count)
        out.append(body + end)
    return "".join(out)


def _split_commands(script: str) -> list[str]:
    """``s/a/b/;s/c/d/g`` -> its commands (a ``;`` inside an expression or replacement is text)."""
    out: list[str] = []
    i = 0
    while i < len(script):
        while i < len(script) and script[i] in " ;\n":
            i += 1
        if i >= len(script):
            break
        if script[i] != "s" or i + 1 >= len(script):
            return [script]  # not an `s` command: refused by _command
        delimiter, j, parts = script[i + 1], i + 2, 0
        while j < len(script) and parts < 2:
            if script[j] == "\\":
                j += 2
                continue
            if script[j] == delimiter:
                parts += 1
            j += 1
        while j < len(script) and script[j] not in ";\n":
            j += 1
        out.append(script[i:j].rstrip())
        i = j
    return out


def _command(command: str, extended: bool) -> tuple[re.Pattern[str], str, int] | None:
    if len(command) < 4 or command[0] != "s" or command[1] in "\\\n":
        return None
    delimiter = command[1]
    fields: list[str] = []
    current: list[str] = []
    i = 2
    while i < len(command):
        c = command[i]
        if c == "\\" and i + 1 < len(command):
            # An escaped delimiter is the delimiter's character itself.
            current.append(command[i + 1] if command[i + 1] == delimiter else command[i:i + 2])
            i += 2
            continue
        if c == delimiter:
            fields.append("".join(current))
            current = []
        else:
            current.append(c)
        i += 1
    if len(fields) != 2 or current not in ([], ["g"]):
        return None
    expression = posix_expression(fields[0], extended)
    replacement = _replacement(fields[1])
    if expression is None or replacement is None:
        return None
    try:
        return re.compile(expression), replacement, 0 if current == ["g"] else 1
    except re.error:
        return None


def posix_expression(text: str, extended: bool) -> str | None:
    """A POSIX regular expression (basic or extended) in Python's syntax; None for what is not modelled."""
    if re.search(r"\\[0-9|]", text) or (extended and ("|" in text or "(?" in text or re.search(r"[*+?}]\?", text))):
        return None  # back-references, alternation (POSIX's longest match), Python's own syntax
    out: list[str] = []
    i = 0
    while i < len(text):
        c = text[i]
        if not extended and c in "+?(){}|":
            out.append("\\" + c)  # in basic syntax these are characters
            i += 1
        elif c == "\\":
            if i + 1 >= len(text) or text[i + 1].isalnum():
                return None  # \w, \b, \s: GNU extensions whose meanings are not checked here
            nxt = text[i + 1]
            # In basic syntax \( \) \{ \} \+ \? are the operators extended syntax writes bare.
            out.append(nxt if not extended and nxt in "(){}+?" else text[i:i + 2])
            i += 2
        elif c == "[":
            end, bracket = _bracket(text, i)
            if bracket is None:
                return None
            out.append(bracket)
            i = end
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _bracket(text: str, start: int) -> tuple[int, str | None]:
    """A bracket expression from ``text[start] == "["``: (the index after it, its Python spelling)."""
    i = start + 1
    out = ["["]
    if i < len(text) and text[i] == "^":
        out.append("^")
        i += 1
    first = True
    while i < len(text):
        c = text[i]
        if c == "]" and not first:
            out.append("]")
            return i + 1, "".join(out)
        if text.startswith("[:", i):
            end = text.find(":]", i)
            name = text[i + 2:end] if end > 0 else ""
            if name not in _CLASSES:
                return i, None
            out.append(_CLASSES[name])
            i = end + 2
        elif text.startswith(("[.", "[="), i):
            return i, None
        else:
            # Inside brackets a backslash is a character in POSIX, an escape in Python.
            out.append(re.escape(c) if c in "\\[]^" else c)
            i += 1
        first = False
    return i, None


def _replacement(text: str) -> str | None:
    """sed's replacement as Python's template (``&`` -> ``\\g<0>``)."""
    out: list[str] = []
    i = 0
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text):
            nxt = text[i + 1]
            if nxt.isdigit() and nxt != "0":
                out.append(f"\\g<{nxt}>")
            elif nxt == "n":
                out.append("\n")
            elif nxt in "&\\/":
                out.append("\\\\" if nxt == "\\" else nxt)
            else:
                return None
            i += 2
        elif c == "&":
            out.append("\\g<0>")
            i += 1
        elif c == "\\":
            return None
        else:
            out.append(c)
            i += 1
    return "".join(out)


__all__ = ["posix_expression", "substitute"]
