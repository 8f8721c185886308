"""Property tests: mutated repositories never crash ``validate``.

Valid configs are mutated the way people break them (wrong types, unknown or
missing keys, deeper or flatter nesting, random bytes); whatever comes out,
validate must answer with findings (or a clean usage error), never an
exception, and every renderer must render them.  A second property pins the
compiled fast schema check to jsonschema's verdict on the same instances.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ci_tools.schemacheck import check as schema_check
from ci_tools.cli.main import main
from ci_tools.config import load_config
from ci_tools.errors import UsageError
from ci_tools.model.repository import load_repo
from ci_tools.report import RENDERERS
from ci_tools.revision.snapshot import WorkTreeSnapshot
from ci_tools.validation.validate import validate
from fixture_trees import tree_files

RULES = Path(__file__).resolve().parent / "fixtures" / "rules"
# The files of two ok cases, inherited ones included (tests/fixture_trees.py).
CASE = tree_files(RULES / "recipe-missing" / "ok" / "fallback-templates")
MASTER_TEXT = CASE["configs/amd-master.yaml"].read_text(encoding="utf-8")
RUNNERS_TEXT = CASE["configs/runners.yaml"].read_text(encoding="utf-8")
CHANGELOG_TEXT = tree_files(RULES / "changelog-entry-schema" / "ok" / "history-entries")["perf-changelog.yaml"].read_text(
    encoding="utf-8")
MASTER = yaml.safe_load(MASTER_TEXT)
RUNNERS = yaml.safe_load(RUNNERS_TEXT)
CHANGELOG = yaml.safe_load(CHANGELOG_TEXT)

KEYS = ["tp", "ep", "pp", "dcp-size", "pcp-size", "dp-attn", "conc-start", "conc-end", "conc-list", "prefill",
        "decode", "kv-offloading", "kv-offload-backend", "router", "name", "version", "multinode", "disagg",
        "scenarios", "fixed-seq-len", "agentic-coding", "search-space", "hardware", "runner", "model-prefix",
        "kv-p2p-transfer", "dram-utilization", "labels", "gpus-per-node", "config-keys", "append-only", "foo"]
SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 40), st.floats(width=32),
    st.sampled_from([float("nan"), float("inf"), -0.0, 1.0, 8.0, 0.5]),
    st.text(max_size=8), st.sampled_from(["8", "true", "cluster:mi355x-amds", "mtp", "dram", "none", "", "a*b", "x_y",
                                          "lmsysorg/router:v1", "mi355x-amds_00"]),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(KEYS) | st.integers(0, 3), inner, max_size=3),
    max_leaves=6,
)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            out.extend(_paths(item, (*prefix, key)))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            out.extend(_paths(item, (*prefix, index)))
    return out


@st.composite
def mutated(draw: st.DrawFn, base: Any) -> Any:
    data = copy.deepcopy(base)
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(_paths(data)))
        if not path:
            if draw(st.booleans()):
                data = draw(VALUES)
            continue
        parent: Any = data
        for part in path[:-1]:
            parent = parent[part]
        last = path[-1]
        op = draw(st.sampled_from(["replace", "delete", "add-key", "wrap", "unwrap", "duplicate"]))
        if op == "replace":
            parent[last] = draw(VALUES)
        elif op == "delete":
            del parent[last]
        elif op == "add-key" and isinstance(parent[last], dict):
            parent[last][draw(st.sampled_from(KEYS) | st.integers(0, 2))] = draw(VALUES)
        elif op == "wrap":
            parent[last] = [parent[last]] if draw(st.booleans()) else {draw(st.sampled_from(KEYS)): parent[last]}
        elif op == "unwrap" and isinstance(parent[last], (list, dict)) and parent[last]:
            inner = parent[last]
            parent[last] = inner[0] if isinstance(inner, list) else next(iter(inner.values()))
        elif op == "duplicate" and isinstance(parent, list):
            parent.append(copy.deepcopy(parent[last]))
    return data


def _write_repo(root: Path, master: bytes, runners: bytes, changelog: bytes) -> None:
    for rel, script in CASE.items():
        if rel.startswith("benchmarks/") and rel.endswith(".sh"):
            target = root / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(script.read_bytes())
    for rel in ("configs/amd-master.yaml", "configs/runners.yaml", "perf-changelog.yaml"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
    (root / "configs" / "amd-master.yaml").write_bytes(master)
    (root / "configs" / "runners.yaml").write_bytes(runners)
    (root / "perf-changelog.yaml").write_bytes(changelog)


def _validate_and_render(root: Path) -> None:
    try:
        config = load_config(root)
    except UsageError:
        return  # a clean usage error is an acceptable answer
    findings = validate(load_repo(WorkTreeSnapshot(config.root), config))
    for f in findings:
        assert f.location.path and f.message
    for render in RENDERERS.values():
        assert isinstance(render(findings), str)


def _dump(value: Any) -> bytes:
    return yaml.safe_dump(value, sort_keys=False, allow_unicode=True).encode("utf-8")


SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@SETTINGS
@given(master=mutated(MASTER), runners=mutated(RUNNERS), changelog=mutated(CHANGELOG))
def test_mutated_data_gives_findings_never_a_crash(tmp_path: Path, master: Any, runners: Any, changelog: Any) -> None:
    _write_repo(tmp_path, _dump(master), _dump(runners), _dump(changelog))
    _validate_and_render(tmp_path)


@st.composite
def byte_mutations(draw: st.DrawFn, text: str) -> bytes:
    data = bytearray(text.encode("utf-8"))
    for _ in range(draw(st.integers(1, 4))):
        pos = draw(st.integers(0, len(data)))
        op = draw(st.sampled_from(["insert", "delete", "replace"]))
        chunk = draw(st.binary(min_size=1, max_size=4) | st.sampled_from([b":", b"- ", b"\n", b"  ", b"{", b"]", b"&a", b"*a", b"!!", b"\t", b"\xff", b"<<: *a"]))
        if op == "insert":
            data[pos:pos] = chunk
        elif op == "delete":
            del data[pos:pos + len(chunk)]
        else:
            data[pos:pos + len(chunk)] = chunk
    return bytes(data)


@SETTINGS
@given(master=byte_mutations(MASTER_TEXT), runners=byte_mutations(RUNNERS_TEXT))
def test_mutated_bytes_give_findings_never_a_crash(tmp_path: Path, master: bytes, runners: bytes) -> None:
    _write_repo(tmp_path, master, runners, CHANGELOG_TEXT.encode("utf-8"))
    _validate_and_render(tmp_path)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(master=byte_mutations(MASTER_TEXT))
def test_cli_exit_code_is_never_internal_failure(tmp_path: Path, master: bytes) -> None:
    _write_repo(tmp_path, master, RUNNERS_TEXT.encode("utf-8"), CHANGELOG_TEXT.encode("utf-8"))
    assert main(["validate", "--repo", str(tmp_path), "--format", "json", "--output", str(tmp_path / "out.json")]) in (0, 1, 2)


def _entries(master: Any) -> list[Any]:
    return list(master.values()) if isinstance(master, dict) else [master]


@settings(max_examples=200, deadline=None)
@given(master=mutated(MASTER), runners=mutated(RUNNERS), changelog=mutated(CHANGELOG))
def test_fast_schema_check_agrees_with_jsonschema(master: Any, runners: Any, changelog: Any) -> None:
    cases = [(schema_check.MASTER_CONFIG, e) for e in _entries(master)]
    cases.append((schema_check.RUNNERS, runners))
    cases.extend((schema_check.CHANGELOG_ENTRY, e) for e in (changelog if isinstance(changelog, list) else [changelog]))
    for name, instance in cases:
        reference = schema_check._validator(name).is_valid(instance)
        assert schema_check.is_valid(name, instance) == reference, (name, instance)
