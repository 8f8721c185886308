"""The texts ci-tools writes back on a pull request.

Every reply starts with a hidden marker naming the comment it answers, so a
re-run of the same event updates its reply instead of adding another.  Replies
quote comment text only through :func:`ci_tools.github.command.shown`, and
repository data (config keys, job labels) only after the same cleaning.
"""

from __future__ import annotations

from typing import Iterable

from ..matrix import Job
from .command import USAGE, shown
from .selection import DispatchSelection

MARKER_PREFIX = "<!-- ci-tools:run-benchmark"
PLAN_LIMIT = 40


def marker(comment_id: int) -> str:
    return f"{MARKER_PREFIX} reply-to={int(comment_id)} -->"


def _with_marker(comment_id: int, text: str) -> str:
    return f"{marker(comment_id)}\n{text.rstrip()}\n"


HELP = f"""**`/run-benchmark`** runs benchmark jobs of this pull request on the self-hosted runners.

Write it on the first line of a new comment:

- `/run-benchmark KEY-GLOB [KEY-GLOB ...]`: the jobs of the config keys the globs match (`*` is the only wildcard, whole-key match), e.g. `/run-benchmark dsr1-fp4-mi355x-*`
- `/run-benchmark changelog`: the jobs selected by the changelog entries this pull request appends
- options: `conc=48,64`, `tp=8`, `ep=8` (comma-separated lists), `scenario=fixed-seq-len|agentic-coding`, `evals` (also run evals), `dry-run` (only show what would run), `sha=<40 hex>` (refuse unless that is the head commit; required for pull requests from forks)
- `/run-benchmark help`: this text

Accepted form: {USAGE}.
Quoted (`>`) or code-block commands and edited comments are not acted on."""


def help_reply(comment_id: int) -> str:
    return _with_marker(comment_id, HELP)


def refusal(comment_id: int, headline: str, problems: Iterable[str] = (), *, usage: bool = False) -> str:
    lines = [f":confused: **Not running benchmarks:** {headline}"]
    items = list(problems)
    if items:
        lines.append("")
        lines.extend(f"- {p}" for p in items)
    if usage:
        lines.extend(["", f"Accepted: {USAGE}. `/run-benchmark help` explains the options."])
    return _with_marker(comment_id, "\n".join(lines))


def _clean(text: str) -> str:
    return shown(text, limit=200)


def _plan_lines(jobs: list[Job]) -> list[str]:
    body = [_clean(j.label()) for j in jobs[:PLAN_LIMIT]]
    if len(jobs) > PLAN_LIMIT:
        body.append(f"... and {len(jobs) - PLAN_LIMIT} more")
    return ["```text", *body, "```"]


def _summary(selection: DispatchSelection) -> str:
    keys = ", ".join(f"`{_clean(t.config_key)}`" for t in selection.targets[:10])
    if len(selection.targets) > 10:
        keys += f" and {len(selection.targets) - 10} more"
    filters = " ".join(f"{n}={','.join(map(str, v))}" for n, v in
                       (("conc", selection.conc), ("tp", selection.tp), ("ep", selection.ep)) if v)
    extra = (f"; filters `{filters}`" if filters else "") + ("; with evals" if selection.evals else "")
    return f"{selection.jobs} job(s) of {len(selection.targets)} config(s): {keys}{extra}"


def plan_reply(comment_id: int, selection: DispatchSelection, jobs: list[Job]) -> str:
    lines = [f":mag: **Dry run** at `{selection.sha}`: {_summary(selection)}. Nothing was dispatched.",
             "", *_plan_lines(jobs),
             "", "Remove `dry-run` to run them."]
    return _with_marker(comment_id, "\n".join(lines))


def dispatched_reply(comment_id: int, selection: DispatchSelection, jobs: list[Job], workflow: str, ref: str,
                     requester: str) -> str:
    lines = [f":rocket: **Dispatched** `{workflow}` on `{ref}` for `{selection.sha}`, requested by "
             f"`{requester}`: {_summary(selection)}.",
             "", *_plan_lines(jobs),
             "", "Results will be reported on this pull request when the sweep finishes."]
    return _with_marker(comment_id, "\n".join(lines))
