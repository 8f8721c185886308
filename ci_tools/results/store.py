"""The results store: an orphan branch of append-only JSON Lines, one file per point, one manifest per sweep.

Layout of the branch (``ci-tools-results`` by default)::

    points/<point slug>.jsonl   one line per measurement: {"key": ..., "sha", "date", "sweep", "metrics", ...}
    sweeps/<date>_<sweep>.json  one manifest per sweep: sha, runners, images, date, run URL, point count
    plots/<sha>/<figure>.png    the frontier figures of a sweep (``ci-tools results plot``)

Every write is one commit on top of the branch (``git fast-import``, one
process however many points), never a rewrite: a file's new content must
start with its old content, and a sweep already in the store is not added
twice (a re-run of the writing job adds nothing).  Only sweeps of a commit
on the default branch are written (:func:`check_writable`); pull requests
read.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from ..revision.gitcli import Git, GitError
from .point import Observation, PointKey

BRANCH = "ci-tools-results"
COMMITTER = "ci-tools <ci-tools@users.noreply.github.com>"


class StoreError(Exception):
    """The store cannot be read or written as asked; the message says why."""


@dataclass(frozen=True)
class Manifest:
    sweep: str
    sha: str
    date: str
    runners: tuple[str, ...]
    images: tuple[str, ...]
    points: int
    run_url: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"sweep": self.sweep, "sha": self.sha, "date": self.date, "runners": list(self.runners),
                "images": list(self.images), "points": self.points, "run_url": self.run_url}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Manifest:
        return cls(str(data["sweep"]), str(data["sha"]), str(data["date"]), tuple(data.get("runners") or ()),
                   tuple(data.get("images") or ()), int(data.get("points") or 0), str(data.get("run_url", "")))

    @property
    def path(self) -> str:
        return f"sweeps/{self.date[:19].replace(':', '')}_{_safe(self.sweep)}.json"


def _safe(text: str) -> str:
    return "".join(c if c.isalnum() or c in "._-" else "-" for c in text)[:80]


def manifest_for(observations: Sequence[Observation], sweep: str, sha: str, date: str, run_url: str = "") -> Manifest:
    return Manifest(sweep=sweep, sha=sha, date=date, runners=tuple(sorted({o.runner for o in observations if o.runner})),
                    images=tuple(sorted({o.image for o in observations if o.image})), points=len(observations),
                    run_url=run_url)


def line(observation: Observation) -> str:
    return json.dumps({"key": observation.key.to_json(), **observation.to_json()}, sort_keys=True,
                      separators=(",", ":")) + "\n"


class Store:
    """The store as the branch ``ref`` of the repository at ``root`` holds it (read), or as ``branch`` (write)."""

    def __init__(self, root: Path, *, branch: str = BRANCH, ref: str | None = None) -> None:
        self.git = Git(root)
        self.root, self.branch, self.ref = root, branch, ref or f"refs/heads/{branch}"

    def head(self) -> str | None:
        return self.git.commit_sha(self.ref)

    def _files(self, commit: str, under: str) -> dict[str, str]:
        return {p: b for p, b in self.git.blobs(commit).items() if p.startswith(under)}

    def _text(self, blob: str) -> str:
        found = self.git.read_object(blob)
        if found is None:
            raise StoreError(f"{self.ref}: blob {blob} is missing")
        return found[2].decode("utf-8")

    def read(self, keys: Iterable[PointKey] | None = None) -> dict[PointKey, list[Observation]]:
        """Every observation of the store (of ``keys`` only, when given), oldest first per point."""
        commit = self.head()
        if commit is None:
            return {}
        files = self._files(commit, "points/")
        wanted = None if keys is None else {f"points/{k.slug()}.jsonl" for k in keys}
        out: dict[PointKey, list[Observation]] = {}
        for path, blob in sorted(files.items()):
            if wanted is not None and path not in wanted:
                continue
            for n, text in enumerate(self._text(blob).splitlines(), 1):
                try:
                    data = json.loads(text)
                    key = PointKey.from_json(data["key"])
                    out.setdefault(key, []).append(Observation.from_json(key, data))
                except (ValueError, KeyError, TypeError) as exc:
                    raise StoreError(f"{self.ref}:{path}:{n}: not a store line ({exc})") from None
        for obs in out.values():
            obs.sort(key=lambda o: o.date)
        return out

    def manifests(self) -> list[Manifest]:
        commit = self.head()
        if commit is None:
            return []
        out = []
        for path, blob in sorted(self._files(commit, "sweeps/").items()):
            try:
                out.append(Manifest.from_json(json.loads(self._text(blob))))
            except (ValueError, KeyError, TypeError) as exc:
                raise StoreError(f"{self.ref}:{path}: not a sweep manifest ({exc})") from None
        return sorted(out, key=lambda m: m.date)

    def append(self, observations: Sequence[Observation], manifest: Manifest, *,
               files: Mapping[str, bytes] | None = None) -> str | None:
        """Add a sweep as one commit on the branch; None when the sweep is already there (nothing written)."""
        parent = self.head()
        existing = self._files(parent, "") if parent else {}
        if manifest.path in existing or any(m.sweep == manifest.sweep for m in (self.manifests() if parent else [])):
            return None
        changes: dict[str, bytes] = {}
        by_path: dict[str, list[str]] = {}
        for o in observations:
            by_path.setdefault(f"points/{o.key.slug()}.jsonl", []).append(line(o))
        for path, lines in by_path.items():
            old = self._text(existing[path]) if path in existing else ""
            if old and not old.endswith("\n"):
                raise StoreError(f"{self.ref}:{path}: the last line has no newline; refusing to append to it")
            changes[path] = (old + "".join(lines)).encode("utf-8")
        changes[manifest.path] = (json.dumps(manifest.to_json(), indent=2, sort_keys=True) + "\n").encode("utf-8")
        for path, content in (files or {}).items():
            if path in existing:
                raise StoreError(f"{self.ref}:{path}: already in the store; files are never replaced")
            changes[path] = content
        return self._commit(parent, changes, f"results: sweep {manifest.sweep} of {manifest.sha[:12]} "
                                             f"({manifest.points} points)")

    def add_files(self, files: Mapping[str, bytes], message: str) -> str:
        """Add new files (plots) as one commit; a path already present is refused."""
        parent = self.head()
        existing = self._files(parent, "") if parent else {}
        clash = sorted(set(files) & set(existing))
        if clash:
            raise StoreError(f"{self.ref}:{clash[0]}: already in the store; files are never replaced")
        return self._commit(parent, dict(files), message)

    def _commit(self, parent: str | None, changes: Mapping[str, bytes], message: str) -> str:
        import time

        stream = bytearray()
        msg = message.encode("utf-8")
        stream += f"commit refs/heads/{self.branch}\ncommitter {COMMITTER} {int(time.time())} +0000\n".encode()
        stream += f"data {len(msg)}\n".encode() + msg + b"\n"
        if parent:
            stream += f"from {parent}\n".encode()
        for path, content in sorted(changes.items()):
            stream += f"M 100644 inline {path}\ndata {len(content)}\n".encode("utf-8") + content + b"\n"
        stream += b"done\n"
        done = subprocess.run(["git", "-C", str(self.root), "fast-import", "--quiet", "--done"], input=bytes(stream),
                              capture_output=True, check=False)
        if done.returncode != 0:
            raise StoreError(f"git fast-import: {done.stderr.decode('utf-8', 'replace').strip()}")
        head = self.git.commit_sha(f"refs/heads/{self.branch}")
        if head is None:
            raise StoreError(f"refs/heads/{self.branch} missing after the write")
        self.ref = f"refs/heads/{self.branch}"
        return head


def check_writable(root: Path, sha: str, default_ref: str) -> None:
    """Refuse a sweep whose commit is not on the default branch: pull requests never write baselines."""
    git = Git(root)
    if git.commit_sha(default_ref) is None:
        raise StoreError(f"the default branch `{default_ref}` is not in {root}; fetch it before writing the store")
    try:
        git.run("merge-base", "--is-ancestor", sha, default_ref)
    except GitError:
        raise StoreError(f"commit {sha[:12]} is not on the default branch ({default_ref}); only default-branch "
                         "sweeps are written to the results store") from None
