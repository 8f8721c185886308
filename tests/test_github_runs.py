"""A dispatch runs once: re-runs and ambiguous answers never start a second sweep.

End to end through `ci-tools dispatch comment` against the fake GitHub, whose
runs are titled by evaluating the real `.github/workflows/sweep.yml` run-name
with the dispatched inputs, so the key the dispatcher looks for is the one the
workflow really shows.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest

from datetime import datetime, timezone

from ci_tools.github import runs
from ci_tools.github.client import GitHubClient
from ci_tools.github.runs import dispatch_key, match_run, run_title
from test_github_dispatch import (COMMENT_ID, PR, Repo, comment_event, last_reply, make_repo, mark,
                                  run_dispatch, serving)
from test_github_server import FakeGitHub, Scripted, run_name

DISPATCH = "actions/create-workflow-dispatch"


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Repo:
    return make_repo(tmp_path_factory.mktemp("runs") / "repo")


@pytest.fixture
def github(repo: Repo) -> Iterator[FakeGitHub]:
    with serving(repo) as fake:
        yield fake


@pytest.fixture(autouse=True)
def no_waiting(monkeypatch: pytest.MonkeyPatch) -> None:
    """The looks for a run after an ambiguous answer happen without the real pauses between them."""
    monkeypatch.setattr(runs, "LOOKUP_WAITS", (0.0, 0.0, 0.0))


def test_the_workflow_title_ends_with_the_key_the_dispatcher_looks_for() -> None:
    sha, key = "a" * 40, dispatch_key(COMMENT_ID)
    assert run_name({"sha": sha, "key": key}) == run_title(sha, key) == f"sweep of {sha} for comment-{COMMENT_ID}"


def test_a_rerun_of_the_same_comment_does_not_dispatch_again(repo: Repo, github: FakeGitHub, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    event = comment_event("/run-benchmark cfg-b-*")
    first = run_dispatch(repo, github, event, tmp_path, monkeypatch, capsys)
    reply = last_reply(github)
    second = run_dispatch(repo, github, event, tmp_path, monkeypatch, capsys)
    assert first.output("outcome") == "dispatched"
    assert second.code == 0 and second.output("outcome") == "already-dispatched"
    assert github.operations().count(DISPATCH) == 1 and len(github.runs) == 1
    assert second.output("run-url") == first.output("run-url") == github.runs[0]["html_url"]
    assert second.stdout == f"already-dispatched: run {github.runs[0]['id']} was dispatched for this comment before\n"
    # The reply listing the jobs stays; nothing new is written.
    assert [c["body"] for c in github.comments[PR]] == [reply]


def test_another_comment_dispatches_its_own_sweep(repo: Repo, github: FakeGitHub, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    run_dispatch(repo, github, comment_event("/run-benchmark cfg-b-*"), tmp_path, monkeypatch, capsys)
    other = comment_event("/run-benchmark cfg-b-*")
    other["comment"]["id"] = COMMENT_ID + 1
    run_dispatch(repo, github, other, tmp_path, monkeypatch, capsys)
    assert [r["display_title"].split()[-1] for r in github.runs] == [f"comment-{COMMENT_ID}",
                                                                      f"comment-{COMMENT_ID + 1}"]


@pytest.mark.parametrize("status", [500, 502, 504])
def test_a_dispatch_github_accepted_but_answered_with_5xx_is_not_repeated(
        status: int, repo: Repo, github: FakeGitHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    github.scripted.append(Scripted(DISPATCH, status, body={"message": "upstream timeout"}, apply=True))
    run = run_dispatch(repo, github, comment_event("/run-benchmark cfg-b-*"), tmp_path, monkeypatch, capsys)
    assert run.code == 0 and run.output("outcome") == "dispatched"
    assert github.operations().count(DISPATCH) == 1 and len(github.runs) == 1
    assert run.output("run-url") == github.runs[0]["html_url"]
    assert (f"; the request failed (POST /repos/Codertocat/Hello-World/actions/workflows/sweep.yml/dispatches "
            f"failed: HTTP {status} (upstream timeout); GitHub may have acted on it) but GitHub lists run "
            f"{github.runs[0]['id']}") in run.stdout
    assert f"([the run]({github.runs[0]['html_url']}))" in last_reply(github)


def test_an_unknown_outcome_is_reported_and_a_rerun_dispatches_once(repo: Repo, github: FakeGitHub, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    # GitHub failed before creating anything, but the client cannot know that.
    github.scripted.append(Scripted(DISPATCH, 502, body={"message": "bad gateway"}))
    event = comment_event("/run-benchmark cfg-b-*")
    run = run_dispatch(repo, github, event, tmp_path, monkeypatch, capsys)
    assert run.code == 3 and run.output("outcome") == "unknown"
    assert github.operations().count(DISPATCH) == 1 and github.runs == []
    # Looked for the run once before dispatching and once per lookup after the ambiguous answer.
    assert github.operations().count("actions/list-workflow-runs") == 1 + len(runs.LOOKUP_WAITS)
    assert last_reply(github) == (
        f"{mark()}\n:warning: **Dispatch status unknown:** the dispatch request failed (POST /repos/Codertocat/"
        "Hello-World/actions/workflows/sweep.yml/dispatches failed: HTTP 502 (bad gateway); GitHub may have acted on "
        "it). GitHub may still start the `sweep.yml` run; it was not requested a second time, so that the "
        "benchmarks cannot run twice. Check [the Actions tab](https://github.com/Codertocat/Hello-World/actions/"
        "workflows/sweep.yml) before commenting again; re-running this workflow dispatches only if no run for this "
        "comment exists.\n")
    # A maintainer re-runs the workflow: no run exists, so it dispatches, once, and the reply is replaced.
    again = run_dispatch(repo, github, event, tmp_path, monkeypatch, capsys)
    assert again.code == 0 and again.output("outcome") == "dispatched"
    assert github.operations().count(DISPATCH) == 2 and len(github.runs) == 1
    assert len(github.comments[PR]) == 1 and last_reply(github).startswith(mark() + "\n:rocket: **Dispatched**")


def test_a_failing_lookup_after_an_ambiguous_dispatch_is_still_unknown_not_a_refusal(
        repo: Repo, github: FakeGitHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    github.scripted += [Scripted("actions/list-workflow-runs", 200, body={"total_count": 0, "workflow_runs": []}),
                        Scripted(DISPATCH, 502, body={"message": "bad gateway"}, apply=True),
                        Scripted("actions/list-workflow-runs", 503, body={"message": "unavailable"})]
    run = run_dispatch(repo, github, comment_event("/run-benchmark cfg-b-*"), tmp_path, monkeypatch, capsys,
                       extra=("--attempts", "1"))
    assert run.code == 3 and run.output("outcome") == "unknown"
    assert github.operations().count(DISPATCH) == 1
    reply = last_reply(github)
    assert reply.startswith(f"{mark()}\n:warning: **Dispatch status unknown:** the dispatch request failed")
    assert ("and looking for the run failed too (GET /repos/Codertocat/Hello-World/actions/workflows/sweep.yml/runs "
            "failed after 1 attempts: HTTP 503 (unavailable))") in reply
    assert "Not running benchmarks" not in reply


def test_an_unknown_outcome_replaced_by_the_run_found_on_a_rerun(repo: Repo, github: FakeGitHub, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    # GitHub created the run, but it was listed only after the dispatcher stopped looking.
    github.scripted.append(Scripted(DISPATCH, 502, body={"message": "bad gateway"}, apply=True))
    hidden = [Scripted("actions/list-workflow-runs", 200, body={"total_count": 0, "workflow_runs": []})
              for _ in range(1 + len(runs.LOOKUP_WAITS))]
    github.scripted += hidden
    event = comment_event("/run-benchmark cfg-b-*")
    assert run_dispatch(repo, github, event, tmp_path, monkeypatch, capsys).output("outcome") == "unknown"
    again = run_dispatch(repo, github, event, tmp_path, monkeypatch, capsys)
    assert again.output("outcome") == "already-dispatched"
    assert github.operations().count(DISPATCH) == 1 and len(github.runs) == 1
    assert last_reply(github).startswith(f"{mark()}\n:information_source: **Already dispatched**: this comment "
                                         f"started a `sweep.yml` run ([the run]({github.runs[0]['html_url']})) "
                                         "(status `queued`)")


def test_runs_are_matched_by_the_whole_key_the_event_the_identity_and_the_commit() -> None:
    def run(run_id: int, title: str, event: str = "workflow_dispatch",
            actor: str = "github-actions[bot]") -> dict[str, object]:
        return {"id": run_id, "display_title": title, "event": event, "html_url": f"https://x/{run_id}",
                "status": "queued", "actor": {"login": actor}}

    sha_a, sha_b = "a" * 40, "b" * 40
    query = runs.RunQuery("sweep.yml", "main", "comment-12", sha_a, "github-actions[bot]",
                     datetime(2026, 1, 3, tzinfo=timezone.utc))
    found = match_run([run(1, f"sweep of {sha_a} for comment-123"), run(2, f"sweep of {sha_a} for comment-1"),
                       run(3, f"sweep of {sha_a} for comment-12", "push"), run(5, f"sweep of {sha_b} for comment-12"),
                       run(6, f"sweep of {sha_a} for comment-12", actor="mallory"),
                       run(7, f"sweep of {sha_a} for xcomment-12"),
                       run(4, f"sweep of {sha_a} for comment-12", actor="GitHub-Actions[bot]")], query)
    assert found is not None and found.run_id == 4  # the oldest of the matching runs
    assert match_run([run(1, "comment-12 by hand"), run(2, ""), run(3, "comment-12"),
                      run(8, f"{sha_a[:12]} comment-12"), {"id": 9, "display_title": f"{sha_a} comment-12",
                                                             "event": "workflow_dispatch"}], query) is None


def _by_hand(fake: FakeGitHub, login: str, sha: str, key: str) -> dict[str, object]:
    """Someone with write access dispatches sweep.yml through the API with their own token."""
    token = f"ghp_{login}"
    fake.token_logins[token] = login
    with GitHubClient(fake.repository, api_url=fake.url, token=token) as client:
        return client.dispatch_workflow("sweep.yml", "main", {"sha": sha, "pr": str(PR), "selection": "{}",
                                                              "requester": login, "key": key})


@pytest.mark.parametrize(("who", "key", "commit"), [
    ("mallory", "comment-{id}", "pinned"),  # the exact title the dispatcher would have made, by someone else
    ("mallory", "x comment-{id}", "other"),  # a title whose last word is the key
    ("mallory", "comment-{id}", "other"),
    ("github-actions[bot]", "comment-{id}", "other"),  # the workflow's identity (another workflow), another commit
])
def test_a_run_started_by_hand_with_a_look_alike_title_is_not_this_comments(
        who: str, key: str, commit: str, repo: Repo, github: FakeGitHub, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    sha = repo.head if commit == "pinned" else repo.base
    if who == github.bot_login:
        with GitHubClient(github.repository, api_url=github.url, token="ghs_other_workflow") as client:
            client.dispatch_workflow("sweep.yml", "main", {"sha": sha, "pr": str(PR), "selection": "{}",
                                                           "requester": "x", "key": key.format(id=COMMENT_ID)})
    else:
        _by_hand(github, who, sha, key.format(id=COMMENT_ID))
    planted = github.runs[0]
    assert planted["display_title"].split()[-1] == f"comment-{COMMENT_ID}" and planted["actor"]["login"] == who
    run = run_dispatch(repo, github, comment_event("/run-benchmark cfg-b-*"), tmp_path, monkeypatch, capsys)
    assert run.code == 0 and run.output("outcome") == "dispatched", run.stdout
    assert github.operations().count(DISPATCH) == 2 and len(github.runs) == 2
    ours = github.runs[1]
    assert ours["actor"]["login"] == "github-actions[bot]" and ours["display_title"] == run_title(
        repo.head, f"comment-{COMMENT_ID}")
    assert run.output("run-url") == ours["html_url"] != planted["html_url"]
    reply = last_reply(github)
    assert reply.startswith(f"{mark()}\n:rocket: **Dispatched** `sweep.yml` on `main` for `{repo.head}` "
                            f"([the run]({ours['html_url']}))")
    assert "Already dispatched" not in reply and planted["html_url"] not in reply
    # And a re-run of the event finds the dispatcher's own run, not the planted one.
    again = run_dispatch(repo, github, comment_event("/run-benchmark cfg-b-*"), tmp_path, monkeypatch, capsys)
    assert again.output("outcome") == "already-dispatched" and again.output("run-url") == ours["html_url"]
    assert github.operations().count(DISPATCH) == 2


@pytest.mark.parametrize("named", [False, True])
def test_a_rerun_after_the_author_pushed_reports_the_run_not_the_moved_head(
        named: bool, repo: Repo, github: FakeGitHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    event = comment_event("/run-benchmark cfg-b-*" + (f" sha={repo.head}" if named else ""))
    first = run_dispatch(repo, github, event, tmp_path, monkeypatch, capsys)
    assert first.output("outcome") == "dispatched"
    reply = last_reply(github)
    github.push(PR, "c" * 40, "2026-01-03T00:00:30Z")  # after the comment
    again = run_dispatch(repo, github, event, tmp_path, monkeypatch, capsys)
    assert again.code == 0 and again.output("outcome") == "already-dispatched", again.stdout
    assert again.output("run-url") == github.runs[0]["html_url"] and again.output("sha") == repo.head
    assert github.operations().count(DISPATCH) == 1
    assert [c["body"] for c in github.comments[PR]] == [reply]  # the reply listing the jobs stays
    # A new comment after the push is judged on its own: no run of its own, and its pin is the new head.
    other = comment_event("/run-benchmark cfg-b-*" + (f" sha={repo.head}" if named else ""),
                          created_at="2026-01-03T00:01:00Z")
    other["comment"]["id"] = COMMENT_ID + 1
    refused = run_dispatch(repo, github, other, tmp_path, monkeypatch, capsys)
    assert refused.output("outcome") == "refused" and github.operations().count(DISPATCH) == 1


def test_a_rerun_after_an_unknown_outcome_and_a_push_finds_the_run(
        repo: Repo, github: FakeGitHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """What the "status unknown" reply advises (re-run the workflow) is safe after the author pushed."""
    github.scripted.append(Scripted(DISPATCH, 502, body={"message": "bad gateway"}, apply=True))
    github.scripted += [Scripted("actions/list-workflow-runs", 200, body={"total_count": 0, "workflow_runs": []})
                        for _ in range(1 + len(runs.LOOKUP_WAITS))]
    event = comment_event("/run-benchmark cfg-b-*")
    assert run_dispatch(repo, github, event, tmp_path, monkeypatch, capsys).output("outcome") == "unknown"
    github.push(PR, "c" * 40, "2026-01-03T00:00:40Z", force=True)
    again = run_dispatch(repo, github, event, tmp_path, monkeypatch, capsys)
    assert again.output("outcome") == "already-dispatched"
    assert github.operations().count(DISPATCH) == 1 and len(github.runs) == 1
    assert last_reply(github).startswith(f"{mark()}\n:information_source: **Already dispatched**: this comment "
                                         f"started a `sweep.yml` run ([the run]({github.runs[0]['html_url']}))")
    assert "head moved" not in last_reply(github)


def test_a_rerun_after_the_pull_request_was_closed_reports_the_run(
        repo: Repo, github: FakeGitHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    event = comment_event("/run-benchmark cfg-b-*")
    run_dispatch(repo, github, event, tmp_path, monkeypatch, capsys)
    github.pulls[PR]["state"] = "closed"
    again = run_dispatch(repo, github, event, tmp_path, monkeypatch, capsys)
    assert again.output("outcome") == "already-dispatched" and github.operations().count(DISPATCH) == 1
    # Without a run of its own, a comment on the closed pull request is refused as before.
    other = comment_event("/run-benchmark cfg-b-*")
    other["comment"]["id"] = COMMENT_ID + 1
    refused = run_dispatch(repo, github, other, tmp_path, monkeypatch, capsys)
    assert refused.output("outcome") == "refused" and github.operations().count(DISPATCH) == 1
    assert last_reply(github).startswith(f"{mark(comment_id=COMMENT_ID + 1)}\n:confused: **Not running benchmarks:** "
                                         "pull request #1 is closed")
