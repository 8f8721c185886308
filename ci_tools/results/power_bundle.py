"""An srt-slurm ``dcgm-power`` bundle read and audited again, as InferenceX's ``aggregate_power_multinode.py`` does it.

The bundle (wire contract v1) is ``manifest.json``, ``samples.csv`` (one row
per scrape and GPU: timestamp, host, GPU index and UUID, board power) and
``windows/<result>.json`` (each benchmark's formal window).  Everything the
producer stored about it (its device list, window audit, counts) is computed
here again from the files, the way srt-slurm's offline validator computes
it, so that :mod:`.power_multinode` can compare the two and never trust the
stored verdict.  Checks, order and reason codes follow the original
function by function.
"""

from __future__ import annotations

import csv
import itertools
import json
import math
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Mapping

SCHEMA_VERSION = 1
PRODUCER = "srt-slurm.dcgm-power"
POWER_METRIC = "DCGM_FI_DEV_POWER_USAGE"
POWER_UNIT = "W"
POWER_SCOPE = "gpu_device_board_as_reported_by_dcgm"
CLOCK_SOURCE = "head_node_unix_clock"
MANIFEST_FILENAME = "manifest.json"
SAMPLES_FILENAME = "samples.csv"
WINDOWS_DIRNAME = "windows"
SAMPLES_HEADER = ("schema_version", "timestamp_unix", "scrape_seq", "hostname", "gpu_index", "gpu_uuid", "power_w")
MAX_SAMPLE_GAP_SECONDS = 3.0  # the producer contract's, not a multiple of the sampling interval
WORKER_ROLES = ("prefill", "decode", "agg")
STATUS_COMPLETE = "complete"
WINDOW_RUNNING, WINDOW_COMPLETED = "running", "completed"
_WINDOW_STATUSES = ("running", "completed", "failed", "interrupted")
_CLOCK_TOLERANCE_SECONDS = 0.5
_CLOCK_TOLERANCE_FRACTION = 0.01
_FATAL_LIFECYCLE_REASONS = ("exporter_exited", "collector_exception", "collector_interrupted",
                            "collector_join_timeout", "benchmark_child_reap_timeout")
_STARTUP_FAILURE_REASONS = ("exporter_startup_timeout", "exporter_launch_failed", "endpoint_resolution_failed")

DeviceKey = tuple[str, int]


def _finite(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _positive(value: Any) -> bool:
    return _finite(value) and value > 0


def _dedupe(values: list[str]) -> list[str]:
    return list(dict.fromkeys(values))


def _safe_relative(value: str) -> bool:
    if not value or value.startswith(("/", "~")):
        return False
    parts = PurePosixPath(value).parts
    return bool(parts) and not any(part in ("..", "") for part in parts)


def _stays_below(root: Path, relative: str) -> bool:
    try:
        (root / relative).resolve().relative_to(root.resolve())
    except (ValueError, OSError):
        return False
    return True


# -- the manifest -------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Assignment:
    role: str
    het_group: int | None


@dataclass(frozen=True)
class Expected:
    hostname: str
    gpu_index: int
    assignments: tuple[_Assignment, ...]

    @property
    def key(self) -> DeviceKey:
        return (self.hostname, self.gpu_index)


def _text(value: Any, label: str) -> str:
    if not isinstance(value, str) or not value:
        raise ValueError(f"{label} is not a non-empty string: {value!r}")
    return value


def _whole(value: Any, label: str, minimum: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        raise ValueError(f"{label} is not an integer >= {minimum}: {value!r}")
    return value


def _role(value: Any) -> str:
    if value not in WORKER_ROLES:
        raise ValueError(f"worker_role is not one of {WORKER_ROLES}: {value!r}")
    return str(value)


def expected_devices(manifest: Mapping[str, Any]) -> list[Expected]:
    """As the original parses them: a malformed entry raises (AttributeError, KeyError, TypeError, ValueError)."""
    entries = manifest.get("expected_devices") or []
    if not isinstance(entries, list):
        raise TypeError(f"expected_devices is not a list: {entries!r}")
    devices = []
    for entry in entries:
        raw = entry.get("assignments") or []
        if not isinstance(raw, list) or not raw:
            raise ValueError(f"assignments is not a non-empty list: {raw!r}")
        assignments = []
        for a in raw:
            role = _role(a["worker_role"])
            _whole(a["worker_index"], "worker_index", 0)
            _whole(a["worker_process"], "worker_process", 0)
            group = None if a.get("het_group") is None else _whole(a["het_group"], "het_group", 0)
            assignments.append(_Assignment(role, group))
        devices.append(Expected(_text(entry["hostname"], "hostname"), _whole(entry["gpu_index"], "gpu_index", 0),
                                 tuple(assignments)))
    return devices


def expected_windows(manifest: Mapping[str, Any]) -> list[tuple[str, int]]:
    entries = manifest.get("expected_windows") or []
    if not isinstance(entries, list):
        raise TypeError(f"expected_windows is not a list: {entries!r}")
    return [(_text(e["benchmark_type"], "benchmark_type"), _whole(e["concurrency"], "concurrency", 1))
            for e in entries]


def wire_contract(manifest: Mapping[str, Any]) -> list[str]:
    """srt-slurm's manifest wire and lifecycle checks (the stored verdict left out), in the original's words."""
    failures = [f"{key} is {manifest.get(key)!r}, expected {expected!r}" for key, expected in (
        ("schema_version", SCHEMA_VERSION), ("producer", PRODUCER), ("source_metric", POWER_METRIC),
        ("unit", POWER_UNIT), ("power_scope", POWER_SCOPE), ("timestamp_source", CLOCK_SOURCE))
        if manifest.get(key) != expected]
    if manifest.get("status") != STATUS_COMPLETE:
        failures.append(f"status is {manifest.get('status')!r}, expected {STATUS_COMPLETE!r}")
    if not _finite(manifest.get("started_at_unix")):
        failures.append("started_at_unix is not a finite number")
    if not _finite(manifest.get("stopped_at_unix")):
        failures.append("stopped_at_unix is not finite in a terminal manifest")
    for key in ("sample_interval_seconds", "request_timeout_seconds"):
        if not _positive(manifest.get(key)):
            failures.append(f"{key} is not finite and positive")
    for key in ("scrape_count", "sample_row_count"):
        value = manifest.get(key)
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            failures.append(f"{key} is not a non-negative integer")
    required = manifest.get("required")
    if not isinstance(required, bool):
        failures.append(f"required is {required!r}, expected a boolean")
    reasons = manifest.get("reason_codes")
    if not isinstance(reasons, list) or not all(isinstance(r, str) for r in reasons):
        failures.append("reason_codes is not a list of strings")
    else:
        blocking = set(_FATAL_LIFECYCLE_REASONS) | (set(_STARTUP_FAILURE_REASONS) if required is True else set())
        incompatible = sorted({str(r) for r in reasons} & blocking)
        if incompatible:
            failures.append(f"complete manifest carries lifecycle-failure reasons: {', '.join(incompatible)}")
    exporter = manifest.get("dcgm_exporter")
    if not isinstance(exporter, dict):
        failures.append("dcgm_exporter is not an object")
    elif not exporter.get("container_image_resolved"):
        failures.append("dcgm_exporter.container_image_resolved is empty")
    return failures


# -- the samples --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Sample:
    timestamp: float
    scrape_seq: int
    hostname: str
    gpu_index: int
    gpu_uuid: str
    power_w: float


@dataclass(frozen=True)
class Observed:
    hostname: str
    gpu_index: int
    gpu_uuids: tuple[str, ...]
    first: float
    last: float
    times: tuple[float, ...] = field(default=(), repr=False)

    @property
    def key(self) -> DeviceKey:
        return (self.hostname, self.gpu_index)

    def to_dict(self) -> dict[str, Any]:
        return {"hostname": self.hostname, "gpu_index": self.gpu_index, "gpu_uuids": list(self.gpu_uuids),
                "first_sample_time_unix": self.first, "last_sample_time_unix": self.last}


def _sample(raw: list[str]) -> Sample | None:
    if len(raw) != len(SAMPLES_HEADER):
        return None
    try:
        version, stamp, seq, index, watts = int(raw[0]), float(raw[1]), int(raw[2]), int(raw[4]), float(raw[6])
    except ValueError:
        return None
    host, uuid = raw[3], raw[5]
    if version != SCHEMA_VERSION or not host or not uuid:
        return None
    if not math.isfinite(stamp) or not math.isfinite(watts) or watts < 0 or seq < 0 or index < 0:
        return None
    return Sample(stamp, seq, host, index, uuid, watts)


def read_samples(path: Path) -> tuple[tuple[Sample, ...], list[str]]:
    if not path.is_file():
        return (), ["samples_csv_missing"]
    reasons: list[str] = []
    rows: list[Sample] = []
    try:
        with open(path, newline="", encoding="utf-8") as handle:
            reader = csv.reader(handle)
            if next(reader, None) != list(SAMPLES_HEADER):
                return (), ["samples_csv_header_mismatch"]
            for raw in reader:
                row = _sample(raw)
                if row is None:
                    reasons.append("samples_csv_malformed")
                else:
                    rows.append(row)
    except (OSError, UnicodeDecodeError, csv.Error):
        reasons.append("samples_csv_malformed")
    seen: set[tuple[int, str, int]] = set()
    unique: list[Sample] = []
    for row in rows:
        key = (row.scrape_seq, row.hostname, row.gpu_index)
        if key in seen:
            reasons.append("duplicate_sample_row")
            continue
        seen.add(key)
        unique.append(row)
    per_device: dict[DeviceKey, list[Sample]] = {}
    for row in unique:
        per_device.setdefault((row.hostname, row.gpu_index), []).append(row)
    for device_rows in per_device.values():
        ordered = sorted(device_rows, key=lambda r: r.scrape_seq)
        if any(b.timestamp <= a.timestamp for a, b in itertools.pairwise(ordered)):
            reasons.append("timestamp_non_monotonic")
            break
    return tuple(unique), _dedupe(reasons)


def observed_devices(rows: tuple[Sample, ...]) -> list[Observed]:
    by_key: dict[DeviceKey, list[Sample]] = {}
    for row in rows:
        by_key.setdefault((row.hostname, row.gpu_index), []).append(row)
    out = []
    for key in sorted(by_key):
        ordered = sorted(by_key[key], key=lambda r: r.scrape_seq)
        times = tuple(r.timestamp for r in ordered)
        out.append(Observed(key[0], key[1], tuple(dict.fromkeys(r.gpu_uuid for r in ordered)), min(times),
                             max(times), tuple(sorted(times))))
    return out


# -- device identity and role topology ----------------------------------------------------------


def _roles(devices: list[Expected]) -> tuple[dict[DeviceKey, str], list[str]]:
    roles: dict[DeviceKey, str] = {}
    for d in devices:
        distinct = {a.role for a in d.assignments}
        if len(distinct) != 1:
            return {}, ["conflicting_worker_roles"]
        roles[d.key] = distinct.pop()
    return roles, []


def _het_groups(devices: list[Expected]) -> tuple[dict[str, int | None], list[str]]:
    groups: dict[str, int | None] = {}
    for d in devices:
        distinct = {a.het_group for a in d.assignments}
        if len(distinct) != 1:
            return {}, ["conflicting_het_groups"]
        group = distinct.pop()
        if d.hostname in groups and groups[d.hostname] != group:
            return {}, ["conflicting_het_groups"]
        groups[d.hostname] = group
    return groups, []


def check_devices(expected: list[Expected], observed: list[Observed]) -> tuple[list[str], dict[DeviceKey, str]]:
    reasons: list[str] = []
    expected_keys, observed_keys = {d.key for d in expected}, {d.key for d in observed}
    if not expected_keys or expected_keys - observed_keys:
        reasons.append("expected_device_missing")
    if observed_keys - expected_keys:
        reasons.append("unexpected_device")
    # A UUID must map 1:1 to a device key, or one physical GPU is counted twice.
    if any(len(d.gpu_uuids) != 1 for d in observed):
        reasons.append("gpu_uuid_changed")
    else:
        uuids = [d.gpu_uuids[0] for d in observed]
        if len(set(uuids)) != len(uuids):
            reasons.append("gpu_uuid_changed")
    roles, role_conflicts = _roles(expected)
    _, group_conflicts = _het_groups(expected)
    return _dedupe(reasons + role_conflicts + group_conflicts), roles


def topology(expected: list[Expected], roles: dict[DeviceKey, str], wanted: dict[str, int]) -> list[str]:
    """Role GPU counts equal to the workflow's; each role in one het group of its own where het groups are used."""
    failures: list[str] = []
    counts: dict[str, int] = {}
    for role in roles.values():
        counts[role] = counts.get(role, 0) + 1
    if set(counts) != set(wanted):
        failures.append(f"expected roles {sorted(wanted)}, found {sorted(counts)}")
    for role, count in sorted(wanted.items()):
        if counts.get(role, 0) != count:
            failures.append(f"expected {count} {role} GPUs, found {counts.get(role, 0)}")
    groups, conflicts = _het_groups(expected)
    if conflicts:
        return failures + [f"{c} (topology)" for c in conflicts]
    per_role: dict[str, set[int | None]] = {}
    for d in expected:
        if d.key in roles:
            per_role.setdefault(roles[d.key], set()).add(groups[d.hostname])
    # A deployment without het jobs reports None for every device; a mixed one is a topology failure.
    non_het = all(g is None for g in groups.values())
    assigned: list[int] = []
    for role, role_groups in sorted(per_role.items()):
        if len(role_groups) != 1:
            failures.append(f"role {role} spans het groups {sorted(role_groups, key=str)}, expected exactly one")
            continue
        group = next(iter(role_groups))
        if group is None:
            if not non_het:
                failures.append(f"role {role} has het group None while other devices report real het groups")
            continue
        assigned.append(group)
    if len(set(assigned)) != len(assigned):
        failures.append("roles share a het group")
    return failures


# -- measurement windows ------------------------------------------------------------------------


@dataclass(frozen=True)
class Window:
    relative_path: str
    benchmark_type: str
    concurrency: int
    result_path: str
    status: str
    start: float
    end: float | None
    duration: float | None


def _status_invariants(status: str, end: Any, duration: Any, reason: Any) -> bool:
    if status == WINDOW_RUNNING:
        return end is None and duration is None and reason is None
    if status == "interrupted":
        return end is None and duration is None and isinstance(reason, str) and bool(reason)
    if not _finite(end) or not _finite(duration) or duration <= 0:
        return False
    if status == WINDOW_COMPLETED:
        return reason is None
    return isinstance(reason, str) and bool(reason)


def _parse_window(path: Path, relative: str, result_root: Path) -> tuple[Window | None, list[str]]:
    try:
        payload = json.loads(path.read_text())
    except (OSError, ValueError):
        return None, ["measurement_window_malformed"]
    if not isinstance(payload, dict):
        return None, ["measurement_window_malformed"]
    status, concurrency = payload.get("status"), payload.get("concurrency")
    kind, start = payload.get("benchmark_type"), payload.get("benchmark_start_time_unix")
    if (payload.get("schema_version") != SCHEMA_VERSION or payload.get("clock_source") != CLOCK_SOURCE
            or status not in _WINDOW_STATUSES or not isinstance(kind, str) or not isinstance(concurrency, int)
            or not _finite(start)):
        return None, ["measurement_window_malformed"]
    result_path = payload.get("result_path")
    if not isinstance(result_path, str) or not _safe_relative(result_path):
        return None, ["measurement_window_result_path_invalid"]
    if not _stays_below(result_root, result_path) or Path(result_path).stem != path.stem:
        return None, ["measurement_window_result_path_invalid"]
    end, duration = payload.get("benchmark_end_time_unix"), payload.get("duration")
    if not _status_invariants(str(status), end, duration, payload.get("reason")):
        return None, ["measurement_window_malformed"]
    return Window(relative, kind, concurrency, result_path, str(status), float(start),  # type: ignore[arg-type]
                   float(end) if end is not None else None, float(duration) if duration is not None else None), []


def _scan_windows(windows_dir: Path, result_root: Path, errors: list[dict[str, Any]]) -> tuple[
        dict[tuple[str, int], Window], set[tuple[str, int]]]:
    parsed: dict[tuple[str, int], Window] = {}
    duplicates: set[tuple[str, int]] = set()
    if not windows_dir.is_dir():
        return parsed, duplicates
    if not _stays_below(windows_dir.parent, WINDOWS_DIRNAME):
        errors.append({"path": WINDOWS_DIRNAME, "reason_codes": ["measurement_window_artifact_path_invalid"]})
        return parsed, duplicates
    for path in sorted(windows_dir.iterdir()):
        relative = f"{WINDOWS_DIRNAME}/{path.name}"
        if path.is_symlink() or not path.is_file():
            errors.append({"path": relative, "reason_codes": ["measurement_window_artifact_path_invalid"]})
            continue
        window, reasons = _parse_window(path, relative, result_root)
        if window is None:
            errors.append({"path": relative, "reason_codes": reasons})
            continue
        key = (window.benchmark_type, window.concurrency)
        if key in parsed:
            duplicates.add(key)
            errors.append({"path": parsed[key].relative_path, "reason_codes": ["measurement_window_duplicate"]})
            errors.append({"path": relative, "reason_codes": ["measurement_window_duplicate"]})
            continue
        parsed[key] = window
    for key in duplicates:
        parsed.pop(key, None)
    return parsed, duplicates


def _check_window_result(window: Window, result_root: Path) -> list[str]:
    result_file = result_root / window.result_path
    if not result_file.is_file():
        return ["measurement_window_result_missing"]
    try:
        result = json.loads(result_file.read_text())
    except (OSError, ValueError):
        return ["measurement_window_result_missing"]
    if not isinstance(result, dict):
        return ["measurement_window_result_mismatch"]
    if (result.get("benchmark_start_time_unix") != window.start or result.get("benchmark_end_time_unix") != window.end
            or result.get("duration") != window.duration):
        return ["measurement_window_result_mismatch"]
    assert window.end is not None and window.duration is not None  # a completed window has both (invariants)
    tolerance = max(_CLOCK_TOLERANCE_SECONDS, _CLOCK_TOLERANCE_FRACTION * window.duration)
    if abs((window.end - window.start) - window.duration) > tolerance:
        return ["measurement_window_clock_mismatch"]
    return []


def _bracketing(times: tuple[float, ...], start: float, end: float) -> list[float] | None:
    before = [t for t in times if t <= start]
    after = [t for t in times if t >= end]
    if not before or not after:
        return None
    return [before[-1], *(t for t in times if start < t < end), after[0]]


def _largest_gap(sequence: list[float]) -> float:
    return max((b - a for a, b in itertools.pairwise(sequence)), default=0.0)


def _coverage(start: float, end: float, expected_keys: set[DeviceKey], observed: list[Observed]) -> tuple[
        dict[str, float], list[str]]:
    by_key = {d.key: d for d in observed}
    gaps: dict[str, float] = {}
    reasons: list[str] = []
    for key in sorted(expected_keys):
        device = by_key.get(key)
        if device is None:
            reasons.append("measurement_window_not_bracketed")
            continue
        if len(device.gpu_uuids) != 1:
            reasons.append("gpu_uuid_changed")
            continue
        sequence = _bracketing(device.times, start, end)
        if sequence is None:
            reasons.append("measurement_window_not_bracketed")
            continue
        gaps[f"{device.hostname}/{device.gpu_uuids[0]}"] = _largest_gap(sequence)
        if gaps[f"{device.hostname}/{device.gpu_uuids[0]}"] > MAX_SAMPLE_GAP_SECONDS:
            reasons.append("sample_gap_exceeded")
    return gaps, reasons


def window_audit(power_dir: Path, result_root: Path, expected: list[tuple[str, int]], expected_keys: set[DeviceKey],
                  observed: list[Observed], errors: list[dict[str, Any]]) -> tuple[
        list[dict[str, Any]], dict[tuple[str, int], Window]]:
    """The producer's audit row per expected window, computed again."""
    parsed, duplicates = _scan_windows(power_dir / WINDOWS_DIRNAME, result_root, errors)
    for key, found in sorted(parsed.items()):
        if key not in set(expected):
            errors.append({"path": found.relative_path, "reason_codes": ["measurement_window_unexpected"]})
    rows: list[dict[str, Any]] = []
    for kind, conc in expected:
        window = parsed.get((kind, conc))
        if window is None:
            missing = "measurement_window_duplicate" if (kind, conc) in duplicates else "measurement_window_missing"
            rows.append({"benchmark_type": kind, "concurrency": conc, "window_file": None,
                         "power_coverage_valid": False, "reason_codes": [missing],
                         "per_device_max_sample_gap_seconds": {}})
            continue
        reasons: list[str] = []
        if window.status != WINDOW_COMPLETED:
            reasons.append("measurement_window_incomplete")
        else:
            reasons.extend(_check_window_result(window, result_root))
        gaps: dict[str, float] = {}
        if not reasons:
            assert window.end is not None
            gaps, coverage = _coverage(window.start, window.end, expected_keys, observed)
            reasons.extend(coverage)
            if coverage:
                gaps = {}
        rows.append({"benchmark_type": kind, "concurrency": conc, "window_file": window.relative_path,
                     "power_coverage_valid": not reasons, "reason_codes": _dedupe(reasons),
                     "per_device_max_sample_gap_seconds": gaps})
    return rows, parsed


def stored_evidence(manifest: Mapping[str, Any], expected: list[Expected], windows: list[tuple[str, int]],
                    rows: tuple[Sample, ...], observed: list[Observed], audit: list[dict[str, Any]],
                    errors: list[dict[str, Any]]) -> list[str]:
    """Where the manifest's stored evidence differs from what the bundle's files say."""
    failures = []
    if manifest.get("sample_row_count") != len(rows):
        failures.append(f"sample_row_count is {manifest.get('sample_row_count')!r}, disk has {len(rows)} rows")
    scrapes = manifest.get("scrape_count")
    if rows:
        least = max(r.scrape_seq for r in rows) + 1
        if not isinstance(scrapes, int) or isinstance(scrapes, bool) or scrapes < least:
            failures.append(f"scrape_count is {scrapes!r}, disk needs at least {least}")
    if not observed:
        failures.append("observed_devices is empty")
    if manifest.get("observed_devices") != [d.to_dict() for d in observed]:
        failures.append("observed_devices does not match the devices derived from samples.csv")
    if manifest.get("window_validations") != audit:
        failures.append("window_validations does not match the recomputed window audit")
    if manifest.get("artifact_errors") != errors:
        failures.append("artifact_errors does not match the recomputed artifact scan")
    for label, keys in (("expected_devices", [d.key for d in expected]), ("expected_windows", list(windows))):
        if len(set(keys)) != len(keys):
            failures.append(f"{label} contains duplicate keys")
    return failures
