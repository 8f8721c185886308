"""Synthetic sweeps of real matrix jobs: records with a performance model, noise and injected changes.

Each job of the real InferenceX matrix gets a throughput per GPU and an
interactivity from a smooth model of its concurrency and GPU count, times
lognormal noise (``noise``: relative standard deviation) and, for the
points named in ``changes``, a factor: what a sweep of an unchanged or a
changed commit would record.
"""

from __future__ import annotations

import io
import math
import random
import zipfile
from pathlib import Path
from typing import Iterable, Mapping

from ci_tools.jobs.job import Job
from ci_tools.results import record as rec
from ci_tools.results.identity import identity
from ci_tools.results.point import PointKey, key_of


def model(job_key: PointKey, gpus: int) -> tuple[float, float]:
    """(throughput per GPU, interactivity) of a point: throughput grows and interactivity falls with concurrency."""
    c = job_key.concurrency
    seed = sum(map(ord, job_key.config_key)) % 17
    tput = (900 + 40 * seed) * (c ** 0.75) / (8 ** 0.75) * (8 / max(gpus, 1)) ** 0.1
    intvty = (180 + 5 * seed) / (1 + 0.35 * math.log2(c))
    return tput, intvty


def records(jobs: Iterable[Job], *, sha: str, date: str, rng: random.Random, noise: float = 0.015,
            changes: Mapping[tuple[PointKey, str], float] | None = None, node: str = "mi355x-amds_03",
            invalid: Iterable[PointKey] = ()) -> list[rec.Record]:
    out = []
    bad = set(invalid)
    for job in jobs:
        ident = identity(job)
        gpus = sum(p.gpus for p in ident.parallelism.values())
        record = rec.Record(job=ident, sha=sha, runner=node, node=node, gpus=rec.Gpus("amd", "MI355X", gpus, "6.14"),
                            status=rec.Status("success", 0, started_at=date, finished_at=date, duration_s=600.0))
        results = []
        for conc in ident.concurrency:
            key = key_of(record, conc)
            tput, intvty = model(key, gpus)
            metrics = {"throughput_per_gpu": tput * rng.lognormvariate(0, noise),
                       "interactivity": intvty * rng.lognormvariate(0, noise)}
            for (k, metric), factor in (changes or {}).items():
                if k == key:
                    metrics[metric] *= factor
            completed = 10 * conc if key not in bad else 8 * conc
            validity = rec.Validity(completed, 10 * conc, round(1 - completed / (10 * conc), 6), None,
                                    () if key not in bad else ("request failure rate 20.0% over 5%",))
            results.append(rec.PointResult(conc, validity, metrics, f"results/c{conc}.json"))
        out.append(rec.Record(job=record.job, sha=sha, runner=node, node=node, gpus=record.gpus, status=record.status,
                              results=tuple(results)))
    return out


def write(directory: Path, records_: Iterable[rec.Record]) -> None:
    for i, r in enumerate(records_):
        job_dir = directory / f"{r.job.job_id}-{r.sha[:7]}-{r.status.started_at[:10]}-{i}"
        job_dir.mkdir(parents=True, exist_ok=True)
        rec.save(r, job_dir)


def zip_records(directory: Path, records_: Iterable[rec.Record], extra: Mapping[str, bytes] | None = None) -> bytes:
    """The records as a job's results artifact: written under ``directory``, zipped as upload-artifact does."""
    write(directory, records_)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for path in sorted(directory.rglob("record.json")):
            z.write(path, path.relative_to(directory).as_posix())
        for name, data in (extra or {}).items():
            z.writestr(name, data)
    return buf.getvalue()
