"""A matrix job's identity as its record states it (what the point key is made of)."""

from __future__ import annotations

from typing import Any, Mapping

from ..jobs.job import AGENTIC, Job
from .record import JobIdentity, Parallelism


def _int(value: Any, default: int = 1) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _role(fields: Mapping[str, Any], workers: int) -> Parallelism:
    return Parallelism(tp=_int(fields.get("tp")), ep=_int(fields.get("ep")), pp=_int(fields.get("pp")),
                       dcp=_int(fields.get("dcp-size")), pcp=_int(fields.get("pcp-size")),
                       dp_attention=fields.get("dp-attn") is True, workers=workers)


def identity(job: Job) -> JobIdentity:
    f = job.fields
    if job.multinode:
        prefill, decode = f.get("prefill") or {}, f.get("decode") or {}
        parallelism = {"prefill": _role(prefill, _int(prefill.get("num-worker"), 0)),
                       "decode": _role(decode, _int(decode.get("num-worker"), 0))}
    else:
        parallelism = {"single": _role(f, 1)}
    agentic = job.scenario == AGENTIC
    return JobIdentity(
        job_id=job.id, config_key=job.config_key, scenario=job.scenario,
        isl=None if agentic else _int(f.get("isl"), 0), osl=None if agentic else _int(f.get("osl"), 0),
        concurrency=tuple(job.concs), parallelism=parallelism, spec_decoding=str(f.get("spec-decoding") or "none"),
        disagg=f.get("disagg") is True, image=str(f.get("image") or ""), runner_label=str(f.get("runner") or ""),
        framework=str(f.get("framework") or ""), precision=str(f.get("precision") or ""),
        model=str(f.get("model") or ""), model_prefix=str(f.get("model-prefix") or ""),
        kv_offloading=_kv(f))


def _kv(fields: Mapping[str, Any]) -> str:
    kv, backend = str(fields.get("kv-offloading") or "none"), fields.get("kv-offload-backend")
    return f"{kv}/{backend}" if kv != "none" and backend else kv
