"""Words tree-sitter-bash cuts in two, joined again.

After a literal, an expansion and a separator (``--mounts=$A:$B,/x``, ``x$A,$B.y``), tree-sitter-bash ends the
word at the second ``$`` and starts a new one at the name after it: ``--mounts=$A:$`` and ``B,/x``, two
arguments where bash passes one, ``$B`` left unexpanded; in an assignment (``export M=$A:$B,y``) the rest
becomes a word of its own, or the name of a command (``M=$A:$B,y``).  Every launcher that mounts
``$GITHUB_WORKSPACE:$CONTAINER_MOUNT_DIR,...`` into its container reads that way.  Nothing is lost: the two
nodes stand side by side with no blank between them, the first ending in the ``$`` token, the second starting
with the name; here they become one word again, the ``$`` and the name one expansion.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Sequence

# What `$` takes as a name: an identifier, or one digit (`$12` is `${1}2`).
_NAME = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*|[0-9]")
_WORDS = frozenset({"word", "concatenation"})


def is_cut(node: Any) -> bool:
    """A word (or an assignment's value) that ends in a lone ``$`` token: where tree-sitter-bash cut it."""
    if node.type == "variable_assignment":
        return bool(node.children) and is_cut(node.children[-1])
    return node.type == "concatenation" and bool(node.children) and node.children[-1].type == "$"


def mend(children: Sequence[Any], intern: Callable[[str], str]) -> tuple[Any, ...]:
    """``children`` with each cut word joined to the word after it (``intern`` shares the node type names)."""
    out = list(children)
    i = 0
    while i + 1 < len(out):
        joined = _joined(out[i], out[i + 1], intern) if out[i].end == out[i + 1].start else None
        if joined is None:
            i += 1
        else:
            out[i:i + 2] = [joined]  # the joined word may be cut again further on: look at it once more
    return tuple(out)


def _joined(a: Any, b: Any, intern: Callable[[str], str]) -> Any:
    if b.type == "command_name" and len(b.children) == 1:
        b = b.children[0]  # `M=$A:$B,y`: the rest of the value was taken for a command's name
    if not is_cut(a) or b.type not in _WORDS:
        return None
    make = type(a)

    def node(kind: str, start: int, end: int, children: tuple[Any, ...] = ()) -> Any:
        made = make(intern(kind), start, end, True, a.script)
        made.children = children
        return made

    if a.type == "variable_assignment":
        value = _joined(a.children[-1], b, intern)
        return None if value is None else node("variable_assignment", a.start, value.end, (*a.children[:-1], value))
    first = b.children[0] if b.type == "concatenation" else b
    name = _NAME.match(a.script.source, first.start, first.end) if first.type == "word" else None
    if name is None:
        return None
    dollar = a.children[-1]
    expansion = node("simple_expansion", dollar.start, name.end(), (dollar, node("variable_name", dollar.end, name.end())))
    rest = (node("word", name.end(), first.end),) if name.end() < first.end else ()
    tail = tuple(b.children[1:]) if b.type == "concatenation" else ()
    return node("concatenation", a.start, b.end, (*a.children[:-1], expansion, *rest, *tail))
