#!/usr/bin/env python3
"""Extract one real InferenceX pull request as a claims case of ``tests/data/claims_real``.

Usage (re-runnable; the output is deterministic)::

    .venv/bin/python scripts/extract_claims_case.py IX_CLONE COMMIT OUT_DIR

``IX_CLONE`` is a clone of https://github.com/SemiAnalysisAI/InferenceX
(Apache-2.0), ``COMMIT`` a commit that adds a ``perf-changelog.yaml`` entry,
``OUT_DIR`` the case's directory (``tests/data/claims_real/<first 12 hex>``).
The files written are InferenceX's, copied unchanged except for the trimming
below; they keep InferenceX's licence.

What the extract holds is what the claims check itself reads, not a guess:
the claims checker runs on the clone at ``COMMIT`` against its parent with a
snapshot that records every file read while the new entry's jobs are
evaluated and judged (recipes, ``benchmark_lib.sh``, sourced and executed
files, srt-slurm YAML, the AMD script chain).  Of the launchers the job
environment scans, only those of the jobs' fleets are kept (and the file a
launcher kept as a link points at); the workflow templates are left out, so
the replayed jobs take their environment from ci-tools' built-in contract,
as every case of the directory does.  The governed files are trimmed:

- each master config keeps only the entry's config keys (a file holding none
  is left out), ``configs/runners.yaml`` only the runner labels of those
  configs (in every section keyed by label); what remains is checked to load
  to the same values as in the full file;
- ``perf-changelog.yaml`` keeps the new entry and its neighbours (the parent
  keeps the neighbours), so the head is the base plus the entry at the same
  place and the append-only gate judges the extract as it judged the commit.

Files are written to ``head/`` (at ``COMMIT``), ``base/`` (at its parent) and
``common/`` (equal at both).  A file byte-identical to one another extract
of ``OUT_DIR``'s parent stores at the same path is not stored again: the
part's ``inherit.txt`` names that extract's part and the path instead (see
``tests/fixture_trees.py``).

Before writing, the extract is replayed as a two-commit repository and judged
again: its claim findings (with changelog lines mapped onto the extract) and
its append-only gate findings must be the full repository's, else the script
stops with the difference and writes nothing.  It ends by printing the claim
findings in the form ``tests/test_claims_real.py`` lists them and the row of
the directory's README.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import yaml

from ci_tools.changelog.added import added_blocks, parse_block
from ci_tools.changelog.layout import Block, Layout
from ci_tools.changelog.lint import ChangelogChange, HeadConfigs, lint_changelog
from ci_tools.claims.verdict.check import EvalCache, check_entries, entry_inputs, entry_jobs
from ci_tools.claims.verdict.rules import DISAGREEMENT_RULES
from ci_tools.claims.verdict.undocumented import undocumented_changes
from ci_tools.config import ProjectConfig, layout_at, load_config
from ci_tools.errors import UsageError
from ci_tools.findings import Finding
from ci_tools.jobs.env.contract import contract_for
from ci_tools.jobs.env.settings import load_job_env_settings
from ci_tools.model.keys import keys_matching
from ci_tools.model.repository import RepoData, load_repo
from ci_tools.revision.snapshot import GitSnapshot
from ci_tools.revision.yamlpos import PosMap, YamlLoadError, load_yaml

PARTS = ("common", "head", "base")
INHERIT = "inherit.txt"
CLAIM_RULES = DISAGREEMENT_RULES


class ExtractError(Exception):
    """The commit cannot be extracted faithfully; the message says why."""


class RecordingSnapshot:
    """A revision's files, remembering which ones were read while ``recording``."""

    def __init__(self, inner: GitSnapshot) -> None:
        self.inner = inner
        self.label = inner.label
        self.sha = inner.sha
        self.recording = False
        self.read_paths: set[str] = set()

    def read(self, path: str) -> bytes | None:
        data = self.inner.read(path)
        if self.recording and data is not None:
            self.read_paths.add(path)
        return data

    def files(self) -> tuple[str, ...]:
        return self.inner.files()

    def glob(self, pattern: str) -> list[str]:
        return self.inner.glob(pattern)


# (rule, changelog line or 0, subject, claimed): a finding as the cases compare it.
Key = tuple[str, int, str, str]


@dataclass(frozen=True)
class Judged:
    """What the claims check and the append-only gate say about one commit against its parent."""

    head: RecordingSnapshot
    base: RecordingSnapshot
    head_repo: RepoData
    base_repo: RepoData
    head_log: Layout
    base_log: Layout
    added: tuple[Block, ...]
    findings: tuple[Finding, ...]
    gate_rules: tuple[tuple[str, int], ...]
    launchers: frozenset[str]
    config_keys: frozenset[str]


def config_at(root: Path, head: GitSnapshot | RecordingSnapshot) -> ProjectConfig:
    """The clone's configuration with the config paths ``head`` uses (a commit from before the master configs
    moved to configs/ reads them from .github/configs/, as ``claims --history`` does)."""
    return layout_at(load_config(root), head.glob)


def judge(root: Path, commit: str) -> Judged:
    """Run the claims check of ``commit``'s new entries, recording what the jobs read."""
    head = RecordingSnapshot(GitSnapshot(root, commit))
    base = RecordingSnapshot(GitSnapshot(root, head.sha + "^"))
    config = config_at(root, head)
    head_bytes, base_bytes = head.read(config.changelog), base.read(config.changelog)
    if head_bytes is None or base_bytes is None:
        raise ExtractError(f"{config.changelog} is missing at {head.label} or at its parent; expected it at both")
    head_log, base_log = Layout(head_bytes), Layout(base_bytes)
    added = tuple(added_blocks(base_log, head_log))
    if not added:
        raise ExtractError(f"{head.label} adds no entry to {config.changelog}; expected a commit that adds one")
    parsed = [parse_block(config.changelog, head_log, b) for b in added]
    entries = entry_inputs(config.changelog, head_bytes.decode("utf-8", "replace"), [e for e in parsed if e is not None])
    head_repo, base_repo = load_repo(head, config, with_changelog=False), load_repo(base, config, with_changelog=False)
    cache = EvalCache(config)
    head.recording = base.recording = True
    report = check_entries(config, head_repo, head, entries, base_repo=base_repo, base_snapshot=base, cache=cache)
    report.findings += undocumented_changes(config, entries, report, base_repo, base, head_repo, head, cache)
    head.recording = base.recording = False
    change = ChangelogChange(config.changelog, base_bytes, head_bytes)
    keys = HeadConfigs(tuple(head_repo.configs), tuple(f.path for f in head_repo.master_files))
    gate = lint_changelog(change, config, pr_number=None, head_configs=lambda: keys)
    launchers: set[str] = set()
    for side, repo in ((head, head_repo), (base, base_repo)):
        contract = contract_for(config, side)
        paths = {path for entry in entries for job in entry_jobs(repo, entry) for path in contract.launcher_paths(job)}
        # A launcher kept as a link is read through to its target, which the job runs as well.
        launchers |= paths | {contract.launchers[p].path for p in paths if p in contract.launchers}
    patterns = [p for e in entries for p in e.patterns]
    config_keys = frozenset(keys_matching(patterns, head_repo.configs)) | frozenset(keys_matching(patterns, base_repo.configs))
    return Judged(head, base, head_repo, base_repo, head_log, base_log, added, tuple(report.findings),
                  tuple(sorted((f.rule, f.location.line) for f in gate)), frozenset(launchers), config_keys)


def comparable(findings: Iterable[Finding], changelog: str, line_of: Callable[[int], int]) -> set[Key]:
    """Findings keyed as the cases compare them, changelog lines passed through ``line_of``."""
    out: set[Key] = set()
    for f in findings:
        line = line_of(f.location.line) if f.location.path == changelog else f.location.line
        out.add((f.rule, line, str(f.data.get("subject", "")), str(f.data.get("claimed", ""))))
    return out


# --- trimming the governed files -------------------------------------------------------------------------


def _lines(data: bytes) -> list[bytes]:
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    return lines


def _joined(lines: Iterable[bytes]) -> bytes:
    return b"".join(line + b"\n" for line in lines)


def _block_end(lines: list[bytes], start: int, limit: int) -> int:
    """The last line (1-based) of the block from ``start`` before ``limit``, without the blank lines and
    column-0 comments that lead into what follows."""
    end = limit
    while end > start and (not lines[end - 1].strip() or lines[end - 1].startswith(b"#")):
        end -= 1
    return end


def _top_level_starts(lines: list[bytes], indent: int, first: int, limit: int) -> list[int]:
    """Lines (1-based) in ``first..limit`` that start a mapping key at exactly ``indent`` spaces."""
    pad = b" " * indent
    return [n for n in range(first, limit + 1)
            if lines[n - 1].startswith(pad) and lines[n - 1][indent:indent + 1] not in (b"", b" ", b"#", b"-")]


def _key_of(line: bytes) -> str:
    """The key a ``key: value`` line starts (a label may hold ``:`` itself: ``cluster:mi355x-amds:``)."""
    found = re.match(rb"\s*(.+?):(?:\s|$)", line)
    return (found.group(1) if found else line.strip()).strip(b"'\"").decode("utf-8", "replace")


def trim_master(path: str, raw: bytes, keys: frozenset[str]) -> bytes | None:
    """The master file with only ``keys`` (None when it holds none of them), each block as written."""
    root = load_yaml(raw, path).value
    if not isinstance(root, PosMap) or not keys & set(root):
        return None
    lines = _lines(raw)
    starts = sorted(root.key_span(k)[0] for k in root)
    blocks: list[list[bytes]] = []
    for key in root:
        if key not in keys:
            continue
        start = root.key_span(key)[0]
        later = [s for s in starts if s > start]
        end = _block_end(lines, start, later[0] - 1 if later else len(lines))
        blocks.append(lines[start - 1:end])
    trimmed = b"\n".join(_joined(b) for b in blocks)
    full, kept = yaml.safe_load(raw), yaml.safe_load(trimmed)
    if kept != {k: v for k, v in full.items() if k in keys}:
        raise ExtractError(f"{path}: the configs {sorted(keys & set(root))} do not load to the same values once "
                           "cut out of the file (an anchor or a merge key reaching outside them?)")
    return trimmed


def trim_runners(path: str, raw: bytes, labels: frozenset[str]) -> bytes:
    """runners.yaml with only ``labels`` in each section keyed by runner label, each block as written."""
    full = yaml.safe_load(raw)
    if not isinstance(full, dict):
        raise ExtractError(f"{path}: expected a mapping of sections (labels, hardware), found {type(full).__name__}")
    lines = _lines(raw)
    sections = _top_level_starts(lines, 0, 1, len(lines))
    out: list[bytes] = []
    for n, start in enumerate(sections):
        limit = sections[n + 1] - 1 if n + 1 < len(sections) else len(lines)
        end = _block_end(lines, start, limit)
        body = [line for line in lines[start:end] if line.strip() and not line.lstrip().startswith(b"#")]
        indent = len(body[0]) - len(body[0].lstrip(b" ")) if body else 0
        items = _top_level_starts(lines, indent, start + 1, end) if indent else []
        if not items:
            out.extend(lines[start - 1:end])
            continue
        kept = [(i, item) for i, item in enumerate(items) if _key_of(lines[item - 1]) in labels]
        # A section none of whose labels is kept stays, empty, so the file keeps its shape.
        out.append(lines[start - 1] if kept else lines[start - 1].rstrip() + b" {}")
        for i, item in kept:
            item_end = _block_end(lines, item, items[i + 1] - 1 if i + 1 < len(items) else end)
            out.extend(lines[item - 1:item_end])
    trimmed = _joined(out)
    expected = {name: ({k: v for k, v in value.items() if k in labels} if isinstance(value, dict) else value)
                for name, value in full.items()}
    if yaml.safe_load(trimmed) != expected:
        raise ExtractError(f"{path}: the labels {sorted(labels)} do not load to the same values once cut out")
    return trimmed


@dataclass(frozen=True)
class TrimmedChangelog:
    head: bytes
    base: bytes
    # head line of each added entry's first line -> its line in the trimmed head
    moved: tuple[tuple[Block, int], ...]

    def line_of(self, line: int) -> int:
        for block, start in self.moved:
            if block.start <= line <= block.end:
                return start + line - block.start
        return 0  # a line outside the new entries: not comparable across the trim


def _assemble(layout: Layout, chosen: list[Block]) -> tuple[bytes, dict[Block, int]]:
    """The blocks with the blank lines that follow each in the file; after the last chosen one only when it
    ends the file too (its trailing lines are then the file's, and the gate reads them)."""
    lines: list[bytes] = []
    starts: dict[Block, int] = {}
    for n, block in enumerate(chosen):
        starts[block] = len(lines) + 1
        lines.extend(layout.lines[block.start - 1:block.end])
        if n + 1 < len(chosen) or block == layout.blocks[-1]:
            lines.extend(layout.lines[block.end:block.end + block.gap])
    return _joined(lines), starts


def trim_changelog(path: str, base: Layout, head: Layout, added: tuple[Block, ...]) -> TrimmedChangelog:
    """The new entries and the entries around them; the parent keeps those neighbours."""
    old = [b for b in head.blocks if b not in added]
    if [head.block_bytes(b) for b in old] != [base.block_bytes(b) for b in base.blocks]:
        raise ExtractError(f"{path}: the commit does more than insert entries (an existing entry changed or "
                           "moved); an extract would not keep what the append-only gate saw")
    position = {b: i for i, b in enumerate(old)}
    neighbours: set[int] = set()
    for block in added:
        index = head.blocks.index(block)
        before = [position[b] for b in head.blocks[:index] if b in position]
        after = [position[b] for b in head.blocks[index + 1:] if b in position]
        neighbours.update(before[-1:] + after[:1])
    head_text, starts = _assemble(head, [b for b in head.blocks if b in added or position.get(b) in neighbours])
    base_text, _ = _assemble(base, [b for i, b in enumerate(base.blocks) if i in neighbours])
    return TrimmedChangelog(head_text, base_text, tuple((b, starts[b]) for b in added))


# --- the extract -------------------------------------------------------------------------------------------


def _runner_labels(judged: Judged) -> frozenset[str]:
    """The runner labels of the entry's configs at either revision (one trimmed runners.yaml serves both
    when the file did not change)."""
    return frozenset(str(entry.data.get("runner")) for repo in (judged.head_repo, judged.base_repo)
                     for key, entry in repo.configs.items()
                     if key in judged.config_keys and isinstance(entry.data, Mapping) and entry.data.get("runner") is not None)


def _revision_files(judged: Judged, side: RecordingSnapshot, repo: RepoData, read: set[str],
                    changelog: bytes) -> dict[str, bytes]:
    """What one revision of the extract holds: the files read (by either side) as they are at this one."""
    config = repo.config
    files: dict[str, bytes] = {}
    for path in sorted(read):
        data = side.read(path)
        if data is not None:
            files[path] = data
    for loaded in repo.master_files:
        trimmed = trim_master(loaded.path, loaded.raw, judged.config_keys)
        if trimmed is not None:
            files[loaded.path] = trimmed
    if repo.runners is not None:
        files[config.runners] = trim_runners(config.runners, repo.runners.raw, _runner_labels(judged))
    files[config.changelog] = changelog
    return files


def jobs_read(judged: Judged, config: ProjectConfig) -> set[str]:
    """The files the entry's jobs read at either revision: recorded reads, launchers of their fleets only,
    without the governed files (trimmed apart) and the workflow templates."""
    workflows = PurePosixPath(load_job_env_settings(config).workflow).parent.as_posix() + "/"
    every_launcher = set(contract_for(config, judged.head).launchers)
    governed = {config.runners, config.changelog} | {f.path for f in judged.head_repo.master_files} \
        | {f.path for f in judged.base_repo.master_files}
    read = judged.head.read_paths | judged.base.read_paths
    kept = {p for p in read if p not in governed and not p.startswith(workflows)
            and (p not in every_launcher or p in judged.launchers)}
    return kept | set(judged.launchers)


def build_extract(judged: Judged, config: ProjectConfig) -> tuple[dict[str, dict[str, bytes]], TrimmedChangelog]:
    """Part (common, head, base) -> path -> bytes."""
    log = trim_changelog(config.changelog, judged.base_log, judged.head_log, judged.added)
    read = jobs_read(judged, config)
    head = _revision_files(judged, judged.head, judged.head_repo, read, log.head)
    base = _revision_files(judged, judged.base, judged.base_repo, read, log.base)
    common = {p: d for p, d in head.items() if base.get(p) == d}
    parts = {"common": common,
             "head": {p: d for p, d in head.items() if p not in common},
             "base": {p: d for p, d in base.items() if p not in common}}
    return parts, log


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=extract", "-c", "user.email=extract@localhost", "-c",
                    "commit.gpgsign=false", *args], cwd=root, check=True, capture_output=True, text=True)


def _write(root: Path, files: Mapping[str, bytes]) -> None:
    for rel, data in files.items():
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)


def replay(parts: Mapping[str, Mapping[str, bytes]], root: Path) -> None:
    """A repository whose last two commits are the extract's base and head."""
    _git(root, "init", "-q")
    _write(root, {**parts["common"], **parts["base"]})
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "base")
    for rel in parts["base"]:
        if rel not in parts["head"]:
            (root / rel).unlink()
    _write(root, parts["head"])
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "head")


def verify(judged: Judged, parts: Mapping[str, Mapping[str, bytes]], log: TrimmedChangelog,
           changelog: str) -> set[Key]:
    """The extract's claim findings; an ExtractError when they or the gate's differ from the commit's."""
    with tempfile.TemporaryDirectory(prefix="claims-case-") as tmp:
        root = Path(tmp)
        replay(parts, root)
        again = judge(root, "HEAD")
    full = comparable(judged.findings, changelog, log.line_of)
    extract = comparable(again.findings, changelog, lambda line: line)
    if full != extract:
        raise ExtractError("the extract is not judged as the commit is:\n  only on the full repository: "
                           f"{sorted(full - extract)}\n  only on the extract: {sorted(extract - full)}")
    gate = {(rule, log.line_of(line)) for rule, line in judged.gate_rules}
    if gate != set(again.gate_rules):
        raise ExtractError(f"the append-only gate judges the extract differently: commit {sorted(gate)}, "
                           f"extract {sorted(again.gate_rules)}")
    return extract


def stored_elsewhere(shared: Path, out: Path) -> dict[tuple[str, bytes], str]:
    """(path, bytes) of every file another extract stores itself -> ``<extract>/<part>`` that holds it."""
    found: dict[tuple[str, bytes], str] = {}
    for case in sorted(p for p in shared.iterdir() if p.is_dir() and p.resolve() != out.resolve()):
        for part in PARTS:
            tree = case / part
            for path in sorted(tree.rglob("*")) if tree.is_dir() else ():
                if path.is_file() and not (path.parent == tree and path.name == INHERIT):
                    found.setdefault((path.relative_to(tree).as_posix(), path.read_bytes()), f"{case.name}/{part}")
    return found


def write_extract(parts: Mapping[str, Mapping[str, bytes]], out: Path, shared: Path) -> list[str]:
    """Write the parts below ``out`` (replacing an earlier extract there); returns one line per part."""
    if out.exists():
        strays = [p.name for p in out.iterdir() if p.name not in PARTS]
        if strays:
            raise ExtractError(f"{out} holds {strays}, which an extract does not; refusing to replace it")
        shutil.rmtree(out)
    elsewhere = stored_elsewhere(shared, out)
    summary: list[str] = []
    for part in PARTS:
        inherited: dict[str, list[str]] = {}
        own: dict[str, bytes] = {}
        for rel, data in sorted(parts[part].items()):
            holder = elsewhere.get((rel, data))
            if holder is None:
                own[rel] = data
            else:
                inherited.setdefault(holder, []).append(rel)
        _write(out / part, own)
        if inherited:
            (out / part).mkdir(parents=True, exist_ok=True)
            lines = ["# files equal to ones another extract stores (tests/fixture_trees.py), kept there"]
            lines += [f"{holder} {' '.join(paths)}" for holder, paths in sorted(inherited.items())]
            (out / part / INHERIT).write_text("\n".join(lines) + "\n", encoding="utf-8")
        if own or inherited:
            size = sum(len(d) for d in own.values())
            summary.append(f"{part}: {len(own)} file(s) stored ({size:,} bytes), "
                           f"{sum(len(v) for v in inherited.values())} inherited")
    return summary


def pull_request(root: Path, sha: str) -> str:
    subject = subprocess.run(["git", "log", "-1", "--format=%s", sha], cwd=root, check=True, capture_output=True,
                             text=True).stdout
    found = re.findall(r"\(#(\d+)\)", subject)
    return f"#{found[-1]}" if found else "(no PR number in the subject)"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("ix_clone", type=Path, help="a clone of SemiAnalysisAI/InferenceX")
    parser.add_argument("commit", help="a commit that adds a perf-changelog.yaml entry")
    parser.add_argument("out_dir", type=Path, help="the case's directory, below the directory of the cases")
    args = parser.parse_args(argv)
    try:
        judged = judge(args.ix_clone, args.commit)
        config = config_at(args.ix_clone, judged.head)
        parts, log = build_extract(judged, config)
        findings = verify(judged, parts, log, config.changelog)
        summary = write_extract(parts, args.out_dir, args.out_dir.parent)
        pr = pull_request(args.ix_clone, judged.head.sha)
    except (ExtractError, UsageError, YamlLoadError, yaml.YAMLError) as exc:
        print(f"extract_claims_case: {exc}", file=sys.stderr)
        return 1
    except subprocess.CalledProcessError as exc:
        print(f"extract_claims_case: {' '.join(map(str, exc.cmd))} failed: {exc.stderr.strip() if exc.stderr else exc}",
              file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"extract_claims_case: {exc}", file=sys.stderr)
        return 1
    sha = judged.head.sha
    print(f"{args.out_dir}: {sha[:12]}, config keys {', '.join(sorted(judged.config_keys))}")
    for part in summary:
        print("  " + part)
    print("claim findings (tests/test_claims_real.py CASES):")
    for rule, line, subject, claimed in sorted(f for f in findings if f[0] in CLAIM_RULES):
        print(f"    ({rule!r}, {line}, {subject!r}, {claimed!r}),")
    print("README row:")
    print(f"| {sha[:12]} | {sha} | {pr} |")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:  # the reader left early (| head): end quietly, as the shell's SIGPIPE would
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(141)
