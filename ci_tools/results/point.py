"""A benchmark point's identity, and one measurement of it (an observation).

Points are compared by what was measured, not by job id: the job id hashes
every field of the matrix entry, the image included, so an image bump would
leave the point without a baseline.  The key is the config key, scenario,
ISL/OSL, concurrency, parallelism per role, spec decoding and disagg.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from ..jobs.sequence_lengths import kilo_words
from .record import JobIdentity, Parallelism, Record


def parallelism_text(parallelism: Mapping[str, Parallelism]) -> str:
    """``tp4`` for one worker set, ``P1xtp4 D1xtp8ep8dpa`` for disaggregated roles (only what is not the default)."""
    def one(p: Parallelism) -> str:
        parts = [f"tp{p.tp}"]
        parts += [f"{name}{value}" for name, value in (("ep", p.ep), ("pp", p.pp), ("dcp", p.dcp), ("pcp", p.pcp))
                  if value != 1]
        return "".join(parts) + ("dpa" if p.dp_attention else "")

    if set(parallelism) == {"single"}:
        return one(parallelism["single"])
    return " ".join(f"{role[0].upper()}{parallelism[role].workers}x{one(parallelism[role])}"
                    for role in ("prefill", "decode") if role in parallelism)


@dataclass(frozen=True, order=True)
class PointKey:
    config_key: str
    scenario: str
    isl: int  # 0 for agentic points
    osl: int
    concurrency: int
    parallelism: str
    spec_decoding: str
    disagg: bool
    kv_offloading: str = "none"

    @property
    def group(self) -> tuple[str, str, int, int]:
        """The Pareto group: one configuration at one sequence length."""
        return self.config_key, self.scenario, self.isl, self.osl

    @property
    def seq(self) -> str:
        return "agentic" if self.scenario == "agentic-coding" else f"{kilo_words(self.isl)}/{kilo_words(self.osl)}"

    def text(self) -> str:
        spec = "" if self.spec_decoding in ("", "none") else f" spec={self.spec_decoding}"
        kv = "" if self.kv_offloading == "none" else f" kv={self.kv_offloading}"
        return (f"{self.config_key} {self.seq} {self.parallelism} c{self.concurrency}{spec}{kv}"
                + (" disagg" if self.disagg else ""))

    def slug(self) -> str:
        """A file name: readable prefix and a hash of every field (two keys never share a file)."""
        fields = [self.config_key, self.scenario, self.isl, self.osl, self.concurrency, self.parallelism,
                  self.spec_decoding, self.disagg] + ([self.kv_offloading] if self.kv_offloading != "none" else [])
        body = "\0".join(str(v) for v in fields)
        readable = re.sub(r"[^A-Za-z0-9._-]+", "-", f"{self.config_key}_{self.seq}_c{self.concurrency}")[:80]
        return f"{readable}_{hashlib.sha256(body.encode()).hexdigest()[:12]}"

    def to_json(self) -> dict[str, Any]:
        return {"config_key": self.config_key, "scenario": self.scenario, "isl": self.isl, "osl": self.osl,
                "concurrency": self.concurrency, "parallelism": self.parallelism,
                "spec_decoding": self.spec_decoding, "disagg": self.disagg, "kv_offloading": self.kv_offloading}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> PointKey:
        return cls(str(data["config_key"]), str(data["scenario"]), int(data["isl"]), int(data["osl"]),
                   int(data["concurrency"]), str(data["parallelism"]), str(data["spec_decoding"]), bool(data["disagg"]),
                   str(data.get("kv_offloading", "none")))


@dataclass(frozen=True)
class Observation:
    """One measurement of a point: where and when it ran, whether it is valid, its canonical metrics."""

    key: PointKey
    sha: str
    date: str  # ISO 8601, UTC
    runner: str
    node: str
    image: str
    valid: bool
    metrics: dict[str, float]
    reasons: tuple[str, ...] = ()
    power_valid: bool | None = None
    sweep: str = ""  # the sweep (run) it belongs to
    gpus: int = 0
    model: str = ""
    runner_label: str = ""
    extra: dict[str, Any] = field(default_factory=dict, compare=False)

    def to_json(self) -> dict[str, Any]:
        """One store line; the key is the file it lives in, so it is not repeated."""
        data: dict[str, Any] = {"sha": self.sha, "date": self.date, "sweep": self.sweep, "runner": self.runner,
                                "node": self.node, "image": self.image, "valid": self.valid,
                                "metrics": self.metrics}
        if self.reasons:
            data["reasons"] = list(self.reasons)
        if self.power_valid is not None:
            data["power_valid"] = self.power_valid
        data.update({k: v for k, v in (("gpus", self.gpus), ("model", self.model),
                                        ("runner_label", self.runner_label)) if v})
        return data

    @classmethod
    def from_json(cls, key: PointKey, data: Mapping[str, Any]) -> Observation:
        metrics = data.get("metrics") or {}
        return cls(key=key, sha=str(data.get("sha", "")), date=str(data.get("date", "")),
                   runner=str(data.get("runner", "")), node=str(data.get("node", "")), image=str(data.get("image", "")),
                   valid=bool(data.get("valid")), metrics={k: float(v) for k, v in metrics.items()},
                   reasons=tuple(data.get("reasons") or ()), power_valid=data.get("power_valid"),
                   sweep=str(data.get("sweep", "")), gpus=int(data.get("gpus") or 0), model=str(data.get("model", "")),
                   runner_label=str(data.get("runner_label", "")))


def key_of(record: Record, concurrency: int) -> PointKey:
    return point_key(record.job, concurrency)


def point_key(job: JobIdentity, concurrency: int) -> PointKey:
    return PointKey(job.config_key, job.scenario, job.isl or 0, job.osl or 0, concurrency,
                    parallelism_text(job.parallelism), job.spec_decoding, job.disagg, job.kv_offloading)


def point_keys(job: JobIdentity) -> set[PointKey]:
    """The points a job measures: one per concurrency."""
    return {point_key(job, c) for c in job.concurrency}


def observations(record: Record, *, sweep: str = "") -> Iterable[Observation]:
    """One observation per concurrency of the job: measured ones, and invalid ones for what it did not measure."""
    status = record.status
    date = status.finished_at or status.started_at
    gpus = sum(p.gpus for p in record.job.parallelism.values())
    ended = [] if status.state in _KEEPS_RESULTS else [f"job {status.state}" + (
        f" ({status.signal})" if status.signal else f" (exit {status.exit_code})" if status.exit_code else "")]
    common = dict(sha=record.sha, date=date, runner=record.runner, node=record.node, image=record.job.image,
                  sweep=sweep, gpus=gpus, model=record.job.model, runner_label=record.job.runner_label)
    measured = set()
    for result in record.results:
        measured.add(result.concurrency)
        reasons = (*result.validity.reasons, *ended)
        yield Observation(key=key_of(record, result.concurrency), valid=not reasons, metrics=result.metrics,
                          reasons=reasons, power_valid=result.validity.power_valid, **common)  # type: ignore[arg-type]
    why = ended or [f"job {status.state}" + (f" (exit {status.exit_code})" if status.exit_code else "")]
    for conc in record.job.concurrency:
        if conc not in measured:
            yield Observation(key=key_of(record, conc), valid=False, metrics={},
                              reasons=("no result", *why), **common)  # type: ignore[arg-type]


# A job that ran to its end (with or without a non-zero exit) keeps what it measured; one cut short does not.
_KEEPS_RESULTS = ("success", "failed")
