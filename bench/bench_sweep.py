"""Benchmark: what `ci-tools sweep` adds around a recipe, and the report over a full sweep.

1. `ci-tools sweep run --job JSON` on a recipe that does almost nothing (so
   the figure is ci-tools' own cost: start-up, recipe resolution, process
   group, log streaming, status record), beside the baseline of running the
   same recipe with `bash` and the same environment.
2. `ci-tools sweep report` over 1,820 status records with result JSON (the
   size of the public full sweep), beside a baseline that only reads and
   parses the same JSON files in one Python process.

Each command runs as its own process, several times; the median wall time and
the peak RSS of the process are printed side by side.

Run: .venv/bin/python bench/bench_sweep.py [--runs N]
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchlib import ROOT, THIS_BUILD, Table, bench_arguments, load_average, measure, tool_env  # noqa: E402

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
    from ci_tools.jobs.contract import job_env
    from ci_tools.jobs.matrix import expand
    from ci_tools.model.repository import load_repo
    from ci_tools.revision.snapshot import WorkTreeSnapshot
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
        results = Path(tmp) / "bash-results"
        results.mkdir()
        bash_env = dict(env, **job_env(job, result_dir=str(results)))
        bash = measure(["bash", str(repo / RECIPE)], args.runs, repo, bash_env)

        sweep = Path(tmp) / "sweep"
        for i in range(RECORDS):
            job_dir = sweep / f"{i:016x}"
            (job_dir / "results").mkdir(parents=True)
            (job_dir / "job.log").write_text("line\n" * 20)
            (job_dir / "results" / "result.json").write_text(json.dumps({"tput_per_gpu": 1000 + i, "conc": i % 256}))
            status = "success" if i % 37 else "failed"
            write_status(job_dir, StatusRecord(
                job_id=f"{i:016x}", label=f"key-{i // 8} fixed-seq-len 1024/1024 TP8/EP1 c{i % 256}",
                config_key=f"key-{i // 8}", scenario_type="fixed-seq-len", runner="mi355x", launcher="docker",
                recipe=RECIPE, argv=("docker", "run"), status=status, exit_code=0 if status == "success" else 1,
                duration_seconds=600.0 + i, conc=i % 256, results=("result.json",)))
        report = measure([*ci_tools, "sweep", "report", str(sweep), "--metric", "tput_per_gpu",
                          "--output", str(Path(tmp) / "report.md")], args.runs, repo, env)
        base = measure([sys.executable, "-c", BASELINE_REPORT, str(sweep)], args.runs, repo, env)

    print(f"{args.runs} runs each; {load_average()}")
    table = Table(label_width=58)
    table.print_header()
    table.print_row("ci-tools sweep run (trivial recipe, direct launcher)", run, bash)
    table.print_row("baseline: bash recipe with the same env", bash)
    table.print_row(f"ci-tools sweep report ({RECORDS} records + results)", report, base)
    table.print_row("baseline: python reading the same JSON files", base)


if __name__ == "__main__":
    main()
