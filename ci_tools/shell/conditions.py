"""``[ ]``, ``[[ ]]`` and ``test`` on known values, in three-valued logic.

True and False are decided; None means the condition depends on something
unknown (a file test, a command's output, an unknown variable), and the
interpreter then evaluates both branches.
"""

from __future__ import annotations

import fnmatch
import re
from typing import Protocol, Sequence

from .arith import parse_int
from .parse import Node

Tri = bool | None


class Operands(Protocol):
    """What a test needs from its shell: the text of a word, a variable, a file test (the interpreter's
    :class:`~ci_tools.shell.expand.Expander`, or a reader of launcher conditions with fixed variables)."""

    def scalar_text(self, node: Node) -> tuple[str | None, object]: ...

    def scalar(self, name: str, node: Node) -> object: ...

    def file_test(self, op: str, path: str | None) -> bool | None: ...


def and3(a: Tri, b: Tri) -> Tri:
    if a is False or b is False:
        return False
    if a is None or b is None:
        return None
    return True


def or3(a: Tri, b: Tri) -> Tri:
    if a is True or b is True:
        return True
    if a is None or b is None:
        return None
    return False


def not3(a: Tri) -> Tri:
    return None if a is None else not a


_NUMERIC = {"-eq": "==", "-ne": "!=", "-lt": "<", "-le": "<=", "-gt": ">", "-ge": ">="}
_FILE_TESTS = {"-e", "-f", "-d", "-s", "-r", "-w", "-x", "-L", "-h", "-p", "-S", "-b", "-c", "-g", "-u", "-k", "-O", "-G", "-N", "-t"}


def compare(left: str | None, op: str, right: str | None, *, pattern: bool = False) -> Tri:
    if left is None or right is None:
        return None
    if op in _NUMERIC:
        a, b = parse_int(left), parse_int(right)
        if a is None or b is None:
            return None
        return {"==": a == b, "!=": a != b, "<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[_NUMERIC[op]]
    if op in ("=", "=="):
        return fnmatch.fnmatchcase(left, right) if pattern else left == right
    if op == "!=":
        return not fnmatch.fnmatchcase(left, right) if pattern else left != right
    if op == "<":
        return left < right
    if op == ">":
        return left > right
    if op == "=~":
        try:
            return re.search(right, left) is not None
        except re.error:
            return None
    return None


def unary(op: str, operand: str | None, shell: Operands, node: Node) -> Tri:
    if op == "-n":
        return None if operand is None else operand != ""
    if op == "-z":
        return None if operand is None else operand == ""
    if op == "-v":
        return None if operand is None else shell.scalar(operand, node) is not None
    if op in _FILE_TESTS:
        return shell.file_test(op, operand)  # run time, unless the path is one of the repository's
    return None


_QUOTED = ("string", "raw_string", "ansi_c_string")


def _has_quotes(node: Node) -> bool:
    return node.type in _QUOTED or any(_has_quotes(c) for c in node.children)


# fnmatch's special characters, each written as a class holding only itself
_GLOB_ESCAPES = str.maketrans({"*": "[*]", "?": "[?]", "[": "[[]"})


def _right_operand(shell: Operands, nodes: Sequence[Node], glob: bool) -> str | None:
    """The right side of a comparison, which tree-sitter may give as several nodes
    (`*"--enable-metrics"*` is a pattern, a string and a pattern).  As a glob (``==``/``!=`` in ``[[ ]]``)
    its quoted parts match literally and the rest is a pattern, as bash reads it."""
    out: list[str] = []
    for node in nodes:
        if node.type == "concatenation":
            part = _right_operand(shell, node.children, glob)
        else:
            part, _ = shell.scalar_text(node)
            if part is not None and glob and node.type in _QUOTED:
                part = part.translate(_GLOB_ESCAPES)
        if part is None:
            return None
        out.append(part)
    return "".join(out)


def test_expression(shell: Operands, node: Node, double: bool) -> Tri:
    """Evaluate the expression inside ``[ ]`` (``double=False``) or ``[[ ]]``."""
    t = node.type
    kids = node.children
    if t == "parenthesized_expression":
        inner = [c for c in kids if c.named]
        return test_expression(shell, inner[0], double) if inner else None
    if t == "unary_expression" and len(kids) == 2:
        op = kids[0].text
        if op == "!":
            return not3(test_expression(shell, kids[1], double))
        text, _ = shell.scalar_text(kids[1])
        return unary(op, text, shell, node)
    if t == "binary_expression" and len(kids) >= 3:
        left, op, right = kids[0], kids[1].text, kids[-1]
        if op in ("&&", "-a"):
            a = test_expression(shell, left, double)
            return False if a is False else and3(a, test_expression(shell, right, double))
        if op in ("||", "-o"):
            a = test_expression(shell, left, double)
            return True if a is True else or3(a, test_expression(shell, right, double))
        pattern = double and op in ("=", "==", "!=")
        rtext = _right_operand(shell, kids[2:], pattern)
        if left.type == "unary_expression" and left.children and left.children[0].text == "!":
            # tree-sitter reads `[[ ! "$X" =~ re ]]` as `(! "$X") =~ re`; bash negates the comparison.
            ltext, _ = shell.scalar_text(left.children[-1])
            return not3(compare(ltext, op, rtext, pattern=pattern))
        ltext, _ = shell.scalar_text(left)
        return compare(ltext, op, rtext, pattern=pattern)
    if t == "negated_command" or (kids and kids[0].type == "!"):
        inner = [c for c in kids if c.named]
        return not3(test_expression(shell, inner[0], double)) if inner else None
    text, _ = shell.scalar_text(node)
    return None if text is None else text != ""


def test_words(shell: Operands, node: Node, out: list[str | None]) -> None:
    """The words ``[ ... ]`` gets as a command, from the expression tree tree-sitter reads into it (``[ "$X" = y ]``
    is one ``binary_expression``): operators as written, operands expanded."""
    if node.type in ("binary_expression", "unary_expression", "parenthesized_expression"):
        for c in node.children:
            test_words(shell, c, out)
    elif node.type == "test_operator" or not node.named:
        out.append(node.text)
    else:
        out.append(shell.scalar_text(node)[0])


def test_argv(args: list[str | None], shell: Operands, node: Node) -> Tri:
    """``test ARGS`` / ``[ ARGS ]`` given as a plain command (POSIX rules by argument count)."""
    if args and args[-1] == "]":
        args = args[:-1]
    if "-a" in args[1:-1] or "-o" in args[1:-1]:
        for op in ("-o", "-a"):
            if op in args[1:-1]:
                i = args.index(op, 1)
                a, b = test_argv(args[:i], shell, node), test_argv(args[i + 1:], shell, node)
                return or3(a, b) if op == "-o" else and3(a, b)
    n = len(args)
    if n == 0:
        return False
    if args[0] == "!" and n > 1:
        return not3(test_argv(args[1:], shell, node))
    if n == 1:
        return None if args[0] is None else args[0] != ""
    if n == 2:
        first = args[0]
        return None if first is None else unary(first, args[1], shell, node)
    if n == 3:
        middle = args[1]
        return None if middle is None else compare(args[0], middle, args[2])
    return None
