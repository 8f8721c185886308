"""`ci-tools sweep` running a job the way the fleet's workflow does: the repository's launcher in the
checkout, with the launch step's environment and what the runner knows (node, port, workspace)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "fixtures" / "sweep"))

from sweeplib import alive, cli, job_of, make_repo, planned, run_job_here, status_of  # noqa: E402

from conftest import full_corpus_dir  # noqa: E402

from ci_tools.jobs.env import contract as contract_module  # noqa: E402
from ci_tools.results.metrics import canonical  # noqa: E402
from ci_tools.results.record import load as load_record  # noqa: E402
from ci_tools.sweep.settings import parse_sweep_settings  # noqa: E402

BUILTIN = Path(contract_module.__file__).resolve().parent / "builtin"
RECIPE = "benchmarks/single_node/fixed_seq_len/ok_fp8_mi355x_vllm.sh"
# The fleet of the fixture's `mi355x` nodes (mi355x-amd_00, mi355x-amd_01).
LAUNCHER = "runners/launch_mi355x-amd.sh"

# A fleet launcher as InferenceX writes them: it picks the recipe from the job's variables and runs it
# with the checkout as the container's /workspace (here: the checkout itself, RESULT_DIR inside it).
LAUNCHER_TEXT = """\
#!/usr/bin/env bash
set -euo pipefail
echo "launcher on $RUNNER_NAME in $(pwd), port $PORT"
env | sort > launcher.env
export RESULT_DIR="$GITHUB_WORKSPACE/results"
mkdir -p "$RESULT_DIR"
bash "benchmarks/single_node/${SCENARIO_SUBDIR}${MODEL_PREFIX}_${PRECISION}_mi355x_${FRAMEWORK}.sh"
"""

# A raw client result as InferenceX's benchmark_serving.py writes it (TP8, c4, with the telemetry CSV
# start_gpu_monitor records), which the fixture's client stands in for.
RAW_CASE = Path(__file__).resolve().parent / "data" / "results" / "raw" / "dsr1-fp4-mi355x-sglang-1k1k-tp8-c4"

# Serves on $PORT a page naming this job, reads it back as its client, writes the result to the workspace
# (as InferenceX recipes write /workspace/$RESULT_FILENAME.json), with the server log and GPU telemetry beside it.
SERVING_RECIPE = """\
#!/usr/bin/env bash
source "$(dirname "$0")/../../benchmark_lib.sh"
check_env_vars MODEL TP CONC RESULT_FILENAME PORT
mkdir -p page && echo "$RESULT_FILENAME" > page/whoami
${SERVER_PREFIX:-} python3 -m http.server "$PORT" --bind 127.0.0.1 --directory page > server.log 2>&1 &
echo "$!" > "$RESULT_DIR/server.pid"
python3 - <<'PY'
import glob, json, os, shutil, time, urllib.request
port, name = os.environ["PORT"], os.environ["RESULT_FILENAME"]
for _ in range(200):
    try:
        served = urllib.request.urlopen(f"http://127.0.0.1:{port}/whoami", timeout=1).read().decode().strip()
        break
    except OSError:
        time.sleep(0.05)
else:
    raise SystemExit(f"no server on port {port}")
raw = json.load(open(glob.glob("RAW_CASE/dsr1_*.json")[0]))
raw.update(served_by=served, port=int(port))
json.dump(raw, open(f"{name}.json", "w"))
shutil.copy("RAW_CASE/gpu_metrics.csv", "gpu_metrics.csv")
PY
""".replace("RAW_CASE", str(RAW_CASE))

LIB = """\
check_env_vars() {
    local missing=()
    for name in "$@"; do [[ -n "${!name:-}" ]] || missing+=("$name"); done
    if (( ${#missing[@]} )); then echo "not set: ${missing[*]}"; exit 1; fi
}
"""

UPLOADS = """
      - name: Upload result
        uses: actions/upload-artifact@043fb46d1a93c77aae656e7c1c64a875d1fc6a0a # v7.0.1
        with:
          name: bmk_${{ env.RESULT_FILENAME }}
          path: ${{ env.RESULT_FILENAME }}.json
      - name: Upload server logs
        uses: actions/upload-artifact@043fb46d1a93c77aae656e7c1c64a875d1fc6a0a # v7.0.1
        with:
          name: server_logs_${{ env.RESULT_FILENAME }}
          path: |
            server.log
            gpu_metrics.csv
            results/**
            !results/*.pid
"""


def fleet_repo(tmp_path: Path, *, workflows: bool = False, config: str | None = None) -> Path:
    """The sweep fixture with a fleet launcher, a serving recipe and (``workflows``) a sweep workflow of its
    own whose template keeps the result, server.log and results/ (upload steps)."""
    repo = make_repo(tmp_path, config)
    (repo / "runners").mkdir()
    (repo / LAUNCHER).write_text(LAUNCHER_TEXT)
    (repo / "benchmarks" / "benchmark_lib.sh").write_text(LIB)
    (repo / RECIPE).write_text(SERVING_RECIPE)
    if workflows:
        target = repo / ".github" / "workflows"
        target.mkdir(parents=True)
        shutil.copy(BUILTIN / "run-sweep.yml", target / "run-sweep.yml")
        shutil.copy(BUILTIN / "benchmark-multinode-tmpl.yml", target / "benchmark-multinode-tmpl.yml")
        (target / "benchmark-tmpl.yml").write_text((BUILTIN / "benchmark-tmpl.yml").read_text() + UPLOADS)
    return repo


def _clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "RUNNER_NAME"}
    env.update(extra)
    return env


def test_dry_run_prints_the_launch_step_with_its_full_environment(tmp_path: Path) -> None:
    repo = fleet_repo(tmp_path)
    job = job_of(repo, "ok-fp8-mi355x-vllm", 8)
    proc = cli(repo, "sweep", "run", "--job", json.dumps(job.to_json()), "--dry-run",
               env=_clean_env(HF_TOKEN="hf_secret_value", SOME_TOOL="x y"))
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    name = "ok_1k1k_fp8_vllm_tp8-pp1-dcp1-pcp1-ep1-dpafalse_disagg-false_spec-none_conc8_mi355x-amd_00"
    assert lines[0] == f"# {job.label()} (job {job.id}, launcher repository)"
    assert lines[1].startswith("# node mi355x-amd_00, port ") and lines[1].endswith(", timeout 14400 s")
    assert lines[2].startswith("# GPUs: ")
    assert lines[3] == f"# working directory: {repo.resolve()}"
    assert lines[-2:] == ["# command:", f"bash ./{LAUNCHER}"]
    # The workflow's part, then the runner's, then everything inherited: the full environment.
    workflow = lines[lines.index("# environment: from the workflow (as the launch step gets it)"):]
    for line in ("MODEL=org/Ok-Model", "TP=8", "CONC=8", "GPU_COUNT=8", f"RESULT_FILENAME={name}",
                 "RESULT_DIR=/workspace/results", "EXP_NAME=ok_1k1k"):
        assert line in workflow[:workflow.index("# from the runner (this machine, this job)")]
    runner = workflow[workflow.index("# from the runner (this machine, this job)"):]
    assert "RUNNER_NAME=mi355x-amd_00" in runner and f"GITHUB_WORKSPACE={repo.resolve()}" in runner
    assert "RUN_EVAL=false" in runner
    assert f"GITHUB_ENV={repo.resolve()}/sweep-results/{job.id}/github/env" in runner
    inherited = lines[lines.index("# inherited from this environment"):]
    assert "SOME_TOOL='x y'" in inherited and "HF_TOKEN=<hidden>" in inherited
    assert "hf_secret_value" not in proc.stdout
    assert not (repo / "sweep-results").exists()


def test_the_repository_launcher_runs_in_the_checkout_and_what_the_fleet_keeps_is_collected(tmp_path: Path) -> None:
    repo = fleet_repo(tmp_path, workflows=True)
    job = job_of(repo, "ok-fp8-mi355x-vllm", 4)
    proc = cli(repo, "sweep", "run", "--job", json.dumps(job.to_json()), "--result-dir", "out",
               env=_clean_env(RUNNER_NAME="mi355x-amd_01"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    status = status_of(repo / "out", job)
    name = "ok_1k1k_fp8_vllm_tp8-pp1-dcp1-pcp1-ep1-dpafalse_disagg-false_spec-none_conc4_mi355x-amd_01"
    assert (status["launcher"], status["status"], status["node"], status["argv"]) == \
        ("repository", "success", "mi355x-amd_01", ["bash", f"./{LAUNCHER}"])
    assert f"launcher on mi355x-amd_01 in {repo.resolve()}, port {status['port']}" in proc.stdout
    # The template's upload steps say what the fleet keeps: the result file, server.log and results/ (but
    # not the pid file it excludes); they are moved out of the checkout into the job's result directory.
    results = repo / "out" / job.id / "results"
    assert status["results"] == ["gpu_metrics.csv", f"{name}.json", "server.log"]
    assert status["result-filename"] == name and status["result-file"] == f"{name}.json"
    result = json.loads((results / f"{name}.json").read_text())
    assert (result["served_by"], result["port"]) == (name, status["port"])
    assert not (repo / f"{name}.json").exists() and not (repo / "server.log").exists()
    # What the fleet does not keep stays where the job wrote it, and the record says so.
    assert sorted(status["uncollected"]) == ["launcher.env", "page/whoami", "results/server.pid"]
    launcher_env = dict(line.split("=", 1) for line in (repo / "launcher.env").read_text().splitlines() if "=" in line)
    assert launcher_env["RESULT_FILENAME"] == name and launcher_env["GITHUB_WORKSPACE"] == str(repo.resolve())
    # The workflow's own GITHUB_* files are not the job's: it gets files of its own.
    assert launcher_env["GITHUB_STEP_SUMMARY"] == str(repo.resolve() / "out" / job.id / "github" / "step_summary.md")
    assert launcher_env["CI_TOOLS_SWEEP_JOB"].startswith(job.id)

    # record.json: identity, commit (not a git checkout here), runner and node, outcome, and the point's
    # validity and metrics, computed as InferenceX's process_result.py computes them from the same files.
    record = load_record(repo / "out" / job.id / "record.json")
    assert (record.job.job_id, record.job.config_key, record.job.concurrency, record.sha, record.node) == \
        (job.id, "ok-fp8-mi355x-vllm", (4,), "", "mi355x-amd_01")
    assert record.runner == "mi355x-amd_01"  # the runner names itself
    assert (record.status.state, record.status.exit_code, record.files.server_log, record.files.gpu_metrics) == \
        ("success", 0, "results/server.log", "results/gpu_metrics.csv")
    [point] = record.results
    assert (point.raw_result, point.aggregate) == (f"results/{name}.json", f"results/agg_{name}.json")
    assert (point.validity.completed, point.validity.requested, point.validity.failure_rate) == (40, 40, 0.0)
    original = _process_result(results, launcher_env, name, tmp_path / "original")
    ours = json.loads((results / f"agg_{name}.json").read_text())
    assert ours == original
    assert point.metrics == canonical(original) and point.metrics["throughput_per_gpu"] > 0
    assert point.validity.power_valid is bool(original["power_valid"])


def _process_result(results: Path, env: dict[str, str], name: str, where: Path) -> dict:  # type: ignore[type-arg]
    """InferenceX's "Process result" step on a copy of the job's files: its agg_<name>.json."""
    where.mkdir()
    for f in (f"{name}.json", "gpu_metrics.csv"):
        shutil.copy(results / f, where / f)
    run_env = {"PATH": os.environ.get("PATH", ""), **{k: os.environ[k] for k in ("TZ",) if k in os.environ}, **env}
    proc = subprocess.run([sys.executable, str(full_corpus_dir() / "utils" / "process_result.py")], cwd=where,
                          env=run_env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    data: dict = json.loads((where / f"agg_{name}.json").read_text())  # type: ignore[type-arg]
    return data


def test_concurrent_jobs_get_their_own_node_port_and_workspace(tmp_path: Path) -> None:
    repo = fleet_repo(tmp_path)
    jobs = [job_of(repo, "ok-fp8-mi355x-vllm", c) for c in (4, 8)]
    proc = cli(repo, "sweep", "local", "--key", "ok-fp8-mi355x-vllm", "-j", "2", "--result-dir", "out",
               "--no-progress", env=_clean_env())
    assert proc.returncode == 0, proc.stdout + proc.stderr
    statuses = [status_of(repo / "out", j) for j in jobs]
    assert {s["node"] for s in statuses} == {"mi355x-amd_00", "mi355x-amd_01"}
    for job, status in zip(jobs, statuses):
        result = json.loads((repo / "out" / job.id / "results" / status["result-file"]).read_text())
        # Each client reached the server its own job started.
        assert result["served_by"] == status["result-filename"]
        assert result["port"] == status["port"]
    # The copies the jobs ran in are gone; the checkout was never written.
    assert not (repo / "out" / ".workspaces").exists()
    assert not (repo / "server.log").exists() and not (repo / "launcher.env").exists()


def test_a_detached_server_is_found_by_its_marker_ended_and_reported(tmp_path: Path) -> None:
    repo = fleet_repo(tmp_path)
    job = job_of(repo, "ok-fp8-mi355x-vllm", 4)
    status = run_job_here(repo, "ok-fp8-mi355x-vllm", 4, base_env=_clean_env(SERVER_PREFIX="setsid"), grace=5)
    assert status["status"] == "success", status["message"]
    # Without upload steps in the template, everything the job wrote in the checkout is collected.
    server = int((repo / "out" / job.id / "results" / "results" / "server.pid").read_text())
    assert not alive(server), "the setsid server outlived its job"
    assert (status["leftover-processes"], status["detached-processes"], status["survivors"]) == (1, 1, 0)
    assert "http.server" in status["leftovers"][0] and status["leftovers"][0].endswith("(detached)")
    assert "1 detached from its process group" in status["message"]


def test_a_variable_the_recipe_requires_that_nothing_supplies_fails_before_launch(tmp_path: Path) -> None:
    repo = fleet_repo(tmp_path)
    text = (repo / RECIPE).read_text().replace("check_env_vars MODEL", "check_env_vars WEIGHTS_DIR MODEL")
    (repo / RECIPE).write_text(text)
    status = run_job_here(repo, "ok-fp8-mi355x-vllm", 4, base_env=_clean_env())
    assert (status["status"], status["missing-env"], status["exit-code"]) == ("not-run", ["WEIGHTS_DIR"], None)
    assert status["message"] == ("the recipe requires WEIGHTS_DIR, which neither the workflow, the runner, the "
                                 "launcher nor this environment supplies")
    assert not (repo / "launcher.env").exists()  # nothing was started
    # The runner's own environment can supply it.
    status = run_job_here(repo, "ok-fp8-mi355x-vllm", 4, base_env=_clean_env(WEIGHTS_DIR="/models"))
    assert status["status"] == "success", status["message"]


def test_a_label_without_nodes_and_no_runner_name_is_not_run(tmp_path: Path) -> None:
    repo = fleet_repo(tmp_path)
    runners = repo / "configs" / "runners.yaml"
    runners.write_text(runners.read_text().replace("    - mi355x-amd_00\n    - mi355x-amd_01\n", "    []\n")
                       .replace("  mi355x:\n    []", "  mi355x: []"))
    plan = planned(repo, "ok-fp8-mi355x-vllm", 4)
    assert plan.plan is None
    assert plan.refusal == ("no node to run as: runner label `mi355x` has no nodes in configs/runners.yaml "
                            "and RUNNER_NAME is not set")


def test_trusted_launcher_runs_instead_of_the_repository_s(tmp_path: Path) -> None:
    """With --settings-from, the pull request's runners/launch_*.sh does not choose how it is run."""
    repo = fleet_repo(tmp_path)
    (repo / LAUNCHER).write_text("#!/usr/bin/env bash\necho HOSTILE > hostile\n")
    trusted = tmp_path / "trusted"
    (trusted / "runners").mkdir(parents=True)
    (trusted / "configs").mkdir()
    shutil.copy(repo / "configs" / "runners.yaml", trusted / "configs" / "runners.yaml")
    (trusted / LAUNCHER).write_text(LAUNCHER_TEXT)
    status = run_job_here(repo, "ok-fp8-mi355x-vllm", 4, trusted=trusted)
    assert status["status"] == "success", status["message"]
    assert status["argv"] == ["bash", str((trusted / LAUNCHER).resolve())]
    assert not (repo / "hostile").exists()


def test_timeouts_per_config_key() -> None:
    settings = parse_sweep_settings({"timeout-minutes": 60, "timeouts": {"ok-*": 5, "ok-fp8-mi355x-atom": 90}})
    assert settings.timeout_for("ok-fp8-mi355x-atom") == 90 * 60  # an exact key before a glob
    assert settings.timeout_for("ok-fp8-mi355x-vllm") == 5 * 60
    assert settings.timeout_for("hang-fp8-mi355x-vllm") == 60 * 60


def test_a_config_key_timeout_ends_its_job(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, "sweep:\n  timeouts:\n    'hang-*': 0.01\n")
    status = run_job_here(repo, "hang-fp8-mi355x-vllm", grace=5)
    assert (status["status"], status["timeout-seconds"]) == ("timed-out", pytest.approx(0.6))


@pytest.mark.parametrize("text, message", [
    ("sweep:\n  timeouts: 5\n", ".ci-tools.yaml:2: `sweep.timeouts` must map config keys (globs) to minutes"),
    ("sweep:\n  timeouts:\n    'dsr1-*': -1\n", ".ci-tools.yaml:3: `sweep.timeouts.dsr1-*` must be a positive number"),
])
def test_timeouts_errors_name_file_and_line(tmp_path: Path, text: str, message: str) -> None:
    repo = make_repo(tmp_path, text)
    proc = cli(repo, "sweep", "local", "--key", "ok-*", "--dry-run")
    assert proc.returncode == 2 and message in proc.stderr, proc.stderr


def test_real_tree_jobs_run_through_the_fleet_launcher_with_the_launch_step_s_environment(
        full_corpus_repo, full_corpus_jobs, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The case that failed every job in 0.1 s (RESULT_FILENAME not set): dsr1-fp8-mi355x-sglang at c32."""
    from ci_tools.sweep.context import SweepContext
    from ci_tools.sweep.environment import describe
    from ci_tools.sweep.run import plan_job, prepare
    from ci_tools.sweep.settings import SweepSettings

    repo = full_corpus_repo
    jobs = [j for j in full_corpus_jobs if j.config_key == "dsr1-fp8-mi355x-sglang" and j.conc == 32]
    assert [j.fields["tp"] for j in jobs] == [4, 8]
    ctx = SweepContext(repo.config, repo.snapshot, SweepSettings(), tmp_path / "out", {"PATH": "/usr/bin:/bin"},
                       parallel=2)
    for slot, job in enumerate(jobs):
        planned = plan_job(prepare(job, ctx), ctx, ctx.slot(job, slot, hold=False))
        node = f"mi355x-amds_0{slot}"
        assert (planned.refusal, planned.recipe) == ("", "benchmarks/single_node/fixed_seq_len/dsr1_fp8_mi355x.sh")
        assert planned.plan.argv == ("bash", "./runners/launch_mi355x-amds.sh")
        assert planned.plan.cwd == tmp_path / "out" / ".workspaces" / f"slot-{slot}"
        env = planned.plan.env
        tp = job.fields["tp"]
        assert env["RESULT_FILENAME"] == (f"dsr1_8k1k_fp8_sglang_tp{tp}-pp1-dcp1-pcp1-ep1-dpafalse_disagg-false_"
                                          f"spec-none_conc32_{node}")
        assert (env["RUNNER_NAME"], env["RUNNER_TYPE"], env["GPU_COUNT"], env["IMAGE"], env["RESULT_DIR"]) == \
            (node, "mi355x", str(tp), "lmsysorg/sglang:v0.5.12-rocm700-mi35x", "/workspace/results")
        lines = describe(planned.env, ctx.base_env)
        assert "# known to the workflow only when it runs (secrets, github.*): HF_TOKEN (not set), " \
               "MODAL_TOKEN_ID (not set), MODAL_TOKEN_SECRET (not set)" in lines
        assert lines[-2:] == ["# inherited from this environment", "PATH=/usr/bin:/bin"]
    # ci-tools' own launcher is still there to ask for: the recipe now gets RESULT_FILENAME from the workflow.
    direct = plan_job(prepare(jobs[0], ctx, launcher="direct"), ctx, ctx.slot(jobs[0], 0, hold=False))
    assert direct.plan.argv[0] == "bash" and direct.plan.argv[1].endswith("/dsr1_fp8_mi355x.sh")
    assert direct.refusal == "" and direct.plan.env["RESULT_FILENAME"].endswith("_conc32_mi355x-amds_00")
