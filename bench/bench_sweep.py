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
4. `ci-tools sweep local --key dsr1-fp8-mi355x-sglang --conc 32` on a copy of
   the real tree in a sandbox with the fleet's programs stood in for
   (tests/standins: salloc/srun/enroot, the sglang server, the benchmark
   client, amd-smi): both jobs through `runners/launch_mi355x-amds.sh` and the
   real recipe, results collected and processed into record.json, the server
   the recipe leaves running ended; beside the baseline of bash running the
   same launcher for the same two jobs with the environment the dry run
   prints (what the job costs without ci-tools around it). Skipped where
   sandboxes cannot be made.

Each command runs as its own process, several times; the median wall time and
the peak RSS of the process are printed side by side.

Run: .venv/bin/python bench/bench_sweep.py [--runs N]
"""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchlib import (FULL_CORPUS, ROOT, THIS_BUILD, Measurement, Table, bench_arguments, load_average,  # noqa: E402
                      measure, measure_each, tool_env)

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


WORKSPACE = "/home/runner/work/InferenceX/InferenceX"
STANDIN_KEY = "dsr1-fp8-mi355x-sglang"


def planned_jobs(dry_run: str) -> list[tuple[dict[str, str], list[str]]]:
    """Each job's environment and command as `sweep local --dry-run` prints them."""
    jobs: list[tuple[dict[str, str], list[str]]] = []
    env: dict[str, str] = {}
    lines = dry_run.splitlines()
    for n, line in enumerate(lines):
        if line.startswith("# ") and ", launcher " in line:
            env = {}
        elif line == "# command:":
            jobs.append((env, shlex.split(lines[n + 1])))
        elif not line.startswith("#") and "=" in line:
            name, value = shlex.split(line)[0].split("=", 1)
            env[name] = value
    return jobs


def standin_run(tmp: Path, runs: int) -> tuple[Measurement, Measurement, str] | str:
    """Section 4: (sweep local, bash on the launcher, what the records say), or why it was skipped."""
    sys.path.insert(0, str(ROOT / "tests"))
    from standins.install import install
    from standins.sandbox import ENTER, INTERPRETER, Sandbox, run_sandboxed, unavailable

    why = unavailable()
    if why is not None:
        return why
    repo = tmp / "ix"
    shutil.copytree(FULL_CORPUS, repo, ignore=shutil.ignore_patterns("expected"))
    for path in [repo, *repo.rglob("*")]:
        path.chmod(path.stat().st_mode | 0o200)
    standins = install(tmp / "standins", vendor="amd", gpus=8)
    sandbox = Sandbox(tmp / "sandbox", binds={WORKSPACE: repo, "/standins": standins})
    env = {"PATH": "/standins/bin:/usr/local/bin:/usr/bin:/bin", "HOME": "/root", "USER": "runner",
           "HF_TOKEN": "standin-secret"}
    sweep = [sys.executable, "-m", "ci_tools", "sweep", "local", "--key", STANDIN_KEY, "--conc", "32",
             "--no-progress", "--grace", "5"]
    dry_out = tmp / "dry-run.txt"
    if run_sandboxed(sandbox, [*sweep, "--dry-run"], env, WORKSPACE, timeout=300, output=dry_out) != 0:
        raise SystemExit(f"sweep local --dry-run failed in the sandbox: {dry_out.read_text()[-2000:]}")
    jobs = planned_jobs(dry_out.read_text())
    # The baseline: what the launch step runs, job after job, with nothing of ci-tools around it.
    script = []
    for job_env, command in jobs:
        job_env = {**job_env, "HF_TOKEN": env["HF_TOKEN"]}
        files = [job_env[k] for k in ("GITHUB_ENV", "GITHUB_OUTPUT", "GITHUB_PATH") if k in job_env]
        script += [f"mkdir -p {shlex.quote(str(Path(f).parent))} && touch {shlex.quote(f)}" for f in files]
        script.append("env -i " + " ".join(shlex.quote(f"{k}={v}") for k, v in job_env.items()) + " "
                      + shlex.join(command))
    bash = ["bash", "-c", "\n".join(script)]
    ours = ["bash", "-c", "rm -rf sweep-results && exec " + shlex.join(sweep)]

    def sandboxed(argv: list[str]) -> list[str]:
        return [INTERPRETER, "-S", "-E", str(ENTER), json.dumps(sandbox.spec(argv, env, WORKSPACE))]

    sweep_local, launcher = measure_each([sandboxed(ours), sandboxed(bash)], runs, ok=(0,))
    unwritten = [e["RESULT_FILENAME"] for e, _ in jobs if not (repo / f"{e['RESULT_FILENAME']}.json").is_file()]
    if unwritten:  # the baseline must have run the benchmarks too, or it measures nothing comparable
        raise SystemExit(f"bash on the launcher wrote no result file for {', '.join(unwritten)}")
    records = [json.loads(p.read_text()) for p in sorted((repo / "sweep-results").glob("*/record.json"))]
    said = "; ".join(
        f"{r['job']['parallelism']['single']['tp']}x{r['job']['concurrency'][0]}: {r['status']['state']}, "
        f"{r['results'][0]['validity']['completed']}/{r['results'][0]['validity']['requested']} requests, "
        f"{r['status']['leftover_processes']} left running" for r in records)
    return sweep_local, launcher, f"{len(jobs)} jobs planned, {len(records)} record.json ({said})"


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
        standins = standin_run(Path(tmp) / "standins", args.runs)

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
    if isinstance(standins, str):
        print(f"    sweep local with stand-ins skipped: {standins}")
    else:
        sweep_local, launcher, said = standins
        table.print_row(f"ci-tools sweep local, stand-ins ({STANDIN_KEY} c32)", sweep_local, launcher)
        table.print_row("baseline: bash on the fleet's launcher, same jobs", launcher)
        print(f"    {said}")


if __name__ == "__main__":
    main()
