"""Multinode jobs that run a bash recipe (the AMD disaggregated scripts, llm-d and TileRT wrappers)."""

from __future__ import annotations

from typing import Mapping

from ..config import ProjectConfig
from ..findings import Location
from ..matrix import Job
from ..recipes.evaluate import ENV_NOTE, evaluate_recipe
from ..recipes.model import RecipeEval
from ..snapshot import Snapshot


def evaluate_script_job(job: Job, path: str, env: Mapping[str, str], config: ProjectConfig,
                        snapshot: Snapshot) -> RecipeEval:
    row = job.row
    where = Location(row.path, row.line, row.column, row.end_line, row.end_column, ENV_NOTE)
    result = evaluate_recipe(path, env, config, snapshot, where)
    if not result.servers:
        result.errors.append(f"{path}: no server command line reached: the script submits a batch job "
                             "whose server scripts are not followed")
    return result
