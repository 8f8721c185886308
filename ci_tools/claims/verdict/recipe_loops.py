"""Jobs as they run when their recipe sweeps its own concurrencies.

A multinode recipe may loop over its concurrencies itself (``for concurrency in 8 16 32 64 128; do ...
--max-concurrency "${concurrency}"``) while its config row carries one placeholder (``conc-list: [1]``, "the
recipes own the exact concurrency loops"): one job then runs every point of the loop.  A sentence about the
points that sweep runs is judged against the loop, not against the placeholder.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace

from ...config.resolution_rules import DEFAULT_RULES, SRT_SLURM
from ...jobs.job import Job
from ...jobs.resolution import job_settings
from ...revision.snapshot import Snapshot
from ...shell.model import MISSING, RecipeEval

# ``for concurrency in 1 2 4 8; do``, ``for CONC in 256 512``: a loop over literal concurrencies.
_CONC_LOOP = re.compile(r"\bfor\s+[A-Za-z_]*conc[A-Za-z_]*\s+in\s+(\d+(?:[ \t]+\d+)*)\s*(?:;|\n|do\b)", re.IGNORECASE)


# ``for concurrency in ${CONCURRENCY_LIST}; do``: a loop over concurrencies another part of the recipe gives (an
# override section the job's CONFIG_FILE selects): the job runs several points, which are not read here.
_CONC_LOOP_OVER_VARIABLE = re.compile(r"\bfor\s+[A-Za-z_]*conc[A-Za-z_]*\s+in\s+\$\{?[A-Za-z_]", re.IGNORECASE)


def loops_over_unread_concurrencies(text: str) -> bool:
    """The recipe loops over concurrencies a variable holds (their values are not read here)."""
    return bool(_CONC_LOOP_OVER_VARIABLE.search(text))


def looped_concurrencies(text: str) -> list[int] | None:
    """The concurrencies of the one loop over literal concurrencies a recipe has; None for none or several
    loops that differ (which of them a job runs is not known)."""
    loops = {tuple(int(v) for v in m.group(1).split()) for m in _CONC_LOOP.finditer(text)}
    return list(next(iter(loops))) if len(loops) == 1 else None


class AsRun:
    """Each multinode job whose recipe loops over its own concurrencies, as the job with those concurrencies (or
    as not known, for a loop over a variable); read on first use (most changes have no sentence about
    concurrencies to judge), once per job."""

    def __init__(self, evals: Mapping[str, RecipeEval | None], snapshot: Snapshot) -> None:
        self._evals, self._snapshot = evals, snapshot
        self._jobs: dict[str, Job | None] = {}
        # By recipe path: the literal points of its loop, [] for a loop over a variable, None for no loop.
        self._loops: dict[str, list[int] | None] = {}

    def job(self, job: Job) -> Job | None:
        """The job as it runs: itself unless its recipe loops over other concurrencies; None when it loops over
        concurrencies this does not read (``${CONCURRENCY_LIST}``), so the points it runs are not known."""
        if not job.multinode:
            return job
        if job.id not in self._jobs:
            self._jobs[job.id] = self._as_run(job)
        return self._jobs[job.id]

    def _as_run(self, job: Job) -> Job | None:
        for path in _recipe_files(job, self._evals.get(job.id)):
            if path not in self._loops:
                data = self._snapshot.read(path)
                text = data.decode("utf-8", "replace") if data is not None else ""
                self._loops[path] = looped_concurrencies(text) or ([] if loops_over_unread_concurrencies(text)
                                                                   else None)
            looped = self._loops[path]
            if looped == []:
                return None
            if looped and looped != job.concs:
                return replace(job, fields={**job.fields, "conc": looped})
        return job


# The default rule of the multinode fleets that submit the srt-slurm recipe of CONFIG_FILE.
_SRT_RULE = next(rule for rule in DEFAULT_RULES if rule.kind == SRT_SLURM)


def _recipe_files(job: Job, ev: RecipeEval | None) -> list[str]:
    """The recipe the evaluation read, else the srt-slurm recipe the job's CONFIG_FILE names where the
    repository keeps them (a launcher no rule resolves still runs it)."""
    paths = [ev.recipe] if ev is not None and ev.recipe and ev.kind != MISSING else []
    named = job_settings(job).get(_SRT_RULE.setting, "").partition(":")[0]
    if named:
        paths.append(_SRT_RULE.srt_recipe_path(named))
    return paths
