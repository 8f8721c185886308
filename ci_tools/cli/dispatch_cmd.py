"""``ci-tools dispatch``: the ``/run-benchmark`` comment command.

``dispatch comment`` handles one issue_comment event end to end (it is what
``run-benchmark.yml`` runs); ``dispatch parse`` shows how a comment is
understood, optionally against a revision's configs.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import asdict
from pathlib import Path

import click

from ..errors import UsageError
from .common import (
    EXIT_CLEAN,
    EXIT_FINDINGS,
    EXIT_INTERNAL,
    get_config,
    handle_errors,
    repo_options,
)

# The GitHub modules (httpx, gitpython) are imported inside the commands: `ci-tools --help`
# and the other commands should not pay for them.

MAX_EVENT_BYTES = 25 * 2**20


@click.group("dispatch")
def dispatch_group() -> None:
    """Handle `/run-benchmark` pull request comments."""


def _read_event(path: str | None) -> tuple[object, str]:
    source = path or os.environ.get("GITHUB_EVENT_PATH")
    if not source:
        raise UsageError("no event: pass --event FILE or set GITHUB_EVENT_PATH (set inside GitHub Actions)")
    file = Path(source)
    if not file.is_file():
        raise UsageError(f"event file {source} does not exist")
    if file.stat().st_size > MAX_EVENT_BYTES:
        raise UsageError(f"event file {source} is larger than {MAX_EVENT_BYTES} bytes", path=source)
    try:
        return json.loads(file.read_text(encoding="utf-8")), source
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UsageError(f"the event file is not JSON: {exc}", path=source) from None


@dispatch_group.command("comment")
@repo_options
@click.option("--event", "event_file", type=click.Path(dir_okay=False), default=None,
              help="The issue_comment event payload (default: $GITHUB_EVENT_PATH).")
@click.option("--github-output", "github_output", type=click.Path(dir_okay=False), default=None,
              help="Append the step outputs here (default: $GITHUB_OUTPUT when set).")
@click.option("--no-fetch", is_flag=True, help="Never `git fetch` the pinned commit; it must already be local.")
@click.option("--attempts", type=click.IntRange(1, 10), default=4, show_default=True,
              help="Tries per GitHub request (5xx, timeouts and rate limits are retried).")
@handle_errors
def comment_command(repo_dir: str | None, config_file: str | None, event_file: str | None, github_output: str | None,
                    no_fetch: bool, attempts: int) -> None:
    """Authorise, pin and dispatch the `/run-benchmark` command of an issue_comment event, and reply."""
    from ..github.auth import load_policy
    from ..github.client import GitHubClient, GitHubError, RetryPolicy
    from ..github.dispatch import Dispatcher, GitRevisions
    from ..github.event import parse_event
    from ..github.outputs import write_outputs

    event_name = os.environ.get("GITHUB_EVENT_NAME")
    if event_name and event_name != "issue_comment":
        raise UsageError(f"this is a `{event_name}` event; `dispatch comment` handles `issue_comment` events")
    payload, source = _read_event(event_file)
    event = parse_event(payload, source)
    config = get_config(repo_dir, config_file)
    policy = load_policy(config)
    if not os.environ.get("GITHUB_TOKEN"):
        raise UsageError("GITHUB_TOKEN is not set; the dispatcher needs it to read permissions and reply")
    api_url = os.environ.get("GITHUB_API_URL", "")
    if api_url and not api_url.startswith(("https://", "http://")):
        raise UsageError(f"GITHUB_API_URL is {api_url!r}; expected an http(s) URL such as https://api.github.com")
    try:
        with GitHubClient.from_env(event.repository, retry=RetryPolicy(attempts=attempts)) as client:
            outcome = Dispatcher(client, policy, GitRevisions(config, fetch=not no_fetch)).handle(event)
    except GitHubError as exc:
        click.echo(f"ci-tools: error: GitHub API: {exc}", err=True)
        sys.exit(EXIT_INTERNAL)
    target = github_output or os.environ.get("GITHUB_OUTPUT")
    if target:
        write_outputs(target, outcome.outputs())
    click.echo(f"{outcome.status}: {outcome.reason}")
    if outcome.status == "unknown":
        # Nobody knows whether a sweep runs: the workflow run must not look green.
        sys.exit(EXIT_INTERNAL)


@dispatch_group.command("parse")
@repo_options
@click.argument("text")
@click.option("--rev", default=None, help="Also resolve the selection against the configs of this revision.")
@click.option("--base", default=None, help="Base revision for `changelog` (the entries appended since it).")
@handle_errors
def parse_command(repo_dir: str | None, config_file: str | None, text: str, rev: str | None, base: str | None) -> None:
    """Show how a comment TEXT is understood (JSON); exit 1 when it would not run."""
    from ..github.command import Command, CommandError, NotACommand, parse_comment

    parsed = parse_comment(text)
    if isinstance(parsed, NotACommand):
        click.echo(json.dumps({"kind": "not-a-command", "reason": parsed.reason, "note": parsed.note}, indent=2))
        raise SystemExit(EXIT_FINDINGS)
    if isinstance(parsed, CommandError):
        click.echo(json.dumps({"kind": "error", "problems": list(parsed.problems)}, indent=2))
        raise SystemExit(EXIT_FINDINGS)
    out: dict[str, object] = {"kind": "command", "command": asdict(parsed)}
    if rev is not None and isinstance(parsed, Command) and parsed.action != "help":
        from ..github.selection import SelectionError, resolve_selection, select_jobs
        from ..model.repository import load_repo
        from ..revision.snapshot import GitSnapshot

        config = get_config(repo_dir, config_file)
        head_snap = GitSnapshot(config.root, rev)
        head = load_repo(head_snap, config)
        base_repo = load_repo(GitSnapshot(config.root, base), config) if base else None
        try:
            selection = resolve_selection(parsed, head_snap.sha, head, base_repo)
        except SelectionError as exc:
            out.update(kind="error", problems=list(exc.problems))
            click.echo(json.dumps(out, indent=2))
            raise SystemExit(EXIT_FINDINGS) from None
        out["selection"] = selection.to_json()
        out["jobs"] = [j.label() for j in select_jobs(head, selection)]
    click.echo(json.dumps(out, indent=2))
    raise SystemExit(EXIT_CLEAN)
