"""Shell arithmetic (``$((...))``, ``((...))``, ``let``) on known integers.

Variables are read without ``$`` (``2 * CONC``); an unset or empty variable
is 0, as in bash; a value that is not an integer, or any unknown operand,
makes the result unknown (None).  Division by zero is unknown too: the shell
would fail there, and guessing a number would be worse.
"""

from __future__ import annotations

import re
from typing import Callable, Protocol

from .model import Value
from .parse import Node


class ArithShell(Protocol):
    """What arithmetic needs of the shell that expands it: read, write and expand a variable's text.

    A protocol rather than the expander itself, so that expansion (which evaluates ``$((...))``) and
    arithmetic (which reads variables) do not import each other.
    """

    def scalar(self, name: str, node: Node) -> Value | None: ...

    def assign_scalar(self, name: str, value: Value) -> None: ...

    def scalar_text(self, node: Node) -> tuple[str | None, object]: ...

_INT = re.compile(r"^\s*([+-]?)\s*(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*|[0-9]+#[0-9a-zA-Z@_]+)\s*$")

_BINARY: dict[str, Callable[[int, int], int | None]] = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "/": lambda a, b: None if b == 0 else int(a / b),
    "%": lambda a, b: None if b == 0 else a - b * int(a / b),
    "**": lambda a, b: a ** b if b >= 0 else None,
    "<<": lambda a, b: a << b if b >= 0 else None,
    ">>": lambda a, b: a >> b if b >= 0 else None,
    "<": lambda a, b: int(a < b),
    "<=": lambda a, b: int(a <= b),
    ">": lambda a, b: int(a > b),
    ">=": lambda a, b: int(a >= b),
    "==": lambda a, b: int(a == b),
    "!=": lambda a, b: int(a != b),
    "&": lambda a, b: a & b,
    "|": lambda a, b: a | b,
    "^": lambda a, b: a ^ b,
}
_ASSIGN = {"=", "+=", "-=", "*=", "/=", "%=", "<<=", ">>=", "&=", "|=", "^="}


def parse_int(text: str) -> int | None:
    if text.isascii() and text.isdigit() and (len(text) == 1 or text[0] != "0") and len(text) < 19:
        return int(text)  # plain decimal, most operands: no pattern to match
    if text.strip() == "":
        return 0
    m = _INT.match(text)
    if not m:
        return None
    sign, digits = m.groups()
    try:
        if "#" in digits:
            base, num = digits.split("#", 1)
            value = int(num, int(base))
        elif digits.lower().startswith("0x"):
            value = int(digits, 16)
        elif len(digits) > 1 and digits.startswith("0"):
            value = int(digits, 8)
        else:
            value = int(digits)
    except ValueError:
        return None
    return -value if sign == "-" else value


def _variable(shell: ArithShell, name: str, node: Node, depth: int) -> int | None:
    v = shell.scalar(name, node)
    if v is None:
        return 0
    if v.text is None:
        return None
    direct = parse_int(v.text)
    if direct is not None or depth > 8:
        return direct
    # bash evaluates a variable's text as an expression (X="2*CONC"); only a plain name is followed.
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", v.text.strip()):
        return _variable(shell, v.text.strip(), node, depth + 1)
    return None


def _store(shell: ArithShell, name: str, value: int, node: Node) -> None:
    shell.assign_scalar(name, Value(str(value), node.location(), False, node.text))


def _name_of(node: Node) -> str | None:
    """The variable an assignment or ``++`` acts on (a plain word inside ``for ((...))``)."""
    if node.type == "variable_name" or (node.type == "word" and _NAME.fullmatch(node.text)):
        return node.text
    return None


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def evaluate_arith(shell: ArithShell, node: Node, depth: int = 0) -> int | None:
    t = node.type
    if t == "number":
        return parse_int(node.text)
    if t == "variable_name":
        return _variable(shell, node.text, node, 0)
    if t in ("simple_expansion", "expansion", "string", "concatenation", "word", "command_substitution",
             "arithmetic_expansion", "raw_string"):
        if t == "word" and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", node.text):
            return _variable(shell, node.text, node, 0)
        text, _ = shell.scalar_text(node)
        if text is None:
            return None
        direct = parse_int(text)
        if direct is None and re.fullmatch(r"\s*[A-Za-z_][A-Za-z0-9_]*\s*", text):
            return _variable(shell, text.strip(), node, 1)
        return direct
    named = [c for c in node.children if c.named]
    if t == "parenthesized_expression":
        return evaluate_arith(shell, named[0], depth) if named else None
    if t == "binary_expression" and len(node.children) >= 3:
        left, op_node, right = node.children[0], node.children[1], node.children[-1]
        op = op_node.text
        if op in _ASSIGN:
            if _name_of(left) is None:
                return None
            rhs = evaluate_arith(shell, right, depth + 1)
            if rhs is None:
                shell.assign_scalar(left.text, Value(None, node.location(), False, node.text))
                return None
            if op != "=":
                cur = _variable(shell, left.text, left, 0)
                fn = _BINARY.get(op[:-1])
                rhs = None if cur is None or fn is None else fn(cur, rhs)
                if rhs is None:
                    shell.assign_scalar(left.text, Value(None, node.location(), False, node.text))
                    return None
            _store(shell, left.text, rhs, node)
            return rhs
        if op in ("&&", "||"):
            a = evaluate_arith(shell, left, depth + 1)
            if a is not None and ((op == "&&" and a == 0) or (op == "||" and a != 0)):
                return int(a != 0)
            b = evaluate_arith(shell, right, depth + 1)
            if a is None or b is None:
                return None
            return int(b != 0)
        a = evaluate_arith(shell, left, depth + 1)
        b = evaluate_arith(shell, right, depth + 1)
        fn = _BINARY.get(op)
        if a is None or b is None or fn is None:
            return None
        return fn(a, b)
    if t == "unary_expression" and len(node.children) == 2:
        op, operand = node.children[0].text, node.children[1]
        if op in ("++", "--") and _name_of(operand) is not None:
            cur = _variable(shell, operand.text, operand, 0)
            if cur is None:
                return None
            new = cur + (1 if op == "++" else -1)
            _store(shell, operand.text, new, node)
            return new
        v = evaluate_arith(shell, operand, depth + 1)
        if v is None:
            return None
        return {"-": -v, "+": v, "!": int(v == 0), "~": ~v}.get(op)
    if t == "postfix_expression" and len(node.children) == 2:
        operand, op = node.children[0], node.children[1].text
        if _name_of(operand) is None:
            return None
        cur = _variable(shell, operand.text, operand, 0)
        if cur is None:
            return None
        _store(shell, operand.text, cur + (1 if op == "++" else -1), node)
        return cur
    if t == "ternary_expression" and len(named) == 3:
        cond = evaluate_arith(shell, named[0], depth + 1)
        if cond is None:
            return None
        return evaluate_arith(shell, named[1] if cond else named[2], depth + 1)
    return None


def evaluate_arith_text(shell: ArithShell, text: str, node: Node) -> int | None:
    """``let 'N=N+1'`` and friends: arithmetic given as a string (parsed by bash's grammar)."""
    from .parse import parse_script

    script = parse_script(f"{node.script.path}:let", f"(( {text} ))\n".encode())
    stmt = next((c for c in script.root.children if c.named), None)
    inner = [c for c in stmt.children if c.named] if stmt is not None else []
    if not inner:
        return None
    return evaluate_arith(shell, inner[0])
