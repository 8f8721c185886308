#!/usr/bin/env python3
"""Extract what ``check --base COMMIT^`` reads of one real InferenceX commit for some rules, as a test case.

Usage (re-runnable; the output is deterministic)::

    .venv/bin/python scripts/extract_check_case.py IX_CLONE COMMIT OUT_DIR --rule RULE [--rule RULE ...]
        [--keys GLOB ...] [--path PATH ...] [--changelog-context N]

``IX_CLONE`` is a clone of https://github.com/SemiAnalysisAI/InferenceX
(Apache-2.0), ``OUT_DIR`` the case's directory (``tests/data/check_real/<first
12 hex>``).  The files are InferenceX's, unchanged except for the trimming
below; they keep InferenceX's licence.  What is kept:

- ``--keys``: the master configs whose keys match these globs (each master
  file trimmed to them, as ``extract_claims_case.py`` does) and the runners
  file trimmed to their runner labels (also in the format InferenceX used
  before 2026-07-02, where every top-level key is a label);
- ``--path``: files, or directories with every file below them, as they are
  at each revision (launchers, recipes, ``benchmark_lib.sh``);
- ``--changelog-context N``: the changelog from N entries before its first
  changed line to its end, at both revisions (the lines before are the same
  bytes at both, so the gate sees the same edit);
- a revision that keeps its configs under ``.github/configs/`` gets a
  ``.ci-tools.yaml`` naming them there.

Files are written to ``head/`` (at ``COMMIT``), ``base/`` (at its parent) and
``common/`` (equal at both), which ``tests/fixture_trees.py`` turns into a
two-commit repository.  Before writing, that repository is checked and its
findings of the ``--rule`` rules must be the full repository's (config rules
compared by config key, changelog rules by line, shifted by the lines cut),
else the script stops with the difference and writes nothing.  It ends by
printing those findings' counts.
"""

from __future__ import annotations

import argparse
import collections
import fnmatch
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Mapping

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from extract_claims_case import (  # noqa: E402
    ExtractError,
    _block_end,
    _joined,
    _key_of,
    _lines,
    _top_level_starts,
    replay,
    trim_master,
    write_extract,
)

LEGACY = {"master": ".github/configs/*-master.yaml", "runners": ".github/configs/runners.yaml"}
LEGACY_CONFIG = (b"# InferenceX kept its configs under .github/configs/ until 2026-07-02\n"
                 b"master-configs: [.github/configs/*-master.yaml]\nrunners: .github/configs/runners.yaml\n")
CHANGELOG = "perf-changelog.yaml"
# (rule, config key, changelog line): how a finding is compared between the extract and the full repository.
Key = tuple[str, str, int]


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True).stdout


def show(root: Path, rev: str, path: str) -> bytes | None:
    done = subprocess.run(["git", "show", f"{rev}:{path}"], cwd=root, capture_output=True, check=False)
    return done.stdout if done.returncode == 0 else None


def files_below(root: Path, rev: str, path: str) -> list[str]:
    listed = git(root, "ls-tree", "-r", "--name-only", rev, "--", path)
    return [p for p in listed.splitlines() if p]


def legacy(root: Path, rev: str) -> bool:
    return not files_below(root, rev, "configs") and bool(files_below(root, rev, ".github/configs"))


def trim_legacy_runners(path: str, raw: bytes, labels: frozenset[str]) -> bytes:
    """A runners file of the format before 2026-07-02 (every top-level key a label) with only ``labels``."""
    lines = _lines(raw)
    starts = _top_level_starts(lines, 0, 1, len(lines))
    out: list[bytes] = []
    for n, start in enumerate(starts):
        if _key_of(lines[start - 1]) in labels:
            end = _block_end(lines, start, starts[n + 1] - 1 if n + 1 < len(starts) else len(lines))
            out.extend(lines[start - 1:end])
    trimmed = _joined(out)
    full = yaml.safe_load(raw)
    if yaml.safe_load(trimmed) != {k: v for k, v in full.items() if k in labels}:
        raise ExtractError(f"{path}: the labels {sorted(labels)} do not load to the same values once cut out")
    return trimmed


def configs_at(root: Path, rev: str, globs: list[str]) -> tuple[dict[str, bytes], frozenset[str]]:
    """The trimmed master files and runners file of ``rev`` (when ``globs`` keep any config), and the kept keys."""
    from extract_claims_case import trim_runners

    old = legacy(root, rev)
    pattern = LEGACY["master"] if old else "configs/*-master.yaml"
    runners_path = LEGACY["runners"] if old else "configs/runners.yaml"
    out: dict[str, bytes] = {}
    keys: set[str] = set()
    labels: set[str] = set()
    directory = pattern.rsplit("/", 1)[0]
    for path in files_below(root, rev, directory):
        if not fnmatch.fnmatchcase(path, pattern):
            continue
        raw = show(root, rev, path) or b""
        data = yaml.safe_load(raw) or {}
        kept = frozenset(k for k in data if any(fnmatch.fnmatchcase(str(k), g) for g in globs))
        trimmed = trim_master(path, raw, kept) if kept else None
        if trimmed is not None:
            out[path] = trimmed
            keys.update(kept)
            labels.update(str(data[k].get("runner")) for k in kept if isinstance(data[k], dict))
    raw_runners = show(root, rev, runners_path)
    if keys and raw_runners is not None:
        trim = trim_legacy_runners if old else trim_runners
        out[runners_path] = trim(runners_path, raw_runners, frozenset(labels))
    if old:
        out[".ci-tools.yaml"] = LEGACY_CONFIG
    return out, frozenset(keys)


def cut_changelog(base: bytes, head: bytes, context: int) -> tuple[bytes, bytes, int]:
    """Both changelogs from ``context`` entries before their first differing line on; the lines cut."""
    b, h = base.split(b"\n"), head.split(b"\n")
    first = next((i for i, (x, y) in enumerate(zip(b, h)) if x != y), min(len(b), len(h)))
    starts = [i for i in range(first) if b[i].startswith(b"- ")]
    cut = starts[-context] if len(starts) >= context and context > 0 else 0
    return b"\n".join(b[cut:]), b"\n".join(h[cut:]), cut


def check(root: Path, commit: str, config: Path | None) -> list[dict[str, Any]]:
    argv = [sys.executable, "-m", "ci_tools", "check", "--repo", str(root), "--base", f"{commit}^", "--head", commit,
            "--format", "json"]
    if config is not None:
        argv += ["--config", str(config)]
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    if done.returncode not in (0, 1):
        raise ExtractError(f"check of {commit} in {root} ended with {done.returncode}: {done.stderr[-800:]}")
    findings: list[dict[str, Any]] = json.loads(done.stdout)["findings"]
    return findings


def comparable(findings: list[dict[str, Any]], rules: list[str], keys: frozenset[str], cut: int) -> list[Key]:
    out: list[Key] = []
    for f in findings:
        if f["rule"] not in rules:
            continue
        data = f.get("data") or {}
        key = str(data.get("config_key") or data.get("key") or "")
        if f["path"] == CHANGELOG and not key:
            out.append((f["rule"], "", int(f["line"] or 0) - cut))
        elif key in keys or not keys:
            out.append((f["rule"], key, 0))
    return sorted(out)


def build(root: Path, commit: str, args: argparse.Namespace) -> tuple[dict[str, dict[str, bytes]], frozenset[str], int]:
    sides: dict[str, dict[str, bytes]] = {}
    keys: frozenset[str] = frozenset()
    for side, rev in (("head", commit), ("base", f"{commit}^")):
        files, kept = configs_at(root, rev, args.keys) if args.keys else ({}, frozenset())
        keys |= kept
        for path in args.path:
            for found in files_below(root, rev, path):
                data = show(root, rev, found)
                if data is not None:
                    files[found] = data
        sides[side] = files
    cut = 0
    if args.changelog_context is not None:
        base, head = show(root, f"{commit}^", CHANGELOG) or b"", show(root, commit, CHANGELOG) or b""
        sides["base"][CHANGELOG], sides["head"][CHANGELOG], cut = cut_changelog(base, head, args.changelog_context)
    common = {p: d for p, d in sides["head"].items() if sides["base"].get(p) == d}
    parts = {"common": common, "head": {p: d for p, d in sides["head"].items() if p not in common},
             "base": {p: d for p, d in sides["base"].items() if p not in common}}
    return parts, keys, cut


def verify(root: Path, commit: str, parts: Mapping[str, Mapping[str, bytes]], keys: frozenset[str], cut: int,
           rules: list[str]) -> list[Key]:
    config = None
    with tempfile.TemporaryDirectory(prefix="check-case-") as tmp:
        if legacy(root, commit):
            config = Path(tmp) / "legacy.ci-tools.yaml"
            config.write_bytes(LEGACY_CONFIG)
        full = comparable(check(root, commit, config), rules, keys, cut)
        extract_root = Path(tmp) / "extract"
        extract_root.mkdir()
        replay(parts, extract_root)
        found = comparable(check(extract_root, "HEAD", None), rules, keys, 0)
    if full != found:
        only_full = collections.Counter(full) - collections.Counter(found)
        only_extract = collections.Counter(found) - collections.Counter(full)
        raise ExtractError(f"the extract is checked differently:\n  only on the full repository: {sorted(only_full)}"
                           f"\n  only on the extract: {sorted(only_extract)}")
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("ix", type=Path)
    parser.add_argument("commit")
    parser.add_argument("out", type=Path)
    parser.add_argument("--rule", action="append", required=True, help="a rule whose findings the case keeps")
    parser.add_argument("--keys", nargs="*", default=[], help="config-key globs of the configs to keep")
    parser.add_argument("--path", nargs="*", default=[], help="files or directories to keep, at both revisions")
    parser.add_argument("--changelog-context", type=int, default=None, help="entries kept before the first change")
    args = parser.parse_args(argv)
    root = args.ix.resolve()
    commit = git(root, "rev-parse", args.commit).strip()
    try:
        parts, keys, cut = build(root, commit, args)
        found = verify(root, commit, parts, keys, cut, args.rule)
        summary = write_extract(parts, args.out, args.out.parent)
    except ExtractError as exc:
        print(f"extract_check_case: {exc}", file=sys.stderr)
        return 1
    print("\n".join(summary))
    counts = collections.Counter(rule for rule, _, _ in found)
    print(f"{commit[:12]}: " + (", ".join(f"{n} {rule}" for rule, n in sorted(counts.items())) or "no findings of "
                                + ", ".join(args.rule)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
