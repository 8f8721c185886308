"""`ci-tools sweep run` with real recipe scripts (tests/fixtures/sweep/repo/benchmarks/...)."""

from __future__ import annotations

import json
import signal
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "fixtures" / "sweep"))

from sweeplib import alive, end_jobs_under, cli, job_of, make_repo, popen_cli, status_of, wait_for_file, write_matrix  # noqa: E402

from ci_tools.jobs.contract import job_env  # noqa: E402

RECIPES = "benchmarks/single_node/fixed_seq_len"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path)


def run_job(repo: Path, key: str, *extra: str, conc: int | None = None):  # type: ignore[no-untyped-def]
    job = job_of(repo, key, conc)
    proc = cli(repo, "sweep", "run", "--job", json.dumps(job.to_json()), "--result-dir", "out", *extra)
    return job, proc


def test_success_streams_output_and_writes_status(repo: Path) -> None:
    job, proc = run_job(repo, "ok-fp8-mi355x-vllm", conc=4)
    assert proc.returncode == 0, proc.stderr
    # Output goes to stdout as it happens and to the log file.
    assert "model=org/Ok-Model tp=8 conc=4 gpus=8\n" in proc.stdout
    log = (repo / "out" / job.id / "job.log").read_text()
    assert log == "model=org/Ok-Model tp=8 conc=4 gpus=8\nto stderr\n"
    status = status_of(repo / "out", job)
    # RESULT_FILENAME as the launch step builds it, for the first node of the job's runner label.
    name = "ok_1k1k_fp8_vllm_tp8-pp1-dcp1-pcp1-ep1-dpafalse_disagg-false_spec-none_conc4_mi355x-amd_00"
    assert {k: status[k] for k in ("schema", "job-id", "config-key", "launcher", "recipe", "status", "exit-code",
                                   "signal", "timed-out", "stopped", "killed", "results", "conc", "node",
                                   "result-filename", "result-file", "leftovers")} == {
        "schema": "ci-tools/sweep-status/1", "job-id": job.id, "config-key": "ok-fp8-mi355x-vllm",
        "launcher": "direct", "recipe": f"{RECIPES}/ok_fp8_mi355x_vllm.sh", "status": "success", "exit-code": 0,
        "signal": None, "timed-out": False, "stopped": False, "killed": False, "results": [f"{name}.json"],
        "conc": 4, "node": "mi355x-amd_00", "result-filename": name, "result-file": f"{name}.json", "leftovers": [],
    }
    assert status["argv"] == ["bash", str((repo / RECIPES / "ok_fp8_mi355x_vllm.sh").resolve())]
    result = json.loads((repo / "out" / job.id / "results" / f"{name}.json").read_text())
    assert result["conc"] == 4
    assert f"{job.label()}: success (exit 0)" in proc.stderr


def test_failure_exit_code_is_recorded(repo: Path) -> None:
    job, proc = run_job(repo, "fail-fp8-mi355x-vllm")
    assert proc.returncode == 1
    status = status_of(repo / "out", job)
    assert (status["status"], status["exit-code"], status["signal"], status["timed-out"]) == ("failed", 3, None, False)
    assert "error: engine failed to start" in (repo / "out" / job.id / "job.log").read_text()
    assert "failed (exit 3)" in proc.stderr


def test_timeout_kills_the_whole_process_group(repo: Path) -> None:
    job, proc = run_job(repo, "hang-fp8-mi355x-vllm", "--timeout", "1", "--grace", "10")
    assert proc.returncode == 1
    results = repo / "out" / job.id / "results"
    child, recipe = int((results / "child.pid").read_text()), int((results / "recipe.pid").read_text())
    assert not alive(child), "the recipe's background child outlived the timeout"
    assert not alive(recipe)
    status = status_of(repo / "out", job)
    assert (status["status"], status["timed-out"], status["signal"], status["killed"], status["exit-code"]) == \
        ("timed-out", True, "SIGTERM", False, None)
    assert "server started" in (repo / "out" / job.id / "job.log").read_text()


def test_timeout_escalates_to_sigkill_after_the_grace_period(repo: Path) -> None:
    job, proc = run_job(repo, "stubborn-fp8-mi355x-vllm", "--timeout", "1", "--grace", "0.5")
    assert proc.returncode == 1
    child = int((repo / "out" / job.id / "results" / "child.pid").read_text())
    assert not alive(child), "a child ignoring SIGTERM survived"
    status = status_of(repo / "out", job)
    assert (status["status"], status["signal"], status["killed"]) == ("timed-out", "SIGKILL", True)


def test_sigterm_to_ci_tools_stops_the_recipe_cleanly(repo: Path) -> None:
    job = job_of(repo, "hang-fp8-mi355x-vllm")
    proc = popen_cli(repo, "sweep", "run", "--job", json.dumps(job.to_json()), "--result-dir", "out", "--grace", "10")
    results = repo / "out" / job.id / "results"
    try:
        wait_for_file(results / "started")
        child = int((results / "child.pid").read_text())
        assert alive(child)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            end_jobs_under(repo)
    assert proc.returncode == 128 + signal.SIGTERM, err
    assert not alive(child)
    status = status_of(repo / "out", job)
    assert (status["status"], status["stopped"], status["timed-out"], status["signal"]) == \
        ("stopped", True, False, "SIGTERM")


def test_partial_results_are_kept_when_the_recipe_dies(repo: Path) -> None:
    job, proc = run_job(repo, "partial-fp8-mi355x-vllm")
    assert proc.returncode == 1
    status = status_of(repo / "out", job)
    assert (status["status"], status["signal"], status["exit-code"]) == ("failed", "SIGKILL", None)
    assert status["results"] == ["partial/first.json", "partial/second.json"]
    assert json.loads((repo / "out" / job.id / "results" / "partial" / "first.json").read_text())["completed"] == 2
    assert "failed (signal SIGKILL)" in proc.stderr


def test_background_process_left_by_a_successful_recipe_is_terminated(repo: Path) -> None:
    job, proc = run_job(repo, "leaky-fp8-mi355x-vllm", "--grace", "10")
    assert proc.returncode == 0
    child = int((repo / "out" / job.id / "results" / "child.pid").read_text())
    assert not alive(child)
    status = status_of(repo / "out", job)
    assert (status["status"], status["leftover-processes"]) == ("success", 1)
    assert "left 1 process(es) running" in status["message"]


def test_missing_recipe_is_recorded_as_not_run(repo: Path) -> None:
    job, proc = run_job(repo, "norecipe-fp8-mi355x-vllm")
    assert proc.returncode == 1
    status = status_of(repo / "out", job)
    assert status["status"] == "not-run"
    assert status["recipe"] is None
    assert status["message"].startswith(
        f"no recipe script found; looked for: {RECIPES}/norecipe_fp8_mi355x_vllm.sh, ")


def test_matrix_file_and_index_select_the_job(repo: Path) -> None:
    matrix = write_matrix(repo)
    entries = json.loads(matrix.read_text())
    index = next(i for i, e in enumerate(entries) if e["config-key"] == "fail-fp8-mi355x-vllm")
    proc = cli(repo, "sweep", "run", "--matrix", "matrix.json", "--index", str(index), "--result-dir", "out")
    assert proc.returncode == 1
    assert status_of(repo / "out", job_of(repo, "fail-fp8-mi355x-vllm"))["exit-code"] == 3
    # The GitHub matrix shape is accepted as well.
    (repo / "gh.json").write_text(json.dumps({"include": entries}))
    proc = cli(repo, "sweep", "run", "--matrix", "gh.json", "--index", str(index), "--dry-run")
    assert proc.returncode == 0 and "fail_fp8_mi355x_vllm.sh" in proc.stdout


def test_dry_run_prints_command_and_environment_without_running(repo: Path) -> None:
    job, proc = run_job(repo, "ok-fp8-mi355x-vllm", "--dry-run", conc=8)
    assert proc.returncode == 0, proc.stderr
    recipe = (repo / RECIPES / "ok_fp8_mi355x_vllm.sh").resolve()
    env = job_env(job, result_dir=str((repo / "out" / job.id / "results").resolve()))
    lines = proc.stdout.splitlines()
    assert lines[0] == f"# {job.label()} (job {job.id}, launcher direct)"
    assert lines[-1] == f"bash {recipe}"
    # What the built-in contract gives the job, and a port the kernel found free.
    assert int(next(line for line in lines if line.startswith("PORT=")).removeprefix("PORT=")) > 0
    for name, value in env.items():
        if name != "PORT":
            assert (f"{name}={value}" if value else f"{name}=''") in lines
    assert not (repo / "out").exists()


def test_edited_job_json_is_refused(repo: Path) -> None:
    entry = job_of(repo, "ok-fp8-mi355x-vllm", 4).to_json()
    entry["conc"] = 4096
    proc = cli(repo, "sweep", "run", "--job", json.dumps(entry))
    assert proc.returncode == 2
    assert "does not match its fields" in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.parametrize("args, message", [
    (["--job", "{not json"], "ci-tools: error: --job:1: the job is not valid JSON: Expecting property name"),
    (["--job", "[]"], "a job must be a JSON object"),
    (["--matrix", "matrix.json", "--index", "99"], "--index 99 is out of range: the matrix has 9 jobs"),
    (["--matrix", "matrix.json"], "--matrix needs --index N"),
    ([], "give exactly one of --job JSON or --matrix FILE --index N"),
])
def test_usage_errors(repo: Path, args: list[str], message: str) -> None:
    write_matrix(repo)
    proc = cli(repo, "sweep", "run", *args)
    assert proc.returncode == 2
    assert message in proc.stderr
    assert "Traceback" not in proc.stderr
