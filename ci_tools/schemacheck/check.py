"""Schema validation with positions and messages a person understands.

The schemas in ``schemas/`` are the single source of shape rules.  An
instance is first checked by jsonschema-rs (a compiled JSON Schema engine,
:func:`is_valid`); only when it fails does python-jsonschema run, with
``iter_errors``, to find every error.  Each error's ``absolute_path`` is
walked through the :class:`~ci_tools.revision.yamlpos.PosMap` / ``PosSeq`` containers
to the line and column of the offending key or value, and worded from the
error's keyword, the field name and the ``title`` of the schema that failed.

Custom keywords in the schemas (ignored by validators) steer the wording:
``x-messages`` maps a failing keyword to a named message, and
``x-unknown-key-hints`` adds advice for unknown keys people commonly misplace.
"""

from __future__ import annotations

import difflib
import json
import math
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Iterable, Mapping

from ..revision.yamlpos import PosMap, PosSeq, Span, describe_type

if TYPE_CHECKING:  # jsonschema is imported only when an instance is invalid
    from jsonschema.exceptions import ValidationError
    from jsonschema.protocols import Validator

MASTER_CONFIG = "master-config"
RUNNERS = "runners"
CHANGELOG_ENTRY = "changelog-entry"
SCHEMA_NAMES = (MASTER_CONFIG, RUNNERS, CHANGELOG_ENTRY)


def _schema_text(name: str) -> str:
    from importlib import (
        resources,  # deferred: a clean run never reads the schema files
    )

    return resources.files("ci_tools").joinpath("schemas", f"{name}.schema.json").read_text(encoding="utf-8")


@lru_cache(maxsize=None)
def load_schema(name: str) -> Mapping[str, Any]:
    """A schema shipped as package data (``ci_tools/schemas/<name>.schema.json``)."""
    schema: Mapping[str, Any] = json.loads(_schema_text(name))
    return schema


def schema_digest(name: str) -> str:
    import hashlib

    return hashlib.sha256(_schema_text(name).encode("utf-8")).hexdigest()


def is_integer(value: Any) -> bool:
    """A YAML integer: not a bool, and not a float such as 8.0."""
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value: Any) -> bool:
    """A finite number: YAML's ``.nan`` and ``.inf`` are not usable values."""
    if isinstance(value, bool):
        return False
    if isinstance(value, float):
        return math.isfinite(value)
    return isinstance(value, int)


class FastCheck:
    """Whether an instance is valid against a schema, as python-jsonschema with ci-tools' integers judges it.

    jsonschema-rs (a compiled JSON Schema engine) answers, except where the two disagree by design: JSON has
    no type for a date, a set or a key that is not a string (jsonschema-rs refuses the value: the answer is
    False, and python-jsonschema decides), and JSON Schema takes ``8.0`` for an integer where ci-tools does
    not (a float with a whole value where the schema may require an integer is False too).
    """

    def __init__(self, schema: Mapping[str, Any]) -> None:
        import jsonschema_rs

        # `$schema` is left out: the class names the draft, and resolving the meta-schema URI makes
        # jsonschema-rs build its registry of meta-schemas (5-15 ms) for nothing.
        self._engine = jsonschema_rs.Draft202012Validator(
            {k: v for k, v in schema.items() if k not in ("$schema", "$id")})
        self._integer_keys = _integer_keys(schema)

    def __call__(self, instance: Any, whole_floats: bool = True) -> bool:
        """``whole_floats`` False says the instance holds no float with a whole value (the YAML loader knows
        where they are written), which spares looking for one."""
        try:
            valid = bool(self._engine.is_valid(instance))
        except (ValueError, TypeError, OverflowError, RecursionError):
            return False
        if valid and whole_floats and _float_for_integer(instance, self._integer_keys):
            return False
        return valid


@lru_cache(maxsize=None)
def _fast(name: str) -> FastCheck:
    return FastCheck(load_schema(name))


def _requires_integer(schema: Any, root: Mapping[str, Any], seen: frozenset[str] = frozenset()) -> bool:
    """Whether ``schema`` (through references, combinators and list items, not into properties) asks for
    an integer somewhere."""
    if not isinstance(schema, dict):
        return False
    kind = schema.get("type")
    if kind == "integer" or (isinstance(kind, list) and "integer" in kind):
        return True
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/") and ref not in seen:
        target: Any = root
        for part in ref[2:].split("/"):
            target = target.get(part, {}) if isinstance(target, dict) else {}
        if _requires_integer(target, root, seen | {ref}):
            return True
    parts = [schema.get(k) for k in ("items", "if", "then", "else", "not")]
    parts += [s for k in ("oneOf", "anyOf", "allOf") for s in schema.get(k, ())]
    return any(_requires_integer(p, root, seen) for p in parts)


def _integer_keys(root: Mapping[str, Any]) -> frozenset[str] | None:
    """The keys whose values (or list items) the schema may require to be integers; None when such a value
    can sit under any key (an ``additionalProperties`` of integers, or an integer document)."""
    keys: set[str] = set()
    anywhere = _requires_integer(root, root)

    def walk(node: Any) -> None:
        nonlocal anywhere
        if isinstance(node, dict):
            for key, sub in (node.get("properties") or {}).items():
                if _requires_integer(sub, root):
                    keys.add(key)
            extra = node.get("additionalProperties")
            if isinstance(extra, dict) and _requires_integer(extra, root):
                anywhere = True
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(root)
    return None if anywhere else frozenset(keys)


def _float_for_integer(value: Any, keys: frozenset[str] | None, under: bool = False) -> bool:
    """Whether a float with a whole value (which JSON Schema takes for an integer) sits where an integer may be
    required (anywhere, when ``keys`` is None)."""
    if isinstance(value, dict):
        return any(_float_for_integer(v, keys, keys is None or k in keys) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return any(_float_for_integer(v, keys, under) for v in value)
    return type(value) is float and value.is_integer() and (under or keys is None)


@lru_cache(maxsize=None)
def validator_class() -> Any:
    """Draft 2020-12 with the integer and number types ci-tools means."""
    from jsonschema import Draft202012Validator, validators

    # A YAML 8.0 or true where an integer is expected is a mistake, not an
    # integer: the matrix and the recipes would receive "8.0" / "True".
    # .nan and .inf are no usable number either (and would pass `minimum`).
    checker = Draft202012Validator.TYPE_CHECKER.redefine_many({
        "integer": lambda _c, v: is_integer(v),
        "number": lambda _c, v: is_number(v),
    })
    return validators.extend(Draft202012Validator, type_checker=checker)  # type: ignore[no-untyped-call]


@lru_cache(maxsize=None)
def _validator(name: str) -> Validator:
    validator: Validator = validator_class()(load_schema(name))
    return validator


@dataclass(frozen=True)
class Anchor:
    """Where the validated instance sits in its file.

    ``key_span`` is where the instance is named (a config key, a list item),
    ``value_span`` where its value is written, ``name`` how messages call the
    instance as a whole ("config `dsv4-fp4-mi355x-atom`").
    """

    value: Any
    key_span: Span
    value_span: Span
    name: str
    # False when the loader saw no float with a whole value (8.0) among the instance's lines.
    whole_floats: bool = True


@dataclass(frozen=True)
class SchemaProblem:
    message: str
    span: Span
    path: tuple[Any, ...]
    keyword: str
    data: Mapping[str, Any] = field(default_factory=dict)


def is_valid(name: str, instance: Any, whole_floats: bool = True) -> bool:
    """Whether ``instance`` is valid against schema ``name`` (see :class:`FastCheck`)."""
    return _fast(name)(instance, whole_floats)


def check(name: str, anchor: Anchor) -> list[SchemaProblem]:
    """Every schema problem of ``anchor.value`` against schema ``name``."""
    if is_valid(name, anchor.value, anchor.whole_floats):
        return []
    errors = list(_validator(name).iter_errors(anchor.value))
    problems: list[SchemaProblem] = []
    for error in _best(errors):
        problems.extend(_describe(error, anchor))
    seen: set[tuple[str, Span]] = set()
    unique = []
    for p in problems:
        if (p.message, p.span) not in seen:
            seen.add((p.message, p.span))
            unique.append(p)
    return unique


def _best(errors: list[ValidationError]) -> list[ValidationError]:
    """Drop combinator errors where a more specific error names the same spot.

    A failing ``oneOf`` says little when a plain error at the same path (or
    below it) already explains the problem.
    """
    paths = [tuple(e.absolute_path) for e in errors]
    kept = []
    for error, path in zip(errors, paths):
        if error.validator in ("oneOf", "anyOf") and not _named(error):
            if any(p[: len(path)] == path and other is not error
                   for other, p in zip(errors, paths) if other.validator not in ("oneOf", "anyOf")):
                continue
        kept.append(error)
    return kept


def _named(error: ValidationError) -> str | None:
    messages = error.schema.get("x-messages") if isinstance(error.schema, dict) else None
    if isinstance(messages, dict):
        value = messages.get(str(error.validator))
        return value if isinstance(value, str) else None
    return None


# --- positions -------------------------------------------------------------

def _walk(anchor: Anchor, path: Iterable[Any]) -> tuple[Any, Any, Any, Span, Span]:
    """(parent, last path element, node, key span, value span) at ``path``."""
    node, parent, last = anchor.value, None, None
    key_span, value_span = anchor.key_span, anchor.value_span
    for part in path:
        parent, last = node, part
        if isinstance(node, PosMap) and part in node:
            key_span, value_span = node.key_span(part), node.value_span(part)
            node = node[part]
        elif isinstance(node, PosSeq) and isinstance(part, int) and 0 <= part < len(node):
            key_span = value_span = node.item_span(part)
            node = node[part]
        else:
            break
    return parent, last, node, key_span, value_span


def _key_span_in(node: Any, key: Any, fallback: Span) -> Span:
    if isinstance(node, PosMap) and key in node:
        return node.key_span(key)
    return fallback


# --- wording ---------------------------------------------------------------

_TYPE_NAMES = {
    "integer": "an integer", "number": "a number", "string": "a string", "boolean": "true or false",
    "object": "a mapping", "array": "a list", "null": "null",
}


def _code(value: Any) -> str:
    return f"`{value}`"


def _field(anchor: Anchor, path: tuple[Any, ...]) -> str:
    """How a message names the value at ``path``."""
    if not path:
        return anchor.name
    last = path[-1]
    if isinstance(last, int):
        owner = next((p for p in reversed(path) if not isinstance(p, int)), None)
        where = f" of `{owner}`" if owner is not None else ""
        return f"item {last + 1}{where}"
    return _code(last)


def _title(error: ValidationError, default: str = "mapping") -> str:
    """How messages name the mapping that failed: its schema's title, or for
    a multinode worker its role ("prefill block")."""
    schema = error.schema if isinstance(error.schema, dict) else {}
    title = schema.get("title")
    if title == "worker block" and error.absolute_path and isinstance(error.absolute_path[-1], str):
        return f"{error.absolute_path[-1]} block"
    return title if isinstance(title, str) else default


def _one_line(items: Iterable[Any]) -> str:
    return ", ".join(str(i) for i in items)


def _describe(error: ValidationError, anchor: Anchor) -> list[SchemaProblem]:
    path = tuple(error.absolute_path)
    parent, last, node, key_span, value_span = _walk(anchor, path)
    keyword = str(error.validator)
    expected_value: Any = error.validator_value
    instance: Any = error.instance
    schema = error.schema if isinstance(error.schema, dict) else {}
    what = _field(anchor, path)
    found = describe_type(instance)
    container_span = key_span  # where an object is named, for problems of the whole object

    def one(message: str, span: Span = value_span, **data: Any) -> list[SchemaProblem]:
        return [SchemaProblem(message, span, path, keyword, data)]

    named = _named(error)
    if keyword == "type":
        expected = expected_value
        names = [expected] if isinstance(expected, str) else list(expected)
        wanted = " or ".join(_TYPE_NAMES.get(n, n) for n in names)
        if isinstance(instance, float) and not math.isfinite(instance) and "number" in names:
            wanted, found = "a finite number", {True: ".nan"}.get(math.isnan(instance), ".inf" if instance > 0 else "-.inf")
        return one(f"{what} must be {wanted}, found {found}", expected=names, found=found)
    if keyword == "required":
        missing = [k for k in expected_value if not (isinstance(node, dict) and k in node)]
        in_what = _title(error) if path else anchor.name
        return [SchemaProblem(f"missing required key `{k}` in {in_what}", container_span, path, keyword, {"key": k})
                for k in missing]
    if keyword == "additionalProperties":
        known = list(schema.get("properties", {}))
        hints = schema.get("x-unknown-key-hints", {})
        out = []
        extras = [k for k in (node if isinstance(node, dict) else {}) if k not in known]
        title = _title(error)
        in_what = title if path else anchor.name
        for key in extras:
            hint = hints.get(key) if isinstance(hints, dict) and isinstance(key, str) else None
            close = difflib.get_close_matches(str(key), known, n=1, cutoff=0.75)
            if hint:
                tail = f" ({hint})"
            elif close:
                tail = f"; did you mean `{close[0]}`?"
            else:
                tail = f"; expected one of: {_one_line(known)}"
            out.append(SchemaProblem(f"unknown key `{key}` in {in_what}{tail}",
                                     _key_span_in(node, key, container_span), path, keyword,
                                     {"key": str(key), "expected": known}))
        return out
    if keyword == "propertyNames":
        key = instance
        return one(f"key {describe_type(key)} in {what} must be a non-empty string",
                   _key_span_in(node, key, container_span))
    if keyword == "enum":
        options = _one_line(expected_value)
        return one(f"{what} must be one of {options}, found {found}", expected=list(expected_value), found=found)
    if keyword == "const":
        if named == "append-only-evals":
            return one(f"{what} cannot be true in an entry with `append-only: true` (append-only entries only add matrix points)")
        return one(f"{what} must be {json.dumps(expected_value)}, found {found}")
    if keyword in ("minimum", "exclusiveMinimum", "maximum"):
        bound = expected_value
        relation = {"minimum": "at least", "exclusiveMinimum": "greater than", "maximum": "at most"}[keyword]
        return one(f"{what} must be {relation} {bound}, found {instance}", bound=bound, found=instance)
    if keyword == "minLength":
        return one(f"{what} must not be empty")
    if keyword == "minItems":
        if expected_value == 1:
            return one(f"{what} must not be empty; expected at least one item")
        return one(f"{what} must have at least {expected_value} items, found {len(instance)}")
    if keyword == "minProperties":
        if named == "scenarios-empty":
            return one(f"{what} must define at least one of: {_one_line(schema.get('properties', {}))}", container_span)
        return one(f"{what} must not be empty", container_span)
    if keyword == "pattern":
        if named == "node-name":
            label = next((p for p in reversed(path) if isinstance(p, str)), "?")
            return one(f"node name {json.dumps(instance)} in runner label `{label}` does not look like <fleet>_<NN> (for example mi355x-amds_00)")
        return one(f"{what} must match {expected_value}, found {found}")
    if keyword == "dependentRequired":
        present = [k for k in expected_value if isinstance(node, dict) and k in node]
        out = []
        for key in present:
            for dep in expected_value[key]:
                if isinstance(node, dict) and dep not in node:
                    out.append(SchemaProblem(
                        f"`{key}` without `{dep}` in {_title(error)}; a range needs both conc-start and conc-end",
                        _key_span_in(node, key, container_span), path, keyword, {"key": key, "missing": dep}))
        return out
    if keyword == "oneOf" and named == "concurrency":
        has_list = isinstance(node, dict) and "conc-list" in node
        has_range = isinstance(node, dict) and ("conc-start" in node or "conc-end" in node)
        found_text = "found both" if has_list and has_range else "found neither"
        span = _key_span_in(node, "conc-list", container_span) if has_list else container_span
        return one(f"{_title(error)} needs exactly one of conc-start+conc-end or conc-list, {found_text}", span)
    # Anything else: jsonschema's own words, still at the right place.
    return one(f"{what}: {error.message}")
