"""Revisions a PR job cannot read: a bad --head, and the shallow clone actions/checkout makes by default.

Each case is a usage error (exit 2) that names the revision and says what to
fetch, never an internal error and never a quiet fall-back to validating the
head alone.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from test_changelog_support import E1, Repo, base_files, clear_github_env, entry, git, run

NEW = entry(link="https://github.com/acme/bench/pull/XXX")


@pytest.fixture
def history(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Repo:
    """main: base files, one appended entry; a branch `feature` one more commit ahead."""
    clear_github_env(monkeypatch)
    repo = Repo(tmp_path / "full")
    repo.commit(base_files())
    repo.commit({"perf-changelog.yaml": E1 + b"\n" + NEW})
    git(repo.path, "checkout", "-q", "-b", "feature")
    repo.commit({"README.md": b"feature\n"})
    git(repo.path, "checkout", "-q", "main")
    return repo


def shallow_clone(source: Repo, dest: Path, *args: str) -> Path:
    """What actions/checkout makes without `fetch-depth: 0`: one commit of history."""
    git(source.path.parent, "clone", "-q", "--depth", "1", *args, f"file://{source.path}", str(dest))
    return dest


def test_unknown_head_names_the_revision_and_the_option(history: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["check", "--repo", str(history.path), "--head", "nope"], capsys)
    assert (code, out) == (2, "")
    assert err.startswith("ci-tools: error: unknown revision 'nope' (given by --head): it is not in this repository")
    assert "no origin/main or main branch" not in err


def test_unknown_base_names_the_option(history: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["check", "--repo", str(history.path), "--base", "v9.9"], capsys)
    assert code == 2 and "unknown revision 'v9.9' (given by --base)" in err


def test_shallow_clone_with_base_head_minus_one_says_what_to_fetch(history: Repo, tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    clone = shallow_clone(history, tmp_path / "shallow")
    code, out, err = run(["check", "--repo", str(clone), "--base", "HEAD~1"], capsys)
    assert (code, out) == (2, "")
    assert "revision 'HEAD~1' (given by --base) names commit" in err
    assert "this clone is shallow and does not hold it" in err
    assert "`fetch-depth: 0` in actions/checkout" in err
    assert "internal error" not in err


def test_shallow_clone_with_a_base_beyond_its_boundary(history: Repo, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    clone = shallow_clone(history, tmp_path / "shallow")
    code, _, err = run(["check", "--repo", str(clone), "--base", "HEAD~2"], capsys)
    assert code == 2 and "shallow clone" in err and "fetch-depth: 0" in err


def test_shallow_branch_without_its_merge_base_is_refused(history: Repo, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    # Both branch tips, one commit deep: origin/main exists, the common history does not.
    clone = shallow_clone(history, tmp_path / "shallow", "--no-single-branch", "--branch", "feature")
    code, out, err = run(["check", "--repo", str(clone)], capsys)
    assert (code, out) == (2, "")
    assert "no merge-base of origin/main" in err and "this clone is shallow" in err and "fetch-depth: 0" in err


def test_claims_history_refuses_a_shallow_clone(history: Repo, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    clone = shallow_clone(history, tmp_path / "shallow")
    code, out, err = run(["claims", "--repo", str(clone), "--history", "--format", "json"], capsys)
    assert (code, out) == (2, "")
    assert "--history needs the changelog's history, but this clone is shallow" in err
    # In the full clone the same command runs (the entries here carry no checkable claim).
    code, out, _ = run(["claims", "--repo", str(history.path), "--history", "--format", "json"], capsys)
    assert code == 0 and '"total": 0' in out


def test_claims_history_since_a_commit_inside_the_clone_is_allowed(history: Repo, tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    clone = shallow_clone(history, tmp_path / "shallow")
    head = git(clone, "rev-parse", "HEAD")
    code, _, err = run(["claims", "--repo", str(clone), "--history", "--since", head, "--format", "json"], capsys)
    assert code == 0, err
