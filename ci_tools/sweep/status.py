"""The status record a job leaves in its directory: ``status.json``.

It is what the report reads, so it states the outcome in one word
(``status``) as well as the facts behind it.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

SCHEMA = "ci-tools/sweep-status/1"
STATUS_FILE = "status.json"
LOG_FILE = "job.log"
RESULTS_DIR = "results"

SUCCESS, FAILED, TIMED_OUT, STOPPED, NOT_RUN = "success", "failed", "timed-out", "stopped", "not-run"


@dataclass(frozen=True)
class StatusRecord:
    job_id: str
    label: str
    config_key: str
    scenario_type: str
    runner: str
    launcher: str
    recipe: str | None
    argv: tuple[str, ...]
    status: str
    exit_code: int | None = None
    signal: str | None = None
    timed_out: bool = False
    stopped: bool = False
    killed: bool = False
    leftover_processes: int = 0
    duration_seconds: float = 0.0
    started_at: str = ""
    finished_at: str = ""
    message: str = ""
    log: str = LOG_FILE
    results: tuple[str, ...] = field(default=())
    conc: int | None = None

    def to_json(self) -> dict[str, Any]:
        data = {k.replace("_", "-"): v for k, v in asdict(self).items()}
        data["argv"], data["results"] = list(self.argv), list(self.results)
        return {"schema": SCHEMA, **data}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> StatusRecord:
        known = {f for f in cls.__dataclass_fields__}
        kwargs = {k.replace("-", "_"): v for k, v in data.items() if k.replace("-", "_") in known}
        kwargs["argv"] = tuple(kwargs.get("argv") or ())
        kwargs["results"] = tuple(kwargs.get("results") or ())
        return cls(**kwargs)


def write_status(job_dir: Path, record: StatusRecord) -> Path:
    path = job_dir / STATUS_FILE
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(record.to_json(), indent=2) + "\n", encoding="utf-8")
    tmp.replace(path)  # a reader never sees half a record
    return path


def read_status(path: Path) -> StatusRecord:
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        raise ValueError(f"{path} is not a ci-tools sweep status record")
    return StatusRecord.from_json(data)
