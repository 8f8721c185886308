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
    node: str = ""  # the runner node the job ran as (RUNNER_NAME)
    port: int | None = None
    timeout_seconds: float | None = None
    result_filename: str | None = None  # RESULT_FILENAME: the recipe writes <it>.json
    result_file: str | None = None  # where that file was found, under results/
    missing_env: tuple[str, ...] = field(default=())  # required variables nothing supplied (not run)
    leftovers: tuple[str, ...] = field(default=())  # "pid command" of processes left running after exit
    detached_processes: int = 0  # of those, outside the job's process group (setsid): found by the marker
    survivors: int = 0  # processes of the job still alive after SIGKILL
    uncollected: tuple[str, ...] = field(default=())  # files written in the workspace the fleet does not keep

    def to_json(self) -> dict[str, Any]:
        data = {k.replace("_", "-"): list(v) if isinstance(v, tuple) else v for k, v in asdict(self).items()}
        return {"schema": SCHEMA, **data}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> StatusRecord:
        known = {f for f in cls.__dataclass_fields__}
        kwargs = {k.replace("-", "_"): v for k, v in data.items() if k.replace("-", "_") in known}
        for name in ("argv", "results", "missing_env", "leftovers", "uncollected"):
            kwargs[name] = tuple(kwargs.get(name) or ())
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
