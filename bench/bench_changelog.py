"""Benchmark: the changelog gate and ``check`` on the real 772-entry changelog.

A throwaway git repository holds the corpus configs and two commits: the
changelog without its last entry (base), then the whole file (head), the
shape of a typical PR.  Each command runs as a whole ``ci-tools`` process;
the report gives the median wall time of several runs and the peak RSS, next
to a baseline measured in the same run: the naive gate (``git show`` of both
revisions in subprocesses, a full ``yaml.safe_load`` of each, entry-by-entry
comparison), which is how a gate without a byte-level fast path works.

Large appends (``--large``): the full InferenceX tree (tests/data/
inferencex-843c625) committed once, then copies of its whole history
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
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchlib import (CORPUS, FULL_CORPUS, Table, bench_arguments, committed_tree, git, load_average,  # noqa: E402
                      measure, require, tool_env)

MIB = 1024 * 1024
TARGETS = {"changelog lint": 0.3, "check": 0.4}
ENV = tool_env()

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


def build_repo(tmp: Path) -> tuple[Path, str, str]:
    repo = tmp / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "configs").mkdir()
    for name in ("amd-master.yaml", "runners.yaml"):  # the AMD half of the configs, as this benchmark always measured
        shutil.copyfile(CORPUS / "configs" / name, repo / "configs" / name)
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
    table = Table(label_width=40)
    with tempfile.TemporaryDirectory() as tmp:
        repo = build_full_repo(Path(tmp))
        history = (repo / "perf-changelog.yaml").read_bytes()
        # The naive gate on the work tree, with libyaml's C loader (the pure-Python one takes minutes here).
        naive = [sys.executable, "-c", NAIVE_GATE, "HEAD", "WORKTREE"]
        print(f"\nlarge appends to the real {len(history):,}-byte changelog, --base HEAD, work tree head, "
              f"{args.large_runs} run(s) each; limits.max-file-bytes raised to 1 GiB so that everything is read")
        table.print_header()
        (repo / ".ci-tools.yaml").write_text("limits:\n  max-file-bytes: 1073741824\n", encoding="utf-8")
        for mib in (0.5, 1, 2, 4, 8):
            added = append_history(repo, history, int(mib * MIB))
            lint, check, base = (measure(argv, args.large_runs, repo, ENV) for argv in (
                [tool, "changelog", "lint", "--base", "HEAD"], [tool, "check", "--base", "HEAD"], naive))
            table.print_row(f"{added / MIB:.2f} MiB: changelog lint", lint, base,
                            f"{lint.cpu_s / (added / MIB):.2f} cpu s/MiB")
            table.print_row(f"{added / MIB:.2f} MiB: check", check, base)
            table.print_row(f"{added / MIB:.2f} MiB: baseline: naive gate", base)
        (repo / ".ci-tools.yaml").unlink()
        added = append_history(repo, history, 50 * 1000 * 1000)
        print(f"\n{added / 1e6:.0f} MB appended, default limits (max-file-bytes 8 MiB): one file-too-large finding")
        table.print_header()
        base = measure(naive, args.large_runs, repo, ENV)
        for name, argv in (("changelog lint", [tool, "changelog", "lint", "--base", "HEAD"]),
                           ("check", [tool, "check", "--base", "HEAD"]),
                           ("validate", [tool, "validate"])):
            table.print_row(name, measure(argv, args.large_runs, repo, ENV), base)
        table.print_row("baseline: naive gate", base)


def main() -> int:
    parser = bench_arguments(__doc__, runs=11, ci_tools=True)
    parser.add_argument("--large", action="store_true", help="Also measure appends of 0.5 MiB to 50 MB (minutes).")
    parser.add_argument("--large-runs", type=int, default=3, help="Runs per measurement of --large.")
    args = parser.parse_args()
    require(CORPUS, *([FULL_CORPUS] if args.large else []))
    failed = _typical(args)
    if args.large:
        large(args)
    return 1 if failed else 0


def _typical(args: argparse.Namespace) -> bool:
    table = Table()
    with tempfile.TemporaryDirectory() as tmp:
        repo, base, head = build_repo(Path(tmp))
        print(f"real changelog: {(CORPUS / 'perf-changelog.yaml').stat().st_size:,} bytes, base = head minus one entry, "
              f"{args.runs} runs each; {load_average()}")
        naive = measure([sys.executable, "-c", NAIVE_GATE, base, head], args.runs, repo, ENV)
        startup = measure([sys.executable, "-c", "pass"], args.runs, repo, ENV)
        table.print_header()
        failed = False
        for name, argv in (("changelog lint", [args.ci_tools, "changelog", "lint", "--base", base, "--head", head]),
                           ("check", [args.ci_tools, "check", "--base", base, "--head", head])):
            got = measure(argv, args.runs, repo, ENV)
            target = TARGETS[name]
            failed |= got.wall_s > target
            table.print_row(name, got, naive, f"target {target:.2f} s" + ("" if got.wall_s <= target else "  MISSED"))
        table.print_row("baseline: naive gate (git show + yaml.safe_load x2)", naive)
        table.print_row("baseline: python startup", startup)
    return failed


if __name__ == "__main__":
    sys.exit(main())
