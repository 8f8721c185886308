"""What a job's recipe receives: its environment and the recipe path.

The environment is the repository's own contract (:mod:`ci_tools.jobenv`:
the workflow templates, the fleets' launchers, ``job-env`` in
``.ci-tools.yaml``).  Recipe evaluation sees a variable known only at run
time as unknown (:func:`recipe_env`); the sweep executor, which really runs a
job, fills in what it knows itself and leaves the rest to the inherited
environment (:func:`job_env`).  The recipe path comes from the configured
templates, first existing candidate wins, the way the fleet launchers pick
it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Collection, Mapping

from .config import ProjectConfig
from .errors import UsageError
from .jobenv.contract import JobEnvContract, contract_for
from .matrix import AGENTIC, Job, gpu_name
from .snapshot import Snapshot

# The port the sweep executor gives a recipe's server when the caller names none.
DEFAULT_PORT = "8888"
_DEFAULTS = ProjectConfig(root=Path("."))


def recipe_env(job: Job, config: ProjectConfig, snapshot: Snapshot) -> dict[str, str | None]:
    """Every variable the job's recipe receives; None where the value is only known at run time."""
    return {name: var.value for name, var in contract_for(config, snapshot).recipe_env(job).items()}


def job_env(job: Job, *, result_dir: str = "/workspace/results", port: str = DEFAULT_PORT, runner_name: str = "",
            run_eval: bool = False, eval_only: bool = False,
            contract: JobEnvContract | None = None) -> dict[str, str]:
    """The environment the sweep executor starts the job's recipe with.

    The contract's known values (``contract`` None: the built-in one), with the
    runner context of ``runner_name`` (so ``RUNNER_NAME`` and the names built
    from it are known), ``RESULT_DIR`` and ``PORT`` of this run.  Evals run
    only when asked (``RUN_EVAL``/``EVAL_ONLY``), as InferenceX's sweeps run
    throughput jobs without evals and evals as jobs of their own.  Values
    known only elsewhere (secrets, a launcher's paths) are left to the
    inherited environment.
    """
    if contract is None:
        contract = contract_for(_DEFAULTS, None)
    runner = {"name": runner_name} if runner_name else None
    env = {name: var.value for name, var in contract.workflow_env(job, runner).items() if var.value is not None}
    env["RESULT_DIR"] = result_dir
    env["PORT"] = port
    env["RUN_EVAL"] = "true" if run_eval else "false"
    env["EVAL_ONLY"] = "true" if eval_only else "false"
    return env


def default_runner_name(job: Job, runner_labels: Mapping[str, Any]) -> str:
    """The first node of the job's runner label (what RUNNER_NAME is on that fleet), else the label."""
    label = str(job.fields.get("runner") or "")
    nodes = runner_labels.get(label)
    if isinstance(nodes, list) and nodes and isinstance(nodes[0], str):
        return nodes[0]
    return label


@dataclass(frozen=True)
class RecipeResolution:
    """The recipe a job runs (None when no candidate exists) and every candidate, in the order tried."""

    path: str | None
    candidates: tuple[str, ...]


def recipe_candidates(job: Job, config: ProjectConfig) -> tuple[str, ...]:
    """Recipe paths the configured templates give for the job, in fallback order, without repeats."""
    f = job.fields
    framework = str(f.get("framework") or "")
    values = {
        "model_prefix": f.get("model-prefix") or "",
        "precision": f.get("precision") or "",
        "gpu": gpu_name(str(f.get("runner") or "")),
        "framework": framework,
        "framework_suffix": {"trt": "_trt", "atom": "_atom"}.get(framework, ""),
        "mtp": "_mtp" if f.get("spec-decoding") == "mtp" else "",
        "scenario_dir": "agentic" if job.scenario == AGENTIC else "fixed_seq_len",
        "agentic_dir": "agentic/" if job.scenario == AGENTIC else "",
        "config_key": job.config_key,
    }
    templates = config.multinode_templates if job.multinode else config.single_node_templates
    out: list[str] = []
    for t in templates:
        try:
            path = t.format(**values)
        except (KeyError, IndexError, ValueError) as exc:
            raise UsageError(f"recipe template `{t}` cannot be filled ({type(exc).__name__}: {exc}); expected only "
                             f"the placeholders {', '.join('{' + k + '}' for k in values)}",
                             path=config.source) from None
        if path not in out:
            out.append(path)
    return tuple(out)


def resolve_recipe(job: Job, config: ProjectConfig, snapshot: Snapshot,
                   files: Collection[str] | None = None) -> RecipeResolution:
    """First existing candidate wins, as in the fleet launchers.

    ``files`` (a set of the snapshot's paths) saves rebuilding it when many
    jobs are resolved against the same snapshot.
    """
    candidates = recipe_candidates(job, config)
    if files is None:
        files = frozenset(snapshot.files())
    for c in candidates:
        if c in files:
            return RecipeResolution(c, candidates)
    return RecipeResolution(None, candidates)
