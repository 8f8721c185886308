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

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchlib import (CORPUS, GIT_ENV, ROOT, THIS_BUILD, Table, bench_arguments, clone, driver_reports,  # noqa: E402
                      file_at, git, load_average, require, measure, measure_call, median_of, run_once, tool_env)

SEED = ROOT / "tests" / "data" / "claims_seed"
sys.path.insert(0, str(ROOT / "tests"))
from fixture_trees import tree_files  # noqa: E402  (the seed's parts take shared files through inherit.txt)
RECIPE = "benchmarks/single_node/agentic/dsv4_fp4_mi355x_atom_mtp.sh"
KEY = "dsv4-fp4-mi355x-atom-agentic-mtp"
# The whole check in one process, printing the wall time of the claims stage inside it.
STAGE_TIMER = (
    "import sys, time; from pathlib import Path; import ci_tools.check as c; from ci_tools.config import load_config; "
    "ctx = c.CheckContext(load_config(Path(sys.argv[1])), c.Comparison(sys.argv[2], None, None, None, '--base')); "
    "spent = {}\n"
    "for name, ref in c.STAGES:\n"
    "    t = time.perf_counter(); c._load_stage(ref)(ctx); spent[name] = time.perf_counter() - t\n"
    "import json; print(json.dumps({'claims': spent['claims'], 'all': sum(spent.values())}))"
)
WITHOUT_CLAIMS = (
    "import sys; import ci_tools.check as c; "
    "c.STAGES[:] = [s for s in c.STAGES if s[0] != 'claims']; "
    "from ci_tools.cli.main import main; sys.exit(main(sys.argv[1:]))"
)


def seed(part: str, rel: str) -> Path:
    """The file holding ``rel`` in a part (common, base, head) of the seed PR, inherited files included."""
    return Path(tree_files(SEED / part)[rel])


def real_size_repo(tmp: Path) -> tuple[Path, str]:
    repo = tmp / "one-entry"
    (repo / "configs").mkdir(parents=True)
    shutil.copyfile(CORPUS / "configs" / "amd-master.yaml", repo / "configs" / "amd-master.yaml")
    shutil.copyfile(CORPUS / "configs" / "runners.yaml", repo / "configs" / "runners.yaml")
    shutil.copyfile(CORPUS / "perf-changelog.yaml", repo / "perf-changelog.yaml")
    (repo / "benchmarks" / "single_node" / "agentic").mkdir(parents=True)
    shutil.copyfile(seed("common", "benchmarks/benchmark_lib.sh"), repo / "benchmarks" / "benchmark_lib.sh")
    shutil.copyfile(seed("base", RECIPE), repo / RECIPE)
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
    shutil.copyfile(seed("head", RECIPE), repo / RECIPE)
    seed_log = seed("head", "perf-changelog.yaml").read_text()
    entry = seed_log[len(seed("base", "perf-changelog.yaml").read_text()):]
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
    seed_entry = entry_blocks(seed("head", "perf-changelog.yaml").read_text())[-1]
    files = {
        "configs/amd-master.yaml": (CORPUS / "configs" / "amd-master.yaml").read_bytes(),
        "configs/runners.yaml": (CORPUS / "configs" / "runners.yaml").read_bytes(),
        "benchmarks/benchmark_lib.sh": seed("common", "benchmarks/benchmark_lib.sh").read_bytes(),
        RECIPE: seed("base", RECIPE).read_bytes(),
    }
    # Streamed to fast-import: the whole history (800 changelogs of up to 400 KB) never sits in this process,
    # whose size a measured child would otherwise inherit in its peak RSS.
    importer = subprocess.Popen(["git", "-C", str(repo), "fast-import", "--quiet"], stdin=subprocess.PIPE, env=GIT_ENV)
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


def baseline_history(repo: Path) -> None:
    """Plain yaml.load of the whole changelog at every commit: the floor of a naive replay."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    for sha in git(repo, "log", "--reverse", "--format=%H", "--", "perf-changelog.yaml").split():
        yaml.load(file_at(repo, sha, "perf-changelog.yaml") or "", Loader=loader)


def stage_times(repo: Path, base: str, runs: int) -> tuple[float, float]:
    """Median seconds of the claims stage and of all stages of `check`, timed inside the process."""
    reports = driver_reports([sys.executable, "-c", STAGE_TIMER, str(repo), base], runs, cwd=repo)
    return median_of(reports, "claims"), median_of(reports, "all")


def main() -> int:
    parser = bench_arguments(__doc__, runs=5)
    parser.add_argument("--commits", type=int, default=800)
    parser.add_argument("--ix", type=Path, help="a clone of SemiAnalysisAI/InferenceX (part 3)")
    parser.add_argument("--pr", default="c31c9749a32b", help="the commit of a real PR (part 3)")
    args = parser.parse_args()
    print(load_average())
    if args.ix:
        return real_pr(args.ix.resolve(), args.pr, args.runs)
    require(CORPUS)
    cli = list(THIS_BUILD)
    env = tool_env()
    table = Table(label_width=44)
    with tempfile.TemporaryDirectory() as tmp_dir:
        tmp = Path(tmp_dir)
        repo, base = real_size_repo(tmp)
        stage_t, stages_t = stage_times(repo, base, args.runs)
        with_claims = measure([*cli, "check", "--repo", str(repo), "--base", base, "--format", "json"], args.runs,
                              repo, env)
        without = measure([sys.executable, "-c", WITHOUT_CLAIMS, "check", "--repo", str(repo), "--base", base,
                           "--format", "json"], args.runs, repo, env)
        claims = measure([*cli, "claims", "--repo", str(repo), "--base", base, "--format", "json"], args.runs, repo, env)
        table.print_header(f"one appended entry, real-size data (56 configs, 773-entry changelog), median of {args.runs}:")
        table.print_row("ci-tools check (with claims)", with_claims, without,
                        f"claims share {with_claims.wall_s - without.wall_s:.3f} s wall")
        table.print_row("baseline: check without the claims stage", without)
        table.print_row("ci-tools claims alone", claims)
        print(f"  claims stage inside the check     {stage_t:7.3f} s   of {stages_t:.3f} s for all stages  "
              "(target <= 0.2 s)", flush=True)

        hist = history_repo(tmp, args.commits)
        # ci-tools first: the baseline's parsing leaves this process hundreds of MiB larger.
        history = run_once([*cli, "claims", "--repo", str(hist), "--history", "--format", "json"], hist, env)
        _, naive = measure_call(lambda: baseline_history(hist))
        table.print_header(f"--history over {args.commits} changelog commits (one run):")
        table.print_row("ci-tools claims --history", history, naive, "target <= 120 s")
        table.print_row("baseline: yaml.load of the changelog/commit", naive, note="naive replay's parsing alone")
    return 0


def real_pr(ix: Path, pr: str, runs: int) -> int:
    """Part 3: every stage of `check` on a real PR's commit against its parent, the claims stage among them."""
    with tempfile.TemporaryDirectory() as tmp_dir:
        repo = clone(ix, Path(tmp_dir) / "ix", pr)
        stage_t, stages_t = stage_times(repo, "HEAD~1", runs)
    print(f"check of the real PR {pr} against its parent, median of {runs}:")
    print(f"  claims stage inside the check     {stage_t:7.3f} s   of {stages_t:.3f} s for all stages  (target <= 0.5 s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
