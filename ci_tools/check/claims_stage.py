"""The ``claims`` stage of ``ci-tools check``, and ``ci-tools claims`` over a comparison.

The claims checker itself (:mod:`ci_tools.claims.verdict.check`) takes entries, jobs and
evaluations; this module feeds it what a comparison of two revisions gives:
the entries the change adds, the head's and the base's configs, the PR
description, and the evaluation cache the check's other stages share.
"""

from __future__ import annotations

from ..changelog.lint import read_problems
from ..changelog.schema import appended_schema_findings
from ..claims.verdict.check import check_entries, entry_inputs
from ..claims.text.markdown import pr_body_source
from ..claims.text.sentences import SourceText
from ..findings import PR_DESCRIPTION, Finding
from . import CheckContext


def run_claims(ctx: CheckContext, *, pr_body: SourceText | None = None, verbose: bool = False,
               load_problems: bool = False) -> list[Finding]:
    """Claims of the entries the change adds (and of ``pr_body``), plus undocumented changes.

    ``load_problems``: also report what cannot be read: appended changelog text that does not parse, appended
    entries that do not match the changelog-entry schema, the head's master files and runners that do not load,
    configs that fail their schema (``check`` reports them in its validate and changelog stages; ``claims`` alone
    must not be green over a file it could not read).
    """
    if not ctx.compared:
        return []
    change = ctx.changelog
    # An appended text that does not parse adds no entry to read: said, not taken for "nothing appended".
    # So does an appended entry of the wrong shape (`config-keys: 7`): its keys select nothing to check.
    problems = read_problems(change) + appended_schema_findings(change) if load_problems else []
    head_bytes = change.head_bytes or b""
    entries = entry_inputs(ctx.config.changelog, head_bytes.decode("utf-8", "replace"), change.added_entries)
    if not entries:
        return problems
    if load_problems:
        from ..validation.validate import input_findings

        problems += input_findings(ctx.head_configs_repo)
    from ..claims.verdict.undocumented import undocumented_changes

    cache = ctx.eval_cache
    report = check_entries(ctx.config, ctx.head_configs_repo, ctx.head_snapshot, entries, pr_body=pr_body, cache=cache,
                           base_repo=ctx.base_repo, base_snapshot=ctx.base_snapshot, verbose=verbose)
    report.findings += undocumented_changes(ctx.config, entries, report, ctx.base_repo, ctx.base_snapshot,
                                            ctx.head_configs_repo, ctx.head_snapshot, cache)
    return problems + report.findings


def claims_stage(ctx: CheckContext) -> list[Finding]:
    """The ``claims`` stage of ``ci-tools check`` (the PR description comes from the event payload)."""
    body = pr_body_source(PR_DESCRIPTION, ctx.pr_body) if ctx.pr_body else None
    return run_claims(ctx, pr_body=body)
