"""What a few commands print, computed from their arguments and input.

Recipes build values with small commands inside ``$(...)``: ``printf`` a
JSON template, ``seq`` a list of capture sizes, ``awk 'BEGIN{print
(2.49-1)/3}'`` a rate, ``printf '%s\\n' ... | sort -n -u | paste -sd, -``,
``echo "$CONFIG" | sed -E 's/.../.../g'`` a rewritten option string (:mod:`.sed`),
``echo "$CONFIG" | grep -q -- '--flag'`` whether it already holds a flag.
Each function here takes the expanded argument texts (None where unknown)
and the standard input (None when unknown) and returns what the command
writes to standard output with its exit status, or None when the output
cannot be known (an unknown argument, an option not modelled).  Commands
not listed are never guessed: the interpreter treats their output as
unknown.
"""

from __future__ import annotations

import ast
import math
import operator
import posixpath
import re
from dataclasses import dataclass
from typing import Callable, Sequence

from .conditions import Tri
from .sed import posix_expression, substitute

Args = Sequence[str | None]


@dataclass(frozen=True)
class Result:
    output: str | None  # None: unknown
    status: Tri = True


UNKNOWN = Result(None, None)


def _known(args: Args) -> list[str] | None:
    if any(a is None for a in args):
        return None
    return [a for a in args if a is not None]


# -- echo / printf ---------------------------------------------------------------------------
_ECHO_ESCAPES = {"n": "\n", "t": "\t", "\\": "\\", "a": "\a", "b": "\b", "r": "\r", "v": "\v", "f": "\f", "e": "\x1b"}


def _backslash_escapes(text: str) -> str | None:
    if "\\" not in text:
        return text
    out: list[str] = []
    i = 0
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text):
            nxt = text[i + 1]
            if nxt in _ECHO_ESCAPES:
                out.append(_ECHO_ESCAPES[nxt])
                i += 2
                continue
            if nxt in "0x" or nxt.isdigit() or nxt == "c":
                return None  # octal/hex escapes and \c: rare, not modelled
        out.append(c)
        i += 1
    return "".join(out)


def echo(args: Args, stdin: str | None) -> Result:
    words = _known(args)
    if words is None:
        return UNKNOWN
    newline, escapes = True, False
    while words and re.fullmatch(r"-[neE]+", words[0]):
        newline = newline and "n" not in words[0]
        escapes = "e" in words[0] if "E" not in words[0] else False
        words = words[1:]
    text = " ".join(words)
    if escapes:
        expanded = _backslash_escapes(text)
        if expanded is None:
            return UNKNOWN
        text = expanded
    return Result(text + ("\n" if newline else ""))


_SPEC = re.compile(r"%([-+ 0#]*)(\d+|\*)?(?:\.(\d+))?([sdifgeEGxXobcq%])")


def format_printf(fmt: str, args: list[str]) -> str | None:
    """bash ``printf FORMAT ARGS...``: the format is reused while arguments remain."""
    fmt_text = _backslash_escapes(fmt)
    if fmt_text is None:
        return None
    specs = [m for m in _SPEC.finditer(fmt_text) if m.group(4) != "%"]
    out: list[str] = []
    rest = list(args)
    while True:
        piece = _format_once(fmt_text, rest)
        if piece is None:
            return None
        text, used = piece
        out.append(text)
        rest = rest[used:]
        if not rest or not specs or used == 0:
            return "".join(out)


def _format_once(fmt: str, args: list[str]) -> tuple[str, int] | None:
    out: list[str] = []
    used = 0
    at = 0
    for m in _SPEC.finditer(fmt):
        out.append(fmt[at:m.start()])
        at = m.end()
        flags, width, precision, kind = m.groups()
        if kind == "%":
            out.append("%")
            continue
        if width == "*":
            return None
        arg = args[used] if used < len(args) else None
        used += 1
        rendered = _convert(kind, flags, width, precision, arg)
        if rendered is None:
            return None
        out.append(rendered)
    out.append(fmt[at:])
    return "".join(out), used


def _convert(kind: str, flags: str, width: str | None, precision: str | None, arg: str | None) -> str | None:
    spec = "%" + flags + (width or "") + (f".{precision}" if precision is not None else "")
    if kind in "sbq":
        text = "" if arg is None else arg
        if kind == "b":
            expanded = _backslash_escapes(text)
            if expanded is None:
                return None
            text = expanded
        elif kind == "q" and not re.fullmatch(r"[A-Za-z0-9_./:=,+@%-]*", text):
            return None  # shell quoting of special characters: not modelled
        return (spec + "s") % text
    if kind == "c":
        return (arg or "")[:1]
    number: float | int
    if kind in "dioxXc":
        value = _int(arg if arg is not None else "0")
        if value is None:
            return None
        number = value
    else:
        fvalue = _float(arg if arg is not None else "0")
        if fvalue is None:
            return None
        number = fvalue
    try:
        return (spec + ("d" if kind == "i" else kind)) % number
    except (TypeError, ValueError):
        return None


def _int(text: str) -> int | None:
    """An integer argument as bash's printf reads it (0x.. hexadecimal, 0.. octal)."""
    m = re.fullmatch(r"([+-]?)(0[xX][0-9a-fA-F]+|[0-9]+)", text.strip())
    if m is None:
        return None
    sign, digits = m.groups()
    if digits[:2].lower() == "0x":
        value = int(digits, 16)
    elif len(digits) > 1 and digits[0] == "0":
        try:
            value = int(digits, 8)
        except ValueError:
            return None
    else:
        value = int(digits)
    return -value if sign == "-" else value


def _decimal(text: str) -> int | None:
    return int(text) if re.fullmatch(r"[+-]?[0-9]+", text.strip()) else None


def _float(text: str) -> float | None:
    try:
        value = float(text.strip())
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def printf(args: Args, stdin: str | None) -> Result:
    words = _known(args)
    if words is None or not words:
        return UNKNOWN
    if words[0] == "--":
        words = words[1:]
    if not words or words[0].startswith("-") and words[0] != "-":
        return UNKNOWN  # -v is handled by the interpreter; other options are not modelled
    text = format_printf(words[0], words[1:])
    return UNKNOWN if text is None else Result(text)


# -- seq / sort / paste / head / tail / cat / dirname / basename -----------------------------
def seq(args: Args) -> Result:
    words = _known(args)
    if words is None:
        return UNKNOWN
    separator = "\n"
    numbers: list[str] = []
    i = 0
    while i < len(words):
        w = words[i]
        if w == "-s" and i + 1 < len(words):
            separator, i = words[i + 1], i + 2
            continue
        if w.startswith("-s") and len(w) > 2:
            separator, i = w[2:], i + 1
            continue
        numbers.append(w)
        i += 1
    ints = [_decimal(n) for n in numbers]
    if not 1 <= len(ints) <= 3 or any(v is None for v in ints):
        return UNKNOWN
    values = [v for v in ints if v is not None]
    first, step, last = (1, 1, values[0]) if len(values) == 1 else (
        (values[0], 1, values[1]) if len(values) == 2 else (values[0], values[1], values[2]))
    if step == 0 or abs(last - first) // abs(step) > 100_000:
        return UNKNOWN
    items = [str(v) for v in range(first, last + (1 if step > 0 else -1), step)] if (last - first) * step >= 0 else []
    return Result(separator.join(items) + "\n" if items else "")


def _lines(text: str) -> list[str]:
    return text.split("\n")[:-1] if text.endswith("\n") else text.split("\n") if text else []


def sort(args: Args, stdin: str | None) -> Result:
    words = _known(args)
    if words is None or stdin is None:
        return UNKNOWN
    flags = "".join(w[1:] for w in words if w.startswith("-") and not w.startswith("--"))
    if any(not w.startswith("-") for w in words) or set(flags) - set("nur"):
        return UNKNOWN
    lines = _lines(stdin)
    if "n" in flags:
        keys = [_float(x) if _float(x) is not None else 0.0 for x in lines]
        ordered = [x for _, x in sorted(zip(keys, lines), key=lambda p: (p[0], p[1]))]
    else:
        ordered = sorted(lines)
    if "r" in flags:
        ordered.reverse()
    if "u" in flags:
        seen: set[object] = set()
        unique = []
        for x in ordered:
            key = _float(x) if "n" in flags else x
            if key not in seen:
                seen.add(key)
                unique.append(x)
        ordered = unique
    return Result("".join(x + "\n" for x in ordered))


def paste(args: Args, stdin: str | None) -> Result:
    words = _known(args)
    if words is None or stdin is None:
        return UNKNOWN
    serial, delimiter, i = False, "\t", 0
    while i < len(words):
        w = words[i]
        if w == "-":
            i += 1
            continue
        m = re.fullmatch(r"-(s?)(?:d(.*))?", w)
        if m is None:
            return UNKNOWN
        serial = serial or bool(m.group(1))
        if m.group(2) is not None:
            delimiter = m.group(2)
        elif w.endswith("d") and i + 1 < len(words):
            delimiter = words[i + 1]
            i += 1
        i += 1
    if not serial or len(delimiter) != 1:
        return UNKNOWN
    return Result(delimiter.join(_lines(stdin)) + "\n")


def head_tail(name: str, args: Args, stdin: str | None) -> Result:
    words = _known(args)
    if words is None or stdin is None:
        return UNKNOWN
    count = 10
    if words == []:
        pass
    elif len(words) == 2 and words[0] == "-n" and words[1].isdigit():
        count = int(words[1])
    elif len(words) == 1 and re.fullmatch(r"-n?\d+", words[0]):
        count = int(words[0].lstrip("-n"))
    else:
        return UNKNOWN
    lines = _lines(stdin)
    kept = lines[:count] if name == "head" else lines[-count:] if count else []
    return Result("".join(x + "\n" for x in kept))


def dirname(args: Args) -> Result:
    words = _known(args)
    if words is None or len(words) != 1:
        return UNKNOWN
    path = words[0].rstrip("/") or "/"
    parent = posixpath.dirname(path).rstrip("/") if "/" in path else "."
    return Result((parent or "/") + "\n")


def basename(args: Args) -> Result:
    words = _known(args)
    if words is None or not 1 <= len(words) <= 2:
        return UNKNOWN
    name = posixpath.basename(words[0].rstrip("/")) or "/"
    if len(words) == 2 and name.endswith(words[1]) and name != words[1]:
        name = name[: -len(words[1])]
    return Result(name + "\n")


# -- awk 'BEGIN { ... }' and python3 -c 'print(...)' -------------------------------------------
_AWK_BEGIN = re.compile(r"^\s*BEGIN\s*\{(.*)\}\s*$", re.S)


def awk(args: Args) -> Result:
    """``awk [-v name=value]... 'BEGIN { print EXPR | printf FMT, ARGS | exit EXPR }'`` on numbers."""
    words = _known(args)
    if words is None:
        return UNKNOWN
    variables: dict[str, float] = {}
    program: str | None = None
    i = 0
    while i < len(words):
        w = words[i]
        if w == "-v" and i + 1 < len(words):
            name, sep, raw = words[i + 1].partition("=")
            number = _float(raw)
            if not sep or number is None:
                return UNKNOWN
            variables[name] = number
            i += 2
            continue
        if program is not None:
            return UNKNOWN  # input files
        program = w
        i += 1
    m = _AWK_BEGIN.match(program or "")
    if m is None:
        return UNKNOWN
    out: list[str] = []
    for statement in (s.strip() for s in re.split(r"[;\n]", m.group(1))):
        if not statement:
            continue
        keyword, _, rest = statement.partition(" ")
        if keyword.startswith("print") and keyword not in ("print", "printf"):
            keyword, rest = keyword[:5], statement[5:]
        if keyword == "print":
            values = [_awk_value(part, variables) for part in _split_args(rest)] if rest.strip() else []
            if any(v is None for v in values):
                return UNKNOWN
            out.append(" ".join(v for v in values if v is not None) + "\n")
        elif keyword == "printf":
            rest = rest.strip()
            if rest.startswith("(") and rest.endswith(")"):
                rest = rest[1:-1]  # printf(fmt, args)
            parts = _split_args(rest)
            fmt = _awk_string(parts[0]) if parts else None
            values = [_awk_value(p, variables) for p in parts[1:]]
            if fmt is None or any(v is None for v in values):
                return UNKNOWN
            text = format_printf(fmt, [v for v in values if v is not None])
            if text is None:
                return UNKNOWN
            out.append(text)
        elif keyword == "exit":
            number = _evaluate(_awk_to_python(rest), variables) if rest.strip() else 0.0
            if number is None:
                return UNKNOWN
            return Result("".join(out), number == 0)
        else:
            return UNKNOWN
    return Result("".join(out))


def _split_args(text: str) -> list[str]:
    parts, depth, quoted, start = [], 0, False, 0
    for i, c in enumerate(text):
        if c == '"':
            quoted = not quoted
        elif not quoted and c in "([":
            depth += 1
        elif not quoted and c in ")]":
            depth -= 1
        elif not quoted and depth == 0 and c == ",":
            parts.append(text[start:i].strip())
            start = i + 1
    parts.append(text[start:].strip())
    return [p for p in parts if p]


def _awk_string(text: str) -> str | None:
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] == '"':
        return text[1:-1]
    return None


def _awk_to_python(expr: str) -> str:
    expr = re.sub(r"!(?!=)", " not ", expr)
    return expr.replace("&&", " and ").replace("||", " or ").replace("^", "**")


def _awk_value(expr: str, variables: dict[str, float]) -> str | None:
    literal = _awk_string(expr)
    if literal is not None:
        return literal
    number = _evaluate(_awk_to_python(expr), variables)
    return None if number is None else _awk_number(number)


def _awk_number(number: float) -> str:
    """awk prints integral numbers as integers, others with OFMT ``%.6g``."""
    if float(number).is_integer() and abs(number) < 1e16:
        return str(int(number))
    return "%.6g" % number


_BINARY: dict[type, Callable[[float, float], float]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow,
}
_COMPARE: dict[type, Callable[[float, float], bool]] = {
    ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
    ast.Eq: operator.eq, ast.NotEq: operator.ne,
}
_FUNCTIONS: dict[str, Callable[..., float]] = {
    "int": lambda x: float(int(x)), "round": lambda x, n=0: float(round(x, int(n))), "min": min, "max": max,
    "abs": abs, "float": float,
}


def _evaluate(expr: str, variables: dict[str, float] | None) -> float | None:
    """A number from a small arithmetic expression (numbers, names, + - * / // % **, comparisons, and/or/not)."""
    try:
        tree = ast.parse(expr.strip(), mode="eval")
        return _eval_node(tree.body, variables)
    except (SyntaxError, ValueError, ZeroDivisionError, OverflowError, TypeError, RecursionError):
        return None


def _eval_node(node: ast.AST, variables: dict[str, float] | None) -> float | None:
    """``variables`` None: a name is an error (Python), else it reads the variable (0 when unset, as in awk)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return float(node.value)
    if isinstance(node, ast.Name):
        return None if variables is None else variables.get(node.id, 0.0)
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        a, b = _eval_node(node.left, variables), _eval_node(node.right, variables)
        return None if a is None or b is None else _BINARY[type(node.op)](a, b)
    if isinstance(node, ast.UnaryOp):
        v = _eval_node(node.operand, variables)
        if v is None:
            return None
        if isinstance(node.op, ast.USub):
            return -v
        if isinstance(node.op, ast.UAdd):
            return v
        if isinstance(node.op, ast.Not):
            return float(v == 0)
        return None
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _COMPARE:
        a, b = _eval_node(node.left, variables), _eval_node(node.comparators[0], variables)
        return None if a is None or b is None else float(_COMPARE[type(node.ops[0])](a, b))
    if isinstance(node, ast.BoolOp):
        values = [_eval_node(v, variables) for v in node.values]
        if any(v is None for v in values):
            return None
        known = [v for v in values if v is not None]
        return float(all(known) if isinstance(node.op, ast.And) else any(known))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _FUNCTIONS and not node.keywords:
        args = [_eval_node(a, variables) for a in node.args]
        if any(a is None for a in args):
            return None
        return float(_FUNCTIONS[node.func.id](*args))
    return None


_PY_PRINT = re.compile(r"^\s*print\((.*)\)\s*;?\s*$", re.S)


def python_c(args: Args) -> Result:
    """``python3 -c 'print(EXPR)'`` with EXPR plain arithmetic (no imports, no names)."""
    words = _known(args)
    if words is None or len(words) != 2 or words[0] != "-c":
        return UNKNOWN
    m = _PY_PRINT.match(words[1])
    if m is None:
        return UNKNOWN
    try:
        tree = ast.parse(m.group(1).strip(), mode="eval")
    except SyntaxError:
        return UNKNOWN
    value = _eval_node(tree.body, None)
    if value is None:
        return UNKNOWN
    integral = _python_integral(tree.body)
    return Result((str(int(value)) if integral and value.is_integer() else repr(value)) + "\n")


def _python_integral(node: ast.AST) -> bool:
    """Whether Python would print the expression as an int (no true division, no float literal)."""
    for sub in ast.walk(node):
        if isinstance(sub, ast.Constant) and isinstance(sub.value, float):
            return False
        if isinstance(sub, ast.BinOp) and isinstance(sub.op, ast.Div):
            return False
        if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name) and sub.func.id == "float":
            return False
    return True


def run(name: str, args: Args, stdin: str | None) -> Result | None:
    """The output of ``name ARGS`` with ``stdin``; None when the command is not modelled here."""
    base = posixpath.basename(name)
    if base == "echo":
        return echo(args, stdin)
    if base == "printf":
        return printf(args, stdin)
    if base == "seq":
        return seq(args)
    if base == "sort":
        return sort(args, stdin)
    if base == "paste":
        return paste(args, stdin)
    if base in ("head", "tail"):
        return head_tail(base, args, stdin)
    if base == "dirname":
        return dirname(args)
    if base == "basename":
        return basename(args)
    if base in ("awk", "gawk", "mawk"):
        return awk(args)
    if re.fullmatch(r"python3?(\.\d+)?", base):
        return python_c(args)
    if base in ("true", ":"):
        return Result("")
    if base == "false":
        return Result("", False)
    if base == "sed":
        output = substitute(args, stdin)
        return UNKNOWN if output is None else Result(output)
    if base == "grep":
        return grep(args, stdin)
    return None


def grep(args: Args, stdin: str | None) -> Result:
    """``grep [-q] [-E|-F] [--] PATTERN`` on standard input (``echo "$CONFIG" | grep -q -- '--flag'``): the
    matching lines, status whether any matched; any other option or a file operand is not modelled."""
    words = _known(args)
    if words is None or stdin is None:
        return UNKNOWN
    quiet, mode, pattern = False, "basic", None
    while words:
        word = words.pop(0)
        if word == "--" or not word.startswith("-") or len(word) == 1:
            pattern = words.pop(0) if word == "--" and words else word if word != "--" else None
            break
        if word == "-e" and words:
            pattern = words.pop(0)
            break
        for option in word[1:]:
            if option == "q":
                quiet = True
            elif option in "EF":
                mode = "extended" if option == "E" else "fixed"
            else:
                return UNKNOWN
    if pattern is None or words or "\n" in pattern:
        return UNKNOWN
    expression = re.escape(pattern) if mode == "fixed" else posix_expression(pattern, mode == "extended")
    if expression is None:
        return UNKNOWN
    try:
        compiled = re.compile(expression)
    except re.error:
        return UNKNOWN
    matched = [line for line in stdin.splitlines(keepends=True) if compiled.search(line.rstrip("\n"))]
    output = "" if quiet else "".join(line if line.endswith("\n") else line + "\n" for line in matched)
    return Result(output, bool(matched))


# Commands whose output may be computed (a substitution using only these, builtins and functions is evaluated).
MODELLED = frozenset({"echo", "printf", "seq", "sort", "paste", "head", "tail", "dirname", "basename", "awk", "gawk",
                      "mawk", "python", "python3", "true", "false", ":", "cat", "sed", "grep"})
