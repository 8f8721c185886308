"""Energy metrics as InferenceX's ``utils/aggregate_power.py`` computes them for a single-node job.

The GPU telemetry stream (``gpu_metrics.csv``, nvidia-smi or amd-smi CSV)
is integrated per device over the benchmark window (trapezoids, the window
ends interpolated linearly), after the same validation: stable GPU ids, the
expected GPU count, both window ends bracketed, no in-window sampling gap
over 3 s.  Any failure leaves ``power_valid`` 0 with InferenceX's reason
codes, and no energy metric.  The arithmetic follows the original statement
by statement so that the floats are identical (``tests/test_results_metrics.py``
runs the original on the same inputs).

A multinode job's srt-slurm power bundle is validated and integrated as
``aggregate_power_multinode.py`` does it, by :mod:`.power_multinode` (which
shares this integration); :func:`patch` writes either verdict.
"""

from __future__ import annotations

import bisect
import csv
import math
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from statistics import mean
from typing import Any, Mapping

POWER_METRIC_SCHEMA_VERSION = 2
MAX_SAMPLE_GAP_S = 3.0
POWER_KEYS = ("avg_power_w", "avg_total_gpu_power_w", "total_gpu_energy_j", "joules_per_successful_query",
              "joules_per_input_token", "joules_per_output_token", "joules_per_total_token")
# A multinode aggregate's energy per role (aggregate_power_multinode.py's ROLE_METRIC_KEYS).
ROLE_POWER_KEYS = ("prefill_gpu_energy_j", "decode_gpu_energy_j", "prefill_avg_power_w", "decode_avg_power_w",
                   "prefill_joules_per_input_token", "decode_joules_per_output_token")
_POWER_COL = re.compile(r"power", re.IGNORECASE)
_POWER_EXCLUDE = re.compile(r"limit|cap|max|min", re.IGNORECASE)
_TIME_COL = re.compile(r"time", re.IGNORECASE)
_GPU_COL = re.compile(r"^(index|gpu|gpu_id|gpu_index|card|device)$", re.IGNORECASE)
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


@dataclass(frozen=True)
class Power:
    valid: bool
    reasons: tuple[str, ...]
    metrics: dict[str, float] = field(default_factory=dict)
    gpus_observed: int = 0
    failures: tuple[str, ...] = ()  # what the reasons stand for, where the original writes it out (multinode)


def add_reason(reasons: list[str], reason: str) -> None:
    if reason not in reasons:
        reasons.append(reason)


def _timestamp(value: str) -> float | None:
    value = value.strip()
    if not value:
        return None
    if _NUMBER.fullmatch(value):
        n = float(value)
        return n / 1000.0 if n > 1e12 else n
    for fmt in ("%Y/%m/%d %H:%M:%S.%f", "%Y/%m/%d %H:%M:%S"):
        try:
            return datetime.strptime(value, fmt).timestamp()  # local time, as nvidia-smi writes it
        except ValueError:
            pass
    iso = value.replace(" ", "T", 1) if " " in value and "T" not in value else value
    try:
        stamp = datetime.fromisoformat(iso)
    except ValueError:
        return None
    return stamp.timestamp() if stamp.tzinfo is None else stamp.astimezone(timezone.utc).timestamp()


def _watts(value: str) -> float | None:
    value = value.strip()
    if not value or value.lower() in {"[n/a]", "n/a", "na"}:
        return None
    m = _NUMBER.search(value)
    return float(m.group(0)) if m else None


def _interpolate(samples: list[tuple[float, float]], at: float) -> float:
    times = [t for t, _ in samples]
    right = bisect.bisect_left(times, at)
    if right < len(samples) and math.isclose(samples[right][0], at, rel_tol=0.0, abs_tol=1e-9):
        return samples[right][1]
    (lt, lp), (rt, rp) = samples[right - 1], samples[right]
    return lp + (at - lt) / (rt - lt) * (rp - lp)


def integrate(samples: list[tuple[float, float]], start: float, end: float) -> float:
    """Joules of one device over [start, end]: trapezoids, both ends interpolated (samples must bracket them)."""
    clipped = [(start, _interpolate(samples, start))]
    clipped.extend((t, p) for t, p in samples if start < t < end)
    clipped.append((end, _interpolate(samples, end)))
    energy = 0.0
    for (lt, lp), (rt, rp) in zip(clipped, clipped[1:]):
        energy += (rt - lt) * (lp + rp) / 2.0
    return energy


def benchmark_window(raw: Mapping[str, Any]) -> tuple[tuple[float, float, int, int, int] | None, list[str]]:
    """(start, end, completed, input tokens, output tokens) of the raw result, or the reason it has none."""
    start, end, duration = (raw.get(k) for k in ("benchmark_start_time_unix", "benchmark_end_time_unix", "duration"))
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (start, end, duration)):
        return None, ["invalid_benchmark_window"]
    s, e, d = float(start), float(end), float(duration)  # type: ignore[arg-type]
    if not all(math.isfinite(v) for v in (s, e, d)) or e <= s or d <= 0:
        return None, ["invalid_benchmark_window"]
    reasons: list[str] = []
    if abs(d - (e - s)) > max(0.5, (e - s) * 0.01):
        add_reason(reasons, "benchmark_duration_mismatch")
    counts = []
    for key, reason in (("completed", "invalid_successful_query_count"),
                        ("total_input_tokens", "invalid_input_token_count"),
                        ("total_output_tokens", "invalid_output_token_count")):
        v = raw.get(key)
        if not isinstance(v, int) or isinstance(v, bool) or v <= 0:
            add_reason(reasons, reason)
            v = 0
        counts.append(v)
    return (s, e, counts[0], counts[1], counts[2]), reasons


def _read_stream(path: Path, start: float, end: float, reasons: list[str]) -> dict[str, dict[float, list[float]]] | None:
    raw: dict[str, dict[float, list[float]]] = {}
    missing_id = False
    try:
        with path.open("r", newline="", encoding="utf-8", errors="replace") as f:
            reader = csv.DictReader(f, skipinitialspace=True)
            header = [c.strip() for c in (reader.fieldnames or [])]
            reader.fieldnames = header
            time_col = next((c for c in header if _TIME_COL.search(c)), None)
            power_col = next((c for c in header if _POWER_COL.search(c) and not _POWER_EXCLUDE.search(c)), None)
            gpu_col = next((c for c in header if _GPU_COL.match(c.strip())), None)
            for col, reason in ((time_col, "timestamp_column_missing"), (power_col, "power_column_missing"),
                                (gpu_col, "gpu_identity_column_missing")):
                if not col:
                    add_reason(reasons, reason)
            if time_col is None or power_col is None or gpu_col is None:
                return None
            for row in reader:
                t = _timestamp((row.get(time_col) or "").strip())
                if t is None or not math.isfinite(t):
                    add_reason(reasons, "invalid_timestamp_sample")
                    continue
                if t < start - MAX_SAMPLE_GAP_S or t > end + MAX_SAMPLE_GAP_S:
                    continue
                watts = _watts((row.get(power_col) or "").strip())
                gpu = (row.get(gpu_col) or "").strip()
                if watts is None or not math.isfinite(watts) or watts < 0:
                    add_reason(reasons, "invalid_power_sample")
                    continue
                if not gpu:
                    missing_id = True
                    continue
                raw.setdefault(gpu, {}).setdefault(t, []).append(watts)
    except (OSError, csv.Error):
        add_reason(reasons, "telemetry_file_unreadable")
        return None
    if missing_id:
        add_reason(reasons, "gpu_identity_missing")
    return raw


def _gpu_order(gpu: str) -> tuple[int, int | str]:
    return (0, int(gpu)) if gpu.isdigit() else (1, gpu)


def single_node(csv_path: Path | None, raw: Mapping[str, Any], expected_gpus: int) -> Power:
    """Validate and integrate one node's telemetry over the raw result's benchmark window."""
    window, reasons = benchmark_window(raw)
    if window is None:
        return Power(False, tuple(reasons))
    start, end, completed, total_in, total_out = window
    if expected_gpus <= 0:
        add_reason(reasons, "invalid_expected_gpu_count")
    if csv_path is None or not csv_path.is_file():
        add_reason(reasons, "telemetry_file_missing")
        return Power(False, tuple(reasons))
    try:
        empty = csv_path.stat().st_size == 0
    except OSError:
        add_reason(reasons, "telemetry_file_unreadable")
        return Power(False, tuple(reasons))
    if empty:
        add_reason(reasons, "telemetry_file_empty")
        return Power(False, tuple(reasons))
    stream = _read_stream(csv_path, start, end, reasons)
    if stream is None:
        return Power(False, tuple(reasons))
    if not stream:
        add_reason(reasons, "no_usable_power_samples")
        return Power(False, tuple(reasons))
    gpus = sorted(stream, key=_gpu_order)
    if expected_gpus > 0 and len(gpus) != expected_gpus:
        add_reason(reasons, "expected_gpu_count_mismatch")
    energies: dict[str, float] = {}
    for gpu in gpus:
        samples = sorted((t, mean(values)) for t, values in stream[gpu].items())
        if len(samples) < 2:
            add_reason(reasons, "insufficient_power_samples")
            continue
        if samples[0][0] > start or samples[-1][0] < end:
            add_reason(reasons, "benchmark_window_not_bracketed")
            continue
        times = [t for t, _ in samples]
        relevant = samples[bisect.bisect_right(times, start) - 1: bisect.bisect_left(times, end) + 1]
        if max((b[0] - a[0] for a, b in zip(relevant, relevant[1:])), default=0.0) > MAX_SAMPLE_GAP_S:
            add_reason(reasons, "sampling_gap_exceeded")
        energies[gpu] = integrate(samples, start, end)
    if reasons or len(energies) != len(gpus):
        return Power(False, tuple(reasons), gpus_observed=len(gpus))
    energy = sum(energies.values())
    total_power = energy / (end - start)
    metrics = {
        "avg_power_w": total_power / len(gpus),
        "avg_total_gpu_power_w": total_power,
        "total_gpu_energy_j": energy,
        "joules_per_successful_query": energy / completed,
        "joules_per_input_token": energy / total_in,
        "joules_per_output_token": energy / total_out,
        "joules_per_total_token": energy / (total_in + total_out),
    }
    return Power(True, (), metrics, len(gpus))


def patch(agg: dict[str, Any], power: Power) -> dict[str, Any]:
    """The aggregate with the power fields the original patches in (rounded as it rounds them)."""
    out = {k: v for k, v in agg.items() if k not in POWER_KEYS and k not in ROLE_POWER_KEYS
           and k != "power_invalid_reasons"}
    out["power_metric_schema_version"] = POWER_METRIC_SCHEMA_VERSION
    out["power_valid"] = int(power.valid)
    if power.valid:
        for key, value in power.metrics.items():
            out[key] = round(value, 3 if key.endswith(("_w", "_j")) else 6)
    return out
