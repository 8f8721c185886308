"""Which jobs a claim is about.

A claim starts with its entry's scope (config-keys and scenario-type) and is
narrowed by what its sentence names: arms (:mod:`.arms`: ``TP4``, ``DEP8``,
``GPU-resident``, ``MTP``, ``8k1k``, ``decode``, ``1P4D``; several arms are
alternatives) and concurrencies ("c48 and above", "the concurrency
1/2/4/8/16 band").  A clause that names nothing inherits the narrowing of the
clause before it in the same sentence ("Match the validated DEP run: disable
EPLB and TBO, ...").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable

from ...jobs.job import Job
from .arms import Arm, share_unnamed


@dataclass(frozen=True)
class Scope:
    arms: tuple[Arm, ...] = ()  # alternatives; none: every job
    concs: frozenset[int] | None = None
    conc_min: int | None = None
    # Other readings of the same words (a list where ``arms`` merged, a clause's arm replacing the one it
    # inherits rather than refining it, a clause about its own arm only): a claim is reported only when it
    # fails under every reading.  Each reading is a scope without readings of its own.
    readings: tuple[Scope, ...] = ()

    def alternatives(self) -> list[Scope]:
        """This scope and each other reading of it."""
        return [self, *self.readings]

    @property
    def narrowed(self) -> bool:
        return bool(self.arms) or self.concs is not None or self.conc_min is not None

    @property
    def role(self) -> str:
        """The server role the claim's values are read from ("" for every server)."""
        roles = {a.role for a in self.arms}
        return roles.pop() if len(roles) == 1 else ""

    def merged_over(self, inherited: Scope) -> Scope:
        """This clause's narrowing, with what it leaves open taken from ``inherited``."""
        concs = (self.concs, self.conc_min) if self.concs is not None or self.conc_min is not None else (
            inherited.concs, inherited.conc_min)
        if not self.arms:
            readings = tuple(Scope(r.arms, *concs) for r in inherited.readings)
            return Scope(inherited.arms, *concs, readings=readings)
        if not inherited.arms:
            return Scope(self.arms, *concs, readings=tuple(Scope(r.arms, *concs) for r in self.readings))
        over: Callable[[Arm, Arm], Arm] = lambda own, old: own.over(old)
        arms = _product(self.arms, inherited.arms, over)
        candidates = [Scope(_product(mine.arms, theirs.arms, over), *concs)
                      for mine in (self, *self.readings) for theirs in (inherited, *inherited.readings)]
        # The clause names another arm of the same kind: it replaces the one before ("TP8 c1, P/D DEP4 c128").
        candidates.append(Scope(_product(self.arms, inherited.arms, share_unnamed), *concs))
        # Or the clause speaks of its own arm only, at its own concurrencies ("..., while leaving the
        # low-concurrency TP8/EP1 band unchanged"; "let AIPerf own HiCache warmup, and reserve ... at DEP8").
        candidates.append(Scope(self.arms, self.concs, self.conc_min))
        return Scope(arms, *concs, readings=_distinct(candidates, Scope(arms, *concs)))

    def without_concs(self) -> Scope:
        return Scope(self.arms, readings=tuple(Scope(r.arms) for r in self.readings if r.arms != self.arms))

    def label(self) -> str:
        """Words for messages: ``DEP``, ``TP band c1-c16``, ``TP4 or TEP4``."""
        parts: list[str] = []
        labels = [a.label for a in self.arms if a.label]
        if labels:
            parts.append(" or ".join(dict.fromkeys(labels)))
        if self.concs is not None:
            vals = sorted(self.concs)
            parts.append("c" + "/".join(str(v) for v in vals) if len(vals) <= 6 else f"c{vals[0]}-c{vals[-1]}")
        if self.conc_min is not None:
            parts.append(f"c{self.conc_min}+")
        return " ".join(parts)

    def admits(self, job: Job) -> bool:
        if self.arms and not any(a.as_matched.admits(job) for a in self.arms):
            return False
        concs = job.concs
        if self.concs is not None and not (set(concs) & self.concs):
            return False
        if self.conc_min is not None and not any(c >= self.conc_min for c in concs):
            return False
        return True

    def jobs(self, jobs: Iterable[Job]) -> list[Job]:
        return [j for j in jobs if self.admits(j)]


def job_concs(job: Job) -> list[int]:
    return job.concs


def _product(own: tuple[Arm, ...], inherited: tuple[Arm, ...], combine: Callable[[Arm, Arm], Arm]) -> tuple[Arm, ...]:
    out: list[Arm] = []
    for a in own:
        for b in inherited:
            arm = combine(a, b)
            if arm not in out:
                out.append(arm)
    return tuple(out)


def _distinct(readings: Iterable[Scope], primary: Scope, limit: int = 6) -> tuple[Scope, ...]:
    out: list[Scope] = []
    for r in readings:
        if r.arms and r != primary and r not in out:
            out.append(r)
    return tuple(out[:limit])
