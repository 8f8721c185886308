"""Handling one ``issue_comment`` event: authorise, pin, select, dispatch, reply.

The order of the checks is part of the security design:

1. Parse the body first, offline.  A comment that is not a command costs no
   API call at all (every comment on the repository triggers the workflow).
2. Bots are ignored silently, so ci-tools' own replies can never loop.
3. Only ``created`` comments act; an edit could otherwise change what a
   maintainer approved after the fact.
4. Only pull requests; the commenter must be allowlisted or hold the
   configured permission (read through the REST API, never from the payload's
   ``author_association``, which does not reflect team grants).
5. The pull request must be open, not a draft, and not from a fork unless
   forks are enabled; a fork's command must name ``sha=``.
6. Pinning: the head commit is read from the API now.  A ``sha=`` must equal
   it.  The head's committer date must not be later than the comment: if it is,
   the head moved after the comment was written and the commenter may not have
   seen that code.  Committer dates are set by whoever made the commit, so this
   rule catches honest races; it is no defence against a hostile author, which
   is why fork pull requests (whose authors are not trusted with write access)
   must pin the commit explicitly with ``sha=``.
7. The selection is checked against the configs at the pinned commit, read as
   git objects (never checked out, no code of the pull request runs).

Only then is ``workflow_dispatch`` sent, once, with the pinned SHA.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Literal, Protocol

from ..config import ProjectConfig
from ..errors import UsageError
from ..model.repository import RepoData, load_repo
from ..snapshot import GitSnapshot
from .auth import DispatchPolicy, effective_permission
from .client import GitHubClient, GitHubError
from .command import Command, CommandError, NotACommand, parse_comment
from .event import CommentEvent
from .replies import dispatched_reply, help_reply, marker, plan_reply, refusal
from .selection import DispatchSelection, SelectionError, resolve_selection, select_jobs

_SHA = re.compile(r"^[0-9a-f]{40}$")
# workflow_dispatch inputs are limited to 65,535 characters in total.
MAX_SELECTION_CHARS = 60_000

Status = Literal["ignored", "refused", "help", "planned", "dispatched"]


@dataclass(frozen=True)
class Outcome:
    status: Status
    reason: str
    pr: int | None = None
    sha: str | None = None
    selection: DispatchSelection | None = None
    reply: str | None = None
    reply_url: str | None = None

    def outputs(self) -> dict[str, str]:
        """The values the workflow reads (all validated data, none of the comment text)."""
        return {
            "outcome": self.status,
            "pr": str(self.pr) if self.pr is not None else "",
            "sha": self.sha or "",
            "selection": self.selection.dumps() if self.selection else "",
            "jobs": str(self.selection.jobs) if self.selection else "0",
            "reply-url": self.reply_url or "",
        }


class Revisions(Protocol):
    def load(self, sha: str) -> RepoData: ...

    def committed_at(self, sha: str) -> datetime: ...


class GitRevisions:
    """Pinned revisions read from the local clone as git objects; fetched by SHA when missing.

    The fetch is an argv (no shell) with a SHA already validated as 40 hex
    digits; fetching runs none of the fetched code.
    """

    def __init__(self, config: ProjectConfig, *, fetch: bool = True, remote: str = "origin") -> None:
        self.config = config
        self.fetch = fetch
        self.remote = remote
        self._snapshots: dict[str, GitSnapshot] = {}

    def snapshot(self, sha: str) -> GitSnapshot:
        if not _SHA.match(sha):
            raise UsageError(f"{sha!r} is not a full commit SHA")
        if sha not in self._snapshots:
            try:
                snap = GitSnapshot(self.config.root, sha)
            except UsageError:
                if not self.fetch:
                    raise
                git = ["git", "-C", str(self.config.root)]
                shallow = subprocess.run([*git, "rev-parse", "--is-shallow-repository"], capture_output=True,
                                         text=True, timeout=30, check=False).stdout.strip() == "true"
                # Deepening a shallow clone by one commit is enough; a full clone must not become shallow.
                depth = ["--depth=1"] if shallow else []
                subprocess.run([*git, "fetch", "--quiet", "--no-tags", *depth, self.remote, sha],
                               capture_output=True, timeout=300, check=False)
                snap = GitSnapshot(self.config.root, sha)
            self._snapshots[sha] = snap
        return self._snapshots[sha]

    def load(self, sha: str) -> RepoData:
        return load_repo(self.snapshot(sha), self.config)

    def committed_at(self, sha: str) -> datetime:
        committed: datetime = self.snapshot(sha).commit.committed_datetime
        return committed.astimezone(timezone.utc)


def _short(sha: str) -> str:
    return sha[:12]


class Dispatcher:
    def __init__(self, client: GitHubClient, policy: DispatchPolicy, revisions: Revisions) -> None:
        self.client = client
        self.policy = policy
        self.revisions = revisions

    # -- replies -----------------------------------------------------------------------------

    def _reply(self, event: CommentEvent, body: str) -> str | None:
        """Create the reply, or update the one a previous run of this event wrote."""
        tag = marker(event.comment_id)
        for comment in self.client.issue_comments(event.number):
            text = comment.get("body")
            user = comment.get("user") if isinstance(comment.get("user"), dict) else {}
            # Only a bot's comment can be ours: a person could paste the marker.
            if isinstance(text, str) and text.startswith(tag) and (user or {}).get("type") == "Bot":
                cid = comment.get("id")
                if isinstance(cid, int):
                    updated = self.client.update_comment(cid, body)
                    url = updated.get("html_url")
                    return url if isinstance(url, str) else None
        created = self.client.create_comment(event.number, body)
        url = created.get("html_url")
        return url if isinstance(url, str) else None

    def _refuse(self, event: CommentEvent, reason: str, body: str, *, pr: int | None = None,
                sha: str | None = None) -> Outcome:
        self.client.add_reaction(event.comment_id, "confused")
        url = self._reply(event, body)
        return Outcome("refused", reason, pr=pr, sha=sha, reply=body, reply_url=url)

    # -- the checks --------------------------------------------------------------------------

    def _permission_problem(self, event: CommentEvent) -> str | None:
        if self.policy.allowlisted(event.login):
            return None
        if self.policy.min_permission == "none":
            return (f"`{event.login}` is not in `dispatch.allow-users`, the only way to dispatch benchmarks "
                    "in this repository")
        level = effective_permission(self.client.collaborator_permission(event.login))
        if self.policy.permission_suffices(level):
            return None
        allow = " or be listed in `dispatch.allow-users`" if self.policy.allow_users else ""
        return (f"`{event.login}` has `{level}` permission on {event.repository}; dispatching benchmarks needs "
                f"`{self.policy.min_permission}` or higher{allow}")

    def handle(self, event: CommentEvent) -> Outcome:
        parsed = parse_comment(event.body)
        if isinstance(parsed, NotACommand) and parsed.note is None:
            return Outcome("ignored", f"not a command: {parsed.reason}")
        if event.is_bot:
            return Outcome("ignored", f"comment by the bot {event.login}")
        if event.action != "created":
            # A deleted comment cannot take a reaction or be answered; an edit can be told why nothing happens.
            if isinstance(parsed, NotACommand) or event.action == "deleted":
                return Outcome("ignored", f"{event.action} comment, not a command")
            body = refusal(event.comment_id, f"this comment was {event.action}; commands in edited comments are "
                           "not acted on. Write the command in a new comment.")
            return self._refuse(event, f"{event.action} comment", body)
        if isinstance(parsed, NotACommand):
            body = refusal(event.comment_id, "the first line only looks like a command.", [parsed.note or ""])
            return self._refuse(event, "look-alike command", body)
        self.client.add_reaction(event.comment_id, "eyes")
        try:
            return self._received(event, parsed)
        except GitHubError as exc:
            # Tell the commenter, if GitHub lets us, then let the caller report the failure.
            try:
                self._refuse(event, "GitHub API error", refusal(
                    event.comment_id, f"a GitHub API request failed: {exc}. A maintainer can re-run the workflow."))
            except GitHubError:
                pass
            raise

    def _received(self, event: CommentEvent, parsed: Command | CommandError) -> Outcome:
        if not event.is_pull_request:
            body = refusal(event.comment_id, f"#{event.number} is an issue, not a pull request; "
                           "`/run-benchmark` runs the code of a pull request.")
            return self._refuse(event, "comment on an issue", body)
        if isinstance(parsed, Command) and parsed.action == "help":
            url = self._reply(event, help_reply(event.comment_id))
            return Outcome("help", "help requested", pr=event.number, reply=help_reply(event.comment_id),
                           reply_url=url)
        problem = self._permission_problem(event)
        if problem:
            return self._refuse(event, "insufficient permission", refusal(event.comment_id, problem),
                                pr=event.number)
        if isinstance(parsed, CommandError):
            body = refusal(event.comment_id, "the command is not valid.", parsed.problems, usage=True)
            return self._refuse(event, "invalid command", body, pr=event.number)
        return self._run(event, parsed)

    def _run(self, event: CommentEvent, command: Command) -> Outcome:
        pr = self.client.pull_request(event.number)
        number = event.number

        def refuse(reason: str, headline: str, problems: tuple[str, ...] = (), sha: str | None = None,
                   usage: bool = False) -> Outcome:
            return self._refuse(event, reason, refusal(event.comment_id, headline, problems, usage=usage),
                                pr=number, sha=sha)

        if pr.get("state") != "open" or pr.get("merged") is True:
            state = "merged" if pr.get("merged") is True else str(pr.get("state"))
            return refuse("pull request not open", f"pull request #{number} is {state}; only open pull requests "
                          "are benchmarked.")
        if pr.get("draft") is True:
            return refuse("draft pull request", f"pull request #{number} is a draft; mark it ready for review "
                          "first.")
        head = pr.get("head") if isinstance(pr.get("head"), dict) else {}
        base = pr.get("base") if isinstance(pr.get("base"), dict) else {}
        head_sha = (head or {}).get("sha")
        if not isinstance(head_sha, str) or not _SHA.match(head_sha):
            return refuse("no head commit", "GitHub did not report a head commit for this pull request.")
        head_repo = (head or {}).get("repo")
        base_repo = (base or {}).get("repo")
        head_name = head_repo.get("full_name") if isinstance(head_repo, dict) else None
        base_name = base_repo.get("full_name") if isinstance(base_repo, dict) else event.repository
        fork = head_name is None or head_name != base_name
        if fork and not self.policy.allow_forks:
            origin = f"`{head_name}`" if head_name else "a deleted fork"
            return refuse("fork pull request", f"the head of #{number} comes from {origin}; benchmarks run on "
                          "self-hosted runners, so pull requests from forks are not run here "
                          "(`dispatch.allow-forks` is off).", sha=head_sha)
        if command.sha is not None and command.sha != head_sha:
            return refuse("sha mismatch", f"the comment names `sha={command.sha}`, but the head of #{number} is "
                          f"`{head_sha}`. Review the new commits and comment again.", sha=head_sha)
        if fork and command.sha is None:
            return refuse("fork without sha", f"#{number} comes from a fork: name the commit you reviewed, e.g. "
                          f"`/run-benchmark ... sha={head_sha}` (after checking that this is what you reviewed).",
                          sha=head_sha)
        try:
            committed = self.revisions.committed_at(head_sha)
            head_repo_data = self.revisions.load(head_sha)
            base_sha = (base or {}).get("sha")
            base_data = None
            if command.action == "changelog":
                if not isinstance(base_sha, str) or not _SHA.match(base_sha):
                    return refuse("no base commit", "GitHub did not report a base commit for this pull request.")
                base_data = self.revisions.load(base_sha)
        except UsageError as exc:
            return refuse("revision unavailable", f"the pinned commit `{head_sha}` could not be read: {exc}",
                          sha=head_sha)
        if committed > event.created_at:
            return refuse("head moved", f"the head of #{number} moved after the comment was written: "
                          f"`{_short(head_sha)}` was committed at {committed.isoformat()}, the comment at "
                          f"{event.created_at.isoformat()}. Review the new commits and comment again.",
                          sha=head_sha)
        try:
            selection = resolve_selection(command, head_sha, head_repo_data, base_data)
        except SelectionError as exc:
            return refuse("nothing to run", "the command selects nothing that can run at "
                          f"`{_short(head_sha)}`.", exc.problems, sha=head_sha, usage=True)
        if selection.jobs > self.policy.max_jobs:
            return refuse("too many jobs", f"the command selects {selection.jobs} jobs; at most "
                          f"{self.policy.max_jobs} can be dispatched at once (`dispatch.max-jobs`). "
                          "Narrow it with more specific globs or `conc=`/`tp=`/`ep=`/`scenario=`.", sha=head_sha)
        encoded = selection.dumps()
        if len(encoded) > MAX_SELECTION_CHARS:
            return refuse("selection too large", f"the selection names {len(selection.targets)} configs, too many "
                          "to pass to the workflow; narrow the globs.", sha=head_sha)
        jobs = select_jobs(head_repo_data, selection)
        if command.dry_run:
            body = plan_reply(event.comment_id, selection, jobs)
            url = self._reply(event, body)
            return Outcome("planned", "dry run", pr=number, sha=head_sha, selection=selection, reply=body,
                           reply_url=url)
        inputs = {"sha": head_sha, "pr": str(number), "selection": encoded, "requester": event.login}
        self.client.dispatch_workflow(self.policy.workflow, self.policy.ref, inputs)
        reason = f"{selection.jobs} jobs at {head_sha}"
        body = dispatched_reply(event.comment_id, selection, jobs, self.policy.workflow, self.policy.ref, event.login)
        url = None
        try:
            self.client.add_reaction(event.comment_id, "rocket")
            url = self._reply(event, body)
        except GitHubError as exc:
            # The sweep is on its way: a failed courtesy reply must not be reported as a refusal.
            reason += f" (the reply could not be written: {exc})"
        return Outcome("dispatched", reason, pr=number, sha=head_sha, selection=selection, reply=body,
                       reply_url=url)


__all__ = ["Dispatcher", "GitRevisions", "Outcome", "Revisions"]
