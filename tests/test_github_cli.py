"""`ci-tools dispatch parse`, step outputs, fetching the pinned commit, and the OpenAPI extraction script."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ci_tools.cli.main import main
from ci_tools.config import load_config
from ci_tools.errors import UsageError
from ci_tools.github.dispatch import GitRevisions
from ci_tools.github.outputs import format_outputs
from test_github_dispatch import Repo, _git, comment_event, make_repo

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import extract_openapi_ops  # noqa: E402


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Repo:
    return make_repo(tmp_path_factory.mktemp("cli") / "repo")


def test_parse_shows_the_understood_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["dispatch", "parse", "/run-benchmark dsr1-* conc=64 dry-run"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out == {"kind": "command", "command": {"action": "run", "globs": ["dsr1-*"], "conc": [64], "tp": [],
                                                  "ep": [], "scenario": None, "evals": False, "dry_run": True,
                                                  "sha": None, "baseline": False}}


def test_parse_reports_errors_and_non_commands(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["dispatch", "parse", "/run-benchmark x tp=0"]) == 1
    assert json.loads(capsys.readouterr().out)["problems"] == [
        "`tp=0`: expected `tp=` followed by up to 32 comma-separated positive integers, e.g. `tp=8` or `tp=48,64`"]
    assert main(["dispatch", "parse", "\uff0frun-benchmark x"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["kind"] == "not-a-command" and out["note"].startswith("this comment starts with U+FF0F")


def test_parse_against_a_revision(repo: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["dispatch", "parse", "--repo", str(repo.root), "--rev", repo.head, "--base", repo.base,
                 "/run-benchmark changelog"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    assert out["selection"]["targets"] == [{"config-key": "cfg-c-mi355x-agentic", "scenarios": ["agentic-coding"]}]
    assert out["jobs"] == ["cfg-c-mi355x-agentic agentic-coding TP8/EP1 c8", "cfg-c-mi355x-agentic agentic-coding "
                           "TP8/EP1 c16"]


def test_outputs_use_a_random_delimiter_absent_from_the_value() -> None:
    text = format_outputs({"selection": '{"a":1}', "multi": "x\nghadelimiter_y\nz"})
    lines = text.split("\n")
    assert lines[0].startswith("selection<<ghadelimiter_") and lines[1] == '{"a":1}' and lines[2] == lines[0][11:]
    other = lines[3][len("multi<<"):]
    assert other not in "x\nghadelimiter_y\nz" and lines[4:7] == ["x", "ghadelimiter_y", "z"] and lines[7] == other
    assert format_outputs({"a": "1"}) != format_outputs({"a": "1"})
    with pytest.raises(ValueError):
        format_outputs({"bad name": "x"})


def test_comment_command_needs_a_token_and_an_event(repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("GITHUB_EVENT_PATH", raising=False)
    monkeypatch.delenv("GITHUB_EVENT_NAME", raising=False)
    assert main(["dispatch", "comment", "--repo", str(repo.root)]) == 2
    assert capsys.readouterr().err == ("ci-tools: error: no event: pass --event FILE or set GITHUB_EVENT_PATH "
                                       "(set inside GitHub Actions)\n")
    event = tmp_path / "e.json"
    event.write_text(json.dumps({"action": "created"}))
    assert main(["dispatch", "comment", "--repo", str(repo.root), "--event", str(event)]) == 2
    assert capsys.readouterr().err == (f"ci-tools: error: {event}: `repository.full_name` is None, expected str; "
                                       "is this an issue_comment event?\n")
    monkeypatch.setenv("GITHUB_EVENT_NAME", "push")
    assert main(["dispatch", "comment", "--repo", str(repo.root), "--event", str(event)]) == 2
    assert "this is a `push` event" in capsys.readouterr().err


@pytest.mark.parametrize("login", ["-alice", "al ice", "alice\n", "a" * 40, "alice[bot]x", "", "al/ice",
                                   "\u0430lice"])
def test_a_login_that_github_would_not_issue_is_a_usage_error(login: str, repo: Repo, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """The login is quoted in replies and markers: only GitHub's login alphabet is accepted, before any request."""
    event = tmp_path / "e.json"
    event.write_text(json.dumps(comment_event("/run-benchmark cfg-a-*", login=login)))
    monkeypatch.setenv("GITHUB_EVENT_NAME", "issue_comment")
    monkeypatch.setenv("GITHUB_TOKEN", "t")
    monkeypatch.setenv("GITHUB_API_URL", "http://127.0.0.1:9")  # nothing may be requested
    assert main(["dispatch", "comment", "--repo", str(repo.root), "--event", str(event), "--no-fetch"]) == 2
    assert capsys.readouterr().err == (f"ci-tools: error: {event}: `comment.user.login` is {login!r}, which is not "
                                       "a GitHub login\n")


@pytest.mark.parametrize("login", ["alice", "a", "A-1-b", "a" * 39, "dependabot[bot]"])
def test_logins_github_issues_are_accepted(login: str) -> None:
    from ci_tools.github.event import parse_event

    assert parse_event(comment_event("x", login=login)).login == login


def test_pinned_commit_is_fetched_by_sha_without_checkout(repo: Repo, tmp_path: Path) -> None:
    # A clone of the default branch only, as actions/checkout leaves it; the PR head lives on the remote.
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", "--single-branch", "--branch", "main", f"file://{repo.root}", str(clone)],
                   check=True, capture_output=True)
    _git(repo.root, "config", "uploadpack.allowAnySHA1InWant", "true")
    revisions = GitRevisions(load_config(clone))
    assert "cfg-c-mi355x-agentic" in revisions.load(repo.head).configs
    # Nothing was checked out: the work tree is still the default branch.
    assert "cfg-c" not in (clone / "configs" / "amd-master.yaml").read_text()
    with pytest.raises(UsageError):
        GitRevisions(load_config(clone), fetch=False).load("d" * 40)
    with pytest.raises(UsageError):
        revisions.load("HEAD; rm -rf /")


def _mini_spec() -> dict[str, Any]:
    ops: dict[str, dict[str, Any]] = {}
    for method, path in extract_openapi_ops.OPERATIONS:
        ops.setdefault(path, {})[method] = {
            "operationId": f"{method}{path}", "parameters": [{"$ref": "#/components/parameters/owner"}],
            "responses": {"200": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/a"}}}}}}
    return {"openapi": "3.0.3", "info": {"title": "t", "version": "1"}, "paths": ops,
            "components": {"parameters": {"owner": {"name": "owner", "in": "path", "schema": {"type": "string"}}},
                           "schemas": {"a": {"properties": {"b": {"$ref": "#/components/schemas/b"}}},
                                       "b": {"type": "string"}, "unused": {"type": "integer"}}}}


def test_extraction_keeps_only_used_operations_and_referenced_components() -> None:
    spec = _mini_spec()
    spec["paths"]["/other"] = {"get": {"operationId": "other"}}
    out = extract_openapi_ops.extract(spec)
    assert sorted(out["paths"]) == sorted({p for _, p in extract_openapi_ops.OPERATIONS})
    assert out["components"] == {"parameters": {"owner": spec["components"]["parameters"]["owner"]},
                                 "schemas": {"a": spec["components"]["schemas"]["a"], "b": {"type": "string"}}}


def test_checked_in_operations_are_self_contained() -> None:
    data = json.loads((ROOT / "tests" / "data" / "octokit" / "openapi-ops.json").read_text())
    assert data["info"]["version"] == "23.0.2"
    refs: set[str] = set()
    extract_openapi_ops._refs(data, refs)
    for ref in refs:
        extract_openapi_ops._resolve(data, ref)  # raises KeyError when a component is missing
    assert extract_openapi_ops.extract(data) == data
