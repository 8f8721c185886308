"""The shell state while a recipe is evaluated, and how two branches merge.

A variable holds a :class:`Value` (scalar) or an :class:`ArrayVal`.  When a
branch condition cannot be decided, both sides run on copies of the state
and :func:`merge` joins them:

- a scalar set to the same text on both sides stays as it is;
- a scalar set on one side only keeps that side's value, marked
  ``conditional`` (the other possibility is "as before / unset");
- a scalar set to different texts becomes unknown (``text=None``),
  ``conditional``, with both possibilities in ``alternatives``;
- arrays keep their common prefix and then the remaining elements of both
  sides, each marked ``conditional`` (``ARGS+=(--x 1)`` on one side gives
  ``--x 1`` as conditional flags);
- server command lines and early exits found on one side only are kept and
  marked ``conditional``;
- files the recipe wrote merge like scalars.
"""

from __future__ import annotations

import dataclasses
import posixpath
from dataclasses import dataclass, field
from itertools import compress
from operator import is_not
from typing import Callable, TypeVar, Union, cast

from ..findings import Location
from ..frozen import record
from .model import EarlyExit, MissingEnv, ServerFlag, Value


@record
class ArrayVal:
    items: tuple[Value, ...]
    location: Location
    expression: str = ""
    conditional: bool = False
    # An associative array (``declare -A``): the key of each item, in the order they were set.
    keys: tuple[str, ...] | None = None
    # More items may follow, how many is unknown (filled by a loop over an unknown list, `read -a` of an
    # unknown line): an index past ``items`` and the length are unknown, not unset.
    open: bool = False

    def get(self, key: str) -> Value | None:
        """The item at ``key`` of an associative array (None when unset)."""
        if self.keys is None:
            return None
        for k, v in zip(self.keys, self.items):
            if k == key:
                return v
        return None

    def with_item(self, key: str, value: Value, location: Location, expression: str) -> ArrayVal:
        keys = self.keys or ()
        if key in keys:
            i = keys.index(key)
            return ArrayVal(self.items[:i] + (value,) + self.items[i + 1:], location, expression, self.conditional, keys)
        return ArrayVal(self.items + (value,), location, expression, self.conditional, keys + (key,))

    def joined(self) -> Value:
        texts = [v.text for v in self.items]
        text = None if self.open or any(t is None for t in texts) else " ".join(t for t in texts if t is not None)
        return Value(text, self.location, self.conditional or any(v.conditional for v in self.items), self.expression)


Binding = Union[Value, ArrayVal]


@dataclass(frozen=True)
class Server:
    flags: tuple[ServerFlag, ...]
    location: Location
    argv: tuple[Value, ...]
    # A router in front of the servers (a router pattern matched), not an inference server.
    router: bool = False


def inference_servers(servers: list[Server]) -> list[Server]:
    """The servers of ``servers`` that are inference servers (routers left out)."""
    return [s for s in servers if not s.router]


@dataclass(slots=True)
class Captured:
    """The exported environment and all variables when the first server starts."""

    vars: dict[str, Binding]
    exported: frozenset[str]


@dataclass(slots=True)
class State:
    vars: dict[str, Binding] = field(default_factory=dict)
    exported: set[str] = field(default_factory=set)
    functions: dict[str, object] = field(default_factory=dict)
    positional: tuple[Value, ...] = ()
    servers: list[Server] = field(default_factory=list)
    early_exits: list[EarlyExit] = field(default_factory=list)
    missing: list[MissingEnv] = field(default_factory=list)
    captured: Captured | None = None
    # Files the recipe wrote (``cat > F <<EOF``), by path (see .streams.file_key): their content.
    files: dict[str, Value] = field(default_factory=dict)

    def clone(self) -> State:
        return State(dict(self.vars), set(self.exported), dict(self.functions), self.positional,
                     list(self.servers), list(self.early_exits), list(self.missing), self.captured,
                     dict(self.files) if self.files else {})


def conditional_value(v: Value) -> Value:
    return v if v.conditional else dataclasses.replace(v, conditional=True)


def conditional_binding(b: Binding) -> Binding:
    if isinstance(b, Value):
        return conditional_value(b)
    return dataclasses.replace(b, items=tuple(conditional_value(v) for v in b.items), conditional=True)


def _as_items(b: Binding) -> tuple[Value, ...]:
    return b.items if isinstance(b, ArrayVal) else (b,)


def _is_open(b: Binding) -> bool:
    return isinstance(b, ArrayVal) and b.open


def _alternatives(v: Value) -> tuple[Value, ...]:
    return v.alternatives if v.alternatives else (v,)


def _common_prefix(values: tuple[Value, ...]) -> str:
    """The leading text every one of ``values`` has (a known text, or an unknown one's known prefix)."""
    return posixpath.commonprefix([v.text if v.text is not None else v.known_prefix for v in values])


def merge_binding(a: Binding, b: Binding) -> Binding:
    if a is b:
        return a
    if isinstance(a, Value) and isinstance(b, Value):
        if a.text == b.text and a.text is not None:
            return a if a.conditional or not b.conditional else b
        if a.text is None and b.text is None and not a.alternatives and not b.alternatives:
            if a.known_prefix != b.known_prefix:
                return dataclasses.replace(a, conditional=True, known_prefix=_common_prefix((a, b)))
            return conditional_value(a)
        alts = _alternatives(a) + tuple(x for x in _alternatives(b) if x not in _alternatives(a))
        return Value(None, a.location, True, a.expression or b.expression, alts, _common_prefix(alts))
    if isinstance(a, ArrayVal) and isinstance(b, ArrayVal) and (a.keys is not None or b.keys is not None):
        return _merge_associative(a, b)
    ia, ib = _as_items(a), _as_items(b)
    opened = _is_open(a) or _is_open(b)
    if len(ia) == len(ib) and all(x.text == y.text and x.text is not None for x, y in zip(ia, ib)) \
            and opened == _is_open(a):
        return a
    prefix = 0
    while prefix < min(len(ia), len(ib)) and ia[prefix].text == ib[prefix].text and ia[prefix].text is not None:
        prefix += 1
    items = ia[:prefix] + tuple(conditional_value(v) for v in ia[prefix:] + ib[prefix:])
    where = a if isinstance(a, ArrayVal) else b
    assert isinstance(where, ArrayVal)
    return ArrayVal(items, where.location, where.expression, True, open=opened)


def _merge_associative(a: ArrayVal, b: ArrayVal) -> ArrayVal:
    """Key by key; a key set on one side only is conditional."""
    merged = ArrayVal((), a.location, a.expression, True, ())
    for key in list(a.keys or ()) + [k for k in b.keys or () if k not in (a.keys or ())]:
        x, y = a.get(key), b.get(key)
        value = merge_binding(x, y) if x is not None and y is not None else conditional_binding(x or y)  # type: ignore[arg-type]
        assert isinstance(value, Value)
        merged = merged.with_item(key, value, a.location, a.expression)
    return dataclasses.replace(merged, conditional=True)


def _merge_vars(a: dict[str, Binding], b: dict[str, Binding]) -> dict[str, Binding]:
    if a is b:
        return a
    # Both sides are copies of one state: most bindings are the same object.  The names whose
    # bindings differ are found without a Python-level loop over every variable.
    out = dict(a)
    get = b.get
    for name in compress(a, map(is_not, a.values(), map(get, a))):
        x, y = a[name], get(name)
        out[name] = conditional_binding(x) if y is None else merge_binding(x, y)
    for name in b.keys() - a.keys():
        out[name] = conditional_binding(b[name])
    # Keep the order of the side that had every name (the order of assignment, for reports).
    return out


def _conditional_server(s: Server) -> Server:
    flags = tuple(dataclasses.replace(f, conditional=True, value=conditional_value(f.value) if f.value else None)
                  for f in s.flags)
    return dataclasses.replace(s, flags=flags)


def _conditional_exit(e: EarlyExit) -> EarlyExit:
    return e if e.conditional else dataclasses.replace(e, conditional=True)


T = TypeVar("T")


def _joined(base: int, a: list[T], b: list[T], conditional: Callable[[T], T]) -> list[T]:
    """Items of both sides after the first ``base``: those found on one side only become conditional.

    Both sides descend from one state, so an item recorded before they split is the same object on
    both (paths joined at the end of a loop or function share what happened before they split).
    """
    extra_a, extra_b = a[base:], b[base:]
    if not extra_a and not extra_b:
        return a[:base]
    ids_a, ids_b = {id(x) for x in extra_a}, {id(x) for x in extra_b}
    return (a[:base] + [x if id(x) in ids_b else conditional(x) for x in extra_a]
            + [conditional(x) for x in extra_b if id(x) not in ids_a])


def merge(before: State, a: State, b: State) -> State:
    """Join the states after the two sides of an undecidable branch."""
    n_servers, n_exits = len(before.servers), len(before.early_exits)
    servers = _joined(n_servers, a.servers, b.servers, _conditional_server)
    exits = _joined(n_exits, a.early_exits, b.early_exits, _conditional_exit)
    missing = list(a.missing) + [m for m in b.missing if m not in a.missing]
    captured = a.captured
    if a.captured is not b.captured:
        if a.captured is not None and b.captured is not None:
            captured = Captured(_merge_vars(a.captured.vars, b.captured.vars), a.captured.exported | b.captured.exported)
        else:
            captured = a.captured or b.captured
    functions = dict(a.functions)
    functions.update({k: v for k, v in b.functions.items() if k not in functions})
    files = a.files
    if a.files is not b.files and (a.files or b.files):
        files = {k: cast(Value, v) for k, v in _merge_vars(cast(dict[str, Binding], a.files),
                                                           cast(dict[str, Binding], b.files)).items()}
    return State(_merge_vars(a.vars, b.vars), a.exported | b.exported, functions, a.positional,
                 servers, exits, missing, captured, files)
