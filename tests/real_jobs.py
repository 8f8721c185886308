"""The real tree's single-node jobs with the environment their recipe receives, from the oracle files.

Tests over the real InferenceX tree evaluate recipes with each job's
environment as ``expected/job-env.json`` gives it, so that they do not depend
on how ci-tools derives the environment.  Two corrections, both from reading
the workflow and launcher files (which win where the oracle disagrees):

- benchmark-tmpl.yml's top-level ``env:`` block sets constants the oracle
  leaves out (RANDOM_RANGE_RATIO=0.8, ...), and its launch step exports
  RESULT_FILENAME (built from the runner's name) and RUNNER_NAME/RUNNER_TYPE;
- every variable a ``runners/launch_*.sh`` exports (MODEL_PATH, PORT,
  HF_HUB_CACHE, ...) reaches the recipe with a value known only on the
  runner: it is passed as present with an unknown value.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from ci_tools.config import ProjectConfig, load_config
from ci_tools.jobs.contract import resolve_recipe
from ci_tools.findings import Location
from ci_tools.jobs.job import AGENTIC, Job
from ci_tools.shell.model import RecipeEval, Value
from ci_tools.revision.snapshot import WorkTreeSnapshot

from conftest import full_corpus_dir

# benchmark-tmpl.yml `env:` constants that expected/job-env.json does not list.
WORKFLOW_CONSTANTS = {
    "RANDOM_RANGE_RATIO": "0.8",
    "AIPERF_FAILED_REQUEST_THRESHOLD": "0.10",
    "PYTHONDONTWRITEBYTECODE": "1",
    "PYTHONPYCACHEPREFIX": "/tmp/inferencex-pycache",
    "SWEBENCH_USE_MODAL": "true",
    "REQUIRE_POWER": "0",
    "AIPERF_EXPERIMENTAL_FAST": "0",
    "EVAL_LIMIT": "",
    "SWEBENCH_GEN_MODE": "",
    "SALLOC_EXCLUDE": "b300-005,b300-006",
}
# Set by the workflow from secrets or the runner, and by the launch step.
WORKFLOW_RUNTIME = ("HF_TOKEN", "HF_HUB_CACHE", "RUNNER_NAME", "RESULT_FILENAME", "MODAL_TOKEN_ID",
                    "MODAL_TOKEN_SECRET")
LAUNCHER_NOTE = "set by the runner's launcher at run time"
_EXPORT = re.compile(r"^\s*export\s+([A-Za-z_][A-Za-z0-9_]*)=", re.M)
_SRUN_EXPORT = re.compile(r"--export=ALL((?:,[A-Za-z_][A-Za-z0-9_]*=[^, \\\n]*)*)")


@dataclass(frozen=True)
class RealJob:
    job: Job
    recipe: str | None
    env: dict[str, str | Value]

    @property
    def key(self) -> str:
        return self.job.config_key


@lru_cache(maxsize=1)
def launcher_variables(root: Path) -> tuple[str, ...]:
    """Every variable some ``runners/launch_*.sh`` exports to the recipe it starts."""
    names: set[str] = set()
    for launcher in sorted((root / "runners").glob("launch_*.sh")):
        text = launcher.read_text()
        names.update(_EXPORT.findall(text))
        for group in _SRUN_EXPORT.findall(text):
            names.update(item.split("=", 1)[0] for item in group.split(",") if item)
    return tuple(sorted(names))


def job_environment(root: Path, oracle_env: dict[str, str], runner: str) -> dict[str, str | Value]:
    env: dict[str, str | Value] = dict(WORKFLOW_CONSTANTS)
    env.update(oracle_env)
    env["RUNNER_TYPE"] = runner
    for name in WORKFLOW_RUNTIME + launcher_variables(root):
        if name not in oracle_env:
            env[name] = Value(None, Location("runners", 0, note=LAUNCHER_NOTE), expression=f"${name}")
    return env


@lru_cache(maxsize=1)
def real_jobs_at(root: Path) -> tuple[ProjectConfig, WorkTreeSnapshot, tuple[RealJob, ...]]:
    config = load_config(root)
    snapshot = WorkTreeSnapshot(root)
    jobs = json.loads((root / "expected" / "full-sweep-keyed.json").read_text())
    envs = json.loads((root / "expected" / "job-env.json").read_text())
    out: list[RealJob] = []
    files = frozenset(snapshot.files())
    for index, (fields, env) in enumerate(zip(jobs, envs)):
        if "prefill" in fields:
            continue  # multinode
        assert env["config-key"] == fields["config-key"], f"oracle files disagree at job {index}"
        job = _job(index, fields)
        recipe = resolve_recipe(job, config, snapshot, files).path
        out.append(RealJob(job, recipe, job_environment(root, env["env"], str(fields["runner"]))))
    return config, snapshot, tuple(out)


def _job(index: int, fields: dict[str, Any]) -> Job:
    scenario = str(fields.get("scenario-type", "fixed-seq-len"))
    rest = {k: v for k, v in fields.items() if k not in ("config-key", "scenario-type")}
    where = Location("expected/full-sweep-keyed.json", index + 1, note="oracle job")
    return Job(fields["config-key"], AGENTIC if scenario == AGENTIC else scenario, rest, where)


def real_single_node_jobs() -> tuple[ProjectConfig, WorkTreeSnapshot, tuple[RealJob, ...]]:
    """The real tree's config, snapshot and every single-node job (skips when the tree is absent)."""
    return real_jobs_at(full_corpus_dir())


@lru_cache(maxsize=1)
def _evaluations(root: Path) -> tuple[tuple[RealJob, RecipeEval | None], ...]:
    from ci_tools.evaluation.evaluate import evaluate_recipe

    config, snapshot, jobs = real_jobs_at(root)
    return tuple((rj, evaluate_recipe(rj.recipe, rj.env, config, snapshot) if rj.recipe else None) for rj in jobs)


def real_evaluations() -> tuple[tuple[RealJob, RecipeEval | None], ...]:
    """Every real single-node job evaluated once per test session (skips when the tree is absent)."""
    return _evaluations(full_corpus_dir())
