"""Settings a recipe reads with a default: ``${AGENTIC_WARMUP_GRACE_PERIOD:-1800}``.

A variable the recipe (or the library it sources) reads this way, and that no
file of the recipe ever assigns, has its default for every job: a text that
says it is 3600 contradicts the recipe, and the default's line is the evidence.
A variable assigned anywhere in those files (even after the server starts,
where the evaluation does not follow) is not known to keep its default.
"""

from __future__ import annotations

import bisect
import posixpath
import re
from dataclasses import dataclass, field
from typing import Iterable

from ...bounded import BoundedDict
from ...findings import Location
from ...revision.snapshot import Snapshot, content_id
from ...shell.model import RecipeEval

# A variable a YAML or shell file writes: ``NAME: value`` (a key of an env block) or ``NAME=value``.
_WRITTEN_NAME = re.compile(r"(?m)^\s*-?\s*([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)\s*:|\b([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)=")
_DEFAULT = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*):?-([^}$`\"'\s]*)\}")
_ASSIGN = re.compile(r"(?:^|[\s;&|(])(?:export\s+|local\s+|readonly\s+|declare\s+(?:-\w+\s+)*)?"
                     r"([A-Za-z_][A-Za-z0-9_]*)\+?=", re.MULTILINE)
# A server flag the files spell (passed or only in a branch the jobs do not take).
_FLAG = re.compile(r"(?<![\w-])--([a-z][a-z0-9]*(?:-[a-z0-9]+)+)\b")
# A flag of a client command, one word too (run_benchmark_serving's --dsv4, --backend).
_CLIENT_FLAG = re.compile(r"(?<![\w-])--([a-z][a-z0-9]*(?:-[a-z0-9]+)*)\b")
# NAME="${NAME:-a1-b01,a1-b02}" or NAME=a1-b01,a1-b02: a list of names with numbers (hosts, devices).
_LIST = re.compile(r"^[ \t]*(?:export[ \t]+)?([A-Za-z_][A-Za-z0-9_]*)=[\"']?(?:\$\{\1:?-)?([A-Za-z0-9_.:,-]+)",
                   re.MULTILINE)
# A command of the benchmark client or the eval harness (its flags are not the server's), one logical line.
_CLIENT_COMMAND = re.compile(r"^[ \t]*(?:[A-Za-z_]\w*=\S*[ \t]+)*(?:run_benchmark_serving|run_eval|aiperf|lm_eval|"
                             r"\S*benchmark_serving\.py|python3?[ \t]+(?:-m[ \t]+)?\S*bench_serving)\b.*$", re.MULTILINE)
_LIST_ITEM = re.compile(r"[A-Za-z]+\d*(?:[-_.][A-Za-z]*\d+)+")
_FOR = re.compile(r"\bfor\s+([A-Za-z_][A-Za-z0-9_]*)\s+in\b|\bread\s+(?:-\w+\s+)*([A-Za-z_][A-Za-z0-9_]*)")


@dataclass(frozen=True)
class DefaultRead:
    name: str
    default: str
    location: Location


@dataclass(frozen=True)
class ListSetting:
    name: str
    items: tuple[str, ...]
    location: Location


@dataclass(frozen=True)
class RecipeReads:
    """What the files of one recipe read with a default, and every name they assign."""

    defaults: dict[str, DefaultRead]
    assigned: frozenset[str]
    # Flags the files spell: a text may name one by a key that feeds it ("scheduler_delay_factor" of
    # --scheduler-delay-factor), passed or not.
    flags: frozenset[str] = frozenset()
    # List settings of the files (see _LIST): name -> its items where it is written (None: written twice
    # with different items, so which one a job has is not known).
    lists: dict[str, ListSetting | None] = field(default_factory=dict)
    # Flags the files pass to the benchmark client or the eval harness ("run_benchmark_serving ...
    # --use-chat-template"): a text may speak of that program.
    client_flags: frozenset[str] = frozenset()

    def default_of(self, name: str) -> DefaultRead | None:
        """The default a variable keeps: read with one, assigned nowhere."""
        return None if name in self.assigned else self.defaults.get(name)


def file_reads(path: str, data: bytes) -> RecipeReads:
    text = data.decode("utf-8", "replace")
    defaults: dict[str, DefaultRead] = {}
    starts = [0] + [m.end() for m in re.finditer("\n", text)]
    for m in _DEFAULT.finditer(text):
        name, default = m.group(1), m.group(2)
        if name in defaults or not default:
            continue
        defaults[name] = DefaultRead(name, default, _location(path, starts, m.start()))
    assigned = {m.group(1) for m in _ASSIGN.finditer(text)}
    assigned |= {g for m in _FOR.finditer(text) for g in m.groups() if g}
    flags = frozenset(f"--{m.group(1)}" for m in _FLAG.finditer(text))
    logical = text.replace("\\\n", " ")
    client = frozenset(f"--{f.group(1)}" for m in _CLIENT_COMMAND.finditer(logical) for f in _CLIENT_FLAG.finditer(m.group()))
    return RecipeReads(defaults, frozenset(assigned), flags, _lists(path, text, starts), client)


def _location(path: str, starts: list[int], offset: int) -> Location:
    """Line and column of ``offset``, given where each line of the text starts."""
    line = bisect.bisect_right(starts, offset)
    return Location(path, line, offset - starts[line - 1] + 1)


def _lists(path: str, text: str, starts: list[int]) -> dict[str, ListSetting | None]:
    out: dict[str, ListSetting | None] = {}
    for m in _LIST.finditer(text):
        items = tuple(m.group(2).split(","))
        if len(items) < 2 or not all(_LIST_ITEM.fullmatch(i) for i in items):
            if m.group(1) in out:
                out[m.group(1)] = None  # set again to something else
            continue
        _add_list(out, m.group(1), ListSetting(m.group(1), items, _location(path, starts, m.start(2))))
    return out


def _add_list(lists: dict[str, ListSetting | None], name: str, setting: ListSetting | None) -> None:
    """A list setting written once more: the same items keep it, other items make it unknown (None)."""
    before = lists.get(name, setting)
    lists[name] = setting if before is not None and setting is not None and before.items == setting.items else None


def merged(parts: Iterable[RecipeReads]) -> RecipeReads:
    defaults: dict[str, DefaultRead] = {}
    assigned: set[str] = set()
    flags: set[str] = set()
    client: set[str] = set()
    lists: dict[str, ListSetting | None] = {}
    for part in parts:
        for name, read in part.defaults.items():
            defaults.setdefault(name, read)
        assigned |= part.assigned
        flags |= part.flags
        client |= part.client_flags
        for name, setting in part.lists.items():
            _add_list(lists, name, setting)
    return RecipeReads(defaults, frozenset(assigned), frozenset(flags), lists, frozenset(client))


def recipe_files(ev: RecipeEval, library: str) -> list[str]:
    """The shell files an evaluation read: the recipe, the shared library, and every file a value came from."""
    paths = {ev.recipe, library}
    for v in [*ev.env.values(), *ev.variables.values()]:
        if v.location.path.endswith(".sh"):
            paths.add(v.location.path)
    return sorted(p for p in paths if p.endswith(".sh"))


class ReadsCache:
    """Reads per file blob, shared by every job and revision that uses the same bytes."""

    def __init__(self) -> None:
        self._files: dict[tuple[str, str], RecipeReads] = {}
        # chain_lists per directory set, for the one snapshot they were read from.
        self._lists_of: Snapshot | None = None
        self._lists: dict[tuple[str, ...], dict[str, ListSetting | None]] = {}
        self._names: dict[tuple[str, str], frozenset[str]] = {}
        # the same files: the same reads
        self._merged_of: BoundedDict[tuple[tuple[str, str], ...], RecipeReads] = BoundedDict(4096)

    def of(self, ev: RecipeEval, library: str, snapshot: Snapshot) -> RecipeReads:
        return self._merged(recipe_files(ev, library), snapshot)

    def server_flags(self, ev: RecipeEval, library: str, snapshot: Snapshot) -> frozenset[str]:
        """The flags the scripts that launch the servers spell (not the shared library's: its flags are the
        benchmark client's and the eval harness's)."""
        paths = sorted({ev.recipe, *(where.path for where in ev.server_command)} - {library})
        return self._merged([p for p in paths if p.endswith(".sh")], snapshot).flags

    def chain_lists(self, ev: RecipeEval, snapshot: Snapshot) -> dict[str, ListSetting | None]:
        """The list settings of every script beside the ones that launch a multinode job's servers (a chain's
        submit script sets its node lists there, and the evaluation need not read it).  Read once per
        directory set and revision: the jobs of a chain share them."""
        dirs = tuple(sorted({posixpath.dirname(w.path) for w in ev.server_command} - {posixpath.dirname(ev.recipe)}))
        if self._lists_of is not snapshot:  # a history replay moves on from revision to revision
            self._lists_of, self._lists = snapshot, {}
        found = self._lists.get(dirs)
        if found is None:
            paths = sorted({p for d in dirs for p in snapshot.glob(f"{d}/*.sh" if d else "*.sh")})
            found = self._lists[dirs] = self._merged(paths, snapshot).lists
        return found

    def recipe_names(self, ev: RecipeEval, snapshot: Snapshot) -> frozenset[str]:
        """The variable names a multinode job's recipe file writes (``SERVED_MODEL_NAME: ...`` in a YAML env block,
        ``NAME=value``), wherever in it: one the evaluation gives no server may be set for another program."""
        data = snapshot.read(ev.recipe) if ev.recipe else None
        if data is None:
            return frozenset()
        key = (ev.recipe, content_id(snapshot, ev.recipe, data))
        found = self._names.get(key)
        if found is None:
            text = data.decode("utf-8", "replace")
            found = self._names[key] = frozenset(a or b for a, b in _WRITTEN_NAME.findall(text))
        return found

    def _merged(self, paths: list[str], snapshot: Snapshot) -> RecipeReads:
        keys: list[tuple[str, str]] = []
        for path in paths:
            data = snapshot.read(path)
            if data is None:
                continue
            key = (path, content_id(snapshot, path, data))
            if key not in self._files:
                self._files[key] = file_reads(path, data)
            keys.append(key)
        whole = tuple(keys)
        found = self._merged_of.get(whole)
        if found is None:
            found = self._merged_of.put(whole, merged([self._files[k] for k in keys]))
        return found
