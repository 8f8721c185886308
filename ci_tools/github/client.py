"""A small GitHub REST client (httpx) for the calls the dispatcher makes.

Retries are bounded and deliberate.  Rate limits (403/429 with
``Retry-After``, or with ``x-ratelimit-remaining: 0``) mean GitHub refused the
request, so every request waits as long as GitHub asks (within ``max_wait``)
and tries again.  A 5xx answer, a timeout or a connection lost after the
request was sent are different: GitHub may have acted on the request anyway.
Reads and other idempotent requests are retried with exponential backoff;
a request that is not idempotent (creating a comment, dispatching a workflow)
is never retried then, and fails with :class:`AmbiguousRequest` so that the
caller can find out what happened.  A connection that could not be opened at
all sent nothing and is retried for every request.  Anything else fails at
once with a :class:`GitHubError` whose message says which request failed and
what GitHub answered.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import Any, Callable, Iterator
from urllib.parse import quote

import httpx

from .. import __version__

API_VERSION = "2022-11-28"
DEFAULT_API_URL = "https://api.github.com"
REACTIONS = ("+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes")


class GitHubError(Exception):
    """A request that failed for good; ``status`` is the HTTP status (0: no answer).

    ``retry_after``: the seconds GitHub asked to wait (Retry-After, or until the rate limit resets) when that
    was longer than the client accepts; a caller with more time, such as a poller, may wait that long itself.
    """

    def __init__(self, message: str, status: int = 0, retry_after: float | None = None) -> None:
        self.status = status
        self.retry_after = retry_after
        super().__init__(message)


class AmbiguousRequest(GitHubError):
    """A request that is not idempotent failed in a way that does not say whether GitHub acted on it."""


@dataclass(frozen=True)
class RetryPolicy:
    attempts: int = 4  # total tries, first one included
    backoff: float = 1.0  # seconds before the second try; doubles each time
    max_wait: float = 60.0  # the longest single wait we accept from Retry-After / rate-limit reset


def _seg(value: str | int) -> str:
    return quote(str(value), safe="")


class GitHubClient:
    def __init__(self, repository: str, *, api_url: str | None = None, token: str | None = None,
                 timeout: float = 20.0, retry: RetryPolicy = RetryPolicy(),
                 sleep: Callable[[float], None] = time.sleep, clock: Callable[[], float] = time.time) -> None:
        owner, _, name = repository.partition("/")
        if not owner or not name or "/" in name:
            raise ValueError(f"repository must be OWNER/NAME, found {repository!r}")
        self.owner, self.repo = owner, name
        self.api_url = (api_url or DEFAULT_API_URL).rstrip("/")
        self.retry = retry
        self._sleep = sleep
        self._clock = clock
        headers = {
            "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": API_VERSION,
            "User-Agent": f"ci-tools/{__version__}",
        }
        if token:
            headers["Authorization"] = f"Bearer {token}"
        self._http = httpx.Client(base_url=self.api_url, headers=headers, timeout=httpx.Timeout(timeout),
                                  follow_redirects=False)

    @classmethod
    def from_env(cls, repository: str, **kwargs: Any) -> GitHubClient:
        """GITHUB_API_URL and GITHUB_TOKEN from the environment (as set in GitHub Actions)."""
        return cls(repository, api_url=os.environ.get("GITHUB_API_URL") or DEFAULT_API_URL,
                   token=os.environ.get("GITHUB_TOKEN") or None, **kwargs)

    def close(self) -> None:
        self._http.close()

    def pause(self, seconds: float) -> None:
        """Wait with the client's clock (tests pass a recording sleep)."""
        self._sleep(seconds)

    def __enter__(self) -> GitHubClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- transport ---------------------------------------------------------------------------

    def _wait_for(self, response: httpx.Response) -> float | None:
        """Seconds to wait before retrying this response, or None when it must not be retried."""
        status = response.status_code
        if status >= 500:
            return None  # handled by the backoff path
        if status not in (403, 429):
            return None
        retry_after = response.headers.get("retry-after")
        if retry_after is not None:
            try:
                return max(0.0, float(retry_after))
            except ValueError:
                return self.retry.backoff
        if response.headers.get("x-ratelimit-remaining") == "0":
            reset = response.headers.get("x-ratelimit-reset")
            try:
                return max(0.0, float(reset) - self._clock()) if reset else self.retry.backoff
            except ValueError:
                return self.retry.backoff
        if status == 429:
            return self.retry.backoff
        return None

    def request(self, method: str, path: str, *, params: dict[str, Any] | None = None,
                json: Any = None, idempotent: bool | None = None) -> httpx.Response:
        """Send one request; ``idempotent`` defaults to True for every method but POST."""
        what = f"{method} {path}"
        safe_to_repeat = method != "POST" if idempotent is None else idempotent
        delay = self.retry.backoff
        last = ""
        for attempt in range(1, self.retry.attempts + 1):
            try:
                response = self._http.request(method, path, params=params, json=json)
            except (httpx.ConnectTimeout, httpx.PoolTimeout, httpx.ConnectError) as exc:
                # Nothing reached GitHub: repeating cannot act twice.
                last = f"could not connect ({type(exc).__name__}: {exc})"
                response = None
            except (httpx.TimeoutException, httpx.TransportError) as exc:
                last = "timed out" if isinstance(exc, httpx.TimeoutException) else \
                    f"the connection failed ({type(exc).__name__}: {exc})"
                if not safe_to_repeat:
                    raise AmbiguousRequest(f"{what}: {last} after the request was sent; GitHub may have acted on it")
                response = None
            if response is not None:
                if response.status_code < 400:
                    return response
                last = _describe(response)
                wait = self._wait_for(response)
                if wait is None and response.status_code < 500:
                    raise GitHubError(f"{what} failed: {last}", response.status_code)
                if wait is None and not safe_to_repeat:
                    raise AmbiguousRequest(f"{what} failed: {last}; GitHub may have acted on it",
                                           response.status_code)
                if wait is not None and wait > self.retry.max_wait:
                    raise GitHubError(f"{what} failed: {last}; GitHub asks to wait {wait:.0f}s, "
                                      f"more than the {self.retry.max_wait:.0f}s accepted", response.status_code,
                                      retry_after=wait)
                if wait is None:
                    wait = delay
            else:
                wait = delay
            if attempt == self.retry.attempts:
                break
            self._sleep(wait)
            delay *= 2
        status = response.status_code if response is not None else 0
        raise GitHubError(f"{what} failed after {self.retry.attempts} attempts: {last}", status)

    def _json(self, method: str, path: str, **kwargs: Any) -> Any:
        response = self.request(method, path, **kwargs)
        if not response.content:
            return None
        try:
            return response.json()
        except ValueError:
            raise GitHubError(f"{method} {path}: the answer is not JSON "
                              f"(content-type {response.headers.get('content-type')!r})", response.status_code) from None

    @property
    def _base(self) -> str:
        return f"/repos/{_seg(self.owner)}/{_seg(self.repo)}"

    # -- operations --------------------------------------------------------------------------

    def collaborator_permission(self, username: str) -> dict[str, Any]:
        """GET /repos/{o}/{r}/collaborators/{user}/permission (a 404 means: not a collaborator)."""
        try:
            data = self._json("GET", f"{self._base}/collaborators/{_seg(username)}/permission")
        except GitHubError as exc:
            if exc.status == 404:
                return {"permission": "none", "role_name": "none"}
            raise
        return data if isinstance(data, dict) else {}

    def pull_request(self, number: int) -> dict[str, Any]:
        data = self._json("GET", f"{self._base}/pulls/{int(number)}")
        if not isinstance(data, dict):
            raise GitHubError(f"GET {self._base}/pulls/{number}: expected a pull request object")
        return data

    def add_reaction(self, comment_id: int, content: str) -> None:
        if content not in REACTIONS:
            raise ValueError(f"unknown reaction {content!r}")
        # Repeating is harmless: GitHub answers an existing reaction with 200 and adds no second one.
        self.request("POST", f"{self._base}/issues/comments/{int(comment_id)}/reactions", json={"content": content},
                     idempotent=True)

    def issue_comments(self, number: int) -> Iterator[dict[str, Any]]:
        """Every comment of an issue or pull request, following pagination (bounded)."""
        for page in range(1, 51):
            data = self._json("GET", f"{self._base}/issues/{int(number)}/comments",
                              params={"per_page": 100, "page": page})
            if not isinstance(data, list):
                return
            yield from (c for c in data if isinstance(c, dict))
            if len(data) < 100:
                return

    def create_comment(self, number: int, body: str) -> dict[str, Any]:
        data = self._json("POST", f"{self._base}/issues/{int(number)}/comments", json={"body": body})
        return data if isinstance(data, dict) else {}

    def update_comment(self, comment_id: int, body: str) -> dict[str, Any]:
        data = self._json("PATCH", f"{self._base}/issues/comments/{int(comment_id)}", json={"body": body})
        return data if isinstance(data, dict) else {}

    def dispatch_workflow(self, workflow: str, ref: str, inputs: dict[str, str]) -> dict[str, Any]:
        """Start a workflow_dispatch run; the run's id and URLs when GitHub reports them (else ``{}``).

        Never retried after an answer that leaves open whether the run was
        created: that raises :class:`AmbiguousRequest`.
        """
        data = self._json("POST", f"{self._base}/actions/workflows/{_seg(workflow)}/dispatches",
                          json={"ref": ref, "inputs": inputs, "return_run_details": True})
        return data if isinstance(data, dict) else {}

    def workflow_runs(self, workflow: str, *, event: str, branch: str, created_since: str,
                      max_pages: int = 10) -> Iterator[dict[str, Any]]:
        """Runs of one workflow for one event and branch, created at or after ``created_since`` (newest first)."""
        for page in range(1, max_pages + 1):
            data = self._json("GET", f"{self._base}/actions/workflows/{_seg(workflow)}/runs",
                              params={"event": event, "branch": branch, "created": f">={created_since}",
                                      "per_page": 100, "page": page})
            runs = data.get("workflow_runs") if isinstance(data, dict) else None
            if not isinstance(runs, list):
                return
            yield from (r for r in runs if isinstance(r, dict))
            if len(runs) < 100:
                return

    def successful_runs(self, workflow: str, *, branch: str, per_page: int = 20) -> list[dict[str, Any]]:
        """The newest successful runs of one workflow on one branch (one page, newest first)."""
        data = self._json("GET", f"{self._base}/actions/workflows/{_seg(workflow)}/runs",
                          params={"branch": branch, "status": "success", "per_page": per_page})
        runs = data.get("workflow_runs") if isinstance(data, dict) else None
        return [r for r in runs if isinstance(r, dict)] if isinstance(runs, list) else []

    def run_artifacts(self, run_id: int, name: str | None = None, *, max_pages: int = 1) -> list[dict[str, Any]]:
        """The artifacts of one workflow run (those named ``name`` only, when given), 100 a page."""
        params: dict[str, Any] = {"per_page": 100}
        if name:
            params["name"] = name
        return self._pages(f"{self._base}/actions/runs/{int(run_id)}/artifacts", "artifacts", params, max_pages)

    def run_jobs(self, run_id: int, *, max_pages: int = 10) -> list[dict[str, Any]]:
        """The jobs of a workflow run's latest attempt (a re-run's jobs replace the earlier ones), 100 a page."""
        return self._pages(f"{self._base}/actions/runs/{int(run_id)}/jobs", "jobs",
                           {"filter": "latest", "per_page": 100}, max_pages)

    def _pages(self, path: str, key: str, params: dict[str, Any], max_pages: int) -> list[dict[str, Any]]:
        """The ``key`` lists of up to ``max_pages`` pages, until one is short or ``total_count`` is reached."""
        out: list[dict[str, Any]] = []
        for page in range(1, max_pages + 1):
            data = self._json("GET", path, params={**params, "page": page} if page > 1 else params)
            items = data.get(key) if isinstance(data, dict) else None
            if not isinstance(items, list):
                break
            out.extend(i for i in items if isinstance(i, dict))
            total = data.get("total_count") if isinstance(data, dict) else None
            if len(items) < int(params.get("per_page", 30)) or (isinstance(total, int) and len(out) >= total):
                break
        return out

    def download_artifact(self, artifact_id: int, *, max_bytes: int = 256 * 1024 * 1024) -> bytes:
        """An artifact's zip: GitHub answers with a short-lived pre-signed URL, fetched without our token."""
        path = f"{self._base}/actions/artifacts/{int(artifact_id)}/zip"
        response = self.request("GET", path)
        location = response.headers.get("location", "")
        if response.status_code != 302 or not location:
            raise GitHubError(f"GET {path}: expected a redirect to the archive, got HTTP {response.status_code}")
        if not (location.startswith("https://") or (location.startswith("http://127.0.0.1:")
                                                    and self.api_url.startswith("http://127.0.0.1:"))):
            raise GitHubError(f"GET {path}: the archive URL is not https: {location[:80]}")
        # The URL carries its own signature; the token must not travel to the storage host.
        with httpx.stream("GET", location, timeout=httpx.Timeout(60.0), follow_redirects=False) as archive:
            if archive.status_code != 200:
                raise GitHubError(f"downloading artifact {artifact_id}: HTTP {archive.status_code}", archive.status_code)
            chunks, size = [], 0
            for chunk in archive.iter_bytes():
                size += len(chunk)
                if size > max_bytes:
                    raise GitHubError(f"artifact {artifact_id} is larger than {max_bytes:,} bytes; not read")
                chunks.append(chunk)
        return b"".join(chunks)

    def branch_activity(self, branch: str, per_page: int = 100) -> tuple[list[dict[str, Any]], bool]:
        """The newest pushes, force-pushes and creations of one branch, as GitHub recorded them (one page),
        and whether GitHub has more (a ``rel="next"`` link: a page may hold fewer records than asked for)."""
        path = f"{self._base}/activity"
        response = self.request("GET", path, params={"ref": f"refs/heads/{branch}", "direction": "desc",
                                                     "per_page": per_page})
        try:
            data = response.json()
        except ValueError:
            data = None
        if not isinstance(data, list):
            raise GitHubError(f"GET {path}: expected a list of activities")
        return [a for a in data if isinstance(a, dict)], "next" in response.links


def _describe(response: httpx.Response) -> str:
    message = ""
    try:
        data = response.json()
        if isinstance(data, dict) and isinstance(data.get("message"), str):
            message = data["message"][:300]
    except ValueError:
        message = response.text[:200].strip()
    return f"HTTP {response.status_code}" + (f" ({message})" if message else "")
