"""Who gets a reply: people who may not dispatch are answered once per pull request, the allowlist is exact.

End to end through `ci-tools dispatch comment` against the fake GitHub.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import pytest

from test_github_dispatch import (COMMENT_ID, PR, Repo, assert_refused, comment_event, configured, make_repo, mark,
                                  run_dispatch, serving)
from test_github_server import FakeGitHub, Scripted


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Repo:
    return make_repo(tmp_path_factory.mktemp("replies") / "repo")


@pytest.fixture
def github(repo: Repo) -> Iterator[FakeGitHub]:
    with serving(repo, stranger="read") as fake:
        yield fake


def event(body: str, n: int, login: str = "stranger", **kwargs: Any) -> dict[str, Any]:
    e = comment_event(body, login=login, **kwargs)
    e["comment"]["id"] = COMMENT_ID + n
    return e


def test_someone_without_permission_is_answered_once_per_pull_request(repo: Repo, github: FakeGitHub,
                                                                      tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    bodies = ["/run-benchmark cfg-a-*", "/run-benchmark cfg-b-*", "/run-benchmark help", "\uff0frun-benchmark x",
              "/run-benchmark nonsense=1"]
    outcomes = [run_dispatch(repo, github, event(b, n), tmp_path, monkeypatch, capsys) for n, b in enumerate(bodies)]
    assert [o.output("outcome") for o in outcomes] == ["refused", "refused", "help", "refused", "refused"]
    ours = github.comments[PR]
    assert len(ours) == 1 and ours[0]["body"] == (
        f"{mark('stranger')}\n:confused: **Not running benchmarks:** `stranger` has `read` permission on "
        "Codertocat/Hello-World; dispatching benchmarks needs `write` or higher\n")
    assert outcomes[1].stdout == "refused: insufficient permission (no reply: `stranger` was already told on #1)\n"
    # Every comment still gets a reaction, so the commenter sees it was read.
    assert [c for c, _ in github.reactions].count(COMMENT_ID + 1) == 2
    assert github.operations().count("issues/create-comment") == 1
    assert github.dispatches == []


def test_edited_comments_of_someone_already_told_get_no_reply(repo: Repo, github: FakeGitHub, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    run_dispatch(repo, github, event("/run-benchmark help", 0), tmp_path, monkeypatch, capsys)
    run = run_dispatch(repo, github, event("/run-benchmark cfg-a-*", 1, action="edited"), tmp_path, monkeypatch,
                       capsys)
    assert run.output("outcome") == "refused" and len(github.comments[PR]) == 1


def test_the_limit_is_per_person_and_per_pull_request(repo: Repo, github: FakeGitHub, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    github.grant("other", "triage")
    github.add_pull(2, repo.head, repo.base)
    run_dispatch(repo, github, event("/run-benchmark cfg-a-*", 0), tmp_path, monkeypatch, capsys)
    run_dispatch(repo, github, event("/run-benchmark cfg-a-*", 1, login="other"), tmp_path, monkeypatch, capsys)
    run_dispatch(repo, github, event("/run-benchmark cfg-a-*", 2, number=2), tmp_path, monkeypatch, capsys)
    assert [c["body"].split("\n")[0] for c in github.comments[PR]] == [mark("stranger", COMMENT_ID),
                                                                       mark("other", COMMENT_ID + 1)]
    assert [c["body"].split("\n")[0] for c in github.comments[2]] == [mark("stranger", COMMENT_ID + 2)]


def test_a_pasted_marker_does_not_silence_the_reply(repo: Repo, github: FakeGitHub, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    github.comments[PR] = [github._new_comment(PR, mark("stranger", 1) + "\nnot ours")]
    github.comments[PR][0]["user"].update(login="stranger", type="User")
    run_dispatch(repo, github, event("/run-benchmark cfg-a-*", 0), tmp_path, monkeypatch, capsys)
    assert len(github.comments[PR]) == 2


def test_people_who_may_dispatch_are_answered_every_time(repo: Repo, github: FakeGitHub, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    for n in range(3):
        run_dispatch(repo, github, event("/run-benchmark cfg-nothing-*", n, login="alice"), tmp_path, monkeypatch,
                     capsys)
    assert [c["body"].split("\n")[0] for c in github.comments[PR]] == [mark("alice", COMMENT_ID + n)
                                                                       for n in range(3)]


@pytest.mark.parametrize("login", ["carolyn", "caro", "xcarol", "carol-2"])
def test_the_allowlist_matches_whole_logins_only(login: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """A prefix, suffix or substring of an allowed login is someone else."""
    with configured(tmp_path, "dispatch:\n  allow-users: [carol]\n") as (repo, fake):
        fake.grant(login, "read")
        run = run_dispatch(repo, fake, comment_event("/run-benchmark cfg-a-*", login=login), tmp_path, monkeypatch,
                           capsys)
        assert_refused(fake, run, f"`{login}` has `read` permission on Codertocat/Hello-World; dispatching "
                                  "benchmarks needs `write` or higher or be listed in `dispatch.allow-users`",
                       login=login)


def test_the_allowlist_ignores_case_as_github_does(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    with configured(tmp_path, "dispatch:\n  allow-users: [carol]\n") as (repo, fake):
        run = run_dispatch(repo, fake, comment_event("/run-benchmark cfg-a-*", login="CaRoL"), tmp_path,
                           monkeypatch, capsys)
        assert run.output("outcome") == "dispatched"


@pytest.mark.parametrize(("applied", "creates"), [(True, 1), (False, 2)])
def test_a_reply_whose_creation_was_answered_with_5xx_is_not_written_twice(
        applied: bool, creates: int, repo: Repo, github: FakeGitHub, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """The comment may exist although GitHub failed to say so: look for it before writing it again."""
    github.scripted.append(Scripted("issues/create-comment", 502, body={"message": "bad gateway"}, apply=applied))
    run = run_dispatch(repo, github, event("/run-benchmark cfg-nothing-*", 0, login="alice"), tmp_path, monkeypatch,
                       capsys)
    assert run.output("outcome") == "refused"
    assert len(github.comments[PR]) == 1 and github.operations().count("issues/create-comment") == creates
    assert run.output("reply-url") == github.comments[PR][0]["html_url"]
