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

from dataclasses import dataclass, replace
from typing import Iterable

from ..matrix import Job
from .arms import Arm, finish


@dataclass(frozen=True)
class Scope:
    arms: tuple[Arm, ...] = ()  # alternatives; none: every job
    concs: frozenset[int] | None = None
    conc_min: int | None = None

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
        out = inherited
        if self.arms:
            if inherited.arms:
                arms: list[Arm] = []
                for own in self.arms:
                    for old in inherited.arms:
                        arm = own.over(old)
                        if arm not in arms:
                            arms.append(arm)
                out = replace(out, arms=tuple(arms))
            else:
                out = replace(out, arms=self.arms)
        if self.concs is not None or self.conc_min is not None:
            out = replace(out, concs=self.concs, conc_min=self.conc_min)
        return out

    def without_concs(self) -> Scope:
        return replace(self, concs=None, conc_min=None)

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
        if self.arms and not any(finish(a).admits(job) for a in self.arms):
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
