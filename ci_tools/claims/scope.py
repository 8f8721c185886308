"""Which jobs a claim is about.

A claim starts with its entry's scope (config-keys and scenario-type) and is
narrowed by what its sentence names: a band of the DP-attention/TP split
("DEP", "on DP-attention", "the TP band", "TP-only") and concurrencies
("c48 and above", "the concurrency 1/2/4/8/16 band").  A clause that names
nothing inherits the narrowing of the clause before it in the same sentence
("Match the validated DEP run: disable EPLB and TBO, ...").
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Iterable

from ..matrix import Job


@dataclass(frozen=True)
class Scope:
    dp_attn: bool | None = None
    concs: frozenset[int] | None = None
    conc_min: int | None = None
    dp_label: str = ""  # how the text named the band ("DEP", "TP band")

    @property
    def narrowed(self) -> bool:
        return self.dp_attn is not None or self.concs is not None or self.conc_min is not None

    def merged_over(self, inherited: Scope) -> Scope:
        """This clause's narrowing, with what it leaves open taken from ``inherited``."""
        out = inherited
        if self.dp_attn is not None:
            out = replace(out, dp_attn=self.dp_attn, dp_label=self.dp_label)
        if self.concs is not None or self.conc_min is not None:
            out = replace(out, concs=self.concs, conc_min=self.conc_min)
        return out

    def label(self) -> str:
        """Words for messages: ``DEP``, ``TP band c1-c16``."""
        parts: list[str] = []
        if self.dp_label:
            parts.append(self.dp_label)
        if self.concs is not None:
            vals = sorted(self.concs)
            parts.append("c" + "/".join(str(v) for v in vals) if len(vals) <= 6 else f"c{vals[0]}-c{vals[-1]}")
        if self.conc_min is not None:
            parts.append(f"c{self.conc_min}+")
        return " ".join(parts)

    def admits(self, job: Job) -> bool:
        if self.dp_attn is not None:
            dp = (job.fields.get("decode") or {}).get("dp-attn") if job.multinode else job.fields.get("dp-attn")
            if bool(dp) != self.dp_attn:
                return False
        concs = job_concs(job)
        if self.concs is not None and not (set(concs) & self.concs):
            return False
        if self.conc_min is not None and not any(c >= self.conc_min for c in concs):
            return False
        return True

    def jobs(self, jobs: Iterable[Job]) -> list[Job]:
        return [j for j in jobs if self.admits(j)]


def job_concs(job: Job) -> list[int]:
    return job.concs
