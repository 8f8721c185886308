"""A multinode job's recipe evaluated per role, or the reason none is reached."""

from __future__ import annotations

from ..config import ProjectConfig
from ..contract import job_env
from ..matrix import Job
from ..recipes.model import RecipeEval
from ..snapshot import Snapshot
from .locate import SCRIPT, SRT_SLURM, locate_recipe
from .roles import role_eval, unreached
from .srt_slurm import SrtError, srt_commands


def evaluate_multinode_job(job: Job, config: ProjectConfig, snapshot: Snapshot) -> RecipeEval:
    env = job_env(job)
    recipe = locate_recipe(job, env, config, snapshot)
    if recipe.kind == SRT_SLURM and recipe.path is not None:
        try:
            commands = srt_commands(snapshot, recipe.path, recipe.selector)
        except SrtError as exc:
            return unreached(recipe.label, str(exc))
        return role_eval(recipe.label, commands)
    if recipe.kind == SCRIPT and recipe.path is not None:
        from .scripts import evaluate_script_job

        return evaluate_script_job(job, recipe.path, env, config, snapshot)
    return unreached(recipe.label, recipe.reason)
