"""GitHub Actions expressions (``${{ ... }}``), evaluated where a value can be known.

Enough of the language for the workflow templates that define a job's
environment: literals, context property access (``matrix.config['x'].name``,
``labels.*.name``), ``!``, comparisons, ``&&``/``||`` (which yield an
operand, as in Actions), and the functions ``contains``, ``startsWith``,
``endsWith``, ``format``, ``join``, ``toJSON``, ``fromJSON``.

A context that is not known before the job runs (``secrets``, ``runner``,
``github``, ``vars``, ``needs``, ...) evaluates to :data:`UNKNOWN`, and so
does anything computed from it, unless the result does not depend on it
(``false && x``).  Expressions are compiled once into closures over the
context mapping, because the same template is evaluated for every job.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence


class ExprError(ValueError):
    """An expression that does not parse; ``message`` says what was found and what was expected."""


class _Unknown:
    """A value only known when the job runs."""

    _instance: _Unknown | None = None

    def __new__(cls) -> _Unknown:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "UNKNOWN"


UNKNOWN: Any = _Unknown()

Context = Mapping[str, Any]
Compiled = Callable[[Context], Any]


@dataclass(frozen=True)
class _Filtered:
    """The result of ``.*``: property access maps over its items."""

    items: tuple[Any, ...]


# -- values ------------------------------------------------------------------------------------


def to_text(value: Any) -> str | None:
    """A value as Actions writes it into a string (None: unknown)."""
    if type(value) is str:
        return value
    if value is UNKNOWN:
        return None
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        return str(int(value)) if value.is_integer() else repr(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, (list, _Filtered)):
        return "Array"
    if isinstance(value, dict):
        return "Object"
    return str(value)


def truthy(value: Any) -> bool | None:
    if value is UNKNOWN:
        return None
    if value is None or value is False:
        return False
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value != 0 and not (isinstance(value, float) and math.isnan(value))
    if isinstance(value, str):
        return value != ""
    return True


def to_json_text(value: Any) -> str:
    """``toJSON``: two-space indented JSON, as Actions prints it."""
    if isinstance(value, _Filtered):
        value = list(value.items)
    return json.dumps(value, indent=2, ensure_ascii=False)


def _number(value: Any) -> float:
    if value is None:
        return 0.0
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        text = value.strip()
        if text == "":
            return 0.0
        try:
            return float(int(text, 16)) if text.lower().startswith("0x") else float(text)
        except ValueError:
            return math.nan
    return math.nan


def _equal(a: Any, b: Any) -> bool:
    if isinstance(a, str) and isinstance(b, str):
        return a.casefold() == b.casefold()
    if isinstance(a, (dict, list, _Filtered)) or isinstance(b, (dict, list, _Filtered)):
        return a is b
    if type(a) is type(b) or (isinstance(a, (int, float)) and isinstance(b, (int, float))
                              and not isinstance(a, bool) and not isinstance(b, bool)):
        return bool(a == b)
    return _number(a) == _number(b)


def _property(obj: Any, name: Any) -> Any:
    if type(obj) is dict and name in obj:
        return obj[name]
    if obj is UNKNOWN or name is UNKNOWN:
        return UNKNOWN
    if isinstance(obj, _Filtered):
        return _Filtered(tuple(v for v in (_property(item, name) for item in obj.items) if v is not None))
    if isinstance(obj, dict):
        if isinstance(name, str):
            if name in obj:
                return obj[name]
            folded = name.casefold()  # property names are case-insensitive
            for key, value in obj.items():
                if isinstance(key, str) and key.casefold() == folded:
                    return value
        return None
    if isinstance(obj, list) and isinstance(name, (int, float)) and not isinstance(name, bool):
        index = int(name)
        return obj[index] if 0 <= index < len(obj) and index == name else None
    return None


def _star(obj: Any) -> Any:
    if obj is UNKNOWN:
        return UNKNOWN
    if isinstance(obj, list):
        return _Filtered(tuple(obj))
    if isinstance(obj, dict):
        return _Filtered(tuple(obj.values()))
    return _Filtered(())


# -- functions ---------------------------------------------------------------------------------


def _fn_contains(search: Any, item: Any) -> Any:
    if isinstance(search, (list, _Filtered)):
        items = search.items if isinstance(search, _Filtered) else search
        if item is UNKNOWN or any(i is UNKNOWN for i in items):
            return UNKNOWN
        return any(_equal(i, item) for i in items)
    a, b = to_text(search), to_text(item)
    return UNKNOWN if a is None or b is None else b.casefold() in a.casefold()


def _fn_starts_with(text: Any, prefix: Any) -> Any:
    a, b = to_text(text), to_text(prefix)
    return UNKNOWN if a is None or b is None else a.casefold().startswith(b.casefold())


def _fn_ends_with(text: Any, suffix: Any) -> Any:
    a, b = to_text(text), to_text(suffix)
    return UNKNOWN if a is None or b is None else a.casefold().endswith(b.casefold())


_FORMAT_ITEM = re.compile(r"\{\{|\}\}|\{(\d+)\}")


def _fn_format(fmt: Any, *args: Any) -> Any:
    texts = [to_text(a) for a in args]
    pattern = to_text(fmt)
    if pattern is None or any(t is None for t in texts):
        return UNKNOWN

    def repl(m: re.Match[str]) -> str:
        if m.group(0) == "{{":
            return "{"
        if m.group(0) == "}}":
            return "}"
        index = int(m.group(1))
        if index >= len(texts):
            raise ExprError(f"format() has no argument {index}")
        return texts[index] or ""

    return _FORMAT_ITEM.sub(repl, pattern)


def _fn_join(items: Any, separator: Any = ",") -> Any:
    if items is UNKNOWN or separator is UNKNOWN:
        return UNKNOWN
    sep = to_text(separator) or ""
    if isinstance(items, (list, _Filtered)):
        texts = [to_text(i) for i in (items.items if isinstance(items, _Filtered) else items)]
        return UNKNOWN if any(t is None for t in texts) else sep.join(t or "" for t in texts)
    return to_text(items)


def _fn_to_json(value: Any) -> Any:
    return UNKNOWN if value is UNKNOWN else to_json_text(value)


def _fn_from_json(text: Any) -> Any:
    if text is UNKNOWN:
        return UNKNOWN
    try:
        return json.loads(to_text(text) or "")
    except json.JSONDecodeError:
        return UNKNOWN  # Actions fails the job here; nothing the recipe receives is known then


_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "contains": _fn_contains, "startswith": _fn_starts_with, "endswith": _fn_ends_with, "format": _fn_format,
    "join": _fn_join, "tojson": _fn_to_json, "fromjson": _fn_from_json,
}
# Status and file functions depend on the run: never known beforehand.
_RUNTIME_FUNCTIONS = {"success", "always", "cancelled", "failure", "hashfiles"}


# -- parsing -----------------------------------------------------------------------------------

_TOKEN = re.compile(r"""
    (?P<ws>\s+)
  | (?P<string>'(?:[^']|'')*')
  | (?P<number>-?(?:0x[0-9a-fA-F]+|\d+(?:\.\d+)?(?:[eE][+-]?\d+)?))
  | (?P<name>[A-Za-z_][A-Za-z0-9_-]*)
  | (?P<op>==|!=|<=|>=|&&|\|\||[<>!()\[\].,*])
""", re.X)


@dataclass(frozen=True)
class _Tok:
    kind: str
    text: str
    pos: int


def _tokens(text: str) -> list[_Tok]:
    out: list[_Tok] = []
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise ExprError(f"unexpected character {text[pos]!r} at column {pos + 1} of `{text}`")
        kind = m.lastgroup or ""
        if kind != "ws":
            out.append(_Tok(kind, m.group(0), pos))
        pos = m.end()
    out.append(_Tok("end", "", len(text)))
    return out


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.toks = _tokens(text)
        self.i = 0

    def peek(self) -> _Tok:
        return self.toks[self.i]

    def take(self, text: str | None = None) -> _Tok:
        tok = self.toks[self.i]
        if text is not None and tok.text != text:
            found = tok.text or "the end"
            raise ExprError(f"expected `{text}` at column {tok.pos + 1} of `{self.text}`, found {found!r}")
        self.i += 1
        return tok

    def parse(self) -> Compiled:
        node = self.or_()
        if self.peek().kind != "end":
            tok = self.peek()
            raise ExprError(f"unexpected `{tok.text}` at column {tok.pos + 1} of `{self.text}`; expected the end")
        return node

    def binary(self, operand: Callable[[], Compiled], ops: tuple[str, ...]) -> Compiled:
        """Left-associative operators of one precedence level."""
        left = operand()
        while self.peek().text in ops:
            op = self.take().text
            right = operand()
            left = _logical(left, right, op == "||") if op in ("||", "&&") else _compare(op, left, right)
        return left

    def or_(self) -> Compiled:
        return self.binary(self.and_, ("||",))

    def and_(self) -> Compiled:
        return self.binary(self.equality, ("&&",))

    def equality(self) -> Compiled:
        return self.binary(self.comparison, ("==", "!="))

    def comparison(self) -> Compiled:
        return self.binary(self.unary, ("<", "<=", ">", ">="))

    def unary(self) -> Compiled:
        if self.peek().text == "!":
            self.take()
            inner = self.unary()

            def not_(ctx: Context) -> Any:
                t = truthy(inner(ctx))
                return UNKNOWN if t is None else not t
            return not_
        return self.postfix(self.primary())

    def postfix(self, node: Compiled) -> Compiled:
        # Runs of `.name` are looked up in one closure: most expressions are `matrix.config.x` chains.
        names: list[str] = []
        while True:
            tok = self.peek().text
            if tok != "." or self.toks[self.i + 1].text == "*":
                if names:
                    node, names = _chain(node, tuple(names)), []
            if tok == ".":
                self.take()
                nxt = self.take()
                if nxt.text == "*":
                    node = _bind1(_star, node)
                elif nxt.kind == "name":
                    names.append(nxt.text)
                    continue
                else:
                    raise ExprError(f"expected a property name after `.` at column {nxt.pos + 1} of `{self.text}`")
            elif tok == "[":
                self.take()
                if self.peek().text == "*":
                    self.take()
                    node = _bind1(_star, node)
                else:
                    index = self.or_()
                    node = _prop_dynamic(node, index)
                self.take("]")
            else:
                return node

    def primary(self) -> Compiled:
        tok = self.take()
        if tok.kind == "string":
            value: Any = tok.text[1:-1].replace("''", "'")
            return lambda ctx: value
        if tok.kind == "number":
            number = float(int(tok.text, 16)) if "x" in tok.text.lower() else float(tok.text)
            return lambda ctx: number
        if tok.text == "(":
            inner = self.or_()
            self.take(")")
            return inner
        if tok.kind == "name":
            word = tok.text
            if self.peek().text == "(":
                return self.call(word, tok)
            constants = {"true": True, "false": False, "null": None, "NaN": math.nan, "Infinity": math.inf}
            if word in constants:
                constant = constants[word]
                return lambda ctx: constant
            return lambda ctx: ctx.get(word, UNKNOWN)
        found = tok.text or "the end"
        raise ExprError(f"expected a value at column {tok.pos + 1} of `{self.text}`, found {found!r}")

    def call(self, name: str, tok: _Tok) -> Compiled:
        self.take("(")
        args: list[Compiled] = []
        if self.peek().text != ")":
            args.append(self.or_())
            while self.peek().text == ",":
                self.take()
                args.append(self.or_())
        self.take(")")
        key = name.casefold()
        if key in _RUNTIME_FUNCTIONS:
            return lambda ctx: UNKNOWN
        fn = _FUNCTIONS.get(key)
        if fn is None:
            raise ExprError(f"unknown function `{name}` at column {tok.pos + 1} of `{self.text}`; expected one of "
                            f"{', '.join(sorted({*_FUNCTIONS, *_RUNTIME_FUNCTIONS}))}")
        return _call(fn, args, unknown_in_unknown_out=key not in ("contains", "join", "format", "tojson"))


def _bind1(fn: Callable[[Any], Any], node: Compiled) -> Compiled:
    return lambda ctx: fn(node(ctx))


def _chain(node: Compiled, names: tuple[str, ...]) -> Compiled:
    def run(ctx: Context) -> Any:
        value = node(ctx)
        for name in names:
            value = _property(value, name)
        return value
    return run


def _prop_dynamic(node: Compiled, index: Compiled) -> Compiled:
    return lambda ctx: _property(node(ctx), index(ctx))


def _call(fn: Callable[..., Any], args: Sequence[Compiled], *, unknown_in_unknown_out: bool) -> Compiled:
    def run(ctx: Context) -> Any:
        values = [a(ctx) for a in args]
        if unknown_in_unknown_out and any(v is UNKNOWN for v in values):
            return UNKNOWN
        return fn(*values)
    return run


def _logical(left: Compiled, right: Compiled, decides: bool) -> Compiled:
    """``||`` (``decides`` True) and ``&&`` (False): the left operand when its truth decides, else the
    right one; unknown when the left operand's truth is."""
    def run(ctx: Context) -> Any:
        a = left(ctx)
        t = truthy(a)
        if t is decides:
            return a
        return UNKNOWN if t is None else right(ctx)
    return run


def _compare(op: str, left: Compiled, right: Compiled) -> Compiled:
    def run(ctx: Context) -> Any:
        a, b = left(ctx), right(ctx)
        if a is UNKNOWN or b is UNKNOWN:
            return UNKNOWN
        if op == "==":
            return _equal(a, b)
        if op == "!=":
            return not _equal(a, b)
        if isinstance(a, str) and isinstance(b, str):
            x: Any = a.casefold()
            y: Any = b.casefold()
        else:
            x, y = _number(a), _number(b)
            if math.isnan(x) or math.isnan(y):
                return False
        return {"<": x < y, "<=": x <= y, ">": x > y, ">=": x >= y}[op]
    return run


def compile_expression(text: str) -> Compiled:
    """One expression (the text between ``${{`` and ``}}``)."""
    return _Parser(text).parse()


_EMBEDDED = re.compile(r"\$\{\{(.*?)\}\}", re.S)


def _pieces(text: str) -> list[Compiled | str]:
    """Literal text and compiled expressions, alternating."""
    return [compile_expression(p.strip()) if i % 2 else p for i, p in enumerate(_EMBEDDED.split(text))]


def _render(pieces: list[Compiled | str], ctx: Context, unknown: str | None) -> str | None:
    """The pieces as one string; an expression not known gives ``unknown`` in its place (None: no string)."""
    out: list[str] = []
    for piece in pieces:
        if isinstance(piece, str):
            out.append(piece)
            continue
        text = to_text(piece(ctx))
        if text is None:
            if unknown is None:
                return None
            text = unknown
        out.append(text)
    return "".join(out)


def compile_value(raw: Any) -> Compiled:
    """A YAML value of a ``with:``/``env:`` mapping.

    A string that is exactly one ``${{ }}`` keeps the expression's type
    (true stays a boolean); a string mixing text and expressions is their
    concatenation; any other YAML scalar is taken as is.
    """
    if not isinstance(raw, str) or "${{" not in raw:
        return lambda ctx: raw
    pieces = _pieces(raw)
    if len(pieces) == 3:
        before, single, after = pieces
        if isinstance(before, str) and isinstance(after, str) and not isinstance(single, str) \
                and not before.strip() and not after.strip():
            return single

    def concat(ctx: Context) -> Any:
        text = _render(pieces, ctx, None)
        return UNKNOWN if text is None else text
    return concat


def compile_text(text: str, unknown: str) -> Callable[[Context], str]:
    """Text (a ``run:`` script) with each ``${{ }}`` replaced by its value, as Actions substitutes it
    before the shell starts; an expression whose value is not known becomes ``unknown``."""
    pieces = _pieces(text)
    return lambda ctx: _render(pieces, ctx, unknown) or ""
