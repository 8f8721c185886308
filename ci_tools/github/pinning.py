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

The pin is found in two steps.  :func:`named` or :func:`commented_head`
decides which commit the comment authorised, without looking at the head
now; :func:`confirm` then requires
that commit to be the head.  Between the two the dispatcher looks for the
run this comment already started: a re-run after the author pushed must
report that run, not refuse because the head has moved since.

Only the first page of the activity is read (the newest
:data:`ACTIVITY_PAGE` records): when every record on it is later than the
comment and GitHub has more, the head at the comment cannot be proven, and
the reply says so and how to proceed.
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


@dataclass(frozen=True)
class ActivityPage:
    """The first page of GitHub's activity records of one branch, and whether GitHub has more (its Link header)."""

    records: Sequence[Mapping[str, Any]]
    more: bool = False


@dataclass(frozen=True)
class Authorised:
    """The commit a comment authorises, found without looking at the head now (see :func:`confirm`)."""

    sha: str
    basis: str
    # Where it came from: the comment's `sha=`, or the branch's activity (then the first record after the comment).
    named: bool
    branch: str = ""
    commented_at: datetime | None = None
    first_later: _Move | None = None


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


def commented_head(branch: str, commented_at: datetime, page: ActivityPage) -> Authorised | PinRefusal:
    """The head of a branch of this repository when the comment was posted, from its activity records."""
    moves = _moves(page.records)
    unknown = f"GitHub's record of pushes to `{branch}` does not show what its head was when the comment was posted"
    if moves is None:
        return PinRefusal("head unknown", f"{unknown} (a record is malformed); {SHA_HINT}.")
    earlier = [m for m in moves if m.at < commented_at]
    later = [m for m in moves if m.at >= commented_at]
    if not earlier:
        if page.more or len(moves) >= ACTIVITY_PAGE:
            # Fail closed: the page does not reach back to the comment, and older pages are not read.
            return PinRefusal("head unknown", (
                f"the head of `{branch}` when the comment was posted could not be proven: only the first page of "
                f"GitHub's record of pushes to it was read, and all of its {len(moves)} records are later than the "
                "comment (GitHub has older ones). Comment again (a new comment is pinned to the head when it is "
                f"posted), or {SHA_HINT}."))
        return PinRefusal("head unknown", f"{unknown} (no record is older than the comment); {SHA_HINT}.")
    at_comment = earlier[0]
    if at_comment.kind == "branch_deletion" or not _SHA.match(at_comment.after):
        return PinRefusal("head unknown", f"`{branch}` did not exist when the comment was posted; {SHA_HINT}.")
    return Authorised(at_comment.after, f"head of `{branch}` since it was {_describe(at_comment)}", named=False,
                      branch=branch, commented_at=commented_at, first_later=later[-1] if later else None)


def named(sha: str) -> Authorised:
    return Authorised(sha, "named in the comment with sha=", named=True)


def confirm(authorised: Authorised, head_sha: str, number: int) -> Pin | PinRefusal:
    """The pin when the authorised commit is still the head of pull request ``number``, else why not."""
    if authorised.sha == head_sha:
        return Pin(head_sha, authorised.basis)
    if authorised.named:
        return PinRefusal("sha mismatch", f"the comment names `sha={short(authorised.sha)}...`, but the head of "
                          f"#{number} is `{short(head_sha)}`. Review the new commits and comment again with the "
                          "commit you reviewed.")
    branch, first, at = authorised.branch, authorised.first_later, authorised.commented_at
    if first is not None and at is not None:
        return PinRefusal("head moved", f"the head moved after the comment was posted: `{branch}` was "
                          f"{_describe(first)}, the comment was posted at {at.isoformat()} on "
                          f"`{short(authorised.sha)}`. Review the new commits and comment again, or {SHA_HINT}.")
    return PinRefusal("head unknown", f"GitHub's record of pushes to `{branch}` does not show what its head was when "
                      f"the comment was posted (GitHub reports the head `{short(head_sha)}`, its newest record "
                      f"before the comment `{short(authorised.sha)}`); {SHA_HINT}.")


def pin_from_activity(head_sha: str, branch: str, commented_at: datetime, activities: Sequence[Mapping[str, Any]],
                      *, number: int = 0, more: bool = False) -> Pin | PinRefusal:
    """Both steps for a branch of this repository: the head at the comment, which must be the head now."""
    found = commented_head(branch, commented_at, ActivityPage(activities, more))
    return found if isinstance(found, PinRefusal) else confirm(found, head_sha, number)


def pin_fork(head_sha: str, number: int) -> PinRefusal:
    return PinRefusal("fork without sha", f"#{number} comes from a fork, whose pushes GitHub does not record here; "
                      f"{SHA_HINT} (the head is now `{short(head_sha)}`).")


__all__ = ["ActivityPage", "Authorised", "Pin", "PinRefusal", "commented_head", "confirm", "named",
           "pin_from_activity", "pin_fork", "short"]
