"""The compiled fast schema check: in sync with the schemas, faithful to jsonschema."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from ci_tools.schemacheck import check as schema_check, compiled as schema_compiled
from ci_tools.schemacheck.fast import compile_schema, render_module

ROOT = Path(__file__).resolve().parent.parent


def test_shipped_translation_is_in_sync_with_the_schemas() -> None:
    # Regenerate with: python -m ci_tools.schemacheck.check
    names = schema_check.SCHEMA_NAMES
    expected = render_module({n: schema_check.load_schema(n) for n in names},
                             {n: schema_check.schema_digest(n) for n in names})
    assert (ROOT / "ci_tools" / "schemacheck" / "compiled.py").read_text(encoding="utf-8") == expected
    assert set(schema_compiled.CHECKS) == set(names)


def test_schemas_are_package_data_and_valid_draft_2020_12() -> None:
    for name in schema_check.SCHEMA_NAMES:
        schema = schema_check.load_schema(name)
        on_disk = json.loads((ROOT / "schemas" / f"{name}.schema.json").read_text(encoding="utf-8"))
        assert schema == on_disk
        assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
        jsonschema.Draft202012Validator.check_schema(schema)


def _no_open_objects(node: Any, where: str = "#") -> list[str]:
    """Every object schema with properties must forbid other keys."""
    out = []
    if isinstance(node, dict):
        if "properties" in node and node.get("additionalProperties") is not False:
            out.append(where)
        for key, value in node.items():
            out.extend(_no_open_objects(value, f"{where}/{key}"))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            out.extend(_no_open_objects(value, f"{where}/{index}"))
    return out


def test_every_object_forbids_unknown_keys() -> None:
    open_objects = []
    for name in schema_check.SCHEMA_NAMES:
        # `if` conditions and `then` refinements describe no object of their own.
        schema = dict(schema_check.load_schema(name))
        for key in ("if", "then"):
            schema.pop(key, None)
        open_objects.extend(f"{name}{w}" for w in _no_open_objects(schema) if "/if" not in w)
    assert open_objects == []


@pytest.mark.parametrize("schema", [
    {"anyOf": [{"type": "string"}]},
    {"patternProperties": {"^x": {}}, "additionalProperties": False},
    {"$ref": "https://example.invalid/other.json"},
    {"format": "uri"},
])
def test_unsupported_keywords_are_refused(schema: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="not supported|only local"):
        compile_schema(schema)


CASES: list[tuple[dict[str, Any], list[Any]]] = [
    ({"type": "integer", "minimum": 1}, [1, 0, True, 8.0, "8", None, 10**30, -1]),
    ({"type": "number", "exclusiveMinimum": 0, "maximum": 1},
     [0.5, 0, 1, 1.0, 1.5, float("nan"), float("inf"), False, "0.5"]),
    ({"minimum": 1}, [float("nan"), "x", 0, [], True]),
    ({"enum": ["mtp", "none"]}, ["mtp", "x", 1, None, ["mtp"]]),
    ({"enum": [1, True, None]}, [1, True, False, 0, None, 1.0]),
    ({"const": False}, [False, 0, None, True, ""]),
    ({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"], "additionalProperties": False},
     [{"a": "x"}, {}, {"a": 1}, {"a": "x", "b": 1}, {1: "x"}, [], "a"]),
    ({"type": "object", "additionalProperties": {"type": "array", "minItems": 1}, "propertyNames": {"type": "string", "minLength": 1}},
     [{}, {"x": [1]}, {"x": []}, {"": [1]}, {2: [1]}]),
    ({"dependentRequired": {"a": ["b"]}, "oneOf": [{"required": ["a"]}, {"required": ["c"]}]},
     [{"a": 1, "b": 2}, {"a": 1}, {"c": 1}, {"a": 1, "b": 1, "c": 1}, {}, 5]),
    ({"if": {"properties": {"m": {"const": True}}, "required": ["m"]}, "then": {"required": ["p"]}, "else": {"required": ["t"]}},
     [{"m": True, "p": 1}, {"m": True}, {"t": 1}, {"m": False}, {"m": 1, "t": 1}]),
    ({"type": "string", "minLength": 2, "pattern": "^[a-z]+_[0-9]+$"}, ["ab_1", "a", "AB_1", "ab_", 5, "é_1"]),
    ({"type": "array", "items": {"type": "boolean"}, "minItems": 2}, [[True, False], [True], [1, 0], "ab", []]),
    ({"minProperties": 1}, [{}, {"a": 1}, [], ""]),
]


@pytest.mark.parametrize(("schema", "instances"), CASES)
def test_fast_check_agrees_with_jsonschema(schema: dict[str, Any], instances: list[Any]) -> None:
    fast = compile_schema(schema)
    reference = schema_check.validator_class()(schema)
    for instance in instances:
        assert fast(instance) == reference.is_valid(instance), instance


def test_integers_are_real_integers_and_numbers_finite() -> None:
    check = compile_schema({"type": "integer"})
    assert [check(v) for v in (8, True, 8.0, "8")] == [True, False, False, False]
    number = compile_schema({"type": "number"})
    assert [number(v) for v in (0.5, 2, float("nan"), float("-inf"), False)] == [True, True, False, False, False]
