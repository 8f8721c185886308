"""Throwaway git repositories for the changelog, coverage and check tests.

Commits use a pinned identity and date and never sign, so every run builds
the same history.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from ci_tools.cli.main import main

GITHUB_VARIABLES = ("GITHUB_ACTIONS", "GITHUB_EVENT_PATH", "GITHUB_EVENT_NAME", "GITHUB_REPOSITORY", "GITHUB_STEP_SUMMARY")

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Changelog Tests", "GIT_AUTHOR_EMAIL": "tests@example.invalid",
    "GIT_COMMITTER_NAME": "Changelog Tests", "GIT_COMMITTER_EMAIL": "tests@example.invalid",
    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
    "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
}

MASTER = b"""dsr1-fp8-mi355x-atom:
  image: rocm/atom:v1
  model: deepseek-ai/DeepSeek-R1-0528
  model-prefix: dsr1
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
"""
RUNNERS = b"labels:\n  mi355x:\n    - mi355x-amds_00\nhardware:\n  mi355x:\n    available-cpu-dram-mib: 3_095_781\n    gpus-per-node: 8\n"
E1 = b"""- config-keys:
    - dsr1-fp8-mi355x-atom
  description:
    - "Add the DeepSeek-R1 FP8 ATOM config"
  pr-link: https://github.com/acme/bench/pull/1
"""


def entry(key: str = "dsr1-fp8-mi355x-atom", desc: str = "Raise the range", link: str = "https://github.com/acme/bench/pull/3",
          extra: str = "") -> bytes:
    return (f"- config-keys:\n    - {key}\n  description:\n    - \"{desc}\"\n  pr-link: {link}\n{extra}").encode()


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main", *args],
                          cwd=repo, env={**os.environ, **GIT_ENV}, check=True, capture_output=True, text=True)
    return done.stdout.strip()


class Repo:
    """A git repository in a temporary directory, with helpers to write, commit and run ci-tools."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.mkdir(parents=True, exist_ok=True)
        git(path, "init", "-q")

    def write(self, files: dict[str, bytes | None]) -> None:
        for rel, data in files.items():
            target = self.path / rel
            if data is None:
                target.unlink(missing_ok=True)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)

    def commit(self, files: dict[str, bytes | None], message: str = "change") -> str:
        self.write(files)
        git(self.path, "add", "-A")
        git(self.path, "commit", "-q", "--allow-empty", "-m", message)
        return git(self.path, "rev-parse", "HEAD")


def base_files(changelog: bytes | None = E1, master: bytes = MASTER) -> dict[str, bytes | None]:
    return {
        ".ci-tools.yaml": b"repository: acme/bench\n",
        "configs/amd-master.yaml": master,
        "configs/runners.yaml": RUNNERS,
        "perf-changelog.yaml": changelog,
        "benchmarks/benchmark_lib.sh": b"#!/usr/bin/env bash\n",
        "benchmarks/single_node/fixed_seq_len/dsr1_fp8_mi355x_atom.sh":
            b'#!/usr/bin/env bash\nsource "$(dirname "$0")/../../benchmark_lib.sh"\n'
            b'python3 -m atom.entrypoints.openai_server --model "$MODEL" --port "$PORT" -tp "$TP"\n',
    }


def run(argv: list[str], capsys: object) -> tuple[int, str, str]:
    """Run the CLI in-process; returns (exit code, stdout, stderr)."""
    code = main(argv)
    captured = capsys.readouterr()  # type: ignore[attr-defined]
    return code, captured.out, captured.err


def clear_github_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Run as outside GitHub Actions, whatever the environment of the test run."""
    for name in GITHUB_VARIABLES:
        monkeypatch.delenv(name, raising=False)


def new_repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, files: dict[str, bytes | None]) -> tuple[Repo, str]:
    """A repository outside GitHub Actions with ``files`` committed; returns it and that commit."""
    clear_github_env(monkeypatch)
    repo = Repo(tmp_path / "repo")
    return repo, repo.commit(files)
