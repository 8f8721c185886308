"""One sweep per comment: the dispatch key and finding the run it started.

``workflow_dispatch`` has no idempotency key of its own, and a timeout or a
5xx answer does not say whether GitHub created the run.  So every dispatch
carries a key derived from the comment (``comment-<id>``; a re-run of the
same event has the same key), the sweep workflow shows it at the end of its
``run-name``, and the dispatcher looks for a run whose title ends with the
key: before dispatching (a re-run must not start a second sweep) and after an
ambiguous failure (did the first request start one?).

The dispatched workflow must therefore declare a ``key`` input and end its
``run-name`` with it, as ``.github/workflows/sweep.yml`` does::

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


def match_run(runs: Iterable[Mapping[str, Any]], key: str) -> FoundRun | None:
    """The oldest workflow_dispatch run whose title ends with the key."""
    found: list[FoundRun] = []
    for run in runs:
        title = run.get("display_title")
        words = title.split() if isinstance(title, str) else []
        if run.get("event") != "workflow_dispatch" or not words or words[-1] != key:
            continue
        run_id, url = run.get("id"), run.get("html_url")
        if isinstance(run_id, int):
            found.append(FoundRun(run_id, url if isinstance(url, str) else "", str(run.get("status") or "")))
    return min(found, key=lambda r: r.run_id) if found else None


def find_run(client: GitHubClient, workflow: str, ref: str, key: str, since: datetime) -> FoundRun | None:
    """The run a dispatch with this key started, if GitHub lists one."""
    created = (since - CLOCK_SLACK).astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    return match_run(client.workflow_runs(workflow, event="workflow_dispatch", branch=ref, created_since=created), key)


def wait_for_run(client: GitHubClient, workflow: str, ref: str, key: str, since: datetime) -> FoundRun | None:
    """After an ambiguous dispatch: look for the run a few times, as a new run takes seconds to be listed."""
    for wait in LOOKUP_WAITS:
        if wait:
            client.pause(wait)
        found = find_run(client, workflow, ref, key, since)
        if found is not None:
            return found
    return None


__all__ = ["FoundRun", "dispatch_key", "find_run", "match_run", "run_title", "wait_for_run"]
