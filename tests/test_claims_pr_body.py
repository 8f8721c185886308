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
    # A description's claim warns: it does not fail the check (README "Claims": about one in ten is true).
    line = len(BODY.read_text(encoding="utf-8").splitlines()) + 2
    assert code == 0 and [(f["rule"], f["severity"], f["line"], f["data"]["claimed"]) for f in found] == [
        ("claim-contradicted", "warning", line, "flashinfer")]
    # A repository that wants them to fail its pull requests says so.
    config = repo / ".ci-tools.yaml"
    config.write_text(config.read_text(encoding="utf-8") + "severity:\n  claim-contradicted: error\n"
                      if config.exists() else "severity:\n  claim-contradicted: error\n", encoding="utf-8")
    code, report = run_claims(repo, "--base", "HEAD~1", "--head", "HEAD", "--pr-body", str(body))
    assert code == 1 and [(f["severity"], f["line"]) for f in errors_and_warnings(report)] == [("error", line)]


def _found(repo: Path, tmp_path: Path, text: str, *extra: str) -> list[tuple[str, int, str]]:
    body = tmp_path / "body.md"
    body.write_text(text, encoding="utf-8")
    _, report = run_claims(repo, "--base", "HEAD~1", "--head", "HEAD", "--pr-body", str(body), *extra)
    return [(f["rule"], f["line"], str(f["data"].get("claimed", f["data"].get("phrase", ""))))
            for f in report["findings"] if f["severity"] in ("error", "warning")]


# A squash merge's message, as a description written while the change was: its title and first item say what
# was tried first, a later item what the head holds (the recipe passes --attention-backend trtllm_mla).
STORY = """Use flashinfer attention on DSR1 FP8 B200 SGLang (#99999)

* Use --attention-backend flashinfer on TP8.

* Revert the --attention-backend change: keep trtllm_mla.
"""


def test_a_setting_a_later_item_of_the_description_speaks_of_again_is_a_step_of_its_story(
        repo: Path, tmp_path: Path) -> None:
    assert _found(repo, tmp_path, STORY) == []
    # Said with -v where it was left: the item that spoke of it again.
    body = tmp_path / "body.md"
    _, report = run_claims(repo, "--base", "HEAD~1", "--head", "HEAD", "--pr-body", str(body), "-v")
    again = [f for f in report["findings"] if "later part of the PR description speaks of it again" in f["message"]]
    assert [(f["line"], f["message"].rsplit("/", 1)[-1]) for f in again] == [(3, "body.md:5)")]


def test_the_last_word_of_the_description_about_a_setting_is_still_checked(repo: Path, tmp_path: Path) -> None:
    # A story whose last item is false of the head: an earlier mention does not hide it.
    told = STORY.replace("Use --attention-backend flashinfer on TP8", "Compare --attention-backend choices on TP8") \
        .replace("Revert the --attention-backend change: keep trtllm_mla", "Use --attention-backend flashinfer on TP8")
    assert _found(repo, tmp_path, told) == [("claim-contradicted", 5, "flashinfer")]
    # A later item about another setting leaves the claim as it was.
    other = STORY.replace("Revert the --attention-backend change: keep trtllm_mla.", "Keep --mem-fraction-static.")
    assert _found(repo, tmp_path, other) == [("claim-contradicted", 3, "flashinfer")]


@pytest.mark.parametrize("sentence", [
    "Raising --attention-backend to flashinfer wasn't enough on TP8.",  # tokens "wasn t": a report of a failure
    "Setting --attention-backend flashinfer on TP8 didn’t help.",  # a typographic apostrophe
    "The prior recipe used --attention-backend flashinfer on TP8.",  # what the old recipe did
    "The previous launch_flags passed --attention-backend flashinfer on TP8.",
])
def test_a_failed_attempt_or_the_old_recipe_claims_nothing(repo: Path, tmp_path: Path, sentence: str) -> None:
    assert _found(repo, tmp_path, sentence + "\n") == []
    # The same words stated of the new state are read.
    stated = "Use --attention-backend flashinfer on TP8.\n"
    assert _found(repo, tmp_path, stated) == [("claim-contradicted", 1, "flashinfer")]


def test_points_a_later_item_drops_are_a_step_of_the_story(repo: Path, tmp_path: Path) -> None:
    # dsr1-fp8-b200-sglang runs no conc 2048 (its points stop at 512 or below): a first item that sweeps it, a later
    # one that drops it again (fbb480e5f1: "expand ... through concurrency 196", then "drop c128, c160 and c196").
    story = "Retune (#99999)\n\n* Extend the TP8 sweep through conc 2048.\n\n* Drop c2048 from the TP8 sweep.\n"
    assert _found(repo, tmp_path, story) == []
    assert _found(repo, tmp_path, story.replace("Drop c2048", "Drop c1")) != []
