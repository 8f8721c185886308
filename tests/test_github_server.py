"""A local HTTP server playing GitHub, validating every request against the OpenAPI description.

Other dispatch tests import :class:`FakeGitHub` from here.  The operations
come from ``tests/data/octokit/openapi-ops.json`` (extracted from
``@octokit/openapi`` by ``scripts/extract_openapi_ops.py``); a request that
matches no operation, or whose path parameters, query, headers or JSON body
do not satisfy the description, is answered 400 and recorded as a violation.
The server's own answers are validated against the response schemas too, so
the fake cannot drift from what GitHub really sends.
"""

from __future__ import annotations

import copy
import json
import re
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable, Iterator
from urllib.parse import parse_qs, unquote, urlsplit

import httpx
import jsonschema
import pytest
import yaml
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT7

DATA = Path(__file__).resolve().parent / "data" / "octokit"
SPEC_URI = "urn:github-openapi"
SWEEP_WORKFLOW = Path(__file__).resolve().parent.parent / ".github" / "workflows" / "sweep.yml"
# The fake's clock for the runs it creates: after the test comments' times.
FAKE_NOW = "2026-01-03T00:01:00Z"


def _time(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def run_name(inputs: dict[str, Any], template: str | None = None) -> str:
    """A workflow_dispatch run's title as GitHub derives it: the workflow's `run-name` with `inputs.X` filled in."""
    if template is None:
        template = str(yaml.safe_load(SWEEP_WORKFLOW.read_text(encoding="utf-8"))["run-name"])

    def value(m: re.Match[str]) -> str:
        expr = m.group(1).strip()
        if not re.fullmatch(r"inputs\.[A-Za-z0-9_-]+", expr):
            raise AssertionError(f"the fake only evaluates `inputs.NAME` in run-name, found {expr!r}")
        return str(inputs.get(expr.removeprefix("inputs."), ""))

    return re.sub(r"\$\{\{(.*?)\}\}", value, template)


def _convert(node: Any) -> Any:
    """OpenAPI 3.0 schema -> JSON Schema: `nullable`, absolute `$ref`s."""
    if isinstance(node, list):
        return [_convert(v) for v in node]
    if not isinstance(node, dict):
        return node
    # `nullable` is a keyword only with a boolean value (a property may be named so, too).
    out = {k: _convert(v) for k, v in node.items() if not (k == "nullable" and isinstance(v, bool))}
    ref = out.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/"):
        out["$ref"] = SPEC_URI + ref
    if node.get("nullable") is True:
        if isinstance(out.get("type"), str):
            out["type"] = [out["type"], "null"]
            if "enum" in out:
                out["enum"] = [*out["enum"], None]
        else:
            return {"anyOf": [out, {"type": "null"}]}
    return out


@dataclass(frozen=True)
class Operation:
    method: str
    template: str
    pattern: re.Pattern[str]
    spec: dict[str, Any]

    @property
    def operation_id(self) -> str:
        return str(self.spec.get("operationId"))


class OpenAPI:
    def __init__(self, path: Path = DATA / "openapi-ops.json") -> None:
        self.raw = json.loads(path.read_text(encoding="utf-8"))
        self.doc = _convert(self.raw)
        self.registry: Registry[Any] = Registry().with_resource(
            SPEC_URI, Resource.from_contents(self.doc, default_specification=DRAFT7))
        self.operations: list[Operation] = []
        for template, methods in self.doc["paths"].items():
            regex = "^" + re.sub(r"\\\{([a-z_]+)\\\}", r"(?P<\1>[^/]+)", re.escape(template)) + "$"
            for method, spec in methods.items():
                self.operations.append(Operation(method.upper(), template, re.compile(regex), spec))

    def example(self, name: str) -> Any:
        return copy.deepcopy(self.raw["components"]["examples"][name]["value"])

    def _param(self, p: dict[str, Any]) -> dict[str, Any]:
        ref = p.get("$ref")
        if isinstance(ref, str):
            node: Any = self.doc
            for part in ref.removeprefix(SPEC_URI + "#/").split("/"):
                node = node[part]
            return dict(node)
        return p

    def _check(self, schema: dict[str, Any], value: Any, what: str, errors: list[str]) -> None:
        validator = jsonschema.Draft7Validator(schema, registry=self.registry)
        for err in validator.iter_errors(value):
            errors.append(f"{what}: {err.message[:200]} at {list(err.absolute_path)}")

    def match(self, method: str, path: str) -> tuple[Operation, dict[str, str]] | None:
        for op in self.operations:
            if op.method == method:
                m = op.pattern.match(path)
                if m:
                    return op, {k: unquote(v) for k, v in m.groupdict().items()}
        return None

    def validate_request(self, method: str, raw_path: str, headers: dict[str, str], body: bytes) -> tuple[
            Operation | None, list[str]]:
        errors: list[str] = []
        split = urlsplit(raw_path)
        found = self.match(method, split.path)
        if found is None:
            return None, [f"{method} {split.path} is not an operation of the description"]
        op, path_params = found
        params = [self._param(p) for p in op.spec.get("parameters", [])]
        for p in params:
            if p["in"] == "path":
                value: Any = path_params.get(p["name"])
                if p["schema"].get("type") == "integer":
                    value = int(value) if value is not None and value.isdigit() else value
                self._check(p["schema"], value, f"path parameter {p['name']}", errors)
        declared = {p["name"]: p for p in params if p["in"] == "query"}
        for name, values in parse_qs(split.query, keep_blank_values=True).items():
            if name not in declared:
                errors.append(f"query parameter {name} is not declared for {op.operation_id}")
                continue
            value = values[-1]
            if declared[name]["schema"].get("type") == "integer":
                value = int(value) if value.isdigit() else value
            self._check(declared[name]["schema"], value, f"query parameter {name}", errors)
        lower = {k.lower(): v for k, v in headers.items()}
        if lower.get("accept") != "application/vnd.github+json":
            errors.append(f"Accept is {lower.get('accept')!r}, expected application/vnd.github+json")
        if lower.get("x-github-api-version") != "2022-11-28":
            errors.append("X-GitHub-Api-Version 2022-11-28 is missing")
        if not lower.get("authorization", "").startswith("Bearer "):
            errors.append("Authorization: Bearer <token> is missing")
        if not lower.get("user-agent"):
            errors.append("User-Agent is missing")
        request_body = op.spec.get("requestBody")
        if request_body is None:
            if body:
                errors.append(f"{op.operation_id} takes no body, got {len(body)} bytes")
        else:
            if not lower.get("content-type", "").startswith("application/json"):
                errors.append(f"Content-Type is {lower.get('content-type')!r}, expected application/json")
            try:
                payload = json.loads(body)
            except ValueError:
                errors.append("the body is not JSON")
            else:
                self._check(request_body["content"]["application/json"]["schema"], payload, "request body", errors)
        return op, errors

    def validate_response(self, op: Operation, status: int, payload: Any) -> list[str]:
        errors: list[str] = []
        response = op.spec.get("responses", {}).get(str(status))
        if response is None:
            return [f"{op.operation_id} does not document status {status}"]
        ref = response.get("$ref")
        if isinstance(ref, str):
            node: Any = self.doc
            for part in ref.removeprefix(SPEC_URI + "#/").split("/"):
                node = node[part]
            response = node
        schema = response.get("content", {}).get("application/json", {}).get("schema")
        if schema is not None and payload is not None:
            self._check(schema, payload, f"response {status}", errors)
        return errors


SPEC = OpenAPI()


@dataclass
class Recorded:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: Any
    operation: str | None


@dataclass
class Scripted:
    """A canned answer for the next request matching ``operation`` (used for retry tests).

    With ``apply`` the request takes effect as usual and only the answer is
    replaced: GitHub acted, the client cannot tell.  ``delay`` holds the answer
    back (longer than the client's timeout, it becomes a timeout).
    """

    operation: str
    status: int
    headers: dict[str, str] = field(default_factory=dict)
    body: Any = None
    apply: bool = False
    delay: float = 0.0


class FakeGitHub:
    """State of one fake repository, served over real HTTP on 127.0.0.1."""

    def __init__(self, repository: str = "Codertocat/Hello-World") -> None:
        self.repository = repository
        self.permissions: dict[str, tuple[str, str]] = {}
        self.pulls: dict[int, dict[str, Any]] = {}
        self.comments: dict[int, list[dict[str, Any]]] = {}
        self.reactions: list[tuple[int, str]] = []
        self.dispatches: list[dict[str, Any]] = []
        self.runs: list[dict[str, Any]] = []
        # Branch name -> GitHub's activity records for it, oldest first.
        self.activity: dict[str, list[dict[str, Any]]] = {}
        # Run id -> its artifacts; artifact id -> its zip, served from a pre-signed URL outside the API.
        self.artifacts: dict[int, list[dict[str, Any]]] = {}
        self.archives: dict[int, bytes] = {}
        # Run id -> its jobs (the latest attempt's), in the order GitHub lists them.
        self.jobs: dict[int, list[dict[str, Any]]] = {}
        # Operation id -> what happens on GitHub's side before each such request is answered (a run's jobs end).
        self.before: dict[str, Callable[[], None]] = {}
        self.blob_requests: list[dict[str, str]] = []
        self.requests: list[Recorded] = []
        self.violations: list[str] = []
        self.tolerated: set[str] = set()
        self.scripted: list[Scripted] = []
        self.now = FAKE_NOW
        # Who the token belongs to: comments created through the API are this bot's.
        self.bot_login = "github-actions[bot]"
        # Other tokens and the people they belong to (a runs' `actor` is whoever's token dispatched it).
        self.token_logins: dict[str, str] = {}
        # GitHub may answer fewer activity records than `per_page` asks for; its Link header says there are more.
        self.activity_page_cap = 100
        self._next_id = 900_000
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.01},
                                        daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> FakeGitHub:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    # -- state helpers -------------------------------------------------------------------------

    def reset(self) -> None:
        """Forget all state, keep serving (for property tests that reuse one server)."""
        with self._lock:
            for store in (self.permissions, self.pulls, self.comments, self.activity):
                store.clear()
            for log in (self.reactions, self.dispatches, self.runs, self.requests, self.violations, self.scripted,
                        self.blob_requests):
                log.clear()
            self.artifacts.clear()
            self.archives.clear()
            self.jobs.clear()
            self.before.clear()
            self.tolerated.clear()
            self.token_logins.clear()
            self.activity_page_cap = 100

    def grant(self, login: str, role: str) -> None:
        legacy = {"maintain": "write", "triage": "read"}.get(role, role)
        self.permissions[login] = (legacy, role)

    def add_pull(self, number: int, head_sha: str, base_sha: str, *, state: str = "open", draft: bool = False,
                 merged: bool = False, head_repo: str | None = None, head_repo_deleted: bool = False,
                 pushed_at: str = "2026-01-02T00:00:00Z") -> dict[str, Any]:
        """A pull request whose head branch GitHub recorded as created on ``head_sha`` at ``pushed_at``."""
        pr = SPEC.example("pull-request")
        pr["number"] = number
        # The published example predates `type` becoming required on team entries.
        pr["requested_teams"] = []
        pr["state"], pr["draft"], pr["merged"] = state, draft, merged
        pr["head"]["sha"], pr["base"]["sha"] = head_sha, base_sha
        pr["base"]["repo"]["full_name"] = self.repository
        if head_repo_deleted:
            # What GitHub sends for a deleted fork, though the description does not allow it
            # (github/rest-api-description#424 and #1811): the one deviation the fake tolerates.
            pr["head"]["repo"] = None
            self.tolerated.add("response 200: None is not of type 'object' at ['head', 'repo']")
        else:
            pr["head"]["repo"]["full_name"] = head_repo or self.repository
            pr["head"]["repo"]["fork"] = head_repo is not None and head_repo != self.repository
        self.pulls[number] = pr
        if head_repo in (None, self.repository) and not head_repo_deleted:
            self.activity[pr["head"]["ref"]] = []
            self._record(pr["head"]["ref"], "0" * 40, head_sha, pushed_at, "branch_creation")
        return pr

    def _record(self, branch: str, before: str, after: str, at: str, kind: str, actor: str = "octocat") -> None:
        user = SPEC.example("pull-request")["user"]
        user["login"] = actor
        self._next_id += 1
        self.activity.setdefault(branch, []).append({
            "id": self._next_id, "node_id": f"A_{self._next_id}", "before": before, "after": after,
            "ref": f"refs/heads/{branch}", "timestamp": at, "activity_type": kind, "actor": user})

    def push(self, number: int, sha: str, at: str, *, force: bool = False, actor: str = "octocat") -> None:
        """The PR's head branch moves to ``sha``; GitHub records when (its clock, not the commit's dates)."""
        pr = self.pulls[number]
        self._record(pr["head"]["ref"], pr["head"]["sha"], sha, at, "force_push" if force else "push", actor)
        pr["head"]["sha"] = sha

    def add_finished_run(self, workflow: str, *, conclusion: str = "success", branch: str = "main",
                         title: str = "sweep") -> dict[str, Any]:
        """A completed run of ``workflow`` on ``branch``, newest of all so far."""
        run = SPEC.example("workflow-run-paginated")["workflow_runs"][0]
        self._next_id += 1
        run.update(id=self._next_id, run_number=self._next_id % 1000, event="workflow_dispatch", status="completed",
                   conclusion=conclusion, head_branch=branch, display_title=title, created_at=self.now,
                   updated_at=self.now, html_url=f"https://github.com/{self.repository}/actions/runs/{self._next_id}")
        self.runs.append({"workflow": workflow, **run})
        return run

    def add_artifact(self, run_id: int, name: str, archive: bytes, *, expired: bool = False) -> dict[str, Any]:
        artifact = SPEC.example("artifact-paginated")["artifacts"][0]
        self._next_id += 1
        api = f"https://api.github.com/repos/{self.repository}/actions/artifacts/{self._next_id}"
        artifact.update(id=self._next_id, name=name, size_in_bytes=len(archive), expired=expired, url=api,
                        archive_download_url=f"{api}/zip")
        artifact["workflow_run"]["id"] = run_id
        self.artifacts.setdefault(run_id, []).append(artifact)
        self.archives[self._next_id] = archive
        return artifact

    def add_job(self, run_id: int, name: str, *, status: str = "queued") -> dict[str, Any]:
        """A job of run ``run_id`` as the list-jobs operation shows it (the example's fields, with ours)."""
        job = SPEC.example("job-paginated")["jobs"][0]
        self._next_id += 1
        # `created_at` became required after the example was written.
        job.update(id=self._next_id, run_id=run_id, name=name, status=status, conclusion=None, completed_at=None,
                   steps=[], workflow_name="sweep", created_at=self.now,
                   html_url=f"https://github.com/{self.repository}/actions/runs/{run_id}/job/{self._next_id}")
        self.jobs.setdefault(run_id, []).append(job)
        return job

    def finish_job(self, job: dict[str, Any], conclusion: str = "success") -> None:
        job.update(status="completed", conclusion=conclusion, completed_at=self.now)

    def dispatch_requests(self) -> list[Recorded]:
        return [r for r in self.requests if r.operation == "actions/create-workflow-dispatch"]

    def operations(self) -> list[str]:
        return [str(r.operation) for r in self.requests]

    # -- serving -------------------------------------------------------------------------------

    def _new_comment(self, number: int, body: str) -> dict[str, Any]:
        comment = SPEC.example("issue-comment")
        self._next_id += 1
        comment.update(id=self._next_id, body=body,
                       html_url=f"https://github.com/{self.repository}/pull/{number}#issuecomment-{self._next_id}")
        comment["user"].update(login=self.bot_login, type="Bot")
        return comment

    def login_of(self, headers: dict[str, str]) -> str:
        """The login the request's token acts as (the workflow's token: the bot)."""
        token = {k.lower(): v for k, v in headers.items()}.get("authorization", "").removeprefix("Bearer ")
        return self.token_logins.get(token, self.bot_login)

    def _answer(self, op: Operation, params: dict[str, str], query: dict[str, list[str]], body: Any,
                actor: str = "") -> tuple[int, dict[str, str], Any]:
        oid = op.operation_id
        if oid == "repos/get-collaborator-permission-level":
            user = params["username"]
            if user not in self.permissions:
                return 404, {}, {"message": "Not Found", "documentation_url": "https://docs.github.com/rest"}
            legacy, role = self.permissions[user]
            answer = SPEC.example("repository-collaborator-permission-response-if-user-has-admin-permissions")
            answer.update(permission=legacy, role_name=role)
            answer["user"].update(login=user, role_name=role)  # required by the schema, absent in the example
            return 200, {}, answer
        if oid == "pulls/get":
            pr = self.pulls.get(int(params["pull_number"]))
            return (200, {}, pr) if pr else (404, {}, {"message": "Not Found", "documentation_url": "x"})
        if oid == "reactions/create-for-issue-comment":
            self.reactions.append((int(params["comment_id"]), body["content"]))
            answer = SPEC.example("reaction")
            answer["content"] = body["content"]
            return 201, {}, answer
        if oid == "issues/list-comments":
            items = self.comments.get(int(params["issue_number"]), [])
            per_page = int(query.get("per_page", ["30"])[-1])
            page = int(query.get("page", ["1"])[-1])
            return 200, {}, items[(page - 1) * per_page: page * per_page]
        if oid == "issues/create-comment":
            number = int(params["issue_number"])
            comment = self._new_comment(number, body["body"])
            self.comments.setdefault(number, []).append(comment)
            return 201, {}, comment
        if oid == "issues/update-comment":
            for items in self.comments.values():
                for comment in items:
                    if comment["id"] == int(params["comment_id"]):
                        comment["body"] = body["body"]
                        return 200, {}, comment
            return 404, {}, {"message": "Not Found", "documentation_url": "x"}
        if oid == "actions/create-workflow-dispatch":
            self.dispatches.append({"workflow": params["workflow_id"], **body})
            run = SPEC.example("workflow-run-paginated")["workflow_runs"][0]
            self._next_id += 1
            run.update(id=self._next_id, event="workflow_dispatch", status="queued", conclusion=None,
                       head_branch=body["ref"], display_title=run_name(body.get("inputs") or {}),
                       created_at=self.now, updated_at=self.now,
                       html_url=f"https://github.com/{self.repository}/actions/runs/{self._next_id}")
            for who in ("actor", "triggering_actor"):
                run[who] = {**run[who], "login": actor or self.bot_login,
                            "type": "Bot" if (actor or self.bot_login).endswith("[bot]") else "User"}
            self.runs.append({"workflow": params["workflow_id"], **run})
            if body.get("return_run_details"):
                return 200, {}, {"workflow_run_id": run["id"], "html_url": run["html_url"],
                                 "run_url": f"https://api.github.com/repos/{self.repository}/actions/runs/{run['id']}"}
            return 204, {}, None
        if oid == "actions/list-workflow-runs":
            def wanted(run: dict[str, Any]) -> bool:
                created = query.get("created", [""])[-1]
                status = query.get("status", [""])[-1]
                return (run["workflow"] == params["workflow_id"]
                        and (not status or status in (run["status"], run["conclusion"]))
                        and run["event"] == query.get("event", [run["event"]])[-1]
                        and run["head_branch"] == query.get("branch", [run["head_branch"]])[-1]
                        and (not created.startswith(">=") or _time(run["created_at"]) >= _time(created[2:])))
            matching = [{k: v for k, v in r.items() if k != "workflow"} for r in reversed(self.runs) if wanted(r)]
            per_page = int(query.get("per_page", ["30"])[-1])
            page = int(query.get("page", ["1"])[-1])
            return 200, {}, {"total_count": len(matching),
                             "workflow_runs": matching[(page - 1) * per_page: page * per_page]}
        if oid == "actions/list-workflow-run-artifacts":
            items = [a for a in self.artifacts.get(int(params["run_id"]), [])
                     if a["name"] == query.get("name", [a["name"]])[-1]]
            per_page = int(query.get("per_page", ["30"])[-1])
            page = int(query.get("page", ["1"])[-1])
            return 200, {}, {"total_count": len(items), "artifacts": items[(page - 1) * per_page: page * per_page]}
        if oid == "actions/list-jobs-for-workflow-run":
            items = self.jobs.get(int(params["run_id"]), [])
            per_page = int(query.get("per_page", ["30"])[-1])
            page = int(query.get("page", ["1"])[-1])
            return 200, {}, {"total_count": len(items), "jobs": items[(page - 1) * per_page: page * per_page]}
        if oid == "actions/download-artifact":
            artifact_id = int(params["artifact_id"])
            if params["archive_format"] != "zip":
                return 404, {}, {"message": "Not Found", "documentation_url": "x"}
            if artifact_id not in self.archives:
                return 404, {}, {"message": "Not Found", "documentation_url": "x"}
            if any(a["id"] == artifact_id and a["expired"] for items in self.artifacts.values() for a in items):
                return 410, {}, {"message": "Artifact has expired", "documentation_url": "x"}
            return 302, {"Location": f"{self.url}/_blobs/{artifact_id}?sig=pre-signed"}, None
        if oid == "repos/list-activities":
            ref = query.get("ref", [""])[-1].removeprefix("refs/heads/")
            items = sorted(self.activity.get(ref, []), key=lambda a: _time(a["timestamp"]),
                           reverse=query.get("direction", ["desc"])[-1] == "desc")
            # Cursor pagination as GitHub does it for this operation: `after` from the Link header.
            start = int(query.get("after", ["0"])[-1])
            size = min(int(query.get("per_page", ["30"])[-1]), self.activity_page_cap)
            page, headers = items[start:start + size], {}
            if start + size < len(items):
                headers["Link"] = (f'<{self.url}/repos/{self.repository}/activity?ref=refs%2Fheads%2F{ref}'
                                   f'&per_page={size}&after={start + size}>; rel="next"')
            return 200, headers, page
        return 500, {}, {"message": f"unhandled {oid}"}

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - silence the test output
                return

            def _serve(self) -> None:
                if self.path.startswith("/_blobs/"):  # the storage host a download redirects to, not the API
                    artifact_id = int(urlsplit(self.path).path.rsplit("/", 1)[1])
                    with fake._lock:
                        fake.blob_requests.append({k.lower(): v for k, v in self.headers.items()})
                        if "authorization" in fake.blob_requests[-1]:
                            fake.violations.append("the API token was sent to the artifact storage URL")
                    data = fake.archives.get(artifact_id, b"")
                    self.send_response(200 if data else 404)
                    self.send_header("Content-Type", "application/zip")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    return
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                headers = {k: v for k, v in self.headers.items()}
                op, errors = SPEC.validate_request(self.command, self.path, headers, raw)
                split = urlsplit(self.path)
                query = parse_qs(split.query)
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = None
                if op is not None and op.operation_id in fake.before:
                    fake.before[op.operation_id]()
                prefix = f"/repos/{fake.repository}"
                if op is not None and not split.path.startswith(prefix + "/"):
                    errors.append(f"request for another repository: {split.path}")
                with fake._lock:
                    fake.requests.append(Recorded(self.command, split.path, query, headers, body,
                                                  op.operation_id if op else None))
                    if errors:
                        fake.violations.extend(errors)
                        self._send(400, {}, {"message": "; ".join(errors)})
                        return
                    assert op is not None
                    scripted = next((s for s in fake.scripted if s.operation == op.operation_id), None)
                    if scripted is not None:
                        fake.scripted.remove(scripted)
                    if scripted is None or scripted.apply:
                        params = op.pattern.match(split.path).groupdict()  # type: ignore[union-attr]
                        status, extra, payload = fake._answer(op, {k: unquote(v) for k, v in params.items()}, query,
                                                              body, fake.login_of(headers))
                        if status < 300:
                            fake.violations.extend(v for v in SPEC.validate_response(op, status, payload)
                                                   if v not in fake.tolerated)
                    if scripted is not None:
                        status, extra, payload = scripted.status, scripted.headers, scripted.body
                if scripted is not None and scripted.delay:
                    time.sleep(scripted.delay)
                self._send(status, extra, payload)

            def _send(self, status: int, headers: dict[str, str], payload: Any) -> None:
                data = b"" if payload is None else json.dumps(payload).encode()
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                if data:
                    self.send_header("Content-Type", "application/json; charset=utf-8")
                self.send_header("Content-Length", str(len(data)))
                try:
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up waiting (a timeout test)

            do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _serve

        return Handler


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    fake = FakeGitHub().start()
    yield fake
    fake.stop()


# -- the fake's own checks: it must reject what GitHub would reject --------------------------------

HEADERS = {"Accept": "application/vnd.github+json", "X-GitHub-Api-Version": "2022-11-28",
           "Authorization": "Bearer t", "User-Agent": "test"}


def test_operations_extracted_are_the_ones_the_client_uses() -> None:
    ids = sorted(op.operation_id for op in SPEC.operations)
    assert ids == ["actions/create-workflow-dispatch", "actions/download-artifact",
                   "actions/list-jobs-for-workflow-run", "actions/list-workflow-run-artifacts",
                   "actions/list-workflow-runs", "issues/create-comment",
                   "issues/list-comments", "issues/update-comment", "pulls/get", "reactions/create-for-issue-comment",
                   "repos/get-collaborator-permission-level", "repos/list-activities"]


def test_valid_request_passes_and_is_recorded(github: FakeGitHub) -> None:
    r = httpx.post(f"{github.url}/repos/Codertocat/Hello-World/issues/comments/5/reactions", headers=HEADERS,
                   json={"content": "eyes"})
    assert r.status_code == 201
    assert github.violations == []
    assert github.reactions == [(5, "eyes")]


@pytest.mark.parametrize(("method", "path", "body", "expected"), [
    ("POST", "/repos/Codertocat/Hello-World/issues/comments/5/reactions", {"content": "party"},
     "request body: 'party' is not one of"),
    ("POST", "/repos/Codertocat/Hello-World/issues/comments/abc/reactions", {"content": "eyes"},
     "path parameter comment_id: 'abc' is not of type 'integer'"),
    ("POST", "/repos/Codertocat/Hello-World/issues/1/comments", {"text": "x"},
     "request body: 'body' is a required property"),
    ("POST", "/repos/Codertocat/Hello-World/actions/workflows/sweep.yml/dispatches",
     {"ref": "main", "inputs": {f"i{n}": "x" for n in range(26)}}, "request body: {"),
    ("GET", "/repos/Codertocat/Hello-World/pulls/1?state=open", None,
     "query parameter state is not declared for pulls/get"),
    ("DELETE", "/repos/Codertocat/Hello-World/pulls/1", None, "DELETE /repos/Codertocat/Hello-World/pulls/1 is not"),
])
def test_invalid_requests_are_rejected(github: FakeGitHub, method: str, path: str, body: Any, expected: str) -> None:
    r = httpx.request(method, github.url + path, headers=HEADERS, json=body)
    assert r.status_code == 400
    assert any(v.startswith(expected) for v in github.violations), github.violations


def test_missing_headers_are_violations(github: FakeGitHub) -> None:
    r = httpx.get(f"{github.url}/repos/Codertocat/Hello-World/pulls/1")
    assert r.status_code == 400
    assert "Authorization: Bearer <token> is missing" in github.violations
    assert "X-GitHub-Api-Version 2022-11-28 is missing" in github.violations


def test_fake_answers_satisfy_the_response_schemas(github: FakeGitHub) -> None:
    github.add_pull(7, "a" * 40, "b" * 40)
    github.grant("alice", "maintain")
    assert httpx.get(f"{github.url}/repos/Codertocat/Hello-World/pulls/7", headers=HEADERS).status_code == 200
    assert httpx.get(f"{github.url}/repos/Codertocat/Hello-World/collaborators/alice/permission",
                     headers=HEADERS).json()["role_name"] == "maintain"
    assert github.violations == []
    # And the response validation itself bites: a pull request without a head is not one.
    broken = SPEC.example("pull-request")
    del broken["head"]
    op = SPEC.match("GET", "/repos/o/r/pulls/1")
    assert op is not None
    assert any("'head' is a required property" in e for e in SPEC.validate_response(op[0], 200, broken))


def test_fake_runs_and_activity_satisfy_the_response_schemas(github: FakeGitHub) -> None:
    github.add_pull(7, "a" * 40, "b" * 40, pushed_at="2026-01-01T00:00:00Z")
    github.push(7, "c" * 40, "2026-01-02T00:00:00Z", force=True, actor="mallory")
    base = f"{github.url}/repos/Codertocat/Hello-World"
    activity = httpx.get(f"{base}/activity", params={"ref": "refs/heads/new-topic", "per_page": 100},
                         headers=HEADERS).json()
    assert [(a["activity_type"], a["after"], a["actor"]["login"]) for a in activity] == [
        ("force_push", "c" * 40, "mallory"), ("branch_creation", "a" * 40, "octocat")]
    assert github.pulls[7]["head"]["sha"] == "c" * 40
    r = httpx.post(f"{base}/actions/workflows/sweep.yml/dispatches", headers=HEADERS,
                   json={"ref": "main", "inputs": {"sha": "c" * 40, "key": "comment-5"}, "return_run_details": True})
    assert r.status_code == 200 and r.json()["html_url"].endswith(f"/actions/runs/{r.json()['workflow_run_id']}")
    runs = httpx.get(f"{base}/actions/workflows/sweep.yml/runs", headers=HEADERS,
                     params={"event": "workflow_dispatch", "branch": "main", "created": ">=2026-01-03T00:00:00Z"})
    assert [run["display_title"] for run in runs.json()["workflow_runs"]] == [f"sweep of {'c' * 40} for comment-5"]
    later = httpx.get(f"{base}/actions/workflows/sweep.yml/runs", headers=HEADERS,
                      params={"created": ">=2026-01-04T00:00:00Z"})
    assert later.json()["workflow_runs"] == []
    assert github.violations == []


def test_run_name_is_evaluated_from_the_workflow() -> None:
    assert run_name({"sha": "s", "key": "k"}, "sweep of ${{ inputs.sha }} for ${{inputs.key}}") == "sweep of s for k"
    with pytest.raises(AssertionError, match="only evaluates"):
        run_name({}, "${{ github.actor }}")
