"""The claims checker: appended changelog entries and the PR description against the jobs.

Entry point for ``ci-tools claims`` and for the ``claims`` stage of
``ci-tools check``.  For each appended entry: the jobs of its config keys and
scenario types at the head revision, their recipes evaluated once per
distinct input, a catalog of the subjects those recipes set, the claims of
each description bullet, and a verdict per claim.  The PR description is read
the same way, scoped to every appended entry's jobs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterable, Mapping, Sequence

from ...config import ProjectConfig
from ...findings import PR_DESCRIPTION, Finding, Location, make_finding
from ...jobs.job import Job
from ...jobs.matrix import expand
from ...model.keys import keys_matching
from ...model.repository import RepoData
from ...revision.snapshot import Snapshot, content_id
from ...revision.yamlpos import PosMap, PosSeq
from ...shell.model import RecipeEval
from ...words import has_word
from ..text.claim import Claim, Extraction, Unverified
from ..text.extract import GPU_NAME, extract
from ..text.sentences import SourceText, scalar_source
from ..text.subjects import Catalog, catalog_from, load_claims_settings
from ..text.arms import Arm, job_spec
from ..text.values import ArmName, Concurrency, NoArm
from .bands import names_point, partner_bands, without_partner_points
from .changed import ChangedLines
from .compare import jobs_read, judge
from .dimensions import explained_by_the_matrix
from .named_recipes import named_recipe_jobs
from .frameworks import other_framework
from .siblings import sibling_running
from .new_recipe import added_recipe_jobs, holds_on_the_added_recipe
from .exceptions import Stated, elsewhere_claims, excepted_value_claims, stated_values, without_stated_exceptions
from .gates import explained_by_a_gate, gates_in
from .messages import finding, phrase
from .reads import ReadsCache, RecipeReads
from .recipe_loops import AsRun
from .other_programs import passed_to_another_program
from .rules import CLAIM_NOT_CHECKED, CLAIM_UNVERIFIED
from .superseded import (later_steps, replaced_later, sentence_number, spoken_of_later, sweep_spoken_of_later,
                         told_again_later, topic)

Evaluate = Callable[[Job, ProjectConfig, Snapshot], "RecipeEval | None"]


@dataclass
class EntryInput:
    """One appended changelog entry, as the checker reads it."""

    patterns: list[str]
    scenarios: tuple[str, ...]
    descriptions: list[SourceText]
    location: Location  # the entry's first line
    pr_link: str = ""  # the pull request the entry is of (entries of one pull request tell one story)


def entry_inputs(path: str, file_text: str, entries: Iterable[Any]) -> list[EntryInput]:
    """From changelog entries (PosMap items with a line ``offset``, as the changelog gate yields them)."""
    out: list[EntryInput] = []
    for entry in entries:
        data = getattr(entry, "data", entry)
        offset = int(getattr(entry, "offset", 0))
        if not isinstance(data, PosMap):
            continue
        keys = data.get("config-keys")
        patterns = [k for k in keys if isinstance(k, str)] if isinstance(keys, list) else []
        scen = data.get("scenario-type")
        scenarios = tuple(s for s in scen if isinstance(s, str)) if isinstance(scen, list) else ()
        descs: list[SourceText] = []
        raw = data.get("description")
        if isinstance(raw, PosSeq):
            for i, item in enumerate(raw):
                if isinstance(item, str):
                    line, col = raw.item_span(i)[:2]
                    descs.append(scalar_source(path, file_text, line + offset, col, item))
        line = data.span[0] + offset if data.span[0] else offset + 1
        link = data.get("pr-link")
        out.append(EntryInput(patterns, scenarios, descs, Location(path, line, 1), link if isinstance(link, str) else ""))
    return out


def appended_entries(path: str, base_value: Any, head_value: Any, head_text: str) -> list[EntryInput]:
    """Head entries beyond the base's count (the changelog gate reports any other kind of edit)."""
    if not isinstance(head_value, list):
        return []
    count = len(base_value) if isinstance(base_value, list) else 0
    return entry_inputs(path, head_text, head_value[count:])


class EvalCache:
    """Recipe evaluation once per distinct input: recipe bytes, shared library bytes, job env, row."""

    def __init__(self, config: ProjectConfig, evaluate: Evaluate | None = None) -> None:
        self.config = config
        self._evaluate = evaluate
        self.reads = ReadsCache()
        self._cache: dict[tuple[Any, ...], RecipeEval | None] = {}

    @staticmethod
    def _content(snapshot: Snapshot, path: str) -> str:
        """The file's bytes as a key (its blob id in a replay): "" when it does not exist."""
        data = snapshot.read(path)
        return "" if data is None else content_id(snapshot, path, data)

    def evaluate(self, job: Job, snapshot: Snapshot) -> RecipeEval | None:
        from ...jobs.contract import recipe_env, resolve_recipe

        if job.multinode:
            return self._evaluate_multinode(job, snapshot)

        path = resolve_recipe(job, self.config, snapshot).script
        if path is None:
            return None
        env = recipe_env(job, self.config, snapshot, as_run=True)
        key = (path, self._content(snapshot, path), self._content(snapshot, self.config.benchmark_lib),
               tuple(sorted(env.items())), job.row.path, job.row.line)

        def evaluate_script() -> RecipeEval:
            from ...evaluation.evaluate import env_location, evaluate_recipe

            return evaluate_recipe(path, env, self.config, snapshot, env_location(job))

        return self._once(key, job, snapshot, path, evaluate_script)

    def _evaluate_multinode(self, job: Job, snapshot: Snapshot) -> RecipeEval | None:
        """A multinode job per role; its inputs are several files, so results are kept per revision only."""
        key = ("multinode", getattr(snapshot, "sha", None) or id(snapshot), job.id)

        def evaluate_roles() -> RecipeEval | None:
            from ...evaluation.evaluate import evaluate_job

            return evaluate_job(job, self.config, snapshot)

        return self._once(key, job, snapshot, "", evaluate_roles)

    def _once(self, key: tuple[Any, ...], job: Job, snapshot: Snapshot, path: str,
              evaluate: Callable[[], RecipeEval | None]) -> RecipeEval | None:
        """The cached result for ``key``, else ``evaluate()`` (or the injected evaluator) kept under it.

        A recipe the evaluator cannot read leaves its claims unknown: the failure becomes the result's
        error, never a crash of the whole check.
        """
        if key in self._cache:
            return self._cache[key]
        try:
            result = self._evaluate(job, self.config, snapshot) if self._evaluate is not None else evaluate()
        except Exception as exc:  # noqa: BLE001 - see above
            where = f"{path}: " if path else ""
            result = RecipeEval(recipe=path, errors=[f"{where}evaluation failed: {type(exc).__name__}: {exc}"])
        self._cache[key] = result
        return result


@dataclass
class ClaimsReport:
    findings: list[Finding] = field(default_factory=list)
    unverified: list[Unverified] = field(default_factory=list)
    claims: list[Claim] = field(default_factory=list)
    mentioned: set[str] = field(default_factory=set)
    words: set[str] = field(default_factory=set)


def _recipe_owns_speculation(claim: Claim, jobs: list[Job]) -> Claim:
    """Of the jobs of a recipe the text names by file: speculative decoding it says the recipe runs ("agg-2n-low-latency
    (EAGLE 3/4 spec decoding) for conc 1-64") is the recipe's own, where no config of those jobs says
    ``spec-decoding`` at all; the claim is judged on the recipe's jobs without it."""
    if claim.kind not in ("concurrency", "arm") or not any(a.spec for a in claim.scope.arms):
        return claim
    if claim.scope.without_concs().jobs(jobs) or any(job_spec(j) for j in jobs):
        return claim
    arms = tuple(replace(a, spec=None) if a.spec else a for a in claim.scope.arms)
    return replace(claim, scope=replace(claim.scope, arms=arms))


def entry_jobs(repo: RepoData, entry: EntryInput) -> list[Job]:
    keys = keys_matching(entry.patterns, repo.configs)
    jobs = expand(repo, keys)
    if entry.scenarios:
        jobs = [j for j in jobs if j.scenario in entry.scenarios]
    return jobs


def check_entries(config: ProjectConfig, head_repo: RepoData, head_snapshot: Snapshot, entries: Sequence[EntryInput], *,
                  pr_body: SourceText | None = None, cache: EvalCache | None = None,
                  base_repo: RepoData | None = None, base_snapshot: Snapshot | None = None,
                  with_recipes: bool = True, verbose: bool = False) -> ClaimsReport:
    settings = load_claims_settings(config)
    cache = cache or EvalCache(config)
    report = ClaimsReport()
    all_jobs: dict[str, Job] = {}
    evals: dict[str, RecipeEval | None] = {}
    per_entry: list[list[Job]] = []
    for entry in entries:
        jobs = entry_jobs(head_repo, entry)
        per_entry.append(jobs)
        for job in jobs:
            all_jobs[job.id] = job
            if with_recipes and job.id not in evals:
                evals[job.id] = cache.evaluate(job, head_snapshot)
    extra: list[RecipeEval | None] = []
    if with_recipes and base_repo is not None and base_snapshot is not None:
        for entry in entries:
            for job in entry_jobs(base_repo, entry):
                extra.append(cache.evaluate(job, base_snapshot))
    reads = {job.id: cache.reads.of(ev, config.benchmark_lib, head_snapshot) for job in all_jobs.values()
             if not job.multinode and (ev := evals.get(job.id)) is not None and not ev.errors}
    defaults = {name for r in reads.values() for name in r.defaults if name not in r.assigned}
    spelled = {flag for job in all_jobs.values() if (ev := evals.get(job.id)) is not None and not ev.errors
               for flag in cache.reads.server_flags(ev, config.benchmark_lib, head_snapshot)}
    # List settings of the scripts beside a multinode job's servers (node lists a chain's submit script sets).
    for job in all_jobs.values():
        ev = evals.get(job.id)
        if job.multinode and ev is not None and ev.server_command:  # whatever the evaluation got stuck on
            # (only single-node jobs have reads of their own, so this adds one)
            reads[job.id] = RecipeReads({}, cache.reads.recipe_names(ev, head_snapshot),
                                        lists=cache.reads.chain_lists(ev, head_snapshot))
    lists = {name: s.items for r in reads.values() for name, s in r.lists.items() if s is not None}
    # Names a multinode recipe writes that no server is given (a benchmark env block's SERVED_MODEL_NAME): known
    # by their own name, so that no variable of a server is taken for them.
    written = {name for job in all_jobs.values() if job.multinode and (r := reads.get(job.id)) is not None
               for name in r.assigned}
    catalog = catalog_from([*evals.values(), *extra], settings, evals.values(), defaults, spelled, lists, written) \
        if with_recipes else None
    changed = ChangedLines(head_snapshot, base_snapshot) if base_snapshot is not None else None
    running = AsRun(evals, head_snapshot) if with_recipes else None
    later = spoken_of_later([entry.descriptions for entry in entries],
                            [(entry.pr_link, {j.config_key for j in jobs}) for entry, jobs in zip(entries, per_entry)],
                            catalog)
    for entry, jobs, spoken in zip(entries, per_entry, later):
        if with_recipes:
            reason = _unchecked_reason(jobs, evals)
            if reason:
                report.findings.append(make_finding(
                    CLAIM_NOT_CHECKED, f"the recipe claims of this entry were not checked: {reason}", entry.location,
                    data={"config_keys": entry.patterns, "reason": reason}))
        _check_texts(entry.descriptions, catalog, jobs, evals, head_repo, report, "changelog", reads, changed, spoken,
                     running, entry.patterns, snapshot=head_snapshot)
    if pr_body is not None:
        _check_texts([pr_body], catalog, list(all_jobs.values()), evals, head_repo, report, PR_DESCRIPTION, reads,
                     changed, running=running, told_later=told_again_later(pr_body, catalog), snapshot=head_snapshot)
    if verbose:
        for u in report.unverified:
            detail = f" (candidates: {', '.join(u.candidates)})" if u.candidates else ""
            report.findings.append(make_finding(
                CLAIM_UNVERIFIED, f"not verified: `{u.phrase}`: {u.reason}{detail}", u.location,
                data={"phrase": u.phrase, "reason": u.reason, "candidates": list(u.candidates)}))
    return report


def _unchecked_reason(jobs: Sequence[Job], evals: Mapping[str, RecipeEval | None]) -> str:
    """Why no job of an entry has a usable recipe evaluation ("" when at least one has)."""
    if not jobs:
        return "its config-keys and scenario-type select no job at this revision"
    results = [evals.get(j.id) for j in jobs]
    if any(r is not None and not r.errors for r in results):
        return ""
    errors = [r.errors[0] for r in results if r is not None and r.errors]
    if errors:
        return f"every evaluation of its {len(jobs)} job(s) failed ({errors[0]})"
    return f"none of its {len(jobs)} job(s) has a recipe in the repository to evaluate"


def _check_texts(sources: Sequence[SourceText], catalog: Catalog | None, jobs: list[Job],
                 evals: Mapping[str, RecipeEval | None], repo: RepoData, report: ClaimsReport, origin: str,
                 reads: Mapping[str, RecipeReads], changed: ChangedLines | None = None,
                 spoken_later: Mapping[str, Location] | None = None, running: AsRun | None = None,
                 listed: Sequence[str] = (), told_later: Callable[[Claim], Location | None] | None = None,
                 snapshot: Snapshot | None = None) -> None:
    """The claims of one entry's bullets (or of a PR body), each judged over its jobs (whose recipes were
    evaluated in ``snapshot``, the head: ``repo.snapshot`` unless given).

    A claim about part of the jobs overrides, for that part, a claim of another value about more of
    them ("use image A" and "keep the 4P2D point on image B"): the general claim is judged without the
    jobs the specific one is about.
    """
    claims: list[Claim] = []
    gates = gates_in(source.text for source in sources)
    added = added_recipe_jobs((source.text for source in sources), jobs, evals, changed)
    stated: list[Stated] | None = None  # read when a claim first disagrees: most entries have none
    keyed: dict[int, list[Job]] = {}  # claims of a bullet headed by one config key: that key's jobs
    with_jobs = {j.config_key for j in jobs}
    jobless = [k for k in listed if k not in with_jobs and _plain_key(k)]
    place_of: dict[int, tuple[int, int]] = {}  # each claim's bullet and sentence, for the claims said again later
    left_by: list[frozenset[str]] = []  # each bullet's values of the state its change leaves
    for index, source in enumerate(sources):
        found: Extraction = extract(source, catalog)
        left_by.append(found.left)
        report.mentioned |= found.mentioned
        report.words |= found.words
        report.unverified.extend(found.unverified)
        defaults = [*elsewhere_claims(found.claims), *excepted_value_claims(found.claims)]
        claims.extend([*found.claims, *defaults])
        # (a default derived from a claim's own clause is read with it: no sentence of its own)
        place_of.update((id(c), (index, sentence_number(source.text, c.sentence))) for c in found.claims)
        place_of.update((id(c), (index, -1)) for c in defaults)
        headed = _headed_by_key(source.text, jobs)
        if headed is None and jobless and not _named_configs(source.text, jobs, "", listed):
            headed = []  # the bullet's words name only keys of the entry that run no job here
        if headed is not None:
            keyed.update((id(c), headed) for c in [*found.claims, *defaults])
    scoped = {id(c): {j.id for j in c.scope.jobs(jobs)} for c in claims if c.kind in ("recipe", "image")}
    # A concurrency list of a narrower arm (DEP16 with SimpleCPU offload at 128-384) takes its jobs out of
    # the list of the wider one (DEP16 at 32-256).
    scoped.update({id(c): {j.id for j in c.scope.without_concs().jobs(jobs) if _at_points(j, c.value)} for c in claims
                   if c.kind == "concurrency" and c.scope.arms})
    arm_jobs = {id(c): {j.id for j in c.scope.without_concs().jobs(jobs)} for c in claims if c.kind == "concurrency"}
    by_id = {j.id: j for j in jobs}
    # "No EP8 arm. EP8 only pays off with MegaMoE": an arm the entry says no job runs is spoken of hypothetically
    absent_arms = {_bare(claim.scope.arms) for claim in claims if isinstance(claim.value, NoArm)}
    retold = later_steps(claims, place_of, lambda c: {j.id for j in c.scope.without_concs().jobs(jobs)})
    for claim in claims:
        report.claims.append(claim)
        if isinstance(claim.value, ArmName) and _bare(claim.scope.arms) in absent_arms:
            report.unverified.append(Unverified(phrase(claim), claim.location,
                                                "the entry says no job of this arm runs"))
            continue
        excluded = _overridden(claim, claims, {**scoped, id(claim): arm_jobs[id(claim)]} if id(claim) in arm_jobs
                               else scoped, by_id)
        mine = _named_configs(claim.configs, jobs, "", listed) if claim.configs else \
            _band_configs(claim, jobs, listed) or _named_configs(claim.said, jobs, _lead_of(claim), listed)
        heading = keyed.get(id(claim))
        if heading is not None and len(mine) == len(jobs):  # its own words name no config: its bullet's heading does
            mine = heading
        if not mine:
            # "Port the Qwen3.5-397B topology ..." in an entry whose Qwen3.5 key runs no job at this revision
            report.unverified.append(Unverified(phrase(claim), claim.location, "the text speaks of a config of the "
                                                "entry that runs no job at this revision"))
            continue
        of_recipes = named_recipe_jobs((claim.said, _lead_of(claim)), mine, evals)
        if len(of_recipes) < len(mine):
            claim = _recipe_owns_speculation(claim, of_recipes)
        mine = of_recipes
        if claim.outside is not None:
            outside = claim.outside
            mine = [j for j in mine if not outside.admits(j)]
        mine = [j for j in mine if j.id not in excluded]
        if running is not None and claim.kind in ("concurrency", "arm", "count"):
            # The points a recipe's own loop runs.  A job whose loop is not read runs points not known: a claim of
            # concurrencies about its arm is left unverified (an arm claim still finds the arm there).
            unknown = {j.id for j in mine if running.job(j) is None}
            if unknown and claim.kind != "arm" and any(j.id in unknown for j in claim.scope.without_concs().jobs(mine)):
                report.unverified.append(Unverified(phrase(claim), claim.location, "the recipes of its jobs loop over "
                                                    "concurrencies given elsewhere (${...}), which are not read"))
                continue
            mine = [running.job(j) or j for j in mine]
        partners = partner_bands(claim, claims, lambda c: jobs_read(c.scope, mine), place_of)
        if partners:
            mine = without_partner_points(claim, mine, partners)
        judgement = judge(claim, mine, evals, repo, reads, changed)
        if judgement is None and claim.unnamed_scope is not None:
            # "Disable the dp attention for decode" where no job is of the dp-attention arm: the words named the
            # setting, not a part of the sweep.
            judgement = judge(replace(claim, scope=claim.unnamed_scope), mine, evals, repo, reads, changed)
        if judgement is None:
            if claim.kind == "recipe":
                # A setting read beside its value is never dropped in silence: say which jobs it missed.
                report.unverified.append(Unverified(phrase(claim), claim.location,
                                                    "no job of the entry is of the part of the sweep the text names"))
            continue
        if judgement.outcome in ("false", "mixed"):
            stated = stated_values(sources, jobs) if stated is None else stated
            judgement = without_stated_exceptions(judgement, stated, jobs)
        outcome = judgement.outcome
        if outcome == "mixed" and claim.kind == "recipe" and explained_by_a_gate(
                {j.id for j, a in judgement.known if a.verdict}, judgement.jobs, gates):
            continue  # set exactly where the entry says it is gated to ("(isl>=8192 && conc>=64)")
        if outcome == "mixed" and explained_by_the_matrix(judgement):
            continue  # --enable-dp-attention missing only on the points the config runs without DP attention
        if outcome == "mixed" and claim.kind == "recipe" and holds_on_the_added_recipe(
                [(j.id, a.verdict) for j, a in judgement.known], added):
            continue  # said of the recipe the entry adds, which sets it; the key's other recipes keep their own
        if outcome == "unknown" and claim.kind == "recipe":
            report.unverified.append(Unverified(phrase(claim), claim.location, "no job in scope has a known value"))
        elif outcome in ("false", "mixed"):
            again = sweep_spoken_of_later(claim, spoken_later or {})
            if again is not None:  # a step of the change's story: a later entry of it speaks of this again
                report.unverified.append(Unverified(phrase(claim), claim.location,
                                                    f"a later entry of this change speaks of it again "
                                                    f"({again.path}:{again.line})"))
                continue
            elsewhere = passed_to_another_program(judgement, snapshot or repo.snapshot, evals)
            if elsewhere is not None:  # "--shm-name" of the recipe's LMCache server, not of its vLLM server
                report.unverified.append(Unverified(phrase(claim), claim.location,
                                                    f"no server of these jobs is given it; the recipe writes it "
                                                    f"for another program ({elsewhere.path}:{elsewhere.line})"))
                continue
            told = told_later(claim) if told_later is not None else None
            if told is not None:  # a step of the PR's story: a later part of its description speaks of it again
                report.unverified.append(Unverified(phrase(claim), claim.location,
                                                    f"a later part of the PR description speaks of it again "
                                                    f"({told.path}:{told.line})"))
                continue
            replaced = replaced_later(claim, place_of[id(claim)][0], left_by) if id(claim) in place_of else None
            if replaced is not None:  # "One TP8/PP2/EP8 topology", then a later bullet: "Replace PP2 with DP2"
                part, later = replaced
                where = sources[later].location(0, 0)
                report.unverified.append(Unverified(phrase(claim), claim.location, f"a later bullet of this entry "
                                                    f"leaves {part} ({where.path}:{where.line})"))
                continue
            retelling = retold.get(id(claim))
            if retelling is not None:  # a step of the entry's story: a later bullet or sentence states this again
                where, own_bullet = retelling
                said = ("sentence of the PR description" if origin == PR_DESCRIPTION else "sentence of its bullet") \
                    if own_bullet else "bullet of this entry"
                report.unverified.append(Unverified(phrase(claim), claim.location,
                                                    f"a later {said} states it again ({where.path}:{where.line})"))
                continue
            # (the sibling is one the entry does not list: its own keys are those of all its jobs, not of the
            # ones this claim was narrowed to)
            sibling = sibling_running(claim, jobs, repo) if outcome == "false" and all(
                a.no_such_arm for _, a in judgement.false) else None
            if sibling is not None:  # "the TP4 aggregate point" in an entry of the -disagg key: the -agg key's
                report.unverified.append(Unverified(phrase(claim), claim.location,
                                                    f"no job of the entry's configs is of this part of the sweep; "
                                                    f"{sibling}, which the entry does not list, runs it"))
                continue
            named = other_framework(claim, jobs) if outcome == "false" else None
            if named is not None:  # "This tracks the vLLM agentic lane ..., which sweeps DEP4 ..." of an SGLang key
                report.unverified.append(Unverified(phrase(claim), claim.location,
                                                    f"the sentence speaks of {named} jobs; the entry's configs "
                                                    f"run no {named} job"))
                continue
            report.findings.append(finding(judgement, origin))


def _plain_key(pattern: str) -> bool:
    """A config-keys entry that is one key, not a glob."""
    return not any(c in pattern for c in "*?[")


def _bare(arms: Sequence[Arm]) -> tuple[Arm, ...]:
    """Arms as what they select, whatever words named them."""
    return tuple(replace(a, label="") for a in arms)


_KEY_HEADING = re.compile(r"\W*([A-Za-z0-9][\w.-]*)`?\s*:")
# A bullet's heading in words ("B300: ...", "B300 MegaMoE (DP-attention path): ..."): a few words, no setting.
_WORDS_HEADING = re.compile(r"\W*([A-Za-z][^:;=.!?`\n]{0,58}?)\s*:\s")


def _headed_by_key(text: str, jobs: list[Job]) -> list[Job] | None:
    """The jobs of the configs a bullet's heading names: a config key (``minimaxm3-fp8-mi355x-vllm: 1k1k sweeps
    TP8 ...``) or their key words ("B300: rework ...; otherwise X"): what the bullet says, in each of its
    sentences, is said of those configs, not of the entry's other keys; None for a bullet without one."""
    found = _KEY_HEADING.match(text)
    if found is not None:
        mine = [j for j in jobs if j.config_key == found.group(1)]
        if mine:
            return mine if len(mine) < len(jobs) else None
    heading = _WORDS_HEADING.match(text)
    if heading is None or "--" in heading.group(1):
        return None
    mine = _named_configs(heading.group(1), jobs)
    return mine if 0 < len(mine) < len(jobs) else None


# Key words that are also values (a dtype is a KV-cache setting as much as a model precision).
_NOT_KEY_WORDS = frozenset({"fp4", "fp8", "bf16", "fp16", "int4", "int8", "mxfp4", "nvfp4", "mxfp8"})


# A precision named as the model's ("the FP8 model", "fp4 recipes"): a key word after all.
_PRECISION = "(?:" + "|".join(sorted(_NOT_KEY_WORDS)) + ")"
_VARIANT_OF = re.compile(r"\b(" + _PRECISION + r"(?:/" + _PRECISION + r")*)(?:[- ](?:model|recipe|variant|config|key|"
                         r"checkpoint|weight|job|run|arm|version|sweep|entr(?:y|ies)|script|benchmark|image|point)s?\b|"
                         r"\s*:)")


# A precision as a model card names it, and the word config keys name it by ("MXFP4" of dsr1-fp4-mi355x-sglang).
_KEY_PRECISION = {"mxfp4": "fp4", "nvfp4": "fp4", "mxfp8": "fp8"}


def _as_key_word(word: str, telling: set[str]) -> str:
    """``word`` as the entry's config keys spell it, where they spell it another way."""
    key_word = _KEY_PRECISION.get(word)
    return key_word if key_word is not None and key_word in telling and word not in telling else word


def _band_configs(claim: Claim, jobs: list[Job], listed: Sequence[str]) -> list[Job] | None:
    """The jobs a band of a clause of several is said of ("aggregate TP8 at conc [16] and disaggregated 3P/1D
    DEP8/DEP16 at conc [1536]"): the configs its own words name; every job when only another band's words name
    configs (they are that band's); None when no band names one (the clause's words decide)."""
    if not claim.band:
        return None
    own = _named_configs(claim.band, jobs, "", listed)
    if len(own) != len(jobs):
        return own or None
    if any(len(_named_configs(band, jobs, "", listed)) != len(jobs) for band in claim.other_bands):
        return jobs
    return None


def _lead_of(claim: Claim) -> str:
    """The words of the claim's sentence before its clause ("For the FP8 model, set ..."): what they name is
    what the clause speaks of, when the clause itself names no config."""
    at = claim.sentence.find(claim.clause) if claim.sentence and claim.clause else -1
    return claim.sentence[:at] if at > 0 else ""


def _named_configs(clause: str, jobs: list[Job], lead: str = "", listed: Sequence[str] = ()) -> list[Job]:
    """The jobs of the configs a clause names by their key words ("all DSV4 GB300 recipes", "the MiniMax-M3
    FP8 model"), when the entry's configs differ in those words; failing that, those the words before the
    clause in its sentence name (``lead``); every job when neither names one (or none of them match).

    The keys the entry lists (``listed``) that run no job count among its configs: words that name only such
    keys give no job at all (an entry of smoke-test keys and a Qwen3.5 key not in the master config yet:
    "Port the Qwen3.5-397B topology as two TP8 nodes" is not said of the smoke tests)."""
    running = {j.config_key for j in jobs}
    keys = running | {k for k in listed if _plain_key(k)}
    if len(keys) < 2:
        return jobs
    parts = [set(k.split("-")) for k in keys]
    common = set(parts[0]).intersection(*parts[1:])
    telling = set().union(*parts) - common
    for text in (clause, lead):
        low = text.lower()
        named = {k for k in keys if has_word(low, k.lower())}
        if named:  # a key written out whole ("for dsr1-fp8-b200-sglang, ...")
            return [j for j in jobs if j.config_key in named] if named & running else []
        words = re.findall(r"(non-)?([a-z0-9.]+)", low) + [("", w) for w in re.findall(r"[a-z0-9.]+(?:-[a-z0-9.]+)+", low)
                                                            if "-" in w and not w.startswith("non-")]
        words = [(neg, w.replace("-", "")) for neg, w in words]
        # A model card's precision ("MXFP4") names the model, never a KV-cache dtype: a variant as it stands.
        variants = {w for m in _VARIANT_OF.finditer(low) for w in m.group(1).split("/")} | \
            {w for _, w in words if w in _KEY_PRECISION}
        words = [(neg, _as_key_word(w, telling)) for neg, w in words]
        variants = {_as_key_word(w, telling) for w in variants}
        said = {w for neg, w in words if w in telling and not neg and (w not in _NOT_KEY_WORDS or w in variants)}
        unsaid = {w for neg, w in words if w in telling - _NOT_KEY_WORDS and neg}  # "non-DSpark"
        if not said and not unsaid:
            by_vendor = _of_vendor(low, jobs)
            if by_vendor is not None:
                return by_vendor
            continue
        chosen = {k for k, p in zip(keys, parts) if said <= p and not unsaid & p}
        if "mtp" in said and any(w == "stp" and not neg for neg, w in words):
            # "for both STP and MTP": the keys without speculative decoding too (STP names no key word of its own)
            chosen |= {k for k, p in zip(keys, parts) if "mtp" not in p and (said - {"mtp"}) <= p and not unsaid & p}
        if not chosen and len(said) > 1 and all(GPU_NAME.fullmatch(w) for w in said):
            # "VLLM_MXFP4_USE_MARLIN=1 on H100/H200": the configs of either GPU
            chosen = {k for k, p in zip(keys, parts) if said & p and not unsaid & p}
        if chosen and not chosen & running:
            return []
        return [j for j in jobs if j.config_key in chosen] or jobs
    return jobs


# A vendor named for its hardware ("AMD: aiter attention; NVIDIA: trtllm_mla", "for the AMD key"), not as where
# something came from ("ported from the NVIDIA recipe").
_VENDOR = re.compile(r"(?<!from )(?<!from the )(?<!like )(?<!unlike )(?<![\w-])(amd|rocm|nvidia|cuda)(?![\w-])")
_AMD_RUNNER = re.compile(r"(?:cluster:)?mi\d")


def _of_vendor(low: str, jobs: list[Job]) -> list[Job] | None:
    """The jobs on the hardware of the one vendor the words name, when the entry's configs run on both; None
    otherwise."""
    named = {"amd" if v in ("amd", "rocm") else "nvidia" for v in _VENDOR.findall(low)}
    if len(named) != 1:
        return None
    amd = named == {"amd"}
    mine = [j for j in jobs if bool(_AMD_RUNNER.match(str(j.fields.get("runner") or ""))) == amd]
    return mine if 0 < len(mine) < len(jobs) else None


def _at_points(job: Job, value: object) -> bool:
    """The job runs one of the concurrencies a concurrency claim names (for a range, one inside it)."""
    if not isinstance(value, Concurrency):
        return True
    return any(names_point(value, c) for c in job.concs)


def _overridden(claim: Claim, claims: Sequence[Claim], scoped: Mapping[int, set[str]],
                by_id: Mapping[str, Job]) -> set[str]:
    """Jobs a more specific claim of the same subject with another value is about."""
    mine = scoped.get(id(claim))
    if not mine:
        return set()
    out: set[str] = set()
    for other in claims:
        theirs = scoped.get(id(other))
        if (other is claim or not theirs or other.kind != claim.kind or other.subject != claim.subject
                or other.value == claim.value):
            continue
        if theirs < mine:
            if claim.kind == "concurrency":
                # Only the narrower arm's points this list does not name ("c32 dp-on" is within "32-1024").
                theirs = {j for j in theirs if not _at_points(by_id[j], claim.value)}
            out |= theirs
    return out
