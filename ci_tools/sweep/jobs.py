"""Jobs as they travel between the planner and the runner: matrix entries in JSON.

A matrix entry is :meth:`ci_tools.jobs.matrix.Job.to_json`: ``id``, ``config-key``
and the job's fields (InferenceX's entry, whose ``scenario-type`` is absent on
fixed-seq-len jobs), optionally with the ``env`` that ``matrix --env`` adds.
The runner rebuilds the :class:`Job` from it and checks that the id still
matches, so a hand-edited or truncated entry is refused instead of
benchmarking something else under the old name.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import UsageError
from ..findings import Location
from ..jobs.job import FIXED, SCENARIOS, Job

# Keys of an entry that are not fields of the job: its identity and annotations.
_NOT_FIELDS = ("id", "config-key", "env")


def job_from_entry(entry: Any, source: str = "--job") -> Job:
    """Rebuild a Job from its matrix entry; the row location is not carried, so it names the source."""
    if not isinstance(entry, dict):
        raise UsageError(f"a job must be a JSON object (a matrix entry), found {type(entry).__name__}", path=source)
    # InferenceX's templates default the scenario to fixed-seq-len; its entries carry it only when agentic.
    key, scenario = entry.get("config-key"), entry.get("scenario-type", FIXED)
    if not isinstance(key, str) or not key:
        raise UsageError("the job has no `config-key` string; expected a matrix entry as `ci-tools matrix` writes it",
                         path=source)
    if scenario not in SCENARIOS:
        raise UsageError(f"the job's `scenario-type` is {scenario!r}, expected one of {', '.join(SCENARIOS)}", path=source)
    fields = {k: v for k, v in entry.items() if k not in _NOT_FIELDS}
    job = Job(key, scenario, fields, Location(source))
    claimed = entry.get("id")
    if claimed is not None and claimed != job.id:
        raise UsageError(f"the job's id {claimed!r} does not match its fields (they hash to {job.id!r}); "
                         "the entry was edited after planning, re-plan the matrix", path=source)
    return job


def parse_job_json(text: str, source: str = "--job") -> Job:
    try:
        entry = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"the job is not valid JSON: {exc.msg}", path=source, line=exc.lineno) from None
    return job_from_entry(entry, source)


def matrix_entries(data: Any, source: str) -> list[Any]:
    """The job entries of a matrix file, flattened in order.

    Accepted shapes: a list of entries; ``{"include": [...]}`` (a GitHub
    matrix); ``{"jobs": [...]}``; ``{"shards": [<either of those>, ...]}``.
    """
    if isinstance(data, list):
        return list(data)
    if isinstance(data, dict):
        for key in ("include", "jobs"):
            if isinstance(data.get(key), list):
                return list(data[key])
        shards = data.get("shards")
        if isinstance(shards, list):
            out: list[Any] = []
            for shard in shards:
                out.extend(matrix_entries(shard, source))
            return out
    raise UsageError("the matrix file must hold a list of jobs, {\"include\": [...]}, {\"jobs\": [...]} "
                     "or {\"shards\": [...]}", path=source)


@dataclass(frozen=True)
class MatrixFile:
    entries: list[Any]
    run_eval: bool  # {"run-eval": true} at the top: the sweep was asked to run evals too
    sha: str = ""  # {"sha": ...} at the top: the commit the sweep was planned at


def load_matrix(path: str | Path) -> list[Any]:
    return read_matrix(path).entries


def read_matrix(path: str | Path) -> MatrixFile:
    shown = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot read the matrix file: {exc.strerror}", path=shown) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"the matrix file is not valid JSON: {exc.msg}", path=shown, line=exc.lineno) from None
    run_eval = isinstance(data, dict) and data.get("run-eval") is True
    sha = data.get("sha") if isinstance(data, dict) else None
    return MatrixFile(matrix_entries(data, shown), run_eval, sha if isinstance(sha, str) else "")


def job_at(path: str | Path, index: int) -> Job:
    entries = load_matrix(path)
    if not 0 <= index < len(entries):
        raise UsageError(f"--index {index} is out of range: the matrix has {len(entries)} jobs (0..{len(entries) - 1})",
                         path=str(path))
    return job_from_entry(entries[index], f"{path}[{index}]")
