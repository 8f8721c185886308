"""The results store on an orphan branch: append-only, one manifest per sweep, written only for default-branch commits."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from ci_tools.results.point import Observation, PointKey
from ci_tools.results.store import Store, StoreError, check_writable, line, manifest_for


def _git(repo: Path, *args: str) -> str:
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.invalid", "PATH": "/usr/bin:/bin"}
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True, env=env).stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    _git(root, "init", "-q", "-b", "main")
    (root / "README").write_text("x\n")
    _git(root, "add", "README")
    _git(root, "commit", "-q", "-m", "one")
    return root


def _obs(key: PointKey, value: float, sha: str, day: int) -> Observation:
    return Observation(key, sha, f"2026-08-{day:02d}T00:00:00+00:00", "mi355x-amds_03", "n1", "img:1", True,
                       {"throughput_per_gpu": value, "interactivity": 40.0})


K1 = PointKey("dsr1-fp4-mi355x-sglang", "fixed-seq-len", 8192, 1024, 4, "tp4", "none", False)
K2 = PointKey("dsr1-fp4-mi355x-sglang", "fixed-seq-len", 8192, 1024, 8, "tp4", "none", False)


def test_append_read_and_append_only(repo: Path) -> None:
    store = Store(repo)
    assert store.read() == {} and store.head() is None
    first = [_obs(K1, 100.0, "a" * 40, 1), _obs(K2, 180.0, "a" * 40, 1)]
    c1 = store.append(first, manifest_for(first, "run-1", "a" * 40, first[0].date))
    assert c1 is not None
    second = [_obs(K1, 101.0, "b" * 40, 2)]
    c2 = store.append(second, manifest_for(second, "run-2", "b" * 40, second[0].date, "https://x/runs/2"))
    assert c2 is not None and _git(repo, "rev-parse", f"{c2}^").strip() == c1
    assert store.append(second, manifest_for(second, "run-2", "b" * 40, second[0].date)) is None  # a re-run
    points = store.read()
    assert [o.metrics["throughput_per_gpu"] for o in points[K1]] == [100.0, 101.0]
    assert points[K2][0].runner == "mi355x-amds_03" and points[K2][0].key == K2
    assert store.read([K2]).keys() == {K2}
    assert [m.sweep for m in store.manifests()] == ["run-1", "run-2"]
    # The branch is an orphan: it shares no history with main, and main did not move.
    assert _git(repo, "rev-list", "--count", "ci-tools-results").strip() == "2"
    assert _git(repo, "branch", "--show-current").strip() == "main"
    # Each point file only grew: the first commit's content is a prefix of the second's.
    path = f"points/{K1.slug()}.jsonl"
    old, new = _git(repo, "show", f"{c1}:{path}"), _git(repo, "show", f"{c2}:{path}")
    assert new.startswith(old) and new[len(old):] == line(second[0])
    manifest = json.loads(_git(repo, "show", f"{c2}:{store.manifests()[1].path}"))
    assert manifest["run_url"] == "https://x/runs/2" and manifest["points"] == 1


def test_files_are_never_replaced(repo: Path) -> None:
    store = Store(repo)
    store.add_files({"plots/abc/a.png": b"\x89PNG"}, "plots")
    with pytest.raises(StoreError, match="plots/abc/a.png: already in the store"):
        store.add_files({"plots/abc/a.png": b"other"}, "plots")


def test_a_broken_line_is_named(repo: Path) -> None:
    store = Store(repo)
    store.add_files({f"points/{K1.slug()}.jsonl": b'{"key": 1}\n'}, "bad")
    with pytest.raises(StoreError, match=rf"points/{K1.slug()}\.jsonl:1: not a store line"):
        store.read()


def test_only_default_branch_commits_are_written(repo: Path) -> None:
    main = _git(repo, "rev-parse", "HEAD").strip()
    _git(repo, "checkout", "-q", "-b", "pr")
    (repo / "f").write_text("pr\n")
    _git(repo, "add", "f")
    _git(repo, "commit", "-q", "-m", "pr")
    pr = _git(repo, "rev-parse", "HEAD").strip()
    check_writable(repo, main, "main")
    with pytest.raises(StoreError, match=f"commit {pr[:12]} is not on the default branch"):
        check_writable(repo, pr, "main")
    with pytest.raises(StoreError, match="`origin/main` is not in"):
        check_writable(repo, main, "origin/main")
