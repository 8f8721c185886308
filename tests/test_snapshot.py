from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from ci_tools.errors import UsageError
from ci_tools.snapshot import GitSnapshot, WorkTreeSnapshot

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test", "GIT_AUTHOR_EMAIL": "test@example.invalid",
    "GIT_COMMITTER_NAME": "Test", "GIT_COMMITTER_EMAIL": "test@example.invalid",
    "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_SYSTEM": "/dev/null", "PATH": "/usr/bin:/bin",
}


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), "-c", "commit.gpgsign=false", *args],
                          check=True, capture_output=True, text=True, env=GIT_ENV).stdout.strip()


def test_git_and_work_tree_snapshots_read_the_same_interface(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q", "-b", "main")
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "a-master.yaml").write_text("one\n")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-qm", "base")
    (tmp_path / "configs" / "a-master.yaml").write_text("two\n")
    (tmp_path / "configs" / "b-master.yaml").write_text("new\n")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-qm", "head")
    base = GitSnapshot(tmp_path, "HEAD~1")
    head = GitSnapshot(tmp_path, "HEAD")
    work = WorkTreeSnapshot(tmp_path)
    assert base.read("configs/a-master.yaml") == b"one\n"
    assert head.read("configs/a-master.yaml") == b"two\n"
    assert base.read("configs/b-master.yaml") is None
    assert base.glob("configs/*-master.yaml") == ["configs/a-master.yaml"]
    assert head.glob("configs/*-master.yaml") == work.glob("configs/*-master.yaml") == [
        "configs/a-master.yaml", "configs/b-master.yaml"]
    assert head.sha == git(tmp_path, "rev-parse", "HEAD")


def test_unknown_revision_says_what_to_do(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q", "-b", "main")
    (tmp_path / "f").write_text("x")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-qm", "c")
    with pytest.raises(UsageError, match="unknown revision 'nope'.*fetch"):
        GitSnapshot(tmp_path, "nope")


def test_not_a_repository(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="is not a git repository"):
        GitSnapshot(tmp_path, "HEAD")
