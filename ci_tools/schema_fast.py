"""A fast yes/no validator for the subset of JSON Schema that ``schemas/`` uses.

jsonschema is the reference: it produces the detailed errors that
:mod:`ci_tools.schema_check` turns into findings.  It is also slow to import
(about 0.1 s) and walks about 1 ms per master config, which alone would spend
the whole time budget of ``validate`` on a large repository.  Almost every
instance is valid, so the schema is compiled here into plain Python closures
that only answer "valid or not"; jsonschema runs only on the instances that
fail.  ``tests/test_schema_fast.py`` checks that both always agree.

Compilation refuses any keyword it does not implement, so a schema edit can
never make the fast path silently skip a rule.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Mapping

Check = Callable[[Any], bool]

# Keywords that do not constrain the instance.
_ANNOTATIONS = frozenset({"$schema", "$id", "$defs", "title", "description"})


def is_integer(value: Any) -> bool:
    """A YAML integer: not a bool, and not a float such as 8.0."""
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


_TYPES: dict[str, Check] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "integer": is_integer,
    "number": is_number,
    "null": lambda v: v is None,
}


def json_equal(a: Any, b: Any) -> bool:
    """Equality as JSON Schema defines it: ``true`` is not ``1``."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b))
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001 - exotic YAML values (dates...) compare unequal
        return False


class _Compiler:
    def __init__(self, root: Mapping[str, Any]) -> None:
        self.root = root
        self.refs: dict[str, Check] = {}

    def ref(self, pointer: str) -> Check:
        if pointer not in self.refs:
            if not pointer.startswith("#/"):
                raise ValueError(f"only local $ref is supported, found {pointer!r}")
            target: Any = self.root
            for part in pointer[2:].split("/"):
                target = target[part]
            holder: list[Check] = []
            # Recursive refs resolve lazily through the holder.
            self.refs[pointer] = lambda v: holder[0](v)
            holder.append(self.compile(target))
        return self.refs[pointer]

    def compile(self, schema: Any) -> Check:
        if schema is True:
            return lambda v: True
        if schema is False:
            return lambda v: False
        checks: list[Check] = []
        for keyword, value in schema.items():
            if keyword in _ANNOTATIONS or keyword.startswith("x-") or keyword in ("then", "else"):
                continue
            checks.append(self._keyword(keyword, value, schema))
        if len(checks) == 1:
            return checks[0]
        return lambda v: all(c(v) for c in checks)

    def _keyword(self, keyword: str, value: Any, schema: Mapping[str, Any]) -> Check:
        method = getattr(self, "k_" + keyword.replace("$", "").replace("-", "_"), None)
        if method is None:
            raise ValueError(f"schema keyword {keyword!r} is not supported by the fast validator")
        check: Check = method(value, schema)
        return check

    def k_ref(self, value: str, _: Any) -> Check:
        return self.ref(value)

    def k_type(self, value: str | list[str], _: Any) -> Check:
        names = [value] if isinstance(value, str) else list(value)
        tests = [_TYPES[n] for n in names]
        return lambda v: any(t(v) for t in tests)

    def k_enum(self, value: list[Any], _: Any) -> Check:
        return lambda v: any(json_equal(v, option) for option in value)

    def k_const(self, value: Any, _: Any) -> Check:
        return lambda v: json_equal(v, value)

    def k_minimum(self, value: float, _: Any) -> Check:
        return lambda v: not is_number(v) or v >= value

    def k_maximum(self, value: float, _: Any) -> Check:
        return lambda v: not is_number(v) or v <= value

    def k_exclusiveMinimum(self, value: float, _: Any) -> Check:
        return lambda v: not is_number(v) or v > value

    def k_minLength(self, value: int, _: Any) -> Check:
        return lambda v: not isinstance(v, str) or len(v) >= value

    def k_pattern(self, value: str, _: Any) -> Check:
        regex = re.compile(value)
        return lambda v: not isinstance(v, str) or regex.search(v) is not None

    def k_minItems(self, value: int, _: Any) -> Check:
        return lambda v: not isinstance(v, list) or len(v) >= value

    def k_minProperties(self, value: int, _: Any) -> Check:
        return lambda v: not isinstance(v, dict) or len(v) >= value

    def k_items(self, value: Any, _: Any) -> Check:
        item = self.compile(value)
        return lambda v: not isinstance(v, list) or all(item(x) for x in v)

    def k_required(self, value: list[str], _: Any) -> Check:
        return lambda v: not isinstance(v, dict) or all(k in v for k in value)

    def k_properties(self, value: Mapping[str, Any], _: Any) -> Check:
        props = {name: self.compile(sub) for name, sub in value.items()}

        def check(v: Any) -> bool:
            if not isinstance(v, dict):
                return True
            for name, sub in props.items():
                if name in v and not sub(v[name]):
                    return False
            return True

        return check

    def k_additionalProperties(self, value: Any, schema: Mapping[str, Any]) -> Check:
        known = frozenset(schema.get("properties", {}))
        if "patternProperties" in schema:
            raise ValueError("patternProperties is not supported by the fast validator")
        extra = self.compile(value)

        def check(v: Any) -> bool:
            if not isinstance(v, dict):
                return True
            return all(extra(item) for key, item in v.items() if key not in known)

        return check

    def k_propertyNames(self, value: Any, _: Any) -> Check:
        name = self.compile(value)
        return lambda v: not isinstance(v, dict) or all(name(k) for k in v)

    def k_dependentRequired(self, value: Mapping[str, list[str]], _: Any) -> Check:
        pairs = list(value.items())
        return lambda v: not isinstance(v, dict) or all(
            all(d in v for d in deps) for key, deps in pairs if key in v)

    def k_oneOf(self, value: list[Any], _: Any) -> Check:
        subs = [self.compile(s) for s in value]
        return lambda v: sum(1 for s in subs if s(v)) == 1

    def k_if(self, value: Any, schema: Mapping[str, Any]) -> Check:
        cond = self.compile(value)
        then = self.compile(schema.get("then", True))
        other = self.compile(schema.get("else", True))
        return lambda v: then(v) if cond(v) else other(v)


def compile_schema(schema: Mapping[str, Any]) -> Check:
    """A function telling whether an instance is valid against ``schema``."""
    return _Compiler(schema).compile(schema)
