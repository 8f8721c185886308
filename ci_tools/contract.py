"""What a job's recipe receives: its environment and the recipe path.

The env contract is the list in FORMATS.md ("Environment a recipe
receives"); the recipe path comes from the configured templates, first
existing candidate wins, the way the fleet launchers pick it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .config import ProjectConfig
from .matrix import AGENTIC, Job, gpu_name
from .snapshot import Snapshot


def _s(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def job_env(job: Job, *, result_dir: str = "/workspace/results", port: str = "8888",
            runner_name: str = "", run_eval: bool = False, eval_only: bool = False) -> dict[str, str]:
    """The exact environment the job's recipe is started with."""
    f = job.fields
    backend = f.get("kv-offload-backend")
    env = {
        "MODEL": _s(f.get("model")),
        "MODEL_PREFIX": _s(f.get("model-prefix")),
        "IMAGE": _s(f.get("image")),
        "FRAMEWORK": _s(f.get("framework")),
        "PRECISION": _s(f.get("precision")),
        "ISL": _s(f.get("isl")),
        "OSL": _s(f.get("osl")),
        "MAX_MODEL_LEN": _s(f.get("max-model-len")),
        "SPEC_DECODING": _s(f.get("spec-decoding", "none")),
        "DISAGG": _s(bool(f.get("disagg"))),
        "RUN_EVAL": _s(run_eval),
        "EVAL_ONLY": _s(eval_only),
        "SCENARIO_TYPE": job.scenario,
        "IS_AGENTIC": _s(job.scenario == AGENTIC),
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
            env[f"{up}_DP_ATTN"] = _s(bool(block.get("dp-attn")))
            env[f"{up}_PP_SIZE"] = _s(block.get("pp"))
            env[f"{up}_DCP_SIZE"] = _s(block.get("dcp-size"))
            env[f"{up}_PCP_SIZE"] = _s(block.get("pcp-size"))
            for setting in block.get("additional-settings") or []:
                name, sep, value = str(setting).partition("=")
                if sep and name.strip():
                    env[name.strip()] = value
    else:
        tp, pp, pcp = f.get("tp"), f.get("pp", 1), f.get("pcp-size", 1)
        env.update({
            "TP": _s(tp),
            "PP_SIZE": _s(pp),
            "DCP_SIZE": _s(f.get("dcp-size", 1)),
            "PCP_SIZE": _s(pcp),
            "EP_SIZE": _s(f.get("ep", 1)),
            "DP_ATTENTION": _s(bool(f.get("dp-attn"))),
            "CONC": _s(f.get("conc")),
            "GPU_COUNT": _s(tp * pp * pcp) if all(isinstance(v, int) for v in (tp, pp, pcp)) else "",
        })
    return env


@dataclass(frozen=True)
class RecipeResolution:
    path: str | None
    candidates: tuple[str, ...]


def recipe_candidates(job: Job, config: ProjectConfig) -> tuple[str, ...]:
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
        path = t.format(**values)
        if path not in out:
            out.append(path)
    return tuple(out)


def resolve_recipe(job: Job, config: ProjectConfig, snapshot: Snapshot) -> RecipeResolution:
    candidates = recipe_candidates(job, config)
    files = set(snapshot.files())
    for c in candidates:
        if c in files:
            return RecipeResolution(c, candidates)
    return RecipeResolution(None, candidates)
