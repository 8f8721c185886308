"""The results comment on GitHub: the baseline from the last default-branch sweep's artifact, and the comment itself.

When the results store has nothing for the points of a sweep, the baseline
is read from the newest successful run of the sweep workflow on the default
branch that uploaded the baseline artifact (only default-branch sweeps do):
workflow runs, the run's artifacts, the artifact's zip.  The comment is
one per dispatch: found again by its hidden marker among the comments the
configured bot wrote (anyone can paste a marker), updated in place.
"""

from __future__ import annotations

import io
import tempfile
import zipfile
from pathlib import Path, PurePosixPath
from typing import Any

from ..results.baseline import Baseline, collect, from_points
from .client import GitHubClient, GitHubError

BASELINE_ARTIFACT = "results-baseline"
MAX_MEMBERS = 20_000


def extract_records(archive: bytes, dest: Path) -> int:
    """Unpack the record files of an artifact zip under ``dest`` (no path leaves it); returns how many."""
    count = 0
    try:
        z = zipfile.ZipFile(io.BytesIO(archive))
    except zipfile.BadZipFile:
        raise GitHubError("the artifact is not a zip archive") from None
    with z:
        members = z.infolist()
        if len(members) > MAX_MEMBERS:
            raise GitHubError(f"the artifact holds {len(members):,} files, more than {MAX_MEMBERS:,}; not read")
        for info in members:
            name = PurePosixPath(info.filename)
            if info.is_dir() or name.is_absolute() or ".." in name.parts or name.name != "record.json":
                continue
            target = dest.joinpath(*name.parts)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(z.read(info))
            count += 1
    return count


def baseline_from_artifacts(client: GitHubClient, *, workflow: str, branch: str,
                            artifact: str = BASELINE_ARTIFACT, runs: int = 20) -> Baseline | None:
    """The baseline of the newest successful default-branch sweep that uploaded ``artifact``; None if none did."""
    for run in client.successful_runs(workflow, branch=branch, per_page=runs):
        found = [a for a in client.run_artifacts(int(run["id"]), artifact)
                 if a.get("name") == artifact and not a.get("expired")]
        if not found:
            continue
        data = client.download_artifact(int(found[0]["id"]))
        with tempfile.TemporaryDirectory(prefix="ci-tools-baseline-") as tmp:
            try:
                extract_records(data, Path(tmp))
            except GitHubError:
                raise GitHubError(f"artifact {found[0]['id']} of run {run['id']} is not a zip archive") from None
            points, problems = collect([Path(tmp)], sweep=str(run["id"]))
        title = f"artifact {artifact} of {workflow} run #{run.get('run_number', run['id'])}"
        return from_points(points, f"{title} (the results store had no measurement)",
                           url=str(run.get("html_url", "")), problems=problems)
    return None


def post_or_update(client: GitHubClient, pr: int, body: str, marker: str, bot_login: str) -> dict[str, Any]:
    """Update the bot's comment that starts with ``marker``, or create it; returns the comment."""
    for comment in client.issue_comments(pr):
        author = (comment.get("user") or {}).get("login")
        if author == bot_login and str(comment.get("body", "")).startswith(marker):
            return client.update_comment(int(comment["id"]), body)
    return client.create_comment(pr, body)
