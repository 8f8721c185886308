"""A PR description as people write it, on the real tree: Markdown with a table, a checklist, a fenced command line,
a "Before:/After:" pair and a reference to another PR (tests/data/pr_body_markdown.md, written for this test about
dsr1-fp8-b200-sglang, whose recipe passes --mem-fraction-static 0.82 on TP8 and 0.95 on TP4 and
--attention-backend trtllm_mla).  Its old command line, its "Before:" values and what the other PR set had each been
an error before the description was read as Markdown prose: none is a claim of this change."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from real_repo_support import real_origin, real_repo  # noqa: F401 - fixtures
from test_claims_seed import git, run_claims

BODY = Path(__file__).parent / "data" / "pr_body_markdown.md"
ENTRY = """
- config-keys:
    - dsr1-fp8-b200-sglang
  description:
    - "Retune DSR1 FP8 B200 SGLang memory settings"
  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/99999
"""


@pytest.fixture
def repo(real_repo: Path) -> Path:
    """The real tree with one entry about dsr1-fp8-b200-sglang appended in a commit of its own."""
    changelog = real_repo / "perf-changelog.yaml"
    changelog.write_text(changelog.read_text(encoding="utf-8") + ENTRY, encoding="utf-8")
    git(real_repo, "commit", "-q", "-am", "entry")
    return real_repo


def errors_and_warnings(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [f for f in report["findings"] if f["severity"] in ("error", "warning")]


def test_a_markdown_description_s_code_before_labels_and_other_pr_claim_nothing(repo: Path, tmp_path: Path) -> None:
    body = tmp_path / "body.md"
    shutil.copyfile(BODY, body)
    code, report = run_claims(repo, "--base", "HEAD~1", "--head", "HEAD", "--pr-body", str(body))
    assert (code, errors_and_warnings(report)) == (0, [])


def test_its_prose_is_still_checked(repo: Path, tmp_path: Path) -> None:
    body = tmp_path / "body.md"
    body.write_text(BODY.read_text(encoding="utf-8") + "\nUse --attention-backend flashinfer on TP8.\n",
                    encoding="utf-8")
    code, report = run_claims(repo, "--base", "HEAD~1", "--head", "HEAD", "--pr-body", str(body))
    found = errors_and_warnings(report)
    assert code == 1 and [(f["rule"], f["line"], f["data"]["claimed"]) for f in found] == [
        ("claim-contradicted", len(BODY.read_text(encoding="utf-8").splitlines()) + 2, "flashinfer")]
