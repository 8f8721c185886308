"""Changes nobody wrote down: effective values that differ between base and head.

Jobs are paired across the two revisions by what identifies a point for a
reader (config key, scenario, sequence lengths, concurrency, and the
parallelism when that alone tells two points apart); a point that exists on
one side only is the coverage and append-only checks' business.  For each
pair, every server flag, exported env var and config field whose value
differs is a change; a change is documented when an appended description
names the subject (identifier, derived words, vocabulary) or its new value.

Being lenient here is deliberate: this rule asks for a sentence, it does not
check one, so any plausible mention counts.
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Any, Sequence

from ...config import ProjectConfig
from ...findings import Finding, Location, make_finding
from ...jobs.job import Job
from ...model.repository import RepoData
from ...revision.snapshot import Snapshot
from ...shell.model import RecipeEval
from ..text.subjects import CONTRACT_NAMES, identifier_words, stem
from .check import ClaimsReport, EntryInput, EvalCache, entry_jobs
from .rules import CLAIM_UNDOCUMENTED_CHANGE

CONFIG_FIELDS = ("image", "tp", "ep", "dp-attn", "spec-decoding", "kv-offloading")
_GENERIC = {"max", "min", "num", "size", "mode", "type", "enable", "token", "config", "path", "use", "value",
            "default", "total", "per", "dp", "tp", "ep", "kv", "gpu", "server", "port", "host", "model", "rate",
            "length", "len", "batch", "memory", "backend", "dtype", "level", "count", "interval", "http", "id"}


def _pair_key(job: Job) -> tuple[Any, ...]:
    f = job.fields
    return (job.config_key, job.scenario, f.get("isl"), f.get("osl"), tuple(job.concs))


def _pairs(base: Sequence[Job], head: Sequence[Job]) -> list[tuple[Job, Job]]:
    by_base: dict[tuple[Any, ...], list[Job]] = defaultdict(list)
    by_head: dict[tuple[Any, ...], list[Job]] = defaultdict(list)
    for j in base:
        by_base[_pair_key(j)].append(j)
    for j in head:
        by_head[_pair_key(j)].append(j)
    out: list[tuple[Job, Job]] = []
    for key, hs in by_head.items():
        bs = by_base.get(key, [])
        if len(bs) == 1 and len(hs) == 1:
            out.append((bs[0], hs[0]))
            continue
        # Several points at one concurrency: a point the change left as it was is itself (a row added beside it
        # at the same concurrency is a new point, not its change), the others are paired by their layout, and
        # by the row's place where the head has that layout twice.
        base_of = {b.id: b for b in bs}
        same_ids = set(base_of) & {h.id for h in hs}
        out.extend((base_of[h.id], h) for h in hs if h.id in same_ids)
        rest_b = [b for b in bs if b.id not in same_ids]
        rest_h = [h for h in hs if h.id not in same_ids]
        paired: list[tuple[Job, Job]] = []
        for h in rest_h:
            same = [b for b in rest_b if _layout(b) == _layout(h)]
            if len(same) == 1 and sum(_layout(o) == _layout(h) for o in rest_h) > 1:
                # two rows of that layout at the head, one at the base: the one where the base's row stood
                same = [b for b in same if (b.scenario_index, b.row_index) == (h.scenario_index, h.row_index)]
            if len(same) == 1:
                paired.append((same[0], h))
        left_b = [b for b in rest_b if all(b is not p for p, _ in paired)]
        left_h = [h for h in rest_h if all(h is not q for _, q in paired)]
        if len(left_b) == 1 and len(left_h) == 1:
            paired.append((left_b[0], left_h[0]))  # the one point left on each side: as a lone point is
        out.extend(paired)
    return out


def _layout(job: Job) -> tuple[Any, ...]:
    """What tells two points at one concurrency apart for a reader: the parallelism, per role on multinode jobs."""
    f = job.fields
    if job.multinode:
        return tuple(tuple((w or {}).get(k) for k in ("num-worker", "tp", "ep", "dp-attn"))
                     for w in (f.get("prefill"), f.get("decode"))) + (f.get("spec-decoding"),)
    return (f.get("tp"), f.get("ep"), f.get("dp-attn"))


def _flag_values(ev: RecipeEval) -> dict[str, tuple[str, Location]]:
    out: dict[str, tuple[str, Location]] = {}
    for server in ev.servers:
        for flag in server:
            if flag.value is None:
                out[flag.name] = ("(on)", flag.location)
            else:
                shown = flag.value.expression or flag.value.text or "?"
                out[flag.name] = (shown if flag.value.text is None else _expr_or_text(flag.value.expression, flag.value.text),
                                  flag.value.location)
    return out


def _expr_or_text(expression: str, text: str) -> str:
    # A value computed from the job ($((2 * CONC))) reads better as its expression.
    return expression if expression and any(ch in expression for ch in "$(") and "CONC" in expression else text


def _env_values(ev: RecipeEval) -> dict[str, tuple[str, Location]]:
    return {k: (v.text if v.text is not None else (v.expression or "?"), v.location)
            for k, v in ev.env.items() if k not in CONTRACT_NAMES}


# Server flags that carry a dimension of the matrix: an entry that speaks of that dimension ("to TP4 across all
# workers") speaks of them (a multinode chain passes the worker's TP width as --tensor-parallel-size).
_DIMENSION_FLAGS = {"--tensor-parallel-size": "tp", "--tp-size": "tp", "--tp": "tp", "--expert-parallel-size": "ep",
                    "--ep-size": "ep", "--ep": "ep"}


def _mentioned(subject: str, values: Sequence[str], report: ClaimsReport) -> bool:
    if subject in report.mentioned:
        return True
    if subject in _DIMENSION_FLAGS and _field_mentioned(_DIMENSION_FLAGS[subject], "", report):
        return True
    words = report.words
    distinctive = [w for w in identifier_words(subject) if len(w) >= 4 and w not in _GENERIC]
    if any(w in words for w in distinctive):
        return True
    for value in values:
        vw = [stem(w) for w in identifier_words(value) if w]
        if vw and len("".join(vw)) >= 3 and all(w in words for w in vw) and not all(w.isdigit() for w in vw):
            return True
        if value and value in words:
            return True
    return False


def _field_mentioned(name: str, after: str, report: ClaimsReport) -> bool:
    kinds = {c.kind for c in report.claims}
    if name == "image":
        return "image" in kinds or "image" in report.words or bool(_tag_words(after) & report.words)
    if name in ("tp", "ep", "dp-attn"):
        if _LAYOUT_WORDS & report.words or {"search", "space"} <= report.words:
            return True  # "Update search space to cover more configs": the points' layouts are what it changed
        attr = {"tp": "tp", "ep": "ep", "dp-attn": "dp_attn"}[name]
        return any(getattr(par, attr) is not None for c in report.claims for arm in c.scope.arms
                   for par in (arm.parallel, arm.prefill, arm.decode)) or (
            name == "dp-attn" and bool({"dep", "dpa", "attention"} & report.words))
    if name == "spec-decoding":
        return bool({"mtp", "speculative", "spec", "eagle"} & report.words)
    return bool(set(identifier_words(name)) & report.words)


# Words (stemmed) that speak of the points' parallelism as a whole (and "search space", two words).
_LAYOUT_WORDS = frozenset({"parallelism", "topology", "layout"})


def _tag_words(image: str) -> set[str]:
    """How a text names an image by its tag: ``vllm/vllm-openai:v0.25.1`` as "v0.25.1" or "0.25.1" ("vLLM
    0.25.1"), ``...:v0.20.0-ubuntu2404`` as "0.20.0" too; a tag without a digit (``latest``) names nothing."""
    tag = image.rpartition(":")[2] if ":" in image.rpartition("/")[2] else ""
    out: set[str] = set()
    for form in (tag, tag.split("-")[0]):
        low = form.lower()
        out.update(w for w in (low, low[1:] if low[:1] == "v" else low) if any(c.isdigit() for c in w) and len(w) >= 3)
    return out


def undocumented_changes(config: ProjectConfig, entries: Sequence[EntryInput], report: ClaimsReport,
                         base_repo: RepoData, base_snapshot: Snapshot, head_repo: RepoData, head_snapshot: Snapshot,
                         cache: EvalCache) -> list[Finding]:
    # (subject, before, after) -> jobs, location, entry
    changes: dict[tuple[str, str, str], tuple[list[Job], Location | None, EntryInput]] = {}
    for entry in entries:
        pairs = _pairs(entry_jobs(base_repo, entry), entry_jobs(head_repo, entry))
        for base_job, head_job in pairs:
            diffs: list[tuple[str, str, str, Location | None]] = []
            for name in CONFIG_FIELDS:
                b, h = base_job.fields.get(name), head_job.fields.get(name)
                if b != h:
                    diffs.append((name, _shown(b), _shown(h), head_job.row))
            if bool(base_job.fields.get("dp-attn")) != bool(head_job.fields.get("dp-attn")):
                # The point moved to the other band: its recipe branch differs as a whole, and the
                # dp-attn change (reported above unless mentioned) is the one to document.
                b_ev = h_ev = None
            else:
                b_ev, h_ev = cache.evaluate(base_job, base_snapshot), cache.evaluate(head_job, head_snapshot)
            if b_ev is not None and h_ev is not None and not b_ev.errors and not h_ev.errors:
                for getter in (_flag_values, _env_values):
                    bv, hv = getter(b_ev), getter(h_ev)
                    for name in sorted(set(bv) | set(hv)):
                        before = bv.get(name, ("", None))[0] if name in bv else "(absent)"
                        after = hv[name][0] if name in hv else "(absent)"
                        if not _same_setting(before, after):
                            diffs.append((name, before, after, hv[name][1] if name in hv else bv[name][1]))
            for name, before, after, where in diffs:
                key = (name, before, after)
                if key not in changes:
                    changes[key] = ([], where, entry)
                changes[key][0].append(head_job)
    findings: list[Finding] = []
    config_files = {f.path for f in head_repo.master_files}
    for (name, before, after), (jobs, where, entry) in sorted(changes.items()):
        if name not in CONFIG_FIELDS and where is not None and where.path in config_files:
            continue  # the value comes from the job's config: the config field's change is the one to document
        if name in CONFIG_FIELDS:
            if _field_mentioned(name, after, report):
                continue
        elif _mentioned(name, [after, before], report):
            continue
        keys = sorted({j.config_key for j in jobs})
        if before == "(absent)":
            what = f"{name} {after} was added" if after != "(on)" else f"{name} was added"
        elif after == "(absent)":
            what = f"{name} was removed (it was {before})" if before != "(on)" else f"{name} was removed"
        else:
            what = f"{name} changed from {before} to {after}"
        n = len(jobs)
        message = (f"{what} for {n} job{'s' if n != 1 else ''} of {', '.join(keys)}; "
                   f"the changelog entry does not mention it")
        related = [where] if where is not None and where.path else []
        findings.append(make_finding(
            CLAIM_UNDOCUMENTED_CHANGE, message, entry.location, related=related,
            data={"config_key": keys[0] if len(keys) == 1 else keys, "subject": name, "claimed": None,
                  "before": before, "actual": after, "jobs": [j.label() for j in jobs]}))
    return findings


def _same_setting(before: str, after: str) -> bool:
    """Two spellings of one value a program reads the same (``0.90`` and ``0.9``): both decimals, or both whole
    numbers, of one number.  ``8`` and ``8.0`` differ: an integer option refuses the second."""
    if before == after:
        return True
    kinds = [_NUMBER.fullmatch(v) for v in (before, after)]
    return (kinds[0] is not None and kinds[1] is not None and bool(kinds[0]["fraction"]) == bool(kinds[1]["fraction"])
            and float(before) == float(after))


_NUMBER = re.compile(r"\d+(?P<fraction>\.\d+)?")


def _shown(value: Any) -> str:
    if value is None:
        return "(absent)"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
