"""A claim against what each job in its scope really runs.

Per job the verdict is true, false or unknown (no recipe, a value the
evaluator could not decide, a setting the recipe leaves to the program's
default).  Unknown never counts against a claim.  False for every job that
could be judged, with none true, is an error; true for some and false for
others is a warning naming the jobs that differ.

Arms and concurrencies are judged per arm the sentence names: "TP4 at
c1-c32 and DEP8 at c8-c72" says that a TP4 arm runs 1..32 and a DEP8 arm
8..72.  A list or range names every point of its arm (per sequence length
when it names none); a point missing or extra is a warning unless nothing of
the claim holds (no job of the arm at all, or none of the points), which is
an error.
"""

from __future__ import annotations

import operator
import re
from collections import Counter
from dataclasses import dataclass, replace
from functools import cache
from typing import Any, Callable, Mapping, Sequence

from ...findings import Location, first_few
from ...jobs.job import Job
from ...evaluation.multinode.located import Located
from ...jobs.resolution import job_settings
from ...model.repository import RepoData
from ...revision.yamlpos import PosMap
from ...shell.model import RecipeEval
from ..text.claim import Claim
from ..text.arms import ROLES, Arm, Parallel, job_spec
from ..text.scope import Scope, job_concs
from ..text.values import (Absent, Concurrency, Count, FamilyArm, Fragment, Image, NoArm, fragment_matches, image_matches,
                           tag_shorthand_matches)
from .actual import NOT_GIVEN, UNKNOWN, Actual, compare_text, held_for_another_program, key_addresses, recipe_actual
from .changed import ChangedLines
from .reads import RecipeReads
from .worker_layout import as_recipes_run


@dataclass(frozen=True)
class Judgement:
    claim: Claim
    jobs: tuple[Job, ...]  # jobs in scope
    actuals: tuple[Actual, ...]  # aligned with jobs
    existential: bool

    @property
    def known(self) -> list[tuple[Job, Actual]]:
        return [(j, a) for j, a in zip(self.jobs, self.actuals) if a.verdict is not None]

    @property
    def false(self) -> list[tuple[Job, Actual]]:
        return [(j, a) for j, a in self.known if a.verdict is False]

    @property
    def outcome(self) -> str:
        """``true`` | ``false`` | ``mixed`` | ``unknown``."""
        known = self.known
        if not known:
            return "unknown"
        trues = sum(1 for _, a in known if a.verdict)
        if self.existential:
            return "true" if trues else "false"
        if trues == len(known):
            return "true"
        if trues == 0 and len(known) == len(self.jobs) and not any(a.partial for _, a in known):
            return "false"
        return "mixed"

    @property
    def sets_nothing(self) -> bool:
        """False of every job, none of which sets the subject at all: a setting no job sets."""
        return self.outcome == "false" and all(a.value in NOT_GIVEN for _, a in self.false)


def _config_location(repo: RepoData, job: Job, field_name: str) -> Location:
    entry = repo.configs.get(job.config_key)
    if entry is not None and isinstance(entry.data, PosMap) and field_name in entry.data:
        return entry.file.loc(entry.data.value_span(field_name))
    return job.row


def _block_actual(claim: Claim, job: Job, repo: RepoData) -> Actual:
    """A field of the job's scenario block (``dram-utilization``), at its line in the master config."""
    assert claim.subject is not None
    name = claim.subject.name
    entry = repo.configs.get(job.config_key)
    data = entry.data if entry is not None else None
    scenarios = data.get("scenarios") if isinstance(data, PosMap) else None
    blocks = scenarios.get(job.scenario) if isinstance(scenarios, PosMap) else None
    if entry is None or not isinstance(blocks, list) or not 0 <= job.scenario_index < len(blocks):
        return UNKNOWN
    block = blocks[job.scenario_index]
    if not isinstance(block, PosMap) or name not in block:
        return UNKNOWN
    value = block.get(name)
    where = entry.file.loc(block.value_span(name))
    return compare_text(claim.value, str(value), job, f"the config sets {name}: {value}", where)


def _image_actual(claim: Claim, job: Job, repo: RepoData, ev: RecipeEval | None = None) -> Actual:
    img = claim.value
    actual = job.fields.get("image")
    if not isinstance(actual, str):
        return Actual(None, "", "", None)
    if isinstance(img, Absent):
        return Actual(None, "", "", None)  # "on its legacy image": which image that is, the text does not say
    found = _image_compared(img, actual, f"the config uses image {actual}", _config_location(repo, job, "image"))
    if found.verdict is False and ev is not None and ev.kind == "srt-slurm":
        # srtctl runs the container its recipe names, whatever the config's image field says.
        container = _recipe_container(repo, ev.recipe)
        if container is not None:
            ran = _image_compared(img, str(container.value), f"the recipe {ev.recipe} runs container {container.value}",
                                  container.location)
            if ran.verdict:
                return ran
    return found


def _outside_the_move(claim: Claim, found: Actual, changed: ChangedLines) -> Actual:
    """"Update the images from A to B" speaks of the configs that were on A: where others are on B, one on neither,
    whose image the change did not write, is not one of them (a config the change moved to a third image still
    contradicts it)."""
    if found.verdict is not False or found.location is None or changed.written(found.location):
        return found
    if any(_image_compared(old, found.value, "", found.location).verdict for old in claim.was):
        return found  # still on the image it was to move from
    return UNKNOWN


def _image_compared(img: object, actual: str, shown: str, where: Location) -> Actual:
    if isinstance(img, Fragment):
        tag = actual.split(":", 1)[1] if ":" in actual else actual
        return Actual(fragment_matches(img, tag) or tag_shorthand_matches(img, tag), shown, actual, where)
    assert isinstance(img, Image)
    return Actual(image_matches(img, actual), shown, actual, where)


def _recipe_container(repo: RepoData, path: str) -> Located | None:
    """``model.container`` of an srt-slurm recipe (None when the recipe does not load or names none)."""
    from ...evaluation.multinode.srt_slurm import SrtError, parse_recipe

    try:
        tree = parse_recipe(repo.snapshot, path)
    except SrtError:
        return None
    model = tree.get("model")
    container = model.get("container") if model is not None else None
    return container if container is not None and isinstance(container.value, str) else None


def judge(claim: Claim, jobs: Sequence[Job], evals: Mapping[str, RecipeEval | None], repo: RepoData,
          reads: Mapping[str, RecipeReads] | None = None, changed: ChangedLines | None = None) -> Judgement | None:
    """The claim's verdict over its jobs; None when nothing in scope can judge it.

    When the words allow several readings of which jobs the claim is about (:attr:`Scope.readings`, and a
    multinode parallelism named without a role read as that of both workers), the claim is judged under
    each and the most favourable verdict stands: a finding only when every reading contradicts the text.
    With ``changed`` (the lines the change wrote), a recipe claim has one more reading: it speaks of the
    settings the change wrote (on multinode jobs, perhaps those of one role), see :mod:`.changed`.
    """
    best: Judgement | None = None
    for scope in _readings(claim.scope, jobs):
        found = _judge_reading(replace(claim, scope=scope), jobs, evals, repo, reads or {}, changed)
        if found is None or found.outcome in ("true", "unknown"):
            return found
        if changed is not None and claim.kind == "recipe" and _holds_where_written(found, changed, evals):
            return _where_written(found, changed)
        if best is None or (best.outcome == "false" and found.outcome == "mixed"):
            best = found
    if changed is not None and claim.kind == "recipe" and best is not None and _left_alone(best, changed, evals):
        # "Lower max-num-batched-tokens to 16384 on the high-throughput recipes": the change wrote it to the
        # prefill workers only, and a sentence that names no role may speak of the workers the change wrote.
        for scope in _role_readings(claim.scope, jobs):
            found = _judge_reading(replace(claim, scope=scope), jobs, evals, repo, reads or {}, changed)
            if found is not None and _holds_where_written(found, changed, evals):
                return _where_written(found, changed)
    if changed is not None and best is not None:
        # The message quotes the first contradiction: one the change wrote, when there is one.
        pairs = sorted(zip(best.jobs, best.actuals), key=lambda p: not changed.written(p[1].location))
        best = replace(best, jobs=tuple(j for j, _ in pairs), actuals=tuple(a for _, a in pairs))
    return best


def _holds_where_written(found: Judgement, changed: ChangedLines, evals: Mapping[str, RecipeEval | None]) -> bool:
    """The claim holds on every setting of its jobs that the change wrote, and the change wrote one (see
    :mod:`.changed`); the settings it left alone may be outside what the sentence speaks of
    (:func:`_left_alone`)."""
    written = [a for _, a in found.known if changed.written(a.location)]
    return bool(written) and all(a.verdict for a in written) and _left_alone(found, changed, evals)


def _left_alone(found: Judgement, changed: ChangedLines, evals: Mapping[str, RecipeEval | None]) -> bool:
    """Every setting that contradicts the claim is one the change left alone: a value the recipe gives, or a
    setting missing from a recipe the change did not touch, or (the text says what the setting was switched
    from) from a recipe where the change wrote and removed nothing that names it: "Switch moe-a2a-backend from
    deepep to megamoe" speaks of the recipes that had deepep.  A setting missing from a recipe the change wrote
    may otherwise be the omission the claim is checked for."""
    claim = found.claim
    name = claim.subject.name if claim.subject is not None else ""
    switched = bool(_SWITCHED_FROM.search(claim.clause))

    def alone(ev: RecipeEval | None) -> bool:
        return ev is not None and (not changed.touched(ev.recipe)
                                   or (switched and bool(name) and not changed.wrote_about(ev.recipe, name)))

    return all(a.location is not None or alone(evals.get(j.id)) for j, a in found.false)


# "from deepep to megamoe", "from `deepep` to `megamoe`": the text names the value the setting was switched from.
_SWITCHED_FROM = re.compile(r"\bfrom\s+[`'\"]?[\w.:/+-]+[`'\"]?\s+(?:to|->|→)\s", re.IGNORECASE)


def _where_written(found: Judgement, changed: ChangedLines) -> Judgement:
    """The judgement on the settings the change wrote only (the others unknown)."""
    return replace(found, actuals=tuple(a if changed.written(a.location) else UNKNOWN for a in found.actuals))


def jobs_read(scope: Scope, jobs: Sequence[Job]) -> frozenset[str]:
    """The jobs some reading of the scope's arms selects (its concurrencies aside)."""
    bare = scope.without_concs()
    return frozenset(j.id for reading in _readings(bare, jobs) for j in reading.jobs(jobs))


def _readings(scope: Scope, jobs: Sequence[Job]) -> list[Scope]:
    out = scope.alternatives()
    if any(j.multinode for j in jobs):
        for alt in list(out):
            both = [b for a in alt.arms if (b := a.both_roles()) is not None]
            if both and len(both) == len(alt.arms):
                out.append(replace(alt, arms=tuple(both), readings=()))
    return out


# A bound on the job's parallelism the text gives as a condition: "--enable-ep-weight-filter (EP>1)", "for TP>=4".
_PARALLEL_BOUND = re.compile(r"\b(tp|ep)\s*(>=|<=|!=|>|<|≥|≤|≠)\s*(\d+)\b", re.IGNORECASE)
_COMPARE: dict[str, Callable[[int, int], bool]] = {
    ">": operator.gt, "<": operator.lt, ">=": operator.ge, "≥": operator.ge, "<=": operator.le, "≤": operator.le,
    "!=": operator.ne, "≠": operator.ne}


def _meeting_the_bounds(clause: str, jobs: list[Job]) -> list[Job]:
    """The jobs whose parallelism meets the bounds the clause states ("(EP>1)"): a claim said of the jobs with
    expert parallelism is not contradicted by a job without it.  Jobs whose tp/ep the config does not give as
    one number (multinode roles) are kept."""
    bounds = [(m.group(1).lower(), _COMPARE[m.group(2)], int(m.group(3))) for m in _PARALLEL_BOUND.finditer(clause)]
    if not bounds:
        return jobs
    kept = []
    for job in jobs:
        values = {name: job.fields.get(name, 1 if name == "ep" else None) for name, _, _ in bounds}
        if job.multinode or not all(isinstance(v, int) for v in values.values()) or \
                all(test(values[name], n) for name, test, n in bounds):
            kept.append(job)
    return kept


# "wherever SGLANG_OPT_USE_DEEPGEMM_MEGA_MOE is set": the jobs whose environment sets that variable.
_WHERE_SET = re.compile(r"\b(?:wherever|whenever|where|when|if)\s+`?([A-Z][A-Z0-9_]{2,})`?\s+(?:is\s+)?"
                        r"(?:set|enabled|on)\b")
_UNSET_WORDS = frozenset({"", "0", "false"})


def _where_set(sentence: str, jobs: list[Job], evals: Mapping[str, RecipeEval | None]) -> list[Job] | None:
    """The jobs the sentence's "wherever NAME is set" condition keeps: those whose server environment (any role)
    sets NAME, or whose value is unknown; None when the sentence names no such condition."""
    m = _WHERE_SET.search(sentence)
    if m is None:
        return None
    name = m.group(1)
    kept = []
    for job in jobs:
        ev = evals.get(job.id)
        values = [] if ev is None else [env[name] for env in [*ev.server_env, ev.env] if name in env]
        if ev is None or any(v.text is None or v.text.lower() not in _UNSET_WORDS for v in values):
            kept.append(job)
    return kept


def _of_the_role(role: str, jobs: list[Job], evals: Mapping[str, RecipeEval | None]) -> list[Job]:
    """The jobs that start a server of the role a claim names ("decode mem-fraction-static 0.92"), when some do:
    the aggregated worker of the entry's other configs serves both phases, but the words name the decode workers
    of the disaggregated ones.  Every job when none has such a server (an aggregated worker is then the one the
    words can speak of)."""
    if role not in ROLES:
        return jobs
    having = [j for j in jobs if (ev := evals.get(j.id)) is not None and role in ev.roles]
    return having or jobs


def _role_readings(scope: Scope, jobs: Sequence[Job]) -> list[Scope]:
    """For multinode jobs and a scope that names no server role, the reading of each role alone."""
    if scope.role or not any(j.multinode for j in jobs):
        return []
    return [replace(scope, arms=tuple(replace(a, role=role) for a in scope.arms) or (Arm(role=role),), readings=())
            for role in ROLES]


def _judge_reading(claim: Claim, jobs: Sequence[Job], evals: Mapping[str, RecipeEval | None],
                   repo: RepoData, reads: Mapping[str, RecipeReads], changed: ChangedLines | None) -> Judgement | None:
    if claim.kind == "concurrency":
        return judge_concurrency(claim, jobs, evals)
    if claim.kind == "arm":
        return judge_arms(claim, jobs, evals)
    if claim.kind == "count":
        return judge_count(claim, jobs)
    scoped = _of_the_role(claim.scope.role, claim.scope.jobs(jobs), evals)
    if claim.conditioned:
        scoped = _meeting_the_bounds(claim.clause, scoped)
        where_set = _where_set(claim.sentence, scoped, evals) if claim.kind == "recipe" else None
        if where_set is not None:
            # the condition is read: the jobs it keeps are the claim's, judged as any claim is
            scoped = where_set
            claim = replace(claim, conditioned=False)
    if not scoped:
        return None
    if claim.kind == "image":
        images = [_image_actual(claim, j, repo, evals.get(j.id)) for j in scoped]
        if claim.was and changed is not None and any(a.verdict for a in images):
            # some configs made the move: the others on neither image may not be the ones the text moves
            images = [_outside_the_move(claim, a, changed) for a in images]
        return Judgement(claim, tuple(scoped), tuple(images), False)
    if claim.subject is not None and claim.subject.kind == "field":
        return Judgement(claim, tuple(scoped), tuple(_block_actual(claim, j, repo) for j in scoped), False)
    known = sorted({a for j in scoped if (ev := evals.get(j.id)) is not None for server in ev.servers
                    for a in key_addresses(server)}) if claim.subject and claim.subject.kind == "env" else []
    served = frozenset(f.name for j in scoped if (ev := evals.get(j.id)) is not None for server in ev.servers
                       for f in server) if claim.subject and claim.subject.kind == "flag" else frozenset()
    written = changed.written if changed is not None else None
    flag = claim.subject.name if claim.subject and claim.subject.kind == "flag" else None
    elsewhere = frozenset({flag}) if flag and flag not in served and any(
        (ev := evals.get(j.id)) is not None and held_for_another_program(ev, flag) for j in scoped) else frozenset()
    actuals = [recipe_actual(claim, j, evals.get(j.id), known, reads.get(j.id), served, written, elsewhere)
               for j in scoped]
    if claim.conditioned and any(a.verdict for a in actuals):
        # True for some jobs, and the text names a condition the checker does not read ("in the
        # high-concurrency fast path", "when expert parallelism is disabled", "dropped from the five refreshed
        # environments"): where it does not hold may be outside the condition.
        actuals = [UNKNOWN if a.verdict is False else a for a in actuals]
    elif claim.subject is not None and claim.subject.kind == "flag" and any(a.verdict for a in actuals):
        actuals = _outside_the_recipes_condition(claim, scoped, actuals, reads)
    return Judgement(claim, tuple(scoped), tuple(actuals), False)


# Words that name a feature of a job's layout, by which a recipe passes a flag to some jobs only: DP attention,
# expert parallelism, speculative decoding.
_LAYOUT_WORDS: tuple[tuple[re.Pattern[str], Callable[[Job], bool]], ...] = (
    (re.compile(r"\b(?:DPA?|DEP\d*|dp[-_ ]?attn|dp[-_ ]attention|attention[-_ ]dp|data[- ]parallel attention)\b",
                re.IGNORECASE), lambda j: bool(j.fields.get("dp-attn"))),
    (re.compile(r"\b(?:EP\d*|DEP\d*|TEP\d*|expert[- ]parallel\w*|wide[- ]?EP)\b", re.IGNORECASE),
     lambda j: (j.fields.get("ep") or 1) > 1),
    (re.compile(r"\b(?:MTP|EAGLE\d*|speculative|spec[- ]decod\w*|draft\w*)\b", re.IGNORECASE), job_spec),
)


def _outside_the_recipes_condition(claim: Claim, jobs: Sequence[Job], actuals: Sequence[Actual],
                                   reads: Mapping[str, RecipeReads]) -> list[Actual]:
    """A flag passed as the text says to some jobs, and missing from others whose own recipe files spell it, where
    the jobs that have it and those that lack it differ in a feature of their layout that the sentence names: the
    recipe passes it under that condition, and the sentence speaks of where it holds ("Set
    --prefill-delayer-max-delay-ms 5000 ..., allowing DP to batch more requests together", which the recipe adds
    where DP attention is on), or the sentence after it does ("Add --prefill-decode-interval 20: +28% ... Under
    spec-decoding + DP attention SGLang synchronises decode globally ..."). Those jobs are unknown; a sentence that
    names no such feature ("Enable two batch overlap") is still contradicted where the flag is missing."""
    assert claim.subject is not None
    name = claim.subject.name
    passed = [j for j, a in zip(jobs, actuals) if a.verdict]
    lacking = [j for j, a in zip(jobs, actuals) if a.verdict is False and a.value == "absent"
               and (r := reads.get(j.id)) is not None and name in r.flags]
    if not lacking:
        return list(actuals)
    said = f"{claim.sentence or claim.clause} {claim.sentence_after}"
    for words, has in _LAYOUT_WORDS:
        if words.search(said) and all(has(j) for j in passed) and not any(has(j) for j in lacking):
            out = {j.id for j in lacking}
            return [UNKNOWN if j.id in out else a for j, a in zip(jobs, actuals)]
    return list(actuals)


# ---------------------------------------------------------------- arms and concurrencies


def _arm_scopes(scope: Scope) -> list[tuple[str, Scope]]:
    """One scope per arm the claim names (the whole scope when it names none)."""
    if not scope.arms:
        return [("", scope)]
    return [(arm.label, Scope((arm,), scope.concs, scope.conc_min)) for arm in scope.arms]


def _by_width_alone(scope: Scope, jobs: Sequence[Job]) -> list[Job]:
    """Where no job is the arm as named: the jobs that are when its bare TP widths say nothing of DP attention.

    "TP4" says "without DP attention" only by a naming convention (``DEP4`` for the DP-attention layout), one
    authors do not always keep: "TP4-prefill/TP4-decode 1P4D" for a config whose 1P4D prefill is ``tp: 4`` with
    ``dp-attn: true``, the config's own comment saying "TP4-prefill" too.  What the words state (the widths,
    the workers) holds there; only what the convention adds does not: a partial contradiction (a warning), not
    a missing arm.
    """
    arms = tuple(replace(a, parallel=_width_only(a.parallel), prefill=_width_only(a.prefill),
                         decode=_width_only(a.decode)) for a in scope.arms)
    return replace(scope, arms=arms).jobs(jobs) if arms != scope.arms else []


def _dp_attention_unit(label: str, scope: Scope, matching: list[Job]) -> tuple[Job, Actual]:
    shown = _shapes(matching)
    return matching[0], Actual(False, f"no job is {_arm_words(label, scope)}: its jobs run {shown}, with the DP "
                                      "attention a bare TP width does not name", shown, matching[0].row,
                               partial=True, label=label, no_such_arm=True)


def _width_only(parallel: Parallel) -> Parallel:
    """A parallelism named as a bare TP width, without the "no DP attention" the name implies by convention."""
    return replace(parallel, bare_tp=False) if parallel.bare_tp and parallel.dp_attn is None else parallel


def _shapes(jobs: Sequence[Job]) -> str:
    """The jobs' arms for a message, the first four of them (``TP4/EP1, TP8/EP8/DPA, ...``)."""
    return first_few(sorted({_shape(j) for j in jobs}))


def _shape(job: Job) -> str:
    """A job's arm in the words a reader uses: ``TP4/EP1``, ``TP8/EP8/DPA``, ``+DRAM hicache``, ``P1xTP4 D2xDEP8``."""
    f = job.fields
    if job.multinode:
        p, d = f.get("prefill") or {}, f.get("decode") or {}
        return f"{p.get('num-worker')}P{d.get('num-worker')}D prefill {_par(p)} decode {_par(d)}"
    offload = f.get("kv-offloading")
    backend = f.get("kv-offload-backend")
    name = backend.get("name") if isinstance(backend, Mapping) else backend
    extra = f" {name}" if offload == "dram" and name else (" DRAM" if offload == "dram" else "")
    return _par(f) + extra


def _par(f: Mapping[str, Any]) -> str:
    out = f"TP{f.get('tp')}/EP{f.get('ep') or 1}" + ("/DPA" if f.get("dp-attn") else "")
    dcp, pp = f.get("dcp-size") or 1, f.get("pp") or 1
    return out + (f"/DCP{dcp}" if dcp != 1 else "") + (f"/PP{pp}" if pp != 1 else "")


def _seq_groups(jobs: Sequence[Job]) -> list[tuple[str, list[Job]]]:
    groups: dict[str, list[Job]] = {}
    for j in jobs:
        isl, osl = j.fields.get("isl"), j.fields.get("osl")
        key = f"{isl}/{osl}" if isl is not None else ""
        groups.setdefault(key, []).append(j)
    return sorted(groups.items())


def _names_seq(label: str, seq: str) -> bool:
    """The label already says the sequence lengths ``seq`` ("isl=8192/osl=1024", "ISL=8192", "8k1k")."""
    isl, _, osl = seq.partition("/")
    if not (isl.isdigit() and osl.isdigit()):
        return False
    words = re.findall(r"[a-z0-9]+", label.lower())
    return isl in words or f"{int(isl) // 1024}k{int(osl) // 1024}k" in words


def _arm_words(label: str, scope: Scope) -> str:
    """The arm as named, with the constraints its name leaves out ("1P4D" of "TP4-prefill/TP4-decode 1P4D")."""
    # Only per-role parallelism goes unsaid in a name like "1P4D"; other names say what they mean.
    described = " or ".join(dict.fromkeys(a.describe() for a in scope.arms
                                          if not (a.prefill.empty and a.decode.empty)))
    if not described or described == label:
        return label
    return f"{label} ({described})" if label else described


def _arm_jobs(scope: Scope, jobs: Sequence[Job], as_run: Callable[[], list[tuple[Job, Job]]]) -> list[Job]:
    """The jobs of the arm the scope names: as the config writes them, else as their workers run
    (:mod:`.worker_layout`; ``as_run`` gives them, computed once for all the arms of a judgement)."""
    return scope.jobs(jobs) or [job for job, run in as_run() if scope.admits(run)]


def _as_run(jobs: Sequence[Job], evals: Mapping[str, RecipeEval | None] | None) -> Callable[[], list[tuple[Job, Job]]]:
    """The jobs as their workers run them, computed when first asked (most arms match as the config writes them)."""
    return cache(lambda: as_recipes_run(jobs, evals or {}))


def judge_arms(claim: Claim, jobs: Sequence[Job],
               evals: Mapping[str, RecipeEval | None] | None = None) -> Judgement | None:
    """Each arm the text names has a job (among the jobs of the claim's concurrencies, if it names some);
    for an arm the text says no job runs (:class:`NoArm`), none has."""
    if not jobs:
        return None
    if isinstance(claim.value, NoArm):
        return _judge_absent_arms(claim, jobs)
    if isinstance(claim.value, FamilyArm):
        return _judge_family(claim, claim.value, jobs)
    units: list[tuple[Job, Actual]] = []
    as_run = _as_run(jobs, evals)
    for label, scope in _arm_scopes(claim.scope):
        matching = _arm_jobs(scope, jobs, as_run)
        if matching:
            units.append((matching[0], Actual(True, "", "", matching[0].row, label=label)))
            continue
        if loose := _by_width_alone(scope, jobs):
            units.append(_dp_attention_unit(label, scope, loose))
            continue
        nearby = Scope(concs=claim.scope.concs, conc_min=claim.scope.conc_min).jobs(jobs) or list(jobs)
        shown = _shapes(nearby)
        units.append((nearby[0], Actual(False, f"no job is {_arm_words(label, scope) or 'of that arm'} (the jobs run {shown})",
                                        shown, nearby[0].row, label=label, no_such_arm=True)))
    return Judgement(claim, tuple(j for j, _ in units), tuple(a for _, a in units), False)


def _judge_family(claim: Claim, value: FamilyArm, jobs: Sequence[Job]) -> Judgement | None:
    """Every job of the family (its recipe file names it) is of one of the claim's arms."""
    members = [j for j in Scope(concs=claim.scope.concs, conc_min=claim.scope.conc_min).jobs(jobs)
               if _in_family(j, value.family)]
    if not members:
        return None  # no recipe file names it: a word, not a family
    units: list[tuple[Job, Actual]] = []
    for j in members:
        if claim.scope.jobs([j]):
            units.append((j, Actual(True, "", "", j.row)))
        else:
            units.append((j, Actual(False, f"the {value.name} recipe {_recipe_file(j)} runs {_shape(j)}", _shape(j),
                                    j.row)))
    return Judgement(claim, tuple(j for j, _ in units), tuple(a for _, a in units), False)


def _recipe_file(job: Job) -> str:
    """The name of the recipe file a multinode job's CONFIG_FILE setting names ("" for none)."""
    return job_settings(job).get("CONFIG_FILE", "").rsplit("/", 1)[-1]


def _in_family(job: Job, family: str) -> bool:
    """The job's recipe file names the family: a word of its name begins the family's name or is begun by it
    (``lowlat`` of ``1k1k_stp_lowlat_0.yaml`` for "low-latency"), five letters at least."""
    name = _recipe_file(job).lower()
    words = {re.sub(r"[^a-z]", "", w) for w in re.split(r"[_.\-/]", name)} - {"yaml", "yml"}
    return any(len(w) >= 5 and (family.startswith(w) or w.startswith(family)) for w in words)


def _judge_absent_arms(claim: Claim, jobs: Sequence[Job]) -> Judgement:
    units: list[tuple[Job, Actual]] = []
    for label, scope in _arm_scopes(claim.scope):
        matching = scope.jobs(jobs)
        if not matching:
            units.append((jobs[0], Actual(True, "", "", jobs[0].row, label=label)))
            continue
        concs = sorted({c for j in matching for c in job_concs(j)})
        shown = _shapes(matching)
        units.append((matching[0], Actual(False, f"the config runs {_arm_words(label, scope) or 'that arm'} ({shown}) "
                                                 f"at concurrency {'/'.join(map(str, concs))}", shown,
                                          matching[0].row, label=label)))
    return Judgement(claim, tuple(j for j, _ in units), tuple(a for _, a in units), False)


def judge_count(claim: Claim, jobs: Sequence[Job]) -> Judgement | None:
    """The jobs of the claim's scope are as many points (or layouts) as the text counts."""
    value = claim.value
    assert isinstance(value, Count)
    scoped = claim.scope.jobs(jobs)
    if not scoped:
        return None
    if value.noun == "points":
        found = sum(len(job_concs(j)) for j in scoped)
        shown = f"{found} concurrency {'point' if found == 1 else 'points'}"
        holds = found == value.n
    else:
        found = len(scoped)
        shown = f"{found} {'job' if found == 1 else 'jobs'}"
        # A topology is a layout whatever sequence lengths run on it ("5 topologies" of ten jobs at 1k1k and
        # 8k1k): so many rows of one sequence length, or so many distinct layouts, is the count too.
        per_seq = Counter((j.fields.get("isl"), j.fields.get("osl")) for j in scoped)
        holds = found == value.n or (value.noun == "topologies" and value.n in (
            max(per_seq.values()), len({_shape(j) for j in scoped})))
    actual = Actual(holds, f"the config generates {shown}", str(found), scoped[0].row, label=claim.scope.label())
    return Judgement(claim, (scoped[0],), (actual,), False)


def judge_concurrency(claim: Claim, jobs: Sequence[Job],
                      evals: Mapping[str, RecipeEval | None] | None = None) -> Judgement | None:
    """Each arm runs the concurrencies named: all of them, and (for a list or range) no others."""
    value = claim.value
    assert isinstance(value, Concurrency)
    if not jobs:
        return None
    units: list[tuple[Job, Actual]] = []
    covered: dict[str, Job] = {}
    as_run = _as_run(jobs, evals)
    for label, scope in _arm_scopes(claim.scope):
        arm_jobs = _arm_jobs(scope, jobs, as_run)
        if not arm_jobs and (loose := _by_width_alone(scope, jobs)):
            # The points are checked on the jobs the widths name; only where they hold is the DP attention the
            # one difference left.
            points = _conc_actual(claim, value, loose, label)
            units.append((loose[0], points) if points.verdict is False else _dp_attention_unit(label, scope, loose))
            continue
        if not arm_jobs:
            shown = _shapes(jobs)
            units.append((jobs[0], Actual(False, f"no job is {_arm_words(label, scope)} (the jobs run {shown})", "no such arm",
                                          jobs[0].row, label=label, no_such_arm=True)))
            continue
        covered.update((j.id, j) for j in arm_jobs)
    if covered:
        # The points are those of the arms together: "TP4, TP8 and DEP8 from concurrency 1 through 1024".
        members = list(covered.values())
        label = claim.scope.label() if claim.scope.arms else ""
        # Per sequence length when the text names none; sequence lengths it lists are arms like the others
        # ("at 1k1k and 8k1k, conc 1-1024": the points of both together).
        groups = _seq_groups(members)
        if not claim.exhaustive or any(a.seq is not None for a in claim.scope.arms):
            groups = [(groups[0][0] if len(groups) == 1 and not _names_seq(label, groups[0][0]) else "", members)]
        for seq, group in groups:
            units.append((group[0], _conc_actual(claim, value, group, " ".join(x for x in (label, seq) if x))))
    return Judgement(claim, tuple(j for j, _ in units), tuple(a for _, a in units), False)


def _conc_actual(claim: Claim, value: Concurrency, jobs: Sequence[Job], label: str) -> Actual:
    generated = sorted({c for j in jobs for c in job_concs(j)})
    if value.at_least is not None:
        ok = any(c >= value.at_least for c in generated)
        missing = [] if ok else [value.at_least]
        extra: list[int] = []
    else:
        missing = [v for v in value.values if v not in generated]
        if not claim.exhaustive:
            extra = []
        elif value.is_range:
            lo, hi = value.values[0], value.values[-1]
            extra = [c for c in generated if c < lo or c > hi]
        else:
            extra = [c for c in generated if c not in value.values]
    shown = "/".join(str(c) for c in generated)
    where = jobs[0].row
    if not missing and not extra:
        return Actual(True, f"the config generates concurrency {shown}", shown, where, label=label)
    some_run = value.at_least is None and len(missing) < len(value.values)
    parts = []
    if missing:
        parts.append(f"not {', '.join(str(c) for c in missing)}")
    if extra:
        parts.append(f"also {', '.join(str(c) for c in extra)}")
    return Actual(False, f"the config generates concurrency {shown} ({'; '.join(parts)})",
                  ",".join(str(m) for m in missing) or "+" + ",".join(str(c) for c in extra), where,
                  partial=some_run or not missing, label=label)
