"""A job's metrics computed exactly as InferenceX's ``utils/process_result.py`` computes them.

Input: the raw client result (``benchmark_serving.py --save-result``: the
run's throughputs and ``*_ms`` latency statistics) and the environment the
workflow gives the script (``RUNNER_TYPE``, ``TP``, ``PREFILL_GPUS``, ...).
Output: the ``agg_<name>.json`` body, key for key and float for float
(``tests/test_results_metrics.py`` runs the original on the same inputs),
then the power fields ``aggregate_power.py`` patches in (:mod:`.power`).

Agentic jobs never pass through process_result.py: InferenceX's recipe
aggregates them itself (``process_agentic_result``), so their result file is
already the aggregate and :func:`canonical` reads it where it is.

:func:`canonical` names the few metrics the comparison speaks of, each
with its unit and direction, from either shape.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from . import power as _power

AGENTIC = "agentic-coding"
CLIENT_MAX_FAILURE_RATE = 0.05  # benchmark_serving.py exits 1 above this, after saving the result
AGENTIC_MAX_FAILURE_RATE = 0.10  # AIPERF_FAILED_REQUEST_THRESHOLD in InferenceX's template
_BASE_ENV = ("RUNNER_TYPE", "FRAMEWORK", "PRECISION", "SPEC_DECODING", "RESULT_FILENAME", "ISL", "OSL", "DISAGG",
             "MODEL_PREFIX", "IMAGE")
_MULTINODE_ENV = ("PREFILL_GPUS", "DECODE_GPUS", "PREFILL_NUM_WORKERS", "PREFILL_TP", "PREFILL_EP", "PREFILL_DP_ATTN",
                  "DECODE_NUM_WORKERS", "DECODE_TP", "DECODE_EP", "DECODE_DP_ATTN")


class MetricsError(ValueError):
    """A raw result or environment process_result.py would stop on; the message names the file and field."""


@dataclass(frozen=True)
class Metric:
    name: str
    unit: str
    higher_is_better: bool | None  # None: reported, never judged better or worse
    fixed_key: str  # in process_result.py's aggregate
    agentic_path: tuple[str, ...]  # in process_agentic_result's aggregate ("" when it has none)


CANONICAL: tuple[Metric, ...] = (
    Metric("throughput_per_gpu", "tok/s/GPU", True, "tput_per_gpu",
           ("request_metrics", "throughput", "per_gpu", "total_tput_tps")),
    Metric("output_throughput_per_gpu", "tok/s/GPU", True, "output_tput_per_gpu",
           ("request_metrics", "throughput", "per_gpu", "output_tput_tps")),
    Metric("input_throughput_per_gpu", "tok/s/GPU", True, "input_tput_per_gpu",
           ("request_metrics", "throughput", "per_gpu", "input_tput_tps")),
    Metric("interactivity", "tok/s/user", True, "median_intvty", ("request_metrics", "latency", "intvty", "p50")),
    Metric("ttft_median", "s", False, "median_ttft", ("request_metrics", "latency", "ttft", "p50")),
    Metric("ttft_p99", "s", False, "p99_ttft", ()),
    Metric("tpot_median", "s", False, "median_tpot", ("request_metrics", "latency", "tpot", "p50")),
    Metric("e2el_median", "s", False, "median_e2el", ("request_metrics", "latency", "e2el", "p50")),
    Metric("energy_per_output_token", "J/tok", False, "joules_per_output_token", ()),
    Metric("avg_power_per_gpu", "W", None, "avg_power_w", ()),
)
BY_NAME = {m.name: m for m in CANONICAL}


def _env(env: Mapping[str, str], names: tuple[str, ...], source: str) -> dict[str, str]:
    missing = [n for n in names if env.get(n) is None]
    if missing:
        raise MetricsError(f"{source}: missing required environment variables: {', '.join(missing)}")
    return {n: env[n] for n in names}


def _int(env: Mapping[str, str], name: str, source: str, default: str | None = None) -> int:
    value = env.get(name, default)
    try:
        return int(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise MetricsError(f"{source}: environment {name}={value!r} is not an integer") from None


def _number(raw: Mapping[str, Any], key: str, source: str) -> float:
    try:
        return float(raw[key])
    except KeyError:
        raise MetricsError(f"{source}: field `{key}` is missing") from None
    except (TypeError, ValueError):
        raise MetricsError(f"{source}: field `{key}` is {raw[key]!r}, expected a number") from None


def _optional_component(env: Mapping[str, str], name: str, source: str) -> dict[str, Any] | None:
    raw = env.get(name)
    if raw in (None, "", "null"):
        return None
    try:
        meta = json.loads(raw)
    except json.JSONDecodeError:
        raise MetricsError(f"{source}: {name} must contain valid JSON") from None
    if not isinstance(meta, dict) or set(meta) != {"name", "version"}:
        raise MetricsError(f"{source}: {name} must contain exactly 'name' and 'version'")
    if not all(isinstance(meta[k], str) and meta[k] for k in meta):
        raise MetricsError(f"{source}: {name} name and version must be non-empty strings")
    return meta


def process_result(raw: Mapping[str, Any], env: Mapping[str, str], *, source: str = "raw result") -> dict[str, Any]:
    """The aggregate process_result.py writes before power is patched in."""
    base = _env(env, _BASE_ENV, source)
    if "max_concurrency" not in raw or "model_id" not in raw:
        raise MetricsError(f"{source}: field `{'max_concurrency' if 'max_concurrency' not in raw else 'model_id'}` "
                           "is missing (not a benchmark_serving.py --save-result file?)")
    disagg = base["DISAGG"].lower() == "true"
    data: dict[str, Any] = {
        "hw": base["RUNNER_TYPE"], "conc": int(_number(raw, "max_concurrency", source)), "image": base["IMAGE"],
        "model": raw["model_id"], "infmax_model_prefix": base["MODEL_PREFIX"], "framework": base["FRAMEWORK"],
        "precision": base["PRECISION"], "spec_decoding": base["SPEC_DECODING"], "disagg": disagg,
        "recipe_fingerprint": env.get("RECIPE_FINGERPRINT", ""),
        "isl": _int(env, "ISL", source), "osl": _int(env, "OSL", source),
    }
    router = _optional_component(env, "ROUTER_METADATA", source)
    if router is not None:
        data["router"] = router
    if env.get("KV_P2P_TRANSFER"):
        data["kv_p2p_transfer"] = env["KV_P2P_TRANSFER"]
    total = _number(raw, "total_token_throughput", source)
    output = _number(raw, "output_throughput", source)
    if env.get("IS_MULTINODE", "false").lower() == "true":
        data |= _multinode(env, total, output, source)
    else:
        if disagg:
            raise MetricsError(f"{source}: DISAGG=true requires a multinode job (IS_MULTINODE=true)")
        data |= _single_node(env, total, output, source)
    for key, value in raw.items():
        if key.endswith("ms"):
            data[key.replace("_ms", "")] = _float(value, key, source) / 1000.0
        if "tpot" in key:
            tpot = _float(value, key, source)
            if tpot == 0:
                raise MetricsError(f"{source}: field `{key}` is 0; process_result.py divides by it (interactivity)")
            data[key.replace("_ms", "").replace("tpot", "intvty")] = 1000.0 / tpot
    return data


def _float(value: Any, key: str, source: str) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        raise MetricsError(f"{source}: field `{key}` is {value!r}, expected a number") from None


def _single_node(env: Mapping[str, str], total: float, output: float, source: str) -> dict[str, Any]:
    _env(env, ("TP", "EP_SIZE", "DP_ATTENTION"), source)
    tp, ep = _int(env, "TP", source), _int(env, "EP_SIZE", source)
    pp, dcp, pcp = (_int(env, n, source, "1") for n in ("PP_SIZE", "DCP_SIZE", "PCP_SIZE"))
    if pp <= 0 or dcp <= 0 or pcp <= 0:
        raise MetricsError(f"{source}: PP_SIZE, DCP_SIZE, and PCP_SIZE must be positive integers")
    gpus = tp * pp * pcp
    if gpus == 0:
        raise MetricsError(f"{source}: TP={tp} gives no GPUs to divide throughput by")
    return {"is_multinode": False, "tp": tp, "pp": pp, "dcp_size": dcp, "pcp_size": pcp, "ep": ep,
            "dp_attention": env["DP_ATTENTION"], "tput_per_gpu": total / gpus, "output_tput_per_gpu": output / gpus,
            "input_tput_per_gpu": (total - output) / gpus}


def _multinode(env: Mapping[str, str], total: float, output: float, source: str) -> dict[str, Any]:
    _env(env, _MULTINODE_ENV, source)
    prefill_hw, decode_hw = env.get("PREFILL_HARDWARE", ""), env.get("DECODE_HARDWARE", "")
    if bool(prefill_hw) != bool(decode_hw):
        raise MetricsError(f"{source}: PREFILL_HARDWARE and DECODE_HARDWARE must be specified together")
    n = {name: _int(env, name, source) for name in ("PREFILL_GPUS", "DECODE_GPUS", "PREFILL_NUM_WORKERS", "PREFILL_TP",
                                                    "PREFILL_EP", "DECODE_NUM_WORKERS", "DECODE_TP", "DECODE_EP")}
    sizes = {name: _int(env, name, source, "1") for name in ("PREFILL_PP_SIZE", "PREFILL_DCP_SIZE", "PREFILL_PCP_SIZE",
                                                             "DECODE_PP_SIZE", "DECODE_DCP_SIZE", "DECODE_PCP_SIZE")}
    if any(v <= 0 for v in sizes.values()):
        raise MetricsError(f"{source}: multinode PP, DCP, and PCP sizes must be positive integers")
    prefill, decode = n["PREFILL_GPUS"], n["DECODE_GPUS"]
    if prefill + decode <= 0:
        raise MetricsError(f"{source}: multinode results require at least one GPU")
    if prefill <= 0:
        raise MetricsError(f"{source}: multinode results require at least one prefill GPU")
    has_decode = decode > 0
    out: dict[str, Any] = {
        "is_multinode": True, "prefill_tp": n["PREFILL_TP"], "prefill_pp": sizes["PREFILL_PP_SIZE"],
        "prefill_dcp_size": sizes["PREFILL_DCP_SIZE"], "prefill_pcp_size": sizes["PREFILL_PCP_SIZE"],
        "prefill_ep": n["PREFILL_EP"], "prefill_dp_attention": env["PREFILL_DP_ATTN"],
        "prefill_num_workers": n["PREFILL_NUM_WORKERS"],
        "decode_tp": n["DECODE_TP"] if has_decode else 0,
        "decode_pp": sizes["DECODE_PP_SIZE"] if has_decode else 1,
        "decode_dcp_size": sizes["DECODE_DCP_SIZE"] if has_decode else 1,
        "decode_pcp_size": sizes["DECODE_PCP_SIZE"] if has_decode else 1,
        "decode_ep": n["DECODE_EP"] if has_decode else 0, "decode_dp_attention": env["DECODE_DP_ATTN"],
        "decode_num_workers": n["DECODE_NUM_WORKERS"], "num_prefill_gpu": prefill, "num_decode_gpu": decode,
        "tput_per_gpu": total / (prefill + decode),
        "output_tput_per_gpu": output / (decode if has_decode else prefill + decode),
        "input_tput_per_gpu": (total - output) / prefill,
    }
    if prefill_hw:
        out["prefill_hw"], out["decode_hw"] = prefill_hw, decode_hw
    return out


def gpu_count(agg: Mapping[str, Any]) -> int:
    """GPUs the job used, as process_result.py counts them for power."""
    if agg.get("is_multinode"):
        return int(agg["num_prefill_gpu"]) + int(agg["num_decode_gpu"])
    return int(agg["tp"]) * int(agg["pp"]) * int(agg["pcp_size"])


def aggregate(raw: Mapping[str, Any], env: Mapping[str, str], *, gpu_metrics: Path | None = None,
              power_dir: Path | None = None, source: str = "raw result") -> tuple[dict[str, Any], _power.Power]:
    """The final ``agg_<name>.json`` (process_result.py, then power) and the power verdict behind it."""
    agg = process_result(raw, env, source=source)
    if agg["is_multinode"]:
        measured = _multinode_power(raw, env, agg, power_dir, Path(source).name)
    else:
        measured = _power.single_node(gpu_metrics, raw, gpu_count(agg))
    return _power.patch(agg, measured), measured


def _multinode_power(raw: Mapping[str, Any], env: Mapping[str, str], agg: Mapping[str, Any],
                     power_dir: Path | None, copy_name: str) -> _power.Power:
    """The bundle under ``LOGS/power`` of the job's workspace (``power_dir``), its results under ``LOGS``."""
    from . import power_multinode

    if power_dir is None:
        return _power.Power(False, ("power_artifacts_missing",))
    workspace = power_dir.parent.parent
    return power_multinode.multinode(power_dir, power_dir.parent, raw, prefill_gpus=int(agg["num_prefill_gpu"]),
                                     decode_gpus=int(agg["num_decode_gpu"]),
                                     producer_sha=power_multinode.producer_pin(env, workspace), copy_name=copy_name)


def _at(data: Mapping[str, Any], path: tuple[str, ...]) -> Any:
    value: Any = data
    for part in path:
        value = value.get(part) if isinstance(value, Mapping) else None
    return value


def canonical(agg: Mapping[str, Any]) -> dict[str, float]:
    """The canonical metrics present in an aggregate (process_result.py's, or an agentic one)."""
    agentic = agg.get("scenario_type") == AGENTIC
    out: dict[str, float] = {}
    for m in CANONICAL:
        if agentic:
            value = _at(agg, m.agentic_path) if m.agentic_path else None
        else:
            value = agg.get(m.fixed_key)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
            out[m.name] = float(value)
    return out
