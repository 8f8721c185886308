"""What every benchmark here needs: timing a process with its peak memory, git, another ci-tools build.

Each benchmark is a script run by hand (``.venv/bin/python bench/<name>.py``);
these helpers keep the measuring the same everywhere: wall time from the
parent, peak RSS from ``wait4``, medians over runs.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
FULL_CORPUS = SHARED / "corpus" / "inferencex-843c625-full"
GIT_ENV = {**os.environ, "GIT_AUTHOR_NAME": "Bench", "GIT_AUTHOR_EMAIL": "bench@example.invalid",
           "GIT_COMMITTER_NAME": "Bench", "GIT_COMMITTER_EMAIL": "bench@example.invalid",
           "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}


def git(repo: Path, *args: str, stdin: bytes | None = None) -> str:
    done = subprocess.run(["git", "-C", str(repo), "-c", "commit.gpgsign=false", *args], input=stdin,
                          capture_output=True, env=GIT_ENV, check=True)
    return done.stdout.decode().strip()


def timed(cmd: list[str], cwd: Path, env: dict[str, str] | None = None, ok: tuple[int, ...] = (0, 1)) -> tuple[float, int]:
    """Wall time (s) and peak RSS (KiB) of one process; an unexpected exit code stops the benchmark."""
    elapsed, _, rss = timed_cpu(cmd, cwd, env, ok)
    return elapsed, rss


def timed_cpu(cmd: list[str], cwd: Path, env: dict[str, str] | None = None,
              ok: tuple[int, ...] = (0, 1)) -> tuple[float, float, int]:
    """Wall time (s), CPU time (s, user + system, the process and the children it waited for) and peak RSS
    (KiB, of the largest of them) of one process; an unexpected exit code stops the benchmark."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    if code not in ok:
        err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
        raise SystemExit(f"{' '.join(cmd)} exited {code}: {err[-2000:]}")
    return elapsed, usage.ru_utime + usage.ru_stime, usage.ru_maxrss


def measure(cmd: list[str], cwd: Path, runs: int, env: dict[str, str] | None = None) -> tuple[float, int]:
    """Median wall time over ``runs`` and the largest peak RSS."""
    times, rss = [], 0
    for _ in range(runs):
        t, r = timed(cmd, cwd, env)
        times.append(t)
        rss = max(rss, r)
    return statistics.median(times), rss


def ci_tools_at(rev: str, dest: Path) -> list[str]:
    """A command line running ci-tools as it was at ``rev`` of this repository (same interpreter, same libraries).

    ``-P``: without it Python puts the working directory first on the path, and a benchmark started from
    this repository's root would run this build's ci_tools under the baseline's name.
    """
    git(ROOT, "worktree", "add", "-q", "--detach", "--force", str(dest), rev)
    return ["env", f"PYTHONPATH={dest}", sys.executable, "-P", "-m", "ci_tools"]


def committed_tree(dest: Path, source: Path = FULL_CORPUS) -> str:
    """A git repository at ``dest`` holding ``source`` without its oracles (``expected/``), committed once;
    returns the commit's id."""
    shutil.copytree(source, dest, ignore=shutil.ignore_patterns("expected"))
    for path in [dest, *dest.rglob("*")]:
        path.chmod(path.stat().st_mode | 0o200)
    git(dest, "init", "-q")
    git(dest, "add", "-A")
    git(dest, "commit", "-q", "-m", "base")
    return git(dest, "rev-parse", "HEAD")


def drop_worktree(dest: Path) -> None:
    subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(dest)], capture_output=True, check=False)


def load_average() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())
