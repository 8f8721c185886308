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

from ci_tools.github import runs
from ci_tools.github.runs import dispatch_key, match_run, run_title
from test_github_dispatch import (COMMENT_ID, PR, Repo, comment_event, last_reply, make_repo, mark, run_dispatch,
                                  serving)
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


def test_runs_are_matched_by_the_whole_key_and_the_event() -> None:
    def run(run_id: int, title: str, event: str = "workflow_dispatch") -> dict[str, object]:
        return {"id": run_id, "display_title": title, "event": event, "html_url": f"https://x/{run_id}",
                "status": "queued"}

    key = "comment-12"
    found = match_run([run(1, "sweep of a for comment-123"), run(2, "sweep of a for comment-1"),
                       run(3, "sweep of a for comment-12", "push"), run(5, "sweep of b for comment-12"),
                       run(4, "sweep of a for comment-12")], key)
    assert found is not None and found.run_id == 4  # the oldest of the matching runs
    assert match_run([run(1, "comment-12 by hand"), run(2, "")], key) is None
