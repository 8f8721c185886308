"""Master configs parsed per config key give exactly what a full load gives for those keys."""

from __future__ import annotations

from pathlib import Path

from ci_tools.config import ProjectConfig
from ci_tools.jobs.matrix import expand
from ci_tools.model.partial import PartialLoader, split_top_level
from ci_tools.model.repository import load_repo
from ci_tools.revision.snapshot import WorkTreeSnapshot
from conftest import full_corpus_dir

PATTERNS = ["dsv4-fp4-mi355x-atom-agentic*", "dsr1-fp8-b200-dynamo-trt", "qwen3.5-*-mi355x-sglang-disagg"]


def _spans(value: object) -> object:
    """Every value with every recorded position, so equality compares positions too."""
    if isinstance(value, dict):
        key_spans = getattr(value, "key_spans", {})
        return {k: (key_spans.get(k), _spans(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [(s, _spans(v)) for s, v in zip(getattr(value, "item_spans", [None] * len(value)), value)]
    return value


def test_the_real_configs_an_entry_names_load_as_in_a_full_load() -> None:
    root = full_corpus_dir()
    config = ProjectConfig(root=root)
    snapshot = WorkTreeSnapshot(root)
    full = load_repo(snapshot, config, with_changelog=False)
    part = PartialLoader(config).load(snapshot, PATTERNS)
    keys = sorted(part.configs)
    assert len(keys) >= 4 and "dsr1-fp8-b200-dynamo-trt" in keys
    for key in keys:
        a, b = full.configs[key], part.configs[key]
        assert (a.path, a.key_span) == (b.path, b.key_span)
        assert _spans(a.data) == _spans(b.data)
    assert [j.to_json() for j in expand(part)] == [j.to_json() for j in expand(full, keys)]
    assert part.runners is not None and part.runners.value == full.runners.value  # type: ignore[union-attr]


def test_a_layout_that_is_not_plain_is_not_split() -> None:
    assert split_top_level("a:\n  x: 1\nb:\n  y: 2\n") is not None
    assert split_top_level("a: {x: 1}\n") is None  # an inline value
    assert split_top_level("base: &b\n  x: 1\nc:\n  <<: *b\n") is None  # anchors cross pieces
    pieces = split_top_level("# comment\n'q-key':\n  x: 1\n\nb:\n  y: 2\n")
    assert pieces is not None and [(p.key, p.start, p.end) for p in pieces] == [("q-key", 2, 4), ("b", 5, 7)]


def test_pieces_are_numbered_from_the_lines_at_column_0_only() -> None:
    def split(text: str) -> list[tuple[str, int, int]] | None:
        pieces = split_top_level(text)
        return None if pieces is None else [(p.key, p.start, p.end) for p in pieces]

    assert split("a:\n  x: 1\n---\n\tb: 1\n#c\nb:\n  - 1") == [("a", 1, 5), ("b", 6, 7)]  # "---": a marker
    assert split("\n\n  x: 1\nk:\n") == [("k", 4, 5)]  # the first key after blank and indented lines
    assert split("k:\r\n  x: 1\r\nl:\r\n") == [("k", 1, 2), ("l", 3, 4)]  # CRLF lines
    assert split("k:\n\r\n") is None  # a line holding only "\r" at column 0 is no key line
    assert split("") == [] and split("\n\n") == []
    assert split("k:\n...\nl: 1\n") is None  # "l: 1": an inline value


def test_anchors_fall_back_to_a_full_load(tmp_path: Path) -> None:
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "x-master.yaml").write_text(
        "one: &shared\n  image: a\ntwo:\n  <<: *shared\n  model: m\n", encoding="utf-8")
    (tmp_path / "configs" / "runners.yaml").write_text("labels: {}\n", encoding="utf-8")
    config = ProjectConfig(root=tmp_path)
    repo = PartialLoader(config).load(WorkTreeSnapshot(tmp_path), ["two"])
    assert dict(repo.configs["two"].data) == {"image": "a", "model": "m"}


def test_anchor_and_alias_marks_are_found_where_yaml_can_have_them() -> None:
    """The mark scan finds what the regex it replaced finds: a mark at the start or after a blank (any Unicode
    space), ``[``, ``{`` or ``,``, followed by a name character; a glob's ``*`` inside a word is no alias."""
    import re

    from ci_tools.model.partial import _has_alias

    regex = re.compile(r"(?:^|[\s\[{,])[&*][A-Za-z0-9_-]|<<:")
    cases = ["&a", "x: &a", "x&a", "[*b]", "{&c", ",*d", "a: *", "\u00a0&x", "\x1c*y", "<<: *x", "a\n&b", "**a",
             "&&a", "& a", "*-", "*", "&", " *\u00e9", " *_", "keys: dsr1-*", "x: '2*tp'", "\t*Z", "a: b\n  <<:"]
    assert [_has_alias(c) for c in cases] == [bool(regex.search(c)) for c in cases]
    assert [c for c in cases if _has_alias(c)] == ["&a", "x: &a", "[*b]", "{&c", ",*d", "\u00a0&x", "\x1c*y",
                                                     "<<: *x", "a\n&b", "*-", " *_", "\t*Z", "a: b\n  <<:"]
