"""Concurrency bands one clause gives arms the config does not tell apart.

"TP16 (conc 1-8), TEP16 (conc 8-32)" where the config writes both arms as tp16/ep16 rows: each band is judged
on the points of those rows the other band does not name, so the two together are what the rows run.  Rows
the config does tell apart are judged as before (a TP8 row at 1-64 beside "TP8 at 1-8, DEP8 at 16-64" still runs
points its band does not name).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Callable, Mapping, Sequence

from ...jobs.job import Job
from ..text.claim import Claim
from ..text.values import Concurrency


def partner_bands(claim: Claim, claims: Sequence[Claim], arm_jobs: Callable[[Claim], frozenset[str]],
                  place_of: Mapping[int, tuple[int, int]]) -> list[Concurrency]:
    """The other concurrency bands of the claim's clause whose arms (named otherwise) select the same jobs."""
    if claim.kind != "concurrency" or not claim.exhaustive or not claim.scope.arms:
        return []
    here = place_of.get(id(claim))
    others = [other for other in claims
              if other is not claim and other.kind == "concurrency" and isinstance(other.value, Concurrency)
              and other.value != claim.value and other.scope.arms and other.scope.arms != claim.scope.arms
              and other.clause == claim.clause and here is not None and place_of.get(id(other)) == here]
    if not others:
        return []
    mine = arm_jobs(claim)
    return [band for other in others if isinstance(band := other.value, Concurrency) and mine
            and arm_jobs(other) == mine]


def names_point(band: Concurrency, point: int) -> bool:
    """The band names the point: one of its list, inside its range, or at or above its floor."""
    if band.at_least is not None:
        return point >= band.at_least
    if band.is_range:
        return band.values[0] <= point <= band.values[-1]
    return point in band.values


def without_partner_points(claim: Claim, jobs: Sequence[Job], partners: Sequence[Concurrency]) -> list[Job]:
    """The jobs with the points a partner band names and the claim's own does not left out (a job left with no
    point is left out whole)."""
    own = claim.value
    assert isinstance(own, Concurrency)

    def kept(point: int) -> bool:
        return names_point(own, point) or not any(names_point(p, point) for p in partners)

    out: list[Job] = []
    for job in jobs:
        points = [c for c in job.concs if kept(c)]
        if len(points) == len(job.concs):
            out.append(job)
        elif points and isinstance(job.fields.get("conc"), list):
            out.append(replace(job, fields={**job.fields, "conc": points}))
    return out
