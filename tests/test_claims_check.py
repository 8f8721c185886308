"""check_entries with an injected evaluator: failures of the evaluator leave claims unverified."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ci_tools.claims.verdict.check import EntryInput, EvalCache, check_entries, entry_inputs
from ci_tools.config import ProjectConfig, load_config
from ci_tools.model.repository import RepoData, load_repo
from ci_tools.revision.snapshot import WorkTreeSnapshot
from fixture_trees import copy_tree
from test_claims_seed import DATA


def head_repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    copy_tree(DATA / "common", root)
    copy_tree(DATA / "head", root)
    return root


def seed_head_last_entry(tmp_path: Path) -> tuple[ProjectConfig, RepoData, WorkTreeSnapshot, list[EntryInput]]:
    """The seed PR's head in a work tree, loaded, with its last changelog entry as the one to check."""
    root = head_repo(tmp_path)
    config = load_config(root)
    snapshot = WorkTreeSnapshot(config.root)
    repo = load_repo(snapshot, config)
    assert repo.changelog is not None and repo.changelog.yaml is not None
    entries = entry_inputs(config.changelog, repo.changelog.yaml.text, repo.changelog.value)[-1:]
    return config, repo, snapshot, entries


def test_an_evaluator_that_raises_gives_a_note_not_a_crash(tmp_path: Path) -> None:
    config, repo, snapshot, entries = seed_head_last_entry(tmp_path)

    def broken(*_: Any) -> None:
        raise RuntimeError("unsupported construct")

    report = check_entries(config, repo, snapshot, entries, cache=EvalCache(config, broken))
    # Config-field claims still hold; recipe claims cannot be judged, and the report says so.
    assert [(f.rule, f.severity.value) for f in report.findings] == [("claim-not-checked", "note")]
    assert "evaluation failed: RuntimeError: unsupported construct" in report.findings[0].message
    assert any(u.reason == "no job in scope has a known value" for u in report.unverified)


def test_the_real_evaluator_finds_the_two_seed_errors_in_process(tmp_path: Path) -> None:
    config, repo, snapshot, entries = seed_head_last_entry(tmp_path)
    report = check_entries(config, repo, snapshot, entries)
    assert sorted(f.data["subject"] for f in report.findings) == [
        "--state-checkpoint-interval-tokens", "ATOM_DP_LB_REQ_EQUIV"]
