"""The fast schema check (jsonschema-rs): faithful to python-jsonschema with ci-tools' integers."""

from __future__ import annotations

import datetime
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from ci_tools.revision.yamlpos import load_yaml
from ci_tools.schemacheck import check as schema_check
from ci_tools.schemacheck.check import FastCheck

ROOT = Path(__file__).resolve().parent.parent


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
    # Integers under keys, in lists, behind references and in maps of any key: 8.0 is none of them.
    ({"$defs": {"n": {"type": "integer"}}, "type": "object",
      "properties": {"tp": {"$ref": "#/$defs/n"}, "conc": {"type": "array", "items": {"$ref": "#/$defs/n"}},
                     "util": {"type": "number"}}},
     [{"tp": 8}, {"tp": 8.0}, {"conc": [1, 2.0]}, {"util": 1.0}, {"util": 1.0, "tp": 4}]),
    ({"type": "object", "additionalProperties": {"type": "integer"}}, [{"a": 1}, {"a": 1.0}, {"a": [1.0]}]),
]


@pytest.mark.parametrize(("schema", "instances"), CASES)
def test_fast_check_agrees_with_jsonschema(schema: dict[str, Any], instances: list[Any]) -> None:
    fast = FastCheck(schema)
    reference = schema_check.validator_class()(schema)
    for instance in instances:
        assert fast(instance) == reference.is_valid(instance), instance


def test_values_json_has_no_type_for_go_to_the_detailed_check() -> None:
    """A date, a set, bytes or a key that is not a string: jsonschema-rs cannot take it, python-jsonschema
    decides (never an exception out of the fast check)."""
    fast = FastCheck({"type": "object", "properties": {"d": {"type": "string"}}})
    for instance in ({"d": datetime.date(2026, 2, 1)}, {"d": {1, 2}}, {"d": b"x"}, {("a",): 1}, {1: "x"}):
        assert fast(instance) is False, instance


def test_integers_are_real_integers_and_numbers_finite() -> None:
    check = FastCheck({"type": "integer"})
    assert [check(v) for v in (8, True, 8.0, "8")] == [True, False, False, False]
    number = FastCheck({"type": "number"})
    assert [number(v) for v in (0.5, 2, float("nan"), float("-inf"), False)] == [True, True, False, False, False]


def test_the_loader_says_where_whole_floats_are_written() -> None:
    """The lines the fast check is spared from searching: every float with a whole value; none recorded (so
    every instance is searched) when the node loader (aliases, merge keys, tags) read the document."""
    text = "a:\n  tp: 8\n  u: 0.5\nb:\n  tp: 8.0\nc:\n  - x: 1\n  - y: 1.0e+3\n"
    loaded = load_yaml(text, "t.yaml")
    assert loaded.whole_float_lines == (5, 8)
    assert not loaded.whole_float_within(1, 3) and loaded.whole_float_within(4, 5)
    assert load_yaml("a: 8\nb: 8.5\n", "t.yaml").whole_float_lines == ()
    aliased = load_yaml("a: &a {x: 1}\nb: *a\n", "t.yaml")
    assert aliased.whole_float_lines is None and aliased.whole_float_within(1, 1)


def test_a_whole_float_in_a_real_config_is_found_at_its_line(tmp_path: Path) -> None:
    """`tp: 8.0` in one config of the real tree: the schema finding names it, the 207 others stay clean."""
    from conftest import full_corpus_dir
    from ci_tools.config import load_config
    from ci_tools.model.repository import load_repo
    from ci_tools.revision.snapshot import WorkTreeSnapshot
    from ci_tools.validation.validate import check_master_files

    import shutil

    for rel in ("configs/amd-master.yaml", "configs/nvidia-master.yaml", "configs/runners.yaml"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(full_corpus_dir() / rel, tmp_path / rel)
    master = tmp_path / "configs" / "amd-master.yaml"
    lines = master.read_text(encoding="utf-8").split("\n")
    at = next(i for i, line in enumerate(lines) if line.strip().startswith("- { tp: 8"))
    lines[at] = lines[at].replace("tp: 8", "tp: 8.0", 1)
    master.write_text("\n".join(lines), encoding="utf-8")
    repo = load_repo(WorkTreeSnapshot(tmp_path), load_config(tmp_path), with_changelog=False)
    findings = check_master_files(repo)
    assert [(f.location.path, f.location.line, f.message) for f in findings] == [
        ("configs/amd-master.yaml", at + 1, "`tp` must be an integer, found the number 8.0")]
