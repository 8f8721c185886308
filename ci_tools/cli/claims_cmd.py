"""``ci-tools claims``: changelog and PR claims against what each job really runs."""

from __future__ import annotations

from pathlib import Path

import click

from ..errors import UsageError
from ..findings import PR_DESCRIPTION
from .common import finish, get_config, handle_errors, repo_options, report_options


@click.command("claims")
@repo_options
@report_options
@click.option("--base", "base_rev", default=None, metavar="REV",
              help="Base revision: the entries appended since it are checked (default: as for `check`).")
@click.option("--head", "head_rev", default=None, metavar="REV", help="Head revision (default: the work tree).")
@click.option("--pr-body", "pr_body_file", type=click.Path(dir_okay=False, exists=True), default=None,
              help="File with the PR description; its claims are checked too.")
@click.option("--verbose", "-v", is_flag=True, help="Also list the phrases that could not be verified (claim-unverified).")
@click.option("--history", is_flag=True,
              help="Replay every commit that appended changelog entries and check each entry at the revision that added it.")
@click.option("--since", default=None, metavar="REV", help="With --history: only commits after REV.")
@handle_errors
def claims_command(repo_dir: str | None, config_file: str | None, fmt: str | None, select: tuple[str, ...],
                   ignore: tuple[str, ...], output: str | None, base_rev: str | None, head_rev: str | None,
                   pr_body_file: str | None, verbose: bool, history: bool, since: str | None) -> None:
    """Check the claims of appended changelog entries (and a PR description) against recipes and configs."""
    config = get_config(repo_dir, config_file)
    if history:
        if base_rev or pr_body_file:
            raise UsageError("--history replays the whole changelog history; it takes --since, not --base or --pr-body")
        from ..claims.verdict.history import replay_history
        from ..revision.snapshot import require_revision

        # Named here, as --base and --head are: git's own words ("bad revision") would not say which option.
        if since is not None:
            require_revision(config.root, since, "--since")
        require_revision(config.root, head_rev or "HEAD", "--head" if head_rev else "the current HEAD")
        findings = replay_history(config, since=since, head=head_rev or "HEAD", verbose=verbose)
        raise SystemExit(finish(findings, fmt, select, ignore, output, config=config))
    if since:
        raise UsageError("--since only applies with --history")
    from ..check import CheckContext, resolve_comparison
    from ..check.claims_stage import run_claims
    from ..claims.text.markdown import pr_body_source

    comparison = resolve_comparison(config, base=base_rev, head=head_rev, pr_number=None, pr_body=None)
    if comparison.base is None:
        raise UsageError(f"{comparison.source}; pass --base REV (the revision the change is compared with)")
    body = None
    if pr_body_file:
        text = Path(pr_body_file).read_text(encoding="utf-8", errors="replace")
        body = pr_body_source(_shown_path(pr_body_file, config.root), text)
    elif comparison.pr_body:  # the pull_request event's description, inside GitHub Actions
        body = pr_body_source(PR_DESCRIPTION, comparison.pr_body)
    ctx = CheckContext(config, comparison)
    raise SystemExit(finish(run_claims(ctx, pr_body=body, verbose=verbose, load_problems=True), fmt, select, ignore, output,
                            config=config))


def _shown_path(path: str, root: Path) -> str:
    full = Path(path).resolve()
    try:
        return full.relative_to(root).as_posix()
    except ValueError:
        return path
