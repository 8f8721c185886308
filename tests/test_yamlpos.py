from __future__ import annotations

import pytest

from ci_tools.revision.yamlpos import PosMap, PosSeq, YamlLoadError, load_yaml


def test_positions_of_keys_values_and_items() -> None:
    loaded = load_yaml("a:\n  b: 1\n  c: [x, y]\n", "f.yaml")
    root = loaded.value
    assert isinstance(root, PosMap)
    assert root.key_span("a")[:2] == (1, 1)
    inner = root["a"]
    assert inner.key_span("c")[:2] == (3, 3)
    assert inner.value_span("b")[:2] == (2, 6)
    assert isinstance(inner["c"], PosSeq)
    assert inner["c"].item_span(1)[:2] == (3, 10)


def test_duplicate_keys_are_recorded_and_first_value_kept() -> None:
    loaded = load_yaml("k: 1\nj: 2\nk: 3\n", "f.yaml")
    assert loaded.value["k"] == 1
    [dup] = loaded.duplicates
    assert (dup.key, dup.first[0], dup.second[0]) == ("k", 1, 3)


def test_invalid_utf8_reports_line_and_column() -> None:
    with pytest.raises(YamlLoadError) as err:
        load_yaml(b"a: 1\nb: \xff\n", "f.yaml")
    assert (err.value.line, err.value.column) == (2, 4)
    assert "0xff" in err.value.message


def test_syntax_error_has_position() -> None:
    with pytest.raises(YamlLoadError) as err:
        load_yaml("a: [1, 2\nb: 3\n", "f.yaml")
    assert err.value.line >= 2
    assert err.value.message.startswith("invalid YAML")


def test_a_load_leaves_no_reference_cycle_behind() -> None:
    # A sweep pauses the cyclic collector (and freezes what is alive when it parses a script): a cycle
    # left by a load would keep libyaml's parser and its buffers for the rest of the process.
    import gc

    gc.collect()
    gc.disable()
    try:
        for text in ("a:\n  b: [1, {c: 2}]\n  d: &x [3]\n  e: *x\n", "[1, 2]\n", "7\n", ""):
            load_yaml(text, "f.yaml")
        assert gc.collect() == 0
    finally:
        gc.enable()
