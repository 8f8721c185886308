"""The results comment kept up to date while a sweep's run jobs end (`ci-tools results watch`).

Against the fake GitHub of test_github_server.py (a real local HTTP server; every request and
answer checked against @octokit/openapi): the run's jobs end between polls, their results
artifacts appear, and the one comment is rewritten in place; GitHub's rate limits, failures and
the watch's own bounds decide when it polls and when it stops.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest
import yaml
from click.testing import CliRunner

from ci_tools.cli.main import cli
from ci_tools.github.client import GitHubClient, RetryPolicy
from ci_tools.github.progress import RESULTS_ARTIFACT, Progress, WatchSettings, watch
from ci_tools.github.results import BASELINE_ARTIFACT
from ci_tools.jobs.job import Job
from ci_tools.results.baseline import Baseline
from ci_tools.results.comment import CommentContext, marker, render
from ci_tools.results.identity import identity
from ci_tools.results.point import key_of
from tests import results_support as support
from tests.test_github_server import FakeGitHub, Scripted
from tests.test_workflows import WORKFLOWS, _evaluate

SWEEP = yaml.safe_load((WORKFLOWS / "sweep.yml").read_text(encoding="utf-8"))
PR_SHA, BASE_SHA = "a" * 40, "b" * 40
COMMENTS = ("issues/create-comment", "issues/update-comment")


@pytest.fixture
def fake() -> Iterator[FakeGitHub]:
    server = FakeGitHub().start()
    yield server
    server.stop()


def run_job_name(index: int, runner: str, jobs: int) -> str:
    """The name GitHub gives run job ``index``: sweep.yml's own template, evaluated."""
    return _evaluate(SWEEP["jobs"]["run"]["name"], {"strategy": {"job-index": index},
                                                    "matrix": {"runner": runner, "jobs": jobs}})


def artifact_name(index: int) -> str:
    """The results artifact run job ``index`` uploads: sweep.yml's upload step, evaluated."""
    upload = next(s for s in SWEEP["jobs"]["run"]["steps"] if "upload-artifact" in str(s.get("uses")))
    return _evaluate(upload["with"]["name"], {"strategy": {"job-index": index}})


def test_the_workflow_names_what_the_watch_looks_for() -> None:
    assert run_job_name(12, "mi355x-amds", 3) == "run 12: mi355x-amds (3 jobs)"
    assert artifact_name(12) == RESULTS_ARTIFACT.format(index=12) == "sweep-results-12"


def test_the_comment_follows_the_run_jobs_as_they_end(fake: FakeGitHub, tmp_path: Path,
                                                      full_corpus_jobs: list[Job]) -> None:
    jobs = [j for j in full_corpus_jobs if j.config_key == "dsr1-fp4-mi355x-sglang"][:4]
    base = support.records(jobs, sha=BASE_SHA, date="2026-08-01T00:00:00+00:00", rng=random.Random(1))
    # The PR's first job is 20 % slower at its first concurrency: flagged once that job has reported.
    slow = key_of(base[0], identity(jobs[0]).concurrency[0])
    pr = support.records(jobs, sha=PR_SHA, date="2026-08-02T00:00:00+00:00", rng=random.Random(2),
                         changes={(slow, "throughput_per_gpu"): 0.8})
    baseline_run = fake.add_finished_run("sweep.yml")
    fake.add_artifact(baseline_run["id"], BASELINE_ARTIFACT, support.zip_records(tmp_path / "base", base))
    fake.add_pull(7, PR_SHA, BASE_SHA)
    run_id = 4242
    fake.add_job(run_id, "Plan", status="completed")
    fake.add_job(run_id, "Results comment while the jobs run", status="in_progress")
    first = fake.add_job(run_id, run_job_name(0, "mi355x-amds", 2), status="in_progress")
    second = fake.add_job(run_id, run_job_name(1, "mi355x-amds", 2), status="in_progress")

    def the_first_ends() -> None:
        fake.finish_job(first)
        fake.add_artifact(run_id, artifact_name(0), support.zip_records(tmp_path / "r0", pr[:2]))

    def the_second_fails_after_one_record() -> None:
        fake.finish_job(second, "failure")  # its second job crashed before writing a record
        fake.add_artifact(run_id, artifact_name(1), support.zip_records(tmp_path / "r1", pr[2:3]))

    timeline: list[Callable[[], None]] = [lambda: None, the_first_ends, the_second_fails_after_one_record]
    fake.before["actions/list-jobs-for-workflow-run"] = lambda: timeline.pop(0)() if timeline else None
    repo = tmp_path / "clone"
    repo.mkdir()
    (repo / ".git").mkdir()  # no results branch: the baseline comes from the last default-branch sweep's artifact
    matrix = '{"include": [{"runner": "mi355x-amds", "indices": "0,1", "jobs": 2}, ' \
             '{"runner": "mi355x-amds", "indices": "2,3", "jobs": 2}]}'
    result = CliRunner().invoke(cli, [
        "results", "watch", "--run-id", str(run_id), "--matrix", matrix, "--jobs-total", "4", "--key", "comment-5",
        "--sha", PR_SHA, "--pr", "7", "--repository", fake.repository, "--repo", str(repo), "--github-fallback",
        "--run-url", "https://github.com/o/r/actions/runs/4242", "--interval", "1"],
        env={"GITHUB_API_URL": fake.url, "GITHUB_TOKEN": "t"})
    assert result.exit_code == 0, result.output
    assert "watched run 4242: 3 poll(s), 3 comment update(s); all 2 run job(s) ended" in result.stderr
    assert fake.violations == []

    (comment,) = fake.comments[7]  # one comment, rewritten in place
    posted = [r for r in fake.requests if r.operation in COMMENTS]
    assert [r.operation for r in posted] == ["issues/create-comment", *["issues/update-comment"] * 2]
    bodies = [r.body["body"] for r in posted]
    assert comment["body"] == bodies[-1] and all(b.startswith(marker("comment-5")) for b in bodies)
    assert "Jobs reported: 0 of 4 (updated as jobs finish)." in bodies[0] and "**0 points:** none." in bodies[0]
    concs = [len(identity(j).concurrency) for j in jobs]
    assert f"**{concs[0] + concs[1]:,} points:**" in bodies[1] and "Jobs reported: 2 of 4 (updated" in bodies[1]
    assert f"**{sum(concs[:3]):,} points:**" in bodies[2] and "Jobs reported: 3 of 4 (updated" in bodies[2]
    # The baseline: the artifact of the last default-branch sweep, read once for the whole watch.
    assert "read when the first job reports" in bodies[0]
    assert f"of sweep.yml run \\#{baseline_run['run_number']} " in bodies[1]
    assert sum(r.operation == "actions/list-workflow-runs" for r in fake.requests) == 1
    assert "1 suspicious" in bodies[1] and "1 suspicious" in bodies[2]
    # Artifacts are listed only when a run job has ended since, and each is downloaded once.
    ops = [r.operation for r in fake.requests if r.operation and r.operation.startswith("actions/")]
    assert ops.count("actions/list-jobs-for-workflow-run") == 3
    assert ops.count("actions/download-artifact") == 3  # the baseline's and the two run jobs'
    listed = [r for r in fake.requests if r.operation == "actions/list-workflow-run-artifacts"
              and r.path.endswith(f"/runs/{run_id}/artifacts")]
    assert len(listed) == 2
    # The whole watch: 16 requests; the baseline's 3 (runs, artifacts, zip) once, then per poll the job list, and
    # when run jobs ended, the artifact list and their zips; per update the comment's list and its write.
    assert len(fake.requests) == 16
    jobs_query = next(r.query for r in fake.requests if r.operation == "actions/list-jobs-for-workflow-run")
    assert jobs_query == {"filter": ["latest"], "per_page": ["100"]}  # a re-run's jobs replace the earlier ones


# -- the watch's own bounds, on a clock it is given ---------------------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


def _watch(fake: FakeGitHub, clock: Clock, run_jobs: int, settings: WatchSettings,
           tmp_path: Path) -> tuple[Any, list[tuple[int, int]]]:
    published: list[tuple[int, int]] = []

    def publish(progress: Progress) -> None:
        published.append((len(progress.ended), progress.jobs_done))

    client = GitHubClient(fake.repository, api_url=fake.url, token="t", clock=clock, sleep=clock.sleep,
                          retry=RetryPolicy(attempts=2, backoff=1.0, max_wait=60.0))
    with client:
        outcome = watch(client, 77, run_jobs, tmp_path, publish, settings, clock=clock, sleep=clock.sleep)
    return outcome, published


def test_a_poll_that_changes_nothing_writes_nothing_and_the_polls_are_bounded(fake: FakeGitHub,
                                                                              tmp_path: Path) -> None:
    fake.add_job(77, run_job_name(0, "mi355x-amds", 5), status="in_progress")
    clock = Clock()
    outcome, published = _watch(fake, clock, 1, WatchSettings(interval=120, max_polls=4), tmp_path)
    assert (outcome.polls, outcome.updates, outcome.finished) == (4, 1, False)
    assert outcome.reason == "stopped after 4 polls" and published == [(0, 0)]
    assert clock.sleeps == [120, 120, 120]
    assert fake.violations == []


def test_the_deadline_ends_the_watch(fake: FakeGitHub, tmp_path: Path) -> None:
    fake.add_job(77, run_job_name(0, "mi355x-amds", 5), status="queued")
    clock = Clock()
    outcome, _ = _watch(fake, clock, 1, WatchSettings(interval=100, max_polls=50, deadline=250), tmp_path)
    assert clock.sleeps == [100, 100, 50]  # the last wait is cut to the deadline
    assert (outcome.polls, outcome.reason) == (4, "stopped at the deadline of 250s")


@pytest.mark.parametrize("headers, wait", [
    ({"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(1_000_000 + 900)}, 900),  # primary limit: its reset
    ({"Retry-After": "300"}, 300),  # secondary limit: its Retry-After
])
def test_a_rate_limit_is_waited_out_between_polls(fake: FakeGitHub, tmp_path: Path, headers: dict[str, str],
                                                  wait: float) -> None:
    job = fake.add_job(77, run_job_name(0, "mi355x-amds", 3), status="in_progress")
    fake.scripted.append(Scripted("actions/list-jobs-for-workflow-run", 403, headers,
                                  {"message": "API rate limit exceeded"}))
    # Cancelled, it leaves no artifact to wait for: the watch ends with it.
    fake.before["actions/list-jobs-for-workflow-run"] = lambda: fake.finish_job(job, "cancelled")
    clock = Clock()
    outcome, published = _watch(fake, clock, 1, WatchSettings(interval=60), tmp_path)
    # The client does not sleep that long inside a request; the watch waits it before the next poll.
    assert clock.sleeps == [wait]
    assert (outcome.polls, outcome.updates, outcome.finished) == (2, 1, True)
    assert published == [(1, 3)] and outcome.reason == "all 1 run job(s) ended"


def test_failing_polls_back_off_and_the_watch_gives_up(fake: FakeGitHub, tmp_path: Path) -> None:
    fake.add_job(77, run_job_name(0, "mi355x-amds", 3), status="in_progress")
    for _ in range(10):
        fake.scripted.append(Scripted("actions/list-jobs-for-workflow-run", 502, {}, {"message": "bad gateway"}))
    clock = Clock()
    outcome, published = _watch(fake, clock, 1, WatchSettings(interval=100, max_failures=4, max_delay=300),
                                tmp_path)
    # Each poll's request is tried twice (1 s apart, inside the client); between polls the wait doubles, capped.
    assert clock.sleeps == [1, 200, 1, 300, 1, 300, 1]
    assert published == [] and not outcome.finished
    assert outcome.reason == ("4 polls in a row failed, the last: GET /repos/Codertocat/Hello-World/actions/runs/77/"
                              "jobs failed after 2 attempts: HTTP 502 (bad gateway)")


def test_an_ended_job_without_artifact_does_not_hold_the_watch(fake: FakeGitHub, tmp_path: Path) -> None:
    fake.add_job(77, run_job_name(0, "mi355x-amds", 2), status="completed")
    fake.finish_job(fake.add_job(77, run_job_name(1, "mi355x-amds", 1)), "cancelled")
    fake.add_artifact(77, artifact_name(0), b"expired long ago", expired=True)
    clock = Clock()
    outcome, published = _watch(fake, clock, 2, WatchSettings(), tmp_path)
    assert (outcome.polls, outcome.finished, clock.sleeps) == (1, True, [])
    assert published == [(2, 3)]
    assert [r.operation for r in fake.requests] == ["actions/list-jobs-for-workflow-run",
                                                    "actions/list-workflow-run-artifacts"]


def test_an_artifact_listed_after_its_job_ended_is_still_read(fake: FakeGitHub, tmp_path: Path,
                                                               full_corpus_jobs: list[Job]) -> None:
    jobs = [j for j in full_corpus_jobs if j.config_key == "dsr1-fp4-mi355x-sglang"][:1]
    records = support.records(jobs, sha=PR_SHA, date="2026-08-02T00:00:00+00:00", rng=random.Random(3))
    fake.finish_job(fake.add_job(77, run_job_name(0, "mi355x-amds", 1)))
    listings: list[None] = []

    def listed_late() -> None:  # the listing shows the artifact from its second request on
        listings.append(None)
        if len(listings) == 2:
            fake.add_artifact(77, artifact_name(0), support.zip_records(tmp_path / "r0", records))

    fake.before["actions/list-workflow-run-artifacts"] = listed_late
    clock = Clock()
    outcome, published = _watch(fake, clock, 1, WatchSettings(interval=180), tmp_path / "records")
    # Every run job had ended at the first poll; the job succeeded, so its artifact is waited for, a short wait apart.
    assert (outcome.polls, outcome.finished, clock.sleeps) == (2, True, [20.0])
    assert outcome.reason == "all 1 run job(s) ended" and published == [(1, 1), (1, 1)]
    assert sorted(p.name for p in (tmp_path / "records").rglob("record.json")) == ["record.json"] * len(records)


def test_an_artifact_never_listed_holds_the_watch_a_few_polls_only(fake: FakeGitHub, tmp_path: Path) -> None:
    fake.finish_job(fake.add_job(77, run_job_name(0, "mi355x-amds", 2)), "failure")  # its upload step ran
    fake.finish_job(fake.add_job(77, run_job_name(1, "mi355x-amds", 1)), "cancelled")  # nothing to wait for
    clock = Clock()
    outcome, published = _watch(fake, clock, 2, WatchSettings(artifact_polls=2, artifact_wait=15), tmp_path)
    assert (outcome.polls, outcome.finished, clock.sleeps) == (3, True, [15, 15])
    assert outcome.reason == "all 2 run job(s) ended; no artifact listed for run job(s) 0 after 2 more poll(s)"
    assert published == [(2, 3)]  # the polls that changed nothing wrote nothing
    assert [r.operation for r in fake.requests].count("actions/list-workflow-run-artifacts") == 3


# -- the workflow's own step ---------------------------------------------------------------------------------------


def _watch_step() -> dict[str, Any]:
    return next(s for s in SWEEP["jobs"]["watch"]["steps"] if "results watch" in s.get("run", ""))


def _run_step(tmp_path: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """The step's script under bash as the runner runs it, with the installed ci-tools on PATH."""
    trusted = tmp_path / "trusted"
    subprocess.run(["git", "init", "--quiet", str(trusted)], check=True, timeout=30)
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    return subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", _watch_step()["run"]],
                          cwd=tmp_path, env={"PATH": path, "HOME": str(tmp_path), "GIT_CONFIG_NOSYSTEM": "1", **env},
                          capture_output=True, text=True, timeout=120)


def test_the_workflow_step_watches_the_run(fake: FakeGitHub, tmp_path: Path, full_corpus_jobs: list[Job]) -> None:
    """The step's script, its values through `env:` as GitHub fills them, against the fake: every run job has
    already ended, so one poll writes the comment and the step ends."""
    jobs = [j for j in full_corpus_jobs if j.config_key == "dsr1-fp4-mi355x-sglang"][:3]
    pr = support.records(jobs, sha=PR_SHA, date="2026-08-02T00:00:00+00:00", rng=random.Random(2))
    matrix = {"include": [{"runner": "mi355x-amds", "indices": "0,1", "jobs": 2},
                          {"runner": "mi355x-amds", "indices": "2", "jobs": 1}]}
    for index, entry in enumerate(matrix["include"]):
        fake.finish_job(fake.add_job(99, run_job_name(index, entry["runner"], entry["jobs"]), status="in_progress"))
        fake.add_artifact(99, artifact_name(index), support.zip_records(tmp_path / f"r{index}",
                                                                        pr[:2] if index == 0 else pr[2:]))
    fake.add_pull(7, PR_SHA, BASE_SHA)
    step = _watch_step()
    context = {"inputs": {"sha": PR_SHA, "key": "comment-5", "pr": "7"}, "github": {
        "run_id": 99, "server_url": "https://github.com", "repository": fake.repository, "token": "t"},
        "needs": {"plan": {"outputs": {"matrix": json.dumps(matrix), "jobs": "3"}}}}
    env = {name: _evaluate(value, context) for name, value in step["env"].items()}
    done = _run_step(tmp_path, {**env, "GITHUB_API_URL": fake.url, "GITHUB_REPOSITORY": fake.repository})
    assert done.returncode == 0, done.stdout + done.stderr
    assert "watched run 99: 1 poll(s), 1 comment update(s); all 2 run job(s) ended" in done.stderr
    (comment,) = fake.comments[7]
    assert comment["body"].startswith(marker("comment-5")) and "Jobs reported: 3 of 3." in comment["body"]
    run_url = f"https://github.com/{fake.repository}/actions/runs/99"
    assert f"[run]({run_url}) · [JSON artifact]({run_url}#artifacts)" in comment["body"]
    assert fake.violations == []

    refused = _run_step(tmp_path / "other", {**env, "PR": "7; echo pwned"})
    assert (refused.returncode, refused.stdout) == (1, "::error::input pr must be a pull request number\n")


@pytest.mark.parametrize("done, final, line", [
    (3, False, "Jobs reported: 3 of 4 (updated as jobs finish)."),
    (3, True, "Jobs reported: 3 of 4; the sweep has ended, 1 left no record."),
    (4, True, "Jobs reported: 4 of 4."),
])
def test_the_header_says_whether_more_jobs_will_report(done: int, final: bool, line: str) -> None:
    ctx = CommentContext(key="comment-5", sha=PR_SHA, baseline=Baseline({}, "none"), jobs_done=done, jobs_total=4,
                         final=final)
    assert f"**0 points:** none. {line}\n" in render([], [], ctx)
