"""Handling one ``issue_comment`` event: authorise, pin, select, dispatch, reply.

The order of the checks is part of the security design:

1. Parse the body first, offline.  A comment that is not a command costs no
   API call at all (every comment on the repository triggers the workflow).
2. Bots are ignored silently, so ci-tools' own replies can never loop.
3. Only ``created`` comments act; an edit could otherwise change what a
   maintainer approved after the fact.
4. Only pull requests; the commenter must be allowlisted or hold the
   configured permission (read through the REST API, never from the payload's
   ``author_association``, which does not reflect team grants).  Someone who
   may not dispatch is answered once per pull request; later comments get a
   reaction only, so that nobody can make the bot write without limit.
5. The pull request must be open, not a draft, and not from a fork unless
   forks are enabled.
6. Pinning (:mod:`ci_tools.github.pinning`): the commit is the one the
   commenter named with ``sha=``, or the head GitHub recorded for the branch
   when the comment was posted.  Commit dates, which the author writes, play
   no part.
7. The run this comment started, if any (:mod:`ci_tools.github.runs`: by the
   dispatcher's identity, the comment's key and that commit), is looked for
   before anything that may have changed since the comment is checked: a
   re-run of this event after the author pushed, or the pull request was
   closed, reports that run instead of a refusal that would hide it.
8. The pull request must be open and not a draft, and the authorised commit
   must be the head now.
9. The selection is checked against the configs at the pinned commit, read as
   git objects (never checked out, no code of the pull request runs).

Only then is ``workflow_dispatch`` sent, with the pinned SHA and a key
derived from the comment, and never a second time when GitHub's answer
leaves open whether it started a run.
"""

from __future__ import annotations

import dataclasses
import re
import subprocess
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from ..config import ProjectConfig
from ..errors import UsageError
from ..jobs.job import Job
from ..model.repository import RepoData, load_repo
from ..revision.snapshot import GitSnapshot
from .auth import DispatchPolicy, effective_permission
from .client import AmbiguousRequest, GitHubClient, GitHubError
from .command import Command, CommandError, NotACommand, parse_comment
from .event import CommentEvent
from .same_node import pair_jobs
from .pinning import (
    SHA_HINT,
    ActivityPage,
    Authorised,
    Pin,
    PinRefusal,
    commented_head,
    confirm,
    named,
    pin_fork,
    short,
)
from .replies import (
    DISPATCHED_HEADLINE,
    Addressee,
    already_dispatched_reply,
    dispatched_reply,
    help_reply,
    plan_reply,
    read_marker,
    refusal,
    unknown_reply,
)
from .runs import FoundRun, RunQuery, dispatch_key, find_run, wait_for_run
from .selection import DispatchSelection, SelectionError, resolve_selection, select_jobs

_SHA = re.compile(r"^[0-9a-f]{40}\Z")
# workflow_dispatch inputs are limited to 65,535 characters in total.
MAX_SELECTION_CHARS = 60_000

Status = Literal["ignored", "refused", "help", "planned", "dispatched", "already-dispatched", "unknown"]
# Answers that mean "this token cannot read the activity feed" rather than "GitHub is down".
_ACTIVITY_UNREADABLE = (403, 404, 410, 422)


@dataclass(frozen=True)
class Outcome:
    status: Status
    reason: str
    pr: int | None = None
    sha: str | None = None
    selection: DispatchSelection | None = None
    reply: str | None = None
    reply_url: str | None = None
    run_url: str | None = None

    def outputs(self) -> dict[str, str]:
        """The values the workflow reads (all validated data, none of the comment text)."""
        return {
            "outcome": self.status,
            "pr": str(self.pr) if self.pr is not None else "",
            "sha": self.sha or "",
            "selection": self.selection.dumps() if self.selection else "",
            "jobs": str(self.selection.jobs) if self.selection else "0",
            "reply-url": self.reply_url or "",
            "run-url": self.run_url or "",
        }


class Revisions(Protocol):
    def load(self, sha: str, *, with_changelog: bool = True) -> RepoData: ...

    def merge_base(self, head: str, base: str) -> str: ...


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

    def load(self, sha: str, *, with_changelog: bool = True) -> RepoData:
        return load_repo(self.snapshot(sha), self.config, with_changelog=with_changelog)

    def merge_base(self, head: str, base: str) -> str:
        """The best common ancestor of two commits (both fetched when missing)."""
        self.snapshot(head)
        self.snapshot(base)
        found = subprocess.run(["git", "-C", str(self.config.root), "merge-base", head, base], capture_output=True,
                               text=True, timeout=60, check=False).stdout.strip()
        if not _SHA.match(found):
            raise UsageError(f"`{head[:12]}` and `{base[:12]}` have no common ancestor in this clone")
        return found


def _url(answer: dict[str, Any]) -> str | None:
    url = answer.get("html_url")
    return url if isinstance(url, str) else None


class Dispatcher:
    def __init__(self, client: GitHubClient, policy: DispatchPolicy, revisions: Revisions) -> None:
        self.client = client
        self.policy = policy
        self.revisions = revisions
        self._problems: dict[str, str | None] = {}
        self._replies: dict[int, list[tuple[dict[str, Any], Addressee]]] = {}

    # -- replies -----------------------------------------------------------------------------

    def _own_replies(self, number: int) -> list[tuple[dict[str, Any], Addressee]]:
        """The replies on this PR that the configured bot wrote (a person can paste a marker, not be the bot)."""
        if number not in self._replies:
            found = []
            for comment in self.client.issue_comments(number):
                text, user = comment.get("body"), comment.get("user")
                login = user.get("login") if isinstance(user, dict) else None
                to = read_marker(text) if isinstance(text, str) else None
                if to is not None and isinstance(login, str) and self.policy.is_own(login):
                    found.append((comment, to))
            self._replies[number] = found
        return self._replies[number]

    def _find_reply(self, event: CommentEvent) -> dict[str, Any] | None:
        return next((c for c, to in self._own_replies(event.number) if to.comment_id == event.comment_id), None)

    def _reply(self, event: CommentEvent, body: str) -> tuple[str | None, bool]:
        """Create the reply, or update the one a previous run of this event wrote: (its URL, whether written).

        Someone who may not dispatch gets one reply per pull request: later
        comments of theirs are answered with the reaction alone.
        """
        previous = self._find_reply(event)
        if previous is not None and isinstance(previous.get("id"), int):
            return _url(self.client.update_comment(previous["id"], body)), True
        told = any(to.login.casefold() == event.login.casefold() for _, to in self._own_replies(event.number))
        if told and self._permission_problem(event) is not None:
            return None, False
        self._replies.pop(event.number, None)
        try:
            return _url(self.client.create_comment(event.number, body)), True
        except AmbiguousRequest:
            # The comment may exist: look before writing it again.
            previous = self._find_reply(event)
            if previous is not None:
                return _url(previous), True
            return _url(self.client.create_comment(event.number, body)), True

    def _refuse(self, event: CommentEvent, reason: str, body: str, *, pr: int | None = None,
                sha: str | None = None) -> Outcome:
        self.client.add_reaction(event.comment_id, "confused")
        url, written = self._reply(event, body)
        if not written:
            reason += f" (no reply: `{event.login}` was already told on #{event.number})"
        return Outcome("refused", reason, pr=pr, sha=sha, reply=body if written else None, reply_url=url)

    # -- the checks --------------------------------------------------------------------------

    def _permission_problem(self, event: CommentEvent) -> str | None:
        if event.login not in self._problems:
            self._problems[event.login] = self._read_permission(event)
        return self._problems[event.login]

    def _read_permission(self, event: CommentEvent) -> str | None:
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
        to = Addressee(event.comment_id, event.login)
        if event.action != "created":
            # A deleted comment cannot take a reaction or be answered; an edit can be told why nothing happens.
            if isinstance(parsed, NotACommand) or event.action == "deleted":
                return Outcome("ignored", f"{event.action} comment, not a command")
            body = refusal(to, f"this comment was {event.action}; commands in edited comments are "
                           "not acted on. Write the command in a new comment.")
            return self._refuse(event, f"{event.action} comment", body)
        if isinstance(parsed, NotACommand):
            body = refusal(to, "the first line only looks like a command.", [parsed.note or ""])
            return self._refuse(event, "look-alike command", body)
        self.client.add_reaction(event.comment_id, "eyes")
        try:
            return self._received(event, parsed)
        except GitHubError as exc:
            # Tell the commenter, if GitHub lets us, then let the caller report the failure.
            try:
                self._refuse(event, "GitHub API error", refusal(
                    to, f"a GitHub API request failed: {exc}. A maintainer can re-run the workflow."))
            except GitHubError:
                pass
            raise

    def _received(self, event: CommentEvent, parsed: Command | CommandError) -> Outcome:
        to = Addressee(event.comment_id, event.login)
        if not event.is_pull_request:
            body = refusal(to, f"#{event.number} is an issue, not a pull request; "
                           "`/run-benchmark` runs the code of a pull request.")
            return self._refuse(event, "comment on an issue", body)
        if isinstance(parsed, Command) and parsed.action == "help":
            url, written = self._reply(event, help_reply(to))
            return Outcome("help", "help requested" + ("" if written else " (no reply: already told)"),
                           pr=event.number, reply=help_reply(to) if written else None, reply_url=url)
        problem = self._permission_problem(event)
        if problem:
            return self._refuse(event, "insufficient permission", refusal(to, problem), pr=event.number)
        if isinstance(parsed, CommandError):
            body = refusal(to, "the command is not valid.", parsed.problems, usage=True)
            return self._refuse(event, "invalid command", body, pr=event.number)
        return self._run(event, parsed)

    def _authorised(self, event: CommentEvent, command: Command, head: dict[str, Any], head_sha: str,
                    fork: bool) -> Authorised | PinRefusal:
        """The commit the comment authorised, not yet compared with the head now."""
        if command.sha is not None:
            return named(command.sha)
        if fork:
            return pin_fork(head_sha, event.number)
        branch = head.get("ref")
        if not isinstance(branch, str) or not branch:
            return PinRefusal("head unknown", f"GitHub did not report the head branch of #{event.number}; {SHA_HINT}.")
        try:
            records, more = self.client.branch_activity(branch)
        except GitHubError as exc:
            if exc.status not in _ACTIVITY_UNREADABLE:
                raise
            return PinRefusal("head unknown", f"GitHub's record of pushes to the head branch could not be read "
                              f"({exc}); {SHA_HINT}.")
        return commented_head(branch, event.created_at, ActivityPage(records, more))

    def _run_query(self, event: CommentEvent, sha: str) -> RunQuery:
        return RunQuery(self.policy.workflow, self.policy.ref, dispatch_key(event.comment_id), sha,
                        self.policy.bot_login, event.created_at)

    def _already_dispatched(self, event: CommentEvent, existing: FoundRun, sha: str) -> Outcome:
        to = Addressee(event.comment_id, event.login)
        body = already_dispatched_reply(to, self.policy.workflow, existing.url, existing.status)
        previous = self._find_reply(event)
        if previous is not None and DISPATCHED_HEADLINE in str(previous.get("body")):
            url = _url(previous)  # the reply that lists the jobs stays as it is
        else:
            url, _ = self._reply(event, body)
        return Outcome("already-dispatched", f"run {existing.run_id} was dispatched for this comment before",
                       event.number, sha, reply=body, reply_url=url, run_url=existing.url)

    def _run(self, event: CommentEvent, command: Command) -> Outcome:
        pr = self.client.pull_request(event.number)
        number = event.number
        to = Addressee(event.comment_id, event.login)

        def refuse(reason: str, headline: str, problems: tuple[str, ...] = (), sha: str | None = None,
                   usage: bool = False) -> Outcome:
            return self._refuse(event, reason, refusal(to, headline, problems, usage=usage), pr=number, sha=sha)

        head = pr.get("head") if isinstance(pr.get("head"), dict) else {}
        base = pr.get("base") if isinstance(pr.get("base"), dict) else {}
        head_sha = (head or {}).get("sha")
        head_repo = (head or {}).get("repo")
        base_repo = (base or {}).get("repo")
        head_name = head_repo.get("full_name") if isinstance(head_repo, dict) else None
        base_name = base_repo.get("full_name") if isinstance(base_repo, dict) else event.repository
        # A deleted fork leaves `head.repo` null: nobody vouches for that code either.
        fork = head_name is None or head_name != base_name
        valid_head = isinstance(head_sha, str) and bool(_SHA.match(head_sha))
        authorised: Authorised | PinRefusal | None = None
        if valid_head and not (fork and not self.policy.allow_forks):
            authorised = self._authorised(event, command, head or {}, str(head_sha), fork)
            if isinstance(authorised, Authorised) and not command.dry_run:
                # This comment's run first: what changed since it was dispatched must not hide it.
                existing = find_run(self.client, self._run_query(event, authorised.sha))
                if existing is not None:
                    return self._already_dispatched(event, existing, authorised.sha)
        if pr.get("state") != "open" or pr.get("merged") is True:
            state = "merged" if pr.get("merged") is True else str(pr.get("state"))
            return refuse("pull request not open", f"pull request #{number} is {state}; only open pull requests "
                          "are benchmarked.")
        if pr.get("draft") is True:
            return refuse("draft pull request", f"pull request #{number} is a draft; mark it ready for review "
                          "first.")
        if not isinstance(head_sha, str) or not valid_head:
            return refuse("no head commit", "GitHub did not report a head commit for this pull request.")
        if fork and not self.policy.allow_forks:
            origin = f"`{head_name}`" if head_name else "a deleted fork"
            return refuse("fork pull request", f"the head of #{number} comes from {origin}; benchmarks run on "
                          "self-hosted runners, so pull requests from forks are not run here "
                          "(`dispatch.allow-forks` is off).", sha=head_sha)
        assert authorised is not None
        pin = authorised if isinstance(authorised, PinRefusal) else confirm(authorised, head_sha, number)
        if isinstance(pin, PinRefusal):
            return refuse(pin.reason, pin.headline, sha=head_sha)
        sha = pin.sha
        try:
            # Only `changelog` reads the changelogs (as large as the master configs together).
            head_repo_data = self.revisions.load(sha, with_changelog=command.action == "changelog")
            base_sha = (base or {}).get("sha")
            base_data = None
            if command.action == "changelog":
                if not isinstance(base_sha, str) or not _SHA.match(base_sha):
                    return refuse("no base commit", "GitHub did not report a base commit for this pull request.")
                base_data = self.revisions.load(base_sha)
        except UsageError as exc:
            return refuse("revision unavailable", f"the pinned commit `{sha}` could not be read: {exc}", sha=sha)
        try:
            selection = resolve_selection(command, sha, head_repo_data, base_data)
        except SelectionError as exc:
            return refuse("nothing to run", "the command selects nothing that can run at "
                          f"`{short(sha)}`.", exc.problems, sha=sha, usage=True)
        if selection.jobs > self.policy.max_jobs:
            return refuse("too many jobs", f"the command selects {selection.jobs} jobs; at most "
                          f"{self.policy.max_jobs} can be dispatched at once (`dispatch.max-jobs`). "
                          "Narrow it with more specific globs or `conc=`/`tp=`/`ep=`/`scenario=`.", sha=sha)
        encoded = selection.dumps()
        if len(encoded) > MAX_SELECTION_CHARS:
            return refuse("selection too large", f"the selection names {len(selection.targets)} configs, too many "
                          "to pass to the workflow; narrow the globs.", sha=sha)
        jobs = select_jobs(head_repo_data, selection)
        if command.baseline:
            base_sha = (base or {}).get("sha")
            if not isinstance(base_sha, str) or not _SHA.match(base_sha):
                return refuse("no base commit", "GitHub did not report a base commit for this pull request.")
            try:
                merge_base = self.revisions.merge_base(sha, base_sha)
                base_jobs = select_jobs(self.revisions.load(merge_base, with_changelog=False), selection)
            except UsageError as exc:
                return refuse("revision unavailable", f"the merge-base of `{short(sha)}` and the base "
                              f"`{short(base_sha)}` could not be read: {exc}", sha=sha)
            paired = len(pair_jobs(jobs, base_jobs))
            if not paired:
                return refuse("no baseline jobs", f"`baseline`: the merge-base `{short(merge_base)}` runs none of "
                              "these points on the same runners, so there is nothing to compare beside them; "
                              "drop `baseline` to compare with the results store.", sha=sha)
            selection = dataclasses.replace(selection, baseline=merge_base, baseline_jobs=paired)
            if selection.jobs + paired > self.policy.max_jobs:
                return refuse("too many jobs", f"the command selects {selection.jobs} jobs and {paired} of the "
                              f"merge-base beside them; at most {self.policy.max_jobs} can be dispatched at once "
                              "(`dispatch.max-jobs`).", sha=sha)
        if command.dry_run:
            body = plan_reply(to, selection, jobs)
            url, _ = self._reply(event, body)
            return Outcome("planned", "dry run", pr=number, sha=sha, selection=selection, reply=body,
                           reply_url=url)
        return self._dispatch(event, pin, selection, jobs)

    def _dispatch(self, event: CommentEvent, pin: Pin, selection: DispatchSelection, jobs: list[Job]) -> Outcome:
        to = Addressee(event.comment_id, event.login)
        workflow, ref, query = self.policy.workflow, self.policy.ref, self._run_query(event, pin.sha)
        key = query.key
        inputs = {"sha": pin.sha, "pr": str(event.number), "selection": selection.dumps(), "requester": event.login,
                  "key": key}
        reason = f"{selection.jobs} jobs at {pin.sha}; pinned: {pin.basis}"
        try:
            run_url = _url(self.client.dispatch_workflow(workflow, ref, inputs)) or ""
        except AmbiguousRequest as exc:
            problem = f"the dispatch request failed ({exc})"
            try:
                found = wait_for_run(self.client, query)
            except GitHubError as lookup:
                # Not a refusal: the sweep may be running.  Say so, and that nobody could check.
                found, problem = None, f"{problem}, and looking for the run failed too ({lookup})"
            if found is None:
                actions = f"https://github.com/{event.repository}/actions/workflows/{workflow}"
                body = unknown_reply(to, workflow, problem, actions)
                url, _ = self._reply(event, body)
                return Outcome("unknown", f"the dispatch may or may not have started a run: {problem}", event.number,
                               pin.sha, selection, reply=body, reply_url=url)
            run_url = found.url
            reason += f"; the request failed ({exc}) but GitHub lists run {found.run_id}"
        body = dispatched_reply(to, selection, jobs, workflow, ref, run_url)
        url = None
        try:
            self.client.add_reaction(event.comment_id, "rocket")
            url, _ = self._reply(event, body)
        except GitHubError as exc:
            # The sweep is on its way: a failed courtesy reply must not be reported as a refusal.
            reason += f" (the reply could not be written: {exc})"
        return Outcome("dispatched", reason, event.number, pin.sha, selection, reply=body, reply_url=url,
                       run_url=run_url or None)


__all__ = ["Dispatcher", "GitRevisions", "Outcome", "Revisions"]
