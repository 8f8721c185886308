"""Expansion of master configs into jobs: one job per generated point.

The rules are the ones the benchmark repository's own generator applies
(docs: FORMATS.md, "Matrix expansion"): a ``conc-start``..``conc-end`` range
doubles from the start and clamps its last value to the end, ``conc-list`` is
taken verbatim, omitted fields take their defaults.  Single-node rows give one
job per concurrency; a multinode row gives one job carrying its whole
concurrency list, as multinode recipes receive ``CONC_LIST``.

Expansion is defensive: a malformed row (which the schema rules report) is
skipped rather than crashing the expansion of everything else.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Iterable, Iterator, Mapping

from .findings import Location
from .model.repository import ConfigEntry, RepoData
from .yamlpos import PosMap, PosSeq, Span

FIXED = "fixed-seq-len"
AGENTIC = "agentic-coding"
SCENARIOS = (FIXED, AGENTIC)
AGENTIC_DURATION = 3600
# Upper bound on the CPU DRAM a job may offload into, in MiB (FORMATS.md).
DRAM_CAP_MIB = 2_861_022
DEFAULT_PORT = "8888"


def conc_values(row: Mapping[str, Any]) -> list[int]:
    """Concurrencies a row generates; empty when the row is malformed."""
    if "conc-list" in row:
        values = row["conc-list"]
        if isinstance(values, list) and all(_is_int(v) for v in values):
            return [int(v) for v in values]
        return []
    start, end = row.get("conc-start"), row.get("conc-end")
    if not (_is_int(start) and _is_int(end)) or start <= 0 or start > end:
        return []
    out: list[int] = []
    value = int(start)
    while value < end:
        out.append(value)
        value *= 2
    out.append(int(end))
    return out


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def exp_name(model_prefix: str, isl: int | None, osl: int | None) -> str:
    if isl is None or osl is None:
        return f"{model_prefix}_agentic"
    named = {(1024, 1024): "1k1k", (8192, 1024): "8k1k", (1024, 8192): "1k8k"}
    return f"{model_prefix}_{named.get((isl, osl), f'{isl}_{osl}')}"


def gpu_name(runner_label: str) -> str:
    """Hardware name of a runner label: ``cluster:mi355x-amds`` -> ``mi355x``."""
    label = runner_label.removeprefix("cluster:")
    return label.split("-", 1)[0].split("_", 1)[0]


def total_cpu_dram_gb(available_mib: int, dram_utilization: float, gpus_used: int, gpus_per_node: int) -> int:
    mib = min(available_mib, DRAM_CAP_MIB)
    return math.floor(mib * 2**20 * dram_utilization * gpus_used / gpus_per_node / 10**9)


@dataclass(frozen=True)
class Job:
    """One generated point: the fields of a GitHub matrix entry, plus where it came from."""

    config_key: str
    scenario: str
    fields: Mapping[str, Any]
    row: Location = field(compare=False)
    scenario_index: int = 0
    row_index: int = 0

    @property
    def multinode(self) -> bool:
        return bool(self.fields.get("multinode"))

    @property
    def conc(self) -> int | None:
        c = self.fields.get("conc")
        return c if isinstance(c, int) else None

    def get(self, name: str, default: Any = None) -> Any:
        return self.fields.get(name, default)

    @cached_property
    def id(self) -> str:
        """Stable id: a hash of everything the recipe receives from the config."""
        blob = json.dumps({"config-key": self.config_key, "scenario": self.scenario, **self.fields},
                          sort_keys=True, separators=(",", ":"), default=str)
        return hashlib.sha256(blob.encode()).hexdigest()[:16]

    def label(self) -> str:
        f = self.fields
        if self.multinode:
            p, d = f.get("prefill", {}), f.get("decode", {})
            return (f"{self.config_key} {self.scenario} P{p.get('num-worker')}xTP{p.get('tp')}/EP{p.get('ep')} "
                    f"D{d.get('num-worker')}xTP{d.get('tp')}/EP{d.get('ep')} conc={f.get('conc-list')}")
        par = f"TP{f.get('tp')}/EP{f.get('ep')}" + ("/DPA" if f.get("dp-attn") else "")
        seq = "" if self.scenario == AGENTIC else f" {f.get('isl')}/{f.get('osl')}"
        return f"{self.config_key} {self.scenario}{seq} {par} c{f.get('conc')}"

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "config-key": self.config_key, "scenario-type": self.scenario, **self.fields}


def _worker(block: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "num-worker": block.get("num-worker", 1),
        "tp": block.get("tp", 1),
        "ep": block.get("ep", 1),
        "dp-attn": bool(block.get("dp-attn", False)),
        "pp": block.get("pp", 1),
        "dcp-size": block.get("dcp-size", 1),
        "pcp-size": block.get("pcp-size", 1),
        "hardware": block.get("hardware"),
        "additional-settings": list(block.get("additional-settings") or []),
    }


def _scenario_rows(data: Mapping[str, Any]) -> Iterator[tuple[str, int, Mapping[str, Any], int, Mapping[str, Any], Span]]:
    scenarios = data.get("scenarios")
    if not isinstance(scenarios, dict):
        return
    for scenario in SCENARIOS:
        blocks = scenarios.get(scenario)
        if not isinstance(blocks, list):
            continue
        for s_index, block in enumerate(blocks):
            if not isinstance(block, dict):
                continue
            rows = block.get("search-space")
            if not isinstance(rows, list):
                continue
            for r_index, row in enumerate(rows):
                if isinstance(row, dict):
                    span = rows.item_span(r_index) if isinstance(rows, PosSeq) else (0, 0, 0, 0)
                    yield scenario, s_index, block, r_index, row, span


def expand_config(entry: ConfigEntry, repo: RepoData) -> list[Job]:
    data = entry.data
    if not isinstance(data, PosMap):
        return []
    runner = data.get("runner")
    runner = runner if isinstance(runner, str) else ""
    prefix = str(data.get("model-prefix", ""))
    multinode = data.get("multinode") is True
    top = {
        "image": data.get("image"),
        "model": data.get("model"),
        "model-prefix": prefix,
        "precision": data.get("precision"),
        "framework": data.get("framework"),
        "runner": runner,
    }
    hardware = repo.hardware.get(runner) if runner else None
    jobs: list[Job] = []
    for scenario, s_index, block, r_index, row, span in _scenario_rows(data):
        concs = conc_values(row)
        if not concs:
            continue
        isl = block.get("isl") if scenario == FIXED else None
        osl = block.get("osl") if scenario == FIXED else None
        common = dict(top)
        if scenario == FIXED:
            common["isl"], common["osl"] = isl, osl
            common["max-model-len"] = (isl + osl + 256) if _is_int(isl) and _is_int(osl) else None
        common["exp-name"] = exp_name(prefix, isl if _is_int(isl) else None, osl if _is_int(osl) else None)
        common["spec-decoding"] = row.get("spec-decoding", "none")
        common["disagg"] = bool(data.get("disagg", False))
        common["multinode"] = multinode
        if scenario == AGENTIC:
            common["kv-offloading"] = row.get("kv-offloading", "none")
            backend = row.get("kv-offload-backend")
            common["kv-offload-backend"] = dict(backend) if isinstance(backend, dict) else None
            common["duration"] = AGENTIC_DURATION
        router = row.get("router", data.get("router"))
        if isinstance(router, dict):
            common["router"] = {"name": router.get("name"), "version": router.get("version")}
        kv = row.get("kv-p2p-transfer", data.get("kv-p2p-transfer"))
        if kv is not None:
            common["kv-p2p-transfer"] = kv
        loc = entry.file.loc(span)
        if multinode:
            prefill, decode = row.get("prefill"), row.get("decode")
            if not isinstance(prefill, dict) or not isinstance(decode, dict):
                continue
            fields = dict(common, **{"conc-list": concs, "prefill": _worker(prefill), "decode": _worker(decode)})
            jobs.append(Job(entry.key, scenario, fields, loc, s_index, r_index))
            continue
        tp, pp, pcp = row.get("tp"), row.get("pp", 1), row.get("pcp-size", 1)
        par = {
            "tp": tp,
            "pp": pp,
            "dcp-size": row.get("dcp-size", 1),
            "pcp-size": pcp,
            "ep": row.get("ep", 1),
            "dp-attn": bool(row.get("dp-attn", False)),
        }
        gpus = tp * pp * pcp if all(_is_int(v) for v in (tp, pp, pcp)) else None
        if scenario == AGENTIC:
            util = block.get("dram-utilization")
            dram = None
            if (isinstance(hardware, dict) and gpus and isinstance(util, (int, float))
                    and _is_int(hardware.get("available-cpu-dram-mib")) and _is_int(hardware.get("gpus-per-node"))):
                dram = total_cpu_dram_gb(hardware["available-cpu-dram-mib"], float(util), gpus, hardware["gpus-per-node"])
            par["total-cpu-dram-gb"] = dram
        for conc in concs:
            fields = dict(common, **par, conc=conc)
            jobs.append(Job(entry.key, scenario, fields, loc, s_index, r_index))
    return jobs


def expand(repo: RepoData, keys: Iterable[str] | None = None) -> list[Job]:
    """Jobs of the given config keys (all when None), in file order."""
    wanted = None if keys is None else set(keys)
    jobs: list[Job] = []
    for key, entry in repo.configs.items():
        if wanted is None or key in wanted:
            jobs.extend(expand_config(entry, repo))
    return jobs


def match_key_glob(pattern: str, key: str) -> bool:
    """Changelog config-key globs: ``*`` is the only wildcard, whole-key match."""
    parts = pattern.split("*")
    if len(parts) == 1:
        return pattern == key
    if not key.startswith(parts[0]) or not key.endswith(parts[-1]) or len(key) < len(parts[0]) + len(parts[-1]):
        return False
    pos = len(parts[0])
    limit = len(key) - len(parts[-1])
    for middle in parts[1:-1]:
        found = key.find(middle, pos, limit)
        if found < 0:
            return False
        pos = found + len(middle)
    return True


def keys_matching(patterns: Iterable[str], keys: Iterable[str]) -> list[str]:
    pats = list(patterns)
    return [k for k in keys if any(match_key_glob(p, k) for p in pats)]
