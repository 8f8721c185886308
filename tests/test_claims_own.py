"""The repository's own changelog makes only true claims about its own configs and recipes."""

from __future__ import annotations

from pathlib import Path

from ci_tools.claims.verdict.check import check_entries, entry_inputs
from ci_tools.config import load_config
from ci_tools.model.repository import load_repo
from ci_tools.revision.snapshot import WorkTreeSnapshot

ROOT = Path(__file__).resolve().parent.parent


def test_every_entry_of_the_repository_changelog_holds() -> None:
    config = load_config(ROOT)
    snapshot = WorkTreeSnapshot(config.root)
    repo = load_repo(snapshot, config)
    assert repo.changelog is not None and repo.changelog.yaml is not None
    entries = entry_inputs(config.changelog, repo.changelog.yaml.text, repo.changelog.value)
    report = check_entries(config, repo, snapshot, entries)
    assert [f.message for f in report.findings] == []
    # Not silent by accident: the DSV4 AgentX entries' recipe claims are read and hold.
    subjects = {c.subject.name for c in report.claims if c.subject is not None}
    assert {"--state-checkpoint-interval-tokens", "--max-num-seqs", "ATOM_DP_LB_REQ_EQUIV", "--enable-tbo",
            "--synthetic-acceptance-length"} <= subjects
