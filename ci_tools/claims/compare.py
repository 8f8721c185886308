"""A claim against what each job in its scope really runs.

Per job the verdict is true, false or unknown (no recipe, a value the
evaluator could not decide, a setting the recipe leaves to the program's
default).  Unknown never counts against a claim.  False for every job that
could be judged, with none true, is an error; true for some and false for
others is a warning naming the jobs that differ.

Parallelism claims are existential when the sentence names several
topologies or no band ("TP8/EP1 and TP8/EP8 sweeps": each is one of the
points); concurrency claims say that a point is generated.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from ..findings import Location
from ..matrix import Job
from ..model.repository import RepoData
from ..recipes.model import RecipeEval, Value
from ..recipes.server import UNKNOWN_FLAG
from ..yamlpos import PosMap
from .extract import Claim
from .scope import job_concs
from .values import Bool, Concurrency, Image, Number, PerConc, Topology, Word, dtype_matches, image_matches, \
    number_matches, parse_bool, word_matches


@dataclass(frozen=True)
class Actual:
    """What one job really has for a claim's subject."""

    verdict: bool | None
    text: str  # for messages: "passes --state-checkpoint-interval-tokens 8192"
    value: str  # the bare value, for data
    location: Location | None


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
        return "false" if trues == 0 and len(known) == len(self.jobs) else "mixed"


def _shown(v: Value) -> str:
    return v.text if v.text is not None else (v.expression or "an unknown value")


def _recipe_actual(claim: Claim, job: Job, ev: RecipeEval | None) -> Actual:
    subject = claim.subject
    assert subject is not None
    if ev is None or ev.errors:
        return Actual(None, "", "", None)
    value = claim.value
    if subject.kind == "flag":
        flags = [f for server in ev.servers for f in server if f.name == subject.name]
        if any(f.conditional for f in flags):
            return Actual(None, "", "", None)
        if not flags:
            if isinstance(value, Bool) and _absence_known(ev):
                return Actual(not value.on, f"the recipe does not pass {subject.name}", "absent", None)
            return Actual(None, "", "", None)
        flag = flags[-1]
        if flag.value is None:
            if isinstance(value, Bool):
                return Actual(value.on, f"the recipe passes {subject.name}", "present", flag.location)
            return Actual(None, "", "", None)
        if not flag.value.known or flag.value.conditional:
            return Actual(None, "", "", None)
        text = flag.value.text or ""
        if isinstance(value, Bool):
            b = parse_bool(text)
            on = b.on if b is not None else True  # a flag given a value is on
            return Actual(on == value.on, f"the recipe passes {subject.name} {text}", text, flag.value.location)
        return _compare_text(value, text, job, f"the recipe passes {subject.name} {text}", flag.value.location)
    source: Mapping[str, Value] = ev.env if subject.kind == "env" else ev.variables
    v = source.get(subject.name)
    if v is None or not v.known or v.conditional:
        return Actual(None, "", "", None)
    verb = "exports" if subject.kind == "env" else "sets"
    text = v.text or ""
    return _compare_text(value, text, job, f"the recipe {verb} {subject.name}={text}", v.location)


def _absence_known(ev: RecipeEval) -> bool:
    """A flag is known to be absent only from a server command line that was reached and read in full.

    When the evaluation never reached a server, or a word of it could not be
    read (an unknown array spliced in, a flag name from an unknown variable),
    "not passed" is not a fact but a gap of the evaluation: unknown.
    """
    return bool(ev.servers) and not any(f.name == UNKNOWN_FLAG for server in ev.servers for f in server)


def _compare_text(value: Any, text: str, job: Job, shown: str, where: Location) -> Actual:
    verdict: bool | None
    if isinstance(value, Bool):
        b = parse_bool(text) if text not in ("0", "1") else Bool(text, text == "1")
        verdict = None if b is None else b.on == value.on
    elif isinstance(value, Number):
        verdict = number_matches(value, text)
    elif isinstance(value, PerConc):
        conc = job.conc
        n = number_matches_float(text)
        verdict = None if conc is None or n is None else abs(n - value.factor * conc) < 1e-9
    elif isinstance(value, Word):
        verdict = dtype_matches(value, text) if value.dtype else word_matches(value, text)
    else:
        verdict = None
    return Actual(verdict, shown, text, where)


def number_matches_float(text: str) -> float | None:
    try:
        return float(text.strip().strip("'\""))
    except ValueError:
        return None


def _config_location(repo: RepoData, job: Job, field_name: str) -> Location:
    entry = repo.configs.get(job.config_key)
    if entry is not None and isinstance(entry.data, PosMap) and field_name in entry.data:
        return entry.file.loc(entry.data.value_span(field_name))
    return job.row


def _topology_actual(claim: Claim, job: Job) -> Actual:
    topo = claim.value
    assert isinstance(topo, Topology)
    if job.multinode:
        return Actual(None, "", "", None)
    f = job.fields
    checks = [(topo.tp, f.get("tp"), "tp"), (topo.ep, f.get("ep"), "ep"), (topo.dp_attn, bool(f.get("dp-attn")), "dp-attn")]
    shown = f"TP{f.get('tp')}/EP{f.get('ep')}" + ("/DPA" if f.get("dp-attn") else "")
    ok = all(want is None or want == have for want, have, _ in checks)
    return Actual(ok, f"the config runs {shown}", shown, job.row)


def _image_actual(claim: Claim, job: Job, repo: RepoData) -> Actual:
    img = claim.value
    assert isinstance(img, Image)
    actual = job.fields.get("image")
    if not isinstance(actual, str):
        return Actual(None, "", "", None)
    return Actual(image_matches(img, actual), f"the config uses image {actual}", actual, _config_location(repo, job, "image"))


def judge(claim: Claim, jobs: Sequence[Job], evals: Mapping[str, RecipeEval | None], repo: RepoData) -> Judgement | None:
    """The claim's verdict over its jobs; None when nothing in scope can judge it."""
    if claim.kind == "concurrency":
        return _judge_concurrency(claim, claim.scope.jobs(jobs))
    scoped = claim.scope.jobs(jobs)
    if not scoped:
        return None
    if claim.kind == "topology":
        single = [j for j in scoped if not j.multinode]
        if not single:
            return None
        return Judgement(claim, tuple(single), tuple(_topology_actual(claim, j) for j in single), claim.existential)
    if claim.kind == "image":
        return Judgement(claim, tuple(scoped), tuple(_image_actual(claim, j, repo) for j in scoped), False)
    return Judgement(claim, tuple(scoped), tuple(_recipe_actual(claim, j, evals.get(j.id)) for j in scoped), False)


def _judge_concurrency(claim: Claim, jobs: Sequence[Job]) -> Judgement | None:
    value = claim.value
    assert isinstance(value, Concurrency)
    if not jobs:
        return None
    generated = sorted({c for j in jobs for c in job_concs(j)})
    missing = [v for v in value.values if v not in generated]
    shown = "/".join(str(c) for c in generated)
    where = jobs[0].row
    actual = Actual(not missing, f"the config generates concurrency {shown}",
                    ",".join(str(m) for m in missing), where)
    # One judgement over the whole scope: a point is generated or it is not.
    return Judgement(claim, (jobs[0],), (actual,), True)
