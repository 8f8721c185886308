"""Files of the repository at one revision, or in the work tree.

Every reader goes through :class:`Snapshot`, so a rule never knows whether it
looks at a commit or at uncommitted files.  Git blobs are cached by object id:
a file unchanged between base and head is read once.
"""

from __future__ import annotations

import fnmatch
import hashlib
import os
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ..errors import UsageError

if TYPE_CHECKING:  # git's command line is imported by the revisions that read it: a work tree never does
    from .gitcli import Git


class Snapshot(Protocol):
    label: str

    def read(self, path: str) -> bytes | None:
        """The file's bytes, or None when it does not exist at this revision."""

    def files(self) -> tuple[str, ...]:
        """Every file path (POSIX, relative to the root), sorted."""

    def glob(self, pattern: str) -> list[str]:
        """Paths matching a glob (``*`` does not cross ``/``)."""


def _glob(files: tuple[str, ...], pattern: str) -> list[str]:
    depth = pattern.count("/")
    return [f for f in files if f.count("/") == depth and fnmatch.fnmatchcase(f, pattern)]


_SKIP_DIRS = {".git", "node_modules", "__pycache__", ".venv", "venv", ".mypy_cache", ".pytest_cache", ".hypothesis"}


def check_inside(path: str) -> None:
    """A path a snapshot may read: relative, POSIX, and not escaping the repository root."""
    parts = path.replace("\\", "/").split("/")
    if path.startswith(("/", "\\")) or (len(path) > 1 and path[1] == ":") or ".." in parts:
        raise UsageError(f"path {path!r} is outside the repository; expected a path relative to the repository root")


class WorkTreeSnapshot:
    """The files on disk under ``root`` (uncommitted changes included)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.label = "work tree"
        self._cache: dict[str, bytes | None] = {}
        self._real_root = os.path.realpath(root)
        # Paths whose symbolic links lead out of the repository, with where they lead: read as absent.
        self.outside_links: dict[str, str] = {}

    def read(self, path: str) -> bytes | None:
        if path not in self._cache:
            check_inside(path)
            full = self.root / path
            real = os.path.realpath(full)
            if os.path.commonpath([real, self._real_root]) != self._real_root:
                # A pull request can commit `configs/x.yaml -> /etc/passwd` or `-> ~/.ssh/id_rsa`: what a link
                # names outside the repository is never read (and never shown in a message).
                self.outside_links[path] = real
                self._cache[path] = None
                return None
            try:
                self._cache[path] = full.read_bytes() if full.is_file() else None
            except OSError:
                self._cache[path] = None
        return self._cache[path]

    def why_absent(self, path: str) -> str | None:
        """Why :meth:`read` gave None for a path that exists as a link (else None)."""
        if path in self.outside_links:
            return "is a symbolic link that leads out of the repository; it is not followed"
        return None

    @cached_property
    def _files(self) -> tuple[str, ...]:
        out: list[str] = []
        for dirpath, dirnames, filenames in os.walk(self.root):
            dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS)
            rel = os.path.relpath(dirpath, self.root)
            for name in filenames:
                out.append(name if rel == "." else f"{rel}/{name}".replace(os.sep, "/"))
        return tuple(sorted(out))

    def files(self) -> tuple[str, ...]:
        return self._files

    def glob(self, pattern: str) -> list[str]:
        # Fast path for globs without a wildcard in the directory part.
        directory, _, name = pattern.rpartition("/")
        if "*" not in directory and "?" not in directory and "[" not in directory:
            base = self.root / directory if directory else self.root
            if not base.is_dir():
                return []
            return sorted(
                f"{directory}/{p.name}" if directory else p.name
                for p in base.iterdir()
                if p.is_file() and fnmatch.fnmatchcase(p.name, name)
            )
        return _glob(self.files(), pattern)


# Blob contents shared by every GitSnapshot of the process, keyed by object id.
_BLOB_CACHE: dict[str, bytes] = {}


# One git reader per repository root: snapshots of the base and the head share its `git cat-file` process.
_GITS: dict[Path, Git] = {}


def _git_at(root: Path) -> Git | None:
    from .gitcli import Git, is_repository

    key = Path(root).resolve()
    if key not in _GITS:
        if not is_repository(key):
            return None
        _GITS[key] = Git(key)
    return _GITS[key]


def _commit_sha(root: Path, git: Git, rev: str, option: str = "") -> str:
    """The commit ``rev`` names; when git cannot read it, a UsageError saying why and what to fetch."""
    sha = git.commit_sha(rev)
    if sha is None:  # the rare path: the library that words what is missing (shallow clones) is loaded for it
        sha = str(resolve_commit(_library_repo(root), rev, option).hexsha)
    return sha


def _library_repo(root: Path) -> Any:
    import git

    return git.Repo(Path(root).resolve(), search_parent_directories=False)


class GitSnapshot:
    """The files of one commit, read with git's command line (:mod:`ci_tools.revision.gitcli`)."""

    def __init__(self, root: Path, rev: str, *, listed: bool = False) -> None:
        """``listed``: ``rev`` is a full commit id git itself listed (``git log``), taken without asking
        git again (one process fewer per revision where a history is walked)."""
        git = _git_at(root)
        if git is None:
            raise UsageError(f"{root} is not a git repository, so revision {rev!r} cannot be read")
        self._git = git
        self.root = Path(root)
        self.sha = rev if listed else _commit_sha(self.root, git, rev)
        self.rev = rev
        self.label = f"{rev} ({self.sha[:12]})" if rev != self.sha else self.sha[:12]
        self._cache: dict[str, bytes | None] = {}

    @cached_property
    def repo(self) -> Any:
        """The repository as a gitpython ``Repo``, for callers that read objects through it (imported then)."""
        return _library_repo(self.root)

    @cached_property
    def _blobs(self) -> dict[str, str]:
        """path -> blob id for every file of the commit (one tree listing)."""
        return self._git.blobs(self.sha)

    def blob_id(self, path: str) -> str | None:
        return self._blobs.get(path)

    def read(self, path: str) -> bytes | None:
        if path in self._cache:
            return self._cache[path]
        check_inside(path)
        data: bytes | None = None
        if "_blobs" in self.__dict__ or "\n" in path:
            sha = self._blobs.get(path)
            if sha is not None:
                data = self._blob(sha, path)
        else:
            # One lookup by path instead of a listing of the whole tree: reading the changelog at the base
            # should not cost a walk of every file.
            found = self._git.read_object(f"{self.sha}:{path}")
            if found is not None and found[1] == "blob":
                data = _BLOB_CACHE.setdefault(found[0], found[2])
        self._cache[path] = data
        return data

    def _blob(self, sha: str, path: str) -> bytes:
        data = _BLOB_CACHE.get(sha)
        if data is None:
            found = self._git.read_object(sha)
            if found is None:
                raise UsageError(f"{path} at {self.label} is blob {sha}, which this repository does not hold; "
                                 "fetch the revision's objects (`git fetch origin <sha>`)")
            data = _BLOB_CACHE[sha] = found[2]
        return data

    def files(self) -> tuple[str, ...]:
        return tuple(sorted(self._blobs))

    def glob(self, pattern: str) -> list[str]:
        return _glob(self.files(), pattern)


def content_id(snapshot: Snapshot, path: str, data: bytes) -> str:
    """The identity of a file's bytes across revisions: its git blob id when the snapshot has one (no hashing:
    a replay asks for the same files at every commit), else a digest of ``data`` (what it read at ``path``)."""
    blob_id = getattr(snapshot, "blob_id", None)
    found = blob_id(path) if callable(blob_id) else None
    return str(found) if found else hashlib.sha1(data).hexdigest()


def blob_ids_at(root: Path, commits: list[str], path: str) -> dict[str, str | None]:
    """The blob id of ``path`` at each of ``commits`` (None where it is absent), from one git process."""
    ids = _git(root).blob_ids([f"{c}:{path}" for c in commits])
    return dict(zip(commits, ids))


def read_blob_uncached(root: Path, blob: str) -> bytes:
    """A blob's bytes, past the process-wide blob cache (for large files read once, such as every version of a
    changelog in a replay)."""
    found = _git(root).read_object(blob)
    if found is None:
        raise UsageError(f"blob {blob} is not in this repository; fetch the history it belongs to")
    return found[2]


def _shallow_boundary(repo: Any) -> frozenset[str]:
    """Commits whose parents a shallow clone left out (empty for a full clone).

    ``actions/checkout`` clones one commit deep unless told otherwise, so this
    is the usual state of a repository inside a pull request's job.
    """
    path = Path(getattr(repo, "common_dir", repo.git_dir), "shallow")
    try:
        return frozenset(line.strip() for line in path.read_text(encoding="ascii").splitlines() if line.strip())
    except OSError:
        return frozenset()


_FETCH_HINT = ("fetch the history it needs: `fetch-depth: 0` in actions/checkout, or "
               "`git fetch --unshallow` (or `git fetch origin <sha>` for one revision)")


def resolve_commit(repo: Any, rev: str, option: str = "") -> Any:
    """The commit ``rev`` names, with its data present; otherwise a UsageError saying what to fetch.

    In a shallow clone ``HEAD~1`` still resolves to a sha (the child records
    its parent) while the parent's data is absent; reading it later would fail
    deep inside git, so its presence is checked here.
    """
    import git

    given = f"{rev!r} (given by {option})" if option else repr(rev)
    shallow = _shallow_boundary(repo)
    try:
        commit = repo.commit(rev)
    except (git.BadName, ValueError, git.GitCommandError):
        if shallow:
            raise UsageError(f"unknown revision {given}: it is not in this repository, which is a shallow clone; if it "
                             f"names older history, {_FETCH_HINT}") from None
        raise UsageError(f"unknown revision {given}: it is not in this repository. Fetch it first (for example "
                         "`git fetch origin main`, or `fetch-depth: 0` in actions/checkout)") from None
    try:
        commit.tree  # noqa: B018 - reads the commit object, which a shallow clone may lack
    except ValueError:
        where = "this clone is shallow and does not hold it" if shallow else "its data is missing from this repository"
        raise UsageError(f"revision {given} names commit {commit.hexsha[:12]}, but {where}; {_FETCH_HINT}") from None
    return commit


def open_snapshot(root: Path, rev: str | None) -> Snapshot:
    """The work tree when ``rev`` is None, else the commit ``rev`` names."""
    return WorkTreeSnapshot(root) if rev is None else GitSnapshot(root, rev)


def _git(root: Path) -> Git:
    git = _git_at(root)
    if git is None:
        raise UsageError(f"{root} is not the root of a git repository; expected --repo to name one")
    return git


def merge_base(root: Path, rev_a: str, rev_b: str = "HEAD") -> str | None:
    """The best common ancestor of two revisions, or None when either is unknown or they share none."""
    from .gitcli import GitError

    try:
        found = _git(root).lines("merge-base", "--end-of-options", rev_a, rev_b)
    except GitError:
        return None
    return found[0] if found else None


def shallow_commits(root: Path) -> frozenset[str]:
    """The commits at the boundary of a shallow clone (their parents are not here); empty for a full clone."""
    from .gitcli import GitError

    git = _git(root)
    try:
        common = git.lines("rev-parse", "--git-common-dir")
    except GitError:
        return frozenset()
    path = Path(root, common[0]) if common else Path(root, ".git")
    try:
        return frozenset(line.strip() for line in (path / "shallow").read_text(encoding="ascii").splitlines()
                         if line.strip())
    except OSError:
        return frozenset()


def is_shallow(root: Path) -> bool:
    return bool(shallow_commits(root))


def require_revision(root: Path, rev: str, option: str) -> str:
    """The full sha of ``rev``; a UsageError naming ``option`` and the revision when it cannot be read."""
    return _commit_sha(root, _git(root), rev, option)


def commit_of(root: Path, rev: str) -> str | None:
    """The commit ``rev`` names, or None outside a git repository or when it names none."""
    git = _git_at(root)
    return None if git is None else git.commit_sha(rev)


def rev_exists(root: Path, rev: str) -> bool:
    return _git(root).commit_sha(rev) is not None


def changed_paths(root: Path, base_rev: str, head_rev: str | None) -> frozenset[str]:
    """Files that differ between ``base_rev`` and ``head_rev`` (None: the work tree, untracked files included)."""
    from .gitcli import GitError

    git = _git(root)
    try:
        if head_rev is None:
            names = git.lines("diff", "--name-only", "--no-renames", base_rev, "--")
            names += git.lines("ls-files", "--others", "--exclude-standard")
        else:
            names = git.lines("diff", "--name-only", "--no-renames", base_rev, head_rev, "--")
    except GitError as exc:
        raise UsageError(f"cannot compare {base_rev!r} with {head_rev or 'the work tree'}: {exc.message}") from None
    return frozenset(names)


def current_branch(root: Path) -> str | None:
    """The checked-out branch's name, or None on a detached head."""
    from .gitcli import GitError

    try:
        found = _git(root).lines("symbolic-ref", "--quiet", "HEAD")
    except GitError:
        return None
    return found[0].removeprefix("refs/heads/") if found and found[0].startswith("refs/heads/") else None
