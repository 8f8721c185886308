"""Multinode jobs that run a bash recipe: followed from the fleet's launcher (:mod:`.amd_disagg`)."""

from __future__ import annotations

from typing import Mapping

from ..config import ProjectConfig
from ..matrix import Job
from ..recipes.model import RecipeEval
from ..snapshot import Snapshot
from .amd_disagg import evaluate_amd_job


def evaluate_script_job(job: Job, path: str, env: Mapping[str, str], config: ProjectConfig,
                        snapshot: Snapshot) -> RecipeEval:
    return evaluate_amd_job(job, path, env, config, snapshot)
