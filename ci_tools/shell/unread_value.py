"""The value of an assignment tree-sitter-bash cannot read, when it is a default: ``X="${Y:-DEFAULT}"``.

bash reads ``"${TOTAL_CPU_DRAM_PARTITION_GB:-$((TOTAL_CPU_DRAM_GB / (8 / TP)))}"`` and
``"${KV_OFFLOAD_BACKEND_METADATA:-{\\"name\\":\\"$KV_OFFLOAD_BACKEND\\"}}"``; the grammar does not (see
:mod:`.bash_syntax`), though it reads the default alone.  Such a value is the variable's, when it is set
and not empty, else its default's, parsed on its own.  Any other value the grammar cannot read is unknown.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .parse import Node, parse_script

# `"${NAME:-...`, the whole value: where the default ends is found as bash finds it (:func:`_split`).
_DEFAULTED = re.compile(r'"\$\{([A-Za-z_][A-Za-z0-9_]*):-(.*)"', re.DOTALL)


@dataclass(frozen=True)
class UnreadValue:
    """An assignment the grammar cannot read: the name it assigns, and, for ``"${SOURCE:-DEFAULT}REST"``, the
    variable it takes, the default's word and the word after the expansion (each parsed alone; None when the
    value has another form)."""

    name: str
    expression: str
    source: str | None = None
    default: Node | None = None
    rest: Node | None = None


def unread_value(name: str, expression: str, where: str) -> UnreadValue:
    """``expression`` (what follows ``NAME=``) read as a default, where it is one the grammar reads alone."""
    m = _DEFAULTED.fullmatch(expression)
    split = _split(m.group(2)) if m is not None else None
    if m is None or split is None:
        return UnreadValue(name, expression)
    words = [_word(text, where) for text in split]
    if words[0] is None or words[1] is None:
        return UnreadValue(name, expression)
    return UnreadValue(name, expression, m.group(1), words[0], words[1])


def _split(inner: str) -> tuple[str, str] | None:
    """The default and what follows the expansion, of the text after ``${NAME:-``: the expansion ends at the first
    ``}`` outside a nested ``${...}`` or ``$(...)``, as in bash, where a bare ``{`` opens nothing
    (``"${X:-{\\"a\\":1}}"`` is ``{"a":1`` and then ``}``); None when no ``}`` ends it."""
    braces = parens = 0
    i = 0
    while i < len(inner):
        c = inner[i]
        if c == "\\":
            i += 2
            continue
        if inner.startswith("${", i):
            braces, i = braces + 1, i + 2
            continue
        if inner.startswith("$(", i):
            parens, i = parens + 1, i + 2
            continue
        if parens:
            parens += 1 if c == "(" else -1 if c == ")" else 0
        elif c == "}":
            if not braces:
                return inner[:i], inner[i + 1:]
            braces -= 1
        i += 1
    return None


def _word(text: str, where: str) -> Node | None:
    """``text`` as the inside of a double-quoted word, parsed alone (None when the grammar cannot read it so)."""
    script = parse_script(f"<default of {where}>", f'__default="{text}"\n'.encode())
    statements = [c for c in script.root.children if c.named]
    if script.problems or len(statements) != 1 or statements[0].type != "variable_assignment" \
            or len(statements[0].children) < 3:
        return None
    return statements[0].children[2]
