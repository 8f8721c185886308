"""The parts of an ``issue_comment`` webhook payload the dispatcher reads.

Only fields GitHub sets are read (never anything a commenter controls other
than the body), and each is type-checked: a payload that does not look like
an issue_comment event is a usage error, not a crash.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Mapping

from ..errors import UsageError

_SLUG = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+\Z")
# GitHub logins: alphanumerics and single hyphens; apps end in [bot].
LOGIN = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})(?:\[bot\])?\Z")


@dataclass(frozen=True)
class CommentEvent:
    action: str
    repository: str
    number: int
    is_pull_request: bool
    comment_id: int
    body: str
    created_at: datetime
    login: str
    user_type: str

    @property
    def is_bot(self) -> bool:
        return self.user_type == "Bot" or self.login.lower().endswith("[bot]")


def parse_time(value: Any, what: str) -> datetime:
    if not isinstance(value, str):
        raise UsageError(f"the event's {what} is {value!r}, expected an ISO 8601 time")
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise UsageError(f"the event's {what} is {value!r}, expected an ISO 8601 time") from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)


def _get(data: Mapping[str, Any], *path: str) -> Any:
    node: Any = data
    for part in path:
        if not isinstance(node, Mapping):
            return None
        node = node.get(part)
    return node


def parse_event(payload: Any, source: str = "event") -> CommentEvent:
    """Read an issue_comment payload; raises UsageError naming the first missing field."""
    if not isinstance(payload, Mapping):
        raise UsageError("the event payload is not a JSON object", path=source)

    def need(kind: type, *path: str) -> Any:
        value = _get(payload, *path)
        if not isinstance(value, kind) or isinstance(value, bool) and kind is int:
            raise UsageError(f"`{'.'.join(path)}` is {value!r}, expected {kind.__name__}; "
                             "is this an issue_comment event?", path=source)
        return value

    repository = need(str, "repository", "full_name")
    if not _SLUG.match(repository):
        raise UsageError(f"`repository.full_name` is {repository!r}, expected OWNER/NAME", path=source)
    login = need(str, "comment", "user", "login")
    if not LOGIN.match(login):
        raise UsageError(f"`comment.user.login` is {login!r}, which is not a GitHub login", path=source)
    body = _get(payload, "comment", "body")
    return CommentEvent(
        action=need(str, "action"),
        repository=repository,
        number=need(int, "issue", "number"),
        is_pull_request=isinstance(_get(payload, "issue", "pull_request"), Mapping),
        comment_id=need(int, "comment", "id"),
        body=body if isinstance(body, str) else "",
        created_at=parse_time(_get(payload, "comment", "created_at"), "comment.created_at"),
        login=login,
        user_type=str(_get(payload, "comment", "user", "type") or ""),
    )
