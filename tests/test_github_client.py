"""The REST client against the local fake GitHub: requests as described, retries bounded."""

from __future__ import annotations

import socket
from typing import Iterator

import pytest

from ci_tools.github.client import AmbiguousRequest, GitHubClient, GitHubError, RetryPolicy
from test_github_server import FakeGitHub, Scripted


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    fake = FakeGitHub().start()
    yield fake
    fake.stop()


class Sleeps(list[float]):
    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def client_for(fake: FakeGitHub, sleeps: Sleeps | None = None, **kwargs: object) -> GitHubClient:
    return GitHubClient(fake.repository, api_url=fake.url, token="test-token", sleep=sleeps if sleeps is not None else Sleeps(),
                        clock=lambda: 1_000.0, **kwargs)  # type: ignore[arg-type]


def test_every_operation_is_valid_against_the_description(github: FakeGitHub) -> None:
    github.grant("alice", "maintain")
    github.add_pull(3, "a" * 40, "b" * 40)
    with client_for(github) as c:
        assert c.collaborator_permission("alice")["role_name"] == "maintain"
        assert c.collaborator_permission("nobody") == {"permission": "none", "role_name": "none"}
        assert c.pull_request(3)["head"]["sha"] == "a" * 40
        c.add_reaction(11, "eyes")
        created = c.create_comment(3, "hello")
        assert list(c.issue_comments(3))[0]["body"] == "hello"
        c.update_comment(created["id"], "changed")
        run = c.dispatch_workflow("sweep.yml", "main", {"sha": "a" * 40, "pr": "3", "key": "comment-1"})
        runs = list(c.workflow_runs("sweep.yml", event="workflow_dispatch", branch="main",
                                    created_since="2026-01-01T00:00:00Z"))
        activity, more = c.branch_activity("new-topic")
    assert github.violations == []
    assert github.operations() == [
        "repos/get-collaborator-permission-level", "repos/get-collaborator-permission-level", "pulls/get",
        "reactions/create-for-issue-comment", "issues/create-comment", "issues/list-comments",
        "issues/update-comment", "actions/create-workflow-dispatch", "actions/list-workflow-runs",
        "repos/list-activities"]
    assert github.requests[0].headers["Authorization"] == "Bearer test-token"
    assert github.dispatches == [{"workflow": "sweep.yml", "ref": "main", "return_run_details": True,
                                  "inputs": {"sha": "a" * 40, "pr": "3", "key": "comment-1"}}]
    assert [r["id"] for r in runs] == [run["workflow_run_id"]] and runs[0]["html_url"] == run["html_url"]
    assert github.requests[-2].query == {"event": ["workflow_dispatch"], "branch": ["main"],
                                         "created": [">=2026-01-01T00:00:00Z"], "per_page": ["100"], "page": ["1"]}
    assert github.requests[-1].query == {"ref": ["refs/heads/new-topic"], "direction": ["desc"], "per_page": ["100"]}
    assert [(a["activity_type"], a["after"]) for a in activity] == [("branch_creation", "a" * 40)] and not more
    assert github.comments[3][0]["body"] == "changed"


def test_pagination_follows_full_pages(github: FakeGitHub) -> None:
    with client_for(github) as c:
        for n in range(150):
            c.create_comment(4, f"c{n}")
        bodies = [x["body"] for x in c.issue_comments(4)]
    assert bodies == [f"c{n}" for n in range(150)]
    pages = [r.query.get("page") for r in github.requests if r.operation == "issues/list-comments"]
    assert pages == [["1"], ["2"]]
    assert github.violations == []


def test_5xx_is_retried_with_exponential_backoff(github: FakeGitHub) -> None:
    github.add_pull(3, "a" * 40, "b" * 40)
    github.scripted += [Scripted("pulls/get", 502, body={"message": "Bad gateway"}),
                        Scripted("pulls/get", 503, body={"message": "Unavailable"})]
    sleeps = Sleeps()
    with client_for(github, sleeps) as c:
        assert c.pull_request(3)["number"] == 3
    assert sleeps == [1.0, 2.0]


@pytest.mark.parametrize("status", [500, 502, 503, 504])
def test_a_dispatch_answered_with_5xx_is_never_sent_again(github: FakeGitHub, status: int) -> None:
    """GitHub may have created the run before failing to answer: a second POST could start a second sweep."""
    github.scripted.append(Scripted("actions/create-workflow-dispatch", status, body={"message": "oops"},
                                    apply=True))
    sleeps = Sleeps()
    with client_for(github, sleeps) as c, pytest.raises(AmbiguousRequest) as err:
        c.dispatch_workflow("sweep.yml", "main", {"sha": "a" * 40})
    assert str(err.value) == (f"POST /repos/Codertocat/Hello-World/actions/workflows/sweep.yml/dispatches failed: "
                              f"HTTP {status} (oops); GitHub may have acted on it")
    assert len(github.dispatch_requests()) == 1 and len(github.runs) == 1
    assert sleeps == []


def test_a_dispatch_that_times_out_is_never_sent_again(github: FakeGitHub) -> None:
    github.scripted.append(Scripted("actions/create-workflow-dispatch", 204, apply=True, delay=1.0))
    with client_for(github, timeout=0.2) as c, pytest.raises(AmbiguousRequest) as err:
        c.dispatch_workflow("sweep.yml", "main", {"sha": "a" * 40})
    assert str(err.value) == ("POST /repos/Codertocat/Hello-World/actions/workflows/sweep.yml/dispatches: timed out "
                              "after the request was sent; GitHub may have acted on it")
    assert len(github.dispatch_requests()) == 1


def test_a_rate_limited_dispatch_is_retried(github: FakeGitHub) -> None:
    """A rate-limit answer means GitHub refused the request: sending it again cannot start two runs."""
    github.scripted.append(Scripted("actions/create-workflow-dispatch", 429, {"Retry-After": "3"},
                                    {"message": "slow down"}))
    sleeps = Sleeps()
    with client_for(github, sleeps) as c:
        c.dispatch_workflow("sweep.yml", "main", {"sha": "a" * 40})
    assert sleeps == [3.0] and len(github.dispatch_requests()) == 2 and len(github.runs) == 1


def test_reads_and_reactions_are_retried_after_a_timeout(github: FakeGitHub) -> None:
    github.add_pull(3, "a" * 40, "b" * 40)
    github.scripted += [Scripted("pulls/get", 200, delay=1.0),
                        Scripted("reactions/create-for-issue-comment", 201, apply=True, delay=1.0)]
    sleeps = Sleeps()
    with client_for(github, sleeps, timeout=0.2) as c:
        assert c.pull_request(3)["number"] == 3
        c.add_reaction(5, "eyes")
    assert sleeps == [1.0, 1.0]
    assert github.operations() == ["pulls/get", "pulls/get", "reactions/create-for-issue-comment",
                                   "reactions/create-for-issue-comment"]


def test_secondary_rate_limit_waits_for_retry_after(github: FakeGitHub) -> None:
    github.scripted.append(Scripted("reactions/create-for-issue-comment", 403, {"Retry-After": "7"},
                                    {"message": "You have exceeded a secondary rate limit"}))
    sleeps = Sleeps()
    with client_for(github, sleeps) as c:
        c.add_reaction(5, "rocket")
    assert sleeps == [7.0]
    assert github.reactions == [(5, "rocket")]


def test_primary_rate_limit_waits_until_reset(github: FakeGitHub) -> None:
    github.scripted.append(Scripted("issues/create-comment", 429,
                                    {"x-ratelimit-remaining": "0", "x-ratelimit-reset": "1012"},
                                    {"message": "API rate limit exceeded"}))
    sleeps = Sleeps()
    with client_for(github, sleeps) as c:
        c.create_comment(1, "x")
    assert sleeps == [12.0]


def test_plain_403_is_not_retried(github: FakeGitHub) -> None:
    github.scripted.append(Scripted("actions/create-workflow-dispatch", 403, {},
                                    {"message": "Resource not accessible by integration"}))
    sleeps = Sleeps()
    with client_for(github, sleeps) as c, pytest.raises(GitHubError) as err:
        c.dispatch_workflow("sweep.yml", "main", {})
    assert str(err.value) == ("POST /repos/Codertocat/Hello-World/actions/workflows/sweep.yml/dispatches failed: "
                              "HTTP 403 (Resource not accessible by integration)")
    assert err.value.status == 403
    assert sleeps == []


def test_too_long_a_wait_fails_instead_of_hanging(github: FakeGitHub) -> None:
    github.scripted.append(Scripted("pulls/get", 429, {"Retry-After": "3600"}, {"message": "slow down"}))
    with client_for(github) as c, pytest.raises(GitHubError) as err:
        c.pull_request(1)
    assert str(err.value) == ("GET /repos/Codertocat/Hello-World/pulls/1 failed: HTTP 429 (slow down); "
                              "GitHub asks to wait 3600s, more than the 60s accepted")


def test_retries_are_bounded(github: FakeGitHub) -> None:
    github.scripted += [Scripted("pulls/get", 500, body={"message": "boom"}) for _ in range(5)]
    sleeps = Sleeps()
    with client_for(github, sleeps, retry=RetryPolicy(attempts=3)) as c, pytest.raises(GitHubError) as err:
        c.pull_request(1)
    assert str(err.value) == "GET /repos/Codertocat/Hello-World/pulls/1 failed after 3 attempts: HTTP 500 (boom)"
    assert sleeps == [1.0, 2.0]
    assert len(github.requests) == 3


def test_connection_refused_is_reported_clearly() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    sleeps = Sleeps()
    c = GitHubClient("o/r", api_url=f"http://127.0.0.1:{port}", token="t", sleep=sleeps,
                     retry=RetryPolicy(attempts=2))
    with pytest.raises(GitHubError) as err:
        c.pull_request(1)
    assert str(err.value).startswith("GET /repos/o/r/pulls/1 failed after 2 attempts: could not connect (ConnectError")
    assert sleeps == [1.0]


def test_path_segments_are_escaped(github: FakeGitHub) -> None:
    with client_for(github) as c:
        c.collaborator_permission("a/../b")
    assert github.requests[0].path == "/repos/Codertocat/Hello-World/collaborators/a%2F..%2Fb/permission"


def test_environment_configuration(monkeypatch: pytest.MonkeyPatch, github: FakeGitHub) -> None:
    monkeypatch.setenv("GITHUB_API_URL", github.url)
    monkeypatch.setenv("GITHUB_TOKEN", "from-env")
    with GitHubClient.from_env(github.repository) as c:
        c.add_reaction(1, "eyes")
    assert github.requests[0].headers["Authorization"] == "Bearer from-env"
