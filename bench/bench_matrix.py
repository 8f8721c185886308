"""Benchmark: `ci-tools matrix` against InferenceX's own generator, on the real tree.

Both expand the full sweep of tests/data/inferencex-843c625 (208
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

import json
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchlib import CI_TOOLS, Table, bench_arguments, load_average, measure_each, require, tool_env  # noqa: E402
from benchlib import FULL_CORPUS as TREE  # noqa: E402

GENERATOR = "utils/matrix_logic/generate_sweep_configs.py"
BUDGET_S = 0.3
SPEEDUP = 3.0
ENV = tool_env(GITHUB_REPOSITORY="SemiAnalysisAI/InferenceX")


def output(cmd: list[str]) -> str:
    done = subprocess.run(cmd, cwd=TREE, capture_output=True, text=True, env=ENV)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({done.returncode}): {done.stderr[-2000:]}")
    return done.stdout


def generator_command() -> list[str]:
    return [sys.executable, GENERATOR, "full-sweep", "--config-files", "configs/amd-master.yaml",
            "configs/nvidia-master.yaml", "--runner-config", "configs/runners.yaml"]


def check_same_matrix(exe: str) -> int:
    """The generator's entries and ci-tools' (without ids), job for job; returns the job count."""
    theirs = json.loads(output(generator_command()))
    ours = [{k: v for k, v in e.items() if k not in ("id", "config-key")}
            for s in json.loads(output([exe, "matrix", "--repo", str(TREE)]))["shards"] for e in s["include"]]
    if ours != theirs:
        raise SystemExit(f"the matrices differ: ci-tools {len(ours)} jobs, generator {len(theirs)} jobs")
    return len(ours)


def main() -> int:
    args = bench_arguments(__doc__, runs=9).parse_args()
    require(TREE)
    try:
        import pydantic  # noqa: F401
    except ImportError:
        print("InferenceX's generator needs pydantic: .venv/bin/pip install -e '.[bench]'", file=sys.stderr)
        return 2
    exe = CI_TOOLS
    commands = [
        ("ci-tools matrix (stdout)", [exe, "matrix", "--repo", str(TREE)]),
        ("ci-tools matrix --output-dir", [exe, "matrix", "--repo", str(TREE), "--output-dir", "OUT"]),
        ("baseline: InferenceX generate_sweep_configs.py full-sweep", generator_command()),
        ("ci-tools matrix --env (every job's environment)", [exe, "matrix", "--repo", str(TREE), "--env"]),
    ]
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out"
        measured = measure_each([[str(out) if a == "OUT" else a for a in cmd] for _, cmd in commands], args.runs,
                                TREE, ENV, ok=(0,))
        index = json.loads((out / "index.json").read_text())
    jobs = check_same_matrix(exe)
    print(f"real tree at 843c625: {jobs} jobs, identical in both; {index['shard-count']} shards "
          f"(max {max(s['bytes'] for s in index['shards'])} bytes), {args.runs} runs each, round-robin; "
          f"{load_average()}")
    ours, generator = measured[0], measured[2]
    table = Table(label_width=58)
    table.print_header()
    for i, ((name, _), got) in enumerate(zip(commands, measured)):
        # The generator is the baseline of the first two; --env does more than it does, shown for information.
        table.print_row(name, got, generator if i < 2 else None)
    speedup = generator.wall_s / ours.wall_s
    ok = ours.wall_s <= BUDGET_S and speedup >= SPEEDUP
    print(f"ci-tools matrix median {ours.wall_s:.3f} s (budget {BUDGET_S} s), generator / ci-tools = "
          f"{speedup:.2f}x (at least {SPEEDUP}x): {'within' if ok else 'OVER'} the targets")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
