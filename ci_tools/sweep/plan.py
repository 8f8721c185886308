"""Fit a matrix of any size into one GitHub matrix job.

GitHub allows at most 256 entries per matrix and 1 MB of outputs per job,
and the full sweep exceeds both.  The planned jobs therefore stay in a file
(uploaded as an artifact) and the GitHub matrix carries only, per entry, a
runner label and the indices of the jobs that entry runs one after another.
Each runner label gets a share of the entries proportional to its jobs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from ..errors import UsageError
from .jobs import job_from_entry

GITHUB_MAX_MATRIX = 256


@dataclass(frozen=True)
class MatrixEntry:
    runner: str
    indices: tuple[int, ...]

    def to_json(self) -> dict[str, Any]:
        return {"runner": self.runner, "indices": ",".join(map(str, self.indices)), "jobs": len(self.indices)}


def _chunks(items: Sequence[int], count: int) -> list[tuple[int, ...]]:
    size, extra = divmod(len(items), count)
    out, start = [], 0
    for i in range(count):
        end = start + size + (1 if i < extra else 0)
        out.append(tuple(items[start:end]))
        start = end
    return [c for c in out if c]


def plan_entries(entries: Sequence[Any], source: str, max_entries: int = GITHUB_MAX_MATRIX) -> list[MatrixEntry]:
    by_runner: dict[str, list[int]] = {}
    for index, entry in enumerate(entries):
        job = job_from_entry(entry, f"{source}[{index}]")
        runner = job.get("runner")
        if not isinstance(runner, str) or not runner:
            raise UsageError(f"job {index} ({job.label()}) has no runner label", path=source)
        by_runner.setdefault(runner, []).append(index)
    if len(by_runner) > max_entries:
        raise UsageError(f"the matrix uses {len(by_runner)} runner labels, more than the {max_entries} matrix entries allowed",
                         path=source)
    total = len(entries)
    shares = {r: max(1, (max_entries * len(ix)) // total) for r, ix in by_runner.items()} if total else {}
    # Rounding down leaves spare entries: give them to the labels with the most jobs per entry.
    spare = max_entries - sum(shares.values())
    while spare > 0:
        runner = max(by_runner, key=lambda r: len(by_runner[r]) / shares[r])
        if shares[runner] >= len(by_runner[runner]):
            break
        shares[runner] += 1
        spare -= 1
    out: list[MatrixEntry] = []
    for runner, indices in by_runner.items():
        out.extend(MatrixEntry(runner, chunk) for chunk in _chunks(indices, min(shares[runner], len(indices))))
    return out
