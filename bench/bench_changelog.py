"""Benchmark: the changelog gate and ``check`` on the real 772-entry changelog.

A throwaway git repository holds the corpus configs and two commits: the
changelog without its last entry (base), then the whole file (head), the
shape of a typical PR.  Each command runs as a whole ``ci-tools`` process;
the report gives the median wall time of several runs and the peak RSS, next
to a baseline measured in the same run: the naive gate (``git show`` of both
revisions in subprocesses, a full ``yaml.safe_load`` of each, entry-by-entry
comparison), which is how a gate without a byte-level fast path works.

Run: ``.venv/bin/python bench/bench_changelog.py [--runs N]``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus" / "inferencex-843c625"
CI_TOOLS = Path(sys.executable).with_name("ci-tools")
GIT_ENV = {
    "GIT_AUTHOR_NAME": "Bench", "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_NAME": "Bench", "GIT_COMMITTER_EMAIL": "bench@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
}
TARGETS = {"changelog lint": 0.3, "check": 0.4}

NAIVE_GATE = r"""
import subprocess, sys, yaml
base_rev, head_rev = sys.argv[1], sys.argv[2]
def show(rev):
    return subprocess.run(["git", "show", f"{rev}:perf-changelog.yaml"], check=True, capture_output=True).stdout
base = yaml.safe_load(show(base_rev))
head = yaml.safe_load(show(head_rev))
if head[: len(base)] != base:
    sys.exit("history changed")
for entry in head[len(base):]:
    assert isinstance(entry.get("config-keys"), list) and entry.get("pr-link")
"""


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main", *args], cwd=repo,
                          env={**os.environ, **GIT_ENV}, check=True, capture_output=True, text=True).stdout.strip()


def build_repo(tmp: Path) -> tuple[Path, str, str]:
    repo = tmp / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    shutil.copytree(CORPUS / "configs", repo / "configs")
    (repo / ".ci-tools.yaml").write_text("repository: SemiAnalysisAI/InferenceX\n", encoding="utf-8")
    full = (CORPUS / "perf-changelog.yaml").read_bytes()
    last = full.rindex(b"\n- config-keys:") + 1
    (repo / "perf-changelog.yaml").write_bytes(full[:last])
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    base = git(repo, "rev-parse", "HEAD")
    (repo / "perf-changelog.yaml").write_bytes(full)
    git(repo, "commit", "-q", "-am", "append one entry")
    return repo, base, git(repo, "rev-parse", "HEAD")


def measure(argv: list[str], cwd: Path, runs: int) -> tuple[float, float, float, int]:
    """(median wall s, min wall s, median CPU s, peak RSS in KiB) of ``runs`` whole-process runs.

    CPU time (user + system) is shown too: on a shared machine it moves far
    less with the load than wall time does.
    """
    times: list[float] = []
    cpu: list[float] = []
    peak = 0
    # An installed tool has its bytecode compiled (pip does it); let the
    # warm-up run write it rather than timing the compiler on every run.
    env = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_") and k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    for _ in range(runs):
        start = time.perf_counter()
        proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)
        times.append(time.perf_counter() - start)
        code = os.waitstatus_to_exitcode(status)
        if code not in (0, 1):
            raise SystemExit(f"{' '.join(argv)} exited with {code}")
        peak = max(peak, usage.ru_maxrss)
        cpu.append(usage.ru_utime + usage.ru_stime)
    return statistics.median(times), min(times), statistics.median(cpu), peak


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=11)
    args = parser.parse_args()
    if not CORPUS.is_dir():
        print(f"corpus not found at {CORPUS}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        repo, base, head = build_repo(Path(tmp))
        rows = [
            ("changelog lint", [str(CI_TOOLS), "changelog", "lint", "--base", base, "--head", head]),
            ("check", [str(CI_TOOLS), "check", "--base", base, "--head", head]),
            ("baseline: naive gate (git show + yaml.safe_load x2)", [sys.executable, "-c", NAIVE_GATE, base, head]),
            ("baseline: python startup", [sys.executable, "-c", "pass"]),
        ]
        print(f"real changelog: {(CORPUS / 'perf-changelog.yaml').stat().st_size:,} bytes, base = head minus one entry, "
              f"{args.runs} runs each")
        print(f"load average: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
        print(f"{'command':<52} {'median s':>9} {'min s':>7} {'cpu s':>7} {'peak RSS MiB':>13} {'target s':>9}")
        failed = False
        for name, argv in rows:
            median, fastest, cpu, rss = measure(argv, repo, args.runs)
            target = TARGETS.get(name)
            mark = "" if target is None else (f"{target:>9.2f}" + ("" if median <= target else "  MISSED"))
            failed |= target is not None and median > target
            print(f"{name:<52} {median:>9.3f} {fastest:>7.3f} {cpu:>7.3f} {rss / 1024:>13.1f} {mark}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
