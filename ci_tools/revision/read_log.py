"""A snapshot that remembers which of its paths were read: the files an evaluation depends on.

A multinode job's chain reads files its recipe never sources (the AMD chain:
``submit.sh``, ``job.slurm``, ``server_sglang.sh``, ``models.yaml``), found
only by following it.  Evaluating the job through a :class:`ReadLog` gives
them; a path asked for and absent is kept too (a file whose absence the
chain tests can appear).  Reads replayed from an earlier evaluation's record
(the interpreter's reused calls, :mod:`ci_tools.shell.memo`) are added by
the interpreter from that record.  A script a command names that the chain
does not run itself (the client, started by ``eval`` of a string known only
up to ``bash .../bench.sh``) is kept apart, as named (:meth:`ReadLog.named`).
"""

from __future__ import annotations

from typing import Any, Mapping

from .snapshot import Snapshot


READ, TESTED, NAMED = "read", "tested", "named"


class ReadLog:
    """``inner`` read through, every path asked for kept in order in ``paths`` with how: its content read, or only
    whether it exists (``[[ -f PATH ]]``: :meth:`exists`).  One log per evaluation."""

    def __init__(self, inner: Snapshot) -> None:
        self.inner = inner
        self.label = inner.label
        self.paths: list[tuple[str, str]] = []
        # The values the variables an `if` statement's conditions read held when the evaluation reached it, by the
        # statement's file and line: a name with the same known value at every visit (one unset, unknown or of
        # another value at a visit is left out, unknown).
        self.branches: dict[tuple[str, int], dict[str, str]] = {}

    def note_branch(self, path: str, line: int, values: Mapping[str, str | None]) -> None:
        """One visit of the `if` at ``path:line`` with ``values`` (None: unset or unknown)."""
        known = {name: text for name, text in values.items() if text is not None}
        before = self.branches.get((path, line))
        self.branches[(path, line)] = known if before is None else {
            name: text for name, text in before.items() if known.get(name) == text}

    def read(self, path: str) -> bytes | None:
        self.paths.append((READ, path))
        return self.inner.read(path)

    def exists(self, path: str) -> bytes | None:
        """``read`` for a caller that only asks whether the file is there (what it returns is the content)."""
        self.paths.append((TESTED, path))
        return self.inner.read(path)

    def named(self, path: str) -> bytes | None:
        """``read`` for a script a command names and the evaluation does not run (what it calls is read from its
        text)."""
        self.paths.append((NAMED, path))
        return self.inner.read(path)

    def read_paths(self) -> frozenset[str]:
        return frozenset(path for how, path in self.paths if how == READ)

    def tested_paths(self) -> frozenset[str]:
        """Paths only tested for existence (never read)."""
        return frozenset(path for how, path in self.paths if how == TESTED) - self.read_paths()

    def named_paths(self) -> frozenset[str]:
        """Scripts named and not run (see :meth:`named`)."""
        return frozenset(path for how, path in self.paths if how == NAMED)

    def files(self) -> tuple[str, ...]:
        return self.inner.files()

    def glob(self, pattern: str) -> list[str]:
        return self.inner.glob(pattern)

    def __getattr__(self, name: str) -> Any:
        # What else a snapshot offers (``blob_id``, ``sha``) is the inner one's.
        return getattr(self.inner, name)


def read_to_test(snapshot: Snapshot, path: str) -> bytes | None:
    """``snapshot.read(path)`` for a caller that only asks whether the file exists: a :class:`ReadLog` notes it as
    tested, not read."""
    return snapshot.exists(path) if isinstance(snapshot, ReadLog) else snapshot.read(path)


def read_named(snapshot: Snapshot, path: str) -> bytes | None:
    """``snapshot.read(path)`` for a script a command names and the evaluation does not run: a :class:`ReadLog` notes
    it as named."""
    return snapshot.named(path) if isinstance(snapshot, ReadLog) else snapshot.read(path)


def unlogged(snapshot: Snapshot) -> Snapshot:
    """The snapshot under a :class:`ReadLog` (a lookup that is not a read of the evaluation: which of two candidate
    paths is a file), else ``snapshot``."""
    return snapshot.inner if isinstance(snapshot, ReadLog) else snapshot


def branch_log(snapshot: object) -> ReadLog | None:
    """The :class:`ReadLog` an evaluation reads through, to note the ``if`` statements it reaches; None for any other
    snapshot."""
    return snapshot if isinstance(snapshot, ReadLog) else None


def logged_reads(snapshot: object) -> list[tuple[str, str]] | None:
    """The list a :class:`ReadLog` keeps its reads in; None for any other snapshot."""
    return snapshot.paths if isinstance(snapshot, ReadLog) else None


__all__ = ["NAMED", "READ", "TESTED", "ReadLog", "branch_log", "logged_reads", "read_named", "read_to_test", "unlogged"]
