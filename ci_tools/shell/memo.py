"""Reusing a function call's effects across jobs.

Jobs of one config run the same recipe with nearly the same environment, and
the library functions a recipe calls at its end (waiting for the server,
running the client) mostly read variables that do not differ between those
jobs.  A top-level call is therefore recorded: the variables it read (their
bindings when the call started), the variables whose emptiness alone it
checked (``check_env_vars``), the functions it called, and what it changed
(variables, exports, functions, servers, exits, missing variables, errors).
A later call of the same body with equal arguments, at the same guard, whose
recorded reads are equal in the current state, replays the effects instead
of evaluating again, from whichever recipe it is made (unless it read ``$0``:
then only from the same script).  Calls that start the server or end the script are not
recorded.  ``source FILE`` is recorded the same way: the shared library a
recipe sources defines its functions once per recipe, not once per job.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..findings import Location
from .model import EarlyExit, MissingEnv, Value
from .state import Binding, Server

_MAX_ENTRIES = 32


@dataclass
class Effects:
    # The script ``$0`` named when the call read it (None: it did not, any script may reuse the call).
    script: object
    # Files the recipe wrote that the call read (by streams.file_key), with their content then.
    files_read: tuple[tuple[str, Value | None], ...]
    reads: tuple[tuple[str, Binding | None], ...]
    empties: tuple[tuple[str, bool | None], ...]
    functions: tuple[tuple[str, int], ...]
    changed: dict[str, Binding]
    removed: tuple[str, ...]
    exported_added: frozenset[str]
    exported_removed: frozenset[str]
    functions_changed: dict[str, object]
    files_changed: dict[str, Value]
    servers: list[Server]
    early_exits: list[EarlyExit]
    missing: list[MissingEnv]
    errors: list[str]
    forks: int
    opaque_commands: list[Location]
    status: bool | None
    # What the call printed into a captured output (``$(f ...)`` of the AMD chain); empty elsewhere.
    printed: tuple[object, ...] = ()
    # Repository paths the call read (evaluated through a revision.read_log.ReadLog; empty otherwise): a replay
    # reads none of them, yet the job depends on them as much as the job the call was recorded for.
    repo_reads: tuple[tuple[str, str], ...] = ()


@dataclass
class CallMemo:
    """Per-process store: (body, recipe, args, context) -> recorded calls."""

    entries: dict[tuple[Any, ...], list[Effects]] = field(default_factory=dict)

    def find(self, key: tuple[Any, ...], vars: dict[str, Binding], functions: dict[str, object],
             emptiness: Any, script: Any, files: dict[str, Value]) -> Effects | None:
        entries = self.entries.get(key)
        if entries is None:
            return None
        for i, e in enumerate(entries):
            if ((e.script is None or e.script == script())
                    and all((content := files.get(k)) is v or content == v for k, v in e.files_read)
                    and all((found := vars.get(n)) is b or found == b for n, b in e.reads)
                    and all(emptiness(n) == empty for n, empty in e.empties)
                    and all(id(functions.get(n)) == fid for n, fid in e.functions)):
                if i:
                    # Jobs come config by config: the entry that matched is likely to match next.
                    entries.insert(0, entries.pop(i))
                return e
        return None

    def store(self, key: tuple[Any, ...], effects: Effects) -> None:
        found = self.entries.setdefault(key, [])
        if len(found) >= _MAX_ENTRIES:
            found.pop()  # the one least recently matched
        found.insert(0, effects)


