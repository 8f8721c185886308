"""Each construct the evaluator supports, pinned by a fixture recipe with exact expectations.

Every fixture under tests/fixtures/recipes/constructs/benchmarks/recipes/ states
its environment and what evaluating it must give, in comments:

  # env: A=1 B=2                        the environment the recipe starts with
  # expect: NAME = text [@ line [in path]]   a variable's text (and where it was set)
  # expect: NAME unknown [conditional] [alternatives a,b] [@ line]
  # expect-unset: NAME
  # expect-env: NAME = text [conditional] [@ line]  /  # expect-no-env: NAME
  # expect-flags: --a --b               the exact flag names of the first server, in order
  # expect-flag: --name [= v1,v2] [unknown] [conditional] [@ line]  (no "=": boolean flag)
  # expect-exit: line code N  /  # expect-no-exit: unconditional  /  # expect-missing: NAME @ line
  # expect-conditional-exit: line code N   an exit on one side of an undecided branch
  # expect-key: --flag.key.path = text [@ line] / unknown   a key of a JSON/YAML flag value
  # expect-keys: --flag key1 key2 ...      every key of the flag's value, in order
  # expect-servers: N                   /  # expect-server-line: line
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ci_tools.config import load_config
from ci_tools.evaluation.evaluate import evaluate_recipe
from ci_tools.shell.model import RecipeEval, Value
from ci_tools.revision.snapshot import WorkTreeSnapshot

ROOT = Path(__file__).parent / "fixtures" / "recipes" / "constructs"
RECIPES = sorted((ROOT / "benchmarks" / "recipes").glob("*.sh"))


def _run(path: Path) -> tuple[RecipeEval, list[str]]:
    text = path.read_text()
    env_line = re.search(r"^# env:(.*)$", text, re.M)
    env = dict(item.split("=", 1) for item in env_line.group(1).split()) if env_line else {}
    config = load_config(ROOT)
    rel = path.relative_to(ROOT).as_posix()
    result = evaluate_recipe(rel, env, config, WorkTreeSnapshot(config.root))
    return result, re.findall(r"^# (expect[-a-z]*): ?(.*)$", text, re.M)


def _check_value(v: Value, spec: str, what: str, default_path: str) -> None:
    where = None
    if " @ " in spec:
        spec, where = spec.split(" @ ", 1)
    words = spec.split()
    if words and words[0] == "=":
        expected = spec.split("=", 1)[1].strip()
        flags = []
        for marker in ("conditional",):
            if expected.endswith(" " + marker):
                expected, flags = expected[: -len(marker) - 1], [marker]
        assert v.text == expected, f"{what}: text {v.text!r}, expected {expected!r}"
        assert v.conditional == ("conditional" in flags), f"{what}: conditional is {v.conditional}"
    else:
        assert "unknown" in words and v.text is None, f"{what}: expected unknown, got {v.text!r}"
        assert v.conditional == ("conditional" in words), f"{what}: conditional is {v.conditional}"
        if "alternatives" in words:
            alts = words[words.index("alternatives") + 1].split(",")
            assert [a.text for a in v.alternatives] == alts
    if where is not None:
        line, _, path = where.partition(" in ")
        assert (v.location.path, v.location.line) == (path or default_path, int(line)), f"{what}: set at {v.location}"


@pytest.mark.parametrize("path", RECIPES, ids=[p.stem for p in RECIPES])
def test_construct(path: Path) -> None:
    result, expectations = _run(path)
    rel = path.relative_to(ROOT).as_posix()
    assert result.errors == []
    assert expectations, "a fixture must state what it expects"
    server = result.servers[0] if result.servers else []
    for kind, spec in expectations:
        name, _, rest = spec.partition(" ")
        if kind == "expect":
            assert name in result.variables, f"{name} is not set"
            _check_value(result.variables[name], rest, name, rel)
        elif kind == "expect-unset":
            assert name not in result.variables, f"{name} should be unset, is {result.variables[name]}"
        elif kind == "expect-env":
            assert name in result.env, f"{name} is not exported"
            _check_value(result.env[name], rest, name, rel)
        elif kind == "expect-no-env":
            assert name not in result.env
        elif kind == "expect-flags":
            assert [f.name for f in server] == spec.split()
        elif kind == "expect-flag":
            flags = [f for f in server if f.name == name]
            assert flags, f"no flag {name}"
            words = rest.split(" @ ")[0].split()
            if not rest or words == ["conditional"]:
                assert all(f.value is None for f in flags), f"{name} should be boolean"
                assert all(f.conditional == (words == ["conditional"]) for f in flags)
            elif rest.startswith("= ") and "," in rest.split(" @ ")[0]:
                assert [f.value.text for f in flags if f.value] == rest[2:].split(" @ ")[0].split(",")
            else:
                assert len(flags) == 1 and flags[0].value is not None
                _check_value(flags[0].value, rest, name, rel)
        elif kind == "expect-exit":
            line, code = int(name), rest.split()[-1]
            assert [(e.location.line, e.code, e.conditional) for e in result.early_exits] == [(line, code, False)]
        elif kind == "expect-conditional-exit":
            line, code = int(name), rest.split()[-1]
            assert (line, code, True) in [(e.location.line, e.code, e.conditional) for e in result.early_exits]
        elif kind == "expect-key":
            values = result.flag_values(name)
            assert len(values) == 1 and values[0] is not None, f"{name}: {values}"
            _check_value(values[0], rest, name, rel)
        elif kind == "expect-keys":
            flag = next(f for f in server if f.name == name)
            assert [k.path for k in flag.keys] == rest.split()
        elif kind == "expect-missing":
            line = int(rest.split("@")[1])
            assert (name, line) in [(m.name, m.location.line) for m in result.missing_env]
        elif kind == "expect-no-exit":
            assert [e for e in result.early_exits if not e.conditional] == []
        elif kind == "expect-servers":
            assert len(result.servers) == int(name)
        elif kind == "expect-server-line":
            assert [loc.line for loc in result.server_command] == [int(name)]
        else:  # pragma: no cover - a typo in a fixture
            raise AssertionError(f"unknown expectation {kind}")
