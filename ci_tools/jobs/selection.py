"""Choosing which jobs of the matrix to run.

Filters combine with AND: config-key globs, scenario types, concurrencies,
tp and ep values, and (for a PR) the changelog entries the PR appends.  A
changelog entry selects the configs its ``config-keys`` globs match,
restricted to its ``scenario-type`` list when it has one; several entries
select the union of what each selects.

Key globs of a selection are those InferenceX's ``test-config`` accepts: a
pattern holding ``*`` or ``?`` is an fnmatch pattern (``[...]`` classes too),
anything else names one key exactly.  Changelog ``config-keys`` keep their
own rule, ``*`` only (:func:`ci_tools.jobs.matrix.match_key_glob`).

A multinode job carries a list of concurrencies; a concurrency filter keeps
the job with only the listed concurrencies that were asked for (the recipe
then sweeps fewer points, so the job's id changes with it).  When a filter
leaves jobs out, evals are marked again over the jobs that remain, as the
generator marks them over what it generates.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Sequence

from ..model.keys import match_key_glob
from .job import Job


@dataclass(frozen=True)
class ChangelogScope:
    """What one changelog entry asks to run: key globs and, optionally, scenario types."""

    config_keys: tuple[str, ...]
    scenario_types: tuple[str, ...] = ()
    line: int = 0
    # `append-only: true`: the entry only adds points, so only points the base did not generate run.
    append_only: bool = False

    def covers(self, job: Job, base_ids: frozenset[str] = frozenset()) -> bool:
        if self.scenario_types and job.scenario not in self.scenario_types:
            return False
        if self.append_only and job.id in base_ids:
            return False
        return any(match_key_glob(p, job.config_key) for p in self.config_keys)


@dataclass(frozen=True)
class Selection:
    """Every filter; an empty tuple means "no filter on this"."""

    key_globs: tuple[str, ...] = ()
    scenarios: tuple[str, ...] = ()
    concs: tuple[int, ...] = ()
    tps: tuple[int, ...] = ()
    eps: tuple[int, ...] = ()
    # None: no changelog filter; an empty tuple: the PR appends nothing, so nothing runs.
    changelog: tuple[ChangelogScope, ...] | None = None
    # Ids of the jobs the base revision generates (what append-only entries leave out).
    base_ids: frozenset[str] = frozenset()

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name in ("key_globs", "scenarios", "concs", "tps", "eps"):
            value = getattr(self, name)
            if value:
                out[name.replace("_", "-")] = list(value)
        if self.changelog is not None:
            out["changelog-entries"] = [
                {"config-keys": list(s.config_keys), "scenario-type": list(s.scenario_types), "line": s.line,
                 **({"append-only": True} if s.append_only else {})}
                for s in self.changelog
            ]
        return out


def scope_of_entry(entry: Any, line: int = 0) -> ChangelogScope | None:
    """The scope of one parsed changelog entry; None when it names no usable key."""
    if not isinstance(entry, Mapping):
        return None
    keys = entry.get("config-keys")
    if isinstance(keys, str):
        keys = [keys]
    if not isinstance(keys, list):
        return None
    globs = tuple(k for k in keys if isinstance(k, str) and k)
    if not globs:
        return None
    types = entry.get("scenario-type")
    if isinstance(types, str):
        types = [types]
    scen = tuple(t for t in types if isinstance(t, str)) if isinstance(types, list) else ()
    return ChangelogScope(globs, scen, line, entry.get("append-only") is True)


def match_selection_glob(pattern: str, key: str) -> bool:
    """A selection's key glob, as InferenceX's ``test-config`` matches ``--config-keys``."""
    if "*" in pattern or "?" in pattern:
        return fnmatch.fnmatchcase(key, pattern)
    return pattern == key


def unmatched_globs(patterns: Iterable[str], keys: Sequence[str],
                    match: Callable[[str, str], bool] = match_selection_glob) -> list[str]:
    """The patterns that match no config key (each reported once, in order)."""
    out: list[str] = []
    for p in patterns:
        if p not in out and not any(match(p, k) for k in keys):
            out.append(p)
    return out


def _ints_match(wanted: tuple[int, ...], job: Job, name: str) -> bool:
    if not wanted:
        return True
    if job.multinode:
        return any(isinstance(job.fields.get(role), Mapping) and job.fields[role].get(name) in wanted
                   for role in ("prefill", "decode"))
    return job.fields.get(name) in wanted


def _narrow_concs(job: Job, concs: tuple[int, ...]) -> Job | None:
    if not concs:
        return job
    if job.multinode:
        kept = [c for c in job.concs if c in concs]
        if not kept:
            return None
        return job if kept == job.concs else job.with_fields(conc=kept)
    return job if job.conc in concs else None


def select(jobs: Iterable[Job], selection: Selection) -> list[Job]:
    """The jobs every filter of ``selection`` keeps, in their original order, evals marked over them."""
    from .evals import mark_evals

    given = list(jobs)
    out: list[Job] = []
    for job in given:
        if selection.key_globs and not any(match_selection_glob(p, job.config_key) for p in selection.key_globs):
            continue
        if selection.scenarios and job.scenario not in selection.scenarios:
            continue
        if selection.changelog is not None and not any(s.covers(job, selection.base_ids) for s in selection.changelog):
            continue
        if not (_ints_match(selection.tps, job, "tp") and _ints_match(selection.eps, job, "ep")):
            continue
        narrowed = _narrow_concs(job, selection.concs)
        if narrowed is not None:
            out.append(narrowed)
    unchanged = len(out) == len(given) and all(a is b for a, b in zip(out, given))
    return out if unchanged else mark_evals(out)


def _parallel(job: Job, name: str) -> set[int]:
    """tp or ep of a job: the row's value, or both workers' values for multinode jobs."""
    blocks = [job.fields.get("prefill"), job.fields.get("decode")] if job.multinode else [job.fields]
    return {b[name] for b in blocks if isinstance(b, Mapping) and isinstance(b.get(name), int)}


def offered(jobs: Iterable[Job]) -> str:
    """What ``jobs`` offer to filter on (``scenario fixed-seq-len; tp 8; ep 1; conc 4,8,16``): the answer to a
    filter that leaves none of them."""
    def fmt(values: set[int]) -> str:
        return ",".join(str(v) for v in sorted(values)) or "none"

    conc: set[int] = set()
    tp: set[int] = set()
    ep: set[int] = set()
    scenarios: set[str] = set()
    for j in jobs:
        conc |= set(j.concs)
        tp |= _parallel(j, "tp")
        ep |= _parallel(j, "ep")
        scenarios.add(j.scenario)
    return f"scenario {', '.join(sorted(scenarios))}; tp {fmt(tp)}; ep {fmt(ep)}; conc {fmt(conc)}"


def nothing_left(asked: str, jobs: Sequence[Job], what: str = "the selected configs") -> str:
    """The message for filters (``asked``, as the user wrote them) that keep none of ``jobs``."""
    return f"`{asked}` leaves none of the {len(jobs)} jobs of {what}; they offer: {offered(jobs)}"
