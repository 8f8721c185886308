"""One sweep per comment: the dispatch key and finding the run it started.

``workflow_dispatch`` has no idempotency key of its own, and a timeout or a
5xx answer does not say whether GitHub created the run.  So every dispatch
carries a key derived from the comment (``comment-<id>``; a re-run of the
same event has the same key), the sweep workflow shows it at the end of its
``run-name``, and the dispatcher looks for the run: before dispatching (a
re-run must not start a second sweep) and after an ambiguous failure (did the
first request start one?).

A title is text anyone who may dispatch the workflow by hand can write, so a
run is this comment's only when all of these hold (:func:`match_run`): it is
a ``workflow_dispatch`` run, GitHub names as its ``actor`` the identity the
dispatcher's token acts as (``dispatch.bot-login``), the last word of its
title is exactly the key, and the title names the commit the comment
authorised.  A run someone started by hand with a look-alike title is not
this comment's, whatever it runs.

The dispatched workflow must therefore declare ``sha`` and ``key`` inputs and
show both in its ``run-name``, the key last, as ``.github/workflows/sweep.yml``
does::

    run-name: sweep of ${{ inputs.sha }} for ${{ inputs.key }}
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any, Iterable, Mapping

from .client import GitHubClient

# Clocks of the comment service and of Actions are GitHub's own; a minute of slack costs nothing.
CLOCK_SLACK = timedelta(minutes=1)
# Seconds to wait before each look for the run after an ambiguous dispatch: at once, then backing off.
LOOKUP_WAITS = (0.0, 2.0, 4.0, 8.0)


def dispatch_key(comment_id: int) -> str:
    return f"comment-{int(comment_id)}"


def run_title(sha: str, key: str) -> str:
    """What the sweep workflow's ``run-name`` evaluates to (tests compare the two)."""
    return f"sweep of {sha} for {key}"


@dataclass(frozen=True)
class FoundRun:
    run_id: int
    url: str
    status: str


@dataclass(frozen=True)
class RunQuery:
    """What identifies the run one comment's dispatch started."""

    workflow: str
    ref: str
    key: str
    sha: str  # the commit the comment authorised
    actor: str  # the login the dispatching token acts as
    since: datetime  # the comment's time: no run of it is older


def _login(user: Any) -> str:
    login = user.get("login") if isinstance(user, Mapping) else None
    return login if isinstance(login, str) else ""


def is_match(run: Mapping[str, Any], query: RunQuery) -> bool:
    title = run.get("display_title")
    words = title.split() if isinstance(title, str) else []
    return (run.get("event") == "workflow_dispatch" and _login(run.get("actor")).casefold() == query.actor.casefold()
            and len(words) >= 2 and words[-1] == query.key and query.sha in words[:-1])


def match_run(runs: Iterable[Mapping[str, Any]], query: RunQuery) -> FoundRun | None:
    """The oldest of the runs that are this comment's (see the module's description)."""
    found: list[FoundRun] = []
    for run in runs:
        if not is_match(run, query):
            continue
        run_id, url = run.get("id"), run.get("html_url")
        if isinstance(run_id, int):
            found.append(FoundRun(run_id, url if isinstance(url, str) else "", str(run.get("status") or "")))
    return min(found, key=lambda r: r.run_id) if found else None


def find_run(client: GitHubClient, query: RunQuery) -> FoundRun | None:
    """The run this comment's dispatch started, if GitHub lists one."""
    created = (query.since - CLOCK_SLACK).astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    runs = client.workflow_runs(query.workflow, event="workflow_dispatch", branch=query.ref, created_since=created)
    return match_run(runs, query)


def wait_for_run(client: GitHubClient, query: RunQuery) -> FoundRun | None:
    """After an ambiguous dispatch: look for the run a few times, as a new run takes seconds to be listed."""
    for wait in LOOKUP_WAITS:
        if wait:
            client.pause(wait)
        found = find_run(client, query)
        if found is not None:
            return found
    return None


__all__ = ["FoundRun", "RunQuery", "dispatch_key", "find_run", "is_match", "match_run", "run_title", "wait_for_run"]
