"""Expansion of master configs into jobs: InferenceX's matrix, entry for entry.

The authority is the benchmark repository's own generator
(``utils/matrix_logic/generate_sweep_configs.py full-sweep``): every job it
emits, in its order, with its fields, their names, their values and their
key order.  Per config, the ``fixed-seq-len`` blocks come first, then the
``agentic-coding`` blocks; within a block, rows in file order.

- A single-node row gives one job per concurrency (``conc`` is an int).
- A multinode fixed-seq-len row gives one job whose ``conc`` is the whole
  list: the recipe sweeps it in one allocation (``CONC_LIST``).
- A multinode agentic row gives one job per concurrency (``conc`` is a list
  of one): an agentic run replays traces for a fixed duration, so one server
  allocation runs one concurrency.

A ``conc-start``..``conc-end`` range doubles from the start and clamps its
last value to the end; ``conc-list`` is taken verbatim.  Which jobs also run
evals (``run-eval``, ``eval-conc``) is decided over the whole set of jobs, in
:mod:`ci_tools.jobs.evals`.

Besides InferenceX's fields a job knows its config key, its scenario and the
row it came from (attributes, not fields); its JSON adds ``id`` and
``config-key``.  Expansion is defensive: a malformed row (which the schema
rules report) is skipped or keeps its raw values, where the generator would
stop with a traceback.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Iterator, Mapping, TypeGuard

from ..findings import Location
from ..model.repository import ConfigEntry, RepoData
from ..revision.yamlpos import PosSeq
from .evals import eval_marks
from .job import AGENTIC, FIXED, Job

AGENTIC_DURATION = 3600
# Upper bound on the CPU DRAM an agentic job may offload into, in MiB, before utilization.
DRAM_CAP_MIB = 2_861_022
BYTES_PER_MIB = 1024 * 1024
BYTES_PER_GB = 1_000_000_000
# Head room the generator adds to isl + osl for the server's context length.
MAX_MODEL_LEN_MARGIN = 256
# Short names of the sequence-length pairs, used in exp-name and in the workflow's buckets.
SEQ_LEN_NAMES = {(1024, 1024): "1k1k", (8192, 1024): "8k1k"}
# Optional metadata a row inherits from its config when it does not set it.
COMPONENT_FIELDS = ("router", "kv-p2p-transfer")


def _is_int(v: Any) -> TypeGuard[int]:
    return isinstance(v, int) and not isinstance(v, bool)


def conc_values(row: Mapping[str, Any]) -> list[int]:
    """Concurrencies a row generates; empty when the row is malformed."""
    values = row.get("conc-list")
    if values:
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


def seq_len_name(isl: Any, osl: Any) -> str:
    """``1k1k``, ``8k1k`` or ``<isl>_<osl>``."""
    if _is_int(isl) and _is_int(osl):
        return SEQ_LEN_NAMES.get((isl, osl), f"{isl}_{osl}")
    return f"{isl}_{osl}"  # malformed: the schema rules report it


def offload_suffix(kv_offloading: Any, backend: Any) -> str:
    """``kvnone`` or ``kv<mode>-<backend name>``."""
    if kv_offloading == "none":
        return "kvnone"
    # A name alone is the layout before the backend became a mapping (still read on earlier revisions).
    name = backend.get("name") if isinstance(backend, Mapping) else backend if isinstance(backend, str) else None
    return f"kv{kv_offloading}-{name}"


def agentic_exp_name(model_prefix: Any, tp: Any, conc: int, kv_offloading: Any, backend: Any, spec: Any) -> str:
    """``qwen3.5_tp2_conc1_kvnone_spec-mtp``: the spec suffix only when speculative decoding is on."""
    spec_part = f"_spec-{spec}" if spec != "none" else ""
    return f"{model_prefix}_tp{tp}_conc{conc}_{offload_suffix(kv_offloading, backend)}{spec_part}"


def _worker_tag(worker: Mapping[str, Any], role: str) -> str:
    ep = worker.get("ep", 1)
    tag = f"{role}{worker.get('num-worker')}x{worker.get('tp')}"
    if ep != 1:
        tag += f"ep{ep}"
    if worker.get("dp-attn", False):
        tag += "dpa"
    return tag


def multinode_agentic_exp_name(model_prefix: Any, prefill: Mapping[str, Any], decode: Mapping[str, Any],
                               concs: list[int], kv_offloading: Any, backend: Any) -> str:
    """``dsv4_p1x8_d1x8ep8dpa_conc64_kvdram-hicache``: topology per role, a suffix only when offloading."""
    suffix = f"_{offload_suffix(kv_offloading, backend)}" if kv_offloading != "none" else ""
    return (f"{model_prefix}_{_worker_tag(prefill, 'p')}_{_worker_tag(decode, 'd')}"
            f"_conc{'x'.join(str(c) for c in concs)}{suffix}")


def gpu_name(runner_label: str) -> str:
    """Hardware name of a runner label: ``cluster:mi355x-amds`` -> ``mi355x``."""
    label = runner_label.removeprefix("cluster:")
    return label.split("-", 1)[0].split("_", 1)[0]


def gpus_of(block: Mapping[str, Any]) -> int | None:
    """GPUs one server (or worker) uses: tp x pp x pcp-size (dcp shares the tp GPUs)."""
    tp, pp, pcp = block.get("tp"), block.get("pp", 1), block.get("pcp-size", 1)
    if _is_int(tp) and _is_int(pp) and _is_int(pcp):
        return tp * pp * pcp
    return None


def _gpus_on_one_node(row: Mapping[str, Any], per_node: int) -> int | None:
    """GPUs of the offloading server on one node; None for a topology the generator rejects.

    Single-node: the server's GPUs, which must fit the node.  Multinode: only
    the prefill workers offload KV; a worker spanning nodes fills each of them
    (a whole multiple of the node), one within a node must divide it evenly.
    """
    prefill = row.get("prefill")
    if "prefill" in row:
        gpus = gpus_of(prefill) if isinstance(prefill, Mapping) else None
        if gpus is None or gpus <= 0:
            return None
        if gpus > per_node:
            return per_node if gpus % per_node == 0 else None
        return gpus if per_node % gpus == 0 else None
    gpus = gpus_of(row)
    return gpus if gpus is not None and gpus <= per_node else None


def dram_offload_gb(row: Mapping[str, Any], kv_offloading: Any, utilization: Any,
                    hardware: Any) -> int | None:
    """``total-cpu-dram-gb``: 0 unless the row offloads to DRAM, else the node's capped DRAM share.

    int(min(available, cap) MiB x 2^20 x utilization x gpus / gpus-per-node / 10^9), in
    decimal arithmetic on the utilization as written, as the generator computes it.
    None when the inputs are missing or malformed (the config rules report them).
    """
    if kv_offloading != "dram":
        return 0
    if not isinstance(hardware, Mapping) or isinstance(utilization, bool) or not isinstance(utilization, (int, float)):
        return None
    available, per_node = hardware.get("available-cpu-dram-mib"), hardware.get("gpus-per-node")
    if not (_is_int(available) and _is_int(per_node)) or per_node <= 0:
        return None
    gpus = _gpus_on_one_node(row, per_node)
    if gpus is None:
        return None
    from decimal import (  # here: only DRAM-offloading rows need it
        Decimal,
        InvalidOperation,
    )

    try:
        share = Decimal(min(available, DRAM_CAP_MIB)) * BYTES_PER_MIB * Decimal(str(utilization)) * gpus / per_node
        return int(share / BYTES_PER_GB)
    except (InvalidOperation, ValueError, OverflowError):
        return None  # .nan / .inf utilization: the schema reports it


def _plain(value: Any) -> Any:
    """Plain dict/list copies of YAML containers, so jobs never alias the loaded data."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _worker(block: Mapping[str, Any]) -> dict[str, Any]:
    """A worker as written, with pp, dcp-size and pcp-size made explicit (defaults 1)."""
    out = {k: _plain(v) for k, v in block.items()}
    for name in ("pp", "dcp-size", "pcp-size"):
        out[name] = out.get(name, 1)
    return out


def _component_metadata(row: Mapping[str, Any], config: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in COMPONENT_FIELDS:
        value = row[name] if name in row else config.get(name)
        if value is not None:
            out[name] = _plain(value)
    return out


def _blocks(scenarios: Mapping[str, Any], scenario: str) -> Iterator[tuple[int, Mapping[str, Any]]]:
    blocks = scenarios.get(scenario)
    if isinstance(blocks, list):
        for index, block in enumerate(blocks):
            if isinstance(block, dict):
                yield index, block


def _rows(entry: ConfigEntry, block: Mapping[str, Any]) -> Iterator[tuple[int, Mapping[str, Any], list[int], Location]]:
    """(index, row, concurrencies, location) of the rows of a block that generate anything."""
    rows = block.get("search-space")
    if isinstance(rows, list):
        for index, row in enumerate(rows):
            concs = conc_values(row) if isinstance(row, dict) else []
            if concs:
                span = rows.item_span(index) if isinstance(rows, PosSeq) else (0, 0, 0, 0)
                yield index, row, concs, entry.file.loc(span)


def _workers(row: Mapping[str, Any]) -> dict[str, dict[str, Any]] | None:
    """The prefill and decode workers of a multinode row; None when either is not a mapping."""
    prefill, decode = row.get("prefill"), row.get("decode")
    if not isinstance(prefill, dict) or not isinstance(decode, dict):
        return None
    return {"prefill": _worker(prefill), "decode": _worker(decode)}


@dataclass
class _Point:
    """A generated entry before the set it belongs to has decided its eval marks."""

    config_key: str
    scenario: str
    fields: dict[str, Any]
    row: Location
    scenario_index: int
    row_index: int


def _with_evals(points: list[_Point]) -> list[Job]:
    """Jobs of the points, ``run-eval`` (and ``eval-conc``) set as the generator sets them over this set."""
    marks = eval_marks([p.fields for p in points])
    jobs: list[Job] = []
    for i, p in enumerate(points):
        p.fields["run-eval"] = i in marks
        eval_conc = marks.get(i)
        if eval_conc is not None:
            p.fields["eval-conc"] = eval_conc
        jobs.append(Job(p.config_key, p.scenario, p.fields, p.row, p.scenario_index, p.row_index))
    return jobs


def _fixed_points(entry: ConfigEntry, data: Mapping[str, Any], top: dict[str, Any], multinode: bool,
                disagg: Any, per_row: int | None = None) -> Iterator[_Point]:
    prefix = top["model-prefix"]
    for s_index, block in _blocks(data["scenarios"], FIXED):
        isl, osl = block.get("isl"), block.get("osl")
        max_len = isl + osl + MAX_MODEL_LEN_MARGIN if _is_int(isl) and _is_int(osl) else None
        name = f"{prefix}_{seq_len_name(isl, osl)}"
        for r_index, row, concs, loc in _rows(entry, block):
            spec = row.get("spec-decoding", "none")
            component = _component_metadata(row, data)
            if multinode:
                workers = _workers(row)
                if workers is None:
                    continue
                fields = {**top, "isl": isl, "osl": osl, "spec-decoding": spec, **workers, "conc": concs,
                          "max-model-len": max_len, "exp-name": name, "disagg": disagg, "run-eval": False,
                          **component}
                yield _Point(entry.key, FIXED, fields, loc, s_index, r_index)
                continue
            ep, dp_attn = row.get("ep"), row.get("dp-attn")
            par = {"tp": row.get("tp"), "pp": row.get("pp", 1), "dcp-size": row.get("dcp-size", 1),
                   "pcp-size": row.get("pcp-size", 1)}
            for conc in concs[:per_row]:
                fields = {**top, "isl": isl, "osl": osl, **par, "conc": conc, "max-model-len": max_len,
                          "ep": 1 if ep is None else ep, "dp-attn": False if dp_attn is None else dp_attn,
                          "spec-decoding": spec, "exp-name": name, "disagg": disagg, "run-eval": False, **component}
                yield _Point(entry.key, FIXED, fields, loc, s_index, r_index)


def _agentic_points(entry: ConfigEntry, data: Mapping[str, Any], top: dict[str, Any], multinode: bool,
                  disagg: Any, hardware: Any, per_row: int | None = None) -> Iterator[_Point]:
    prefix = top["model-prefix"]
    for s_index, block in _blocks(data["scenarios"], AGENTIC):
        for r_index, row, concs, loc in _rows(entry, block):
            spec = row.get("spec-decoding", "none")
            kv = row.get("kv-offloading", "none")
            backend = row.get("kv-offload-backend")
            dram = dram_offload_gb(row, kv, block.get("dram-utilization"), hardware)
            tail: dict[str, Any] = {"kv-offload-backend": _plain(backend)} if backend is not None else {}
            tail.update(_component_metadata(row, data))
            if multinode:
                workers = _workers(row)
                if workers is None:
                    continue
                for conc in concs[:per_row]:
                    name = multinode_agentic_exp_name(prefix, workers["prefill"], workers["decode"], [conc], kv,
                                                      backend)
                    fields = {**top, "spec-decoding": spec, **workers, "conc": [conc], "kv-offloading": kv,
                              "total-cpu-dram-gb": dram, "duration": AGENTIC_DURATION, "exp-name": name,
                              "disagg": disagg, "scenario-type": AGENTIC, **tail}
                    yield _Point(entry.key, AGENTIC, fields, loc, s_index, r_index)
                continue
            tp, ep, dp_attn = row.get("tp"), row.get("ep"), row.get("dp-attn")
            par = {"tp": tp, "pp": row.get("pp", 1), "dcp-size": row.get("dcp-size", 1),
                   "pcp-size": row.get("pcp-size", 1), "ep": 1 if ep is None else ep,
                   "dp-attn": False if dp_attn is None else dp_attn, "spec-decoding": spec}
            for conc in concs[:per_row]:
                fields = {**top, **par, "conc": conc, "kv-offloading": kv, "total-cpu-dram-gb": dram,
                          "duration": AGENTIC_DURATION,
                          "exp-name": agentic_exp_name(prefix, tp, conc, kv, backend, spec),
                          "scenario-type": AGENTIC, **tail}
                yield _Point(entry.key, AGENTIC, fields, loc, s_index, r_index)


def expand_config(entry: ConfigEntry, repo: RepoData, *, checked: bool = True) -> list[Job]:
    """Jobs of one master config: its fixed-seq-len blocks, then its agentic ones, rows in file order;
    evals marked over them (``checked``: none when the config fails its schema)."""
    return _with_evals(_points(entry, repo, checked=checked))


def row_jobs(entry: ConfigEntry, repo: RepoData) -> list[Job]:
    """The first job of each row of a config that generates any, without eval marks (``run-eval`` false).

    What a row runs (its recipe, its workers, its settings) is the same at
    every concurrency, so rules about it need one job per row, not the
    config's whole expansion.
    """
    return [Job(p.config_key, p.scenario, p.fields, p.row, p.scenario_index, p.row_index)
            for p in _points(entry, repo, per_row=1, checked=False)]


def _points(entry: ConfigEntry, repo: RepoData, per_row: int | None = None, checked: bool = True) -> list[_Point]:
    """Every point of a config (``per_row``: at most that many concurrencies of each row).

    ``checked``: none of a config that fails its schema (`tp: "x"`, `conc-start: [1]`), whose jobs would be
    built from values of the wrong type; the commands that build jobs report it (``validate``'s rules, which
    read a config's rows whatever its schema says, pass False)."""
    data = entry.data
    if not isinstance(data, dict) or not isinstance(data.get("scenarios"), dict):
        return []
    if checked and not entry.readable:
        return []
    runner = data.get("runner")
    top = {"image": data.get("image"), "model": data.get("model"), "model-prefix": data.get("model-prefix"),
           "precision": data.get("precision"), "framework": data.get("framework"), "runner": runner}
    multinode = bool(data.get("multinode", False))
    disagg = data.get("disagg", False)
    hardware = repo.hardware.get(runner) if isinstance(runner, str) else None
    return [*_fixed_points(entry, data, top, multinode, disagg, per_row),
            *_agentic_points(entry, data, top, multinode, disagg, hardware, per_row)]


def expand(repo: RepoData, keys: Iterable[str] | None = None) -> list[Job]:
    """Jobs of the given config keys (all when None), in file order, evals marked over them.

    ``expand(repo)`` is the generator's full sweep; with keys, its test-config
    of those keys (eval selection among the jobs of those keys only).
    """
    wanted = None if keys is None else set(keys)
    points: list[_Point] = []
    for key, entry in repo.configs.items():
        if wanted is None or key in wanted:
            points.extend(_points(entry, repo))
    return _with_evals(points)


def count_jobs(repo: RepoData) -> int:
    """``len(expand(repo))``, without marking evals or making jobs."""
    return sum(len(_points(entry, repo)) for entry in repo.configs.values())
