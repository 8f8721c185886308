"""Benchmark: what `ci-tools sweep` adds around a recipe, planning a full sweep, and its report.

1. `ci-tools sweep run --job JSON` on a recipe that does almost nothing (so
   the figure is ci-tools' own cost: start-up, recipe resolution, the job's
   environment, the required-variable check, process group and marker,
   log streaming, collecting, status record and record.json), beside the
   baseline of running the same recipe with `bash` and the same environment.
2. `ci-tools sweep local --dry-run` over the real tree's 1,820 jobs (each
   job's node, port, launcher, environment and required-variable check,
   printed), beside `ci-tools matrix --env` (the same jobs' environments,
   without the runner's part or the check) in the same run.
3. `ci-tools sweep report` over 1,820 status records with result files (the
   size of the public full sweep), beside a baseline that only reads and
   parses the same JSON files in one Python process.

Each command runs as its own process, several times; the median wall time and
the peak RSS of the process are printed side by side.

Run: .venv/bin/python bench/bench_sweep.py [--runs N]
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchlib import FULL_CORPUS, ROOT, THIS_BUILD, Table, bench_arguments, load_average, measure, tool_env  # noqa: E402

FIXTURE = ROOT / "tests" / "fixtures" / "sweep" / "repo"
RECIPE = "benchmarks/single_node/fixed_seq_len/ok_fp8_mi355x_vllm.sh"
RECORDS = 1820

BASELINE_REPORT = r'''
import json, sys
from pathlib import Path
rows = []
for status in sorted(Path(sys.argv[1]).rglob("status.json")):
    record = json.loads(status.read_text())
    results = [json.loads(p.read_text()) for p in sorted((status.parent / "results").rglob("*.json"))]
    rows.append((record["label"], record["status"], results))
print(len(rows))
'''


def main() -> None:
    args = bench_arguments(__doc__, runs=7).parse_args()
    sys.path.insert(0, str(ROOT))
    from ci_tools.config import load_config
    from ci_tools.jobs.matrix import expand
    from ci_tools.model.repository import load_repo
    from ci_tools.revision.snapshot import WorkTreeSnapshot
    from ci_tools.sweep.context import SweepContext
    from ci_tools.sweep.run import plan_job, prepare
    from ci_tools.sweep.settings import SweepSettings
    from ci_tools.sweep.status import StatusRecord, write_status

    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "repo"
        shutil.copytree(FIXTURE, repo)
        config = load_config(repo)
        job = next(j for j in expand(load_repo(WorkTreeSnapshot(config.root), config)) if j.config_key == "ok-fp8-mi355x-vllm")
        env = tool_env(Path(tmp) / "pycache")
        ci_tools = list(THIS_BUILD)
        run = measure([*ci_tools, "sweep", "run", "--job", json.dumps(job.to_json()), "--quiet",
                       "--result-dir", str(Path(tmp) / "out")], args.runs, repo, env)
        # The baseline gets the environment the job's launcher gets (as a dry run plans it).
        ctx = SweepContext(config, WorkTreeSnapshot(config.root), SweepSettings(), Path(tmp) / "bash-out", env)
        planned = plan_job(prepare(job, ctx), ctx, ctx.slot(job, 0, hold=False))
        assert planned.plan is not None
        Path(planned.plan.env["RESULT_DIR"]).mkdir(parents=True)
        bash = measure(["bash", str(repo / RECIPE)], args.runs, repo, dict(env, **planned.plan.env))

        dry = measure([*ci_tools, "sweep", "local", "--repo", str(FULL_CORPUS), "--dry-run",
                       "--result-dir", str(Path(tmp) / "dry")], args.runs, repo, env)
        matrix_env = measure([*ci_tools, "matrix", "--repo", str(FULL_CORPUS), "--env"], args.runs, repo, env)
        planned_lines = subprocess.run([*ci_tools, "sweep", "local", "--repo", str(FULL_CORPUS), "--dry-run",
                                        "--result-dir", str(Path(tmp) / "dry")], cwd=repo, env=env,
                                       capture_output=True, text=True, check=True).stdout.splitlines()
        launched = Counter(line.rsplit("launcher ", 1)[1].rstrip(")") for line in planned_lines
                           if line.startswith("# ") and line.endswith(")") and ", launcher " in line)
        refused = Counter(line.split(": not run: ", 1)[1].split(":", 1)[0].split(" `")[0] for line in planned_lines
                          if ": not run: " in line)

        sweep = Path(tmp) / "sweep"
        for i in range(RECORDS):
            job_dir = sweep / f"{i:016x}"
            (job_dir / "results").mkdir(parents=True)
            (job_dir / "job.log").write_text("line\n" * 20)
            name = f"key-{i // 8}_c{i % 256}"
            (job_dir / "results" / f"{name}.json").write_text(json.dumps({"tput_per_gpu": 1000 + i, "conc": i % 256}))
            (job_dir / "results" / "other.json").write_text(json.dumps({"tput_per_gpu": 0}))
            status = "success" if i % 37 else "failed"
            write_status(job_dir, StatusRecord(
                job_id=f"{i:016x}", label=f"key-{i // 8} fixed-seq-len 1024/1024 TP8/EP1 c{i % 256}",
                config_key=f"key-{i // 8}", scenario_type="fixed-seq-len", runner="mi355x", launcher="docker",
                recipe=RECIPE, argv=("docker", "run"), status=status, exit_code=0 if status == "success" else 1,
                duration_seconds=600.0 + i, conc=i % 256, results=(f"{name}.json", "other.json"),
                result_filename=name))
        report = measure([*ci_tools, "sweep", "report", str(sweep), "--metric", "tput_per_gpu",
                          "--output", str(Path(tmp) / "report.md")], args.runs, repo, env)
        base = measure([sys.executable, "-c", BASELINE_REPORT, str(sweep)], args.runs, repo, env)

    print(f"{args.runs} runs each; {load_average()}")
    table = Table(label_width=58)
    table.print_header()
    table.print_row("ci-tools sweep run (trivial recipe, direct launcher)", run, bash)
    table.print_row("baseline: bash recipe with the same env", bash)
    table.print_row("ci-tools sweep local --dry-run (real tree, 1,820 jobs)", dry, matrix_env)
    table.print_row("baseline: ci-tools matrix --env (same jobs)", matrix_env)
    print(f"    dry run: launchers {dict(launched)}; not run: {dict(refused)}")
    table.print_row(f"ci-tools sweep report ({RECORDS} records + results)", report, base)
    table.print_row("baseline: python reading the same JSON files", base)


if __name__ == "__main__":
    main()
