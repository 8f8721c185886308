"""Conditions an entry writes out for where a change applies: ``(isl>=8192 && conc>=64)``.

"Concurrency-gate the fast path to the long-context high-concurrency tail
(isl>=8192 && conc>=64)" says another bullet's setting ("Enable ...
VLLM_ROCM_SHUFFLE_KV_CACHE_LAYOUT=1") holds only there.  A claim true on
exactly the jobs a gate of its entry selects is no partial contradiction.
"""

from __future__ import annotations

import operator
import re
from dataclasses import dataclass
from typing import Callable, Iterable

from ...jobs.job import Job

_TERM = r"(?:isl|osl|conc)\s*(?:>=|<=|==|>|<)\s*\d+"
_GATE = re.compile(r"\(\s*(" + _TERM + r"(?:\s*&&\s*" + _TERM + r")*)\s*\)", re.IGNORECASE)
_PARTS = re.compile(r"(isl|osl|conc)\s*(>=|<=|==|>|<)\s*(\d+)", re.IGNORECASE)
_OPS: dict[str, Callable[[int, int], bool]] = {">=": operator.ge, "<=": operator.le, "==": operator.eq,
                                                ">": operator.gt, "<": operator.lt}


@dataclass(frozen=True)
class Gate:
    text: str
    terms: tuple[tuple[str, str, int], ...]  # (field, operator, number)

    def admits(self, job: Job) -> bool | None:
        """The job is inside the gate; None when one of its fields is not a single number (a multinode list)."""
        for name, op, n in self.terms:
            value = job.conc if name == "conc" else job.fields.get(name)
            if not isinstance(value, int):
                return None
            if not _OPS[op](value, n):
                return False
        return True


def gates_in(texts: Iterable[str]) -> list[Gate]:
    return [Gate(m.group(1), tuple((f.lower(), op, int(n)) for f, op, n in _PARTS.findall(m.group(1))))
            for text in texts for m in _GATE.finditer(text)]


def explained_by_a_gate(holds: set[str], jobs: Iterable[Job], gates: list[Gate]) -> bool:
    """The jobs a claim holds on are exactly those one of the entry's gates selects."""
    jobs = list(jobs)
    for gate in gates:
        inside = [gate.admits(j) for j in jobs]
        if None not in inside and holds and holds == {j.id for j, ok in zip(jobs, inside) if ok}:
            return True
    return False
