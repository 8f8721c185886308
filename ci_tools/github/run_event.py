"""The GitHub Actions event that started a run: base revision, PR number, PR body.

Reads ``$GITHUB_EVENT_PATH`` (the webhook payload GitHub writes for every
run) and ``$GITHUB_EVENT_NAME``.  Only the few facts the toolkit needs are
kept, in one frozen value, so that ``check``, the claims checker and comment
dispatch read the payload the same way.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from ..errors import UsageError

_ZERO_SHA = "0" * 40


@dataclass(frozen=True)
class GitHubEvent:
    name: str
    # The revision a change is compared with: the PR's base commit, a push's previous head.
    base_sha: str | None = None
    head_sha: str | None = None
    pr_number: int | None = None
    pr_body: str | None = None
    base_ref: str | None = None
    repository: str | None = None
    payload: Mapping[str, Any] | None = None

    @property
    def is_pull_request(self) -> bool:
        return self.pr_number is not None


def _dict(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else {}


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def parse_event(name: str, payload: Mapping[str, Any]) -> GitHubEvent:
    """The facts of one event payload (unknown events give only their name and repository)."""
    repository = _str(_dict(payload.get("repository")).get("full_name"))
    pr = _dict(payload.get("pull_request"))
    if pr:  # pull_request, pull_request_target, pull_request_review, ...
        return GitHubEvent(
            name=name,
            base_sha=_str(_dict(pr.get("base")).get("sha")),
            head_sha=_str(_dict(pr.get("head")).get("sha")),
            pr_number=_int(pr.get("number")) or _int(payload.get("number")),
            pr_body=pr.get("body") if isinstance(pr.get("body"), str) else None,
            base_ref=_str(_dict(pr.get("base")).get("ref")),
            repository=repository,
            payload=payload,
        )
    if name == "merge_group":
        group = _dict(payload.get("merge_group"))
        return GitHubEvent(name=name, base_sha=_str(group.get("base_sha")), head_sha=_str(group.get("head_sha")),
                           base_ref=_str(group.get("base_ref")), repository=repository, payload=payload)
    if name == "push":
        before = _str(payload.get("before"))
        return GitHubEvent(name=name, base_sha=None if before == _ZERO_SHA else before,
                           head_sha=_str(payload.get("after")), base_ref=_str(payload.get("ref")),
                           repository=repository, payload=payload)
    issue = _dict(payload.get("issue"))
    if issue and issue.get("pull_request"):  # a comment on a PR: no base sha in the payload
        return GitHubEvent(name=name, pr_number=_int(issue.get("number")),
                           pr_body=issue.get("body") if isinstance(issue.get("body"), str) else None,
                           repository=repository, payload=payload)
    return GitHubEvent(name=name, repository=repository, payload=payload)


def load_event(env: Mapping[str, str] | None = None) -> GitHubEvent | None:
    """The current run's event, or None outside GitHub Actions (no ``GITHUB_EVENT_PATH``)."""
    env = os.environ if env is None else env
    path = env.get("GITHUB_EVENT_PATH")
    if not path:
        return None
    try:
        payload = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UsageError(f"GITHUB_EVENT_PATH names {path}, which does not exist; expected the event payload file") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UsageError(f"cannot read the event payload {path}: {exc}; expected a JSON object") from None
    if not isinstance(payload, dict):
        raise UsageError(f"the event payload {path} is not a JSON object")
    return parse_event(env.get("GITHUB_EVENT_NAME", ""), payload)
