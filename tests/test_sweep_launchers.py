"""Launchers: the exact argv each builds, and running it through stand-in docker/srun executables."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "fixtures" / "sweep"))

from sweeplib import cli, job_of, make_repo, standin_calls, standin_env, status_of  # noqa: E402
from sweeplib import planned as planned_job  # noqa: E402

from ci_tools.config import load_config  # noqa: E402
from ci_tools.errors import UsageError  # noqa: E402
from ci_tools.sweep.settings import load_sweep_settings, parse_sweep_settings  # noqa: E402

CONFIG = """\
sweep:
  launchers:
    "cluster:mi355x-amds": docker
    mi355x: slurm
    "h100-*": docker
  default-launcher: direct
  model-cache: /models
  docker-args: ["--shm-size", "64g"]
  srun-args: ["--partition=gpu"]
"""
RECIPES = "benchmarks/single_node/fixed_seq_len"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path, CONFIG)


def test_docker_argv_is_exact_and_carries_no_env_values(repo: Path) -> None:
    planned = planned_job(repo, "ok-fp8-mi355x-atom")
    plan, job, root = planned.plan, job_of(repo, "ok-fp8-mi355x-atom"), repo.resolve()
    assert plan.launcher == "docker"
    assert plan.argv == (
        "docker", "run", "--rm", "--name", f"ci-tools-{job.id}",
        "--device", "/dev/kfd", "--device", "/dev/dri", "--group-add", "video",
        "--ipc", "host", "--security-opt", "seccomp=unconfined",
        "-v", f"{root}:/workspace", "-v", f"{root}/out/{job.id}/results:/workspace/results",
        "-v", "/models:/models", "-w", "/workspace",
        *[x for name in plan.env for x in ("-e", name)],
        "--shm-size", "64g", "rocm/atom:cluster-image",
        "bash", f"/workspace/{RECIPES}/ok_fp8_mi355x_atom.sh",
    )
    # The workflow's values, the runner's (the label's first node, a free port) and the launcher's own.
    assert {k: plan.env[k] for k in ("MODEL", "TP", "EP_SIZE", "CONC", "RUNNER_NAME", "GITHUB_WORKSPACE",
                                     "RESULT_DIR", "HF_HUB_CACHE", "RUN_EVAL")} == {
        "MODEL": "org/Ok-Model", "TP": "4", "EP_SIZE": "4", "CONC": "64", "RUNNER_NAME": "mi355x-amds_00",
        "GITHUB_WORKSPACE": str(root), "RESULT_DIR": "/workspace/results", "HF_HUB_CACHE": "/models",
        "RUN_EVAL": "false"}
    assert 0 < int(plan.env["PORT"]) < 65536
    assert plan.env["RESULT_FILENAME"].endswith("_conc64_mi355x-amds_00")
    assert plan.cleanup == ("docker", "rm", "--force", f"ci-tools-{job.id}")
    # Values travel through the environment only.
    assert not any("=" in a and a.split("=", 1)[0] in plan.env for a in plan.argv)


def test_slurm_argv_is_exact(repo: Path) -> None:
    job = job_of(repo, "ok-fp8-mi355x-vllm", 8)
    plan = planned_job(repo, "ok-fp8-mi355x-vllm", 8).plan
    root = repo.resolve()
    assert plan.launcher == "slurm"
    assert plan.argv == (
        "srun", f"--job-name=ci-tools-{job.id}", "--nodes=1", "--ntasks=1", "--gpus=8",
        "--container-image=rocm/vllm:test-image",
        f"--container-mounts={root}:/workspace,{root}/out/{job.id}/results:/workspace/results,/models:/models",
        "--container-workdir=/workspace",
        "--export=" + ",".join(plan.env),
        "--partition=gpu",
        "bash", f"/workspace/{RECIPES}/ok_fp8_mi355x_vllm.sh",
    )
    assert plan.cleanup == ("scancel", f"--name=ci-tools-{job.id}")


def test_direct_launcher_runs_the_host_path(repo: Path) -> None:
    job = job_of(repo, "fail-fp8-mi355x-vllm")
    plan = planned_job(repo, "fail-fp8-mi355x-vllm", launcher="direct").plan
    assert plan.argv == ("bash", str(repo.resolve() / RECIPES / "fail_fp8_mi355x_vllm.sh"))
    assert plan.env["RESULT_DIR"] == str(repo.resolve() / "out" / job.id / "results")


def test_launcher_choice_exact_then_glob_then_default() -> None:
    settings = parse_sweep_settings({"launchers": {"h100-*": "docker", "h100-cw": "slurm"}, "default-launcher": "direct"})
    assert settings.launcher_for("h100-cw") == "slurm"
    assert settings.launcher_for("h100-dgxc") == "docker"
    assert settings.launcher_for("mi355x") == "direct"


def test_docker_through_a_stand_in_runs_the_recipe_with_the_contract(repo: Path, tmp_path: Path) -> None:
    env, log = standin_env(tmp_path)
    job = job_of(repo, "ok-fp8-mi355x-atom")
    proc = cli(repo, "sweep", "run", "--job", json.dumps(job.to_json()), "--result-dir", "out", env=env)
    assert proc.returncode == 0, proc.stderr
    calls = standin_calls(log)
    assert len(calls) == 1 and calls[0]["tool"] == "docker"
    status = status_of(repo / "out", job)
    assert calls[0]["argv"] == status["argv"][1:]
    assert calls[0]["argv"][-1] == f"/workspace/{RECIPES}/ok_fp8_mi355x_atom.sh"
    # Every variable of the job reached docker through its environment, with the job's value (the port is
    # whichever was free when the job started).
    expected = dict(planned_job(repo, "ok-fp8-mi355x-atom").plan.env)
    assert calls[0]["env"].pop("PORT").isdigit() and expected.pop("PORT").isdigit()
    assert calls[0]["env"] == expected
    # The stand-in ran the recipe with the mounts mapped: results land in the host result dir.
    name = status["result-filename"]
    assert json.loads((repo / "out" / job.id / "results" / f"{name}.json").read_text()) == {"conc": 64}
    assert "model=org/Ok-Model tp=4 ep=4 dpa=true conc=64" in proc.stdout
    assert status["launcher"] == "docker" and status["status"] == "success"


def test_srun_through_a_stand_in(repo: Path, tmp_path: Path) -> None:
    env, log = standin_env(tmp_path)
    job = job_of(repo, "fail-fp8-mi355x-vllm")
    proc = cli(repo, "sweep", "run", "--job", json.dumps(job.to_json()), "--result-dir", "out", env=env)
    assert proc.returncode == 1
    calls = standin_calls(log)
    assert [c["tool"] for c in calls] == ["srun"]
    assert "--gpus=4" in calls[0]["argv"]
    assert calls[0]["env"]["MODEL"] == "org/Fail-Model" and calls[0]["env"]["GPU_COUNT"] == "4"
    assert status_of(repo / "out", job)["exit-code"] == 3


def test_timeout_under_docker_removes_the_container(repo: Path, tmp_path: Path) -> None:
    env, log = standin_env(tmp_path)
    job = job_of(repo, "hang-fp8-mi355x-vllm")
    proc = cli(repo, "sweep", "run", "--job", json.dumps(job.to_json()), "--result-dir", "out",
               "--launcher", "docker", "--timeout", "1", "--grace", "10", env=env)
    assert proc.returncode == 1
    calls = standin_calls(log)
    assert [c["argv"][:2] for c in calls] == [["run", "--rm"], ["rm", "--force"]]
    assert calls[1]["argv"] == ["rm", "--force", f"ci-tools-{job.id}"]
    status = status_of(repo / "out", job)
    assert status["status"] == "timed-out"
    assert status["message"] == f"ran cleanup: docker rm --force ci-tools-{job.id}"


@pytest.mark.parametrize("text, message", [
    ("sweep:\n  launchers:\n    mi355x: podman\n",
     ".ci-tools.yaml:3: launcher for runner label `mi355x` must be one of repository, direct, docker, slurm, found the string \"podman\""),
    ("sweep:\n  default-launcher: k8s\n",
     ".ci-tools.yaml:2: `sweep.default-launcher` must be one of repository, direct, docker, slurm, found the string \"k8s\""),
    ("sweep:\n  timeout-minutes: -5\n", ".ci-tools.yaml:2: `sweep.timeout-minutes` must be a positive number, found the integer -5"),
    ("sweep:\n  model-cache: models\n", ".ci-tools.yaml:2: `sweep.model-cache` must be an absolute path"),
    ("sweep:\n  launcher: {}\n", ".ci-tools.yaml:2: unknown setting `sweep.launcher`, expected one of: launchers, "),
    ("sweep:\n  docker-args: --privileged\n", ".ci-tools.yaml:2: `sweep.docker-args` must be a list of strings"),
])
def test_settings_errors_name_file_and_line(tmp_path: Path, text: str, message: str) -> None:
    # The job comes from a good configuration: a bad one fails every command as soon as it is loaded.
    job = job_of(make_repo(tmp_path / "good"), "ok-fp8-mi355x-atom")
    repo = make_repo(tmp_path, text)
    with pytest.raises(UsageError) as info:
        load_sweep_settings(load_config(repo))
    assert str(info.value).startswith(str(repo / message.split(":", 1)[0]) + ":" + message.split(":", 1)[1]), str(info.value)
    proc = cli(repo, "sweep", "run", "--job", json.dumps(job.to_json()))
    assert proc.returncode == 2 and message.split(":", 1)[1].strip()[:40] in proc.stderr


def test_a_missing_launcher_executable_is_recorded_not_a_crash(repo: Path, tmp_path: Path) -> None:
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    env = dict(__import__("os").environ, PATH=str(empty))
    job = job_of(repo, "fail-fp8-mi355x-vllm")
    proc = cli(repo, "sweep", "run", "--job", json.dumps(job.to_json()), "--result-dir", "out", env=env)
    assert proc.returncode == 1, proc.stderr
    status = status_of(repo / "out", job)
    assert (status["status"], status["launcher"], status["exit-code"]) == ("not-run", "slurm", None)
    assert status["message"] == "cannot start `srun`: No such file or directory"
