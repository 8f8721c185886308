"""``ci-tools changelog lint`` and ``ci-tools changelog new``."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from .check_cmd import build_context, revision_options
from .common import finish, get_config, handle_errors, repo_options, report_options

if TYPE_CHECKING:
    from ..config import ProjectConfig


@click.group("changelog")
def changelog_group() -> None:
    """The append-only perf changelog: lint a change, append an entry."""


@changelog_group.command("lint")
@repo_options
@report_options
@revision_options
@handle_errors
def lint_command(repo_dir: str | None, config_file: str | None, fmt: str | None, select: tuple[str, ...],
                 ignore: tuple[str, ...], output: str | None, base_rev: str | None, head_rev: str | None,
                 pr_number: int | None) -> None:
    """Enforce the append-only rules on the changelog, head against base."""
    from ..check import changelog_stage, run_check

    config = get_config(repo_dir, config_file)
    ctx = build_context(config, base_rev, head_rev, pr_number)
    raise SystemExit(finish(run_check(ctx, [("changelog", changelog_stage)]), fmt, select, ignore, output, config=config))


@changelog_group.command("new")
@repo_options
@click.option("--key", "keys", multiple=True, metavar="KEY",
              help="Config key or glob (repeatable; default: the configs the change affects, compared with --base).")
@click.option("--message", "-m", "messages", multiple=True, required=True, metavar="TEXT",
              help="One description bullet (repeatable).")
@click.option("--scenario-type", "scenarios", multiple=True, type=click.Choice(["fixed-seq-len", "agentic-coding"]),
              help="Limit the entry to these scenario types (repeatable).")
@click.option("--append-only", is_flag=True, help="Mark the entry `append-only: true` (the change only adds points).")
@click.option("--base", "base_rev", default=None, metavar="REV",
              help="Compare with this revision to find the affected configs (default: as `check`).")
@click.option("--pr-number", type=click.IntRange(min=1), default=None,
              help="Link this PR (default: the GitHub event's PR inside Actions, else the placeholder .../pull/XXX).")
@click.option("--dry-run", is_flag=True, help="Print the entry instead of appending it.")
@handle_errors
def new_command(repo_dir: str | None, config_file: str | None, keys: tuple[str, ...], messages: tuple[str, ...],
                scenarios: tuple[str, ...], append_only: bool, base_rev: str | None, pr_number: int | None,
                dry_run: bool) -> None:
    """Append a correctly separated entry to the changelog, keeping every byte of its entries."""
    from ..changelog.new import NewEntrySpec, append_entry, read_back, render_entry, require_text
    from ..changelog.policy import load_gate_policy
    from ..check.entry_keys import entry_keys

    import os

    from ..errors import UsageError

    config = get_config(repo_dir, config_file)
    path = config.root / config.changelog
    real_root = os.path.realpath(config.root)
    if os.path.commonpath([os.path.realpath(path), real_root]) != real_root:
        raise UsageError("is a symbolic link that leads out of the repository; refusing to read or write through it",
                         path=config.changelog)
    existing = path.read_bytes() if path.is_file() else None
    if not dry_run:
        require_text(config.changelog, existing)  # before any comparison: nothing is worth a corrupt append
    if keys:  # nothing to compare: the keys are given
        from ..check import CheckContext, Comparison, event_pr_number

        ctx = CheckContext(config, Comparison(None, pr_number=event_pr_number(pr_number)))
    else:
        ctx = build_context(config, base_rev, None, pr_number)
    keys = entry_keys(ctx, keys)
    link = _pr_link(config, ctx.pr_number)
    entry = render_entry(NewEntrySpec(tuple(keys), messages, link, scenarios, append_only))
    if dry_run:
        click.echo(entry.decode("utf-8"), nl=False)
        return
    updated = append_entry(existing, entry, load_gate_policy(config))
    read_back(config.changelog, updated, entry)
    path.write_bytes(updated)
    line = updated[: len(updated) - len(entry)].count(b"\n") + 1
    click.echo(f"appended an entry for {', '.join(keys)} at {config.changelog}:{line}", err=True)


def _pr_link(config: ProjectConfig, number: int | None) -> str:
    """The entry's pr-link: the PR's own when its number is known, else the placeholder the gate accepts on a
    branch; a real number needs the repository's name (a link to OWNER/REPO would pass for nobody's PR)."""
    from ..changelog.lint import PLACEHOLDER
    from ..errors import UsageError

    if number is None:
        return config.pr_link(PLACEHOLDER)
    if config.repository is None:
        raise UsageError(f"cannot write the link of PR #{number}: the repository is not known (no `repository:` in "
                         ".ci-tools.yaml, no $GITHUB_REPOSITORY, no GitHub origin remote); set `repository: OWNER/NAME`")
    return config.pr_link(number)
