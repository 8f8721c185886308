"""``validate``: every finding about the repository's data at one revision."""

from __future__ import annotations

from .findings import Finding
from .model.repository import RepoData


def validate(repo: RepoData) -> list[Finding]:
    findings = list(repo.problems)
    return findings
