"""``check``: everything a pull request must pass, as a list of stages.

A stage is a function ``(CheckContext) -> list[Finding]``.  The context
resolves what to compare (``--base``, the GitHub event, or the merge-base with
the default branch) and loads each revision's data at most once, lazily, so a
stage pays only for what it reads.  A new check is one more line in
:data:`STAGES`, either a callable or a ``"module:function"`` string imported
when the stage runs (so ``check`` does not pay for imports it never uses).
"""

from __future__ import annotations

import importlib
import os
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Mapping, Sequence, Union

from ..config import ProjectConfig
from ..errors import UsageError
from ..findings import Finding, Location

if TYPE_CHECKING:
    from ..changelog.coverage import AffectedKey, ChangeInputs, Cover
    from ..changelog.lint import ChangelogChange, HeadConfigs
    from ..claims.verdict.check import EvalCache
    from ..jobs.job import Job
    from ..model.repository import RepoData
    from ..revision.snapshot import GitSnapshot, Snapshot


@dataclass(frozen=True)
class Comparison:
    """What the head is compared with.  ``base`` None: nothing to compare, validate only."""

    base: str | None
    head: str | None = None  # None: the work tree
    pr_number: int | None = None
    pr_body: str | None = None
    # How the base was chosen ("--base", "GitHub event", "merge-base with main"), or why there is none.
    source: str = ""
    # A local branch other than the default one: a pull request whose number is not known yet.
    feature_branch: str | None = None


def _default_branch_candidates(config: ProjectConfig) -> list[str]:
    return [f"origin/{config.default_branch}", config.default_branch]


def _feature_branch(config: ProjectConfig, head: str | None, pr_number: int | None) -> str | None:
    """The checked-out branch when the work tree is checked and it is not the default branch: a pull request
    whose number is not known yet.  The same however the base was chosen (``--base`` or the merge-base), so
    that one changelog entry gets one verdict on its pr-link."""
    if head is not None or pr_number is not None:
        return None
    from ..revision.snapshot import current_branch

    branch = current_branch(config.root)
    return branch if branch and branch != config.default_branch else None


def event_pr_number(pr_number: int | None, env: Mapping[str, str] | None = None) -> int | None:
    """``pr_number`` if given, else inside GitHub Actions the number of the pull request the event is about."""
    env = os.environ if env is None else env
    if pr_number is not None or env.get("GITHUB_ACTIONS") != "true":
        return pr_number
    from ..github.run_event import load_event

    event = load_event(env)
    return event.pr_number if event is not None else None


def resolve_comparison(config: ProjectConfig, *, base: str | None, head: str | None, pr_number: int | None,
                       pr_body: str | None, env: Mapping[str, str] | None = None) -> Comparison:
    """``--base`` if given; in GitHub Actions the event's base and PR; locally the merge-base with the default branch."""
    env = os.environ if env is None else env
    from ..revision.snapshot import require_revision

    if head is not None:
        require_revision(config.root, head, "--head")  # a bad --head is not "nothing to compare"
    if base is not None:
        require_revision(config.root, base, "--base")
        return Comparison(base, head, pr_number, pr_body, "--base", _feature_branch(config, head, pr_number))
    if env.get("GITHUB_ACTIONS") == "true":
        from ..github.run_event import load_event

        event = load_event(env)
        if event is not None:
            number = pr_number if pr_number is not None else event.pr_number
            body = pr_body if pr_body is not None else event.pr_body
            if event.base_sha:
                require_revision(config.root, event.base_sha, f"the {event.name} event's base")
                return Comparison(event.base_sha, head, number, body, f"the {event.name} event's base")
            pr_number, pr_body = number, body
    if not (config.root / ".git").exists():
        return Comparison(None, head, pr_number, pr_body, f"{config.root} is not a git repository")
    from ..revision.snapshot import is_shallow, merge_base, rev_exists

    unrelated: list[str] = []
    for candidate in _default_branch_candidates(config):
        if rev_exists(config.root, candidate):
            found = merge_base(config.root, candidate, head or "HEAD")
            if found:
                return Comparison(found, head, pr_number, pr_body, f"the merge-base with {candidate}",
                                  _feature_branch(config, head, pr_number))
            unrelated.append(candidate)
    if unrelated:
        # A pull request's job must not fall back to validating the head alone
        # because the clone is too shallow to find where the branch started.
        why = ("this clone is shallow, so their common history is not here; fetch it (`fetch-depth: 0` in "
               "actions/checkout, or `git fetch --unshallow`)" if is_shallow(config.root)
               else "they share no history")
        raise UsageError(f"no merge-base of {' or '.join(unrelated)} and {head or 'HEAD'}: {why}; or pass --base REV")
    names = " or ".join(_default_branch_candidates(config))
    return Comparison(None, head, pr_number, pr_body, f"no --base given and no {names} branch to compare with")


class CheckContext:
    """The inputs of one check run; every derived value is computed once, on first use."""

    def __init__(self, config: ProjectConfig, comparison: Comparison) -> None:
        self.config = config
        self.comparison = comparison

    @property
    def root(self) -> Path:
        return self.config.root

    @property
    def compared(self) -> bool:
        return self.comparison.base is not None

    @property
    def pr_number(self) -> int | None:
        return self.comparison.pr_number

    @property
    def pr_body(self) -> str | None:
        return self.comparison.pr_body

    @cached_property
    def head_snapshot(self) -> Snapshot:
        from ..revision.snapshot import open_snapshot

        return open_snapshot(self.root, self.comparison.head)

    @property
    def head_sha(self) -> str | None:
        """The commit the head is, or holds the work tree (None outside a git repository): where report links point."""
        from ..revision.snapshot import GitSnapshot, commit_of

        snapshot = self.head_snapshot
        return snapshot.sha if isinstance(snapshot, GitSnapshot) else commit_of(self.root, "HEAD")

    @cached_property
    def base_snapshot(self) -> GitSnapshot:
        """The base revision (only when :attr:`compared`)."""
        from ..revision.snapshot import GitSnapshot

        if self.comparison.base is None:
            raise UsageError("no base revision to compare with; pass --base REV")
        return GitSnapshot(self.root, self.comparison.base)

    # Messages name "the base revision" rather than its sha, so that a report
    # reads the same on every re-run of the same change.
    base_label = "base revision"

    @property
    def history_intact(self) -> bool:
        """The head's changelog is the base's bytes plus appended text (the common case of a PR)."""
        change = self.changelog
        return (self.compared and change.base_bytes is not None and change.head_bytes is not None
                and change.head_bytes.startswith(change.base_bytes) and change.diff is not None and not change.diff.edits)

    @cached_property
    def head_repo(self) -> RepoData:
        """The head's configs, runners and changelog, for ``validate``.

        When the history is intact its entries are the base's bytes; the
        changelog is then left out (parsing 400 KB of history costs more than
        the rest of a check) and the changelog stage holds the appended
        entries to the schema instead.
        """
        from ..model.repository import load_repo

        # A binary or emptied changelog is the gate's single finding; a YAML load of it would only repeat it.
        change = self.changelog
        skip = change.oversized or change.binary is not None or change.emptied or self.history_intact
        return load_repo(self.head_snapshot, self.config, with_changelog=not skip)

    @cached_property
    def head_configs_repo(self) -> RepoData:
        """The head's configs and runners; shares :attr:`head_repo` when that is loaded already."""
        if "head_repo" in self.__dict__:
            return self.head_repo
        from ..model.repository import load_repo

        return load_repo(self.head_snapshot, self.config, with_changelog=False)

    @cached_property
    def base_repo(self) -> RepoData:
        """The base's configs and runners, parsed only where their text differs from the head's
        (:mod:`ci_tools.model.beside`: a master file assembled from pieces keeps its configs, not its
        whole document)."""
        from ..model.beside import load_beside

        return load_beside(self.base_snapshot, self.config, self.head_configs_repo)

    def head_configs(self) -> HeadConfigs:
        """The head's config keys, for matching config-key globs.

        Read from the loaded head data when a stage loaded it already; otherwise
        only the keys are needed, and a line scan of each master file finds them
        (see :mod:`ci_tools.changelog.config_keys`); a file the scan cannot read
        for sure sends the whole question to the full load.
        """
        from ..changelog.lint import HeadConfigs

        if "head_repo" not in self.__dict__ and "head_configs_repo" not in self.__dict__:
            scanned = self._scan_head_keys()
            if scanned is not None:
                return scanned
        repo = self.head_configs_repo
        return HeadConfigs(tuple(repo.configs), tuple(f.path for f in repo.master_files))

    def _scan_head_keys(self) -> HeadConfigs | None:
        from ..changelog.config_keys import top_level_keys
        from ..changelog.lint import HeadConfigs

        keys: dict[str, None] = {}
        paths: dict[str, None] = {}
        for pattern in self.config.master_configs:
            for path in self.head_snapshot.glob(pattern):
                if path in paths:
                    continue
                found = top_level_keys(self.head_snapshot.read(path) or b"")
                if found is None:
                    return None
                paths[path] = None
                keys.update(dict.fromkeys(found))
        return HeadConfigs(tuple(keys), tuple(paths))

    @cached_property
    def changelog(self) -> ChangelogChange:
        from ..changelog.lint import ChangelogChange
        from ..changelog.policy import load_gate_policy
        from ..config.limits import limits_of

        path = self.config.changelog
        base = self.base_snapshot.read(path) if self.compared else None
        return ChangelogChange(path, base, self.head_snapshot.read(path), compared=self.compared,
                               base_label=self.base_label, limits=limits_of(self.config),
                               policy=load_gate_policy(self.config))

    @cached_property
    def changed_paths(self) -> frozenset[str]:
        """Files that differ between the base and the head (empty when nothing is compared)."""
        if not self.compared:
            return frozenset()
        from ..revision.snapshot import changed_paths

        return changed_paths(self.root, self.base_snapshot.sha, self.comparison.head)

    def change_inputs(self) -> ChangeInputs:
        from ..changelog.coverage import ChangeInputs

        return ChangeInputs(self.config, self.base_snapshot, self.head_snapshot, self.changed_paths,
                            lambda: self.base_repo, lambda: self.head_configs_repo, self.base_label,
                            evaluate=self.eval_cache.evaluate)

    @cached_property
    def affected(self) -> list[AffectedKey]:
        """The head configs the change affects, with their causes (coverage and the recipe rules share it)."""
        if not self.compared:
            return []
        from ..changelog.coverage import affected_keys

        return affected_keys(self.change_inputs())

    @cached_property
    def changed_jobs(self) -> list[Job]:
        """Head jobs of the affected configs whose recipe run can differ from the base's (the recipes stage's
        jobs, at the head and, for the same points, at the base)."""
        if not self.compared or not self.affected:
            return []
        from ..changelog.coverage import changed_jobs

        return changed_jobs(self.change_inputs(), self.affected)

    @cached_property
    def eval_cache(self) -> EvalCache:
        """Recipe evaluations of the head's jobs, shared by the stages that evaluate recipes (recipes, claims)."""
        from ..claims.verdict.check import EvalCache

        return EvalCache(self.config)

    def appended_covers(self) -> list[Cover]:
        """What the added changelog entries cover (config-key globs, scenario types), wherever they stand."""
        from ..changelog.coverage import Cover

        return [Cover(tuple(k for k, _ in e.config_keys), e.scenario_types) for e in self.changelog.added_entries]


Stage = Callable[[CheckContext], list[Finding]]


def validate_stage(ctx: CheckContext) -> list[Finding]:
    from ..validation.validate import validate

    return validate(ctx.head_repo)


def changelog_stage(ctx: CheckContext) -> list[Finding]:
    """The append-only gate, and the proof of ``append-only: true`` entries."""
    from ..changelog.lint import lint_changelog
    from ..changelog.schema import appended_schema_findings

    findings = lint_changelog(ctx.changelog, ctx.config, pr_number=ctx.pr_number, head_configs=ctx.head_configs,
                              feature_branch=ctx.comparison.feature_branch)
    findings += appended_schema_findings(ctx.changelog)
    if ctx.compared and any(e.append_only for e in ctx.changelog.new_entries):
        from ..changelog.append_only import prove_append_only

        findings += prove_append_only(ctx.changelog.new_entries, ctx.change_inputs())
    return findings


def coverage_stage(ctx: CheckContext) -> list[Finding]:
    if not ctx.compared:
        return []
    from ..changelog.coverage import coverage_findings

    return coverage_findings(ctx.affected, ctx.appended_covers(), changelog=ctx.config.changelog)


def recipe_stage(ctx: CheckContext) -> list[Finding]:
    """recipe-syntax, recipe-early-exit and recipe-missing-env for the jobs whose recipe run can differ from the
    base's (``recipe lint`` checks every job; without a base there is no change to check)."""
    jobs = ctx.changed_jobs
    if not jobs:
        return []
    from ..evaluation.rules import recipe_findings

    snapshot = ctx.head_snapshot
    return recipe_findings(ctx.head_configs_repo, jobs, evaluate=lambda job: ctx.eval_cache.evaluate(job, snapshot))


StageRef = Union[Stage, str]

# (name, stage): the order findings are gathered in (the report sorts them anyway).
STAGES: list[tuple[str, StageRef]] = [
    ("validate", validate_stage),
    ("changelog", changelog_stage),
    ("coverage", coverage_stage),
    ("recipes", recipe_stage),
    ("claims", "ci_tools.check.claims_stage:claims_stage"),
]


# The stages that also ask the base revision, by name: (ctx, the head's findings of the stage) -> the base's
# findings (:mod:`ci_tools.check.baseline` says why the others have no base side).
BaseStage = Callable[[CheckContext, list[Finding]], list[Finding]]
BASE_STAGES: dict[str, str] = {
    "validate": "ci_tools.check.baseline:base_validate_stage",
    "recipes": "ci_tools.check.baseline:base_recipe_stage",
}


def _load_stage(ref: StageRef) -> Stage:
    if callable(ref):
        return ref
    module, _, attr = ref.partition(":")
    stage: Stage = getattr(importlib.import_module(module), attr)
    return stage


def _dedupe(findings: list[Finding]) -> list[Finding]:
    """Drop a finding that another stage already reported (same rule, position and message)."""
    seen: set[tuple[str, Location, str]] = set()
    out: list[Finding] = []
    for f in findings:
        key = (f.rule, f.location, f.message)
        if key not in seen:
            seen.add(key)
            out.append(f)
    return out


def run_check(ctx: CheckContext, stages: Sequence[tuple[str, StageRef]] | None = None, *,
              against_base: bool = False) -> list[Finding]:
    """The findings of ``stages`` (default: all) at the head.

    ``against_base`` (and a base to compare with): each finding marked new or unchanged by the same
    stages' findings at the base, and the base's findings the head lacks added, marked absent
    (:mod:`ci_tools.check.baseline`).
    """
    head: list[Finding] = []
    base: list[Finding] = []
    compare = against_base and ctx.compared
    for name, ref in STAGES if stages is None else stages:
        found = _load_stage(ref)(ctx)
        head.extend(found)
        if compare and name in BASE_STAGES:
            base_stage: BaseStage = _load_stage(BASE_STAGES[name])  # type: ignore[assignment]
            base.extend(base_stage(ctx, found))
    if not compare:
        return _dedupe(head)
    from .marking import mark

    return mark(_dedupe(head), _dedupe(base), (ctx.base_snapshot.label, ctx.head_snapshot.label))
