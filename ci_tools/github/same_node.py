"""`/run-benchmark ... baseline`: the merge-base's jobs for the same points, paired with the pull request's.

The baseline commit is the merge-base of the pinned head and the pull
request's base: code already on the base branch, and the state the pull
request changes.  Its jobs are planned from its own configs with the same
selection; each pull request job is paired with the first merge-base job not
yet paired that runs on the same runner label and measures one of its points
(a point: config key, scenario, ISL/OSL, concurrency, parallelism, spec
decoding, disagg; never the image).  The run job runs each pair one after the
other on one node, so both sides share the node, the day and the driver.
A pull request job without such a partner runs alone (its points get no
baseline); a merge-base job without a partner does not run.
"""

from __future__ import annotations

from typing import Sequence

from ..jobs.job import Job
from ..results.identity import identity
from ..results.point import point_keys


def pair_jobs(pr_jobs: Sequence[Job], base_jobs: Sequence[Job]) -> dict[int, int]:
    """PR job index -> the index of the merge-base job run beside it."""
    base = [(j.get("runner"), point_keys(identity(j))) for j in base_jobs]
    taken: set[int] = set()
    pairs: dict[int, int] = {}
    for i, job in enumerate(pr_jobs):
        runner, points = job.get("runner"), point_keys(identity(job))
        partner = next((b for b, (r, p) in enumerate(base) if b not in taken and r == runner and p & points), None)
        if partner is not None:
            taken.add(partner)
            pairs[i] = partner
    return pairs
