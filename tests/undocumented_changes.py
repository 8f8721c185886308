"""The undocumented-change warnings of an edit to a copy of the real tree, under one appended entry (shared by the
tests of claims/verdict/undocumented.py)."""

from __future__ import annotations

from pathlib import Path

from fuzzing import git
from test_claims_seed import run_claims


def undocumented_after(repo: Path, key: str, description: str) -> list[str]:
    """Messages of ``claim-undocumented-change`` once an entry naming ``key`` with ``description`` is appended and
    the edits already made in ``repo`` are committed, checked against the revision ``base``."""
    with (repo / "perf-changelog.yaml").open("a", encoding="utf-8") as log:
        log.write(f"\n- config-keys:\n    - {key}\n  description:\n    - \"{description}\"\n"
                  "  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/9999\n")
    git(repo, "commit", "-q", "-am", "head")
    _, report = run_claims(repo, "--base", "base", "--head", "HEAD")
    return [f["message"] for f in report["findings"] if f["rule"] == "claim-undocumented-change"]
