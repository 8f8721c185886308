"""Words and tests whose value depends only on the variables they name, computed once per input.

Most of what a recipe evaluates is ``X="${X:-8192}"``, ``[[ "$ENGINE" ==
sglang-disagg ]]``: words that expand variables and test their texts, with
no effect on the shell and nothing else to depend on.  Every job of a
config, and every config of a model, evaluates them again with the same
inputs, which are often the very same value objects (the job's environment
values are shared, see :mod:`.evaluate`, and so are values computed here and
replayed from recorded calls, see :mod:`.memo`).  :func:`pure_reads` finds,
once per syntax node, the variables a word or a test reads when it is such a
word (``None`` when it is not: a command substitution, arithmetic, an
assignment ``${X:=..}``, ``${X:?}``, ``${!ref}``, ``$0``, ``-v``);
:class:`PureCache` keeps what it gave, keyed by the identity of those
variables' bindings (and of the positional parameters it reads).
"""

from __future__ import annotations

from typing import Any, Callable

from ..bounded import BoundedDict
from .parse import Node

# The pseudo-name under which a word that reads $1, $@, $# ... depends on the positional parameters.
POSITIONAL = "\x00positional"

# Node types a pure word may be made of (anonymous tokens are checked on their own).
_WORD_TYPES = frozenset({
    "word", "number", "string", "raw_string", "ansi_c_string", "translated_string", "concatenation",
    "simple_expansion", "expansion", "string_content", "variable_name", "special_variable_name", "subscript",
    "regex", "extglob_pattern", "brace_expression",
    # inside [ ] and [[ ]]
    "test_command", "binary_expression", "unary_expression", "parenthesized_expression", "test_operator",
    # A=(word ...)
    "array", "comment",
})
# Tokens of an expansion with an effect or a dynamic read: ${X:=v}, ${X=v}, ${X:?m}, ${X?m}, ${!ref}.
_IMPURE_TOKENS = frozenset({":=", "=", ":?", "?", "!"})
# Test operators that read a variable named by a value, or look at files.
_IMPURE_TESTS = frozenset({"-v", "-R", "-e", "-f", "-d", "-s", "-r", "-w", "-x", "-L", "-h"})
_NOT_PURE = object()
_READS: dict[int, tuple[Node, Any]] = {}


def pure_reads(node: Node) -> tuple[str, ...] | None:
    """The variables a pure word (or test) reads, in a fixed order; None when it is not pure."""
    found = _READS.get(id(node))
    if found is not None and found[0] is node:
        return None if found[1] is _NOT_PURE else found[1]
    names: dict[str, None] = {}
    reads: Any = tuple(names) if _collect(node, names, in_expansion=False) else _NOT_PURE
    _READS[id(node)] = (node, reads)
    return None if reads is _NOT_PURE else reads


def _collect(n: Node, names: dict[str, None], in_expansion: bool) -> bool:
    t = n.type
    if not n.named:
        if t in _IMPURE_TOKENS and in_expansion:
            return False
        return t not in ("$(", "`", "$((", "<(", ">(")
    if t not in _WORD_TYPES:
        return False
    if t == "variable_name":
        name = n.text
        if name == "0":
            return False  # the script's name: depends on which script runs
        names[POSITIONAL if name.isdigit() else name] = None
        return True
    if t == "special_variable_name":
        if n.text in ("@", "*", "#"):
            names[POSITIONAL] = None
        if n.text == "*":
            names["IFS"] = None  # "$*" joins with IFS's first character
        return n.text != "0"
    if t == "subscript" and any(c.type == "word" and c.text == "*" for c in n.children):
        names["IFS"] = None  # as "${A[*]}" does
    if t == "test_operator" and n.text in _IMPURE_TESTS:
        return False
    inner = in_expansion or t == "expansion"
    return all(_collect(c, names, inner) for c in n.children)


class PureCache:
    """What pure words and tests gave, by node and by the identity of the bindings they read."""

    def __init__(self, limit: int = 200_000) -> None:
        self._entries: BoundedDict[tuple[Any, ...], tuple[tuple[object, ...], Any]] = BoundedDict(limit)

    def get(self, key: tuple[Any, ...], inputs: tuple[object, ...], make: Callable[[], Any]) -> Any:
        """The result for ``key`` (node, context, ids of ``inputs``), computed by ``make`` the first time.

        ``inputs`` are kept with the result so that their ids stay theirs while it is cached.
        """
        found = self._entries.get(key)
        if found is not None:
            return found[1]
        return self._entries.put(key, (inputs, make()))[1]
