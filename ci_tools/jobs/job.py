"""One generated point of the matrix: InferenceX's matrix entry and where it came from."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import Any, Mapping, TypeGuard

from ..findings import Location

FIXED = "fixed-seq-len"
AGENTIC = "agentic-coding"
SCENARIOS = (FIXED, AGENTIC)
# Fields that mark a job for evals; they depend on the other jobs of the set (the median
# concurrency of a group), so they are left out of a job's id.
EVAL_FIELDS = frozenset({"run-eval", "eval-only", "eval-conc", "eval-all-concs"})


def _is_int(v: Any) -> TypeGuard[int]:
    return isinstance(v, int) and not isinstance(v, bool)


def _sha256_hex(data: bytes) -> str:
    """hashlib's sha256, imported on first use: validate expands rows without ever naming a job."""
    import hashlib

    return hashlib.sha256(data).hexdigest()


@lru_cache(maxsize=4096)
def _quoted(text: str) -> str:
    """JSON string literal; config keys repeat across jobs, so quote each once."""
    return json.dumps(text)


@dataclass(frozen=True)
class Job:
    """One generated point: InferenceX's matrix entry (``fields``), plus where it came from."""

    config_key: str
    scenario: str
    fields: Mapping[str, Any]
    row: Location = field(compare=False)
    scenario_index: int = 0
    row_index: int = 0

    @property
    def multinode(self) -> bool:
        """Multinode entries carry prefill and decode workers (how InferenceX's workflows tell them apart)."""
        return "prefill" in self.fields

    @property
    def conc(self) -> int | None:
        """The concurrency of a single-node job (None for multinode jobs, which carry a list)."""
        c = self.fields.get("conc")
        return c if _is_int(c) else None

    @property
    def concs(self) -> list[int]:
        """Every concurrency the job runs (one for single-node jobs)."""
        c = self.fields.get("conc")
        if isinstance(c, list):
            return [v for v in c if _is_int(v)]
        return [c] if _is_int(c) else []

    def get(self, name: str, default: Any = None) -> Any:
        return self.fields.get(name, default)

    @cached_property
    def _fields_json(self) -> str:
        return json.dumps(self.fields, separators=(",", ":"), default=str)

    @cached_property
    def id(self) -> str:
        """Stable id: a hash of the config key, the scenario and every field of the point.

        Source positions are left out, so that moving or commenting a config
        does not change its jobs' ids, while any change of a value does.  Eval
        marks are left out too: they follow from the other jobs of the set.
        """
        point = {k: v for k, v in self.fields.items() if k not in EVAL_FIELDS}
        body = json.dumps(point, sort_keys=True, separators=(",", ":"), default=str)
        blob = f"{self.config_key}\0{self.scenario}\0{body}"
        return _sha256_hex(blob.encode())[:16]

    def json_text(self) -> str:
        """The matrix entry as compact JSON (same content as :meth:`to_json`, fields in InferenceX's order)."""
        head = f'{{"id":"{self.id}","config-key":{_quoted(self.config_key)}'
        body = self._fields_json
        return f"{head}}}" if body == "{}" else f"{head},{body[1:]}"

    def label(self) -> str:
        f = self.fields
        if self.multinode:
            p, d = f.get("prefill") or {}, f.get("decode") or {}
            return (f"{self.config_key} {self.scenario} P{p.get('num-worker')}xTP{p.get('tp')}/EP{p.get('ep')} "
                    f"D{d.get('num-worker')}xTP{d.get('tp')}/EP{d.get('ep')} conc={f.get('conc')}")
        par = f"TP{f.get('tp')}/EP{f.get('ep')}" + ("/DPA" if f.get("dp-attn") is True else "")
        seq = "" if self.scenario == AGENTIC else f" {f.get('isl')}/{f.get('osl')}"
        return f"{self.config_key} {self.scenario}{seq} {par} c{f.get('conc')}"

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "config-key": self.config_key, **self.fields}

    def with_fields(self, **changes: Any) -> Job:
        """The same point with some fields replaced (a new id follows from the new values)."""
        return Job(self.config_key, self.scenario, {**self.fields, **changes}, self.row,
                   self.scenario_index, self.row_index)
