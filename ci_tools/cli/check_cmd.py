"""``ci-tools check``: validate + changelog gate + coverage (+ later stages) for a change."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, TypeVar

import click

from .common import finish, get_config, handle_errors, repo_options, report_options

if TYPE_CHECKING:
    from ..config import ProjectConfig

F = TypeVar("F", bound=Callable[..., Any])


def revision_options(func: F) -> F:
    """``--base``, ``--head``, ``--pr-number``: what a change is compared with."""
    func = click.option("--pr-number", type=click.IntRange(min=1), default=None,
                        help="The pull request's number (default: from the GitHub event); none means the main branch.")(func)
    func = click.option("--head", "head_rev", default=None, metavar="REV",
                        help="Head revision (default: the work tree).")(func)
    func = click.option("--base", "base_rev", default=None, metavar="REV",
                        help="Base revision (default: the GitHub event's base, else the merge-base with the default branch).")(func)
    return func


def build_context(config: ProjectConfig, base_rev: str | None, head_rev: str | None,
                  pr_number: int | None, pr_body: str | None = None) -> Any:
    """The check context for these options; says on stderr when there is nothing to compare."""
    from ..check import CheckContext, resolve_comparison

    comparison = resolve_comparison(config, base=base_rev, head=head_rev, pr_number=pr_number, pr_body=pr_body)
    if comparison.base is None:
        click.echo(f"ci-tools: note: {comparison.source}; nothing to compare, so only the head is validated "
                   "(pass --base REV to check a change)", err=True)
    return CheckContext(config, comparison)


@click.command("check")
@repo_options
@report_options
@revision_options
@click.option("--pr-body", "pr_body_file", type=click.Path(dir_okay=False, exists=True), default=None,
              help="File with the PR description (default: from the GitHub event), for checks that read it.")
@click.option("--fail-on", type=click.Choice(["new", "all"]), default=None,
              help="Errors that fail the check (exit 1): `new`, those the change brings (default, or `fail-on` in "
                   ".ci-tools.yaml), or `all`, those already on the base as well.")
@handle_errors
def check_command(repo_dir: str | None, config_file: str | None, fmt: str | None, select: tuple[str, ...],
                  ignore: tuple[str, ...], output: str | None, base_rev: str | None, head_rev: str | None,
                  pr_number: int | None, pr_body_file: str | None, fail_on: str | None) -> None:
    """Check a change: validate the head, lint the changelog against the base, require changelog coverage,
    and tell the change's own findings from those already on the base."""
    from pathlib import Path

    from ..check import run_check
    from ..check.summary import summarize_check

    body = Path(pr_body_file).read_text(encoding="utf-8", errors="replace") if pr_body_file else None
    config = get_config(repo_dir, config_file)
    ctx = build_context(config, base_rev, head_rev, pr_number, body)
    findings = run_check(ctx, against_base=True)
    raise SystemExit(finish(findings, fmt, select, ignore, output,
                            summary=lambda reported: summarize_check(ctx, reported.kept, reported.hidden,
                                                                     reported.suppressed).line(),
                            config=config, fail_on=fail_on or config.fail_on, check_suppressions=True,
                            **_link_commits(ctx)))


def _link_commits(ctx: Any) -> dict[str, str | None]:
    """The commits report links point at (inside GitHub Actions only: elsewhere there are no links to make)."""
    import os

    if os.environ.get("GITHUB_ACTIONS") != "true":
        return {}
    return {"head_sha": ctx.head_sha, "base_sha": ctx.base_snapshot.sha if ctx.compared else None}
