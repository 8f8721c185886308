"""Test trees that take files from shared trees, so that each fixture file is stored once.

A directory the tests turn into a repository (a rule fixture case or its
``base/`` and ``head/``, a part of ``tests/data/claims_seed``, an extract of
``tests/data/claims_real``, ``tests/fixtures/recipes/seed``) may hold an
``inherit.txt``.  Each of its lines that is neither blank nor a ``#`` comment
reads::

    TREE [PATH ...]

``TREE`` is a directory below the shared root (``tests/fixtures/shared/``;
the claims_real extracts use their own directory, so that a real file equal at
two commits is kept in one extract).  The tree starts from every file of
``TREE``, or, when ``PATH``s follow, only from those files or directories of
it (each keeps its place: ``configs/runners.yaml`` of ``TREE`` becomes
``configs/runners.yaml`` of the tree).  Lines apply in order, a later one over
an earlier one, and the tree's own files come last: they override what it
inherits.  A shared tree may inherit in turn.  Nothing can be deleted by
inheriting; a tree that must lack a file names the paths it takes instead.

A ``TREE`` or ``PATH`` that does not exist, or a loop of trees inheriting each
other, is an :class:`InheritError` naming the ``inherit.txt`` and its line:
a case never quietly runs without the files it asked for.
"""

from __future__ import annotations

import shutil
from collections.abc import Collection
from pathlib import Path, PurePosixPath

TESTS = Path(__file__).resolve().parent
SHARED = TESTS / "fixtures" / "shared"
INHERIT = "inherit.txt"


class InheritError(Exception):
    """An ``inherit.txt`` names a tree or a path that is not there, or trees inherit from each other in a loop."""


def tree_files(tree: Path, *, shared: Path = SHARED, skip: Collection[str] = ()) -> dict[str, Path]:
    """Every file of ``tree`` once inheritance is applied: repository path (``a/b.sh``) -> the file holding it.

    ``skip`` names top-level files of ``tree`` that are not part of the repository (a case's ``args.txt``).
    """
    return _resolve(tree.resolve(), shared.resolve(), skip, ())


def copy_tree(tree: Path, dest: Path, *, shared: Path = SHARED, skip: Collection[str] = ()) -> None:
    """Write the files of ``tree`` (inherited ones included) below ``dest``, over what is there."""
    for rel, source in tree_files(tree, shared=shared, skip=skip).items():
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)


def inherited_files(tree: Path, *, shared: Path = SHARED) -> dict[str, Path]:
    """Only what ``tree`` takes through its ``inherit.txt`` (empty without one): what its own files override."""
    return _inherited(tree.resolve(), shared.resolve(), (tree.resolve(),))


def _resolve(tree: Path, shared: Path, skip: Collection[str], chain: tuple[Path, ...]) -> dict[str, Path]:
    files = _inherited(tree, shared, (*chain, tree))
    for path in sorted(tree.rglob("*")):
        if not path.is_file() or (path.parent == tree and (path.name == INHERIT or path.name in skip)):
            continue
        files[path.relative_to(tree).as_posix()] = path
    return files


def _inherited(tree: Path, shared: Path, chain: tuple[Path, ...]) -> dict[str, Path]:
    manifest = tree / INHERIT
    files: dict[str, Path] = {}
    if not manifest.is_file():
        return files
    for number, raw in enumerate(manifest.read_text(encoding="utf-8").splitlines(), start=1):
        words = raw.split("#", 1)[0].split()
        if not words:
            continue
        where = f"{manifest}:{number}"
        name, paths = words[0], words[1:]
        source = _below(shared, name, where)
        if not source.is_dir():
            raise InheritError(f"{where}: no shared tree {name!r} under {shared}")
        if source in chain:
            raise InheritError(f"{where}: {name!r} inherits, through {' -> '.join(p.name for p in chain)}, from itself")
        available = _resolve(source, shared, (), chain)
        if not paths:
            files.update(available)
        for wanted in paths:
            _below(source, wanted, where)  # refuses an absolute path or one climbing out of the tree
            prefix = PurePosixPath(wanted).as_posix().rstrip("/")
            taken = {rel: p for rel, p in available.items() if rel == prefix or rel.startswith(prefix + "/")}
            if not taken:
                raise InheritError(f"{where}: shared tree {name!r} has no {wanted!r}")
            files.update(taken)
    return files


def _below(root: Path, name: str, where: str) -> Path:
    """``root / name``, refusing names that would leave ``root``: a shared tree is always under the shared root."""
    path = (root / name).resolve()
    if PurePosixPath(name).is_absolute() or not path.is_relative_to(root):
        raise InheritError(f"{where}: {name!r} is not a path below {root}")
    return path
