"""What a job's recipe receives: its environment and the recipe path.

The environment is the repository's own contract (:mod:`ci_tools.jobs.env`:
the workflow templates, the fleets' launchers, ``job-env`` in
``.ci-tools.yaml``).  Recipe evaluation sees a variable known only at run
time as unknown (:func:`recipe_env`); the sweep executor, which really runs a
job, fills in what it knows itself and leaves the rest to the inherited
environment (``ci_tools.sweep.environment``).  The recipe is what the
launcher of the job's runner fleet picks (:mod:`ci_tools.jobs.resolution`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Collection, Mapping

from ..config import ProjectConfig
from ..revision.snapshot import Snapshot
from .job import Job
from .resolution import RecipeResolution, Resolver, resolver_for

__all__ = ["RecipeResolution", "job_env", "launch_env", "recipe_candidates", "recipe_env", "resolve_recipe"]

# The port job_env gives a recipe's server when the caller names none.
DEFAULT_PORT = "8888"
_DEFAULTS = ProjectConfig(root=Path("."))

if TYPE_CHECKING:  # the environment contract is imported where it is used: validate never needs it
    from .env.contract import JobEnvContract


def recipe_env(job: Job, config: ProjectConfig, snapshot: Snapshot, as_run: bool = False) -> dict[str, str | None]:
    """Every variable the job's recipe receives; None where the value is only known at run time.

    ``as_run``: only what reaches the recipe where the fleet's launcher starts it in a `docker run`
    container (what evaluating it needs; ``matrix --env`` shows the launch step's environment).
    """
    from .env.contract import contract_for

    return {name: var.value for name, var in contract_for(config, snapshot).recipe_env(job, as_run).items()}


def launch_env(job: Job, config: ProjectConfig, snapshot: Snapshot) -> dict[str, str | None]:
    """What the workflow's launch step gives the fleet's launcher, from the snapshot's own workflows; None
    where the value is only known at run time (``RESULT_FILENAME`` ends with the node's name, secrets).

    Evaluating a multinode job starts here and follows the launcher itself, so the launcher's own
    variables are not added (:func:`recipe_env` adds them for a recipe evaluated on its own).
    """
    from .env.contract import contract_for

    return {name: var.value for name, var in contract_for(config, snapshot).workflow_env(job).items()}


def job_env(job: Job, *, result_dir: str = "/workspace/results", port: str = DEFAULT_PORT, runner_name: str = "",
            run_eval: bool = False, eval_only: bool = False,
            contract: JobEnvContract | None = None) -> dict[str, str]:
    """A job's environment with made-up run-time values: what evaluating a multinode script chain and tests
    start from (``ci-tools sweep`` builds the real one in :mod:`ci_tools.sweep.environment`).

    The contract's known values (``contract`` None: the built-in one), with the
    runner context of ``runner_name`` (so ``RUNNER_NAME`` and the names built
    from it are known), ``RESULT_DIR`` and ``PORT`` as given.  Evals run only
    when asked (``RUN_EVAL``/``EVAL_ONLY``), as InferenceX's sweeps run
    throughput jobs without evals and evals as jobs of their own.  Values
    known only elsewhere (secrets, a launcher's paths) are left out.
    """
    if contract is None:
        from .env.contract import contract_for

        contract = contract_for(_DEFAULTS, None)
    runner = {"name": runner_name} if runner_name else None
    env = {name: var.value for name, var in contract.workflow_env(job, runner).items() if var.value is not None}
    env["RESULT_DIR"] = result_dir
    env["PORT"] = port
    env["RUN_EVAL"] = "true" if run_eval else "false"
    env["EVAL_ONLY"] = "true" if eval_only else "false"
    return env


def recipe_candidates(job: Job, config: ProjectConfig, snapshot: Snapshot | None = None) -> tuple[str, ...]:
    """Recipe paths the launcher of the job's (first) fleet tries, in order, without repeats.

    The fleets come from the snapshot's runners file; without a snapshot the
    runner label stands in for its fleet (see :func:`ci_tools.jobs.resolution.fleets_of`).
    """
    if snapshot is None:
        return Resolver(config, frozenset(), None)(job).candidates
    return resolver_for(config, snapshot)(job).candidates


def resolve_recipe(job: Job, config: ProjectConfig, snapshot: Snapshot, files: Collection[str] | None = None,
                   labels: Mapping[str, Any] | None = None) -> RecipeResolution:
    """What the job runs, as its fleet's launcher picks it (see :mod:`ci_tools.jobs.resolution`).

    ``files`` (a set of the snapshot's paths) and ``labels`` (runners.yaml's
    labels) save reading them again when the caller has them.
    """
    return resolver_for(config, snapshot, files, labels)(job)
