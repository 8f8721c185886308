"""The texts ci-tools writes back on a pull request.

Every reply starts with a hidden marker naming the comment it answers and
its author, so a re-run of the same event updates its reply instead of adding
another, and a person who may not dispatch is answered once per pull request,
not once per comment.  Markers are trusted only on comments the configured
bot wrote (anyone can paste one).  Replies quote comment text only through
:func:`ci_tools.github.command.shown`, and repository data (config keys, job
labels) only after the same cleaning.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable

from ..jobs.job import Job
from .command import USAGE, shown
from .selection import DispatchSelection

MARKER_PREFIX = "<!-- ci-tools:run-benchmark"
PLAN_LIMIT = 40
DISPATCHED_HEADLINE = ":rocket: **Dispatched**"
_MARKER = re.compile(r"^<!-- ci-tools:run-benchmark reply-to=([0-9]+) to=([A-Za-z0-9-]+) -->\n")


@dataclass(frozen=True)
class Addressee:
    """The comment a reply answers and its author (a login already validated by the event parser)."""

    comment_id: int
    login: str


def marker(to: Addressee) -> str:
    return f"{MARKER_PREFIX} reply-to={int(to.comment_id)} to={to.login} -->"


def read_marker(body: str) -> Addressee | None:
    m = _MARKER.match(body)
    return Addressee(int(m.group(1)), m.group(2)) if m else None


def _with_marker(to: Addressee, text: str) -> str:
    return f"{marker(to)}\n{text.rstrip()}\n"


HELP = f"""**`/run-benchmark`** runs benchmark jobs of this pull request on the self-hosted runners.

Write it on the first line of a new comment:

- `/run-benchmark KEY-GLOB [KEY-GLOB ...]`: the jobs of the config keys the globs match (`*` is the only wildcard, whole-key match), e.g. `/run-benchmark dsr1-fp4-mi355x-*`
- `/run-benchmark changelog`: the jobs selected by the changelog entries this pull request appends
- options: `conc=48,64`, `tp=8`, `ep=8` (comma-separated lists), `scenario=fixed-seq-len|agentic-coding`, `evals` (also run evals), `dry-run` (only show what would run), `sha=<40 hex>` (the commit you reviewed, which must be the head; required for pull requests from forks). Without `sha=` the commit is the head GitHub recorded when the comment was posted; a push after the comment refuses the command
- `/run-benchmark help`: this text

Accepted form: {USAGE}.
Quoted (`>`) or code-block commands and edited comments are not acted on."""


def help_reply(to: Addressee) -> str:
    return _with_marker(to, HELP)


def refusal(to: Addressee, headline: str, problems: Iterable[str] = (), *, usage: bool = False) -> str:
    lines = [f":confused: **Not running benchmarks:** {headline}"]
    items = list(problems)
    if items:
        lines.append("")
        lines.extend(f"- {p}" for p in items)
    if usage:
        lines.extend(["", f"Accepted: {USAGE}. `/run-benchmark help` explains the options."])
    return _with_marker(to, "\n".join(lines))


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
    if selection.baseline:
        extra += (f"; beside {selection.baseline_jobs} of them, the merge-base `{selection.baseline[:12]}`'s recipes "
                  "for the same points on the same runner, run in turn (a same-node baseline)")
    return f"{selection.jobs} job(s) of {len(selection.targets)} config(s): {keys}{extra}"


def plan_reply(to: Addressee, selection: DispatchSelection, jobs: list[Job]) -> str:
    lines = [f":mag: **Dry run** at `{selection.sha}`: {_summary(selection)}. Nothing was dispatched.",
             "", *_plan_lines(jobs),
             "", "Remove `dry-run` to run them."]
    return _with_marker(to, "\n".join(lines))


def _run_link(url: str) -> str:
    # The URL comes from GitHub's answer; only a plain https URL is linked.
    return f" ([the run]({url}))" if re.match(r"^https://[A-Za-z0-9./_-]+$", url) else ""


def dispatched_reply(to: Addressee, selection: DispatchSelection, jobs: list[Job], workflow: str, ref: str,
                     run_url: str = "") -> str:
    lines = [f"{DISPATCHED_HEADLINE} `{workflow}` on `{ref}` for `{selection.sha}`{_run_link(run_url)}, "
             f"requested by `{to.login}`: {_summary(selection)}.",
             "", *_plan_lines(jobs),
             "", "Results will be reported on this pull request in one comment, updated as the jobs finish."]
    return _with_marker(to, "\n".join(lines))


def already_dispatched_reply(to: Addressee, workflow: str, run_url: str, status: str) -> str:
    state = f" (status `{shown(status)}`)" if status else ""
    return _with_marker(to, f":information_source: **Already dispatched**: this comment started a `{workflow}` "
                            f"run{_run_link(run_url)}{state}; it is not started a second time. Write a new comment "
                            "to run the benchmarks again.")


def unknown_reply(to: Addressee, workflow: str, problem: str, actions_url: str) -> str:
    return _with_marker(to, f":warning: **Dispatch status unknown:** {problem}. GitHub may still start the "
                            f"`{workflow}` run; it was not requested a second time, so that the benchmarks cannot "
                            f"run twice. Check [the Actions tab]({actions_url}) before commenting again; re-running "
                            "this workflow dispatches only if no run for this comment exists.")
