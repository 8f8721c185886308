"""A multinode job's recipe evaluated per role, or the reason none is reached.

What the job runs is decided once, for every job, by the recipe resolution
(:func:`ci_tools.jobs.contract.resolve_recipe`, the fleets' launchers as rules):
an srt-slurm recipe YAML with its selector, a bash script followed from the
fleet's launcher (:mod:`.amd_disagg`: the AMD chain, and llm-d's through
:mod:`.srun_container`), or a recipe outside the repository.
"""

from __future__ import annotations

from ...config import ProjectConfig
from ...config.resolution_rules import EXTERNAL, SCRIPT, SRT_SLURM
from ...jobs.contract import RecipeResolution, launch_env, resolve_recipe
from ...jobs.job import Job
from ...revision.snapshot import Snapshot
from ...shell.model import MISSING, RecipeEval
from .roles import role_eval, unreached
from .srt_slurm import SrtError, srt_commands


def recipe_label(resolution: RecipeResolution) -> str:
    """How a multinode recipe is named in results: the file with its selector, else the reference as written."""
    if resolution.path is None:
        return resolution.reference or ", ".join(resolution.candidates)
    return f"{resolution.path}:{resolution.selector}" if resolution.selector is not None else resolution.path


def evaluate_multinode_job(job: Job, config: ProjectConfig, snapshot: Snapshot) -> RecipeEval:
    resolution = resolve_recipe(job, config, snapshot)
    label = recipe_label(resolution)
    if resolution.kind == SRT_SLURM and resolution.path is not None:
        try:
            commands = srt_commands(snapshot, resolution.path, resolution.selector)
        except SrtError as exc:
            return unreached(label, str(exc), resolution.kind)
        return role_eval(label, commands, kind=resolution.kind)
    if resolution.kind == SCRIPT and resolution.path is not None:
        from .amd_disagg import evaluate_script_job

        result = evaluate_script_job(job, resolution, launch_env(job, config, snapshot), config, snapshot)
        # A data file the job names that is not there (an llm-d recipe YAML): what the scripts then do (fall
        # back to their defaults) is evaluated, and is not what the job asked for.
        result.errors.extend(f"{path}: not found in {snapshot.label}; the recipe reads it (rule `{resolution.rule}` "
                             "names it for this job)" for path in resolution.missing_inputs)
        return result
    if resolution.kind == EXTERNAL:
        return unreached(label, resolution.describe(), EXTERNAL)
    return unreached(label, f"no recipe: {resolution.reason}", MISSING)
