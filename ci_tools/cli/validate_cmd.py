"""``ci-tools validate``: schema and cross-file rules on the work tree or a revision."""

from __future__ import annotations

import click

from ..model.repository import load_repo
from ..revision.snapshot import open_snapshot
from ..validation.validate import validate
from .common import finish, get_config, handle_errors, repo_options, report_options


@click.command("validate")
@repo_options
@report_options
@click.option("--rev", default=None, help="Validate the files of this git revision instead of the work tree.")
@handle_errors
def validate_command(repo_dir: str | None, config_file: str | None, fmt: str | None, select: tuple[str, ...],
                     ignore: tuple[str, ...], output: str | None, rev: str | None) -> None:
    """Validate master configs, runners and the changelog against their schemas and cross-file rules."""
    config = get_config(repo_dir, config_file)
    repo = load_repo(open_snapshot(config.root, rev), config)
    raise SystemExit(finish(validate(repo), fmt, select, ignore, output, config=config))
