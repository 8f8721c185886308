"""Settings the real tree's recipes pass, and an edit of each in a copy of the tree.

A setting is what the evaluator says a job's server receives, read from its
own view (:class:`RecipeEval`, as ``recipe show`` prints it): a flag and its
value, a key of a JSON/YAML flag value, an exported environment variable, a
flag given without a value; on a multinode job, per server role.  Only values
written literally where the evaluator says they were written can be edited
(the text at that line and column is the value, quoted or not).

An edit gives the setting a new value (the truth) and picks a lie (another
value).  The edited copy is evaluated again; the scope of the entry is one
config whose every job now runs the new value, or the jobs of one arm of it
(``on TP8``, ``for 8k1k``) when the edit reaches only those.
"""

from __future__ import annotations

import hashlib
import re
import shlex
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Iterable, Mapping, Sequence

from ci_tools.claims.text.subjects import CONTRACT_NAMES
from ci_tools.claims.verdict.check import EvalCache
from ci_tools.config import ProjectConfig
from ci_tools.findings import Location
from ci_tools.jobs.job import Job
from ci_tools.jobs.resolution import job_settings
from ci_tools.shell.model import RecipeEval, Value

# --------------------------------------------------------------------------- the copy of the tree


class OverlaySnapshot:
    """The files of ``base`` with some replaced: a copy of the tree that shares what it does not change."""

    def __init__(self, base: object, changed: Mapping[str, bytes], label: str = "edited copy") -> None:
        self.base = base
        self.changed = dict(changed)
        self.label = label

    def read(self, path: str) -> bytes | None:
        if path in self.changed:
            return self.changed[path]
        return self.base.read(path)  # type: ignore[attr-defined,no-any-return]

    def files(self) -> tuple[str, ...]:
        return self.base.files()  # type: ignore[attr-defined,no-any-return]

    def glob(self, pattern: str) -> list[str]:
        return self.base.glob(pattern)  # type: ignore[attr-defined,no-any-return]


# --------------------------------------------------------------------------- what a job passes


@dataclass(frozen=True)
class Seen:
    """One value a job's evaluation gives a setting, and where the evaluator says it was written."""

    kind: str  # flag | key | env | switch (a flag without a value)
    name: str  # --mem-fraction-static, --config.kv_cache_config.dtype, SGLANG_USE_AITER
    role: str  # "" (single-node, or the job's environment) | prefill | decode | aggregated
    text: str  # the value ("" for a switch)
    where: Location


def seen_values(ev: RecipeEval) -> list[Seen]:
    """Every setting of one evaluation whose value is known and not conditional."""
    out: list[Seen] = []
    for i, server in enumerate(ev.servers):
        role = ev.role_of(i) if ev.roles else ""
        for flag in server:
            if flag.conditional or flag.name.startswith("<"):
                continue
            if flag.value is None:
                out.append(Seen("switch", flag.name, role, "", flag.location))
                continue
            if flag.keys:
                for key in flag.keys:
                    if "[" not in key.path and _plain(key.value):
                        out.append(Seen("key", f"{flag.name}.{key.path}", role, key.value.text or "",
                                        key.value.location))
                continue
            if _plain(flag.value):
                kind = "key" if "." in flag.name else "flag"
                out.append(Seen(kind, flag.name, role, flag.value.text or "", flag.value.location))
        if ev.server_env:
            for name, value in ev.env_of(i).items():
                if _plain(value):
                    out.append(Seen("env", name, role, value.text or "", value.location))
    if not ev.server_env:
        for name, value in ev.env.items():
            if _plain(value):
                out.append(Seen("env", name, "", value.text or "", value.location))
    return out


def _plain(v: Value) -> bool:
    return v.known and not v.conditional and not v.alternatives


# Files whose values every job shares (the library every recipe sources): an edit there is no recipe's.
_SHARED = ("benchmarks/benchmark_lib.sh",)


def family(job: Job, resolution_kind: str) -> str:
    """The recipe family a job belongs to: how it is launched, and the framework."""
    framework = str(job.fields.get("framework", "?"))
    if not job.multinode:
        return f"single-node {framework}"
    if resolution_kind == "srt-slurm":
        return f"srt-slurm {framework}"
    recipe = job_settings(job).get("CONFIG_FILE", "")
    if "llm-d" in recipe or framework.startswith("llm-d"):
        return f"llm-d {framework}"
    return f"multinode script {framework}"


# --------------------------------------------------------------------------- values and their edits


DTYPE_STYLES = (("fp8", "bf16", "fp4", "fp16"), ("bfloat16", "float16", "float32"))
_DTYPE_WORDS = {w for style in DTYPE_STYLES for w in style} | {"fp8_e4m3", "fp8_e5m2", "mxfp4", "nvfp4", "int8", "int4"}


def value_kind(text: str, kind: str, name: str) -> str:
    """What sort of value a setting takes, as far as prose states it: number, fraction, float, switch (0/1 of an
    on/off variable), bool, dtype, word, list; "" for what no sentence states (paths, JSON, model names)."""
    t = text.strip()
    low = t.lower()
    if kind == "switch":
        return "present"
    if re.fullmatch(r"[01]", t) and (kind == "env" or re.search(r"(?:^|[-_.])(?:enable|disable|use|no)(?:[-_]|$)",
                                                                  name, re.I)):
        return "switch"
    if re.fullmatch(r"\d+", t):
        return "number" if int(t) >= 1 else ""
    if re.fullmatch(r"\d+\.\d+", t):
        return "fraction" if 0 < float(t) < 1 else "float"
    if low in ("true", "false"):
        return "bool"
    if low in _DTYPE_WORDS:
        return "dtype"
    if re.fullmatch(r"\[\d+(?:,\s*\d+)+\]|\d+(?:,\d+)+", t):
        return "list"
    if re.fullmatch(r"[A-Za-z][A-Za-z0-9_.-]{1,39}", t) and "/" not in t and not re.search(r"\.(?:ya?ml|json|sh|py)$", t):
        return "word"
    return ""


def _stable(text: str) -> int:
    return int(hashlib.sha1(text.encode()).hexdigest()[:8], 16)


def _fmt_float(x: float, like: str) -> str:
    decimals = max(2, len(like.partition(".")[2]))
    return f"{x:.{decimals}f}".rstrip("0").rstrip(".") if decimals > 2 else f"{x:.2f}"


def new_values(old: str, vkind: str, key: str, alternatives: Sequence[str]) -> tuple[str, str] | None:
    """(truth, lie): the value the edit writes and another value a false sentence states; None when the
    setting has no second value to take (a word no other recipe gives it)."""
    up = _stable(key) % 2 == 0  # half the numbers go up, half down: "raise" and "lower" both get said
    t = old.strip()
    if vkind == "switch":
        return ("0" if t == "1" else "1"), t
    if vkind == "bool":
        flipped = {"true": "false", "false": "true"}[t.lower()]
        flipped = flipped.capitalize() if t[0].isupper() else flipped
        return flipped, t
    if vkind == "number":
        n = int(t)
        if up or n < 4 or n % 4:
            return str(n * 2), str(n * 4)
        return str(n // 2), str(n // 4)
    if vkind == "fraction":
        a = float(t)
        if up and a <= 0.9:
            return _fmt_float(a + 0.03, t), _fmt_float(a + 0.06, t)
        return _fmt_float(a - 0.05, t), _fmt_float(a - 0.1, t)
    if vkind == "float":
        a = float(t)
        return _fmt_float(a + 1, t), _fmt_float(a + 2, t)
    if vkind == "dtype":
        style = next((s for s in DTYPE_STYLES if t.lower() in s), DTYPE_STYLES[0])
        pool = [d for d in style if not t.lower().startswith(d)]
        shown = [d.upper() if t.isupper() else d for d in pool]
        return shown[0], shown[1]
    if vkind == "word":
        # Values that differ in more than case and separators: deepseek-v4 and deepseek_v4 are one name.
        def norm(a: str) -> str:
            return re.sub(r"[^a-z0-9]", "", a.lower())
        by_norm = {norm(a): a for a in sorted(alternatives, reverse=True) if value_kind(a, "flag", "") == "word"}
        others = sorted(a for n, a in by_norm.items() if n != norm(t))
        if not others:
            return None
        return others[0], (others[1] if len(others) > 1 else t)
    if vkind == "list":
        items = [int(x) for x in re.findall(r"\d+", t)]
        longer = items + [items[-1] * 2]
        shorter = items[:-1]
        def shaped(xs: list[int]) -> str:
            if t.startswith("["):
                sep = ", " if ", " in t else ","
                return "[" + sep.join(map(str, xs)) + "]"
            return ",".join(map(str, xs))
        return shaped(longer), shaped(shorter) if len(shorter) >= 2 else shaped(items + [items[-1] * 4])
    return None


# --------------------------------------------------------------------------- the edit itself


def _line_at(data: bytes, line: int) -> tuple[int, bytes] | None:
    lines = data.split(b"\n")
    if not 1 <= line <= len(lines):
        return None
    return sum(len(x) + 1 for x in lines[:line - 1]), lines[line - 1]


def literal_span(data: bytes, where: Location, text: str, name: str = "") -> tuple[int, int] | None:
    """Byte offsets of the value ``text`` written at ``where`` (inside its quotes when quoted), or None when the
    text there is not the value (a value the recipe computed, a default the job's environment overrides).

    The evaluator gives the position of the value itself, or of what wrote it: ``NAME=value`` of an export,
    the JSON text of a structured flag, a string of several flags; then the value is the one written after
    the setting's own name on that line, when the line names it once."""
    found = _line_at(data, where.line)
    if found is None or where.column < 1:
        return None
    line_start, line = found
    start = line_start + where.column - 1
    raw = text.encode()
    for skip in (0, 1):  # a quote before the value
        at = start + skip
        if data[at:at + len(raw)] == raw and (skip == 0 or data[start:start + 1] in (b'"', b"'")):
            end = at + len(raw)
            follow = data[end:end + 1]
            if follow and (follow.isalnum() or follow in b"_.-") and not raw.endswith(b"]"):
                return None  # only the front of a longer word
            if data[at - 2:at] == b":-" or data[at - 3:at] == b":-\"":
                return None  # a default the environment may override
            return at, end
    if not name:
        return None
    leaf = name.rsplit(".", 1)[-1] if "." in name else name
    bare = re.escape(leaf.lstrip("-").encode())
    value = re.escape(raw)
    patterns = [
        rb"(?<![\w-])" + re.escape(leaf.encode()) + rb"(?:=|\s+)[\"']?(" + value + rb")(?![\w.-])",  # --flag v, NAME=v
        rb"\\?[\"']" + bare + rb"\\?[\"']\s*:\s*\\?[\"']?(" + value + rb")(?![\w.-])",  # "key": v (JSON)
    ]
    for pattern in patterns:
        hits = list(re.finditer(pattern, line))
        if len(hits) == 1:
            m = hits[0]
            return line_start + m.start(1), line_start + m.end(1)
    return None


def switch_span(data: bytes, where: Location, name: str) -> tuple[int, int] | None:
    """The bytes to delete to stop passing the flag ``name`` written at ``where``: ``--flag`` and the blanks after
    it on a command line, or the whole ``flag: true`` line of a YAML mapping."""
    lines = data.split(b"\n")
    if not 1 <= where.line <= len(lines):
        return None
    line_start = sum(len(line) + 1 for line in lines[:where.line - 1])
    line = lines[where.line - 1]
    at = line_start + where.column - 1
    bare = name.lstrip("-").encode()
    if data[at:at + len(name)] == name.encode():
        end = at + len(name)
        while data[end:end + 1] in (b" ", b"\t"):
            end += 1
        return at, end
    m = re.match(rb"\s*" + re.escape(bare) + rb"\s*:\s*(?:true|True|\"\"|'')?\s*(?:#.*)?$", line)
    if m and data[at:at + len(bare)] == bare:
        return line_start, line_start + len(line) + 1
    hits = list(re.finditer(rb"(?<![\w-])" + re.escape(name.encode()) + rb"(?![\w-])[ \t]*", line))
    if len(hits) == 1:  # one flag of a string of several ("--trust-remote-code" in PREFILL_CMD="...")
        return line_start + hits[0].start(), line_start + hits[0].end()
    return None


@dataclass
class Setting:
    """One setting of one recipe location, and the edit planned for it."""

    kind: str  # flag | key | env | switch
    name: str
    role: str
    family: str
    path: str
    line: int
    column: int
    old: str  # the value written there ("" for a switch)
    vkind: str
    # Every place the config's jobs take the setting from (path, line, column, value written), the first
    # one above included: the edit writes the new value at each.
    places: tuple[tuple[str, int, int, str], ...] = ()
    truth: str = ""  # the value after the edit ("" for a switch removed or kept)
    lie: str = ""
    removed: bool = False  # a switch: the edit stops passing it (else it is passed, unedited)
    config_key: str = ""
    scenario: str = ""  # the entry's scenario-type when the config has others the edit does not reach
    arm: str = ""  # words that name the jobs the edit reaches within the config ("TP8", "8k1k"), or ""
    role_named: bool = False  # the other role passes the setting with another value: a sentence must name the role
    table_key: str = ""  # the key the value is written under when it is not the setting's own spelling
    jobs: int = 0
    others: dict[str, str] = field(default_factory=dict)  # unedited settings of the same jobs: name -> value
    # The one value every other job of the config (of the edited jobs' scenarios) has, when the edit reaches an arm
    # of it and they all share one: the default a sentence states beside its exception ("256, 128 on TP8").
    rest: str = ""
    # An edit of one arm only: the TP whose jobs get the new value while the config's other jobs keep the old one
    # (the recipe chooses between the two on $TP), for sentences that state a default and its exception.
    split_tp: str = ""

    @property
    def key(self) -> str:
        return f"{self.kind} {self.name} {self.role} {self.path}:{self.line}:{self.column}"

    @property
    def edited(self) -> bool:
        return self.kind != "switch" or self.removed

    def to_json(self) -> dict[str, object]:
        required = ("kind", "name", "role", "family", "path", "line", "column", "old", "vkind")
        return {k: v for k, v in self.__dict__.items() if k in required or v not in ("", 0, False, {}, ())}

    @staticmethod
    def from_json(data: Mapping[str, object]) -> "Setting":
        fields = dict(data)
        fields["places"] = tuple(tuple(p) for p in fields.get("places", ()))  # type: ignore[attr-defined]
        return Setting(**fields)  # type: ignore[arg-type]


def edited_files(setting: Setting, read: object) -> dict[str, bytes] | str:
    """Each file the setting is written in, with the new value at every place (or the switch removed there);
    a reason when a place does not hold what the evaluator says."""
    by_path: dict[str, list[tuple[int, int, str]]] = {}
    for path, line, column, old in setting.places or ((setting.path, setting.line, setting.column, setting.old),):
        by_path.setdefault(path, []).append((line, column, old))
    out: dict[str, bytes] = {}
    for path, places in by_path.items():
        data = read.read(path)  # type: ignore[attr-defined]
        if data is None:
            return f"{path} is gone"
        spans: list[tuple[int, int]] = []
        for line, column, old in places:
            where = Location(path, line, column)
            span = switch_span(data, where, setting.name) if setting.kind == "switch" else \
                literal_span(data, where, old, setting.name)
            if span is None:
                return f"{path}:{line}:{column} does not hold the value the evaluator gives"
            spans.append(span)
        if setting.kind == "switch" and not setting.removed:
            continue
        new = setting.truth.encode() if setting.kind != "switch" else b""
        if setting.split_tp:
            new = b"${" + SPLIT_VARIABLE + b"}"
        for start, end in sorted(set(spans), reverse=True):
            data = data[:start] + new + data[end:]
        out[path] = _choose_on_tp(data, setting) if setting.split_tp else data
    return out


SPLIT_VARIABLE = b"ARM_SPLIT_VALUE"


def _choose_on_tp(data: bytes, setting: Setting) -> bytes:
    """The recipe with the split value chosen on $TP before anything else runs (after a shebang line)."""
    name = SPLIT_VARIABLE.decode()
    choose = (f'if [[ "$TP" == "{setting.split_tp}" && "${{DP_ATTENTION:-false}}" != "true" ]]; '
              f'then {name}={shlex.quote(setting.truth)}; '
              f'else {name}={shlex.quote(setting.old)}; fi\n').encode()
    at = data.index(b"\n") + 1 if data.startswith(b"#!") and b"\n" in data else 0
    return data[:at] + choose + data[at:]


def table_key_of(data: bytes, setting: Setting) -> str:
    """``mem_fraction_static`` of ``mem_fraction_static: 0.8`` when the value is written under a key that is not
    the setting's name as the text would spell it (a models-table key)."""
    where = Location(setting.path, setting.line, setting.column)
    span = literal_span(data, where, setting.old, setting.name) if setting.old else None
    if span is None:
        return ""
    line_start = data.rfind(b"\n", 0, span[0]) + 1
    before = data[line_start:span[0]].decode("utf-8", "replace")
    m = re.fullmatch(r"\s*-?\s*([A-Za-z_][A-Za-z0-9_]*)\s*[:=]\s*[\"']?", before)
    if not m:
        return ""
    key = m.group(1)
    own = setting.name.lstrip("-").rsplit(".", 1)[-1]
    if key.lower().replace("_", "-") == own.lower().replace("_", "-") and "_" not in key:
        return ""  # the setting's own name (a YAML mapping of flags spells them as the flag)
    if key == setting.name or key.lower().replace("_", "-") != own.lower().replace("_", "-"):
        return ""  # another variable that feeds it, or the name itself: not a table key of this setting
    return key


# --------------------------------------------------------------------------- which jobs run what


def job_value(ev: RecipeEval | None, kind: str, name: str, role: str) -> str | None:
    """The value a job's evaluation gives the setting on the servers of ``role`` ("present"/"absent" for a
    switch); None when unknown or when the servers disagree."""
    if ev is None or ev.errors or not ev.servers:
        return None
    found: set[str] = set()
    for s in seen_values(ev):
        if s.name == name and (s.role == role or not role or s.role in ("", "aggregated")) and \
                (s.kind == kind or {s.kind, kind} <= {"flag", "key"}):
            found.add(s.text if kind != "switch" else "present")
    if kind == "switch":
        servers = [i for i in range(len(ev.servers)) if not role or ev.role_of(i) in (role, "aggregated")]
        if not found and servers:
            return "absent"
    return next(iter(found)) if len(found) == 1 else None


def other_role_value(ev: RecipeEval | None, kind: str, name: str, role: str) -> str | None:
    if not role or role == "aggregated" or ev is None:
        return None
    other = {"prefill": "decode", "decode": "prefill"}.get(role)
    return job_value(ev, kind, name, other) if other else None


_SEQ_WORDS = {(1024, 1024): "1k1k", (8192, 1024): "8k1k", (1024, 8192): "1k8k"}


def arm_of(chosen: Sequence[Job], rest: Sequence[Job]) -> str:
    """Words naming exactly the jobs ``chosen`` among ``chosen + rest``, when one field tells them apart."""
    if not rest:
        return ""
    for words in (_tp_words, _seq_words):
        mine = {words(j) for j in chosen}
        if len(mine) == 1 and None not in mine and not {words(j) for j in rest} & mine:
            return next(iter(mine)) or ""
    return ""


def _tp_words(job: Job) -> str | None:
    """"TP8" of a job without DP attention; None of one with it (this repository's names: the TP8 of a DEP8 job
    is not its TP8 arm, so an edit that reaches it is not named by its TP)."""
    if job.multinode or job.fields.get("dp-attn") is True:
        return None
    return f"TP{job.fields.get('tp')}"


def _seq_words(job: Job) -> str | None:
    isl, osl = job.fields.get("isl"), job.fields.get("osl")
    return _SEQ_WORDS.get((isl, osl)) if isinstance(isl, int) and isinstance(osl, int) else None


def split_arm(planned: Setting, jobs: Sequence[Job]) -> Setting | None:
    """The setting to be edited again on one TP of its config only (the TP with the fewest jobs; the highest of
    equals), when the first edit reached every job of a single-node config that runs several TPs; else None."""
    if planned.arm or planned.kind == "switch" or not planned.path.endswith(".sh") or any(j.multinode for j in jobs):
        return None
    arms = Counter(words[2:] for job in jobs if (words := _tp_words(job)) is not None)  # "TP8" -> "8"
    if not arms:
        return None
    tp = min(arms, key=lambda t: (arms[t], -int(t) if t.isdigit() else 0))
    if arms[tp] == len(jobs):
        return None  # the arm would be every job
    return replace(planned, split_tp=tp, arm="", rest="", others={})


def plan(setting: Setting, config: ProjectConfig, base: object, jobs_of: Mapping[str, Sequence[Job]],
         configs: Iterable[str]) -> tuple[Setting, OverlaySnapshot, EvalCache] | str:
    """The setting with its scope, the edited copy of the tree and its evaluations; or why the setting cannot
    be stated truly."""
    data = base.read(setting.path)  # type: ignore[attr-defined]
    edited = edited_files(setting, base)
    if isinstance(edited, str) or data is None:
        return edited if isinstance(edited, str) else "file gone"
    setting = replace(setting, table_key=table_key_of(data, setting) if setting.kind != "switch" else "")
    overlay = OverlaySnapshot(base, edited)
    cache = EvalCache(config)
    want = ("absent" if setting.removed else "present") if setting.kind == "switch" else setting.truth
    reasons: list[str] = []
    for key in sorted(configs, key=lambda k: (len(jobs_of[k]), k)):
        jobs = list(jobs_of[key])
        evals = {j.id: cache.evaluate(j, overlay) for j in jobs}
        values = {j.id: job_value(evals[j.id], setting.kind, setting.name, setting.role) for j in jobs}
        reached = [j for j in jobs if values[j.id] == want]
        if not reached:
            reasons.append(f"{key}: no job runs the edit")
            continue
        scenarios = {j.scenario for j in reached}
        rest = [j for j in jobs if values[j.id] != want and j.scenario in scenarios]
        arm = arm_of(reached, rest)
        if rest and not arm:
            reasons.append(f"{key}: the edit reaches {len(reached)} of {len(reached) + len(rest)} jobs, no arm of them")
            continue
        others = {other_role_value(evals[j.id], setting.kind, setting.name, setting.role) for j in reached}
        role_named = any(o is not None and o != want for o in others)
        scenario = next(iter(scenarios)) if len({j.scenario for j in jobs}) > 1 and len(scenarios) == 1 else ""
        unedited = _unedited(setting, [evals[j.id] for j in reached], setting.role if role_named else "")
        rest_values = {values[j.id] for j in rest}
        rest_value = next(iter(rest_values)) if arm and len(rest_values) == 1 else None
        return replace(setting, config_key=key, scenario=scenario, arm=arm, role_named=role_named, jobs=len(reached),
                       others=unedited, rest=rest_value or ""), overlay, cache
    return "; ".join(reasons[:3]) or "no config"


def _unedited(setting: Setting, evals: Sequence[RecipeEval | None], role: str) -> dict[str, str]:
    """Other numeric flags every reached job passes with one value, on the servers of ``role`` (every server when
    the sentence names none): a second claim for the same sentence."""
    shared: dict[str, str] | None = None
    for ev in evals:
        names = {s.name for s in seen_values(ev) if s.kind == "flag"} if ev is not None else set()
        mine = {n: v for n in names if n != setting.name and (v := job_value(ev, "flag", n, role)) is not None
                and re.fullmatch(r"\d+", v) and int(v) > 1}
        shared = mine if shared is None else {k: v for k, v in shared.items() if mine.get(k) == v}
    return dict(sorted((shared or {}).items())[:3])


# --------------------------------------------------------------------------- every setting of the tree


@dataclass
class Discovery:
    candidates: dict[tuple[str, str, str], list[Setting]]  # (kind, name, family) -> locations, best first
    alternatives: dict[tuple[str, str], set[str]]  # (kind, name) -> every value the tree gives it
    jobs_at: dict[str, set[str]]  # setting key -> config keys whose jobs pass it from there
    skipped: dict[str, int]  # why a seen value is no candidate -> count


# Settings whose values are names of one kind whatever the setting (another backend's name is a backend).
_NAME_TAKERS = {"backend", "parser", "algorithm", "method", "strategy", "policy", "dtype"}


def discover(evals: Mapping[str, RecipeEval | None], jobs: Sequence[Job], kinds: Mapping[str, str],
             read: object) -> Discovery:
    """Every literal setting of every job (``kinds``: job id -> resolution kind), one candidate per config that
    passes it: the places its jobs take it from, all of which the edit rewrites."""
    places: dict[tuple[str, str, str, str, str], dict[tuple[str, int, int], str]] = {}
    alternatives: dict[tuple[str, str], set[str]] = {}
    skipped: dict[str, int] = {}

    def skip(why: str) -> None:
        skipped[why] = skipped.get(why, 0) + 1

    for job in jobs:
        ev = evals.get(job.id)
        if ev is None or ev.errors:
            continue
        fam = family(job, kinds.get(job.id, ""))
        for s in seen_values(ev):
            kind = "flag" if s.kind == "key" and "." not in s.name else s.kind
            alternatives.setdefault((kind, s.name), set()).add(s.text)
            if not s.where.path.startswith("benchmarks/") or s.where.path in _SHARED or s.name in CONTRACT_NAMES:
                skip("written outside the recipes")
                continue
            group = (kind, s.name, fam, job.config_key, s.role)
            places.setdefault(group, {})[(s.where.path, s.where.line, s.where.column)] = s.text
    by_last_word: dict[str, set[str]] = {}
    for (kind, name), values in alternatives.items():
        by_last_word.setdefault(re.split(r"[-_.]", name)[-1].lower(), set()).update(values)
    candidates: dict[tuple[str, str, str], list[Setting]] = {}
    jobs_at: dict[str, set[str]] = {}
    for (kind, name, fam, config_key, role), found in sorted(places.items()):
        (path, line, column), text = min(found.items())
        vkind = value_kind(text, kind, name)
        if not vkind or any(value_kind(t, kind, name) != vkind for t in found.values()):
            skip("a value prose does not state (path, JSON, name)")
            continue
        ok = True
        for (p, ln, col), t in found.items():
            data = read.read(p)  # type: ignore[attr-defined]
            where = Location(p, ln, col)
            if data is None or (switch_span(data, where, name) if kind == "switch" else literal_span(data, where, t, name)) is None:
                ok = False
        if not ok:
            skip("not written literally where the evaluator says")
            continue
        probe = Setting(kind, name, role, fam, path, line, column, text if len(set(found.values())) == 1 else "",
                        vkind, places=tuple(sorted((p, ln, col, t) for (p, ln, col), t in found.items())))
        if kind == "switch":
            probe = replace(probe, removed=_stable(f"{kind} {name} {fam}") % 2 == 0)
        else:
            pool = alternatives.get((kind, name), set())
            last = re.split(r"[-_.]", name)[-1].lower()
            if vkind == "word" and len(pool) < 2 and last in _NAME_TAKERS:
                pool = pool | by_last_word.get(last, set())
            pair = new_values(text, vkind, f"{kind} {name} {fam}", sorted(pool))
            if pair is None:
                skip("a word no other setting of its kind takes")
                continue
            probe = replace(probe, truth=pair[0], lie=pair[1])
        candidates.setdefault((kind, name, fam), []).append(probe)
        jobs_at[probe.key] = {config_key}
    for options in candidates.values():
        options.sort(key=lambda c: (len(c.places), c.path, c.line))
    return Discovery(candidates, alternatives, jobs_at, skipped)
