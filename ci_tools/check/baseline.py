"""New versus existing: the check's findings beside what the same check finds at the base revision.

A repository with defects on its main branch would otherwise make every pull
request red until someone fixes main.  So ``check`` asks the base the same
questions and marks each finding ``new`` (the change brings it),
``unchanged`` (it was there before) or ``absent`` (found at the base only: the
change fixes it).  Findings are matched by :func:`ci_tools.findings.finding_key`
(rule, file, message without positions, as SARIF's ``partialFingerprints``;
:mod:`ci_tools.check.marking`), so a finding whose lines moved is the same
finding; equal keys are matched by count.

Which stages have a base side: ``validate`` and ``recipes`` are about what a
revision holds, so the base is checked too.  The changelog gate, coverage and
claims are about the change itself (what it appends, which configs it
affects, what its entries say); at the base there is no change, so each of
their findings is new.

Cost: the base's validate findings are the head's when nothing validate reads
differs (master files, runners file, the changelog when the head's was read,
the list of files recipes are looked up in); otherwise the base is validated
as loaded beside the head (:mod:`ci_tools.model.beside`: only the configs whose
text differs are parsed again).  The recipes stage evaluates, at the base, the
jobs whose run the change alters, through the evaluation cache the claims
stage shares (an unchanged recipe is evaluated once for both revisions).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..findings import Finding
from . import CheckContext

if TYPE_CHECKING:
    from ..model.repository import RepoData


def _validate_inputs_unchanged(ctx: CheckContext) -> bool:
    """Whether everything ``validate`` reads is the same at the base as at the head."""
    if ctx.head_repo.changelog is not None:
        return False  # the head's changelog was read in full: its history was edited
    changed = ctx.changed_paths
    if not changed:
        return True
    head_files, base_files = ctx.head_snapshot, ctx.base_snapshot
    governed = {ctx.config.runners}
    for pattern in ctx.config.master_configs:
        governed.update(head_files.glob(pattern))
        governed.update(base_files.glob(pattern))
    if governed & changed:
        return False
    # Recipes and launchers are looked up by name: a file added or deleted can make a recipe found or missing.
    head_set, base_set = frozenset(head_files.files()), frozenset(base_files.files())
    return all((path in head_set) == (path in base_set) for path in changed)


def base_validate_repo(ctx: CheckContext) -> RepoData:
    """The base as validate reads it: loaded beside the head, with its changelog when the head's was read."""
    if ctx.head_repo.changelog is None:
        return ctx.base_repo
    from ..model.repository import load_repo

    return load_repo(ctx.base_snapshot, ctx.config, with_changelog=True)


def base_validate_stage(ctx: CheckContext, head: list[Finding]) -> list[Finding]:
    if _validate_inputs_unchanged(ctx):
        return head
    from ..validation.validate import validate

    return validate(base_validate_repo(ctx))


def base_recipe_stage(ctx: CheckContext, head: list[Finding]) -> list[Finding]:
    """The recipe rules for the base's jobs of the same points as the head's changed jobs."""
    jobs = ctx.changed_jobs
    if not jobs:
        return []
    from ..evaluation.rules import recipe_findings
    from ..jobs.matrix import expand

    wanted = {job.id for job in jobs}
    base = ctx.base_repo
    keys = sorted({job.config_key for job in jobs} & set(base.configs))
    base_jobs = [job for job in expand(base, keys) if job.id in wanted]
    if not base_jobs:
        return []
    snapshot = ctx.base_snapshot
    return recipe_findings(base, base_jobs, evaluate=lambda job: ctx.eval_cache.evaluate(job, snapshot))
