"""Launchers: how a job's recipe is started on a runner.

A launcher turns a :class:`LaunchRequest` into a :class:`LaunchPlan`: the
argv to execute, the env contract to add to the process environment, and
the argv that removes what a killed launcher may leave behind (a container
or a Slurm step outliving its client).  Values of the env contract never
appear in argv: docker gets ``-e NAME`` and srun ``--export=NAME,...``, both
of which read the value from the launcher process's environment.  That keeps
values out of ``ps`` and out of any shell quoting.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping

from ..jobs.contract import job_env
from ..jobs.env.contract import JobEnvContract
from ..jobs.job import Job

# Where the repository and the result directory appear inside a container.
CONTAINER_REPO = "/workspace/repo"
CONTAINER_RESULTS = "/workspace/results"


@dataclass(frozen=True)
class LaunchRequest:
    job: Job
    recipe: str  # repository-relative path of the recipe script
    repo_root: Path  # absolute
    result_dir: Path  # absolute host directory the recipe writes into
    runner_name: str = ""
    model_cache: str | None = None
    extra_args: tuple[str, ...] = ()
    run_eval: bool = False
    # The repository's env contract (None: the built-in one).
    contract: JobEnvContract | None = None


@dataclass(frozen=True)
class LaunchPlan:
    launcher: str
    argv: tuple[str, ...]
    env: Mapping[str, str]  # the env contract, added to the inherited environment
    cwd: Path
    cleanup: tuple[str, ...] = ()  # run after a forced stop; empty when nothing can outlive the process


def container_name(job: Job) -> str:
    return f"ci-tools-{job.id}"


def direct(req: LaunchRequest) -> LaunchPlan:
    env = job_env(req.job, result_dir=str(req.result_dir), runner_name=req.runner_name, run_eval=req.run_eval,
                  contract=req.contract)
    return LaunchPlan("direct", ("bash", str(req.repo_root / req.recipe)), env, req.repo_root)


def docker(req: LaunchRequest) -> LaunchPlan:
    env = job_env(req.job, result_dir=CONTAINER_RESULTS, runner_name=req.runner_name, run_eval=req.run_eval,
                  contract=req.contract)
    name = container_name(req.job)
    argv = ["docker", "run", "--rm", "--name", name,
            "--device", "/dev/kfd", "--device", "/dev/dri", "--group-add", "video",
            "--ipc", "host", "--security-opt", "seccomp=unconfined",
            "-v", f"{req.repo_root}:{CONTAINER_REPO}", "-v", f"{req.result_dir}:{CONTAINER_RESULTS}"]
    if req.model_cache:
        argv += ["-v", f"{req.model_cache}:{req.model_cache}"]
    argv += ["-w", CONTAINER_REPO]
    for name_ in env:
        argv += ["-e", name_]
    argv += [*req.extra_args, str(req.job.get("image") or ""), "bash", f"{CONTAINER_REPO}/{req.recipe}"]
    return LaunchPlan("docker", tuple(argv), env, req.repo_root, ("docker", "rm", "--force", name))


def slurm(req: LaunchRequest) -> LaunchPlan:
    env = job_env(req.job, result_dir=CONTAINER_RESULTS, runner_name=req.runner_name, run_eval=req.run_eval,
                  contract=req.contract)
    name = container_name(req.job)
    mounts = [f"{req.repo_root}:{CONTAINER_REPO}", f"{req.result_dir}:{CONTAINER_RESULTS}"]
    if req.model_cache:
        mounts.append(f"{req.model_cache}:{req.model_cache}")
    argv = ["srun", f"--job-name={name}", "--nodes=1", "--ntasks=1"]
    if env.get("GPU_COUNT"):
        argv.append(f"--gpus={env['GPU_COUNT']}")
    argv += [f"--container-image={req.job.get('image') or ''}",
             f"--container-mounts={','.join(mounts)}",
             f"--container-workdir={CONTAINER_REPO}",
             f"--export={','.join(env)}",
             *req.extra_args,
             "bash", f"{CONTAINER_REPO}/{req.recipe}"]
    return LaunchPlan("slurm", tuple(argv), env, req.repo_root, ("scancel", f"--name={name}"))


LAUNCHERS: dict[str, Callable[[LaunchRequest], LaunchPlan]] = {"direct": direct, "docker": docker, "slurm": slurm}
