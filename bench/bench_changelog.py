"""Benchmark: the changelog gate and ``check`` on the real 772-entry changelog.

A throwaway git repository holds the corpus configs and two commits: the
changelog without its last entry (base), then the whole file (head), the
shape of a typical PR.  Each command runs as a whole ``ci-tools`` process;
the report gives the median wall time of several runs and the peak RSS, next
to a baseline measured in the same run: the naive gate (``git show`` of both
revisions in subprocesses, a full ``yaml.safe_load`` of each, entry-by-entry
comparison), which is how a gate without a byte-level fast path works.

Large appends (``--large``): the full InferenceX tree (../shared/corpus/
inferencex-843c625-full) committed once, then copies of its whole history
appended in the work tree, ``--base HEAD`` (the shape of the report that
``check`` ran over 500 s on a 50 MB append).  For 0.5 to 8 MiB appended, with
``limits.max-file-bytes`` raised so that the gate reads everything, the table
gives ``changelog lint`` and ``check`` beside the naive gate, and CPU seconds
per MiB appended (constant when the gate is linear).  Then a 50 MB append
with the default limits: one `file-too-large` finding, beside the naive gate
on the same file.

Run: ``.venv/bin/python bench/bench_changelog.py [--runs N] [--large] [--ci-tools PATH]``.
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

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchlib import committed_tree  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus" / "inferencex-843c625"
FULL_CORPUS = ROOT.parent / "shared" / "corpus" / "inferencex-843c625-full"
MIB = 1024 * 1024
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
loader = yaml.CSafeLoader if head_rev == "WORKTREE" else yaml.SafeLoader
base = yaml.load(show(base_rev), Loader=loader)
head = yaml.load(open("perf-changelog.yaml", "rb") if head_rev == "WORKTREE" else show(head_rev), Loader=loader)
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


def build_full_repo(tmp: Path) -> Path:
    """The full real tree, committed once (no oracles)."""
    repo = tmp / "full"
    committed_tree(repo, FULL_CORPUS)
    return repo


def append_history(repo: Path, history: bytes, size: int) -> int:
    """Write the changelog with whole copies of its entries appended until ``size`` bytes are added."""
    body = history[history.index(b"\n- config-keys:") + 1:]
    grown = bytearray(history)
    while len(grown) - len(history) < size:
        grown += b"\n" + body
    (repo / "perf-changelog.yaml").write_bytes(bytes(grown))
    return len(grown) - len(history)


def large(args: argparse.Namespace) -> None:
    tool = args.ci_tools
    with tempfile.TemporaryDirectory() as tmp:
        repo = build_full_repo(Path(tmp))
        history = (repo / "perf-changelog.yaml").read_bytes()
        # The naive gate on the work tree, with libyaml's C loader (the pure-Python one takes minutes here).
        naive = [sys.executable, "-c", NAIVE_GATE, "HEAD", "WORKTREE"]
        print(f"\nlarge appends to the real {len(history):,}-byte changelog, --base HEAD, work tree head, "
              f"{args.large_runs} run(s) each; limits.max-file-bytes raised to 1 GiB so that everything is read")
        print(f"{'appended MiB':>12} | {'lint wall s':>11} {'cpu s':>6} {'cpu s/MiB':>9} {'RSS MiB':>8} | "
              f"{'check wall s':>12} {'cpu s':>6} {'RSS MiB':>8} | {'naive wall s':>12} {'cpu s':>6} {'RSS MiB':>8}")
        (repo / ".ci-tools.yaml").write_text("limits:\n  max-file-bytes: 1073741824\n", encoding="utf-8")
        for mib in (0.5, 1, 2, 4, 8):
            added = append_history(repo, history, int(mib * MIB))
            lint = measure([tool, "changelog", "lint", "--base", "HEAD"], repo, args.large_runs)
            check = measure([tool, "check", "--base", "HEAD"], repo, args.large_runs)
            base = measure(naive, repo, args.large_runs)
            print(f"{added / MIB:>12.2f} | {lint[0]:>11.2f} {lint[2]:>6.2f} {lint[2] / (added / MIB):>9.2f} "
                  f"{lint[3] / 1024:>8.0f} | {check[0]:>12.2f} {check[2]:>6.2f} {check[3] / 1024:>8.0f} | "
                  f"{base[0]:>12.2f} {base[2]:>6.2f} {base[3] / 1024:>8.0f}")
        (repo / ".ci-tools.yaml").unlink()
        added = append_history(repo, history, 50 * 1000 * 1000)
        print(f"\n{added / 1e6:.0f} MB appended, default limits (max-file-bytes 8 MiB): one file-too-large finding")
        for name, argv in (("changelog lint", [tool, "changelog", "lint", "--base", "HEAD"]),
                           ("check", [tool, "check", "--base", "HEAD"]),
                           ("validate", [tool, "validate"]),
                           ("baseline: naive gate", naive)):
            wall, _fastest, cpu, rss = measure(argv, repo, args.large_runs)
            print(f"{name:<22} wall {wall:>7.2f}s  cpu {cpu:>7.2f}s  peak RSS {rss / 1024:>7.0f} MiB")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument("--large", action="store_true", help="Also measure appends of 0.5 MiB to 50 MB (minutes).")
    parser.add_argument("--large-runs", type=int, default=3, help="Runs per measurement of --large.")
    parser.add_argument("--ci-tools", default=str(CI_TOOLS),
                        help="ci-tools executable to measure (default: the one beside this Python)")
    args = parser.parse_args()
    if not CORPUS.is_dir() or (args.large and not FULL_CORPUS.is_dir()):
        print(f"corpus not found at {CORPUS} / {FULL_CORPUS}", file=sys.stderr)
        return 2
    failed = _typical(args)
    if args.large:
        large(args)
    return 1 if failed else 0


def _typical(args: argparse.Namespace) -> bool:
    with tempfile.TemporaryDirectory() as tmp:
        repo, base, head = build_repo(Path(tmp))
        rows = [
            ("changelog lint", [args.ci_tools, "changelog", "lint", "--base", base, "--head", head]),
            ("check", [args.ci_tools, "check", "--base", base, "--head", head]),
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
    return failed


if __name__ == "__main__":
    sys.exit(main())
