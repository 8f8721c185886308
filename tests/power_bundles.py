"""srt-slurm ``dcgm-power`` bundles (wire contract v1) around real raw multinode results, for the power tests.

A bundle is what a GB200/GB300 power lane of InferenceX leaves in the
workspace (``runners/launch_gb200-nv.sh`` copies it, the multinode template
uploads ``LOGS/power/**``): ``LOGS/power/manifest.json``,
``LOGS/power/samples.csv`` and ``LOGS/power/windows/<result>.json``, the
original client result under ``LOGS/`` and its copy, renamed by the
launcher, in the workspace.  The files follow the contract as InferenceX's
consumer (``utils/aggregate_power_multinode.py`` at 843c6254f) reads it;
every manifest field and value is the one InferenceX's own test builder
(``utils/test_aggregate_power_multinode.py``, ``build_package``) writes, and
the producer's stored evidence (observed devices, window audit, counts) is
computed here from the samples as srt-slurm computes it.  The client results
are the committed ``tests/data/results/raw`` files that InferenceX's
``benchmark_serving.py`` wrote (``MANIFEST.json`` there); the power samples
are a deterministic waveform per GPU (a base draw per role plus a ripple),
one scrape every ``interval`` seconds from before the window to after it.

:data:`CASES` names each bundle with the change that makes it what it is;
the parity test runs InferenceX's script and ci-tools on each.
"""

from __future__ import annotations

import csv
import itertools
import json
import math
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

RAW = Path(__file__).resolve().parent / "data" / "results" / "raw"
PRODUCER_SHA = "5e2c1f0d9b8a7c6e5d4f3a2b1c0d9e8f7a6b5c4d"
OTHER_SHA = "0" * 39 + "1"
HEADER = ("schema_version", "timestamp_unix", "scrape_seq", "hostname", "gpu_index", "gpu_uuid", "power_w")


@dataclass(frozen=True)
class Device:
    hostname: str
    gpu_index: int
    role: str
    het_group: int | None

    @property
    def uuid(self) -> str:
        return f"GPU-{self.hostname}-{self.gpu_index:02d}"

    @property
    def key(self) -> tuple[str, int]:
        return (self.hostname, self.gpu_index)


def devices(prefill: int, decode: int, *, per_node: int = 4, het: bool = True, role_names: tuple[str, str] = (
        "prefill", "decode")) -> list[Device]:
    """Prefill GPUs on the first nodes, decode GPUs on the next ones, ``per_node`` GPUs a node (GB200: 4)."""
    out = []
    for role, count, group in ((role_names[0], prefill, 0), (role_names[1], decode, 1)):
        for i in range(count):
            out.append(Device(f"{role}-node-{i // per_node}", i % per_node, role, group if het else None))
    return out


def _watts(device: Device, t: float) -> float:
    base = 610.0 if device.role == "prefill" else 455.0 if device.role == "decode" else 530.0
    return round(base + 40.0 * math.sin(t / 7.0 + device.gpu_index) + 3.0 * device.gpu_index, 2)


@dataclass
class Bundle:
    """What one job directory holds; ``write`` lays it out under a workspace directory."""

    case: str  # the raw result case under tests/data/results/raw
    devices: list[Device]
    interval: float = 2.0
    stamp: bool = False  # the launcher's stamp beside the bundle instead of POWER_PRODUCER_SHA in the env
    env_sha: str | None = PRODUCER_SHA
    producer_sha: str = PRODUCER_SHA
    publication_valid: bool | None = None  # None: what the producer computes
    drop_samples: Callable[[Device, float], bool] = field(default=lambda d, t: False)
    window_status: str = "completed"
    original_differs: bool = False
    stored_gap: float | None = None  # the producer's stored per-GPU gap, when it is not what the samples show
    spare: tuple[Device, ...] = ()  # GPUs the exporter reported that no worker was assigned to

    @property
    def env(self) -> dict[str, str]:
        env: dict[str, str] = json.loads((RAW / self.case / "env.json").read_text(encoding="utf-8"))
        if self.env_sha is not None:
            env["POWER_PRODUCER_SHA"] = self.env_sha
        return env

    @property
    def raw_path(self) -> Path:
        return next(p for p in (RAW / self.case).glob("*.json") if p.name != "env.json")

    def write(self, workspace: Path, copy_name: str | None = None) -> Path:
        """The bundle, the original result and its renamed copy under ``workspace``; returns the copy."""
        raw = json.loads(self.raw_path.read_text(encoding="utf-8"))
        logs, power = workspace / "LOGS", workspace / "LOGS" / "power"
        (power / "windows").mkdir(parents=True, exist_ok=True)
        stem = f"results_concurrency_{raw['max_concurrency']}"
        original = dict(raw, completed=raw["completed"] - 1) if self.original_differs else raw
        (logs / f"{stem}.json").write_text(json.dumps(original, indent=2), encoding="utf-8")
        copy = workspace / (copy_name or self.raw_path.name)  # the launcher's renamed workspace copy
        shutil.copy(self.raw_path, copy)
        start, end, duration = (raw[k] for k in ("benchmark_start_time_unix", "benchmark_end_time_unix", "duration"))
        rows = self._rows(start - 2.0, end + 2.0)
        with (power / "samples.csv").open("w", newline="", encoding="utf-8") as f:
            writer = csv.writer(f)
            writer.writerow(HEADER)
            writer.writerows([1, repr(t), seq, d.hostname, d.gpu_index, d.uuid, repr(w)] for t, seq, d, w in rows)
        running = self.window_status == "running"
        window = {"schema_version": 1, "clock_source": "head_node_unix_clock", "benchmark_type": "sa-bench",
                  "concurrency": raw["max_concurrency"], "status": self.window_status,
                  "benchmark_start_time_unix": start, "benchmark_end_time_unix": None if running else end,
                  "duration": None if running else duration, "reason": None, "result_path": f"{stem}.json"}
        (power / "windows" / f"{stem}.json").write_text(json.dumps(window, indent=2), encoding="utf-8")
        (power / "manifest.json").write_text(json.dumps(self._manifest(rows, raw, start, end, stem), indent=2),
                                             encoding="utf-8")
        if self.stamp:
            (power / "power-producer-sha.txt").write_text(self.producer_sha + "\n", encoding="utf-8")
        return copy

    def _rows(self, first: float, last: float) -> list[tuple[float, int, Device, float]]:
        rows = []
        for seq in itertools.count():
            t = round(first + seq * self.interval, 3)
            if t > last:
                break
            rows += [(t, seq, d, _watts(d, t)) for d in (*self.devices, *self.spare) if not self.drop_samples(d, t)]
        return rows

    def _manifest(self, rows: list[tuple[float, int, Device, float]], raw: dict[str, Any], start: float, end: float,
                  stem: str) -> dict[str, Any]:
        times: dict[tuple[str, int], list[float]] = {}
        for t, _, d, _ in rows:
            times.setdefault(d.key, []).append(t)
        observed = [{"hostname": k[0], "gpu_index": k[1], "gpu_uuids": [f"GPU-{k[0]}-{k[1]:02d}"],
                     "first_sample_time_unix": min(v), "last_sample_time_unix": max(v)} for k, v in sorted(times.items())]
        # The producer's window audit: the largest step between samples bracketing the window, per GPU.
        gaps, reasons = {}, []
        for d in sorted(self.devices, key=lambda d: d.key):
            ts = times.get(d.key, [])
            before, after = [t for t in ts if t <= start], [t for t in ts if t >= end]
            if not before or not after:
                reasons.append("measurement_window_not_bracketed")
                continue
            seq = [before[-1], *(t for t in ts if start < t < end), after[0]]
            gaps[f"{d.hostname}/{d.uuid}"] = max(b - a for a, b in itertools.pairwise(seq))
            if gaps[f"{d.hostname}/{d.uuid}"] > 3.0:
                reasons.append("sample_gap_exceeded")
        if self.window_status != "completed":
            reasons, gaps = ["measurement_window_incomplete"], {}
        elif reasons:
            gaps = {}
        elif self.stored_gap is not None:
            gaps = {k: self.stored_gap for k in gaps}
        valid = not reasons and len(times) == len(self.devices)
        return {
            "schema_version": 1, "producer": "srt-slurm.dcgm-power", "producer_version": "1.0",
            "producer_git_commit": self.producer_sha, "source_metric": "DCGM_FI_DEV_POWER_USAGE", "unit": "W",
            "power_scope": "gpu_device_board_as_reported_by_dcgm", "timestamp_source": "head_node_unix_clock",
            "job_id": "4242", "run_name": self.case, "sample_interval_seconds": self.interval,
            "request_timeout_seconds": 2.0, "max_scrape_duration_seconds": 0.05, "required": True,
            "started_at_unix": start - 10.0, "stopped_at_unix": end + 10.0, "status": "complete",
            "publication_valid": valid if self.publication_valid is None else self.publication_valid,
            "dcgm_exporter": {"container_image_resolved": "/squash/dcgm-exporter.sqsh",
                              "container_image_sha256": "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
                              "port": 9401, "command": "dcgm-exporter"},
            "expected_devices": [{"hostname": d.hostname, "gpu_index": d.gpu_index, "assignments": [
                {"worker_role": d.role, "worker_index": 0, "worker_process": 0, "het_group": d.het_group}]}
                for d in sorted(self.devices, key=lambda d: d.key)],
            "observed_devices": observed,
            "expected_windows": [{"benchmark_type": "sa-bench", "concurrency": raw["max_concurrency"]}],
            "scrape_count": max((seq for _, seq, _, _ in rows), default=-1) + 1,
            "sample_row_count": len(rows),
            "window_validations": [{"benchmark_type": "sa-bench", "concurrency": raw["max_concurrency"],
                                    "window_file": f"windows/{stem}.json", "power_coverage_valid": not reasons,
                                    "reason_codes": list(dict.fromkeys(reasons)),
                                    "per_device_max_sample_gap_seconds": gaps}],
            "artifact_errors": [], "reason_codes": [],
        }


DISAGG_C8 = "qwen3.5-fp8-mi355x-sglang-disagg-c8"
DISAGG_C32 = "qwen3.5-fp8-mi355x-sglang-disagg-c32"
AGG_C64 = "dsr1-fp4-gb200-dynamo-trt-agg-c64"
MTP_C256 = "dsr1-fp4-gb200-dynamo-trt-mtp-c256"


def _gap(d: Device, t: float, start: float) -> bool:
    return d.role == "decode" and d.gpu_index == 1 and d.hostname.endswith("-1") and start + 20 < t < start + 26


def _window_start(case: str) -> float:
    raw_path = next(p for p in (RAW / case).glob("*.json") if p.name != "env.json")
    return float(json.loads(raw_path.read_text(encoding="utf-8"))["benchmark_start_time_unix"])


# name -> (bundle, what it is, power_valid as InferenceX decides it)
CASES: dict[str, tuple[Bundle, str, bool]] = {
    "valid-het": (Bundle(DISAGG_C8, devices(4, 8)), "1 prefill node (4 GPUs, het group 0), 2 decode nodes "
                  "(8 GPUs, het group 1); producer pin from POWER_PRODUCER_SHA", True),
    "valid-non-het-stamp": (Bundle(DISAGG_C32, devices(4, 8, het=False), interval=1.0, stamp=True, env_sha=None),
                            "no het groups (a single Slurm job); the pin from the launcher's stamp file", True),
    "valid-mtp-28-gpus": (Bundle(MTP_C256, devices(20, 8)), "5 prefill nodes, 2 decode nodes, 28 GPUs", True),
    "sample-gap": (Bundle(DISAGG_C8, devices(4, 8),
                          drop_samples=lambda d, t: _gap(d, t, _window_start(DISAGG_C8))),
                   "one decode GPU misses 6 s of scrapes inside the window; the producer says so", False),
    "verdict-lies": (Bundle(DISAGG_C8, devices(4, 8), publication_valid=True,
                            drop_samples=lambda d, t: d.role == "decode" and d.gpu_index == 3),
                     "a decode GPU never sampled, yet the stored verdict says valid", False),
    "evidence-differs": (Bundle(DISAGG_C8, devices(4, 8), stored_gap=1.0),
                         "valid samples every 2 s, but the stored window audit says 1 s gaps", False),
    "unexpected-gpu": (Bundle(DISAGG_C8, devices(4, 8), spare=(Device("decode-node-1", 4, "decode", 1),)),
                       "the exporter reported a fifth GPU on a decode node that no worker used", False),
    "producer-mismatch": (Bundle(DISAGG_C8, devices(4, 8), producer_sha=OTHER_SHA),
                          "the bundle comes from another srt-slurm commit than the pin", False),
    "no-pin": (Bundle(DISAGG_C8, devices(4, 8), env_sha=None), "no POWER_PRODUCER_SHA and no stamp", False),
    "roles-swapped": (Bundle(DISAGG_C8, devices(8, 4)),
                      "8 prefill and 4 decode GPUs, while the file's name says ctx 4 gen 8", False),
    "content-mismatch": (Bundle(DISAGG_C8, devices(4, 8), original_differs=True),
                         "the original under LOGS is not the workspace copy's content", False),
    "window-running": (Bundle(DISAGG_C8, devices(4, 8), window_status="running"),
                       "the window never completed", False),
    "aggregated-roles": (Bundle(AGG_C64, devices(8, 0, role_names=("agg", "decode"))),
                         "an aggregated deployment: 8 GPUs of role agg, the step's PREFILL_GPUS=8 DECODE_GPUS=0", False),
}
