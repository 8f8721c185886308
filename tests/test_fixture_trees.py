"""Shared fixture trees: inheritance order, refusals with file:line, and one stored copy of each file."""

from __future__ import annotations

from pathlib import Path

import pytest

from fixture_trees import INHERIT, SHARED, TESTS, InheritError, copy_tree, inherited_files, tree_files

CLAIMS_REAL = TESTS / "data" / "claims_real"
CHECK_REAL = TESTS / "data" / "check_real"


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def test_a_tree_starts_from_what_it_inherits_and_its_own_files_override(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    _write(shared / "base-repo", {"configs/runners.yaml": "base\n", "benchmarks/lib.sh": "lib\n"})
    _write(shared / "more", {INHERIT: "base-repo\n", "benchmarks/lib.sh": "lib v2\n"})
    _write(tmp_path / "case", {INHERIT: "more   # the later tree\n", "configs/runners.yaml": "own\n", "args.txt": "x"})

    dest = tmp_path / "out"
    copy_tree(tmp_path / "case", dest, shared=shared, skip={"args.txt"})

    written = {p.relative_to(dest).as_posix(): p.read_text() for p in dest.rglob("*") if p.is_file()}
    assert written == {"configs/runners.yaml": "own\n", "benchmarks/lib.sh": "lib v2\n"}


def test_a_tree_can_take_only_some_paths_of_a_shared_tree(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    _write(shared / "repo", {"configs/a.yaml": "a", "configs/b.yaml": "b", "benchmarks/x.sh": "x"})
    _write(tmp_path / "case", {INHERIT: "repo configs/a.yaml benchmarks\n"})

    assert sorted(tree_files(tmp_path / "case", shared=shared)) == ["benchmarks/x.sh", "configs/a.yaml"]


@pytest.mark.parametrize(("manifest", "message"), [
    ("nope\n", r"inherit.txt:1: no shared tree 'nope'"),
    ("\n# comment\nrepo configs/missing.yaml\n", r"inherit.txt:3: shared tree 'repo' has no 'configs/missing.yaml'"),
    ("../outside\n", r"inherit.txt:1: '../outside' is not a path below"),
    ("repo ../../etc\n", r"inherit.txt:1: '../../etc' is not a path below"),
])
def test_a_manifest_naming_what_is_not_there_is_refused_with_its_line(
        tmp_path: Path, manifest: str, message: str) -> None:
    shared = tmp_path / "shared"
    _write(shared / "repo", {"configs/a.yaml": "a"})
    _write(tmp_path / "case", {INHERIT: manifest})

    with pytest.raises(InheritError, match=message):
        tree_files(tmp_path / "case", shared=shared)


def test_trees_inheriting_each_other_in_a_loop_are_refused(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    _write(shared / "a", {INHERIT: "b\n"})
    _write(shared / "b", {INHERIT: "a\n"})

    with pytest.raises(InheritError, match=r"'a' inherits, through .* from itself"):
        tree_files(shared / "a", shared=shared)


def _manifests() -> list[Path]:
    return sorted(p.parent for p in TESTS.rglob(INHERIT))


def _shared_root(tree: Path) -> Path:
    """Extracts of real commits share files with the other extracts of their directory."""
    return next((root for root in (CLAIMS_REAL, CHECK_REAL) if tree.is_relative_to(root)), SHARED)


def test_every_tree_in_the_suite_resolves_and_keeps_no_copy_of_a_file_it_inherits() -> None:
    trees = _manifests()
    assert len(trees) > 100, "the fixture trees were expected to share files through inherit.txt"
    copies = []
    for tree in trees:
        shared = _shared_root(tree)
        tree_files(tree, shared=shared)  # raises InheritError on a bad manifest
        for rel, source in inherited_files(tree, shared=shared).items():
            own = tree / rel
            if own.is_file() and own.read_bytes() == source.read_bytes():
                copies.append(f"{own.relative_to(TESTS)} is a byte-identical copy of {source.relative_to(TESTS)}")
    assert not copies, "\n".join(copies)


def test_every_shared_tree_is_used() -> None:
    used = set()
    for tree in _manifests():
        for raw in (tree / INHERIT).read_text(encoding="utf-8").splitlines():
            words = raw.split("#", 1)[0].split()
            if words:
                used.add((_shared_root(tree) / words[0]).resolve())
    unused = [p.name for p in SHARED.iterdir() if p.is_dir() and p.resolve() not in used]
    assert not unused, f"shared trees nobody inherits: {unused}"
