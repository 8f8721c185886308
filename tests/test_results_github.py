"""The results baseline from the last default-branch sweep's artifact, and the comment updated in place.

Against the fake GitHub of test_github_server.py: every request checked against @octokit/openapi.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Iterator

import pytest

from ci_tools.github.client import GitHubClient, GitHubError, RetryPolicy
from ci_tools.github.results import BASELINE_ARTIFACT, baseline_from_artifacts, post_or_update
from ci_tools.jobs.job import Job
from ci_tools.results.comment import marker
from tests import results_support as support
from tests.test_github_server import FakeGitHub


@pytest.fixture
def fake() -> Iterator[FakeGitHub]:
    server = FakeGitHub().start()
    yield server
    server.stop()


def _client(fake: FakeGitHub) -> GitHubClient:
    return GitHubClient(fake.repository, api_url=fake.url, token="t", retry=RetryPolicy(attempts=1))


def _zip(tmp_path: Path, jobs: list[Job], extra: dict[str, bytes] | None = None) -> bytes:
    return support.zip_records(tmp_path / "records", support.records(jobs, sha="a" * 40,
                                                                     date="2026-08-01T00:00:00+00:00",
                                                                     rng=random.Random(3)), extra)


def test_baseline_from_the_newest_run_that_uploaded_it(fake: FakeGitHub, tmp_path: Path,
                                                       full_corpus_jobs: list[Job]) -> None:
    jobs = [j for j in full_corpus_jobs if j.config_key == "dsr1-fp4-mi355x-sglang"]
    older = fake.add_finished_run("sweep.yml")
    fake.add_artifact(older["id"], BASELINE_ARTIFACT, _zip(tmp_path, jobs[:1]))
    with_it = fake.add_finished_run("sweep.yml")
    fake.add_artifact(with_it["id"], BASELINE_ARTIFACT,
                      _zip(tmp_path / "b", jobs, {"../escape/record.json": b"{}", "/abs/record.json": b"{}"}))
    fake.add_artifact(with_it["id"], "sweep-results-0", b"not this one")
    fake.add_finished_run("sweep.yml")  # newer, but a PR sweep: no baseline artifact
    fake.add_finished_run("sweep.yml", conclusion="failure")
    expired = fake.add_finished_run("sweep.yml")
    fake.add_artifact(expired["id"], BASELINE_ARTIFACT, b"gone", expired=True)
    fake.add_finished_run("sweep.yml", branch="topic")
    with _client(fake) as client:
        baseline = baseline_from_artifacts(client, workflow="sweep.yml", branch="main")
    assert baseline is not None
    assert sum(len(v) for v in baseline.points.values()) == sum(len(j.concs) for j in jobs)
    assert f"run #{with_it['run_number']}" in baseline.source and baseline.url == with_it["html_url"]
    assert baseline.sha == "a" * 40 and baseline.date == "2026-08-01T00:00:00+00:00"
    assert not (tmp_path.parent / "escape").exists()
    assert fake.violations == []
    assert fake.blob_requests and all("authorization" not in h for h in fake.blob_requests)
    assert [r.operation for r in fake.requests] == [
        "actions/list-workflow-runs", "actions/list-workflow-run-artifacts", "actions/list-workflow-run-artifacts",
        "actions/list-workflow-run-artifacts", "actions/download-artifact"]
    assert fake.requests[0].query == {"branch": ["main"], "status": ["success"], "per_page": ["20"]}


def test_no_baseline_artifact_anywhere(fake: FakeGitHub) -> None:
    fake.add_finished_run("sweep.yml")
    with _client(fake) as client:
        assert baseline_from_artifacts(client, workflow="sweep.yml", branch="main") is None
    assert fake.violations == []


def test_an_artifact_that_is_not_a_zip_is_an_error(fake: FakeGitHub) -> None:
    run = fake.add_finished_run("sweep.yml")
    fake.add_artifact(run["id"], BASELINE_ARTIFACT, b"PK not really")
    with _client(fake) as client, pytest.raises(GitHubError, match="is not a zip archive"):
        baseline_from_artifacts(client, workflow="sweep.yml", branch="main")


def test_the_comment_is_updated_in_place(fake: FakeGitHub) -> None:
    fake.add_pull(7, "a" * 40, "b" * 40)
    mark = marker("comment-5")
    pasted = fake._new_comment(7, mark + "\nI pasted the marker")
    pasted["user"]["login"] = "mallory"
    fake.comments[7] = [pasted]
    with _client(fake) as client:
        first = post_or_update(client, 7, mark + "\none", mark, fake.bot_login)
        second = post_or_update(client, 7, mark + "\ntwo", mark, fake.bot_login)
        other = post_or_update(client, 7, marker("comment-6") + "\nthree", marker("comment-6"), fake.bot_login)
    assert first["id"] == second["id"] != other["id"]
    assert [c["body"].splitlines()[-1] for c in fake.comments[7]] == ["I pasted the marker", "two", "three"]
    assert fake.violations == []
