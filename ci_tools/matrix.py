"""Expansion of master configs into jobs: one job per generated point.

The rules are the ones the benchmark repository's own generator applies
(docs: FORMATS.md, "Matrix expansion"): a ``conc-start``..``conc-end`` range
doubles from the start and clamps its last value to the end, ``conc-list`` is
taken verbatim, omitted fields take their defaults.

- A single-node row gives one job per concurrency.
- A multinode fixed-seq-len row gives one job carrying its whole concurrency
  list, as multinode recipes receive ``CONC_LIST`` and sweep it in one
  allocation.
- A multinode agentic row gives one job per concurrency (``CONC_LIST`` of one
  value): an agentic run replays traces for a fixed duration, so one server
  allocation runs exactly one concurrency, as the public generator does.

Expansion is defensive: a malformed row (which the schema rules report) is
skipped rather than crashing the expansion of everything else.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import Any, Iterable, Iterator, Mapping, TypeGuard

from .findings import Location
from .model.repository import ConfigEntry, RepoData
from .yamlpos import PosSeq, Span

FIXED = "fixed-seq-len"
AGENTIC = "agentic-coding"
SCENARIOS = (FIXED, AGENTIC)
AGENTIC_DURATION = 3600
# Upper bound on the CPU DRAM a job may offload into, in MiB (FORMATS.md).
DRAM_CAP_MIB = 2_861_022
# Head room the generator adds to isl + osl for the server's context length.
MAX_MODEL_LEN_MARGIN = 256
DEFAULT_PORT = "8888"
# Short names of the sequence-length pairs, used in exp-name.
SEQ_LEN_NAMES = {(1024, 1024): "1k1k", (8192, 1024): "8k1k", (1024, 8192): "1k8k"}


def _is_int(v: Any) -> TypeGuard[int]:
    return isinstance(v, int) and not isinstance(v, bool)


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
    out.append(int(end))  # the last doubling is clamped to conc-end
    return out


def seq_len_name(isl: int, osl: int) -> str:
    return SEQ_LEN_NAMES.get((isl, osl), f"{isl}_{osl}")


def exp_name(model_prefix: str, isl: int | None, osl: int | None) -> str:
    """exp-name of a fixed-seq-len job: ``<model-prefix>_<1k1k|8k1k|<isl>_<osl>>``."""
    if isl is None or osl is None:
        return f"{model_prefix}_agentic"
    return f"{model_prefix}_{seq_len_name(isl, osl)}"


def _agentic_suffix(kv_offloading: Any, backend: Any, spec: Any) -> str:
    out = ""
    if kv_offloading == "dram" and isinstance(backend, Mapping) and backend.get("name"):
        out += f"_kvdram-{backend['name']}"
    if spec not in (None, "none"):
        out += f"_spec-{spec}"
    return out


def agentic_exp_name(model_prefix: str, tp: Any, conc: int, kv_offloading: Any, backend: Any, spec: Any) -> str:
    """exp-name of a single-node agentic job, in the public generator's shape:
    ``dsv4_tp8_conc32_kvdram-hicache_spec-mtp`` (suffixes only when they apply)."""
    return f"{model_prefix}_tp{tp}_conc{conc}{_agentic_suffix(kv_offloading, backend, spec)}"


def _worker_tag(block: Mapping[str, Any]) -> str:
    ep = block.get("ep", 1)
    return f"{block.get('num-worker', 1)}x{block.get('tp', 1)}" + (f"ep{ep}" if ep != 1 else "")


def multinode_agentic_exp_name(model_prefix: str, prefill: Mapping[str, Any], decode: Mapping[str, Any], conc: int,
                               kv_offloading: Any, backend: Any, spec: Any) -> str:
    """``dsv4_p1x8_d1x8_conc16_kvdram-hicache``: workers x tp (ep when not 1) per role."""
    return (f"{model_prefix}_p{_worker_tag(prefill)}_d{_worker_tag(decode)}_conc{conc}"
            f"{_agentic_suffix(kv_offloading, backend, spec)}")


def gpu_name(runner_label: str) -> str:
    """Hardware name of a runner label: ``cluster:mi355x-amds`` -> ``mi355x``."""
    label = runner_label.removeprefix("cluster:")
    return label.split("-", 1)[0].split("_", 1)[0]


def total_cpu_dram_gb(available_mib: int, dram_utilization: float, gpus_used: int, gpus_per_node: int) -> int:
    """floor(min(available, cap) MiB x 2^20 x utilization x gpus_used / gpus_per_node / 10^9)."""
    mib = min(available_mib, DRAM_CAP_MIB)
    return math.floor(mib * 2**20 * dram_utilization * gpus_used / gpus_per_node / 10**9)


def gpus_of(block: Mapping[str, Any]) -> int | None:
    """GPUs one server (or worker) uses: tp x pp x pcp-size (dcp shares the tp GPUs)."""
    tp, pp, pcp = block.get("tp"), block.get("pp", 1), block.get("pcp-size", 1)
    if _is_int(tp) and _is_int(pp) and _is_int(pcp):
        return tp * pp * pcp
    return None


def _dram_budget(hardware: Any, utilization: Any, gpus: int | None) -> int | None:
    if not (isinstance(hardware, Mapping) and gpus and isinstance(utilization, (int, float))
            and not isinstance(utilization, bool) and math.isfinite(utilization)):
        return None  # .nan / .inf utilization: the schema reports it; no budget can be computed
    available, per_node = hardware.get("available-cpu-dram-mib"), hardware.get("gpus-per-node")
    if not (_is_int(available) and _is_int(per_node)) or per_node <= 0:
        return None
    # A worker spanning several nodes offloads into each node's share, at most a whole node.
    return total_cpu_dram_gb(available, float(utilization), min(gpus, per_node), per_node)


def _flag(value: Any) -> Any:
    """A boolean field: the default when absent, the raw value when it is not a bool (schema rules report it)."""
    return False if value is None else value


@lru_cache(maxsize=4096)
def _quoted(text: str) -> str:
    """JSON string literal; config keys and scenarios repeat across jobs, so quote each once."""
    return json.dumps(text)


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

    @property
    def concs(self) -> list[int]:
        """Every concurrency the job runs (one for single-node jobs)."""
        if self.multinode:
            return [c for c in self.fields.get("conc-list", []) if isinstance(c, int)]
        return [self.conc] if self.conc is not None else []

    def get(self, name: str, default: Any = None) -> Any:
        return self.fields.get(name, default)

    @cached_property
    def _fields_json(self) -> str:
        return json.dumps(self.fields, sort_keys=True, separators=(",", ":"), default=str)

    @cached_property
    def id(self) -> str:
        """Stable id: a hash of the config key, the scenario and every field the recipe receives.

        Source positions are left out on purpose, so that moving or commenting
        a config does not change its jobs' ids, while any change of a value does.
        """
        blob = f"{self.config_key}\0{self.scenario}\0{self._fields_json}"
        return hashlib.sha256(blob.encode()).hexdigest()[:16]

    def json_text(self) -> str:
        """The matrix entry as compact JSON (same content as :meth:`to_json`, fields sorted by name)."""
        head = f'{{"id":"{self.id}","config-key":{_quoted(self.config_key)},"scenario-type":{_quoted(self.scenario)}'
        body = self._fields_json
        return f"{head}}}" if body == "{}" else f"{head},{body[1:]}"

    def label(self) -> str:
        f = self.fields
        if self.multinode:
            p, d = f.get("prefill", {}), f.get("decode", {})
            return (f"{self.config_key} {self.scenario} P{p.get('num-worker')}xTP{p.get('tp')}/EP{p.get('ep')} "
                    f"D{d.get('num-worker')}xTP{d.get('tp')}/EP{d.get('ep')} conc={f.get('conc-list')}")
        par = f"TP{f.get('tp')}/EP{f.get('ep')}" + ("/DPA" if f.get("dp-attn") is True else "")
        seq = "" if self.scenario == AGENTIC else f" {f.get('isl')}/{f.get('osl')}"
        return f"{self.config_key} {self.scenario}{seq} {par} c{f.get('conc')}"

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "config-key": self.config_key, "scenario-type": self.scenario, **self.fields}

    def with_fields(self, **changes: Any) -> Job:
        """The same point with some fields replaced (a new id follows from the new values)."""
        return Job(self.config_key, self.scenario, {**self.fields, **changes}, self.row,
                   self.scenario_index, self.row_index)


def _plain(value: Any) -> Any:
    """Plain dict/list copies of YAML containers, so jobs never alias the loaded data."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _worker(block: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "num-worker": block.get("num-worker", 1),
        "tp": block.get("tp", 1),
        "ep": block.get("ep", 1),
        "dp-attn": _flag(block.get("dp-attn")),
        "pp": block.get("pp", 1),
        "dcp-size": block.get("dcp-size", 1),
        "pcp-size": block.get("pcp-size", 1),
        "hardware": _plain(block.get("hardware")),
        "additional-settings": [str(s) for s in _list(block.get("additional-settings"))],
    }


def _scenario_rows(data: Mapping[str, Any]) -> Iterator[tuple[str, int, Mapping[str, Any], int, Mapping[str, Any], Span]]:
    """(scenario, block index, block, row index, row, row span) in file order."""
    scenarios = data.get("scenarios")
    if not isinstance(scenarios, dict):
        return
    for scenario, blocks in scenarios.items():
        if scenario not in SCENARIOS or not isinstance(blocks, list):
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
    """Jobs of one master config, in the order its rows are written."""
    data = entry.data
    if not isinstance(data, dict):
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
        agentic = scenario == AGENTIC
        spec = row.get("spec-decoding", "none")
        common = dict(top)
        if not agentic:
            isl, osl = block.get("isl"), block.get("osl")
            common["isl"], common["osl"] = isl, osl
            if _is_int(isl) and _is_int(osl):
                common["max-model-len"] = isl + osl + MAX_MODEL_LEN_MARGIN
                common["exp-name"] = exp_name(prefix, isl, osl)
            else:
                common["max-model-len"] = None
                common["exp-name"] = exp_name(prefix, None, None)
        common["spec-decoding"] = spec
        common["disagg"] = _flag(data.get("disagg"))
        common["multinode"] = multinode
        backend = row.get("kv-offload-backend")
        if agentic:
            common["kv-offloading"] = row.get("kv-offloading", "none")
            common["kv-offload-backend"] = _plain(backend) if isinstance(backend, dict) else None
            common["duration"] = AGENTIC_DURATION
        router = row.get("router", data.get("router"))
        if isinstance(router, dict):
            common["router"] = {"name": router.get("name"), "version": router.get("version")}
        kv = row.get("kv-p2p-transfer", data.get("kv-p2p-transfer"))
        if kv is not None:
            common["kv-p2p-transfer"] = kv
        loc = entry.file.loc(span)
        utilization = block.get("dram-utilization")
        if multinode:
            prefill, decode = row.get("prefill"), row.get("decode")
            if not isinstance(prefill, dict) or not isinstance(decode, dict):
                continue
            workers = {"prefill": _worker(prefill), "decode": _worker(decode)}
            if not agentic:
                jobs.append(Job(entry.key, scenario, dict(common, **workers, **{"conc-list": concs}), loc, s_index, r_index))
                continue
            # Only the prefill workers offload KV today, so the budget follows their footprint.
            dram = _dram_budget(hardware, utilization, gpus_of(prefill))
            for conc in concs:
                name = multinode_agentic_exp_name(prefix, prefill, decode, conc, common["kv-offloading"], backend, spec)
                fields = dict(common, **workers, **{"conc-list": [conc], "exp-name": name, "total-cpu-dram-gb": dram})
                jobs.append(Job(entry.key, scenario, fields, loc, s_index, r_index))
            continue
        tp = row.get("tp")
        par = {
            "tp": tp,
            "pp": row.get("pp", 1),
            "dcp-size": row.get("dcp-size", 1),
            "pcp-size": row.get("pcp-size", 1),
            "ep": row.get("ep", 1),
            "dp-attn": _flag(row.get("dp-attn")),
        }
        if agentic:
            par["total-cpu-dram-gb"] = _dram_budget(hardware, utilization, gpus_of(row))
        for conc in concs:
            fields = dict(common, **par, conc=conc)
            if agentic:
                fields["exp-name"] = agentic_exp_name(prefix, tp, conc, common["kv-offloading"], backend, spec)
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
