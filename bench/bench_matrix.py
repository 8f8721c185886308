"""Benchmark: `ci-tools matrix` against InferenceX's own generator, on the real tree.

Both expand the full sweep of ../shared/corpus/inferencex-843c625-full (208
configs, 1,820 jobs): ci-tools as `ci-tools matrix --repo <tree>` (stdout,
and --output-dir), InferenceX as `python3
utils/matrix_logic/generate_sweep_configs.py full-sweep` run from the tree
(PyYAML + pydantic validation of every entry), in the same run, round-robin.
`matrix --env` (every job's environment from the workflow templates) is
measured too, for information.  Before timing, the outputs are compared:
the generator's entries must equal ci-tools' entries without `id`.

The generator needs pydantic: `.venv/bin/pip install -e '.[bench]'`.
Run: .venv/bin/python bench/bench_matrix.py [--runs N]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
TREE = ROOT.parent / "shared" / "corpus" / "inferencex-843c625-full"
GENERATOR = "utils/matrix_logic/generate_sweep_configs.py"
BUDGET_S = 0.3
SPEEDUP = 3.0


# A child's peak RSS as wait4 reports it includes this process's size when it forked (Linux keeps the
# high-water mark across exec), so the command runs under time(1), whose own child starts small.
TIME = "/usr/bin/time" if os.path.exists("/usr/bin/time") else None


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(cmd: list[str], cwd: Path) -> tuple[float, int, str, float]:
    """Wall seconds, peak RSS in KiB, stdout and CPU seconds of one process."""
    env = dict(os.environ, GITHUB_REPOSITORY="SemiAnalysisAI/InferenceX")
    argv = [TIME, "-f", "%M", *cmd] if TIME else cmd
    cpu_before = children_cpu()
    start = time.perf_counter()
    proc = subprocess.run(argv, cwd=cwd, capture_output=True, env=env)
    elapsed = time.perf_counter() - start
    cpu = children_cpu() - cpu_before
    err = proc.stderr.decode()
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}): {err}")
    rss = int(err.strip().splitlines()[-1]) if TIME else resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return elapsed, rss, proc.stdout.decode(), cpu


def measure(commands: list[tuple[str, list[str]]], cwd: Path, runs: int) -> list[dict[str, Any]]:
    """Run the commands round-robin, so that a change of machine load hits each of them alike."""
    for _, cmd in commands:
        timed(cmd, cwd)  # warm the OS file cache; not counted
    samples: list[list[tuple[float, int, str, float]]] = [[] for _ in commands]
    for _ in range(runs):
        for i, (_, cmd) in enumerate(commands):
            samples[i].append(timed(cmd, cwd))
    out = []
    for (name, _), got in zip(commands, samples):
        walls = [s[0] for s in got]
        out.append({"name": name, "median": statistics.median(walls), "min": min(walls), "max": max(walls),
                    "rss_mib": max(s[1] for s in got) / 1024, "cpu": statistics.median(s[3] for s in got)})
    return out


def generator_command() -> list[str]:
    return [sys.executable, GENERATOR, "full-sweep", "--config-files", "configs/amd-master.yaml",
            "configs/nvidia-master.yaml", "--runner-config", "configs/runners.yaml"]


def check_same_matrix(exe: Path) -> int:
    """The generator's entries and ci-tools' (without ids), job for job; returns the job count."""
    _, _, theirs_text, _ = timed(generator_command(), TREE)
    _, _, ours_text, _ = timed([str(exe), "matrix", "--repo", str(TREE)], TREE)
    theirs = json.loads(theirs_text)
    ours = [{k: v for k, v in e.items() if k not in ("id", "config-key")}
            for s in json.loads(ours_text)["shards"] for e in s["include"]]
    if ours != theirs:
        raise SystemExit(f"the matrices differ: ci-tools {len(ours)} jobs, generator {len(theirs)} jobs")
    return len(ours)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    if not TREE.is_dir():
        print(f"the real tree is not at {TREE}", file=sys.stderr)
        return 2
    try:
        import pydantic  # noqa: F401
    except ImportError:
        print("InferenceX's generator needs pydantic: .venv/bin/pip install -e '.[bench]'", file=sys.stderr)
        return 2
    exe = Path(sys.executable).parent / "ci-tools"
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out"
        ours, to_dir, generator, with_env = measure([
            ("ci-tools matrix (stdout)", [str(exe), "matrix", "--repo", str(TREE)]),
            ("ci-tools matrix --output-dir", [str(exe), "matrix", "--repo", str(TREE), "--output-dir", str(out)]),
            ("InferenceX generate_sweep_configs.py full-sweep", generator_command()),
            ("ci-tools matrix --env (every job's environment)", [str(exe), "matrix", "--repo", str(TREE), "--env"]),
        ], TREE, args.runs)
        index = json.loads((out / "index.json").read_text())
    # Compared after timing: a child's peak RSS counts the parent's size at fork, which stays small so.
    jobs = check_same_matrix(exe)
    print(f"real tree at 843c625: {jobs} jobs, identical in both; {index['shard-count']} shards "
          f"(max {max(s['bytes'] for s in index['shards'])} bytes), {args.runs} runs each")
    print(f"{'command':<52} {'median s':>9} {'min s':>7} {'max s':>7} {'cpu s':>7} {'peak RSS MiB':>13}")
    for r in (ours, to_dir, generator, with_env):
        print(f"{r['name']:<52} {r['median']:>9.3f} {r['min']:>7.3f} {r['max']:>7.3f} {r['cpu']:>7.3f} "
              f"{r['rss_mib']:>13.1f}")
    load = os.getloadavg()[0]
    if load > (os.cpu_count() or 1):
        print(f"note: load average {load:.1f} on {os.cpu_count()} CPUs while measuring; wall times are inflated")
    speedup = generator["median"] / ours["median"]
    ok = ours["median"] <= BUDGET_S and speedup >= SPEEDUP
    print(f"ci-tools matrix median {ours['median']:.3f} s (budget {BUDGET_S} s), generator / ci-tools = "
          f"{speedup:.2f}x (at least {SPEEDUP}x): {'within' if ok else 'OVER'} the targets")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
