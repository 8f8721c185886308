"""`ci-tools dispatch comment` end to end: a real git repository, the fake GitHub, the published payloads.

Every adversarial case asserts that no workflow_dispatch request was made and
what the reply says; the allowed cases dispatch exactly once with the pinned
head SHA.  Every request the dispatcher makes is validated against GitHub's
OpenAPI description by the fake server (``violations`` must stay empty).
"""

from __future__ import annotations

import contextlib
import copy
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ci_tools.cli.main import main
from ci_tools.config import load_config
from ci_tools.github.auth import DispatchPolicy
from ci_tools.github.client import GitHubClient, GitHubError, RetryPolicy
from ci_tools.github.dispatch import Dispatcher, GitRevisions
from ci_tools.github.event import parse_event
from ci_tools.github.replies import Addressee, marker
from ci_tools.github.selection import selection_from_json
from test_github_server import DATA, FakeGitHub, Scripted

COMMENT_ID = 492700400  # the published example's comment id


def mark(login: str = "alice", comment_id: int = COMMENT_ID) -> str:
    return marker(Addressee(comment_id, login))

MASTER = """\
cfg-a-mi355x-atom:
  image: rocm/atom:1
  model: org/model-a
  model-prefix: ma
  runner: mi355x
  precision: fp8
  framework: atom
  multinode: false
  scenarios:
    fixed-seq-len:
    - isl: 1024
      osl: 1024
      search-space:
      - { tp: 8, conc-start: 4, conc-end: 16 }
      - { tp: 4, ep: 4, conc-list: [64] }

cfg-b-mi355x-sglang:
  image: lmsysorg/sglang:1
  model: org/model-b
  model-prefix: mb
  runner: mi355x
  precision: fp4
  framework: sglang
  multinode: false
  scenarios:
    fixed-seq-len:
    - isl: 8192
      osl: 1024
      search-space:
      - { tp: 8, conc-start: 32, conc-end: 64 }
"""
AGENTIC = """
cfg-c-mi355x-agentic:
  image: rocm/atom:2
  model: org/model-c
  model-prefix: mc
  runner: cluster:mi355x-amds
  precision: fp4
  framework: atom
  multinode: false
  scenarios:
    agentic-coding:
    - search-space:
      - { tp: 8, conc-list: [8, 16], kv-offloading: none }
"""
RUNNERS = """\
labels:
  mi355x:
    - mi355x-amds_01
  cluster:mi355x-amds:
    - mi355x-amds_02
hardware:
  cluster:mi355x-amds:
    available-cpu-dram-mib: 3_095_781
    gpus-per-node: 8
"""
CHANGELOG_BASE = """\
- config-keys:
    - cfg-a-mi355x-atom
  description:
    - "Initial config."
  pr-link: https://github.com/Codertocat/Hello-World/pull/1
"""
CHANGELOG_HEAD = CHANGELOG_BASE + """
- config-keys:
    - cfg-c-*
  scenario-type:
    - agentic-coding
  description:
    - "Add the agentic config."
  pr-link: https://github.com/Codertocat/Hello-World/pull/XXX
"""
BASE_TIME = "2026-01-01T00:00:00+00:00"
HEAD_TIME = "2026-01-02T00:00:00+00:00"
COMMENT_TIME = "2026-01-03T00:00:00Z"
PR = 1


def _git(repo: Path, *args: str, date: str = BASE_TIME) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "Test", "GIT_AUTHOR_EMAIL": "test@example.com",
           "GIT_COMMITTER_NAME": "Test", "GIT_COMMITTER_EMAIL": "test@example.com",
           "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date, "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(repo)}
    return subprocess.run(["git", "-C", str(repo), "-c", "commit.gpgsign=false", *args], env=env, check=True,
                          capture_output=True, text=True).stdout.strip()


@dataclass
class Repo:
    root: Path
    base: str
    head: str


def make_repo(root: Path, *, dispatch_section: str = "") -> Repo:
    """Base commit: two configs; head commit (a day later): an agentic config and its changelog entry."""
    root.mkdir()
    _git(root, "init", "-q", "-b", "main")
    (root / "configs").mkdir()
    (root / "configs" / "amd-master.yaml").write_text(MASTER)
    (root / "configs" / "runners.yaml").write_text(RUNNERS)
    (root / "perf-changelog.yaml").write_text(CHANGELOG_BASE)
    config = "repository: Codertocat/Hello-World\n" + dispatch_section
    (root / ".ci-tools.yaml").write_text(config)
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "base")
    base = _git(root, "rev-parse", "HEAD")
    _git(root, "checkout", "-q", "-b", "feature")
    (root / "configs" / "amd-master.yaml").write_text(MASTER + AGENTIC)
    (root / "perf-changelog.yaml").write_text(CHANGELOG_HEAD)
    _git(root, "commit", "-q", "-am", "head", date=HEAD_TIME)
    head = _git(root, "rev-parse", "HEAD")
    # The trusted checkout is the default branch; the head is only present as objects.
    _git(root, "checkout", "-q", "main")
    return Repo(root, base, head)


def comment_event(body: str, *, action: str = "created", login: str = "alice", user_type: str = "User",
                  on_pull_request: bool = True, created_at: str = COMMENT_TIME, number: int = PR) -> dict[str, Any]:
    """The published issue_comment example, varied."""
    name = "issue_comment.created.json" if action == "created" else "issue_comment.edited.json"
    event: dict[str, Any] = copy.deepcopy(json.loads((DATA / name).read_text(encoding="utf-8")))
    event["action"] = action
    event["comment"]["body"] = body
    event["comment"]["created_at"] = created_at
    event["comment"]["user"]["login"] = login
    event["comment"]["user"]["type"] = user_type
    event["issue"]["number"] = number
    if on_pull_request:
        event["issue"]["pull_request"] = {
            "url": f"https://api.github.com/repos/Codertocat/Hello-World/pulls/{number}",
            "html_url": f"https://github.com/Codertocat/Hello-World/pull/{number}",
            "diff_url": f"https://github.com/Codertocat/Hello-World/pull/{number}.diff",
            "patch_url": f"https://github.com/Codertocat/Hello-World/pull/{number}.patch",
        }
    else:
        event["issue"].pop("pull_request", None)
    return event


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Repo:
    return make_repo(tmp_path_factory.mktemp("dispatch") / "repo")


@contextlib.contextmanager
def serving(repo: Repo, **roles: str) -> Iterator[FakeGitHub]:
    """A fake GitHub holding the repository's pull request, `alice` with write permission and ``roles``."""
    fake = FakeGitHub().start()
    try:
        for login, role in {"alice": "write", **roles}.items():
            fake.grant(login, role)
        fake.add_pull(PR, repo.head, repo.base)
        yield fake
    finally:
        fake.stop()


@pytest.fixture
def github(repo: Repo) -> Iterator[FakeGitHub]:
    with serving(repo) as fake:
        yield fake


@contextlib.contextmanager
def configured(tmp_path: Path, section: str, **pull: Any) -> Iterator[tuple[Repo, FakeGitHub]]:
    """A repository with its own `dispatch:` section, and a fake GitHub holding its pull request."""
    repo = make_repo(tmp_path / "repo", dispatch_section=section)
    fake = FakeGitHub().start()
    try:
        fake.add_pull(PR, repo.head, repo.base, **pull)
        yield repo, fake
    finally:
        fake.stop()


@dataclass
class Run:
    code: int
    stdout: str
    stderr: str
    outputs: str

    def output(self, name: str) -> str:
        """The value of one heredoc output in $GITHUB_OUTPUT."""
        lines = self.outputs.split("\n")
        for i, line in enumerate(lines):
            if line.startswith(name + "<<"):
                delimiter = line[len(name) + 2:]
                end = lines.index(delimiter, i + 1)
                return "\n".join(lines[i + 1:end])
        raise KeyError(name)


def run_dispatch(repo: Repo, github: FakeGitHub, event: dict[str, Any], tmp_path: Path,
                 monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                 root: Path | None = None, extra: tuple[str, ...] = ()) -> Run:
    event_file = tmp_path / "event.json"
    event_file.write_text(json.dumps(event), encoding="utf-8")
    output = tmp_path / "github_output"
    output.write_text("")
    monkeypatch.setenv("GITHUB_API_URL", github.url)
    monkeypatch.setenv("GITHUB_TOKEN", "ghs_test")
    monkeypatch.setenv("GITHUB_EVENT_NAME", "issue_comment")
    monkeypatch.setenv("GITHUB_OUTPUT", str(output))
    code = main(["dispatch", "comment", "--repo", str(root or repo.root), "--event", str(event_file), "--no-fetch",
                 *extra])
    captured = capsys.readouterr()
    assert github.violations == []
    return Run(code, captured.out, captured.err, output.read_text())


def last_reply(github: FakeGitHub) -> str:
    replies = github.comments.get(PR) or [c for cs in github.comments.values() for c in cs]
    assert replies, "no reply was written"
    return str(replies[-1]["body"])


def assert_refused(github: FakeGitHub, run: Run, *fragments: str, login: str = "alice") -> str:
    assert run.code == 0, run.stderr
    assert github.dispatch_requests() == []
    assert github.dispatches == []
    assert run.output("outcome") == "refused"
    assert run.output("selection") == ""
    body = last_reply(github)
    assert body.startswith(mark(login) + "\n:confused: **Not running benchmarks:** ")
    for fragment in fragments:
        assert fragment in body, body
    assert github.reactions[-1] == (COMMENT_ID, "confused")
    return body


# -- allowed: exactly one dispatch, with the pinned SHA --------------------------------------------


def test_write_permission_dispatches_once_with_the_pinned_sha(repo: Repo, github: FakeGitHub, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    run = run_dispatch(repo, github, comment_event("/run-benchmark cfg-a-* tp=8\r\n\r\nThanks!"), tmp_path,
                       monkeypatch, capsys)
    assert run.code == 0
    assert run.stdout == (f"dispatched: 3 jobs at {repo.head}; pinned: head of `new-topic` since it was created to "
                          f"`{repo.head[:12]}` by `octocat` at 2026-01-02T00:00:00+00:00\n")
    assert len(github.dispatch_requests()) == 1
    sent = github.dispatches[0]
    assert sent["workflow"] == "sweep.yml" and sent["ref"] == "main"
    assert set(sent["inputs"]) == {"sha", "pr", "selection", "requester", "key"}
    assert sent["inputs"]["sha"] == repo.head
    assert sent["inputs"]["pr"] == "1"
    assert sent["inputs"]["requester"] == "alice"
    assert sent["inputs"]["key"] == f"comment-{COMMENT_ID}"
    selection = selection_from_json(sent["inputs"]["selection"])
    assert selection.sha == repo.head
    assert [t.config_key for t in selection.targets] == ["cfg-a-mi355x-atom"]
    assert selection.tp == (8,) and selection.jobs == 3
    assert run.output("selection") == sent["inputs"]["selection"]
    assert run.output("sha") == repo.head and run.output("outcome") == "dispatched" and run.output("jobs") == "3"
    run_url = github.runs[0]["html_url"]
    assert run.output("run-url") == run_url
    assert github.reactions == [(COMMENT_ID, "eyes"), (COMMENT_ID, "rocket")]
    assert github.operations() == ["reactions/create-for-issue-comment", "repos/get-collaborator-permission-level",
                                   "pulls/get", "repos/list-activities", "actions/list-workflow-runs",
                                   "actions/create-workflow-dispatch", "reactions/create-for-issue-comment",
                                   "issues/list-comments", "issues/create-comment"]
    reply = last_reply(github)
    assert reply == (
        f"{mark()}\n:rocket: **Dispatched** `sweep.yml` on `main` for `{repo.head}` ([the run]({run_url})), "
        "requested by `alice`: 3 job(s) of 1 config(s): `cfg-a-mi355x-atom`; filters `tp=8`.\n\n```text\n"
        "cfg-a-mi355x-atom fixed-seq-len 1024/1024 TP8/EP1 c4\n"
        "cfg-a-mi355x-atom fixed-seq-len 1024/1024 TP8/EP1 c8\n"
        "cfg-a-mi355x-atom fixed-seq-len 1024/1024 TP8/EP1 c16\n```\n\n"
        "Results will be reported on this pull request in one comment, updated as the jobs finish.\n")


@pytest.mark.parametrize("role", ["admin", "maintain", "write"])
def test_sufficient_roles_dispatch(role: str, repo: Repo, github: FakeGitHub, tmp_path: Path,
                                   monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    github.grant("alice", role)
    run_dispatch(repo, github, comment_event(f"/run-benchmark cfg-b-mi355x-sglang sha={repo.head}"), tmp_path,
                 monkeypatch, capsys)
    assert [d["inputs"]["sha"] for d in github.dispatches] == [repo.head]


def test_changelog_selects_the_appended_entries(repo: Repo, github: FakeGitHub, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    run_dispatch(repo, github, comment_event("  /run-benchmark changelog evals"), tmp_path, monkeypatch, capsys)
    assert len(github.dispatches) == 1
    selection = json.loads(github.dispatches[0]["inputs"]["selection"])
    assert selection["targets"] == [{"config-key": "cfg-c-mi355x-agentic", "scenarios": ["agentic-coding"]}]
    assert selection["evals"] is True and selection["jobs"] == 2 and selection["mode"] == "changelog"


def test_allowlisted_user_without_write_dispatches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    with configured(tmp_path, "dispatch:\n  allow-users: [Carol]\n  workflow: bench.yml\n") as (repo, fake):
        fake.grant("carol", "read")
        run_dispatch(repo, fake, comment_event("/run-benchmark cfg-a-mi355x-atom", login="carol"), tmp_path,
                     monkeypatch, capsys)
        assert [(d["workflow"], d["inputs"]["requester"]) for d in fake.dispatches] == [("bench.yml", "carol")]
        # The allowlist answers without asking GitHub for the permission.
        assert "repos/get-collaborator-permission-level" not in fake.operations()


def test_allowed_fork_with_sha_dispatches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    with configured(tmp_path, "dispatch:\n  allow-forks: true\n", head_repo="mallory/Hello-World") as (repo, fake):
        fake.grant("alice", "admin")
        run = run_dispatch(repo, fake, comment_event("/run-benchmark cfg-a-mi355x-atom"), tmp_path, monkeypatch,
                           capsys)
        body = assert_refused(fake, run, "#1 comes from a fork, whose pushes GitHub does not record here; name the "
                              "commit you reviewed with `sha=` and its full 40-digit id, copied from that commit's "
                              f"page, not from this reply (the head is now `{repo.head[:12]}`).")
        # The reply must not hand out the head's full id: pasting it would authorise whatever was pushed last.
        assert repo.head not in body
        fake.comments.clear()
        run = run_dispatch(repo, fake, comment_event(f"/run-benchmark cfg-a-mi355x-atom sha={repo.head.upper()}"),
                           tmp_path, monkeypatch, capsys)
        assert [d["inputs"]["sha"] for d in fake.dispatches] == [repo.head]


def test_dry_run_replies_with_the_plan_and_dispatches_nothing(repo: Repo, github: FakeGitHub, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    run = run_dispatch(repo, github, comment_event("/run-benchmark cfg-* conc=64 dry-run"), tmp_path, monkeypatch,
                       capsys)
    assert github.dispatches == []
    assert run.output("outcome") == "planned"
    assert last_reply(github) == (
        f"{mark()}\n:mag: **Dry run** at `{repo.head}`: 2 job(s) of 3 config(s): `cfg-a-mi355x-atom`, "
        "`cfg-b-mi355x-sglang`, `cfg-c-mi355x-agentic`; filters `conc=64`. Nothing was dispatched.\n\n```text\n"
        "cfg-a-mi355x-atom fixed-seq-len 1024/1024 TP4/EP4 c64\ncfg-b-mi355x-sglang fixed-seq-len 8192/1024 TP8/EP1 "
        "c64\n```\n\nRemove `dry-run` to run them.\n")


def test_help_is_answered_for_anyone(repo: Repo, github: FakeGitHub, tmp_path: Path,
                                     monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    run = run_dispatch(repo, github, comment_event("/run-benchmark help", login="stranger"), tmp_path, monkeypatch,
                       capsys)
    assert run.output("outcome") == "help" and github.dispatches == []
    assert last_reply(github).startswith(mark("stranger") + "\n**`/run-benchmark`** runs benchmark jobs")


@pytest.mark.parametrize(("login", "user_type"), [("mallory", "User"), ("other-app[bot]", "Bot")])
def test_rerun_of_the_same_event_updates_only_its_own_reply(login: str, user_type: str, repo: Repo,
                                                            github: FakeGitHub, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    # Pasting the marker, as a person or as another app's bot, does not make a comment ours to overwrite.
    github.comments[PR] = [github._new_comment(PR, mark() + "\nfake")]
    github.comments[PR][0]["user"].update(login=login, type=user_type)
    event = comment_event("/run-benchmark cfg-nothing-*")
    run_dispatch(repo, github, event, tmp_path, monkeypatch, capsys)
    run_dispatch(repo, github, event, tmp_path, monkeypatch, capsys)
    ours = [c for c in github.comments[PR] if c["user"]["login"] == "github-actions[bot]"]
    assert len(ours) == 1 and github.comments[PR][0]["body"] == mark() + "\nfake"
    assert ours[0]["body"].startswith(mark() + "\n:confused: **Not running benchmarks:** the command selects nothing")
    assert github.operations().count("issues/create-comment") == 1
    assert github.operations().count("issues/update-comment") == 1


def test_replies_are_recognised_by_the_configured_bot_login(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    with configured(tmp_path, "dispatch:\n  bot-login: bench-app[bot]\n") as (repo, fake):
        fake.grant("alice", "write")
        fake.bot_login = "bench-app[bot]"
        # A reply of the default bot is not this repository's bot's reply.
        fake.comments[PR] = [fake._new_comment(PR, mark() + "\nfrom another bot")]
        fake.comments[PR][0]["user"]["login"] = "github-actions[bot]"
        event = comment_event("/run-benchmark cfg-nothing-*")
        run_dispatch(repo, fake, event, tmp_path, monkeypatch, capsys)
        run_dispatch(repo, fake, event, tmp_path, monkeypatch, capsys)
        assert [c["user"]["login"] for c in fake.comments[PR]] == ["github-actions[bot]", "bench-app[bot]"]
        assert fake.comments[PR][0]["body"] == mark() + "\nfrom another bot"
        assert fake.operations().count("issues/update-comment") == 1


# -- adversarial: never a dispatch ------------------------------------------------------------------


@pytest.mark.parametrize(("role", "shown"), [("read", "read"), ("triage", "triage"), (None, "none")])
def test_insufficient_permission_is_refused(role: str | None, shown: str, repo: Repo, github: FakeGitHub,
                                            tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    github.permissions.clear()
    if role:
        github.grant("alice", role)
    run = run_dispatch(repo, github, comment_event("/run-benchmark cfg-a-*"), tmp_path, monkeypatch, capsys)
    body = assert_refused(github, run)
    assert body == (f"{mark()}\n:confused: **Not running benchmarks:** `alice` has `{shown}` permission "
                    "on Codertocat/Hello-World; dispatching benchmarks needs `write` or higher\n")
    assert "pulls/get" not in github.operations()


@pytest.mark.parametrize(("login", "user_type"), [("dependabot[bot]", "Bot"), ("github-actions[bot]", "User"),
                                                 ("renovate", "Bot")])
def test_bots_are_ignored_without_any_request(login: str, user_type: str, repo: Repo, github: FakeGitHub,
                                              tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    run = run_dispatch(repo, github, comment_event("/run-benchmark cfg-a-*", login=login, user_type=user_type),
                       tmp_path, monkeypatch, capsys)
    assert run.output("outcome") == "ignored"
    assert github.requests == []


@pytest.mark.parametrize(("pull", "fragment"), [
    ({"head_repo": "mallory/Hello-World"}, "the head of #1 comes from `mallory/Hello-World`; benchmarks run on "
                                           "self-hosted runners, so pull requests from forks are not run here"),
    # A fork deleted after the pull request was opened: GitHub reports `head.repo: null`.
    ({"head_repo_deleted": True}, "the head of #1 comes from a deleted fork; benchmarks run on self-hosted runners"),
    ({"draft": True}, "pull request #1 is a draft; mark it ready for review first."),
    ({"state": "closed"}, "pull request #1 is closed; only open pull requests are benchmarked."),
    ({"state": "closed", "merged": True}, "pull request #1 is merged;"),
])
def test_pull_request_state_is_refused(pull: dict[str, Any], fragment: str, repo: Repo, github: FakeGitHub,
                                       tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    github.add_pull(PR, repo.head, repo.base, **pull)
    run = run_dispatch(repo, github, comment_event(f"/run-benchmark cfg-a-* sha={repo.head}"), tmp_path,
                       monkeypatch, capsys)
    assert_refused(github, run, fragment)


def test_edited_comment_is_not_acted_on(repo: Repo, github: FakeGitHub, tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    run = run_dispatch(repo, github, comment_event("/run-benchmark cfg-a-*", action="edited"), tmp_path,
                       monkeypatch, capsys)
    assert_refused(github, run, "this comment was edited; commands in edited comments are not acted on. "
                                "Write the command in a new comment.")
    assert github.operations() == ["reactions/create-for-issue-comment", "issues/list-comments",
                                   "issues/create-comment"]


def test_edited_comment_that_is_no_command_is_ignored(repo: Repo, github: FakeGitHub, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    run = run_dispatch(repo, github, comment_event("LGTM", action="edited"), tmp_path, monkeypatch, capsys)
    assert run.output("outcome") == "ignored" and github.requests == []


def test_comment_on_an_issue_is_refused(repo: Repo, github: FakeGitHub, tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    run = run_dispatch(repo, github, comment_event("/run-benchmark cfg-a-*", on_pull_request=False), tmp_path,
                       monkeypatch, capsys)
    assert_refused(github, run, "#1 is an issue, not a pull request")
    assert "pulls/get" not in github.operations()


def test_sha_mismatch_is_refused(repo: Repo, github: FakeGitHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    run = run_dispatch(repo, github, comment_event(f"/run-benchmark cfg-a-* sha={repo.base}"), tmp_path,
                       monkeypatch, capsys)
    body = assert_refused(github, run, f"the comment names `sha={repo.base[:12]}...`, but the head of #1 is "
                                       f"`{repo.head[:12]}`. Review the new commits and comment again with the "
                                       "commit you reviewed.")
    assert repo.head not in body


@pytest.mark.parametrize(("body", "fragments"), [
    ("/run-benchmark cfg-a-* $(touch /tmp/pwned); rm -rf ~",
     ["- `$(touch` is not a word this command accepts", "- `/tmp/pwned);` is not a word", "- `~` is not a word"]),
    ("/run-benchmark cfg-a-*`id`", ["- `cfg-a-*\\u0060id\\u0060` is not a word this command accepts"]),
    ("/run-benchmark ${{ secrets.GITHUB_TOKEN }}", ["- `${{` is not a word", "- `}}` is not a word"]),
    ("/run-benchmark cfg-a-* conc=4|id", ["- `conc=4|id`: expected `conc=` followed by up to 32 comma-separated"]),
    ("/run-benchmark cfg-a-*\u2028tp=8", ["- `cfg-a-*\\u2028tp=8` is not a word this command accepts"]),
    ("/run-benchmark\ncfg-a-*", ["- name what to run: one or more config-key globs"]),
    ("/run-benchmark cfg-a-* @octocat <img src=x>", ["- `@octocat` is not a word", "- `<img` is not a word"]),
])
def test_hostile_command_text_is_refused_without_echoing_it(body: str, fragments: list[str], repo: Repo,
                                                            github: FakeGitHub, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    run = run_dispatch(repo, github, comment_event(body), tmp_path, monkeypatch, capsys)
    reply = assert_refused(github, run, *fragments)
    assert not Path("/tmp/pwned").exists()
    assert "${{" not in run.outputs and "`id`" not in reply


def test_very_long_comment_is_refused_briefly(repo: Repo, github: FakeGitHub, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    body = "/run-benchmark " + "cfg-a-* " * 9000  # 72 KB on one line
    assert len(body.encode()) > 64 * 1024
    run = run_dispatch(repo, github, comment_event(body), tmp_path, monkeypatch, capsys)
    reply = assert_refused(github, run, "- the command line is 72014 characters long; at most 1000 are accepted")
    assert len(reply) < 1000


@pytest.mark.parametrize(("slash", "name"), [("\u2215", "U+2215 DIVISION SLASH"), ("\uff0f", "U+FF0F FULLWIDTH SOLIDUS"),
                                             ("\u2044", "U+2044 FRACTION SLASH")])
def test_lookalike_slashes_are_not_commands(slash: str, name: str, repo: Repo, github: FakeGitHub, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    run = run_dispatch(repo, github, comment_event(f"{slash}run-benchmark cfg-a-*"), tmp_path, monkeypatch, capsys)
    assert_refused(github, run, f"the first line only looks like a command.\n\n- this comment starts with {name}, "
                                "which only looks like `/`; commands start with the ASCII slash: /run-benchmark")
    assert github.operations() == ["reactions/create-for-issue-comment", "issues/list-comments",
                                   "issues/create-comment"]


@pytest.mark.parametrize("body", ["> /run-benchmark cfg-a-*", "```\n/run-benchmark cfg-a-*\n```",
                                  "    /run-benchmark cfg-a-*", "LGTM\n/run-benchmark cfg-a-*", ""])
def test_quoted_fenced_and_later_lines_are_ignored(body: str, repo: Repo, github: FakeGitHub, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    run = run_dispatch(repo, github, comment_event(body), tmp_path, monkeypatch, capsys)
    assert run.output("outcome") == "ignored"
    assert github.requests == []


def test_globs_matching_nothing_and_empty_filters_say_what_exists(repo: Repo, github: FakeGitHub, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    run = run_dispatch(repo, github, comment_event("/run-benchmark cfg-z-* cfg-a-mi355x-atm"), tmp_path,
                       monkeypatch, capsys)
    assert_refused(github, run, f"the command selects nothing that can run at `{repo.head[:12]}`.",
                   "- `cfg-z-*` matches none of the 3 config keys at the pinned revision (`*` is the only "
                   "wildcard and the whole key must match).",
                   "- `cfg-a-mi355x-atm` matches none of the 3 config keys at the pinned revision (`*` is the only "
                   "wildcard and the whole key must match). Closest config keys: `cfg-a-mi355x-atom`.",
                   "Accepted: `/run-benchmark KEY-GLOB")
    github.comments.clear()
    run = run_dispatch(repo, github, comment_event("/run-benchmark cfg-a-* tp=2 conc=4"), tmp_path, monkeypatch,
                       capsys)
    assert_refused(github, run, "- `conc=4 tp=2` leaves none of the 4 jobs of the selected configs; they offer: "
                                "scenario fixed-seq-len; tp 4,8; ep 1,4; conc 4,8,16,64")


def test_too_many_jobs_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    with configured(tmp_path, "dispatch:\n  max-jobs: 2\n") as (repo, fake):
        fake.grant("alice", "write")
        run = run_dispatch(repo, fake, comment_event("/run-benchmark cfg-a-*"), tmp_path, monkeypatch, capsys)
        assert_refused(fake, run, "the command selects 4 jobs; at most 2 can be dispatched at once")


def test_unknown_pinned_commit_is_refused(repo: Repo, github: FakeGitHub, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    github.add_pull(PR, "c" * 40, repo.base)
    run = run_dispatch(repo, github, comment_event("/run-benchmark cfg-a-*"), tmp_path, monkeypatch, capsys)
    assert_refused(github, run, f"the pinned commit `{'c' * 40}` could not be read: unknown revision")


def test_github_failure_is_reported_without_traceback(repo: Repo, tmp_path: Path) -> None:
    event = tmp_path / "event.json"
    event.write_text(json.dumps(comment_event("/run-benchmark cfg-a-*")))
    env = {**os.environ, "GITHUB_API_URL": "http://127.0.0.1:9", "GITHUB_TOKEN": "t"}
    env.pop("GITHUB_OUTPUT", None)
    proc = subprocess.run([sys.executable, "-m", "ci_tools", "dispatch", "comment", "--repo", str(repo.root),
                           "--event", str(event), "--no-fetch", "--attempts", "1"], env=env, capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 3
    assert "Traceback" not in proc.stderr
    assert proc.stderr.startswith("ci-tools: error: GitHub API: POST /repos/Codertocat/Hello-World/issues/comments/"
                                  "492700400/reactions failed after 1 attempts: could not connect")


def test_deleted_command_comment_is_ignored_without_requests(repo: Repo, github: FakeGitHub, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    run = run_dispatch(repo, github, comment_event("/run-benchmark cfg-a-*", action="deleted"), tmp_path,
                       monkeypatch, capsys)
    assert run.output("outcome") == "ignored" and github.requests == []


def test_api_failure_midway_is_told_to_the_commenter(repo: Repo, github: FakeGitHub) -> None:
    github.scripted.append(Scripted("pulls/get", 500, body={"message": "boom"}))
    client = GitHubClient(github.repository, api_url=github.url, token="t", retry=RetryPolicy(attempts=1))
    dispatcher = Dispatcher(client, DispatchPolicy(), GitRevisions(load_config(repo.root), fetch=False))
    with pytest.raises(GitHubError):
        dispatcher.handle(parse_event(comment_event("/run-benchmark cfg-a-*")))
    assert github.dispatches == [] and github.violations == []
    assert github.reactions == [(COMMENT_ID, "eyes"), (COMMENT_ID, "confused")]
    assert last_reply(github) == (f"{mark()}\n:confused: **Not running benchmarks:** a GitHub API request "
                                  "failed: GET /repos/Codertocat/Hello-World/pulls/1 failed after 1 attempts: HTTP 500 "
                                  "(boom). A maintainer can re-run the workflow.\n")


def test_failed_reply_after_dispatch_is_not_a_refusal(repo: Repo, github: FakeGitHub) -> None:
    github.scripted.append(Scripted("issues/list-comments", 500, body={"message": "boom"}))
    client = GitHubClient(github.repository, api_url=github.url, token="t", retry=RetryPolicy(attempts=1))
    dispatcher = Dispatcher(client, DispatchPolicy(), GitRevisions(load_config(repo.root), fetch=False))
    outcome = dispatcher.handle(parse_event(comment_event("/run-benchmark cfg-b-*")))
    assert outcome.status == "dispatched" and len(github.dispatches) == 1
    assert outcome.reason == (f"2 jobs at {repo.head}; pinned: head of `new-topic` since it was created to "
                              f"`{repo.head[:12]}` by `octocat` at 2026-01-02T00:00:00+00:00 (the reply could not be "
                              "written: GET /repos/Codertocat/Hello-World/issues/1/comments failed after 1 attempts: "
                              "HTTP 500 (boom))")
    assert github.reactions == [(COMMENT_ID, "eyes"), (COMMENT_ID, "rocket")]


_WORDS = st.sampled_from(["cfg-a-*", "cfg-b-mi355x-sglang", "cfg-*", "nothing-*", "conc=4", "conc=64,16", "tp=8",
                          "tp=2", "ep=4", "scenario=agentic-coding", "evals", "dry-run", "changelog", "help",
                          "$(id)", "`id`", "${{ github.token }}", "; rm -rf /", "\u2215", "\u00a0", "\u200b", "|",
                          "sha=" + "0" * 40])


@pytest.fixture(scope="module")
def shared_fake(repo: Repo) -> Iterator[FakeGitHub]:
    fake = FakeGitHub().start()
    yield fake
    fake.stop()


@settings(max_examples=25, deadline=None)
@given(prefix=st.sampled_from(["/run-benchmark", " /run-benchmark", "\uff0frun-benchmark", "> /run-benchmark"]),
       words=st.lists(_WORDS, max_size=6), tail=st.sampled_from(["", "\r\n/run-benchmark cfg-*", "\n`x`"]))
def test_any_command_dispatches_at_most_once_and_only_validated_data(repo: Repo, shared_fake: FakeGitHub,
                                                                      prefix: str, words: list[str],
                                                                      tail: str) -> None:
    fake = shared_fake
    fake.reset()
    fake.grant("alice", "write")
    fake.add_pull(PR, repo.head, repo.base)
    client = GitHubClient(fake.repository, api_url=fake.url, token="t", retry=RetryPolicy(attempts=1))
    dispatcher = Dispatcher(client, DispatchPolicy(), GitRevisions(load_config(repo.root), fetch=False))
    outcome = dispatcher.handle(parse_event(comment_event(" ".join([prefix, *words]) + tail)))
    client.close()
    assert fake.violations == []
    assert len(fake.dispatches) == (1 if outcome.status == "dispatched" else 0)
    if fake.dispatches:
        inputs = fake.dispatches[0]["inputs"]
        assert inputs["sha"] == repo.head and inputs["requester"] == "alice" and inputs["pr"] == "1"
        selection = selection_from_json(inputs["selection"])
        assert {t.config_key for t in selection.targets} <= {"cfg-a-mi355x-atom", "cfg-b-mi355x-sglang",
                                                             "cfg-c-mi355x-agentic"}
    for comment in fake.comments.get(PR, []):
        # Comment words are quoted escaped: nothing invisible or look-alike survives into a reply.
        assert all(" " <= ch <= "~" or ch == "\n" for ch in comment["body"])
