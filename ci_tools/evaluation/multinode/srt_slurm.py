"""srt-slurm YAML recipes: each role's server flags and env for a job's ``CONFIG_FILE``.

Each ``(file, selector)`` is resolved once per snapshot; jobs that share a
recipe share the result (the evaluation does not depend on anything else of
the job).  A file's tree is kept while its jobs are evaluated.
"""

from __future__ import annotations

import dataclasses
import weakref
from typing import TypeVar, Union

from ...revision.snapshot import Snapshot
from ...revision.yamlpos import YamlLoadError, load_yaml
from .located import Located, located
from .roles import RoleCommand
from .srt_backend import BackendError, role_servers
from .srt_variants import VariantError, variants


class SrtError(Exception):
    """Why a recipe gives no server command line (the message names file and line where known)."""


_Parsed = Union[Located, SrtError]
_Resolved = Union[list[RoleCommand], SrtError]
_PARSED: weakref.WeakKeyDictionary[Snapshot, dict[str, _Parsed]] = weakref.WeakKeyDictionary()
_RESOLVED: weakref.WeakKeyDictionary[Snapshot, dict[tuple[str, str | None], _Resolved]] = weakref.WeakKeyDictionary()
_K = TypeVar("_K")
_V = TypeVar("_V")


def _cache(table: weakref.WeakKeyDictionary[Snapshot, dict[_K, _V]], snapshot: Snapshot) -> dict[_K, _V]:
    try:
        return table.setdefault(snapshot, {})
    except TypeError:  # a snapshot that cannot be weakly referenced: no cache
        return {}


# Trees kept per snapshot: jobs of one recipe come one after another, and what each (file, selector) gives
# is kept anyway (``_RESOLVED``), so only the last few trees stay in memory (a sweep reads ~250 files).
_TREES_KEPT = 8


def parse_recipe(snapshot: Snapshot, path: str) -> Located:
    """The recipe file as a position-keeping tree (the last few kept per snapshot)."""
    known = _cache(_PARSED, snapshot)
    found = known.pop(path, None)
    if found is None:
        found = _parse(snapshot, path)
    known[path] = found  # most recent last
    while len(known) > _TREES_KEPT:
        del known[next(iter(known))]
    if isinstance(found, SrtError):
        raise found
    return found


def _parse(snapshot: Snapshot, path: str) -> _Parsed:
    data = snapshot.read(path)
    if data is None:
        return SrtError(f"{path}: recipe not found in {snapshot.label}")
    try:
        # srtctl reads recipes with yaml.safe_load: of a key written twice, the later value counts.
        loaded = load_yaml(data, path, last_duplicate_wins=True)
    except YamlLoadError as exc:
        return SrtError(str(exc))
    return located(loaded.value, path, lines=data.decode("utf-8", "replace").split("\n"))


def srt_commands(snapshot: Snapshot, path: str, selector: str | None) -> list[RoleCommand]:
    """Each role's command line for ``path[:selector]``; raises :class:`SrtError` with the reason."""
    known = _cache(_RESOLVED, snapshot)
    key = (path, selector)
    found = known.get(key)
    if found is None:
        found = known[key] = _resolve(snapshot, path, selector)
    if isinstance(found, SrtError):
        raise found
    return found


def _resolve(snapshot: Snapshot, path: str, selector: str | None) -> _Resolved:
    try:
        root = parse_recipe(snapshot, path)
        chosen = variants(root, selector)
    except SrtError as exc:
        return exc.with_traceback(None)  # kept in the cache: without the frames it was raised in
    except VariantError as exc:
        return SrtError(f"{path}: {exc}")
    if len(chosen) != 1:
        names = ", ".join(v.suffix for v in chosen) or "none"
        what = f"selector {selector!r}" if selector is not None else "no selector"
        return SrtError(f"{path}: {what} submits {len(chosen)} variants ({names}); a job runs exactly one")
    try:
        servers = role_servers(chosen[0].config)
    except BackendError as exc:
        return SrtError(f"{path}: {exc}")
    if not servers:
        return SrtError(f"{path}: the config runs no worker (no prefill, decode or aggregated workers)")
    return [RoleCommand(s.role, s.flags, dataclasses.replace(s.location, note=f"{s.command}, srt-slurm {s.role} worker"),
                        s.env) for s in servers]
