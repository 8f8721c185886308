"""Arms: the parts of a sweep a sentence names, and the jobs each one is.

Changelog prose names the rows of a search space by shorthand: a
parallelism (``TP4``, ``TEP4`` = TP4 with EP4 and no DP-attention, ``DEP8`` =
DP-attention with EP8, or TP8 with DP-attention where the config leaves EP
at 1, ``DP8``, ``TP8/EP8``, ``TP4/DCP4``, "the TP band", "DP-attention"), a
KV-offload setting (``GPU-resident``, ``SimpleCPU``, ``Mooncake``,
``LMCache``, ``HiCache``, ``DRAM``), speculative decoding (``MTP``,
``non-MTP``, ``STP``), sequence lengths (``1k1k``, ``8K/1K``), and for
disaggregated jobs the role of a worker (``decode TP8``,
``DEP2-prefill/TEP4-decode``) and the worker counts (``1P4D``).  An
:class:`Arm` is the conjunction of what one such name says; it admits the
jobs that have every attribute it names.

Designators are read from the words of a clause (:func:`atoms`), adjacent
ones are joined into groups (:func:`groups`): compatible attributes merge
(``GPU-resident TP4``, ``TP8, DPA8, EP8``), conflicting ones and ``and``/``or``
lists are alternatives (``TP4/TP8``, ``both TP4 and TEP4``).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any, Mapping, Sequence

from ...jobs.job import Job
from .tokens import Tok, back_over

# ---------------------------------------------------------------- values


# The constraints a Parallel holds, by attribute name (each ``None`` when the text leaves it open).
PARALLEL_DIMENSIONS = ("tp", "ep", "dp_attn", "dcp", "pp")
# Of those, the widths: a name that gives one names a part of the sweep ("DP-attention" alone does not).
_PARALLEL_WIDTHS = tuple(name for name in PARALLEL_DIMENSIONS if name != "dp_attn")


@dataclass(frozen=True)
class Parallel:
    """The parallelism of one worker (or of a single-node job)."""

    tp: int | None = None
    ep: int | None = None
    dp_attn: bool | None = None
    dcp: int | None = None
    pp: int | None = None  # pipeline-parallel stages ("TP8xPP2")
    # Named only as TPn: without DP-attention, unless something else in the group says otherwise.
    bare_tp: bool = False
    # The EP width came only from a DEPn name.  Authors call the DP-attention layout of width n "DEPn" also where
    # the config leaves ``ep`` at 1 ("DEP8 (TP8 + dp-attn)"; an srt-slurm recipe takes its expert parallelism
    # from its own file, not from the config), so such a job is that arm too.
    ep_of_dep: bool = field(default=False, compare=False)

    @property
    def empty(self) -> bool:
        return all(getattr(self, name) is None for name in PARALLEL_DIMENSIONS)

    def describe(self) -> str:
        """The constraints in the words of a job's shape: ``TP4``, ``TP8/EP8/DPA``, ``EP4/no DPA``."""
        dp_attn = self.finished().dp_attn
        words = [f"TP{self.tp}" if self.tp is not None else "", f"EP{self.ep}" if self.ep is not None else "",
                 "" if dp_attn is None else "DPA" if dp_attn else "no DPA",
                 f"DCP{self.dcp}" if self.dcp is not None else "", f"PP{self.pp}" if self.pp is not None else ""]
        return "/".join(w for w in words if w)

    def merged(self, other: Parallel) -> Parallel | None:
        """Both constraints at once, or None when they contradict each other."""
        out: dict[str, Any] = {}
        for name in PARALLEL_DIMENSIONS:
            a, b = getattr(self, name), getattr(other, name)
            if a is not None and b is not None and a != b:
                return None
            out[name] = a if a is not None else b
        bare = (self.bare_tp or other.bare_tp)
        # Loose only while every name that gives the width is a DEPn ("DEP8/EP8" says EP8 outright).
        of_dep = all(p.ep_of_dep for p in (self, other) if p.ep is not None) and out["ep"] is not None
        return Parallel(out["tp"], out["ep"], out["dp_attn"], out["dcp"], out["pp"], bare, of_dep)

    def finished(self) -> Parallel:
        if self.bare_tp and self.dp_attn is None:
            return replace(self, dp_attn=False, bare_tp=False)
        return replace(self, bare_tp=False)

    @cached_property
    def _as_matched(self) -> Parallel:
        # Built once per constraint: a scope asks it of every job of an entry (hundreds of times a claim).
        return self.finished()

    def admits(self, fields: Mapping[str, Any]) -> bool:
        p = self._as_matched
        if p.tp is not None and fields.get("tp") != p.tp:
            return False
        if p.ep is not None and (fields.get("ep") or 1) != p.ep and not (
                p.ep_of_dep and (fields.get("ep") or 1) == 1 and fields.get("tp") == p.ep and fields.get("dp-attn")):
            return False
        if p.dp_attn is not None and bool(fields.get("dp-attn")) != p.dp_attn:
            return False
        if p.dcp is not None and (fields.get("dcp-size") or 1) != p.dcp:
            return False
        if p.pp is not None and (fields.get("pp") or 1) != p.pp:
            return False
        return True


@dataclass(frozen=True)
class Arm:
    """What one name of a part of the sweep says about its jobs; unset attributes admit anything."""

    parallel: Parallel = Parallel()  # of a single-node job, or of either worker of a multinode job
    prefill: Parallel = Parallel()
    decode: Parallel = Parallel()
    offload: str | None = None  # "none" (GPU-resident), "dram", or a kv-offload-backend name
    spec: bool | None = None  # speculative decoding (MTP) or not
    seq: tuple[int | None, int | None] | None = None  # (isl, osl); None of one: any ("ISL=8192" alone)
    workers: tuple[int, int] | None = None  # (prefill, decode) num-worker: 1P4D
    disagg: bool | None = None  # prefill and decode on separate workers (P/D) or aggregated
    eval_only: bool | None = None  # the eval-only runs ("EVAL_ONLY selects ...", "for eval") or the throughput runs
    role: str = ""  # the server role a value of this arm is read from ("prefill" | "decode")
    label: str = field(default="", compare=False)
    # Named only as a prefix of the settings of its clause ("added prefill X and Y"): the clauses after it
    # are not about that role.
    local: bool = field(default=False, compare=False)
    # Parallelisms the arm's jobs are not of: "non-TP8/EP8" is every job but the TP8/EP8 ones.
    excluded: tuple[Parallel, ...] = ()

    @property
    def empty(self) -> bool:
        return self == Arm()

    @property
    def parallelism(self) -> bool:
        """Names a parallelism or worker counts (an arm whose existence a sentence can assert)."""
        parts = (self.parallel, self.prefill, self.decode)
        return self.workers is not None or any(getattr(p, name) is not None for p in parts for name in _PARALLEL_WIDTHS)

    def merged(self, other: Arm) -> Arm | None:
        """Both arms' constraints at once; None when they contradict each other."""
        parallel = self.parallel.merged(other.parallel)
        prefill = self.prefill.merged(other.prefill)
        decode = self.decode.merged(other.decode)
        if parallel is None or prefill is None or decode is None:
            return None
        out: dict[str, Any] = {}
        offload = _merge_offload(self.offload, other.offload)
        if offload is False:
            return None
        out["offload"] = offload
        for name in ("spec", "seq", "workers", "disagg", "eval_only"):
            a, b = getattr(self, name), getattr(other, name)
            if a is not None and b is not None and a != b:
                return None
            out[name] = a if a is not None else b
        if self.role and other.role and self.role != other.role:
            role = ""
        else:
            role = self.role or other.role
        label = join_labels(self.label, other.label)
        excluded = self.excluded + tuple(p for p in other.excluded if p not in self.excluded)
        return Arm(parallel, prefill, decode, out["offload"], out["spec"], out["seq"], out["workers"], out["disagg"],
                   out["eval_only"], role, label,
                   (self.local and (other.local or other.empty)) or (other.local and self.empty), excluded)

    def describe(self) -> str:
        """Every constraint of the arm, for a message saying no job has them all (its label may name fewer)."""
        parts = [f"{self.workers[0]}P{self.workers[1]}D" if self.workers else ""]
        for title, par in (("", self.parallel), ("prefill ", self.prefill), ("decode ", self.decode)):
            shown = par.describe()
            parts.append(f"{title}{shown}" if shown else "")
        parts.extend(f"not {p.describe()}" for p in self.excluded)
        return " ".join(p for p in parts if p) or self.label

    def over(self, inherited: Arm) -> Arm:
        """This arm with what it leaves open taken from ``inherited`` (its own attributes win)."""
        merged = inherited.merged(self)
        if merged is not None:
            return replace(merged, role=self.role or inherited.role)  # "decode params: ...; prefill X": its own role
        out = self
        for name in ("offload", "spec", "seq", "workers", "disagg", "eval_only"):
            if getattr(out, name) is None:
                out = replace(out, **{name: getattr(inherited, name)})
        return out

    @cached_property
    def as_matched(self) -> Arm:
        """:func:`finish` of this arm, built once: a scope matches every job of an entry against it."""
        return finish(self)

    def admits(self, job: Job) -> bool:
        f = job.fields
        if self.excluded and any(p.admits(w) for p in self.excluded
                                 for w in ([f.get("prefill"), f.get("decode")] if job.multinode else [f])
                                 if isinstance(w, Mapping)):
            return False
        if job.multinode:
            workers = [w for w in (f.get("prefill"), f.get("decode")) if isinstance(w, Mapping)]
            if not self.parallel.empty and not any(self.parallel.admits(w) for w in workers):
                return False
            for role, want in (("prefill", self.prefill), ("decode", self.decode)):
                w = f.get(role)
                if not want.empty and not (isinstance(w, Mapping) and want.admits(w)):
                    return False
            if self.workers is not None:
                counts = tuple((f.get(r) or {}).get("num-worker") for r in ROLES)
                # counts written with each role's parallelism ("1P TP4 + 1D TP8") are of workers, not nodes
                by_nodes = self.prefill.empty and self.decode.empty and self.workers in node_counts(f)
                if counts != self.workers and not by_nodes:
                    return False
        else:
            if not self.prefill.empty or not self.decode.empty or self.workers is not None:
                return False
            if not self.parallel.admits(f):
                return False
        if self.offload is not None and not offload_admits(self.offload, job_offload(job)):
            return False
        if self.spec is not None and job_spec(job) != self.spec:
            return False
        if self.seq is not None and any(want is not None and f.get(name) != want
                                        for name, want in zip(("isl", "osl"), self.seq)):
            return False
        if self.disagg is not None and job_disagg(f) != self.disagg:
            return False
        if self.eval_only is not None and bool(f.get("eval-only")) != self.eval_only:
            return False
        return True

    def both_roles(self) -> Arm | None:
        """The reading of a multinode arm whose parallelism names no role as that of both workers."""
        if self.parallel.empty:
            return None
        prefill = self.prefill.merged(self.parallel)
        decode = self.decode.merged(self.parallel)
        if prefill is None or decode is None:
            return None
        return replace(self, parallel=Parallel(), prefill=prefill, decode=decode)


def job_disagg(fields: Mapping[str, Any]) -> bool:
    """Whether prefill and decode run on separate workers: a row of a disaggregated config with no decode
    worker ("1P0D", the aggregated low-latency recipe) serves both on its prefill worker."""
    if not fields.get("disagg"):
        return False
    decode = fields.get("decode")
    return not (isinstance(decode, Mapping) and decode.get("num-worker") == 0)


# GPUs per node of the fleets multinode jobs run on (GB200/GB300 trays hold 4, the other servers 8).
_GPUS_PER_NODE = (4, 8)


def node_counts(fields: Mapping[str, Any]) -> set[tuple[int, int]]:
    """(prefill, decode) node counts a multinode job may have: "15P+3D" counts nodes as often as workers (15
    prefill workers of TP4 and one decode worker of TP12 fill 15 and 3 four-GPU nodes)."""
    gpus: list[int] = []
    for role in ROLES:
        worker = fields.get(role)
        count, tp = (worker.get("num-worker"), worker.get("tp")) if isinstance(worker, Mapping) else (None, None)
        if not isinstance(count, int) or not isinstance(tp, int):
            return set()
        gpus.append(count * tp)
    return {(gpus[0] // n, gpus[1] // n) for n in _GPUS_PER_NODE if gpus[0] % n == 0 and gpus[1] % n == 0}


def kinds(arm: Arm) -> set[str]:
    """The kinds of thing an arm names: ``parallel``, ``offload``, ``spec``, ``seq``, ``workers``."""
    out = {name for name in ("offload", "spec", "seq", "workers", "disagg", "eval_only") if getattr(arm, name) is not None}
    if not (arm.parallel.empty and arm.prefill.empty and arm.decode.empty and not arm.excluded):
        out.add("parallel")
    return out


def share_unnamed(new: Arm, previous: Arm) -> Arm:
    """A parallel construction shares what the second half leaves unsaid: in "LMCache TP8 points mirror the
    vllm-simple ladder", the vllm-simple ladder is the TP8 one."""
    named = kinds(new)
    out = new
    if "parallel" not in named:
        out = replace(out, parallel=previous.parallel, prefill=previous.prefill, decode=previous.decode,
                      excluded=previous.excluded)
    elif replace(new.parallel, dp_attn=None).empty and previous.parallel.dp_attn is not None and \
            new.parallel.dp_attn != previous.parallel.dp_attn:
        # "TP8 conc 1-64 non-DPA + conc 64-2048 DPA": DP-attention alone, against the arm before, keeps its size
        out = replace(out, parallel=replace(previous.parallel, dp_attn=new.parallel.dp_attn, bare_tp=False))
    for name in ("offload", "spec", "seq", "workers", "disagg", "eval_only"):
        if name not in named:
            out = replace(out, **{name: getattr(previous, name)})
    return out


def join_labels(*labels: str) -> str:
    """``TP8`` and ``8k1k`` -> ``TP8 8k1k``; a label already said is not repeated."""
    out: list[str] = []
    for label in labels:
        if label and not any(label in x for x in out):
            out = [x for x in out if x not in label] + [label]
    return " ".join(out)


def job_offload(job: Job) -> str:
    """``none`` or the job's kv-offload backend name (``dram`` when it names none)."""
    f = job.fields
    if f.get("kv-offloading") != "dram":
        return "none"
    backend = f.get("kv-offload-backend")
    name = backend.get("name") if isinstance(backend, Mapping) else backend
    return str(name) if name else "dram"


def job_spec(job: Job) -> bool:
    spec = job.fields.get("spec-decoding")
    return bool(spec) and spec != "none"


# Backends that are another's with a tier of their own: SGLang's HiCache with UMBP (MoRI) as its L3 tier.
_TIER_OF = {"umbp": "hicache"}
# A backend's older name in the configs: vLLM's own offloading was ``vllm-native`` before it was ``native``.
_RENAMED = {"vllm-native": "native"}


def offload_admits(want: str, have: str) -> bool:
    """``dram`` admits every backend; a backend, and ``none``, admit themselves (``a|b``: either), and ``hicache``
    the HiCache jobs whose L3 tier is UMBP."""
    have = _RENAMED.get(have, have)
    return have != "none" if want == "dram" else have in want.split("|") or _TIER_OF.get(have) in want.split("|")


def _merge_offload(a: str | None, b: str | None) -> str | None | bool:
    """Both offload constraints at once (``dram`` with a backend is the backend, ``hicache`` with UMBP is UMBP);
    False when they conflict."""
    if a is None or b is None:
        return a if b is None else b
    if a == "dram" or b == "dram":
        other = b if a == "dram" else a
        return False if other == "none" else other
    mine, theirs = a.split("|"), b.split("|")
    common = [x for x in mine if x in theirs] + [x for x in theirs if _TIER_OF.get(x) in mine] + \
        [x for x in mine if _TIER_OF.get(x) in theirs]
    return "|".join(dict.fromkeys(common)) if common else False


# ---------------------------------------------------------------- designators

_PAR_PART = re.compile(r"^(?P<kind>TP|EP|DEP|TEP|DPA|DP|DCP|PP|ATTN-DP|ADP)(?:=)?(?P<n>\d+)?$", re.IGNORECASE)
_SEQ = re.compile(r"^(?:isl)?(?P<i>\d+)k[-/_]?(?:osl)?(?P<o>\d+)k$", re.IGNORECASE)  # 8k1k, 8K/1K, ISL8K/OSL1K
_SEQ_ASSIGNED = re.compile(r"^isl=(?P<i>\d+)[/,]osl=(?P<o>\d+)$")
_ROLE_WORD = re.compile(r"^(prefill|decode)[-_](?:only|side|config|server|servers|worker|workers|args|flags|params|"
                        r"env|envs|settings)$")
_SEQ_NUMBERS = re.compile(r"^(\d{4,6})/(\d{4,6})$")
_ONE_SEQ_GLUED = re.compile(r"^(?P<side>isl|osl)(?P<n>\d+)(?P<k>k?)$", re.IGNORECASE)  # ISL8192, OSL1K
_WORKERS = re.compile(r"^(?P<p>\d+)[pP](?P<d>\d+)[dD]$")
_DPA_WORDS = {"dp-attention", "dp-attn", "dpa", "dp_attn", "attention-dp", "attn-dp", "dp-attn=true", "dep",
              "dp-on", "attention_dp", "dp_attention"}
_NO_DPA_WORDS = {"non-dp", "no-dp", "non-dpa", "no-dpa", "tp-only", "pure-tp", "tp_only", "dp-off", "tep",
                 "non-dp-attention", "no-dp-attention"}
BAND_NOUNS = {"band", "bands", "arm", "arms", "path", "branch", "points", "point", "rows", "row", "tier", "sweep",
               "cells", "lane", "lanes", "side", "mode", "config", "configs", "recipe", "jobs", "job", "档位"}
# The two server roles of a disaggregated job, in the matrix's order, and as words a text names them by.
ROLES = ("prefill", "decode")
ROLE_WORDS = frozenset(ROLES)
ROLE_NOUNS = {"worker", "workers", "environment", "environments", "side", "server", "servers", "instance", "instances",
              "engine", "engines", "role", "roles", "tier",
              # what a role's server is given: "decode params: ...", "prefill flags"
              "params", "parameters", "flags", "args", "arguments", "settings", "knobs", "options", "env", "envs",
              # what launches a role's servers ("the prefill command"; not "1 prefill node", a count)
              "command", "commands", "process", "processes", "config", "block", "section", "container", "containers"}
_NEGATIONS = {"no", "non", "without", "not"}
# Verbs of a heading that names the workers what follows it is about ("Retune prefill: ...").
_HEADING_VERBS = {"tune", "tunes", "tuned", "retune", "retunes", "retuned", "update", "updates", "updated", "change",
                  "changes", "changed", "adjust", "adjusts", "adjusted", "set", "sets"}
# What may follow a role named after "for"/"on"/"in" that names it as the workers a setting is for: the end, a
# list, or a phrase of how or why ("for decode via the server flags", "for prefill for the new image").
_AFTER_A_ROLE = {"", ",", ";", ")", "and", "or", "/", ".", "instead", "only", "too", "as", "(", "via", "through",
                 "using", "for", "with", "on", "at", "in", "rather", "vs", "vs.", "versus", "unlike"}
# Or the verb of a sentence whose subject ends with the role: "Setting X 0.8 for prefill keeps the pool small",
# "Forcing X for decode selects ...".  Auxiliaries, and the verbs that say what a setting does; a noun after the
# role is a word of what it names ("for prefill tokens", "for prefill chunking"), not the role.
_VERB_AFTER_A_ROLE = {"is", "was", "are", "were", "has", "had", "will", "would", "should", "must", "can", "could",
                      "may", "might", "does", "did", "keeps", "selects", "avoids", "gives", "makes", "means", "lets",
                      "helps", "fixes", "reduces", "raises", "lowers", "improves", "prevents", "allows", "restores",
                      "matches", "needs", "requires", "stays", "remains", "brings", "frees", "leaves", "cuts",
                      "doubles", "halves", "caps", "limits", "trades", "costs", "saves", "wins", "recovers"}
# A role as the subject of its clause: "Decode uses ...", "Prefill now runs ...", "decode gets ...".
# What may stand before a role that is the subject of its clause ("the prefill uses", "..., while decode keeps",
# "On the low-latency recipe prefill uses"); not a word of a feature's name ("chunked prefill uses 8192 tokens").
_BEFORE_A_ROLE_SUBJECT = frozenset({"the", "and", ",", ";", ":", "while", "whereas", "but", "recipe", "recipes", "config",
                                    "configs"})
_ROLE_VERBS = {"uses", "use", "runs", "run", "gets", "get", "passes", "pass", "keeps", "keep", "takes", "take",
               "sets", "has", "enables", "disables", "switches", "moves", "stays", "goes", "drops", "adds"}
_BOOL_WORDS = {"true": True, "on": True, "enabled": True, "false": False, "off": False, "disabled": False}
# KV-offload names: (how prose writes them, lowercased) -> kv-offload-backend name, "none" or "dram".
OFFLOAD_NAMES: dict[str, str] = {
    "gpu-resident": "none", "gpu-only": "none", "hbm-only": "none", "hbm-resident": "none", "no-offload": "none",
    "kvnone": "none", "on-gpu": "none", "resident": "none",
    "dram": "dram", "dram-offload": "dram", "cpu-offload": "dram", "kv-offload": "dram", "host-offload": "dram",
    # vLLM's SimpleCPUOffloadConnector: the configs call it vllm-simple, or native (vLLM's own offloading).
    "simplecpu": "vllm-simple|native", "simplecpuoffload": "vllm-simple|native",
    "simplecpu-offload": "vllm-simple|native", "simple-cpu": "vllm-simple|native",
    "simplecpuoffloadconnector": "vllm-simple|native", "vllm-simple": "vllm-simple",
    "mooncake": "mooncake", "lmcache": "lmcache", "hicache": "hicache", "umbp": "umbp", "vllm-native": "native",
}
_RUN_NOUNS = {"run", "runs", "job", "jobs", "mode", "only", "pass", "passes"}
_DISAGG_WORDS = {"agg": False, "aggregate": False, "aggregated": False, "disagg": True, "disaggregated": True,
                 "p/d": True, "pd-disaggregation": True}
# Backends that also move KV between prefill and decode workers: an offload tier only in a clause about offload.
_TRANSFER_TOO = {"mooncake", "lmcache"}
_OFFLOAD_CONTEXT = {"offload", "offloading", "kv-offload", "dram", "cpu", "host", "tier", "l2", "hicache", "ladder",
                    "ladders", "dram-offload", "cpu-offload"}
_SPEC_WORDS = {"mtp": True, "eagle": True, "eagle3": True, "spec-decoding": True, "speculative": True,
               "non-mtp": False, "no-mtp": False, "stp": False, "non-spec": False, "non-eagle": False,
               "non-eagle3": False, "no-eagle": False, "no-spec": False, "non-speculative": False}


@dataclass(frozen=True)
class Atom:
    """One designator: tokens [start, end) and the arm(s) it names (several: ``TP4/TP8``)."""

    start: int
    end: int
    arms: tuple[Arm, ...]

    @property
    def arm(self) -> Arm:
        return self.arms[0]


_TP_DEP = re.compile(r"TP\d+-D(?:EP\d+|PA\d*)$", re.IGNORECASE)


def _parallel_token(text: str) -> tuple[Parallel, ...] | None:
    """``TP8/EP8``, ``TP8/DPA8/EP8``, ``DEP8``, ``TEP4``, ``TP4/DCP4``, ``TP8+DPA``, ``TP4-DEP4``; ``TP4/TP8`` is two.

    (``TP4-DEP4`` is TP4 with DP-attention over EP4, ``TP4-DPA`` TP4 with DP-attention; ``dep4-tp4`` after ``1p8d``
    is a prefill and a decode worker, a layout :func:`_compound` and the worker counts read.)"""
    # "TP8xPP2": tensor times pipeline parallelism, one arm
    parts = re.split(r"[/+]|(?<=\d)-(?=[Dd])" if _TP_DEP.match(text) else r"[/+]|(?<=\d)[xX](?=[pP][pP]\d)", text)
    if not parts or not all(parts):
        return None
    matches = [_PAR_PART.match(p) for p in parts]
    if any(m is None for m in matches):
        return None
    kinds = [m.group("kind").upper() for m in matches if m]
    nums = [int(m.group("n")) if m and m.group("n") else None for m in matches]
    if any(n is None and k not in ("DPA", "DEP", "TEP", "DP") for k, n in zip(kinds, nums)):
        return None  # "EP" alone: not a parallelism
    if len(kinds) == 1 and nums[0] is None and kinds[0] == "DP":
        return None  # a bare "DP" is read with the word after it
    if len(set(kinds)) < len(kinds):
        if len(set(kinds)) == 1:  # TP4/TP8: alternatives
            out = [p for part in parts for p in (_parallel_token(part) or ())]
            return tuple(out) if len(out) == len(parts) else None
        return None
    p = Parallel()
    for kind, n in zip(kinds, nums):
        part: Parallel
        if kind == "TP":
            part = Parallel(tp=n, bare_tp=len(kinds) == 1)
        elif kind == "EP":
            part = Parallel(ep=n)
        elif kind in ("DPA", "DP", "ATTN-DP", "ADP"):
            # DP8: eight attention ranks; the config writes tp 8 (SGLang, vLLM) or tp 1 per rank (llm-d, TRT).
            part = Parallel(dp_attn=True)
        elif kind == "DEP":
            part = Parallel(ep=n, dp_attn=True, ep_of_dep=n is not None)
        elif kind == "TEP":
            part = Parallel(tp=n, ep=n, dp_attn=False)
        elif kind == "PP":
            part = Parallel(pp=n)
        else:  # DCP
            part = Parallel(dcp=n)
        merged = p.merged(part)
        if merged is None:
            return None
        p = merged
    return (p,)


_ROLE_COUNT = re.compile(r"^(?P<n>\d+)(?P<role>[PD])-(?P<par>.+)$", re.IGNORECASE)
_WORKERS_PLUS = re.compile(r"^(?P<p>\d+)[pP]\+(?P<d>\d+)[dD]$")


def _glued_offload(text: str) -> Arm | None:
    """A parallelism glued to its KV offload, one word: ``DEP8+hicache``, ``TP8+mooncake``."""
    left, plus, right = text.partition("+")
    offload = OFFLOAD_NAMES.get(right.lower()) if plus else None
    par = _parallel_token(left) if offload is not None else None
    if par is None or len(par) != 1:
        return None
    return Arm(par[0], offload=offload, label=text)


# Speculative decoding glued to a parallelism: "MTP1", "MTP3", "EAGLE".
_SPEC_PART = re.compile(r"^(?:mtp|eagle3?)\d*$", re.IGNORECASE)


def _glued_spec(text: str) -> Arm | None:
    """A parallelism glued to its speculative decoding, one word: ``TP8+MTP3``, ``TP8+DPA+MTP1``."""
    head, plus, tail = text.rpartition("+")
    par = _parallel_token(head) if plus and _SPEC_PART.match(tail) else None
    if par is None or len(par) != 1:
        return None
    return Arm(par[0], spec=True, label=text)


def _compound(text: str) -> Arm | None:
    """Recipe-style names of a disaggregated layout.

    ``1p4d-dep4-tep8`` (workers, then the prefill and the decode parallelism), ``1p5d-tp8`` (one
    parallelism for both), ``1P-TP4/2D-TP4`` (per role), ``1P+1D``.
    """
    m = _WORKERS_PLUS.match(text)
    if m:
        return Arm(workers=(int(m.group("p")), int(m.group("d"))), label=text)
    pieces = text.split("/")
    if len(pieces) == 2 and all(_ROLE_COUNT.match(x) for x in pieces):
        counts: dict[str, int] = {}
        roles: dict[str, Parallel] = {}
        for piece in pieces:
            rm = _ROLE_COUNT.match(piece)
            assert rm is not None
            par = _parallel_token(rm.group("par"))
            if par is None or len(par) != 1:
                return None
            role = "prefill" if rm.group("role").lower() == "p" else "decode"
            counts[role], roles[role] = int(rm.group("n")), par[0]
        if set(counts) != ROLE_WORDS:
            return None
        return Arm(prefill=roles["prefill"], decode=roles["decode"],
                   workers=(counts["prefill"], counts["decode"]), label=text)
    parts = text.split("-")
    m = _WORKERS.match(parts[0])
    if len(parts) < 2 or not m:
        return None
    pars: list[Parallel] = []
    arm = Arm(workers=(int(m.group("p")), int(m.group("d"))), label=text)
    for part in parts[1:]:
        par = _parallel_token(part)
        if par is not None and len(par) == 1:
            pars.append(par[0])
        elif _SEQ.match(part):
            sm = _SEQ.match(part)
            assert sm is not None
            arm = replace(arm, seq=(int(sm.group("i")) * 1024, int(sm.group("o")) * 1024))
        elif part.lower() in _SPEC_WORDS:
            arm = replace(arm, spec=_SPEC_WORDS[part.lower()])
    if len(pars) == 2:
        return replace(arm, prefill=pars[0], decode=pars[1])
    if len(pars) == 1:
        return replace(arm, parallel=pars[0])
    return None


_ROLE_SPLIT = re.compile(r"^(?P<a>.+?)[-_](?P<role>prefill|decode)$|^(?P<role2>prefill|decode)[-_](?P<b>.+)$", re.I)


def _role_split(text: str) -> tuple[str, str] | None:
    """``DEP2-prefill`` -> (DEP2, prefill); ``decode-TP8`` -> (TP8, decode)."""
    low = text.lower()
    if "prefill" not in low and "decode" not in low:
        return None  # the pattern below needs one of the two words (asked of every word of every clause)
    m = _ROLE_SPLIT.match(text)
    if not m:
        return None
    if m.group("role"):
        return m.group("a"), m.group("role").lower()
    return m.group("b"), m.group("role2").lower()


def _role_pair(text: str) -> tuple[Parallel, Parallel] | None:
    """``DEP4/TEP8``, ``DEP4/TP4``, ``DEP8/DEP32``: two whole parallelisms, as written after a layout's worker counts
    (its prefill and its decode workers, as the recipe files name them: ``1p4d-dep4-tep8``); not ``TP8/EP8`` or
    ``TP8/DPA``, one parallelism told in parts."""
    pieces = text.split("/")
    if len(pieces) != 2:
        return None
    pars = [_parallel_token(piece) for piece in pieces]
    if any(p is None or len(p) != 1 for p in pars):
        return None
    prefill, decode = (p[0] for p in pars if p is not None)
    return (prefill, decode) if _whole(prefill) and _whole(decode) else None


# Words that may stand between the designators of one group.
_GLUE_MERGE = {"/", ",", "+", "-", "with", "w/", "&"}
_COUNTED_ROLE = re.compile(r"^(\d+)([pd])$", re.I)
# "1P DEP8 + 4D TP8", "1P DEP8 and 4D TP8": the glue of one group, and "and" (not "-": "1P-DEP8" is one word).
_COUNTED_ROLE_GLUE = frozenset(_GLUE_MERGE - {"-"}) | {"and"}


def _counted_roles(toks: Sequence[Tok], i: int) -> tuple[tuple[Arm, ...], int] | None:
    """``1P DEP8 + 4D TP8``: each role's worker count before its parallelism, both roles joined (5 tokens)."""
    if i + 4 >= len(toks) or toks[i + 2].low not in _COUNTED_ROLE_GLUE:
        return None
    first, second = _COUNTED_ROLE.match(toks[i].text), _COUNTED_ROLE.match(toks[i + 3].text)
    if first is None or second is None or {first.group(2).lower(), second.group(2).lower()} != {"p", "d"}:
        return None
    pars = _parallel_token(toks[i + 1].text), _parallel_token(toks[i + 4].text)
    if pars[0] is None or pars[1] is None or len(pars[0]) != 1 or len(pars[1]) != 1:
        return None
    by_role = {m.group(2).lower(): (int(m.group(1)), par[0]) for m, par in ((first, pars[0]), (second, pars[1]))}
    label = " ".join(t.text for t in toks[i:i + 5])
    return (Arm(prefill=by_role["p"][1], decode=by_role["d"][1], workers=(by_role["p"][0], by_role["d"][0]),
                disagg=True, label=label),), 5


_NON = re.compile(r"^non[-_](?P<rest>.+)$", re.I)
_PURE_OR_ONLY = re.compile(r"^(?:pure|plain)[-_](?P<rest>.+)$|^(?P<only>TP\d+)[-_]only$", re.I)


def _word_arms(toks: Sequence[Tok], i: int) -> tuple[tuple[Arm, ...], int] | None:
    """The arm(s) the word at ``i`` names, and how many tokens the name takes."""
    t = toks[i]
    low = t.low
    nxt = toks[i + 1].low if i + 1 < len(toks) else ""
    prev = toks[i - 1].low if i > 0 else ""
    if t.kind == "assign":
        seq = _SEQ_ASSIGNED.match(low)
        if seq:  # "isl=1024/osl=1024"
            return (Arm(seq=(int(seq.group("i")), int(seq.group("o"))), label=t.text),), 1
        name, _, value = low.partition("=")
        if name in ("tp", "ep", "dcp", "dcp-size") and value.isdigit():
            n = int(value)
            one = Parallel(tp=n) if name == "tp" else Parallel(ep=n) if name == "ep" else Parallel(dcp=n)
            return (Arm(one, label=t.text),), 1
        if name in ("isl", "osl") and value.isdigit():
            return _sequence_lengths(toks, i)
        labelled = _parallel_token(t.text.partition("=")[2]) if len(name) <= 2 or name in BAND_NOUNS else None
        if labelled is not None:  # "A=TP8 (1-8), B=TP4 (16-128)": bands named by a letter
            label = t.text.partition("=")[2]
            return tuple(Arm(p, label=label) for p in labelled), 1
        return None
    if t.kind != "word":
        return None
    counted = _counted_roles(toks, i)
    if counted is not None:
        return counted
    if low in ("tp", "ep", "dcp") and nxt == ":" and i + 2 < len(toks) and toks[i + 2].text.isdigit():
        # "tp:2 ep:1", as the config's search-space writes them
        n = int(toks[i + 2].text)
        one = Parallel(tp=n) if low == "tp" else Parallel(ep=n) if low == "ep" else Parallel(dcp=n)
        return (Arm(one, label=f"{t.text}:{toks[i + 2].text}"),), 3
    compound = _compound(t.text)
    if compound is not None:
        return (compound,), 1
    glued = _glued_offload(t.text) or _glued_spec(t.text)
    if glued is not None:
        return (glued,), 1
    pair = _parallel_token(t.text) if "/" in t.text else None
    if pair is not None and len(pair) == 2:
        if i + 1 < len(toks) and toks[i + 1].low in ("prefill/decode", "p/d"):  # "DEP4/DEP16 prefill/decode"
            return (Arm(prefill=pair[0], decode=pair[1], disagg=True, label=f"{t.text} {toks[i + 1].text}"),), 2
        if prev in ("p/d", "prefill/decode"):  # "P/D DEP4/DEP8"
            return (Arm(prefill=pair[0], decode=pair[1], disagg=True, label=f"{toks[i - 1].text} {t.text}"),), 1
    # Roles glued to a parallelism, several roles in one token: "DEP2-prefill/TEP4-decode".
    if "/" in t.text and re.search(r"(?:prefill|decode)", low):
        arm = Arm(label=t.text)
        for piece in t.text.split("/"):
            split = _role_split(piece)
            if split is None:
                return None
            par = _parallel_token(split[0])
            if par is None or len(par) != 1:
                return None
            role_arm = Arm(prefill=par[0], label=piece) if split[1] == "prefill" else Arm(decode=par[0], label=piece)
            merged = arm.merged(role_arm)
            if merged is None:
                return None
            arm = merged
        return (replace(arm, label=t.text),), 1
    split = _role_split(t.text)
    if split is not None:
        par = _parallel_token(split[0])
        if par is not None:
            arms = tuple(Arm(prefill=p, role="prefill", label=t.text) if split[1] == "prefill"
                         else Arm(decode=p, role="decode", label=t.text) for p in par)
            return arms, 1
    negated = prev in _NEGATIONS or _negated_across(toks, i)
    par = _parallel_token(t.text)
    if par is not None and nxt in ROLE_WORDS:
        # "DEP4 prefill / DEP8 decode": the parallelism of that role's workers.
        label = f"{t.text} {toks[i + 1].text}"
        return tuple(Arm(prefill=p, role="prefill", label=label) if nxt == "prefill"
                     else Arm(decode=p, role="decode", label=label) for p in par), 2
    if par is not None:
        return tuple(Arm(p, label=t.text) for p in par), 1
    m = _NON.match(t.text)
    if m and any(ch.isdigit() for ch in m.group("rest")) and (par := _parallel_token(m.group("rest"))) is not None:
        # "non-TP8/EP8: block-size=16": every job but those of the parallelism (a bare TPn is any TPn here,
        # with DP attention or without; "non-DPA", with no size, is the arm without DP attention)
        return (Arm(excluded=tuple(replace(p, bare_tp=False) for p in par), label=t.text),), 1
    m = _PURE_OR_ONLY.match(t.text)
    if m and m.group("only") and (par := _parallel_token(m.group("only"))) is not None:  # "TP8-only"
        return tuple(Arm(replace(p, dp_attn=False, bare_tp=False), label=t.text) for p in par), 1
    if m and (par := _parallel_token(m.group("rest"))) is not None:
        return tuple(Arm(replace(p, dp_attn=False, bare_tp=False), label=t.text) for p in par), 1
    if low in ("ep", "ep1") and negated or low in ("no-ep", "without-ep"):
        return (Arm(Parallel(ep=1), label=f"{prev} {t.text}" if negated else t.text),), 1
    if low == "expert" and nxt == "parallelism":
        return _expert_parallelism(toks, i, negated)
    m = _SEQ_NUMBERS.match(t.text)
    if m and all(int(x) >= 1024 and int(x) % 1024 == 0 for x in m.groups()):
        # "at 8192/1024": the input and output lengths in tokens
        return (Arm(seq=(int(m.group(1)), int(m.group(2))), label=t.text),), 1
    if low in ("tp", "ep", "dep", "tep") and i + 1 < len(toks) and toks[i + 1].text in ("1", "2", "4", "8", "16", "32") \
            and prev != "-":  # (not "-tp 16", a flag and its value)
        par = _parallel_token(t.text + toks[i + 1].text)
        if par is not None:  # "for TP 8": the parallelism written apart from its size
            return tuple(Arm(p, label=f"{t.text} {toks[i + 1].text}") for p in par), 2
    if low in ("isl", "osl") and i + 1 < len(toks) and toks[i + 1].text.isdigit() and int(toks[i + 1].text) >= 128:
        # "for ISL 8192": one sequence length written as a word and its number (any length of the other)
        n = int(toks[i + 1].text)
        return (Arm(seq=(n, None) if low == "isl" else (None, n), label=f"{t.text} {toks[i + 1].text}"),), 2
    m = _SEQ.match(t.text)
    if m:
        return (Arm(seq=(int(m.group("i")) * 1024, int(m.group("o")) * 1024), label=t.text),), 1
    m = _ONE_SEQ_GLUED.match(t.text)
    if m and (n := int(m.group("n")) * (1024 if m.group("k") else 1)) >= 128:
        # "sweep at ISL8192": one sequence length glued to its word (any length of the other)
        return (Arm(seq=(n, None) if m.group("side").lower() == "isl" else (None, n), label=t.text),), 1
    m = _WORKERS.match(t.text)
    if m:
        workers = (int(m.group("p")), int(m.group("d")))
        roles = _role_pair(toks[i + 1].text) if i + 1 < len(toks) else None
        if roles is not None:  # "1P4D DEP4/TEP8": the worker counts, then the prefill and the decode parallelism
            return (Arm(prefill=roles[0], decode=roles[1], workers=workers, disagg=True,
                        label=f"{t.text} {toks[i + 1].text}"),), 2
        return (Arm(workers=workers, label=t.text),), 1
    if low in ROLE_WORDS and (len(toks) == 1 or len(toks) == 2 and i == 1 and prev in _HEADING_VERBS):
        # a heading: "Prefill: gpu-memory-utilization 0.9->0.95", "Retune prefill: X 0.9 -> 0.95"
        return (Arm(role=low, label=t.text),), 1
    role_word = _ROLE_WORD.match(low)
    if role_word:  # "Decode-only: ...", "decode-side", "prefill_config"
        return (Arm(role=role_word.group(1), label=t.text),), 1
    if low in ROLE_WORDS and _both_roles(toks, i):
        return None  # "in prefill and decode environments": every server, no narrowing
    if low in ROLE_WORDS and prev in ("for", "on", "in", "(") and (nxt in _AFTER_A_ROLE or nxt in _VERB_AFTER_A_ROLE):
        # "0.85 for decode and 0.7 for prefill", "0.85 (decode)", "Enable X for decode via the server flags"
        return (Arm(role=low, label=t.text),), 1
    if low in ROLE_WORDS and (i == 0 or prev in _BEFORE_A_ROLE_SUBJECT) and (
            nxt in _ROLE_VERBS or (nxt in ("now", "still", "also", "then") and i + 2 < len(toks)
                                   and toks[i + 2].low in _ROLE_VERBS)):
        return (Arm(role=low, label=t.text),), 1  # "Decode now uses --mem-fraction-static 0.88": the role's servers
    if low in ROLE_WORDS and nxt == "s" and toks[i + 1].start == t.end + 1:
        # "prefill's max-num-seqs", "decode's 256": the role's own (the apostrophe is no token)
        return (Arm(role=low, label=t.text, local=True),), 2
    if low in ROLE_WORDS and i + 1 < len(toks) and _names_a_setting(toks[i + 1]):
        return (Arm(role=low, label=t.text, local=True),), 1  # "decode max-running-requests 18432", "prefill X=1"
    if low in ROLE_WORDS and (nxt in ROLE_NOUNS or (i + 1 < len(toks) and _parallel_token(toks[i + 1].text))
                                         or (i > 0 and (_parallel_token(toks[i - 1].text) or _WORKERS.match(toks[i - 1].text)))):
        return (Arm(role=low, label=t.text),), 1
    # ("DP-attn+EP": DP attention with expert parallelism, whose size the config's ep says)
    if low.removesuffix("+ep") in _DPA_WORDS or (low == "dp" and nxt in ("attention", "attn")) or \
            (low in ("attention", "attn") and nxt == "dp"):
        width = 2 if low in ("dp", "attention", "attn") else 1
        on = not negated
        # "dp-attn false", "dp-attention: off": the value written after the name.
        k = i + width + (1 if i + width < len(toks) and toks[i + width].text in ("=", ":") else 0)
        if k < len(toks) and toks[k].low in _BOOL_WORDS:
            on, width = _BOOL_WORDS[toks[k].low], k + 1 - i
        return (Arm(Parallel(dp_attn=on), label=" ".join(x.text for x in toks[i:i + width])),), width
    if low in ("dp", "dpa") and nxt in BAND_NOUNS:
        return (Arm(Parallel(dp_attn=not negated), label=t.text),), 1
    if low in _NO_DPA_WORDS:
        return (Arm(Parallel(dp_attn=False), label=t.text),), 1
    if low == "tp" and (nxt in BAND_NOUNS or prev == "pure" or nxt == "only"):
        return (Arm(Parallel(dp_attn=False), label=t.text),), 1
    offload = OFFLOAD_NAMES.get(low) or OFFLOAD_NAMES.get(low.removesuffix("-offload"))
    names = [OFFLOAD_NAMES.get(p) or OFFLOAD_NAMES.get(p.removesuffix("-offload")) for p in low.split("/")]
    if len(names) > 1 and all(n is not None and n != "none" for n in names):
        # "LMCache/vllm-native/SimpleCPUOffload": offload backends, one arm each.
        return tuple(Arm(offload=n, label=part) for n, part in zip(names, t.text.split("/")) if n is not None), 1
    if low == "simple" and nxt == "cpu":  # "Simple CPU KV offloading": vLLM's SimpleCPUOffloadConnector
        return (Arm(offload="vllm-simple|native", label=f"{t.text} {toks[i + 1].text}"),), 2
    after = [x.low for x in toks[i + 1:i + 3]]
    if offload is not None and ("transfer" in after or "connector" in after and offload != "vllm-simple|native"):
        offload = None  # "Mooncake KV transfer": the disaggregated KV transfer, not an offload tier
    if (offload in _TRANSFER_TOO or low == "vllm-native") and not any(
            x.low in _OFFLOAD_CONTEXT or (OFFLOAD_NAMES.get(x.low) not in (None, offload))
            for k, x in enumerate(toks) if k != i):
        # "Retain the 2P2D ..., TP8/DP8 decode, Mooncake, ...": the P/D transfer; "vLLM-native --nnodes serve":
        # what vLLM does itself, no offload tier
        offload = None
    if offload is not None:
        if negated and offload not in ("none", "dram") and prev not in _NEGATIONS:
            return None  # "without adding Mooncake": no Mooncake arm, which says nothing of the arms that run
        if negated and offload != "none":
            offload = "none"
        return (Arm(offload=offload, label=t.text),), 1
    if low in ("offload", "offloading", "kv-offload", "kv-offloading") and negated:
        return (Arm(offload="none", label=t.text),), 1
    if low == "kv-offloading" and nxt in ("none", "dram"):
        return (Arm(offload=nxt, label=f"{t.text} {nxt}"),), 2
    if low in _DISAGG_WORDS:
        return (Arm(disagg=_DISAGG_WORDS[low], label=t.text),), 1
    if low in ("eval_only", "eval-only") or (low in ("eval", "evals") and (prev == "for" or nxt in _RUN_NOUNS)) or (
            low == "throughput" and (prev == "for" or nxt in _RUN_NOUNS)):
        return (Arm(eval_only=low != "throughput", label=t.text),), 1
    if low in _SPEC_WORDS:
        spec = _SPEC_WORDS[low]
        return (Arm(spec=(not spec) if negated else spec, label=t.text),), 1
    return None


_EP_OFF = {"disabled", "off", "false"}


# Words between a negation and the arm word it negates: "no KV offload", "without adding a DRAM offload arm".
_NEGATION_GAP = frozenset({"kv", "any", "cpu", "host", "adding", "a", "an", "new", "extra", "additional", "the"})


def _negated_across(toks: Sequence[Tok], i: int) -> bool:
    """A negation before the arm word at ``i`` with at most three words of ``_NEGATION_GAP`` between."""
    k = back_over(toks, i, _NEGATION_GAP)
    return k < i - 1 and k >= 0 and toks[k].low in _NEGATIONS


def _expert_parallelism(toks: Sequence[Tok], i: int, negated: bool) -> tuple[tuple[Arm, ...], int] | None:
    """``when expert parallelism is disabled``, ``without expert parallelism``: the arm without EP (EP1).  Bare
    words ("expert parallelism size") name no arm."""
    k = i + 2
    if k < len(toks) and toks[k].low in ("is", "=", ":"):
        k += 1
    state = toks[k].low if k < len(toks) else ""
    if negated or state in _EP_OFF:
        width = k + 1 - i if state in _EP_OFF else 2
        return (Arm(Parallel(ep=1), label=" ".join(t.text for t in toks[i:i + width])),), width
    return None  # "with expert parallelism enabled": EP of some size, which no Parallel says


def _sequence_lengths(toks: Sequence[Tok], i: int) -> tuple[tuple[Arm, ...], int]:
    """``ISL=8192, OSL=1024`` (one arm, the comma between them included), ``ISL=1024,8192 OSL=1024`` (two), a
    lone ``ISL=8192`` (any OSL)."""
    lengths: dict[str, list[int]] = {"isl": [], "osl": []}
    end = k = i
    while k < len(toks) and toks[k].kind == "assign":
        name, _, value = toks[k].low.partition("=")
        if name not in lengths or lengths[name] or not value.isdigit():
            break
        lengths[name].append(int(value))
        k += 1
        # More values of the same length: "ISL=1024,8192", "ISL=1024/8192".
        while k + 1 < len(toks) and toks[k].text in (",", "/") and toks[k + 1].text.isdigit():
            lengths[name].append(int(toks[k + 1].text))
            k += 2
        end = k
        if k + 1 < len(toks) and toks[k].text == "," and toks[k + 1].kind == "assign":
            k += 1
    label = " ".join(t.text for t in toks[i:end])
    isls: list[int | None] = list(lengths["isl"]) or [None]
    osls: list[int | None] = list(lengths["osl"]) or [None]
    return tuple(Arm(seq=(isl, osl), label=label) for isl in isls for osl in osls), end - i


_SETTING_SHAPE = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:[-_.][A-Za-z0-9]+)+|[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+|[A-Z][A-Z0-9]{5,}")


def _names_a_setting(t: Tok) -> bool:
    """A flag, ``NAME=value``, or a word spelled as a setting's identifier (``max-running-requests``,
    ``mem_fraction_static``, ``PYTHONUNBUFFERED``), which is not itself the name of an arm."""
    if t.kind in ("flag", "assign"):
        return True
    return t.kind == "word" and bool(_SETTING_SHAPE.fullmatch(t.text)) and _parallel_token(t.text) is None and \
        _compound(t.text) is None and _role_split(t.text) is None and not _SEQ.match(t.text) and \
        t.low not in _DPA_WORDS and t.low not in _NO_DPA_WORDS and t.low not in OFFLOAD_NAMES


def names_an_arm(text: str) -> bool:
    """The word names a layout of the sweep (``TP8``, ``8k1k``, ``1P4D``, ``decode``), never a setting's value.

    (Offload and speculative-decoding names are values too: ``--kv-offload-backend mooncake``,
    ``--speculative-algorithm EAGLE``.)"""
    return (_parallel_token(text) is not None or _compound(text) is not None or bool(_SEQ.match(text))
            or bool(_WORKERS.match(text)) or text.lower() in ROLE_WORDS)


def _both_roles(toks: Sequence[Tok], i: int) -> bool:
    """``prefill and decode``, ``decode/prefill``: the role word at ``i`` is one of a pair naming both."""
    other = "decode" if toks[i].low == "prefill" else "prefill"
    lows = [t.low for t in toks]
    after = lows[i + 1:i + 3]
    before = lows[max(0, i - 2):i]
    return (len(after) == 2 and after[0] in ("and", "or", "/", "&") and after[1] == other) or (
        len(before) == 2 and before[1] in ("and", "or", "/", "&") and before[0] == other)


def either_way(toks: Sequence[Tok]) -> set[int]:
    """Tokens after "with and without" ("with/without", "with or without"), of "without X and with Y", or of "with X
    from concurrency N": what the text says both ways is no part of any arm, nor a setting's state ("Sweeps tp 4/8
    with and without EP and dp-attn at 1k1k and 8k1k", "swept at c1-16 both without KV offload and with native CPU
    KV offload", "TP4 at concurrency 1-16 with Simple CPU KV offload from concurrency 6")."""
    out: set[int] = set()
    lows = [t.low for t in toks]
    for i, low in enumerate(lows):
        both = low in ("with/without", "w/wo") or (low == "with" and lows[i + 1:i + 3] in (["and", "without"],
                                                                                           ["or", "without"]))
        # where the words said the second way start: after "with/without", "with and without" or "... and with"
        start = i + (1 if low != "with" else 3)
        if low == "without":
            # "without X and with Y": X and Y are the two sides
            k = i + 1
            while k < len(toks) and k < i + 6 and lows[k] not in _EITHER_WAY_ENDS and lows[k:k + 2] not in (
                    ["and", "with"], ["or", "with"]):
                k += 1
            if lows[k:k + 2] in (["and", "with"], ["or", "with"]) and k > i + 1:
                out.update(range(i + 1, k))
                both, start = True, k + 2
        if low == "with" and not both:
            # "with vLLM Simple CPU KV offload from concurrency 6": without it below that point, with it from there
            k = i + 1
            while k < len(toks) and k < i + 9 and lows[k] not in _EITHER_WAY_ENDS and lows[k] != "from":
                k += 1
            if k > i + 1 and lows[k:k + 1] == ["from"] and k + 1 < len(toks) and (
                    lows[k + 1] in ("conc", "concurrency") or re.fullmatch(r"c\d+", lows[k + 1])):
                out.update(range(i + 1, k))
            continue
        if not both:
            continue
        k = start
        while k < len(toks) and lows[k] not in _EITHER_WAY_ENDS:
            out.add(k)
            k += 1
        if lows[k:k + 1] == ["("] and k > start:
            # "... and with native CPU KV offload (SimpleCPUOffloadConnector, 120 GiB/GPU host DRAM)": the aside
            # names the side said last
            while k < len(toks) and lows[k] != ")":
                out.add(k)
                k += 1
    return out


_EITHER_WAY_ENDS = frozenset({"at", "for", "on", "in", "across", "over", ",", ";", "(", ":"})


def atoms(toks: Sequence[Tok], live: Sequence[bool]) -> list[Atom]:
    """Every designator of a token list, skipping tokens that are not ``live`` (masked history)."""
    out: list[Atom] = []
    either = either_way(toks)
    i = 0
    while i < len(toks):
        if not live[i] or i in either:
            i += 1
            continue
        found = _word_arms(toks, i)
        if found is None:
            i += 1
            continue
        arms, width = found
        out.append(Atom(i, i + width, arms))
        i += width
    return _bare_tp(toks, live, out)


def _bare_tp(toks: Sequence[Tok], live: Sequence[bool], found: list[Atom]) -> list[Atom]:
    """A bare ``TP`` listed next to another band (``both TP and DEP``) is the band without DP-attention."""
    taken = {k for a in found for k in range(a.start, a.end)}
    extra: list[Atom] = []
    for i, t in enumerate(toks):
        if t.text != "TP" or not live[i] or i in taken:
            continue
        near = [a for a in found if (a.end <= i and all(toks[k].low in _GLUE_LIST | {","} for k in range(a.end, i)))
                or (a.start > i and all(toks[k].low in _GLUE_LIST | {","} for k in range(i + 1, a.start)))]
        if any(a.arm.parallel.dp_attn is not None for a in near):
            extra.append(Atom(i, i + 1, (Arm(Parallel(dp_attn=False), label="TP"),)))
    return sorted([*found, *extra], key=lambda a: a.start)


_GLUE_LIST = {"and", "or", "vs", "vs.", "versus", "both", "either", "和", "及", "或"}
_GLUE_SKIP = {"the", "a", "an", "at", "on", "native", "plain", "pure", "full", "single", "one", "each", "every", "all",
              "attention", "moe"}


@dataclass(frozen=True)
class Group:
    """Adjacent designators read as one name: its arms are alternatives (each a part of the sweep)."""

    start: int  # token range [start, end)
    end: int
    arms: tuple[Arm, ...]
    # The other reading, where designators joined by "," or "+" are items of a list rather than one arm
    # ("DEP16/DEP32 + TP=4", "TP4/DEP4 prefill, ..., hicache"); the same as ``arms`` when there is none.
    loose: tuple[Arm, ...] = ()


def attributes(arm: Arm) -> set[str]:
    """The attributes an arm sets (``tp``, ``dp_attn``, ``offload``, ...), to tell a list from a qualifier."""
    out = {f"{role}.{name}" for role, par in (("", arm.parallel), ("prefill", arm.prefill), ("decode", arm.decode))
           for name in PARALLEL_DIMENSIONS if getattr(par, name) is not None}
    out |= {name for name in ("offload", "spec", "seq", "workers", "disagg", "eval_only") if getattr(arm, name) is not None}
    return out


def _item_arms(atoms_: list[Atom], joins: list[list[str]]) -> list[Arm]:
    """The arms of one list item: its atoms together ("TP8 GPU-resident"), "+/-" as with and without."""
    out = list(atoms_[0].arms)
    for atom, between in zip(atoms_[1:], joins):
        if "".join(between) == "+/-":
            out = out + [m for a in out for b in atom.arms if (m := a.merged(b)) is not None]
            continue
        merged = [m for a in out for b in atom.arms if (m := a.merged(b)) is not None]
        out = merged if len(merged) == len(out) * len(atom.arms) else out + list(atom.arms)
    return out


def _combine_items(items: list[list[Arm]], listed: bool) -> list[Arm]:
    """List items as arms.

    Items naming the same kinds of thing are alternatives ("TP8 GPU-resident, DEP8 Mooncake"), unless each
    sets other attributes of one arm and nothing says "and"/"or" ("TP8, DPA8, EP8"); items of different
    kinds multiply ("1k1k and 8k1k, TP4 and TP8" is four arms).
    """
    dims: list[tuple[frozenset[str], list[list[Arm]]]] = []
    previous: list[Arm] = []
    for item in items:
        sig = frozenset(k for a in item for k in kinds(a))
        before = frozenset(k for a in previous for k in kinds(a))
        if listed and previous and sig & before and sig < before and len(previous) == 1:
            # "disaggregated TP4 and DEP16": the second item is disaggregated too.
            item = [share_unnamed(a, previous[0]) for a in item]
            sig = before
        previous = item
        # Items naming a kind of thing an earlier dimension names are its alternatives ("TP4, TEP8, and
        # DEP4/DEP16 prefill/decode" is one list though the last item also says P/D).
        dim = next((d for d in dims if d[0] == sig or (listed and d[0] & sig)), None)
        if dim is None:
            dims.append((sig, [item]))
        else:
            dim[1].append(item)
    out = [Arm()]
    for _, dim_items in dims:
        alternatives = [a for item in dim_items for a in item]
        one = _one_arm(dim_items) if not listed else None
        choices = [one] if one is not None else alternatives
        out = [m for a in out for b in choices if (m := a.merged(b)) is not None] or out
    return out


def _one_arm(items: list[list[Arm]]) -> Arm | None:
    """Items that each set other attributes of a single arm ("TP8, DPA8, EP8"), merged; else None."""
    if len(items) < 2 or any(len(item) != 1 for item in items):
        return None
    arm = items[0][0]
    seen = attributes(arm)
    for item in items[1:]:
        other = item[0]
        merged = arm.merged(other)
        if merged is None or (seen & attributes(other) and merged != arm):
            return None
        seen |= attributes(other)
        arm = replace(merged, label=join_labels(arm.label, other.label))
    return arm


def without_ep_if_contrasted(arm: Arm, others: Sequence[Arm]) -> Arm:
    """A bare TPn among other arms of which one has expert parallelism is the arm without it."""
    if arm.parallel.bare_tp and arm.parallel.ep is None and any(
            (o.parallel.ep or 1) > 1 or (o.prefill.ep or 1) > 1 or (o.decode.ep or 1) > 1 for o in others):
        return replace(arm, parallel=replace(arm.parallel, ep=1))
    return arm


def groups(toks: Sequence[Tok], found: Sequence[Atom]) -> list[Group]:
    """Atoms joined where only glue separates them: items of a list, each item the atoms written together."""
    out: list[Group] = []
    members: list[tuple[Atom, list[str]]] = []  # each atom with the words between it and the one before

    def close() -> None:
        if members:
            out.append(_group(members))

    for atom in found:
        if members:
            last = members[-1][0]
            between = [t.low for t in toks[last.end:atom.start]]
            as_list = any(w in _GLUE_LIST for w in between)
            # "A and B" is a list only of the same kind of thing ("TP4 and TEP4", "SimpleCPU and Mooncake");
            # "... with EP1 and DEP points" ends one arm and starts another.
            same_kind = bool(attributes(last.arm) & attributes(atom.arm)) or (_complete(last.arm) and _complete(atom.arm))
            if (all(w in _GLUE_MERGE | _GLUE_LIST | _GLUE_SKIP for w in between) and len(between) <= 4
                    and (not as_list or same_kind)):
                members.append((atom, between))
                continue
            close()
        members = [(atom, [])]
    close()
    return [_contrast_defaults(g) for g in _without_glosses(toks, out)]


def _without_glosses(toks: Sequence[Tok], found: list[Group]) -> list[Group]:
    """``... and TP8+EP8 dp-attn (DEP)``: a parenthesis right after a list that only restates its last item is a
    gloss of that item, not a qualifier of every item of the list."""
    out: list[Group] = []
    for g in found:
        before = out[-1] if out else None
        if (before is not None and before.arms and g.start == before.end + 1 and toks[before.end].text == "("
                and g.end < len(toks) and toks[g.end].text == ")"
                and all(before.arms[-1].merged(b) == before.arms[-1] for b in g.arms)):
            continue
        out.append(g)
    return out


def _group(members: list[tuple[Atom, list[str]]]) -> Group:
    def items(separators: set[str]) -> tuple[list[list[Arm]], bool, bool]:
        out: list[list[Arm]] = []
        cur: list[Atom] = []
        joins: list[list[str]] = []
        glued: list[bool] = []  # per separator between items: an "and"/"or" is in it
        for atom, between in members:
            if cur and (set(between) & separators or set(between) & _GLUE_LIST):
                glued.append(bool(set(between) & _GLUE_LIST))
                out.append(_item_arms(cur, joins))
                cur, joins = [], []
            elif cur:
                joins.append(between)
            cur.append(atom)
        out.append(_item_arms(cur, joins))
        # "TP8, DEP8, 1P1D, and 2P1D": one enumeration (a single "and" before its last item) of alternatives of
        # each kind it names, each item a part of the sweep of its own; "1k1k and 8k1k, TP4 and TP8" is two lists
        # whose items multiply, and in "1k1k, TP4 and TP8" the one item of its kind qualifies the others.
        enumeration = len(out) >= 3 and glued[-1:] == [True] and glued.count(True) == 1 and _two_of_each_kind(out)
        return out, any(glued), enumeration

    tight, listed, enumeration = items({","})
    loose, _, _ = items({",", "+"})
    start, end = members[0][0].start, members[-1][0].end
    arms = [a for item in tight for a in item] if enumeration else _combine_items(tight, listed)
    return Group(start, end, tuple(arms), tuple(_combine_items(loose, True)))


def _two_of_each_kind(items: list[list[Arm]]) -> bool:
    """The items name more than one kind of thing, and two items or more each kind."""
    kinds_named = Counter(frozenset(k for a in item for k in kinds(a)) for item in items)
    return len(kinds_named) > 1 and min(kinds_named.values()) >= 2


def _complete(arm: Arm) -> bool:
    """A whole parallelism (``TP8``, ``DEP8``, ``TEP4``, ``DEP8 decode``), not one attribute of one (``EP1``, ``DPA``)."""
    return any(_whole(p) for p in (arm.parallel, arm.prefill, arm.decode))


def _whole(p: Parallel) -> bool:
    """A parallelism named whole: a TP width, or an EP width whose DP attention the name states (DEPn, TEPn)."""
    return p.tp is not None or (p.ep is not None and p.dp_attn is not None)


def _contrast_defaults(group: Group) -> Group:
    """In ``TP4 and TEP4``, the bare TP4 is the arm without expert parallelism."""
    eps = {a.parallel.ep for a in group.arms if a.parallel.ep is not None and a.parallel.ep > 1}
    if not eps:
        return group

    def default(arms: tuple[Arm, ...]) -> tuple[Arm, ...]:
        return tuple(replace(a, parallel=replace(a.parallel, ep=1)) if a.parallel.bare_tp and a.parallel.ep is None
                     else a for a in arms)

    return replace(group, arms=default(group.arms), loose=default(group.loose))


def finish(arm: Arm) -> Arm:
    """The arm as jobs are matched against it: defaults applied, a parallelism named with a role given to it."""
    if arm.role and not arm.parallel.empty:
        moved = (arm.prefill if arm.role == "prefill" else arm.decode).merged(arm.parallel)
        if moved is not None and arm.role == "prefill":
            arm = replace(arm, parallel=Parallel(), prefill=moved)
        elif moved is not None:
            arm = replace(arm, parallel=Parallel(), decode=moved)
    return replace(arm, parallel=arm.parallel.finished(), prefill=arm.prefill.finished(), decode=arm.decode.finished())
