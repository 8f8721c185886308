"""One raw client result turned into a record's :class:`~.record.PointResult`.

Fixed-sequence-length results go through :func:`.metrics.aggregate` (the
aggregate is written beside the raw file as ``agg_<name>.json``, the file
InferenceX uploads); agentic results are already InferenceX's aggregate.
Validity: a run the client itself fails (more than 5 % of requests failed;
10 % of an agentic replay's profiled requests, its warmup ones left out, the
template's threshold) or that completed nothing is invalid; power is valid,
invalid, or not measured (None) when the job left no telemetry.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping

from . import metrics as _metrics
from .record import PointResult, Validity

_NOT_MEASURED = {"telemetry_file_missing", "power_artifacts_missing"}


def _read(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise _metrics.MetricsError(f"{path}: not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise _metrics.MetricsError(f"{path}:{exc.lineno}:{exc.colno}: not JSON ({exc.msg})") from None
    except OSError as exc:
        raise _metrics.MetricsError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if not isinstance(data, dict):
        raise _metrics.MetricsError(f"{path}: found {type(data).__name__}, expected a JSON object")
    return data


def _failure_validity(completed: int, requested: int, limit: float, power_valid: bool | None) -> Validity:
    rate = 1 - completed / requested if requested > 0 else 1.0
    reasons: list[str] = []
    if completed <= 0:
        reasons.append("no request completed")
    elif rate > limit:
        reasons.append(f"request failure rate {rate:.1%} over {limit:.0%} ({completed}/{requested} completed)")
    return Validity(completed=completed, requested=requested, failure_rate=round(rate, 6), power_valid=power_valid,
                    reasons=tuple(reasons))


def _profiled_requests(raw: Mapping[str, Any], total: int) -> int:
    """The requests of an agentic replay's profiling phase: its total less the warmup records AIPerf exports
    beside them (``--warmup-requests-per-lane`` of each lane, one token each), which process_agentic_result
    drops, as AIPerf's own error rate leaves them out. An aggregate with no accounting counts them all."""
    accounting = raw.get("request_accounting")
    warmup = accounting.get("records_warmup_dropped") if isinstance(accounting, dict) else None
    return total - warmup if isinstance(warmup, int) and 0 <= warmup <= total else total


def measure(raw_path: Path, env: Mapping[str, str], job_dir: Path, *, gpu_metrics: Path | None = None,
            power_dir: Path | None = None) -> PointResult:
    """Compute one point's metrics and validity; paths in the result are relative to ``job_dir``."""
    raw = _read(raw_path)
    rel = raw_path.resolve().relative_to(job_dir.resolve()).as_posix()
    if raw.get("scenario_type") == _metrics.AGENTIC:
        completed, total = raw.get("num_requests_successful"), raw.get("num_requests_total")
        if not isinstance(completed, int) or not isinstance(total, int):
            raise _metrics.MetricsError(f"{raw_path}: field `num_requests_successful`/`num_requests_total` "
                                        "missing or not integers (not a process_agentic_result aggregate?)")
        validity = _failure_validity(completed, _profiled_requests(raw, total), _metrics.AGENTIC_MAX_FAILURE_RATE,
                                     None)
        return PointResult(concurrency=int(raw.get("conc") or env.get("CONC") or 0), validity=validity,
                           metrics=_metrics.canonical(raw), raw_result=rel, aggregate=rel)
    agg, power = _metrics.aggregate(raw, env, gpu_metrics=gpu_metrics, power_dir=power_dir, source=str(raw_path))
    agg_path = raw_path.with_name(f"agg_{raw_path.stem}.json")
    agg_path.write_text(json.dumps(agg, indent=2), encoding="utf-8")
    power_valid = None if set(power.reasons) <= _NOT_MEASURED and not power.valid else power.valid
    requested = raw.get("num_prompts")
    validity = _failure_validity(int(raw.get("completed") or 0), requested if isinstance(requested, int) else 0,
                                 _metrics.CLIENT_MAX_FAILURE_RATE, power_valid)
    return PointResult(concurrency=int(agg["conc"]), validity=validity, metrics=_metrics.canonical(agg),
                       raw_result=rel, aggregate=agg_path.resolve().relative_to(job_dir.resolve()).as_posix())
