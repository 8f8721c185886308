"""Fit a matrix of any size into one GitHub matrix job.

GitHub allows at most 256 entries per matrix and 1 MB of outputs per job,
and the full sweep exceeds both.  The planned jobs therefore stay in a file
(uploaded as an artifact) and the GitHub matrix carries only, per entry, a
runner label and the indices of the jobs that entry runs one after another.
Each runner label gets a share of the entries proportional to its jobs.

A dispatched sweep is planned from its selection (``--selection``) at the
pinned commit, and checked against the job count and digest the dispatcher
approved.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from ..config import ProjectConfig
from ..errors import UsageError
from ..jobs.job import Job
from ..model.repository import load_repo
from ..revision.snapshot import GitSnapshot
from ..validation.validate import require_readable
from .jobs import job_from_entry

GITHUB_MAX_MATRIX = 256


@dataclass(frozen=True)
class MatrixEntry:
    runner: str
    indices: tuple[int, ...]
    # With a same-node baseline: per index, the merge-base job run right after it (None: none).
    baseline: tuple[int | None, ...] = ()

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"runner": self.runner, "indices": ",".join(map(str, self.indices)),
                               "jobs": len(self.indices) + sum(b is not None for b in self.baseline)}
        if self.baseline:
            out["baseline"] = ",".join("-" if b is None else str(b) for b in self.baseline)
        return out


def _chunks(items: Sequence[int], count: int) -> list[tuple[int, ...]]:
    size, extra = divmod(len(items), count)
    out, start = [], 0
    for i in range(count):
        end = start + size + (1 if i < extra else 0)
        out.append(tuple(items[start:end]))
        start = end
    return [c for c in out if c]


def plan_entries(entries: Sequence[Any], source: str, max_entries: int = GITHUB_MAX_MATRIX,
                 pairs: Mapping[int, int] | None = None) -> list[MatrixEntry]:
    """The GitHub matrix: per runner label, chunks of job indices; with ``pairs`` (job index -> merge-base job
    index), each entry also says which merge-base job runs right after each of its jobs."""
    by_runner: dict[str, list[int]] = {}
    for index, entry in enumerate(entries):
        job = job_from_entry(entry, f"{source}[{index}]")
        runner = job.get("runner")
        if not isinstance(runner, str) or not runner:
            raise UsageError(f"job {index} ({job.label()}) has no runner label", path=source)
        by_runner.setdefault(runner, []).append(index)
    if len(by_runner) > max_entries:
        raise UsageError(f"the matrix uses {len(by_runner)} runner labels, more than the {max_entries} matrix entries allowed",
                         path=source)
    total = len(entries)
    shares = {r: max(1, (max_entries * len(ix)) // total) for r, ix in by_runner.items()} if total else {}
    # Rounding down leaves spare entries: give them to the labels with the most jobs per entry.
    spare = max_entries - sum(shares.values())
    while spare > 0:
        runner = max(by_runner, key=lambda r: len(by_runner[r]) / shares[r])
        if shares[runner] >= len(by_runner[runner]):
            break
        shares[runner] += 1
        spare -= 1
    out: list[MatrixEntry] = []
    for runner, indices in by_runner.items():
        out.extend(MatrixEntry(runner, chunk, tuple(pairs.get(i) for i in chunk) if pairs is not None else ())
                   for chunk in _chunks(indices, min(shares[runner], len(indices))))
    return out


@dataclass(frozen=True)
class PlannedSweep:
    jobs: tuple[Job, ...]
    run_eval: bool
    sha: str
    # A same-node baseline: the merge-base, its jobs (a matrix file of their own), job index -> baseline index.
    baseline_sha: str = ""
    baseline_jobs: tuple[Job, ...] = ()
    pairs: Mapping[int, int] | None = None

    def matrix_file(self) -> dict[str, Any]:
        """What ``sweep run --matrix`` and ``sweep local --matrix`` read back."""
        return {"sha": self.sha, "run-eval": self.run_eval, "jobs": [j.to_json() for j in self.jobs]}

    def baseline_file(self) -> dict[str, Any]:
        """The merge-base's jobs, run from its own checkout with ``sweep local --matrix``."""
        return {"sha": self.baseline_sha, "run-eval": self.run_eval, "jobs": [j.to_json() for j in self.baseline_jobs]}


def plan_from_selection(config: ProjectConfig, rev: str, selection_text: str) -> PlannedSweep:
    """The jobs a dispatched selection means at the pinned revision, verified against what was authorised.

    The dispatcher counted the jobs and hashed their ids when it accepted the
    command; planning again from the same commit must give the same set, or
    something other than what was approved would run.
    """
    from ..github.same_node import pair_jobs
    from ..github.selection import jobs_digest, select_jobs, selection_from_json

    try:
        selection = selection_from_json(selection_text)
    except ValueError as exc:
        raise UsageError(f"--selection: {exc}") from None
    snapshot = GitSnapshot(config.root, rev)
    if snapshot.sha != selection.sha:
        raise UsageError(f"--rev {rev} is commit {snapshot.sha}, but the selection was authorised for {selection.sha}")
    repo = load_repo(snapshot, config, with_changelog=False)
    require_readable(repo)
    jobs = select_jobs(repo, selection)
    digest = jobs_digest(jobs)
    if len(jobs) != selection.jobs or digest != selection.jobs_digest:
        raise UsageError(f"the configs of {snapshot.sha[:12]} give {len(jobs)} job(s) (digest {digest[:12]}), but the "
                         f"selection was authorised for {selection.jobs} (digest {selection.jobs_digest[:12]}); "
                         "refusing to run anything other than what was approved")
    if not selection.baseline:
        return PlannedSweep(tuple(jobs), selection.evals, snapshot.sha)
    base = GitSnapshot(config.root, selection.baseline)
    base_jobs = select_jobs(load_repo(base, config, with_changelog=False), selection)
    pairs = pair_jobs(jobs, base_jobs)
    if len(pairs) != selection.baseline_jobs:
        raise UsageError(f"the configs of the merge-base {base.sha[:12]} pair {len(pairs)} job(s) with these, but "
                         f"the selection was authorised for {selection.baseline_jobs}; refusing to run anything "
                         "other than what was approved")
    # The baseline file holds the paired merge-base jobs only, in the order of their partners.
    order = sorted(pairs)
    return PlannedSweep(tuple(jobs), selection.evals, snapshot.sha, base.sha,
                        tuple(base_jobs[pairs[i]] for i in order), {i: n for n, i in enumerate(order)})
