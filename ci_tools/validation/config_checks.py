"""Cross-field and cross-file rules of master configs.

The schema guarantees shapes; these rules need two values at once (tp and
dcp-size), another file (runners.yaml, the recipe scripts) or the whole set of
master files.  Each check reads values defensively and stays silent on a value
of the wrong type: that is the schema's finding, and reporting it twice would
only bury it.
"""

from __future__ import annotations

import dataclasses
import difflib
import posixpath
import re
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Iterator

from ..config.resolution_rules import SRT_SLURM
from ..findings import Finding, Location, Rule, make_finding
from ..jobs.contract import RecipeResolution, resolve_recipe
from ..jobs.job import AGENTIC, FIXED, Job
from ..jobs.matrix import gpus_of, row_jobs
from ..jobs.resolution import fleets_of
from ..model.repository import ConfigEntry, LoadedFile, RepoData
from ..revision.yamlpos import PosMap, PosSeq, Span
from ..schemacheck.check import is_integer
from . import rules as R

# `registry/name:tag`, `name:tag` or a digest: what an image reference looks like.
_IMAGE_REF = re.compile(r"/|@sha256:|^[A-Za-z0-9._-]+:[A-Za-z0-9._-]+$")


@dataclass(frozen=True)
class Row:
    """One search-space row with the block and scenario it belongs to."""

    scenario: str
    block: PosMap
    block_span: Span
    row: PosMap
    span: Span


def _rows(data: PosMap) -> Iterator[Row]:
    scenarios = data.get("scenarios")
    if not isinstance(scenarios, PosMap):
        return
    for scenario in (FIXED, AGENTIC):
        blocks = scenarios.get(scenario)
        if not isinstance(blocks, PosSeq):
            continue
        for b_index, block in enumerate(blocks):
            if not isinstance(block, PosMap):
                continue
            rows = block.get("search-space")
            if not isinstance(rows, PosSeq):
                continue
            for r_index, row in enumerate(rows):
                if isinstance(row, PosMap):
                    yield Row(scenario, block, blocks.item_span(b_index), row, rows.item_span(r_index))


def _int(mapping: PosMap, key: str, default: int | None = None) -> int | None:
    value = mapping.get(key, default)
    return value if is_integer(value) else None


def _gpus_per_node(repo: RepoData, name: Any) -> int | None:
    """gpus-per-node of a hardware key; for a label without facts, of its fleets' ``cluster:<fleet>`` entries
    when they agree (`gb200` runs on gb200-nv nodes, described under `cluster:gb200-nv`)."""
    if not isinstance(name, str):
        return None
    if name in repo.hardware:
        return _facts_gpus(repo.hardware[name])
    if name not in repo.runner_labels:
        return None
    found = {_facts_gpus(repo.hardware.get(f"cluster:{fleet}")) for fleet in fleets_of(name, repo.runner_labels)}
    return found.pop() if len(found) == 1 else None


def _facts_gpus(facts: Any) -> int | None:
    value = facts.get("gpus-per-node") if isinstance(facts, dict) else None
    return value if isinstance(value, int) and is_integer(value) and value > 0 else None


@dataclass(frozen=True)
class WorkerShape:
    """The GPUs one worker (or single-node server) spans, as the engines lay it out.

    tp x pp x pcp-size GPUs form the tensor-parallel group.  Expert
    parallelism inside it needs ``ep`` to divide it.  A multinode worker with
    data-parallel attention (``dp-attn: true``, DEP) runs ep / (tp x pp x
    pcp-size) data-parallel ranks, so it spans ``ep`` GPUs: vLLM's
    `tp: 1, ep: 8` (eight DP ranks of one GPU), `tp: 4, ep: 16` (TP4 x DP4),
    `tp: 16, ep: 32` (TP16 x DP2), as InferenceX's configs and srt-slurm
    recipes run them.  A single-node job is given tp x pp x pcp-size GPUs
    (GPU_COUNT), so there `ep` never exceeds them.
    """

    group: int  # tp x pp x pcp-size
    ep: int
    data_parallel: bool  # the worker spans ep GPUs (DEP)

    @property
    def gpus(self) -> int:
        return self.ep if self.data_parallel else self.group

    def ep_problem(self, *, multinode: bool, dp_attn: bool, where: str = "") -> str | None:
        group, ep = self.group, self.ep
        if ep <= group:
            if group % ep:
                return (f"`ep` {ep}{where} does not divide the {group} GPU(s) of the tensor-parallel group "
                        "(tp x pp x pcp-size); expected a divisor such as 1 or the tp size")
            return None
        if not multinode:
            return (f"`ep` {ep} is larger than the {group} GPU(s) a single-node job is given (GPU_COUNT = "
                    "tp x pp x pcp-size); expected at most that many, usually 1 (TP) or the tp size (TEP/DEP)")
        if not dp_attn:
            return (f"`ep` {ep}{where} is larger than the {group} GPU(s) of the tensor-parallel group "
                    "(tp x pp x pcp-size) without `dp-attn: true`; experts spread beyond the TP group only with "
                    "data-parallel attention (DEP), where the worker spans ep GPUs")
        if ep % group:
            return (f"`ep` {ep}{where} is not a multiple of tp x pp x pcp-size {group}; with `dp-attn: true` the "
                    "worker runs ep / tp data-parallel ranks of tp GPUs each")
        return None


def worker_shape(holder: PosMap, *, multinode: bool) -> WorkerShape | None:
    group = gpus_of(holder)
    ep = _int(holder, "ep", 1)
    if group is None or ep is None or ep < 1:
        return None
    dep = multinode and holder.get("dp-attn") is True and ep > group and ep % group == 0
    return WorkerShape(group, ep, dep)


class _Shared:
    """What every config's checks share: the file list (read only if a recipe
    has to be looked up), node sizes and the label suggestions already computed."""

    def __init__(self, repo: RepoData) -> None:
        self.repo = repo
        self._close: dict[str, list[str]] = {}
        self._gpus: dict[str, int | None] = {}

    @cached_property
    def paths(self) -> frozenset[str]:
        return frozenset(self.repo.snapshot.files())

    def gpus_per_node(self, name: Any) -> int | None:
        if not isinstance(name, str):
            return None
        if name not in self._gpus:
            self._gpus[name] = _gpus_per_node(self.repo, name)
        return self._gpus[name]

    def close_labels(self, runner: str) -> list[str]:
        """Defined labels similar to ``runner`` (an undefined label tends to repeat)."""
        if runner not in self._close:
            labels = [str(k) for k in self.repo.runner_labels]
            self._close[runner] = difflib.get_close_matches(runner, labels, n=3, cutoff=0.6)
        return self._close[runner]


class _Checker:
    """The rules for one config entry; ``out`` collects the findings."""

    def __init__(self, entry: ConfigEntry, repo: RepoData, files: _Shared) -> None:
        self.entry = entry
        self.repo = repo
        self.files = files
        self.file: LoadedFile = entry.file
        self.data: PosMap = entry.data
        self.key = entry.key
        self.out: list[Finding] = []

    def loc(self, span: Span, note: str = "") -> Location:
        return self.file.loc(span, note)

    def add(self, rule: Rule, message: str, span: Span, *, related: tuple[Location, ...] = (),
            **data: Any) -> None:
        self.out.append(make_finding(rule, message, self.loc(span), related=related,
                                     data={"config_key": self.key, **data}))

    def run(self) -> list[Finding]:
        data = self.data
        multinode = data.get("multinode")
        self.top_level(multinode)
        for row in _rows(data):
            self.row(row, multinode)
        self.recipes()
        return self.out

    # -- top-level fields ------------------------------------------------------

    def top_level(self, multinode: Any) -> None:
        data, key = self.data, self.key
        prefix = data.get("model-prefix")
        if isinstance(prefix, str) and "_" in prefix:
            self.add(R.MODEL_PREFIX_UNDERSCORE,
                     f"model-prefix `{prefix}` contains `_`; recipe file names are split on `_`, "
                     f"so use `-` or nothing instead (e.g. `{prefix.replace('_', '-')}`)",
                     data.value_span("model-prefix"), model_prefix=prefix)
        runner = data.get("runner")
        if isinstance(runner, str) and runner:
            self.runner(runner)
        if data.get("disagg") is True and multinode is False:
            self.add(R.DISAGG_REQUIRES_MULTINODE,
                     f"`disagg: true` in single-node config `{key}`; disaggregated prefill/decode needs "
                     "`multinode: true` with prefill and decode blocks",
                     data.value_span("disagg"))
        if multinode is False and "kv-p2p-transfer" in data:
            self.add(R.KV_TRANSFER_SINGLE_NODE,
                     f"`kv-p2p-transfer` in single-node config `{key}`; it only applies to multinode "
                     "disaggregated configs",
                     data.key_span("kv-p2p-transfer"))
        if multinode is True and data.get("disagg") is True and "kv-p2p-transfer" not in data:
            all_rows = list(_rows(data))
            rows = [r for r in all_rows if "kv-p2p-transfer" not in r.row]
            if len(rows) > 1 and len(rows) == len(all_rows):
                # No row names it either: one line at top level is the fix, not one a row (InferenceX pull
                # request 2114 added a config of 16 rows without it: 16 errors).
                self.add(R.DISAGG_KV_TRANSFER_MISSING,
                         f"disaggregated config `{key}` names no `kv-p2p-transfer` at top level or in any of its "
                         f"{len(rows)} search-space rows; expected the KV transfer backend at top level (e.g. "
                         "`kv-p2p-transfer: mori`)",
                         data.key_span("disagg"), related=tuple(self.loc(r.span, "a row without it") for r in rows[:5]))
                rows = []
            for r in rows:
                self.add(R.DISAGG_KV_TRANSFER_MISSING,
                         f"disaggregated config `{key}` names no `kv-p2p-transfer` at top level or in this "
                         "search-space row; expected the KV transfer backend (e.g. `kv-p2p-transfer: mori`)",
                         r.span, related=(self.loc(data.key_span("disagg"), "disagg: true"),))
            if not all_rows:
                self.add(R.DISAGG_KV_TRANSFER_MISSING,
                         f"disaggregated config `{key}` names no `kv-p2p-transfer`; expected the KV transfer "
                         "backend at top level (e.g. `kv-p2p-transfer: mori`)",
                         data.key_span("disagg"))
        self.router(data)

    def runner(self, runner: str) -> None:
        runners = self.repo.runners
        labels = self.repo.runner_labels
        scenarios = self.data.get("scenarios")
        if isinstance(scenarios, dict) and AGENTIC in scenarios and not runner.startswith("cluster:"):
            self.add(R.AGENTIC_RUNNER_NOT_CLUSTER,
                     f"agentic-coding config `{self.key}` runs on `{runner}`; agentic configs must use a "
                     "`cluster:<name>` label, whose hardware facts size the CPU DRAM budget",
                     self.data.value_span("runner"), runner=runner)
        if runners is None or not isinstance(runners.value, dict) or not isinstance(runners.value.get("labels"), dict):
            return  # file-missing / runners-schema already say why no label can be checked
        if runner in labels:
            return
        close = self.files.close_labels(runner)
        hint = f"; closest defined: {', '.join(close)}" if close else ""
        self.add(R.RUNNER_UNDEFINED,
                 f"runner label `{runner}` of `{self.key}` is not defined in {runners.path}{hint}",
                 self.data.value_span("runner"), runner=runner, runners_file=runners.path, suggestions=close)

    def router(self, holder: PosMap) -> None:
        router = holder.get("router")
        if not isinstance(router, PosMap):
            return
        version = router.get("version")
        if isinstance(version, str) and _IMAGE_REF.search(version):
            self.add(R.ROUTER_VERSION_IMAGE,
                     f"router version `{version}` looks like a container image reference; expected the "
                     "router's release or commit (e.g. \"0.3.2\")",
                     router.value_span("version"), version=version)

    # -- search-space rows -------------------------------------------------------

    def row(self, r: Row, multinode: Any) -> None:
        row = r.row
        self.router(row)
        self.concurrency(row)
        if multinode is False and "kv-p2p-transfer" in row:
            self.add(R.KV_TRANSFER_SINGLE_NODE,
                     f"`kv-p2p-transfer` in a search-space row of single-node config `{self.key}`; it only "
                     "applies to multinode disaggregated configs",
                     row.key_span("kv-p2p-transfer"))
        if r.scenario == AGENTIC:
            self.offload(r)
        runner = self.data.get("runner")
        if multinode is True:
            blocks = [(role, row.get(role)) for role in ("prefill", "decode")]
            for role, block in blocks:
                if isinstance(block, PosMap):
                    self.parallelism(block, role, block.get("hardware", runner), multinode=True)
            prefill, decode = row.get("prefill"), row.get("decode")
            if isinstance(prefill, PosMap) and isinstance(decode, PosMap):
                if ("hardware" in prefill) != ("hardware" in decode):
                    has, lacks = ("prefill", "decode") if "hardware" in prefill else ("decode", "prefill")
                    block = prefill if has == "prefill" else decode
                    self.add(R.HARDWARE_ONE_BLOCK,
                             f"`hardware` is set on the {has} block but not on the {lacks} block; "
                             "set it on both or on neither",
                             block.key_span("hardware"),
                             related=(self.loc(row.key_span(lacks), f"{lacks} block"),))
        elif multinode is False:
            self.parallelism(row, "row", runner, multinode=False)

    def concurrency(self, row: PosMap) -> None:
        start, end = _int(row, "conc-start"), _int(row, "conc-end")
        if start is not None and end is not None and start > end:
            self.add(R.CONC_RANGE_INVERTED,
                     f"`conc-start` {start} is greater than `conc-end` {end}; expected start <= end",
                     row.value_span("conc-start"), related=(self.loc(row.value_span("conc-end"), "conc-end"),),
                     conc_start=start, conc_end=end)

    def parallelism(self, holder: PosMap, role: str, hardware_key: Any, *, multinode: bool) -> None:
        if multinode and holder.get("num-worker") == 0:
            return  # no worker of this role runs (aggregated multinode): its numbers describe nothing
        where = "" if role == "row" else f" in the {role} block"
        tp, dcp = _int(holder, "tp"), _int(holder, "dcp-size", 1)
        if tp is not None and dcp is not None and dcp > 0 and tp % dcp:
            self.add(R.DCP_SIZE_INDIVISIBLE,
                     f"`tp` {tp} is not a multiple of `dcp-size` {dcp}{where}; expected a dcp-size that divides tp",
                     holder.value_span("dcp-size"), tp=tp, dcp_size=dcp)
        shape = worker_shape(holder, multinode=multinode)
        if shape is None:
            return
        problem = shape.ep_problem(multinode=multinode, dp_attn=holder.get("dp-attn") is True, where=where)
        if problem:
            self.add(R.EP_GPU_MISMATCH, problem, holder.value_span("ep"), ep=shape.ep, gpus=shape.group)
        per_node = self.files.gpus_per_node(hardware_key)
        if per_node is None and multinode:
            per_node = self.files.gpus_per_node(self.data.get("runner"))
        if per_node is None:
            return
        gpus = shape.gpus
        if gpus > per_node and (not multinode or gpus % per_node):
            fits = "fit in one node or fill whole nodes" if multinode else "fit in one node"
            counted = "ep, with data-parallel attention" if shape.data_parallel else "tp x pp x pcp-size"
            self.add(R.GPUS_EXCEED_NODE,
                     f"the worker{where} needs {gpus} GPUs ({counted}) but a node of `{hardware_key}` has "
                     f"{per_node} (gpus-per-node); a worker must {fits}",
                     holder.value_span("tp"), gpus=gpus, gpus_per_node=per_node, hardware=str(hardware_key))

    def offload(self, r: Row) -> None:
        row = r.row
        offloading = row.get("kv-offloading")
        has_backend = "kv-offload-backend" in row
        if offloading == "dram" and not has_backend:
            self.add(R.KV_OFFLOAD_BACKEND_MISMATCH,
                     "`kv-offloading: dram` without `kv-offload-backend`; expected the offload software, "
                     "e.g. `kv-offload-backend: { name: lmcache, version: \"0.5.3\" }`",
                     row.value_span("kv-offloading"))
        elif has_backend and offloading != "dram":
            shown = "missing" if offloading is None else f"`{offloading}`"
            self.add(R.KV_OFFLOAD_BACKEND_MISMATCH,
                     f"`kv-offload-backend` with `kv-offloading` {shown}; a backend is only used with "
                     "`kv-offloading: dram`",
                     row.key_span("kv-offload-backend"))
        if offloading == "dram" and "dram-utilization" not in r.block:
            self.add(R.DRAM_UTILIZATION_MISSING,
                     "`kv-offloading: dram` but the agentic-coding block has no `dram-utilization`; "
                     "expected a fraction in (0, 1] that sizes the job's CPU DRAM budget",
                     row.value_span("kv-offloading"),
                     related=(self.loc(r.block_span, "agentic-coding block"),))

    # -- recipes -------------------------------------------------------------

    def recipes(self) -> None:
        for job in row_jobs(self.entry, self.repo):  # a row's recipe is the same at each of its concurrencies
            resolution = resolve_recipe(job, self.repo.config, self.repo.snapshot, files=self.files.paths,
                                        labels=self.repo.runner_labels)
            missing = [r for r in resolution.every_fleet if r.missing]
            if missing:
                self.recipe_missing(job, missing, resolution)

    def recipe_missing(self, job: Job, missing: list[RecipeResolution], resolution: RecipeResolution) -> None:
        """One finding per row, naming what each fleet that fails looks for, and what the others run."""
        found = missing[0]
        location = job.row
        if found.reference is not None:
            what = f"`{found.setting}={found.reference}` of this {job.scenario} row of `{self.key}` names no recipe"
            span = self._setting_span(job, str(found.setting))
            location = self.loc(span) if span else job.row
        elif found.kind == SRT_SLURM:
            what = f"this multinode {job.scenario} row of `{self.key}` names no srt-slurm recipe"
        else:
            what = f"no recipe script for this {job.scenario} row of `{self.key}`"
        reasons = "; ".join(r.reason for r in missing)
        close = f"; closest: {', '.join(posixpath.basename(p) for p in found.suggestions)}" if found.suggestions else ""
        # The label's other fleets may pick a recipe that exists: the job then fails only on some nodes.
        elsewhere = "".join(f"; on {', '.join(r.fleets)} it runs {r.path}" for r in resolution.every_fleet
                            if r.path is not None)
        self.out.append(make_finding(
            R.RECIPE_MISSING, f"{what}: {reasons}{close}{elsewhere}", location,
            data={"config_key": self.key, "scenario": job.scenario, "kind": found.kind,
                  "fleets": [f for r in missing for f in r.fleets],
                  "candidates": list(dict.fromkeys(c for r in missing for c in r.candidates)),
                  "reference": found.reference, "rule": found.rule, "suggestions": list(found.suggestions)},
        ))

    def _setting_span(self, job: Job, name: str) -> Span | None:
        """Where the row sets ``name=`` in additional-settings (decode's, exported last, wins)."""
        try:
            row = self.data["scenarios"][job.scenario][job.scenario_index]["search-space"][job.row_index]
        except (KeyError, IndexError, TypeError):
            return None
        for role in ("decode", "prefill"):
            block = row.get(role) if isinstance(row, PosMap) else None
            settings = block.get("additional-settings") if isinstance(block, PosMap) else None
            if isinstance(settings, PosSeq):
                for index, item in enumerate(settings):
                    if isinstance(item, str) and item.partition("=")[0].strip() == name:
                        return settings.item_span(index)
        return None


def check_keys(repo: RepoData) -> list[Finding]:
    """Key rules that need every master file: `*`, non-string keys, duplicates across files."""
    out: list[Finding] = []
    for loaded in repo.master_files:
        root = loaded.value
        if not isinstance(root, PosMap):
            continue
        for key in root:
            span = root.key_span(key)
            if not isinstance(key, str):
                out.append(make_finding(
                    R.CONFIG_KEY_INVALID,
                    f"config key {key!r} is read by YAML as {type(key).__name__}, not a string; quote it",
                    loaded.loc(span), data={"config_key": str(key)}))
            elif "*" in key:
                out.append(make_finding(
                    R.CONFIG_KEY_INVALID,
                    f"config key `{key}` contains `*`, the changelog's glob wildcard; expected a plain key",
                    loaded.loc(span), data={"config_key": key}))
    for entry in repo.shadowed:
        first = repo.configs.get(entry.key)
        related = (dataclasses.replace(first.loc(), note="first definition"),) if first else ()
        out.append(make_finding(
            R.CONFIG_KEY_DUPLICATE,
            f"config key `{entry.key}` is already defined in {first.path if first else 'another master file'}"
            f"{f' at line {first.key_span[0]}' if first else ''}; keys must be unique across master files",
            entry.loc(), related=related, data={"config_key": entry.key}))
    return out


def check_configs(repo: RepoData) -> list[Finding]:
    """Every cross-field and cross-file finding about the master configs."""
    files = _Shared(repo)
    out = check_keys(repo)
    for entry in [*repo.configs.values(), *repo.shadowed]:
        if isinstance(entry.data, PosMap):
            out.extend(_Checker(entry, repo, files).run())
    return out
