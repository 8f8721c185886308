"""The base of a change loaded beside the head gives exactly what a full load of the base gives."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any, Callable

import pytest

from ci_tools.config import ProjectConfig
from ci_tools.model import beside
from ci_tools.model.beside import load_beside
from ci_tools.model.repository import RepoData, load_repo
from ci_tools.revision.snapshot import WorkTreeSnapshot
from conftest import full_corpus_dir

AMD = "configs/amd-master.yaml"
NVIDIA = "configs/nvidia-master.yaml"
ROW = "      - { tp: 8, conc-start: 4, conc-end: 64 }\n\n# DeepSeek-V4-Pro FP8"


def _spans(value: Any) -> Any:
    """Every value with every recorded position, so equality compares positions too."""
    if isinstance(value, dict):
        spans = getattr(value, "key_spans", {})
        values = getattr(value, "value_spans", {})
        return (getattr(value, "span", None), {k: (spans.get(k), values.get(k), _spans(v)) for k, v in value.items()})
    if isinstance(value, list):
        return (getattr(value, "span", None), [(s, _spans(v)) for s, v in zip(getattr(value, "item_spans", []), value)])
    return value


def _described(repo: RepoData) -> Any:
    entries = [*repo.configs.values(), *repo.shadowed]
    return ([f.path for f in repo.master_files], [(e.key, e.path, e.key_span, _spans(e.data)) for e in entries],
            [(f.rule, f.message, f.location) for f in repo.problems],
            _spans(repo.runners.value) if repo.runners else None)


def _tree(dest: Path, edit: Callable[[Path], None] | None = None) -> Path:
    (dest / "configs").mkdir(parents=True)
    for name in (AMD, NVIDIA, "configs/runners.yaml"):
        shutil.copy(full_corpus_dir() / name, dest / name)
    if edit:
        edit(dest)
    return dest


def _replace(rel: str, old: str, new: str) -> Callable[[Path], None]:
    def edit(root: Path) -> None:
        text = (root / rel).read_text(encoding="utf-8")
        assert old in text
        (root / rel).write_text(text.replace(old, new, 1), encoding="utf-8")
    return edit


def _drop_last_config(rel: str) -> Callable[[Path], None]:
    def edit(root: Path) -> None:
        text = (root / rel).read_text(encoding="utf-8")
        cut = text.rstrip("\n").rindex("\n\n") + 1
        (root / rel).write_text(text[:cut], encoding="utf-8")
    return edit


@pytest.mark.parametrize(("name", "base_edit", "parsed_alone"), [
    ("the same files", None, 0),
    ("one config changed in place", _replace(AMD, ROW, ROW.replace("conc-end: 64", "conc-end: 128")), 1),
    ("a row added: every later config moves", _replace(AMD, ROW, "      - { tp: 4, conc-start: 4, conc-end: 8 }\n" + ROW),
     None),
    ("the last config gone: another one ends the file", _drop_last_config(NVIDIA), 1),
    ("the runners file changed", _replace("configs/runners.yaml", "  h100-multinode:\n", "  h100-multinode:\n    - x_1\n"), 0),
])
def test_the_base_beside_the_head_is_the_full_load_of_the_base(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                name: str, base_edit: Callable[[Path], None] | None,
                                                                parsed_alone: int | None) -> None:
    head_root, base_root = _tree(tmp_path / "head"), _tree(tmp_path / "base", base_edit)
    config = ProjectConfig(root=head_root)
    head = load_repo(WorkTreeSnapshot(head_root), config, with_changelog=False)
    calls: list[str] = []
    real_parse = beside.parse_piece
    monkeypatch.setattr(beside, "parse_piece", lambda *a: calls.append(a[1].key) or real_parse(*a))
    got = load_beside(WorkTreeSnapshot(base_root), config, head)
    assert _described(got) == _described(load_repo(WorkTreeSnapshot(base_root), config, with_changelog=False)), name
    if parsed_alone is not None:
        assert len(calls) == parsed_alone, calls  # only what differs is parsed again
    else:
        assert 0 < len(calls) < len(got.configs) / 2, len(calls)


def _both_sides(root: Path, head_master: str, base_master: str) -> tuple[RepoData, RepoData, RepoData]:
    """(head loaded in full, base loaded beside it, base loaded in full) of one small master file."""
    for side, master in (("head", head_master), ("base", base_master)):
        (root / side / "configs").mkdir(parents=True)
        (root / side / "configs" / "x-master.yaml").write_text(master, encoding="utf-8")
        (root / side / "configs" / "runners.yaml").write_text("labels: {l: [n_1]}\n", encoding="utf-8")
    config = ProjectConfig(root=root / "head")
    head = load_repo(WorkTreeSnapshot(root / "head"), config, with_changelog=False)
    base = WorkTreeSnapshot(root / "base")
    return head, load_beside(base, config, head), load_repo(base, config, with_changelog=False)


def test_what_the_split_does_not_trust_is_loaded_in_full(tmp_path: Path) -> None:
    """A key twice, an anchor, a syntax error: the base's own full load, findings included."""
    for case, text in [("duplicate", "a:\n  image: x\nb:\n  image: y\na:\n  image: z\n"),
                       ("anchor", "a: &s\n  image: x\nb:\n  <<: *s\n"),
                       ("syntax", "a:\n  image: [x\nb:\n  image: y\n")]:
        _, got, full = _both_sides(tmp_path / case, "a:\n  image: x\nb:\n  image: y\n", text)
        assert _described(got) == _described(full), case
        assert got.master_files[0].value == full.master_files[0].value  # the whole document, as loaded in full


def test_a_config_that_ends_the_file_on_one_side_only_is_parsed_again(tmp_path: Path) -> None:
    """Same lines, same text, but the file ends after it: its mapping closes a line earlier than where the
    next key started."""
    head, got, full = _both_sides(tmp_path, "a:\n  image: x\n\nb:\n  image: y\n", "a:\n  image: x\n")
    assert got.configs["a"].data.span == (2, 3, 3, 1) != head.configs["a"].data.span
    assert _described(got) == _described(full)


def test_the_base_beside_the_head_is_validated_as_loaded_in_full(tmp_path: Path) -> None:
    """A master file assembled from its configs holds no document: its configs are held to the schema all the same
    (a shared one, `a`, with an unknown key; one parsed alone, `b`, with a value of the wrong type); a key YAML
    reads as a number keeps the file from being shared."""
    from ci_tools.findings import finding_key
    from ci_tools.validation.validate import validate

    def keys(repo: RepoData) -> list[tuple[str, int]]:
        return sorted((finding_key(f), f.location.line) for f in validate(repo))

    for case, head_text, base_text in [
        ("shared and alone", "a:\n  image: x\n  bogus: 1\nb:\n  image: y\n", "a:\n  image: x\n  bogus: 1\nb:\n  image: [1]\n"),
        ("a number as key", "a:\n  image: x\n2026:\n  image: y\n", "a:\n  image: z\n2026:\n  image: y\n"),
    ]:
        _, got, full = _both_sides(tmp_path / case.replace(" ", "-"), head_text, base_text)
        assert keys(got) == keys(full) and len(keys(full)) >= 2, case
