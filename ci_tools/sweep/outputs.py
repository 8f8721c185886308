"""The files a job writes in its workspace, moved into the job's result directory.

On the fleet the launch step runs in the checkout; the launcher mounts it
into the container (``/workspace``), so the recipe's ``$RESULT_FILENAME.json``,
``server.log``, ``gpu_metrics.csv`` and power files land in the checkout, and
the template's ``actions/upload-artifact`` steps keep them.  Here the
workspace is listed before the job starts; afterwards every file that is
new or changed and matches an upload pattern (every new or changed file
when the repository's template has no upload step) is moved into the
result directory at the same relative path.  What is not collected stays
where the job left it.
"""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

# (size, mtime_ns, inode) of a file: a different triple is a file the job wrote.
_Stamp = tuple[int, int, int]


@dataclass(frozen=True)
class Listing:
    root: Path
    files: dict[str, _Stamp]


def _walk(root: Path, excluded: Sequence[Path]) -> dict[str, _Stamp]:
    skip = {p.resolve() for p in excluded}
    out: dict[str, _Stamp] = {}
    for directory, dirnames, filenames in os.walk(root):
        here = Path(directory)
        dirnames[:] = [d for d in dirnames if d != ".git" and (here / d).resolve() not in skip]
        for name in filenames:
            path = here / name
            try:
                st = path.lstat()
            except OSError:
                continue
            out[path.relative_to(root).as_posix()] = (st.st_size, st.st_mtime_ns, st.st_ino)
    return out


def list_workspace(root: Path, excluded: Sequence[Path] = ()) -> Listing:
    return Listing(root, _walk(root, excluded))


def _glob_regex(pattern: str) -> re.Pattern[str]:
    """actions/upload-artifact's globs: ``**`` any depth, ``*`` and ``?`` within a name."""
    out, i = [], 0
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        out.append("[^/]*" if c == "*" else "[^/]" if c == "?" else re.escape(c))
        i += 1
    return re.compile("".join(out) + r"(?:/.*)?\Z")  # a directory named by a pattern counts with its contents


class Matcher:
    """Whether a workspace path is one the fleet keeps (None patterns: every path)."""

    def __init__(self, patterns: Sequence[str] | None) -> None:
        self.every = patterns is None
        lines = [p.removeprefix("./") for p in patterns or ()]
        self.include = [_glob_regex(p) for p in lines if not p.startswith("!")]
        self.exclude = [_glob_regex(p[1:].removeprefix("./")) for p in lines if p.startswith("!")]

    def __call__(self, path: str) -> bool:
        if not self.every and not any(r.match(path) for r in self.include):
            return False
        return not any(r.match(path) for r in self.exclude)


def written(before: Listing, excluded: Sequence[Path] = ()) -> list[str]:
    """Paths new or changed since ``before`` was listed, in order."""
    after = _walk(before.root, excluded)
    return sorted(p for p, stamp in after.items() if before.files.get(p) != stamp)


def collect(before: Listing, destination: Path, patterns: Sequence[str] | None,
            excluded: Sequence[Path] = (), move: bool = True) -> tuple[list[str], list[str]]:
    """Move (or copy) what the job wrote and the fleet keeps into ``destination``.

    Returns (collected paths, paths written but not collected).  A file that
    existed before the job (a tracked file it changed) is copied, never moved:
    the checkout keeps its files.
    """
    keep = Matcher(patterns)
    collected: list[str] = []
    left: list[str] = []
    for rel in written(before, excluded):
        if not keep(rel):
            left.append(rel)
            continue
        source = before.root / rel
        target = destination / rel
        if target.exists():  # the recipe wrote it to RESULT_DIR as well: keep both
            target = target.with_name(target.name + ".workspace")
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            if move and rel not in before.files:
                shutil.move(source, target)
            else:
                shutil.copy2(source, target)
        except OSError:
            left.append(rel)
            continue
        collected.append(rel)
    return collected, left


def files_under(directory: Path) -> tuple[str, ...]:
    if not directory.is_dir():
        return ()
    return tuple(sorted(p.relative_to(directory).as_posix() for p in directory.rglob("*") if p.is_file()))


def find_named(directory: Path, name: str, prefer: Iterable[str] = ()) -> Path | None:
    """The file called ``name`` in ``directory``: at one of the ``prefer`` sub-paths first, then anywhere."""
    for sub in (*prefer, ""):
        candidate = directory / sub / name if sub else directory / name
        if candidate.is_file():
            return candidate
    found = sorted(directory.rglob(name)) if directory.is_dir() else []
    return next((p for p in found if p.is_file()), None)
