"""What a job's recipe receives: its environment and the recipe path.

The env contract is the list in FORMATS.md ("Environment a recipe
receives"); the recipe is what the launcher of the job's runner fleet picks
(:mod:`ci_tools.recipe_resolution`).
"""

from __future__ import annotations

from typing import Any, Collection, Mapping

from .config import ProjectConfig
from .matrix import AGENTIC, DEFAULT_PORT, Job, gpus_of
from .recipe_resolution import RecipeResolution, Resolver, resolver_for
from .snapshot import Snapshot

__all__ = ["RecipeResolution", "default_runner_name", "job_env", "recipe_candidates", "resolve_recipe"]


def _s(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def job_env(job: Job, *, result_dir: str = "/workspace/results", port: str = DEFAULT_PORT,
            runner_name: str = "", run_eval: bool = False, eval_only: bool = False) -> dict[str, str]:
    """The exact environment the job's recipe is started with.

    ``runner_name`` is the node the job lands on (``mi355x-amds_03``); without
    it the runner label stands in, see :func:`default_runner_name`.
    """
    f = job.fields
    backend = f.get("kv-offload-backend")
    agentic = job.scenario == AGENTIC
    # Agentic jobs have no fixed sequence lengths; the workflow passes zeros.
    seq = {"ISL": "0", "OSL": "0", "MAX_MODEL_LEN": "0"} if agentic else {
        "ISL": _s(f.get("isl")), "OSL": _s(f.get("osl")), "MAX_MODEL_LEN": _s(f.get("max-model-len"))}
    env = {
        "MODEL": _s(f.get("model")),
        "MODEL_PREFIX": _s(f.get("model-prefix")),
        "IMAGE": _s(f.get("image")),
        "FRAMEWORK": _s(f.get("framework")),
        "PRECISION": _s(f.get("precision")),
        **seq,
        "SPEC_DECODING": _s(f.get("spec-decoding", "none")),
        "DISAGG": _s(bool(f.get("disagg"))),
        "RUN_EVAL": _s(run_eval),
        "EVAL_ONLY": _s(eval_only),
        "SCENARIO_TYPE": job.scenario,
        "IS_AGENTIC": "1" if agentic else "0",
        "KV_OFFLOADING": _s(f.get("kv-offloading", "none")),
        "KV_OFFLOAD_BACKEND": _s(backend.get("name") if isinstance(backend, dict) else ""),
        "TOTAL_CPU_DRAM_GB": _s(f.get("total-cpu-dram-gb")),
        "DURATION": _s(f.get("duration")),
        "EXP_NAME": _s(f.get("exp-name")),
        "RESULT_DIR": result_dir,
        "PORT": port,
        "RUNNER_NAME": runner_name or _s(f.get("runner")),
    }
    if job.multinode:
        env["CONC_LIST"] = " ".join(str(c) for c in f.get("conc-list", []))
        for role in ("prefill", "decode"):
            block = f.get(role) or {}
            up = role.upper()
            env[f"{up}_NUM_WORKERS"] = _s(block.get("num-worker"))
            env[f"{up}_TP"] = _s(block.get("tp"))
            env[f"{up}_EP"] = _s(block.get("ep"))
            env[f"{up}_DP_ATTN"] = _s(block.get("dp-attn", False))
            env[f"{up}_PP_SIZE"] = _s(block.get("pp"))
            env[f"{up}_DCP_SIZE"] = _s(block.get("dcp-size"))
            env[f"{up}_PCP_SIZE"] = _s(block.get("pcp-size"))
            for setting in block.get("additional-settings") or []:
                name, sep, value = str(setting).partition("=")
                if sep and name.strip():
                    env[name.strip()] = value
    else:
        gpus = gpus_of(f)
        env.update({
            "TP": _s(f.get("tp")),
            "PP_SIZE": _s(f.get("pp", 1)),
            "DCP_SIZE": _s(f.get("dcp-size", 1)),
            "PCP_SIZE": _s(f.get("pcp-size", 1)),
            "EP_SIZE": _s(f.get("ep", 1)),
            "DP_ATTENTION": _s(f.get("dp-attn", False)),
            "CONC": _s(f.get("conc")),
            "GPU_COUNT": _s(gpus),
        })
    return env


def default_runner_name(job: Job, runner_labels: Mapping[str, Any]) -> str:
    """The first node of the job's runner label (what RUNNER_NAME is on that fleet), else the label."""
    label = str(job.fields.get("runner") or "")
    nodes = runner_labels.get(label)
    if isinstance(nodes, list) and nodes and isinstance(nodes[0], str):
        return nodes[0]
    return label


def recipe_candidates(job: Job, config: ProjectConfig, snapshot: Snapshot | None = None) -> tuple[str, ...]:
    """Recipe paths the launcher of the job's (first) fleet tries, in order, without repeats.

    The fleets come from the snapshot's runners file; without a snapshot the
    runner label stands in for its fleet (see :func:`ci_tools.recipe_resolution.fleets_of`).
    """
    if snapshot is None:
        return Resolver(config, frozenset(), None)(job).candidates
    return resolver_for(config, snapshot)(job).candidates


def resolve_recipe(job: Job, config: ProjectConfig, snapshot: Snapshot, files: Collection[str] | None = None,
                   labels: Mapping[str, Any] | None = None) -> RecipeResolution:
    """What the job runs, as its fleet's launcher picks it (see :mod:`ci_tools.recipe_resolution`).

    ``files`` (a set of the snapshot's paths) and ``labels`` (runners.yaml's
    labels) save reading them again when the caller has them.
    """
    return resolver_for(config, snapshot, files, labels)(job)
