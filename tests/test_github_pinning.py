"""The head pin: what a comment authorises is decided by GitHub's records, never by commit dates.

End to end through `ci-tools dispatch comment` against the fake GitHub: the
pull request's head branch has activity records (pushes, force-pushes with
GitHub's timestamps), and the repository holds a commit whose dates were
forged to look older than the comment.
"""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterator

import pytest

from ci_tools.github.pinning import Pin, PinRefusal, pin_from_activity
from test_github_dispatch import (COMMENT_TIME, PR, Repo, _git, assert_refused, comment_event, make_repo,
                                  run_dispatch, serving)
from test_github_server import FakeGitHub, Scripted

COMMENTED = datetime(2026, 1, 3, tzinfo=timezone.utc)
FORGED_DATE = "2025-12-01T00:00:00+00:00"  # long before the comment


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Repo:
    return make_repo(tmp_path_factory.mktemp("pinning") / "repo")


@pytest.fixture(scope="module")
def backdated(repo: Repo) -> str:
    """A commit on top of the base whose author and committer dates claim 2025-12-01."""
    _git(repo.root, "checkout", "-q", "-b", "rewritten", repo.base)
    (repo.root / "configs" / "amd-master.yaml").write_text(
        (repo.root / "configs" / "amd-master.yaml").read_text().replace("conc-end: 16", "conc-end: 8"))
    _git(repo.root, "commit", "-q", "-am", "looks old", date=FORGED_DATE)
    sha = _git(repo.root, "rev-parse", "HEAD")
    _git(repo.root, "checkout", "-q", "main")
    return sha


@pytest.fixture
def github(repo: Repo) -> Iterator[FakeGitHub]:
    with serving(repo) as fake:  # the head branch was created on 2026-01-02
        yield fake


@pytest.mark.parametrize("force", [True, False])
def test_a_backdated_push_after_the_comment_is_refused(force: bool, repo: Repo, backdated: str, github: FakeGitHub,
                                                       tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    # The attack: the commit's own dates say it predates the comment; only GitHub knows when it was pushed.
    committed = _git(repo.root, "log", "-1", "--format=%cI", backdated)
    assert datetime.fromisoformat(committed) < COMMENTED
    github.push(PR, backdated, "2026-01-03T00:00:30Z", force=force, actor="mallory")
    run = run_dispatch(repo, github, comment_event("/run-benchmark cfg-a-*", created_at=COMMENT_TIME), tmp_path,
                       monkeypatch, capsys)
    verb = "force-pushed" if force else "pushed"
    body = assert_refused(github, run, f"the head moved after the comment was posted: `new-topic` was {verb} to "
                                       f"`{backdated[:12]}` by `mallory` at 2026-01-03T00:00:30+00:00, the comment "
                                       "was posted at 2026-01-03T00:00:00+00:00 on "
                                       f"`{repo.head[:12]}`. Review the new commits and comment again, or name the "
                                       "commit you reviewed with `sha=`")
    assert backdated not in body
    assert run.output("sha") == backdated  # reported as what the head is now, not dispatched
    assert "actions/create-workflow-dispatch" not in github.operations()


def test_a_push_before_the_comment_is_what_the_comment_authorises(repo: Repo, backdated: str, github: FakeGitHub,
                                                                  tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    github.push(PR, backdated, "2026-01-02T23:59:59Z", force=True)
    run = run_dispatch(repo, github, comment_event("/run-benchmark cfg-a-* tp=8", created_at=COMMENT_TIME),
                       tmp_path, monkeypatch, capsys)
    assert run.output("outcome") == "dispatched"
    assert [d["inputs"]["sha"] for d in github.dispatches] == [backdated]
    # The configs of the pinned commit, not of the older head, decide the jobs.
    assert run.output("jobs") == "2"


def test_moving_away_and_back_after_the_comment_dispatches_the_commented_head(
        repo: Repo, backdated: str, github: FakeGitHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    github.push(PR, backdated, "2026-01-03T00:00:10Z", force=True)
    github.push(PR, repo.head, "2026-01-03T00:00:20Z", force=True)
    run_dispatch(repo, github, comment_event("/run-benchmark cfg-b-*", created_at=COMMENT_TIME), tmp_path,
                 monkeypatch, capsys)
    assert [d["inputs"]["sha"] for d in github.dispatches] == [repo.head]


def test_a_push_in_the_same_second_as_the_comment_is_not_assumed_seen(
        repo: Repo, backdated: str, github: FakeGitHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    github.push(PR, backdated, "2026-01-03T00:00:00Z", force=True)
    run = run_dispatch(repo, github, comment_event("/run-benchmark cfg-a-*", created_at=COMMENT_TIME), tmp_path,
                       monkeypatch, capsys)
    assert_refused(github, run, "the head moved after the comment was posted: `new-topic` was force-pushed to "
                                f"`{backdated[:12]}`")


def test_a_head_the_activity_does_not_show_yet_is_refused(repo: Repo, backdated: str, github: FakeGitHub,
                                                          tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    # The pull request API already reports a new head, the activity feed has no record of it (yet).
    github.pulls[PR]["head"]["sha"] = backdated
    run = run_dispatch(repo, github, comment_event("/run-benchmark cfg-a-*"), tmp_path, monkeypatch, capsys)
    assert_refused(github, run, "GitHub's record of pushes to `new-topic` does not show what its head was when the "
                                f"comment was posted (GitHub reports the head `{backdated[:12]}`, its newest record "
                                f"before the comment `{repo.head[:12]}`); name the commit you reviewed with `sha=`")


def test_a_branch_created_after_the_comment_is_refused(repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    fake = FakeGitHub().start()
    try:
        fake.grant("alice", "write")
        fake.add_pull(PR, repo.head, repo.base, pushed_at="2026-01-03T00:05:00Z")
        run = run_dispatch(repo, fake, comment_event("/run-benchmark cfg-a-*"), tmp_path, monkeypatch, capsys)
        assert_refused(fake, run, "(no record is older than the comment); name the commit you reviewed with `sha=`")
    finally:
        fake.stop()


@pytest.mark.parametrize("status", [403, 404])
def test_an_unreadable_activity_feed_asks_for_sha_and_sha_works(status: int, repo: Repo, github: FakeGitHub,
                                                                tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    github.scripted.append(Scripted("repos/list-activities", status, body={"message": "Resource not accessible"}))
    run = run_dispatch(repo, github, comment_event("/run-benchmark cfg-a-*"), tmp_path, monkeypatch, capsys)
    assert_refused(github, run, "GitHub's record of pushes to the head branch could not be read (GET /repos/"
                                f"Codertocat/Hello-World/activity failed: HTTP {status} (Resource not accessible)); "
                                "name the commit you reviewed with `sha=`")
    github.comments.clear()
    run = run_dispatch(repo, github, comment_event(f"/run-benchmark cfg-a-* sha={repo.head}"), tmp_path, monkeypatch,
                       capsys)
    assert run.output("outcome") == "dispatched" and [d["inputs"]["sha"] for d in github.dispatches] == [repo.head]
    # A named commit needs no activity record: the feed was asked once, for the first comment only.
    assert github.operations().count("repos/list-activities") == 1


def test_an_activity_feed_that_fails_for_good_is_an_api_error(repo: Repo, github: FakeGitHub, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    github.scripted.append(Scripted("repos/list-activities", 502, body={"message": "bad gateway"}))
    run = run_dispatch(repo, github, comment_event("/run-benchmark cfg-a-*"), tmp_path, monkeypatch, capsys,
                       extra=("--attempts", "1"))
    assert run.code == 3 and github.dispatches == []
    assert run.stderr == ("ci-tools: error: GitHub API: GET /repos/Codertocat/Hello-World/activity failed after 1 "
                          "attempts: HTTP 502 (bad gateway)\n")


@pytest.mark.parametrize(("pushes", "page_cap"), [(100, 100), (40, 30)])
def test_a_first_page_of_activity_all_after_the_comment_says_the_head_is_unproven(
        pushes: int, page_cap: int, repo: Repo, backdated: str, github: FakeGitHub, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Only the first page is read (fail closed); the reply says the head is unproven and what to do.

    With GitHub's page full, or shorter than asked but with a `rel="next"` link, the records that would
    show the head at the comment are on a page not read: that is neither "no record" nor a moved head.
    """
    github.activity_page_cap = page_cap
    for n in range(pushes):  # a busy branch: every push after the comment, ending on the head it started from
        github.push(PR, backdated if n % 2 == 0 else repo.head, f"2026-01-03T00:{n // 60:02d}:{n % 60:02d}Z",
                    force=True)
    head = github.pulls[PR]["head"]["sha"]
    run = run_dispatch(repo, github, comment_event("/run-benchmark cfg-a-*", created_at="2026-01-02T12:00:00Z"),
                       tmp_path, monkeypatch, capsys)
    body = assert_refused(github, run, (
        f"the head of `new-topic` when the comment was posted could not be proven: only the first page of GitHub's "
        f"record of pushes to it was read, and all of its {page_cap} records are later than the comment (GitHub "
        "has older ones). Comment again (a new comment is pinned to the head when it is posted), or name the "
        "commit you reviewed with `sha=`"))
    assert "no record is older" not in body
    assert github.operations().count("repos/list-activities") == 1
    # What the reply advises works: the commit named with sha=.
    github.comments.clear()
    run = run_dispatch(repo, github, comment_event(f"/run-benchmark cfg-a-* sha={head}",
                                                   created_at="2026-01-02T12:00:00Z"), tmp_path, monkeypatch, capsys)
    assert run.output("outcome") == "dispatched" and [d["inputs"]["sha"] for d in github.dispatches] == [head]


@pytest.mark.parametrize(("head_repo", "deleted"), [("mallory/Hello-World", False), (None, True)])
def test_a_fork_without_sha_is_refused_even_when_forks_are_allowed(head_repo: str | None, deleted: bool,
                                                                   tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """A fork's pushes are not in this repository's activity: only `sha=` can pin its head."""
    repo = make_repo(tmp_path / "repo", dispatch_section="dispatch:\n  allow-forks: true\n")
    fake = FakeGitHub().start()
    try:
        fake.grant("alice", "write")
        fake.add_pull(PR, repo.head, repo.base, head_repo=head_repo, head_repo_deleted=deleted)
        run = run_dispatch(repo, fake, comment_event("/run-benchmark cfg-a-*"), tmp_path, monkeypatch, capsys)
        assert_refused(fake, run, "#1 comes from a fork, whose pushes GitHub does not record here")
        assert "repos/list-activities" not in fake.operations()
    finally:
        fake.stop()


# -- the rule itself, on records as GitHub documents them --------------------------------------------


def _record(after: str, at: str, kind: str = "push", before: str = "0" * 40) -> dict[str, Any]:
    return {"id": 1, "node_id": "x", "before": before, "after": after, "ref": "refs/heads/b", "timestamp": at,
            "activity_type": kind, "actor": {"login": "octocat"}}


def test_records_are_ordered_by_time_not_by_position() -> None:
    records = [_record("a" * 40, "2026-01-01T00:00:00Z"), _record("b" * 40, "2026-01-02T00:00:00Z")]
    assert pin_from_activity("b" * 40, "b", COMMENTED, records) == Pin(
        "b" * 40, f"head of `b` since it was pushed to `{'b' * 12}` by `octocat` at 2026-01-02T00:00:00+00:00")


@pytest.mark.parametrize(("records", "fragment"), [
    ([_record("a" * 40, "yesterday")], "(a record is malformed)"),
    ([{**_record("a" * 40, "2026-01-01T00:00:00Z"), "after": None}], "(a record is malformed)"),
    ([_record("a" * 40, "2026-01-04T00:00:00Z")] * 100, "could not be proven: only the first page of GitHub's record "
                                                         "of pushes to it was read, and all of its 100 records are "
                                                         "later than the comment"),
    ([_record("0" * 40, "2026-01-01T00:00:00Z", "branch_deletion")], "`b` did not exist when the comment was posted"),
    ([], "(no record is older than the comment)"),
])
def test_what_cannot_be_established_is_refused(records: list[dict[str, Any]], fragment: str) -> None:
    result = pin_from_activity("a" * 40, "b", COMMENTED, records)
    assert isinstance(result, PinRefusal) and result.reason == "head unknown"
    assert fragment in result.headline and result.headline.endswith(
        "name the commit you reviewed with `sha=` and its full 40-digit id, copied from that commit's page, not from "
        "this reply.")
