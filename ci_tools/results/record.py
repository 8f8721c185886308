"""``record.json``: what one sweep job ran, where, how it ended and what it measured.

One record per job directory, written by the runner-side executor and read
by every later stage (the results store, the comparison, the PR comment).
A job runs one point per concurrency (a multinode job carries a list), so
``results`` holds one entry per concurrency, each with its validity, its
metrics and the raw result file it was computed from.

The file is versioned (``schema``); :func:`load` refuses another version
and names every problem as ``file: field: found ..., expected ...``.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, TypeVar

SCHEMA = "ci-tools/record/1"
RECORD_FILE = "record.json"
STATES = ("success", "failed", "timed-out", "stopped", "not-run")
ROLES = ("single", "prefill", "decode")
SCENARIOS = ("fixed-seq-len", "agentic-coding")

T = TypeVar("T")


class RecordError(ValueError):
    """A record that cannot be read; ``problems`` lists every ``field: what is wrong``."""

    def __init__(self, path: str, problems: list[str]) -> None:
        self.path, self.problems = path, problems
        super().__init__("\n".join(f"{path}: {p}" for p in problems))


@dataclass(frozen=True)
class Parallelism:
    """One role's workers: single-node jobs have the role ``single``, disaggregated ones prefill and decode."""

    tp: int
    ep: int = 1
    pp: int = 1
    dcp: int = 1
    pcp: int = 1
    dp_attention: bool = False
    workers: int = 1

    @property
    def gpus(self) -> int:
        return self.workers * self.tp * self.pp * self.pcp


@dataclass(frozen=True)
class JobIdentity:
    job_id: str
    config_key: str
    scenario: str
    isl: int | None  # None for agentic jobs, whose lengths come from traces
    osl: int | None
    concurrency: tuple[int, ...]
    parallelism: dict[str, Parallelism]
    spec_decoding: str
    disagg: bool
    image: str
    runner_label: str
    framework: str
    precision: str
    model: str
    model_prefix: str = ""
    kv_offloading: str = "none"  # agentic jobs: where the KV cache spills (dram, with its backend)


@dataclass(frozen=True)
class Gpus:
    vendor: str = ""  # amd | nvidia | "" when unknown
    model: str = ""
    count: int = 0
    driver: str = ""


@dataclass(frozen=True)
class Status:
    state: str
    exit_code: int | None = None
    signal: str | None = None
    sigkill_needed: bool = False
    leftover_processes: int = 0
    started_at: str = ""
    finished_at: str = ""
    duration_s: float = 0.0


@dataclass(frozen=True)
class Validity:
    completed: int
    requested: int
    failure_rate: float
    power_valid: bool | None  # None: the job measured no power at all
    reasons: tuple[str, ...] = ()

    @property
    def valid(self) -> bool:
        return not self.reasons


@dataclass(frozen=True)
class PointResult:
    """One concurrency's outcome: validity, canonical metrics (units in ``metrics.CANONICAL``), its raw file."""

    concurrency: int
    validity: Validity
    metrics: dict[str, float]
    raw_result: str  # relative to the job directory
    aggregate: str = ""  # the process_result.py-shaped aggregate written beside it


@dataclass(frozen=True)
class Files:
    log: str = ""
    server_log: str = ""
    gpu_metrics: str = ""
    power: str = ""


@dataclass(frozen=True)
class Record:
    job: JobIdentity
    sha: str  # the commit the job ran ("" when it ran from a tree that is not a git checkout)
    runner: str  # the runner's name
    node: str
    gpus: Gpus
    status: Status
    results: tuple[PointResult, ...] = ()
    files: Files = field(default_factory=Files)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["job"]["concurrency"] = list(self.job.concurrency)
        for r in data["results"]:
            r["validity"]["reasons"] = list(r["validity"]["reasons"])
        return {"schema": SCHEMA, **data}


def save(record: Record, job_dir: Path) -> Path:
    """Write ``record.json`` atomically (a reader never sees half a record)."""
    path = job_dir / RECORD_FILE
    tmp = path.with_name(f".{RECORD_FILE}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(record.to_json(), indent=2) + "\n", encoding="utf-8")
    tmp.replace(path)
    return path


class _Reader:
    """Reads typed fields out of parsed JSON, collecting every problem with its dotted field name."""

    def __init__(self) -> None:
        self.problems: list[str] = []

    def get(self, data: Mapping[str, Any], where: str, name: str, kind: type[T] | tuple[type, ...],
            default: Any = ..., check: Callable[[Any], str] | None = None) -> Any:
        path = f"{where}.{name}" if where else name
        if name not in data:
            if default is ...:
                self.problems.append(f"{path}: missing")
            return None if default is ... else default
        value = data[name]
        kinds = kind if isinstance(kind, tuple) else (kind,)
        wrong_bool = isinstance(value, bool) and bool not in kinds
        if wrong_bool or not isinstance(value, kinds):
            self.problems.append(f"{path}: found {json.dumps(value)[:60]}, expected {_kind_name(kinds)}")
            return None if default is ... else default
        if check is not None and (message := check(value)):
            self.problems.append(f"{path}: found {json.dumps(value)[:60]}, expected {message}")
        return value

    def section(self, data: Mapping[str, Any], where: str, name: str) -> dict[str, Any]:
        value = self.get(data, where, name, dict)
        return value if isinstance(value, dict) else {}


def _kind_name(kinds: tuple[type, ...]) -> str:
    names = {str: "a string", int: "an integer", float: "a number", bool: "true or false", list: "a list",
             dict: "a mapping", type(None): "null"}
    return " or ".join(names.get(k, k.__name__) for k in kinds)


def _one_of(choices: tuple[str, ...]) -> Callable[[Any], str]:
    return lambda v: "" if v in choices else "one of " + ", ".join(choices)


def _non_negative(v: Any) -> str:
    return "" if v >= 0 else "a value >= 0"


def _positive(v: Any) -> str:
    return "" if v > 0 else "a value > 0"


def _parallelism(r: _Reader, data: dict[str, Any], where: str) -> Parallelism:
    return Parallelism(tp=r.get(data, where, "tp", int, check=_positive) or 1,
                       ep=r.get(data, where, "ep", int, 1, _positive), pp=r.get(data, where, "pp", int, 1, _positive),
                       dcp=r.get(data, where, "dcp", int, 1, _positive), pcp=r.get(data, where, "pcp", int, 1, _positive),
                       dp_attention=r.get(data, where, "dp_attention", bool, False),
                       workers=r.get(data, where, "workers", int, 1, _non_negative))


def _job(r: _Reader, data: dict[str, Any]) -> JobIdentity:
    w = "job"
    conc = r.get(data, w, "concurrency", list) or []
    for i, c in enumerate(conc):
        if not isinstance(c, int) or isinstance(c, bool) or c <= 0:
            r.problems.append(f"job.concurrency[{i}]: found {json.dumps(c)}, expected a positive integer")
    par_data = r.section(data, w, "parallelism")
    for role in par_data:
        if role not in ROLES:
            r.problems.append(f"job.parallelism.{role}: unknown role, expected one of {', '.join(ROLES)}")
    parallelism = {role: _parallelism(r, value, f"job.parallelism.{role}") for role, value in par_data.items()
                   if role in ROLES and isinstance(value, dict)}
    if par_data and not parallelism:
        r.problems.append("job.parallelism: no role with a mapping")
    return JobIdentity(
        job_id=r.get(data, w, "job_id", str) or "", config_key=r.get(data, w, "config_key", str) or "",
        scenario=r.get(data, w, "scenario", str, check=_one_of(SCENARIOS)) or "",
        isl=r.get(data, w, "isl", (int, type(None))), osl=r.get(data, w, "osl", (int, type(None))),
        concurrency=tuple(c for c in conc if isinstance(c, int)), parallelism=parallelism,
        spec_decoding=r.get(data, w, "spec_decoding", str) or "", disagg=bool(r.get(data, w, "disagg", bool)),
        image=r.get(data, w, "image", str) or "", runner_label=r.get(data, w, "runner_label", str) or "",
        framework=r.get(data, w, "framework", str) or "", precision=r.get(data, w, "precision", str) or "",
        model=r.get(data, w, "model", str) or "", model_prefix=r.get(data, w, "model_prefix", str, ""),
        kv_offloading=r.get(data, w, "kv_offloading", str, "none"))


def _result(r: _Reader, data: dict[str, Any], where: str) -> PointResult:
    v = r.section(data, where, "validity")
    vw = f"{where}.validity"
    reasons = r.get(v, vw, "reasons", list, [])
    validity = Validity(completed=r.get(v, vw, "completed", int, check=_non_negative) or 0,
                        requested=r.get(v, vw, "requested", int, check=_non_negative) or 0,
                        failure_rate=float(r.get(v, vw, "failure_rate", (int, float)) or 0.0),
                        power_valid=r.get(v, vw, "power_valid", (bool, type(None))),
                        reasons=tuple(str(x) for x in reasons))
    metrics_data = r.get(data, where, "metrics", dict) or {}
    metrics: dict[str, float] = {}
    for name, value in metrics_data.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            r.problems.append(f"{where}.metrics.{name}: found {json.dumps(value)[:60]}, expected a number")
        else:
            metrics[name] = float(value)
    return PointResult(concurrency=r.get(data, where, "concurrency", int, check=_positive) or 0, validity=validity,
                       metrics=metrics, raw_result=r.get(data, where, "raw_result", str) or "",
                       aggregate=r.get(data, where, "aggregate", str, ""))


def from_json(data: Any, path: str = RECORD_FILE) -> Record:
    """A record from parsed JSON; :class:`RecordError` lists every problem."""
    if not isinstance(data, dict):
        raise RecordError(path, [f"top level: found {type(data).__name__}, expected a mapping"])
    if data.get("schema") != SCHEMA:
        raise RecordError(path, [f"schema: found {json.dumps(data.get('schema'))}, expected {json.dumps(SCHEMA)}"])
    r = _Reader()
    job = _job(r, r.section(data, "", "job"))
    g = r.section(data, "", "gpus")
    gpus = Gpus(vendor=r.get(g, "gpus", "vendor", str, ""), model=r.get(g, "gpus", "model", str, ""),
                count=r.get(g, "gpus", "count", int, 0, _non_negative), driver=r.get(g, "gpus", "driver", str, ""))
    s = r.section(data, "", "status")
    status = Status(state=r.get(s, "status", "state", str, check=_one_of(STATES)) or "",
                    exit_code=r.get(s, "status", "exit_code", (int, type(None)), None),
                    signal=r.get(s, "status", "signal", (str, type(None)), None),
                    sigkill_needed=r.get(s, "status", "sigkill_needed", bool, False),
                    leftover_processes=r.get(s, "status", "leftover_processes", int, 0, _non_negative),
                    started_at=r.get(s, "status", "started_at", str, ""),
                    finished_at=r.get(s, "status", "finished_at", str, ""),
                    duration_s=float(r.get(s, "status", "duration_s", (int, float), 0.0)))
    results_data = r.get(data, "", "results", list, [])
    results: list[PointResult] = []
    for i, item in enumerate(results_data):
        if isinstance(item, dict):
            results.append(_result(r, item, f"results[{i}]"))
        else:
            r.problems.append(f"results[{i}]: found {json.dumps(item)[:60]}, expected a mapping")
    f = r.section(data, "", "files") if "files" in data else {}
    files = Files(**{name: r.get(f, "files", name, str, "") for name in ("log", "server_log", "gpu_metrics", "power")})
    sha = r.get(data, "", "sha", str, check=lambda v: "" if v == "" or len(v) == 40 and all(
        c in "0123456789abcdef" for c in v) else "a 40-digit lowercase hex commit id, or \"\" (not a git checkout)")
    record = Record(job=job, sha=sha or "", runner=r.get(data, "", "runner", str) or "",
                    node=r.get(data, "", "node", str, ""), gpus=gpus, status=status,
                    results=tuple(results), files=files)
    if r.problems:
        raise RecordError(path, r.problems)
    return record


def load(path: Path) -> Record:
    """Read and validate a record file; :class:`RecordError` names the file and each bad field."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise RecordError(str(path), [f"not UTF-8 text (byte {exc.start})"]) from None
    except OSError as exc:
        raise RecordError(str(path), [f"cannot read: {exc.strerror or exc}"]) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise RecordError(str(path), [f"line {exc.lineno} column {exc.colno}: not JSON ({exc.msg})"]) from None
    return from_json(data, str(path))
