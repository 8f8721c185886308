"""``claims --history``: every entry checked against the revision that added it.

The commits that touched the changelog are walked oldest first.  For each,
the entries it adds are found by content against its first parent (a squash
merge may insert an entry mid-file; a re-ingest that appends a copy of an
old entry adds nothing), and only those entries are parsed, so a 400 KB
changelog is never re-parsed per commit.
Of the master configs, only the configs an entry names are parsed, once per
blob (:mod:`..model.partial`), and recipe evaluations are shared across commits through one :class:`EvalCache`
keyed by the recipe's and the library's bytes and the job's env.
"""

from __future__ import annotations

import gc
import importlib
import os
import pickle
import resource
import subprocess
import sys
from contextlib import contextmanager
from typing import Callable, Iterator, Mapping, TypeVar

from ...config import ProjectConfig, layout_at
from ...errors import UsageError
from ...findings import PR_DESCRIPTION, Finding
from ...model.older_layout import read_older_layout
from ...model.partial import PartialLoader
from ...revision.snapshot import GitSnapshot, blob_ids_at, read_blob_uncached
from ..text.markdown import pr_body_source
from .check import EntryInput, EvalCache, check_entries, entry_inputs


def _git(root: str, *args: str) -> str:
    proc = subprocess.run(["git", "-C", root, *args], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise UsageError(f"git {' '.join(args)} failed: {proc.stderr.strip() or proc.stdout.strip()}")
    return proc.stdout


T = TypeVar("T")


def changelog_commits(config: ProjectConfig, since: str | None, head: str) -> list[tuple[str, str | None]]:
    """(commit, first parent) for every commit touching the changelog, oldest first."""
    rev = f"{since}..{head}" if since else head
    out = _git(str(config.root), "log", "--reverse", "--first-parent", "--format=%H %P", rev, "--", config.changelog)
    commits: list[tuple[str, str | None]] = []
    for line in out.splitlines():
        parts = line.split()
        if parts:
            commits.append((parts[0], parts[1] if len(parts) > 1 else None))
    return commits


def added_in(path: str, base: bytes | None, head: bytes) -> list[EntryInput]:
    """Entries ``head`` adds over ``base``, by content wherever they stand (see :mod:`..changelog.added`)."""
    from ...changelog.added import added_entries
    from ...changelog.layout import Layout

    entries = added_entries(path, Layout(base) if base is not None else None, Layout(head))
    if not entries:
        return []
    return entry_inputs(path, head.decode("utf-8", "replace"), entries)


# Up to this many commits are replayed in this process; more go to worker processes, one after another.
CHUNK = 100
# A worker takes commits until its peak memory passes this: what its caches hold (every version of every
# recipe, library and master config it read) dies with it, so a replay of a long history stays within a
# bounded memory (this, plus what one commit adds).  A budget, not a count of commits: the early history's
# commits hold a fraction of what today's do, so a count that keeps today's commits within bounds starts
# workers the early ones do not need, and one that suits the early ones passes the bound on today's.
WORKER_MEMORY_MIB = 300


# The collector's thresholds while a replay runs.  Evaluation makes and drops millions of short-lived objects
# (values, states, findings) beside caches that live as long as the process: at the default thresholds (a
# collection every 700 net allocations, a full one every 100 of those) the collector walks those caches again
# and again.  Rarer collections took 5-8 % off the whole history's replay, at the same peak memory (each worker
# still stops at WORKER_MEMORY_MIB); the trees of parsed scripts are frozen out of its sight already.
REPLAY_GC_THRESHOLDS = (50_000, 50, 100)


@contextmanager
def _rare_collections() -> Iterator[None]:
    before = gc.get_threshold()
    gc.set_threshold(*REPLAY_GC_THRESHOLDS)
    try:
        yield
    finally:
        gc.set_threshold(*before)


def replay_history(config: ProjectConfig, *, since: str | None, head: str = "HEAD", verbose: bool = False) -> list[Finding]:
    """Findings of every appended entry, each at the commit that appended it (``[at <sha>]`` in the message)."""
    commits = changelog_commits(config, since, head)
    _refuse_shallow_history(config, commits)
    return replay_pairs(config, commits, verbose=verbose)


def replay_pairs(config: ProjectConfig, commits: list[tuple[str, str | None]], *, verbose: bool = False,
                 descriptions: Mapping[str, str] | None = None) -> list[Finding]:
    """Findings of the entries each ``(head, base)`` pair appends, each checked at its head (``[at <sha>]`` in
    the message): a commit and its first parent for the history, a pull request's head and its merge base with
    the default branch for a replay of pull requests.  ``descriptions`` gives a head the text checked as its PR
    description (a squash merge's commit message: the PR's title and its commits' messages)."""
    with _rare_collections():
        return _replay_pairs(config, commits, verbose, descriptions or {})


def _replay_pairs(config: ProjectConfig, commits: list[tuple[str, str | None]], verbose: bool,
                  bodies: Mapping[str, str]) -> list[Finding]:
    if len(commits) <= CHUNK or not hasattr(os, "fork"):
        return _replay(config, commits, verbose, bodies)[0]
    findings: list[Finding] = []
    start = 0
    while start < len(commits):
        rest = commits[start:]
        (found, done), loaded = _in_worker(lambda: _replay_within(config, rest, verbose, bodies))
        findings.extend(found)
        _load_here(loaded)
        start += done
    return findings


def _replay_within(config: ProjectConfig, commits: list[tuple[str, str | None]], verbose: bool,
                   descriptions: Mapping[str, str]) -> tuple[list[Finding], int]:
    """The findings of the first commits, taken one by one until this process's peak memory passes
    :data:`WORKER_MEMORY_MIB` (at least one commit), and how many were taken."""
    return _replay(config, commits, verbose, descriptions, stop=lambda: peak_memory_mib() > WORKER_MEMORY_MIB)


def peak_memory_mib() -> float:
    """This process's peak resident memory (a forked worker's own, not its parent's)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 2**20 if sys.platform == "darwin" else peak / 2**10  # bytes on macOS, KiB elsewhere


def _load_here(modules: list[str]) -> None:
    """The modules a worker imported, imported once here, so that the next workers start with them (a fork
    shares them) instead of each importing them again (the evaluation's modules are imported where they are
    first used, never by the parent of the workers)."""
    for name in modules:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - only a head start: a module that cannot load here fails in the worker
            continue


def _in_worker(work: Callable[[], T]) -> tuple[T, list[str]]:
    """``work()`` run in a forked process; its result (or its exception) comes back through a pipe, with the
    names of the ci_tools modules it imported."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the worker
        os.close(read_end)
        before = set(sys.modules)
        try:
            result = work()
            loaded = sorted(n for n in sys.modules if n not in before and n.startswith("ci_tools."))
            payload = pickle.dumps((True, (result, loaded)))
        except BaseException as exc:  # noqa: BLE001 - handed to the parent, which raises it
            payload = pickle.dumps((False, exc))
        with os.fdopen(write_end, "wb") as out:
            out.write(payload)
        os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as stream:
        data = stream.read()
    _, status = os.waitpid(pid, 0)
    if not data:
        raise RuntimeError(f"the history worker ended without a result (status {status})")
    ok, result = pickle.loads(data)
    if not ok:
        raise result
    found, loaded = result
    return found, list(loaded)


def _replay(config: ProjectConfig, commits: list[tuple[str, str | None]], verbose: bool,
            descriptions: Mapping[str, str], stop: Callable[[], bool] | None = None) -> tuple[list[Finding], int]:
    """The findings of the commits' appended entries, and how many commits were replayed: all of them, or up to
    the first after which ``stop()`` says so."""
    findings: list[Finding] = []
    cache = EvalCache(config)
    loaders: dict[tuple[tuple[str, ...], str], PartialLoader] = {}
    # The changelog's blob at every commit and first parent, asked of git at once: a parent's changelog is
    # most often the previous commit's (with --first-parent), which is then not read again.
    blob_at = blob_ids_at(config.root, sorted({c for sha, parent in commits for c in (sha, parent) if c}),
                          config.changelog)
    last: tuple[str | None, bytes | None] = (None, None)  # (blob id, bytes) of the last changelog read
    for done, (sha, parent) in enumerate(commits, 1):
        if done > 1 and stop is not None and stop():
            return findings, done - 1
        head_bytes = _read_changelog(config, blob_at[sha], last)
        base_bytes = _read_changelog(config, blob_at[parent], last) if parent else None
        last = (blob_at[sha], head_bytes)
        if head_bytes is None:
            continue
        entries = added_in(config.changelog, base_bytes, head_bytes)
        if not entries:
            continue
        snapshot = GitSnapshot(config.root, sha, listed=True)
        at = layout_at(config, snapshot.glob)  # a revision from before the configs moved reads them where they were
        loader = loaders.setdefault((at.master_configs, at.runners), PartialLoader(at))
        # A revision from before the blocks moved under `scenarios:` is read as its own generator read it.
        repo = read_older_layout(loader.load(snapshot, [p for e in entries for p in e.patterns]))
        base = GitSnapshot(config.root, parent, listed=True) if parent else None
        body = descriptions.get(sha)
        report = check_entries(at, repo, snapshot, entries, cache=cache, verbose=verbose, base_snapshot=base,
                               pr_body=pr_body_source(PR_DESCRIPTION, body) if body is not None else None)
        # A master config or runners file that does not load at this commit is said, not skipped.
        for f in [*repo.problems, *report.findings]:
            findings.append(Finding(f.rule, f.severity, f"{f.message} [at {sha[:12]}]", f.location, f.related,
                                    {**f.data, "commit": sha}))
    return findings, len(commits)


def _read_changelog(config: ProjectConfig, blob: str | None, last: tuple[str | None, bytes | None]) -> bytes | None:
    """A changelog version by blob id, read past the process-wide blob cache (800 versions of 400 KB would stay
    in memory); the last one read is reused."""
    if blob is None:
        return None
    if blob == last[0]:
        return last[1]
    return read_blob_uncached(config.root, blob)


def _refuse_shallow_history(config: ProjectConfig, commits: list[tuple[str, str | None]]) -> None:
    """A walk that reaches the boundary of a shallow clone would take a whole changelog for new entries."""
    from ...revision.snapshot import shallow_commits

    boundary = shallow_commits(config.root)
    cut = next((sha for sha, _ in commits if sha in boundary), None)
    if cut is not None:
        raise UsageError(
            f"--history needs the changelog's history, but this clone is shallow: commit {cut[:12]} has its parents "
            "left out, so every entry it holds would be checked as new. Fetch the history (`fetch-depth: 0` in "
            "actions/checkout, or `git fetch --unshallow`), or pass --since REV with a revision inside the clone"
        )
