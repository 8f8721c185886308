"""Benchmark: the claims checker on data of the real repository's size.

1. One appended entry: `ci-tools check --base BASE` on the real AMD master
   config (56 configs) and the real 772-entry changelog, with the seed PR's
   DSV4 AgentX change on top.  Baseline in the same run: the same check with
   the claims stage removed; the difference is what claims cost (target
   <= 0.2 s).  `ci-tools claims --base BASE` alone is shown too.
2. `ci-tools claims --history` over 800 changelog commits (each appends one
   real entry; every 40th also changes the recipe).  Baseline: reading and
   parsing the whole changelog once per commit with plain yaml.load (CSafeLoader),
   the least a naive replay must do.  Target: <= 120 s.
3. With ``--ix PATH`` (a clone of SemiAnalysisAI/InferenceX): `ci-tools check`
   of a real PR, ``--pr`` (default c31c9749a32b: the B300 AgentX KV-offload
   update, 44 jobs) against its parent, each stage timed inside the process;
   the claims stage reuses the recipe evaluations of the recipes stage.  Target:
   <= 0.5 s for the claims stage.

Run: .venv/bin/python bench/bench_claims.py [--runs N] [--commits N] [--ix PATH [--pr SHA]]
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

import yaml

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus" / "inferencex-843c625"
SEED = ROOT / "tests" / "data" / "claims_seed"
RECIPE = "benchmarks/single_node/agentic/dsv4_fp4_mi355x_atom_mtp.sh"
KEY = "dsv4-fp4-mi355x-atom-agentic-mtp"
ENV = {**os.environ, "GIT_AUTHOR_NAME": "Bench", "GIT_AUTHOR_EMAIL": "bench@example.invalid",
       "GIT_COMMITTER_NAME": "Bench", "GIT_COMMITTER_EMAIL": "bench@example.invalid",
       "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
# The whole check in one process, printing the wall time of the claims stage inside it.
STAGE_TIMER = (
    "import sys, time; from pathlib import Path; import ci_tools.check as c; from ci_tools.config import load_config; "
    "ctx = c.CheckContext(load_config(Path(sys.argv[1])), c.Comparison(sys.argv[2], None, None, None, '--base')); "
    "spent = {}\n"
    "for name, ref in c.STAGES:\n"
    "    t = time.perf_counter(); c._load_stage(ref)(ctx); spent[name] = time.perf_counter() - t\n"
    "print(spent['claims'], sum(spent.values()))"
)
WITHOUT_CLAIMS = (
    "import sys; import ci_tools.check as c; "
    "c.STAGES[:] = [s for s in c.STAGES if s[0] != 'claims']; "
    "from ci_tools.cli.main import main; sys.exit(main(sys.argv[1:]))"
)


def git(repo: Path, *args: str, stdin: bytes | None = None) -> str:
    done = subprocess.run(["git", "-C", str(repo), "-c", "commit.gpgsign=false", *args], input=stdin,
                          capture_output=True, env=ENV, check=True)
    return done.stdout.decode().strip()


def timed(cmd: list[str], cwd: Path) -> tuple[float, int]:
    """Wall time and peak RSS (KiB) of one process."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} exited {code}")
    return elapsed, usage.ru_maxrss


def measure(cmd: list[str], cwd: Path, runs: int) -> tuple[float, int]:
    times, rss = [], 0
    for _ in range(runs):
        t, r = timed(cmd, cwd)
        times.append(t)
        rss = max(rss, r)
    return statistics.median(times), rss


def real_size_repo(tmp: Path) -> tuple[Path, str]:
    repo = tmp / "one-entry"
    (repo / "configs").mkdir(parents=True)
    shutil.copyfile(CORPUS / "configs" / "amd-master.yaml", repo / "configs" / "amd-master.yaml")
    shutil.copyfile(CORPUS / "configs" / "runners.yaml", repo / "configs" / "runners.yaml")
    shutil.copyfile(CORPUS / "perf-changelog.yaml", repo / "perf-changelog.yaml")
    (repo / "benchmarks" / "single_node" / "agentic").mkdir(parents=True)
    shutil.copyfile(SEED / "common" / "benchmarks" / "benchmark_lib.sh", repo / "benchmarks" / "benchmark_lib.sh")
    shutil.copyfile(SEED / "base" / RECIPE, repo / RECIPE)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    base = git(repo, "rev-parse", "HEAD")
    # The seed change on top: the DEP band, the DEP recipe, the appended entry.
    master = (repo / "configs" / "amd-master.yaml").read_text()
    old_row = "{ tp: 8, ep: 1, dp-attn: false, kv-offloading: none, spec-decoding: mtp, conc-list: [1, 2, 4, 8, 16, 32, 48] }"
    new_rows = ("{ tp: 8, ep: 1, dp-attn: false, kv-offloading: none, spec-decoding: mtp, conc-list: [1, 2, 4, 8, 16] }\n"
                "      - { tp: 8, ep: 8, dp-attn: true, kv-offloading: none, spec-decoding: mtp, "
                "conc-list: [48, 64, 96, 128, 256] }")
    assert old_row in master
    (repo / "configs" / "amd-master.yaml").write_text(master.replace(old_row, new_rows))
    shutil.copyfile(SEED / "head" / RECIPE, repo / RECIPE)
    seed_log = (SEED / "head" / "perf-changelog.yaml").read_text()
    entry = seed_log[len((SEED / "base" / "perf-changelog.yaml").read_text()):]
    with (repo / "perf-changelog.yaml").open("a") as fh:
        fh.write(entry)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "head")
    return repo, base


def entry_blocks(text: str) -> list[str]:
    lines = text.splitlines(keepends=True)
    starts = [i for i, line in enumerate(lines) if line.startswith("- ")]
    return ["".join(lines[a:b]) for a, b in zip(starts, [*starts[1:], len(lines)])]


def history_repo(tmp: Path, commits: int) -> Path:
    """``commits`` commits, each appending one real entry, built with git fast-import."""
    repo = tmp / "history"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    blocks = entry_blocks((CORPUS / "perf-changelog.yaml").read_text())
    seed_entry = entry_blocks((SEED / "head" / "perf-changelog.yaml").read_text())[-1]
    files = {
        "configs/amd-master.yaml": (CORPUS / "configs" / "amd-master.yaml").read_bytes(),
        "configs/runners.yaml": (CORPUS / "configs" / "runners.yaml").read_bytes(),
        "benchmarks/benchmark_lib.sh": (SEED / "common" / "benchmarks" / "benchmark_lib.sh").read_bytes(),
        RECIPE: (SEED / "base" / RECIPE).read_bytes(),
    }
    # Streamed to fast-import: the whole history (800 changelogs of up to 400 KB) never sits in this process,
    # whose size a measured child would otherwise inherit in its peak RSS.
    importer = subprocess.Popen(["git", "-C", str(repo), "fast-import", "--quiet"], stdin=subprocess.PIPE, env=ENV)
    assert importer.stdin is not None
    stream = importer.stdin

    def blob_cmd(path: str, data: bytes) -> None:
        stream.write(f"M 100644 inline {path}\ndata {len(data)}\n".encode() + data + b"\n")

    changelog = ""
    for n in range(commits):
        block = blocks[n % len(blocks)] if n % 10 else seed_entry  # every 10th: a DSV4 AgentX entry
        if not block.endswith("\n"):
            block += "\n"
        changelog += ("\n" if changelog and not changelog.endswith("\n\n") else "") + block
        msg = f"append entry {n}".encode()
        stream.write(b"commit refs/heads/main\n")
        stream.write(f"committer Bench <bench@example.invalid> {1_700_000_000 + n} +0000\n".encode())
        stream.write(f"data {len(msg)}\n".encode() + msg + b"\n")
        if n == 0:
            for path, data in files.items():
                blob_cmd(path, data)
        if n and n % 40 == 0:
            recipe = files[RECIPE].replace(b"STATE_CHECKPOINT_INTERVAL_TOKENS=8192",
                                           f"STATE_CHECKPOINT_INTERVAL_TOKENS={8192 + n}".encode())
            blob_cmd(RECIPE, recipe)
        blob_cmd("perf-changelog.yaml", changelog.encode())
        stream.write(b"\n")
    stream.close()
    if importer.wait() != 0:
        raise SystemExit("git fast-import failed")
    git(repo, "reset", "-q", "--hard", "main")
    return repo


def baseline_history(repo: Path) -> float:
    """Plain yaml.load of the whole changelog at every commit: the floor of a naive replay."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    start = time.perf_counter()
    shas = git(repo, "log", "--reverse", "--format=%H", "--", "perf-changelog.yaml").split()
    for sha in shas:
        data = subprocess.run(["git", "-C", str(repo), "show", f"{sha}:perf-changelog.yaml"],
                              capture_output=True, check=True).stdout
        yaml.load(data, Loader=loader)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--commits", type=int, default=800)
    parser.add_argument("--ix", type=Path, help="a clone of SemiAnalysisAI/InferenceX (part 3)")
    parser.add_argument("--pr", default="c31c9749a32b", help="the commit of a real PR (part 3)")
    args = parser.parse_args()
    if args.ix:
        return real_pr(args.ix.resolve(), args.pr, args.runs)
    if not CORPUS.is_dir():
        print(f"corpus not found at {CORPUS}", file=sys.stderr)
        return 2
    cli = [sys.executable, "-m", "ci_tools"]
    with tempfile.TemporaryDirectory() as tmp_dir:
        tmp = Path(tmp_dir)
        repo, base = real_size_repo(tmp)
        check = [*cli, "check", "--repo", str(repo), "--base", base, "--format", "json"]
        check_without = [sys.executable, "-c", WITHOUT_CLAIMS, "check", "--repo", str(repo), "--base", base, "--format", "json"]
        claims = [*cli, "claims", "--repo", str(repo), "--base", base, "--format", "json"]
        inside = []
        for _ in range(args.runs):
            out = subprocess.run([sys.executable, "-c", STAGE_TIMER, str(repo), base], capture_output=True, text=True,
                                 cwd=repo, check=True).stdout.split()
            inside.append((float(out[0]), float(out[1])))
        stage_t = statistics.median(t for t, _ in inside)
        stages_t = statistics.median(t for _, t in inside)
        with_t, with_rss = measure(check, repo, args.runs)
        without_t, without_rss = measure(check_without, repo, args.runs)
        claims_t, claims_rss = measure(claims, repo, args.runs)
        print(f"one appended entry, real-size data (56 configs, 773-entry changelog), median of {args.runs}:")
        print(f"  ci-tools check (with claims)      {with_t:7.3f} s   peak RSS {with_rss / 1024:6.1f} MiB")
        print(f"  check without the claims stage    {without_t:7.3f} s   peak RSS {without_rss / 1024:6.1f} MiB  (baseline)")
        print(f"  difference (claims share)         {with_t - without_t:7.3f} s")
        print(f"  claims stage inside the check     {stage_t:7.3f} s   of {stages_t:.3f} s for all stages  (target <= 0.2 s)")
        print(f"  ci-tools claims alone             {claims_t:7.3f} s   peak RSS {claims_rss / 1024:6.1f} MiB", flush=True)

        hist = history_repo(tmp, args.commits)
        # ci-tools first: a child's peak RSS counts the memory it shared with this process when forked, and
        # the baseline's parsing leaves this process hundreds of MiB larger.
        hist_t, hist_rss = timed([*cli, "claims", "--repo", str(hist), "--history", "--format", "json"], hist)
        base_t = baseline_history(hist)
        print(f"--history over {args.commits} changelog commits (one run):")
        print(f"  ci-tools claims --history         {hist_t:7.3f} s   peak RSS {hist_rss / 1024:6.1f} MiB  (target <= 120 s)")
        print(f"  yaml.load of the changelog/commit {base_t:7.3f} s   (baseline: naive replay's parsing alone)")
    return 0


def real_pr(ix: Path, pr: str, runs: int) -> int:
    """Part 3: every stage of `check` on a real PR's commit against its parent, the claims stage among them."""
    with tempfile.TemporaryDirectory() as tmp_dir:
        repo = Path(tmp_dir) / "ix"
        subprocess.run(["git", "clone", "-q", str(ix), str(repo)], check=True)
        subprocess.run(["git", "-C", str(repo), "checkout", "-q", pr], check=True)
        spent: list[tuple[float, float]] = []
        for _ in range(runs):
            out = subprocess.run([sys.executable, "-c", STAGE_TIMER, str(repo), "HEAD~1"], capture_output=True,
                                 text=True, cwd=repo, check=True).stdout.split()
            spent.append((float(out[0]), float(out[1])))
    stage_t = statistics.median(t for t, _ in spent)
    stages_t = statistics.median(t for _, t in spent)
    print(f"check of the real PR {pr} against its parent, median of {runs}:")
    print(f"  claims stage inside the check     {stage_t:7.3f} s   of {stages_t:.3f} s for all stages  (target <= 0.5 s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
