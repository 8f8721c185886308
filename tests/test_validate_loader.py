"""The event-built positioned YAML (what validate loads) equals the node-built one, values and positions.

The event loader is the fast path of :func:`ci_tools.revision.yamlpos.load_yaml`; the
node loader (PyYAML's composer and constructor) is the reference and the path
for rare documents.  Both are compared on every YAML file of the real
InferenceX tree and on documents made to exercise what YAML allows.
"""

from __future__ import annotations

import datetime
import math
from pathlib import Path
from typing import Any

import pytest

from ci_tools.revision.yamlpos import PosMap, PosSeq, YamlLoadError, _event_load, _node_load, _Unusual, load_yaml
from conftest import full_corpus_dir


def same(a: Any, b: Any, where: str = "$") -> None:
    """Equal values of the same types (True is not 1) with equal positions, recursively."""
    assert type(a) is type(b), f"{where}: {type(a).__name__} vs {type(b).__name__}"
    if isinstance(a, PosMap):
        assert a.span == b.span, f"{where}: span {a.span} vs {b.span}"
        assert list(a) == list(b), f"{where}: keys"
        for key in a:
            assert a.key_spans[key] == b.key_spans[key], f"{where}.{key}: key span"
            assert a.value_spans[key] == b.value_spans[key], f"{where}.{key}: value span"
            same(a[key], b[key], f"{where}.{key}")
    elif isinstance(a, PosSeq):
        assert a.span == b.span and a.item_spans == b.item_spans, f"{where}: spans"
        assert len(a) == len(b), f"{where}: length"
        for i, (x, y) in enumerate(zip(a, b)):
            same(x, y, f"{where}[{i}]")
    elif isinstance(a, float) and math.isnan(a):
        assert math.isnan(b), f"{where}: {a!r} vs {b!r}"
    else:
        assert a == b, f"{where}: {a!r} vs {b!r}"


def test_every_yaml_file_of_the_real_tree_loads_alike() -> None:
    root = full_corpus_dir()
    every = sorted(p for p in root.rglob("*") if p.suffix in (".yaml", ".yml") and p.is_file())
    assert len(every) > 500  # master configs, changelog, runners, workflows, srt-slurm and llm-d recipes
    # The governed files and workflows, and every fourth of the ~470 recipes (the node loader is slow).
    recipes = [p for p in every if "-recipes/" in p.relative_to(root).as_posix()]
    paths = [p for p in every if p not in set(recipes)] + recipes[::4]
    unusual = []
    for path in paths:
        text = path.read_text(encoding="utf-8")
        try:
            event = _event_load(text)
        except _Unusual:
            unusual.append(path.relative_to(root).as_posix())
            continue
        node = _node_load(text)
        same(event[0], node[0], str(path))
        assert [(d.key, d.first, d.second) for d in event[1]] == [(d.key, d.first, d.second) for d in node[1]]
    # Merge keys (`<<: *base`) are the node loader's: a few srt-slurm recipes use them, no governed file does.
    assert not [p for p in unusual if p.startswith("configs/") or p == "perf-changelog.yaml"]
    assert len(unusual) < len(paths) // 4 and len(paths) > 150


@pytest.mark.parametrize("text", [
    "a: 1\nb: [1, 2.5, true, null, ~, '', x]\nc: {d: e}\n",
    "k: 1\nj: 2\nk: 3\n",  # duplicate key: first kept, both positions recorded
    "- 0x1f\n- 0o17\n- 1_000\n- 1:30\n- .inf\n- -.Inf\n- .nan\n- yes\n- Off\n- 2026-07-02\n- 2026-07-02T10:00:00Z\n",
    "empty:\nnested:\n  - - a\n    - b\n  - {x: [1, {y: z}]}\n",
    "'quoted': \"8\"\nplain: 8\nblock: |\n  line one\n  line two\nfolded: >\n  a\n  b\n",
    "base: &b {tp: 8}\n",  # an anchor alone
    "",
    "# only a comment\n",
    "---\n",
    "--- 3\n...\n",
    "1: one\n2.5: two\ntrue: three\nnull: four\n",
])
@pytest.mark.parametrize("last_duplicate_wins", [False, True])
def test_documents_load_alike(text: str, last_duplicate_wins: bool) -> None:
    event, node = _event_load(text, last_duplicate_wins), _node_load(text, last_duplicate_wins)
    same(event[0], node[0])
    assert [(d.key, d.first, d.second) for d in event[1]] == [(d.key, d.first, d.second) for d in node[1]]


def test_the_first_or_the_last_duplicate_wins() -> None:
    text = "k: 1\nj: 2\nk: 3\n"
    assert load_yaml(text, "f.yaml").value == {"k": 1, "j": 2}
    later = load_yaml(text, "f.yaml", last_duplicate_wins=True)
    assert later.value == {"k": 3, "j": 2} and list(later.value) == ["k", "j"]  # the key keeps its place
    assert later.value.value_span("k")[0] == 3 and len(later.duplicates) == 1


@pytest.mark.parametrize("text", [
    "base: &b {tp: 8}\nrow:\n  <<: *b\n  ep: 1\n",  # merge key
    "a: !!str 8\n",  # explicit tag
    "? [1, 2]\n: v\n",  # a list used as a key
    "a: 1\n---\nb: 2\n",  # two documents
    "a: *missing\n",  # undefined alias
    "base: &b {tp: 8}\nuse: *b\nlist: [&s scalar, *s]\n",  # aliases: what they expand to is bounded there
])
def test_what_the_event_loader_leaves_to_the_node_loader(text: str) -> None:
    with pytest.raises(_Unusual):
        _event_load(text)


def test_rare_documents_still_load_or_fail_as_before() -> None:
    merged = load_yaml("base: &b {tp: 8}\nrow:\n  <<: *b\n  ep: 1\n", "f.yaml").value
    assert merged["row"] == {"tp": 8, "ep": 1}
    assert load_yaml("a: !!str 8\n", "f.yaml").value == {"a": "8"}
    assert load_yaml("d: 2026-07-02\n", "f.yaml").value == {"d": datetime.date(2026, 7, 2)}
    for text, message in [("a: 1\n---\nb: 2\n", "expected a single document"), ("a: *missing\n", "found undefined alias"),
                          ("? [1, 2]\n: v\n", "unhashable key"), ("a: [1, 2\nb: 3\n", "did not find expected")]:
        with pytest.raises(YamlLoadError) as err:
            load_yaml(text, "f.yaml")
        assert message in err.value.message, err.value.message


def test_syntax_errors_have_the_same_position_either_way() -> None:
    for text in ["a: [1, 2\nb: 3\n", "a:\n  - b\n c: d\n", "a: 'open\n", "x: 1\n  y: 2\n"]:
        errors = []
        for load in (_event_load, _node_load):
            try:
                load(text)
            except Exception as exc:  # noqa: BLE001 - the two loaders must raise alike
                errors.append((type(exc).__name__, str(exc)))
        assert len(errors) == 2 and errors[0] == errors[1], text


def test_a_real_master_config_keeps_positions_of_nested_rows(tmp_path: Path) -> None:
    text = (full_corpus_dir() / "configs" / "amd-master.yaml").read_text(encoding="utf-8")
    loaded = load_yaml(text, "configs/amd-master.yaml").value
    key = next(iter(loaded))
    line = text.splitlines().index(f"{key}:") + 1
    assert loaded.key_span(key)[:2] == (line, 1)


@pytest.mark.parametrize(("text", "position", "message"), [
    ("a: =\n", (1, 4), "could not determine a constructor for the tag 'tag:yaml.org,2002:value'"),
    ("rows:\n  - 2026-02-30\n", (2, 5), "`2026-02-30` reads as a timestamp but is not one (day is out of range"),
    ("base: &b {x: 1}\nrow:\n  <<: *b\n  date: 2026-13-01\n", (4, 9), "reads as a timestamp but is not one (month"),
    ("a: " + "[" * 995 + "]" * 995 + "\n", (1, 1), "nested deeper than this reader follows"),
])
def test_values_python_cannot_build_are_yaml_errors_at_their_position(text: str, position: tuple[int, int],
                                                                        message: str) -> None:
    """PyYAML lets these escape as KeyError, ValueError or RecursionError; a master config must get a finding."""
    with pytest.raises(YamlLoadError) as err:
        load_yaml(text, "f.yaml")
    assert (err.value.line, err.value.column) == position and message in err.value.message, err.value.message


def test_repeated_plain_scalars_are_built_once_and_stay_what_they_are() -> None:
    loaded = load_yaml("- 8\n- '8'\n- 8\n- 2026-07-02\n- 2026-07-02\n- yes\n- 'yes'\n", "f.yaml").value
    assert loaded == [8, "8", 8, datetime.date(2026, 7, 2), datetime.date(2026, 7, 2), True, "yes"]
    assert [type(v) for v in loaded] == [int, str, int, datetime.date, datetime.date, bool, str]
