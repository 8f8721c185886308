"""The real InferenceX tree as a git repository: committed once per test session, cloned per test.

A clone shares the objects of the session's repository, so a test that
edits files pays for a checkout, not for committing 800 files again.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conftest import full_corpus_dir
from test_changelog_support import git


@pytest.fixture(scope="session")
def real_origin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One commit holding the real tree (without the oracles in expected/) on branch main."""
    dest = tmp_path_factory.mktemp("inferencex") / "origin"
    shutil.copytree(full_corpus_dir(), dest, ignore=shutil.ignore_patterns("expected"))
    for path in [dest, *dest.rglob("*")]:
        path.chmod(path.stat().st_mode | 0o200)
    git(dest, "init", "-q", "-b", "main")
    git(dest, "add", "-A")
    git(dest, "commit", "-q", "-m", "InferenceX at 843c6254f")
    return dest


@pytest.fixture
def real_repo(real_origin: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A writable clone of :func:`real_origin` (``origin/main`` is its only commit), outside GitHub Actions."""
    for name in ("GITHUB_ACTIONS", "GITHUB_EVENT_PATH", "GITHUB_EVENT_NAME", "GITHUB_REPOSITORY", "GITHUB_STEP_SUMMARY"):
        monkeypatch.delenv(name, raising=False)
    dest = tmp_path / "ix"
    git(tmp_path, "clone", "-q", "--shared", str(real_origin), str(dest))
    return dest
