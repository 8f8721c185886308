"""A repository's git, through its command line.

Reading a revision takes three things: the commit a name resolves to
(``git rev-parse``), the files of its tree and the contents of blobs; one
``git cat-file --batch`` process serves the trees and the blobs for the
whole run.  Each costs a few milliseconds, where a git library costs
tens of milliseconds to import before it reads anything (``check`` runs in
every pull request).
"""

from __future__ import annotations

import atexit
import subprocess
from pathlib import Path
from typing import IO

from ..bounded import BoundedDict


class GitError(Exception):
    """A git command that failed; ``message`` is what git said."""

    def __init__(self, args: tuple[str, ...], message: str) -> None:
        self.message = message
        super().__init__(f"git {' '.join(args)}: {message}")


def is_repository(root: Path) -> bool:
    """``root`` is the top of a work tree (``.git`` a directory, or a file naming one) or a bare repository.

    git itself would search the parent directories; ``--repo`` must name the repository, not a folder in it.
    """
    return (root / ".git").exists() or ((root / "HEAD").is_file() and (root / "objects").is_dir())


class Git:
    """git commands in one repository; the blob reader starts on first use and lives as long as this object."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._batch: subprocess.Popen[bytes] | None = None
        self._trees: BoundedDict[str, tuple[tuple[str, str, str], ...]] = BoundedDict(_TREES_KEPT)  # id -> entries

    def run(self, *args: str, stdin: bytes | None = None) -> bytes:
        """The command's standard output; :class:`GitError` with its standard error when it fails."""
        done = subprocess.run(["git", "-C", str(self.root), *args], input=stdin, capture_output=True, check=False)
        if done.returncode != 0:
            raise GitError(args, done.stderr.decode("utf-8", "replace").strip())
        return done.stdout

    def lines(self, *args: str) -> list[str]:
        return [line for line in self.run(*args).decode("utf-8", "surrogateescape").splitlines() if line]

    def commit_sha(self, rev: str) -> str | None:
        """The full id of the commit ``rev`` names, when git resolves it and holds the commit; else None."""
        try:
            out = self.run("rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}")
        except GitError:
            return None
        return out.decode("ascii", "replace").strip() or None

    def blob_ids(self, names: list[str]) -> list[str | None]:
        """The blob id each object name (``<commit>:<path>``) names, None where it names none (a missing path,
        a directory, a submodule); one ``git cat-file --batch-check`` for them all."""
        asked = [n for n in names if "\n" not in n]
        out = self.run("cat-file", "--batch-check=%(objectname) %(objecttype)",
                       stdin=b"".join(n.encode("utf-8", "surrogateescape") + b"\n" for n in asked))
        found: dict[str, str | None] = {}
        for name, line in zip(asked, out.decode("utf-8", "surrogateescape").splitlines()):
            fields = line.split(" ")
            found[name] = fields[0] if len(fields) == 2 and fields[1] == "blob" else None
        return [found.get(n) for n in names]

    def blobs(self, commit: str) -> dict[str, str]:
        """path -> blob id of every file of the commit (submodules, which are commits, left out), in
        ``git ls-tree -r`` order.

        The tree objects are read through the blob reader, each parsed once per id: the commits of a
        history share most of their trees, where a ``git ls-tree`` process per commit listed them all again.
        """
        found = self.read_object(f"{commit}^{{tree}}")
        if found is None or found[1] != "tree":
            raise GitError(("ls-tree", commit), f"{commit} names no tree this repository holds")
        out: dict[str, str] = {}
        self._list(self._parsed_tree(found[0], found[2]), "", out)
        return out

    def _list(self, entries: tuple[tuple[str, str, str], ...], prefix: str, out: dict[str, str]) -> None:
        for kind, name, oid in entries:
            if kind == "blob":
                out[prefix + name] = oid
            elif kind == "tree":
                self._list(self._tree(oid), f"{prefix}{name}/", out)

    def _tree(self, oid: str) -> tuple[tuple[str, str, str], ...]:
        cached = self._trees.get(oid)
        if cached is not None:
            return cached
        found = self.read_object(oid)
        if found is None or found[1] != "tree":
            raise GitError(("cat-file", "--batch"), f"tree {oid} is missing from this repository")
        return self._parsed_tree(oid, found[2])

    def _parsed_tree(self, oid: str, data: bytes) -> tuple[tuple[str, str, str], ...]:
        cached = self._trees.get(oid)
        if cached is None:
            cached = self._trees.put(oid, _tree_entries(data, len(oid) // 2))
        return cached

    def read_object(self, name: str) -> tuple[str, str, bytes] | None:
        """(id, type, contents) of the object ``name`` names (an id, or ``<commit>:<path>``); None when missing."""
        if "\n" in name:
            return None  # one name per line: a path with a newline is looked up through the tree listing
        batch = self._reader()
        stdin, stdout = batch.stdin, batch.stdout
        assert stdin is not None and stdout is not None
        stdin.write(name.encode("utf-8", "surrogateescape") + b"\n")
        stdin.flush()
        header = stdout.readline().decode("utf-8", "surrogateescape").rstrip("\n")
        if not header:
            raise GitError(("cat-file", "--batch"), f"the blob reader stopped while reading {name}")
        fields = header.rsplit(" ", 2)
        if len(fields) != 3 or fields[2] in ("missing", "ambiguous") or not fields[2].isdigit():
            return None
        return fields[0], fields[1], _read_exactly(stdout, int(fields[2]) + 1)[:-1]

    def _reader(self) -> subprocess.Popen[bytes]:
        if self._batch is None or self._batch.poll() is not None:
            if self._batch is None:
                atexit.register(self.close)  # git exits when its input closes
            self._batch = subprocess.Popen(["git", "-C", str(self.root), "cat-file", "--batch"],
                                           stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        return self._batch

    def close(self) -> None:
        if self._batch is not None:
            if self._batch.stdin is not None:
                self._batch.stdin.close()
            self._batch.wait()
            if self._batch.stdout is not None:
                self._batch.stdout.close()
            self._batch = None


# Tree objects kept parsed (a few hundred a revision of a benchmark repository, most shared with the next).
_TREES_KEPT = 8192


def _tree_entries(data: bytes, id_size: int) -> tuple[tuple[str, str, str], ...]:
    """(kind, name, id) of each entry of a raw tree object (``<mode> <name>\\0<id bytes>`` after one another):
    kind ``tree`` for a directory, ``commit`` for a submodule, ``blob`` for a file or a symbolic link."""
    out: list[tuple[str, str, str]] = []
    at = 0
    while at < len(data):
        space = data.index(b" ", at)
        nul = data.index(b"\0", space)
        mode = data[at:space]
        kind = "tree" if mode == b"40000" else "commit" if mode == b"160000" else "blob"
        name = data[space + 1:nul].decode("utf-8", "surrogateescape")
        out.append((kind, name, data[nul + 1:nul + 1 + id_size].hex()))
        at = nul + 1 + id_size
    return tuple(out)


def _read_exactly(stream: IO[bytes], size: int) -> bytes:
    chunks: list[bytes] = []
    while size > 0:
        chunk = stream.read(size)
        if not chunk:
            raise GitError(("cat-file", "--batch"), "the blob reader stopped in the middle of an object")
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)
