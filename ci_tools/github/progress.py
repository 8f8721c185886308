"""The results comment kept up to date while a sweep's jobs run.

GitHub Actions starts no job when one job of a run ends, so a light job of
the sweep (on a GitHub-hosted runner, the default branch's ci-tools only)
starts beside the run jobs and polls the run through the REST API: which
run jobs have ended (list jobs for a workflow run), and the results artifact
each ended job uploaded (list run artifacts, download the zip: only its
``record.json`` files are kept).  Whenever a run job has ended or an
artifact has been read since the last update, the comment is rendered again
from what has arrived ("Jobs reported: k of N") and updated in place; a
poll that changes nothing writes nothing.

A run job that ran its upload step (it concluded ``success`` or
``failure``: sweep.yml uploads ``if: always()``) has an artifact to read;
when every run job has ended and such an artifact is not listed yet, the
watch polls again a few times (:attr:`WatchSettings.artifact_polls`, a short
wait apart) before it stops, so that the last job's results are not left to
the report job alone.  A cancelled or skipped job, or an expired artifact,
has nothing to wait for.

The watch is bounded: a number of polls, a deadline, and after
:attr:`WatchSettings.max_failures` failed polls in a row it gives up (the
report job writes the complete comment after the run jobs in any case).
GitHub's rate limits are honoured: a refusal with ``Retry-After`` or an
exhausted ``x-ratelimit-remaining`` delays the next poll until then (within
the deadline); other failures double the interval, up to
:attr:`WatchSettings.max_delay`.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from .client import GitHubClient, GitHubError
from .results import extract_records

# sweep.yml names each run job so (strategy.job-index, matrix.jobs) and uploads sweep-results-<job-index>.
RUN_JOB = re.compile(r"^run (?P<index>\d+): .*\((?P<jobs>\d+) jobs?\)$")
RESULTS_ARTIFACT = "sweep-results-{index}"
ENDED = "completed"
UPLOADED = ("success", "failure")  # conclusions of run jobs whose upload step ran (it runs `if: always()`)


@dataclass(frozen=True)
class WatchSettings:
    interval: float = 180.0  # seconds between polls
    max_polls: int = 120
    deadline: float = 5.75 * 3600  # a GitHub-hosted job may run 6 h
    max_failures: int = 5  # failed polls in a row before giving up
    max_delay: float = 900.0  # the longest wait after failures (a rate-limit reset may ask for longer: honoured)
    artifact_polls: int = 3  # polls after every run job ended, for artifacts not listed yet
    artifact_wait: float = 20.0  # seconds between those polls


@dataclass
class Progress:
    """What has arrived so far: the run jobs that ended (index -> conclusion, benchmark jobs), artifacts read."""

    run_jobs: int  # matrix entries of the run job
    ended: dict[int, tuple[str, int]] = field(default_factory=dict)
    fetched: set[int] = field(default_factory=set)
    expired: set[int] = field(default_factory=set)  # ended run jobs whose artifact is listed as expired

    @property
    def jobs_done(self) -> int:
        """Benchmark jobs of the run jobs that ended (each run job runs several one after another)."""
        return sum(jobs for _, jobs in self.ended.values())

    @property
    def finished(self) -> bool:
        return len(self.ended) >= self.run_jobs

    def unread(self) -> list[int]:
        """Ended run jobs whose artifact the watch has neither read nor seen expired."""
        return [i for i in self.ended if i not in self.fetched and i not in self.expired]

    @property
    def awaited(self) -> list[int]:
        """Ended run jobs that uploaded an artifact the watch has not read yet (nor seen expired)."""
        return sorted(i for i in self.unread() if self.ended[i][0] in UPLOADED)

    def key(self) -> tuple[frozenset[int], frozenset[int]]:
        return frozenset(self.ended), frozenset(self.fetched)


@dataclass(frozen=True)
class WatchOutcome:
    polls: int
    updates: int
    finished: bool  # every run job ended while watched
    reason: str  # why the watch stopped, for the log


def poll(client: GitHubClient, run_id: int, records: Path, progress: Progress) -> None:
    """One look at the run: newly ended run jobs, and the results artifacts of ended ones not read yet."""
    for job in client.run_jobs(run_id):
        m = RUN_JOB.match(str(job.get("name", "")))
        if m and job.get("status") == ENDED:
            progress.ended[int(m["index"])] = (str(job.get("conclusion") or ""), int(m["jobs"]))
    waiting = {RESULTS_ARTIFACT.format(index=i): i for i in progress.unread()}
    if not waiting:
        return
    for artifact in client.run_artifacts(run_id, max_pages=5):
        index = waiting.get(str(artifact.get("name")))
        if index is None:
            continue
        if artifact.get("expired"):
            progress.expired.add(index)
            continue
        extract_records(client.download_artifact(int(artifact["id"])), records / RESULTS_ARTIFACT.format(index=index))
        progress.fetched.add(index)


def watch(client: GitHubClient, run_id: int, run_jobs: int, records: Path, publish: Callable[[Progress], None],
          settings: WatchSettings = WatchSettings(), *, clock: Callable[[], float] = time.monotonic,
          sleep: Callable[[float], None] = time.sleep, log: Callable[[str], None] = lambda _: None) -> WatchOutcome:
    """Poll until every run job has ended (or a bound is reached), publishing each state that differs."""
    progress = Progress(run_jobs)
    start, published, updates, failures, delay = clock(), None, 0, 0, settings.interval
    extra = 0  # polls made after every run job ended, for artifacts not listed yet
    for n in range(1, settings.max_polls + 1):
        try:
            poll(client, run_id, records, progress)
            if progress.key() != published:
                publish(progress)
                published, updates = progress.key(), updates + 1
                log(f"poll {n}: {len(progress.ended)} of {run_jobs} run job(s) ended, "
                    f"{len(progress.fetched)} artifact(s) read; comment updated")
            failures, delay = 0, settings.interval
        except GitHubError as exc:
            failures += 1
            if failures >= settings.max_failures:
                return WatchOutcome(n, updates, False, f"{failures} polls in a row failed, the last: {exc}")
            # GitHub's own wait for a rate limit is honoured as it is; other failures back off.
            delay = exc.retry_after if exc.retry_after is not None else min(delay * 2, settings.max_delay)
            log(f"poll {n} failed ({exc}); next in {delay:.0f}s")
        if progress.finished and progress.key() == published:
            missing = progress.awaited
            if not missing:
                return WatchOutcome(n, updates, True, f"all {run_jobs} run job(s) ended")
            if extra >= settings.artifact_polls:
                return WatchOutcome(n, updates, True, f"all {run_jobs} run job(s) ended; no artifact listed for run "
                                    f"job(s) {', '.join(map(str, missing))} after {extra} more poll(s)")
            extra += 1
            if failures == 0:  # a failed poll's wait (a rate limit's reset) stands
                delay = min(delay, settings.artifact_wait)
        if n == settings.max_polls:
            break
        remaining = settings.deadline - (clock() - start)
        if remaining <= 0:
            return WatchOutcome(n, updates, progress.finished, f"stopped at the deadline of {settings.deadline:.0f}s")
        sleep(min(delay, remaining))
    return WatchOutcome(settings.max_polls, updates, progress.finished, f"stopped after {settings.max_polls} polls")
