"""The commit-message bench (bench/bench_claims_messages.py) on the real tree: a commit's message is checked as its
PR description, and the findings that count are the message's own, once per line text, subject and value."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from test_claims_seed import git

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
import bench_claims_messages as messages  # noqa: E402

# dsr1-fp8-b200-sglang's recipe passes --attention-backend trtllm_mla and --mem-fraction-static 0.82 on TP8.
ENTRY = """
- config-keys:
    - dsr1-fp8-b200-sglang
  description:
    - "Use --attention-backend flashinfer on TP8."
  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/99999
"""
MESSAGE = """Retune DSR1 FP8 B200 SGLang (#99999)

* Use --attention-backend flashinfer on TP8.

* Set --mem-fraction-static to 0.5 on TP8.

* Set --mem-fraction-static to 0.5 on TP8.

* Keep --chunked-prefill-size as it was.
"""


@pytest.fixture
def repo(real_repo: Path) -> Path:
    changelog = real_repo / "perf-changelog.yaml"
    changelog.write_text(changelog.read_text(encoding="utf-8") + ENTRY, encoding="utf-8")
    git(real_repo, "commit", "-q", "-am", MESSAGE)
    return real_repo


def test_a_commit_message_is_checked_as_its_pr_description(repo: Path) -> None:
    rows = messages.replay(repo, since="HEAD~1")
    described = [(r["line"], r["data"]["subject"]) for r in rows if r["path"] == messages.DESCRIPTION]
    # the message's lines as written (git keeps them): its title is line 1
    assert sorted(described) == [(3, "--attention-backend"), (5, "--mem-fraction-static"),
                                 (7, "--mem-fraction-static")]
    entries = [(r["path"], r["data"]["subject"]) for r in rows if r["path"] != messages.DESCRIPTION
               and r["rule"] in messages.SCORED_RULES]
    assert entries == [("perf-changelog.yaml", "--attention-backend")]
    # What counts: the message's own findings (the backend repeats the entry's), a line's text once.
    own = messages.scored(rows, repo, {})
    assert [(r["data"]["subject"], r["sentence"]) for r in own] == [
        ("--mem-fraction-static", "* Set --mem-fraction-static to 0.5 on TP8.")]
    assert own[0]["severity"] == "warning"  # a description's contradicted claim warns


def test_the_judged_file_holds_the_fields_a_verdict_needs() -> None:
    judged = messages.Judged.load()
    assert judged.records, "tests/data/ix-judged-history/messages.yaml holds the verdicts"
    blind = [r for r in judged.records.values() if r["sample"] == "blind"]
    assert blind and all(messages.part_of(str(r["commit"])) == "held-back" for r in blind)
    assert all(r["part"] == messages.part_of(str(r["commit"])) for r in judged.records.values())
