"""Launchers: how a job's recipe is started on a runner.

``repository`` is what the fleet does: the launch step of the repository's
template runs ``bash ./runners/launch_${RUNNER_NAME%%_*}.sh`` in the
checkout, and that script (the fleet's own docker, srun/salloc, enroot and
mounts) picks and starts the recipe.  ``direct``, ``docker`` and ``slurm``
are ci-tools' own, for repositories without a launcher and as
``--launcher``; the containers they start see the workspace at
``/workspace`` (as InferenceX's launchers mount the checkout) and the job's
result directory at ``/workspace/results``.

A launcher turns a :class:`LaunchRequest` into a :class:`LaunchPlan`: the
argv to execute, the environment to add to the inherited one, and the argv
that removes what a killed launcher may leave behind (a container or a
Slurm allocation outliving its client).  Values never appear in argv:
docker gets ``-e NAME`` and srun ``--export=NAME,...``, both of which read
the value from the launcher process's environment.  That keeps values out
of ``ps`` and out of any shell quoting.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping

from ..jobs.job import Job

REPOSITORY = "repository"
CONTAINER_WORKSPACE = "/workspace"
CONTAINER_RESULTS = "/workspace/results"


@dataclass(frozen=True)
class LaunchRequest:
    job: Job
    recipe: str | None  # repository-relative path of the recipe script (None: the launcher picks it)
    workspace: Path  # absolute: the checkout the job runs in
    result_dir: Path  # absolute host directory for the recipe's RESULT_DIR
    env: Mapping[str, str]  # the job's environment (workflow and runner), added to the inherited one
    node: str = ""
    model_cache: str | None = None
    extra_args: tuple[str, ...] = ()
    launcher_script: str | None = None  # REPOSITORY: the script as the launch step names it


@dataclass(frozen=True)
class LaunchPlan:
    launcher: str
    argv: tuple[str, ...]
    env: Mapping[str, str]  # added to the inherited environment
    cwd: Path
    cleanup: tuple[str, ...] = ()  # run after a forced stop; empty when nothing can outlive the process
    own: Mapping[str, str] | None = None  # what the launcher itself put into env (for --dry-run)


def container_name(job: Job) -> str:
    return f"ci-tools-{job.id}"


def _own(req: LaunchRequest, result_dir: str) -> dict[str, str]:
    own = {"RESULT_DIR": result_dir}
    if req.model_cache:
        own["HF_HUB_CACHE"] = req.model_cache
    return own


def repository(req: LaunchRequest) -> LaunchPlan:
    """The fleet's launch step: ``bash <launcher>`` in the workspace with the job's environment."""
    assert req.launcher_script is not None
    # The fleet's launchers name their Slurm allocation after the node; the template's clean-up cancels it.
    scancel = shutil.which("scancel", path=req.env.get("PATH")) if req.node else None
    cleanup = ("scancel", f"--name={req.node}") if scancel else ()
    return LaunchPlan(REPOSITORY, ("bash", req.launcher_script), dict(req.env), req.workspace, cleanup)


def direct(req: LaunchRequest) -> LaunchPlan:
    assert req.recipe is not None
    own = {"RESULT_DIR": str(req.result_dir)}
    return LaunchPlan("direct", ("bash", str(req.workspace / req.recipe)), {**req.env, **own}, req.workspace,
                      own=own)


def docker(req: LaunchRequest) -> LaunchPlan:
    assert req.recipe is not None
    own = _own(req, CONTAINER_RESULTS)
    env = {**req.env, **own}
    name = container_name(req.job)
    argv = ["docker", "run", "--rm", "--name", name,
            "--device", "/dev/kfd", "--device", "/dev/dri", "--group-add", "video",
            "--ipc", "host", "--security-opt", "seccomp=unconfined",
            "-v", f"{req.workspace}:{CONTAINER_WORKSPACE}", "-v", f"{req.result_dir}:{CONTAINER_RESULTS}"]
    if req.model_cache:
        argv += ["-v", f"{req.model_cache}:{req.model_cache}"]
    argv += ["-w", CONTAINER_WORKSPACE]
    for name_ in env:
        argv += ["-e", name_]
    argv += [*req.extra_args, str(req.job.get("image") or ""), "bash", f"{CONTAINER_WORKSPACE}/{req.recipe}"]
    return LaunchPlan("docker", tuple(argv), env, req.workspace, ("docker", "rm", "--force", name), own=own)


def slurm(req: LaunchRequest) -> LaunchPlan:
    assert req.recipe is not None
    own = _own(req, CONTAINER_RESULTS)
    env = {**req.env, **own}
    name = container_name(req.job)
    mounts = [f"{req.workspace}:{CONTAINER_WORKSPACE}", f"{req.result_dir}:{CONTAINER_RESULTS}"]
    if req.model_cache:
        mounts.append(f"{req.model_cache}:{req.model_cache}")
    argv = ["srun", f"--job-name={name}", "--nodes=1", "--ntasks=1"]
    if env.get("GPU_COUNT"):
        argv.append(f"--gpus={env['GPU_COUNT']}")
    argv += [f"--container-image={req.job.get('image') or ''}",
             f"--container-mounts={','.join(mounts)}",
             f"--container-workdir={CONTAINER_WORKSPACE}",
             f"--export={','.join(env)}",
             *req.extra_args,
             "bash", f"{CONTAINER_WORKSPACE}/{req.recipe}"]
    return LaunchPlan("slurm", tuple(argv), env, req.workspace, ("scancel", f"--name={name}"), own=own)


LAUNCHERS: dict[str, Callable[[LaunchRequest], LaunchPlan]] = {
    REPOSITORY: repository, "direct": direct, "docker": docker, "slurm": slurm}
