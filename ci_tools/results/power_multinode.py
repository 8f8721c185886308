"""Energy metrics of a multinode job as InferenceX's ``utils/aggregate_power_multinode.py`` computes them.

A disaggregated multinode run on a power lane leaves srt-slurm's
``dcgm-power`` bundle under ``LOGS/power`` (read and audited again by
:mod:`.power_bundle`).  The verdict, in the original's order: the producer's
git commit must equal the expected pin (``POWER_PRODUCER_SHA``, or the
launcher's stamp file); the bundle must be valid as computed from its files
and the producer's stored verdict must agree; the roles' GPU counts must
equal the prefill and decode counts the result file's name states (each
role in one heterogeneous Slurm group of its own, when the deployment uses
them); exactly one completed window must belong to this result, linked by
content (the original under ``LOGS`` equals the renamed workspace copy).
Only then is each GPU's power integrated over the window (the single-node
integration of :mod:`.power`), summed per role and over the deployment.

The reasons and the arithmetic follow the original statement by statement,
so that ``power_valid``, the reasons and the patched floats are identical
(``tests/test_results_power_multinode.py`` runs the original on the same
bundles).  The original's failure texts and its validation sidecar are not
reproduced: the reasons are what the record keeps.
"""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path
from typing import Any, Mapping

from .power import Power, add_reason, benchmark_window, integrate
from .power_bundle import (
    MANIFEST_FILENAME,
    SAMPLES_FILENAME,
    WINDOW_COMPLETED,
    DeviceKey,
    check_devices,
    expected_devices,
    expected_windows,
    Expected,
    observed_devices,
    read_samples,
    Sample,
    stored_evidence,
    topology,
    Window,
    window_audit,
    wire_contract,
)

STAMP_FILENAME = "power-producer-sha.txt"


# -- the verdict and the integration ------------------------------------------------------------


def _canonical_sha256(payload: Any) -> str:
    return hashlib.sha256(json.dumps(payload, sort_keys=True, separators=(",", ":")).encode("utf-8")).hexdigest()


class _Audit:
    """The verdict's reason codes (each once, in order) and the details behind them, in the original's words."""

    def __init__(self) -> None:
        self.reasons: list[str] = []
        self.failures: list[str] = []

    def add(self, reason: str, detail: str | None = None) -> None:
        add_reason(self.reasons, reason)
        if detail:
            self.failures.append(detail)


def _window_of_result(audit: _Audit, parsed: dict[tuple[str, int], Window], logs_root: Path,
                      processed: Mapping[str, Any], copy_name: str,
                      bench_window: tuple[float, float] | None) -> Window | None:
    """The one completed window this result was measured in, bound by content (the launcher renamed the copy)."""
    concurrency = processed.get("max_concurrency")
    matches = [w for w in parsed.values() if w.status == WINDOW_COMPLETED and w.concurrency == concurrency]
    if len(matches) != 1:
        audit.add("window_for_result_missing",
                  f"found {len(matches)} completed windows for concurrency {concurrency!r}")
        return None
    window = matches[0]
    original_path = logs_root / window.result_path
    try:
        original = json.loads(original_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        audit.add("measurement_window_result_missing", f"original result unreadable: {original_path}")
        return None
    if _canonical_sha256(original) != _canonical_sha256(processed):
        audit.add("result_content_mismatch",
                  f"workspace copy {copy_name} differs from original {window.result_path}")
        return None
    if bench_window is not None and bench_window != (window.start, window.end):
        audit.add("measurement_window_result_mismatch", "benchmark window fields do not match the selected window file")
        return None
    return window


def producer_pin(env: Mapping[str, str], results: Path) -> str | None:
    """The expected producer commit as the template finds it: the workflow's POWER_PRODUCER_SHA, else the launcher's
    stamp (in the workspace, or the copy the launcher puts beside the bundle, which the power upload keeps)."""
    if env.get("POWER_PRODUCER_SHA"):
        return env["POWER_PRODUCER_SHA"]
    for stamp in (results / STAMP_FILENAME, results / "LOGS" / "power" / STAMP_FILENAME):
        try:
            return stamp.read_text(encoding="utf-8").strip() or None
        except (OSError, UnicodeDecodeError):
            continue
    return None


def multinode(power_dir: Path, logs_root: Path, raw: Mapping[str, Any], *, prefill_gpus: int, decode_gpus: int,
              producer_sha: str | None, copy_name: str = "") -> Power:
    """Validate a dcgm-power bundle against the raw result (the renamed workspace copy ``copy_name``), integrate it."""
    window, benchmark_reasons = benchmark_window(raw)
    effective = window if window is not None and not benchmark_reasons else None
    audit, metrics, gpus = _validate_and_integrate(power_dir, logs_root, raw, copy_name, effective, prefill_gpus,
                                                   decode_gpus, producer_sha)
    for reason in benchmark_reasons:
        audit.add(reason)
    if window is None or audit.reasons:
        return Power(False, tuple(audit.reasons), gpus_observed=gpus, failures=tuple(audit.failures))
    return Power(True, (), metrics, gpus, failures=tuple(audit.failures))


def _validate_and_integrate(power_dir: Path, logs_root: Path, raw: Mapping[str, Any], copy_name: str,
                            benchmark: tuple[float, float, int, int, int] | None, prefill_gpus: int,
                            decode_gpus: int, producer_sha: str | None) -> tuple[_Audit, dict[str, float], int]:
    audit = _Audit()
    if not power_dir.is_dir():
        audit.add("power_artifacts_missing", f"power dir missing: {power_dir}")
        return audit, {}, 0
    manifest_path = power_dir / MANIFEST_FILENAME
    if not manifest_path.is_file():
        audit.add("manifest_missing", f"manifest missing: {manifest_path}")
        return audit, {}, 0
    try:
        manifest = json.loads(manifest_path.read_text())
    except (OSError, ValueError) as exc:
        audit.add("manifest_malformed", f"manifest unreadable: {exc}")
        return audit, {}, 0
    if not isinstance(manifest, dict):
        audit.add("manifest_malformed", "manifest is not an object")
        return audit, {}, 0
    stored = manifest.get("publication_valid")
    stored_valid = stored if isinstance(stored, bool) else None
    commit = manifest.get("producer_git_commit")
    commit = commit if isinstance(commit, str) else None
    # An unknown producer contract never publishes numbers.
    if not producer_sha:
        audit.add("producer_pin_missing", "no expected producer SHA configured")
    elif commit != producer_sha:
        audit.add("producer_commit_mismatch", f"producer_git_commit {commit!r} != expected {producer_sha!r}")
    failures = wire_contract(manifest)
    try:
        expected = expected_devices(manifest)
        windows = expected_windows(manifest)
    except (AttributeError, KeyError, TypeError, ValueError) as exc:
        audit.add("manifest_malformed", f"manifest malformed: {exc!r}")
        return audit, {}, 0
    rows, sample_reasons = read_samples(power_dir / SAMPLES_FILENAME)
    failures += [f"{reason} in {SAMPLES_FILENAME}" for reason in sample_reasons]
    observed = observed_devices(rows)
    device_reasons, roles = check_devices(expected, observed)
    failures += [f"{reason} (device identity/topology)" for reason in device_reasons]
    errors: list[dict[str, Any]] = []
    rows_audit, parsed = window_audit(power_dir, logs_root, windows, {d.key for d in expected}, observed, errors)
    if not windows:
        failures.append("no expected measurement window")
    failures += [f"{reason} (window {row['benchmark_type']}/{row['concurrency']})"
                 for row in rows_audit for reason in row["reason_codes"]]
    failures += [f"{reason} ({error['path']})" for error in errors for reason in error["reason_codes"]]
    failures += stored_evidence(manifest, expected, windows, rows, observed, rows_audit, errors)
    recomputed = not failures
    audit.failures.extend(failures)
    if failures:
        add_reason(audit.reasons, "package_recompute_invalid")
    # The stored verdict must agree with the one computed here, and both must be true.
    if stored_valid is not True or stored_valid != recomputed:
        if stored_valid != recomputed:
            audit.add("producer_verdict_mismatch",
                      f"stored publication_valid={stored_valid!r}, recomputed={recomputed!r}")
        else:
            audit.add("package_recompute_invalid", "stored and recomputed both invalid")
    wanted = {role: n for role, n in (("prefill", prefill_gpus), ("decode", decode_gpus)) if n > 0}
    if not wanted:
        audit.add("topology_env_mismatch", "PREFILL_GPUS/DECODE_GPUS are both zero")
    elif roles:
        for failure in topology(expected, roles, wanted):
            audit.add("topology_env_mismatch", failure)
    uuid_label = {d.key: f"{d.hostname}/{d.gpu_uuids[0]}" for d in observed if len(d.gpu_uuids) == 1}
    chosen = _window_of_result(audit, parsed, logs_root, raw, copy_name, benchmark[:2] if benchmark else None)
    if audit.reasons or chosen is None or benchmark is None:
        return audit, {}, len(observed)
    return audit, _energy_metrics(rows, expected, roles, uuid_label, chosen, benchmark, prefill_gpus,
                                  decode_gpus, audit), len(observed)


def _energy_metrics(rows: tuple[Sample, ...], expected: list[Expected], roles: dict[DeviceKey, str],
                    uuid_label: dict[DeviceKey, str], window: Window, benchmark: tuple[float, float, int, int, int],
                    prefill_gpus: int, decode_gpus: int, audit: _Audit) -> dict[str, float]:
    """Each GPU's trapezoid clipped to the formal window; roles and the deployment summed."""
    assert window.end is not None
    samples: dict[DeviceKey, list[tuple[float, float]]] = {}
    for row in rows:
        samples.setdefault((row.hostname, row.gpu_index), []).append((row.timestamp, row.power_w))
    per_gpu: dict[str, float] = {}
    role_energy = {"prefill": 0.0, "decode": 0.0}
    for device in expected:
        energy = integrate(sorted(samples.get(device.key, [])), window.start, window.end)
        per_gpu[uuid_label[device.key]] = energy
        role = roles.get(device.key)
        if role in role_energy:
            role_energy[str(role)] += energy
    _, _, completed, total_in, total_out = benchmark
    duration = window.end - window.start
    total = sum(per_gpu.values())
    metrics = {
        "avg_power_w": total / duration / len(expected),
        "avg_total_gpu_power_w": total / duration,
        "total_gpu_energy_j": total,
        "joules_per_successful_query": total / completed,
        "joules_per_input_token": total / total_in,
        "joules_per_output_token": total / total_out,
        "joules_per_total_token": total / (total_in + total_out),
    }
    if prefill_gpus > 0:
        metrics["prefill_gpu_energy_j"] = role_energy["prefill"]
        metrics["prefill_avg_power_w"] = role_energy["prefill"] / duration / prefill_gpus
        metrics["prefill_joules_per_input_token"] = role_energy["prefill"] / total_in
    if decode_gpus > 0:
        metrics["decode_gpu_energy_j"] = role_energy["decode"]
        metrics["decode_avg_power_w"] = role_energy["decode"] / duration / decode_gpus
        metrics["decode_joules_per_output_token"] = role_energy["decode"] / total_out
    # Absurd but finite samples can overflow to inf: an invalid verdict, not a broken aggregate.
    non_finite = sorted(k for k, v in metrics.items() if not math.isfinite(v))
    if non_finite:
        audit.add("non_finite_power_metric", f"non-finite: {', '.join(non_finite)}")
        return {}
    return metrics
