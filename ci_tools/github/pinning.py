"""Which commit a ``/run-benchmark`` comment authorises.

An ``issue_comment`` payload names no commit, and commit dates are whatever
the pusher wrote, so neither can say what the commenter saw.  The pin is
taken from records the pull request's author cannot write:

* ``sha=<40 hex>`` in the comment: the commenter named the commit.  It must
  be the head GitHub reports now (the pull request API), or nothing runs.
* Otherwise, for a branch of this repository: GitHub's repository activity
  (``GET /repos/{o}/{r}/activity``) records every push, force-push and
  branch creation with GitHub's own timestamp.  The newest record strictly
  before the comment's ``created_at`` gives the head when the comment was
  posted; it must equal the head now.  A push after the comment (fast-forward
  or force, whatever dates its commits carry) therefore refuses the command,
  and so does anything that cannot be established (no record before the
  comment, a malformed record, the feed not answering): the commenter is
  asked to name the commit with ``sha=``.
* A fork's pushes are not in this repository's activity, so a fork's command
  must name ``sha=``.

Refusals show commits by their 12-digit short id only: ``sha=`` needs all 40
digits, which the commenter has to take from the commit they reviewed, not
from a reply that shows whatever was pushed last.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Mapping, Sequence

_SHA = re.compile(r"^[0-9a-f]{40}\Z")
ACTIVITY_PAGE = 100
SHA_HINT = ("name the commit you reviewed with `sha=` and its full 40-digit id, copied from that commit's page, "
            "not from this reply")


@dataclass(frozen=True)
class Pin:
    """The authorised commit and how it was established (for the log and the reply)."""

    sha: str
    basis: str


@dataclass(frozen=True)
class PinRefusal:
    reason: str  # short, for the step output and the log
    headline: str  # the sentence the commenter reads


def short(sha: str) -> str:
    return sha[:12]


@dataclass(frozen=True)
class _Move:
    at: datetime
    before: str
    after: str
    kind: str
    actor: str


def _time(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)


def _moves(activities: Sequence[Mapping[str, Any]]) -> list[_Move] | None:
    """The records, newest first; None when any of them is not what GitHub documents."""
    out: list[_Move] = []
    for item in activities:
        after, before, kind = item.get("after"), item.get("before"), item.get("activity_type")
        actor = item.get("actor") if isinstance(item.get("actor"), dict) else {}
        login = (actor or {}).get("login")
        at = _time(item.get("timestamp"))
        if at is None or not (isinstance(after, str) and isinstance(before, str) and isinstance(kind, str)):
            return None
        out.append(_Move(at, before, after, kind, login if isinstance(login, str) else "someone"))
    return sorted(out, key=lambda m: m.at, reverse=True)


def _describe(move: _Move) -> str:
    what = {"force_push": "force-pushed", "push": "pushed", "branch_creation": "created"}.get(move.kind, move.kind)
    return f"{what} to `{short(move.after)}` by `{move.actor}` at {move.at.isoformat()}"


def pin_from_activity(head_sha: str, branch: str, commented_at: datetime,
                      activities: Sequence[Mapping[str, Any]]) -> Pin | PinRefusal:
    """The pin for a branch of this repository, from its activity records (newest first, one page)."""
    moves = _moves(activities)
    unknown = f"GitHub's record of pushes to `{branch}` does not show what its head was when the comment was posted"
    if moves is None:
        return PinRefusal("head unknown", f"{unknown} (a record is malformed); {SHA_HINT}.")
    earlier = [m for m in moves if m.at < commented_at]
    later = [m for m in moves if m.at >= commented_at]
    if not earlier:
        why = (f"all of the last {len(moves)} records are later than the comment" if len(moves) >= ACTIVITY_PAGE
               else "no record is older than the comment")
        return PinRefusal("head unknown", f"{unknown} ({why}); {SHA_HINT}.")
    at_comment = earlier[0]
    if at_comment.kind == "branch_deletion" or not _SHA.match(at_comment.after):
        return PinRefusal("head unknown", f"`{branch}` did not exist when the comment was posted; {SHA_HINT}.")
    if at_comment.after == head_sha:
        return Pin(head_sha, f"head of `{branch}` since it was {_describe(at_comment)}")
    if later:
        first = later[-1]
        return PinRefusal("head moved", f"the head moved after the comment was posted: `{branch}` was "
                          f"{_describe(first)}, the comment was posted at {commented_at.isoformat()} on "
                          f"`{short(at_comment.after)}`. Review the new commits and comment again, or {SHA_HINT}.")
    return PinRefusal("head unknown", f"{unknown} (GitHub reports the head `{short(head_sha)}`, its newest record "
                      f"before the comment `{short(at_comment.after)}`); {SHA_HINT}.")


def pin_named(named: str, head_sha: str, number: int) -> Pin | PinRefusal:
    if named == head_sha:
        return Pin(head_sha, "named in the comment with sha=")
    return PinRefusal("sha mismatch", f"the comment names `sha={short(named)}...`, but the head of #{number} is "
                      f"`{short(head_sha)}`. Review the new commits and comment again with the commit you reviewed.")


def pin_fork(head_sha: str, number: int) -> PinRefusal:
    return PinRefusal("fork without sha", f"#{number} comes from a fork, whose pushes GitHub does not record here; "
                      f"{SHA_HINT} (the head is now `{short(head_sha)}`).")


__all__ = ["Pin", "PinRefusal", "pin_from_activity", "pin_fork", "pin_named", "short"]
