"""A job's ``record.json`` (:mod:`ci_tools.results.record`): identity, commit, runner, GPUs, outcome, metrics.

The metrics are computed from the raw client results the job left where
the fleet expects them, as InferenceX's "Process result" step computes
them (:func:`ci_tools.results.measure.measure`, with the job's environment
and ``RUNNER_TYPE``): a single-node job's ``$RESULT_FILENAME.json``; a
multinode job's ``${RESULT_FILENAME}_*.json``, one per concurrency, each
with ``IS_MULTINODE=true`` and the prefill and decode GPU counts its file
name states (``..._gpus_N_ctx_P_gen_D.json``), as the multinode template's
step passes them.  A raw file that cannot be processed is a point with no
metrics and the reason, never a silently missing one.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Mapping

from ..jobs.job import Job
from ..results.identity import identity
from ..results.measure import measure
from ..results.metrics import MetricsError
from ..results.record import Files, Gpus, PointResult, Record, Status, Validity, save
from .gpus import Inventory
from .status import LOG_FILE, RESULTS_DIR, StatusRecord

GPU_INVENTORY_FILE = "gpu-inventory.txt"


def raw_results(results: Path, env: Mapping[str, str], multinode: bool) -> list[Path]:
    """The client's raw result files, where the launch step looks for them."""
    name = env.get("RESULT_FILENAME")
    if not name:
        return []
    if not multinode:
        path = results / f"{name}.json"
        return [path] if path.is_file() else []
    return sorted(p for p in results.glob(f"{glob_escape(name)}_*.json") if p.is_file())


def glob_escape(text: str) -> str:
    return re.sub(r"([*?\[])", r"[\1]", text)


def _multinode_env(env: Mapping[str, str], raw: Path) -> dict[str, str]:
    """What the multinode template's step sets for one file (its GPU counts are in its name)."""
    out = dict(env, RESULT_FILENAME=raw.stem, IS_MULTINODE="true")
    gpus = re.search(r"_gpus_(\d+)", raw.name)
    prefill, decode = re.search(r"_ctx_(\d+)", raw.name), re.search(r"_gen_(\d+)", raw.name)
    if gpus:
        if prefill is None or decode is None:
            out["PREFILL_GPUS"], out["DECODE_GPUS"] = gpus.group(1), "0"
        else:
            out["PREFILL_GPUS"], out["DECODE_GPUS"] = prefill.group(1), decode.group(1)
    return out


def _point(raw: Path, env: Mapping[str, str], job: Job, job_dir: Path) -> PointResult:
    results = job_dir / RESULTS_DIR
    gpu_metrics = results / "gpu_metrics.csv"
    power_dir = results / "LOGS" / "power"
    point_env = _multinode_env(env, raw) if job.multinode else dict(env)
    try:
        return measure(raw, point_env, job_dir, gpu_metrics=gpu_metrics if gpu_metrics.is_file() else None,
                       power_dir=power_dir if power_dir.is_dir() else None)
    except MetricsError as exc:
        return PointResult(concurrency=job.conc or 0, metrics={},
                           validity=Validity(0, 0, 1.0, None, (f"metrics not computed: {exc}",)),
                           raw_result=raw.resolve().relative_to(job_dir.resolve()).as_posix())


def _relative(job_dir: Path, *candidates: str) -> str:
    return next((c for c in candidates if (job_dir / c).is_file()), "")


def write_record(job: Job, status: StatusRecord, env: Mapping[str, str], job_dir: Path, *, sha: str,
                 runner: str, gpus: Inventory | None) -> Record:
    """Build the job's record from what it left and write it to ``<job-dir>/record.json``."""
    results = job_dir / RESULTS_DIR
    points = tuple(_point(raw, env, job, job_dir) for raw in raw_results(results, env, job.multinode))
    if gpus is not None:
        (job_dir / GPU_INVENTORY_FILE).write_text(f"$ {gpus.tool}\n{gpus.output}", encoding="utf-8")
    record = Record(
        job=identity(job), sha=sha, runner=runner, node=status.node,
        gpus=Gpus(gpus.vendor, gpus.model, gpus.count, gpus.driver) if gpus is not None else Gpus(),
        status=Status(state=status.status, exit_code=status.exit_code, signal=status.signal,
                      sigkill_needed=status.killed, leftover_processes=status.leftover_processes,
                      started_at=status.started_at, finished_at=status.finished_at,
                      duration_s=status.duration_seconds),
        results=points,
        files=Files(log=LOG_FILE, server_log=_relative(job_dir, f"{RESULTS_DIR}/server.log"),
                    gpu_metrics=_relative(job_dir, f"{RESULTS_DIR}/gpu_metrics.csv"),
                    power=_relative(job_dir, *(f"{RESULTS_DIR}/power_validation_{p.stem}.json" for p in
                                                raw_results(results, env, job.multinode)))))
    save(record, job_dir)
    return record
