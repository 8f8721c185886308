"""The pull-request bench's parts (bench/bench_claims_prs.py): the heads of pull requests as proposed, and with
``--drafts`` the earlier commits of their branches, whose text neither the default branch nor a head ever held."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
import bench_claims_prs as prs  # noqa: E402

ENTRY = '- config-keys:\n    - dsr1-fp8-b200-sglang\n  description:\n    - "{text}"\n  pr-link: https://x/pull/{n}\n'


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), "-c", "user.email=t@t", "-c", "user.name=t", *args],
                          capture_output=True, text=True, check=True).stdout.strip()


def commit(repo: Path, text: str) -> str:
    (repo / "perf-changelog.yaml").write_text(text, encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "c")
    return git(repo, "rev-parse", "HEAD")


def new_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "ix"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    return repo


def test_drafts_are_the_earlier_commits_whose_lines_no_head_and_no_default_branch_held(tmp_path: Path) -> None:
    repo = new_repo(tmp_path)
    start = ENTRY.format(text="The first entry of the changelog, on the default branch.", n=1)
    base = commit(repo, start)
    # A branch whose first draft is rewritten before its head, then squash-merged: its head's text reached main.
    git(repo, "checkout", "-qb", "feature")
    draft = commit(repo, start + ENTRY.format(text="Raise the memory fraction to 0.9 on every TP8 row.", n=2))
    head = commit(repo, start + ENTRY.format(text="Raise the memory fraction to 0.88 on every TP8 row.", n=2))
    git(repo, "update-ref", "refs/pull/2/head", head)
    git(repo, "checkout", "-q", "main")
    commit(repo, start + ENTRY.format(text="Raise the memory fraction to 0.88 on every TP8 row.", n=2))
    main = git(repo, "rev-parse", "HEAD")

    heads, seen = prs.proposals(repo, main)
    assert heads == []  # every line of the head stood on the default branch
    heads, seen = prs.proposals(repo, main, every=True)
    assert [(p.number, p.head, p.base) for p in heads] == [(2, head, base)]
    drafts, seen = prs.earlier_drafts(repo, heads, seen)
    assert [(p.number, p.head, p.base, p.unseen) for p in drafts] == [(2, draft, base, 1)]
    assert "- \"Raise the memory fraction to 0.88 on every TP8 row.\"" in seen
    assert "- \"Raise the memory fraction to 0.9 on every TP8 row.\"" not in seen


def test_a_finding_a_branch_repeats_commit_after_commit_counts_once(tmp_path: Path) -> None:
    repo = new_repo(tmp_path)
    text = ENTRY.format(text="Raise the memory fraction to 0.9.", n=3)
    first = commit(repo, text)
    second = commit(repo, text + "\n")
    line = text.splitlines().index('    - "Raise the memory fraction to 0.9."') + 1
    rows = [{"pr": 3, "line": line, "data": {"commit": c, "subject": "--mem-fraction-static", "claimed": "0.9"}}
            for c in (first, second)]
    other = {"pr": 3, "line": line, "data": {"commit": first, "subject": "--mem-fraction-static", "claimed": "0.8"}}
    kept = prs._once_per_pull_request([*rows, other], repo, {})
    assert len(kept) == 2 and other in kept
    assert min(rows, key=prs.sample_order) in kept  # the one first in the fixed order stands for both


def test_branches_no_pull_request_held_give_only_their_own_never_held_lines(tmp_path: Path) -> None:
    repo = new_repo(tmp_path)
    start = ENTRY.format(text="The first entry of the changelog, on the default branch.", n=1)
    base = commit(repo, start)
    # A proposed branch: its draft's line is a pull request's, wherever else it is pushed.
    git(repo, "checkout", "-qb", "proposed")
    proposed = commit(repo, start + ENTRY.format(text="Raise the memory fraction to 0.9 on every TP8 row.", n=2))
    git(repo, "update-ref", "refs/pull/2/head", proposed)
    # A branch pushed and never proposed, built on the proposed one: one line of its own, one the PR held.
    git(repo, "checkout", "-qb", "unproposed")
    own = commit(repo, start + ENTRY.format(text="Raise the memory fraction to 0.9 on every TP8 row.", n=2)
                 + ENTRY.format(text="Lower the chunked prefill size to 8192 on TP4.", n=2))
    git(repo, "checkout", "-q", "main")
    main = git(repo, "rev-parse", "HEAD")

    found, held = prs.unproposed_branches(repo, main, prs.main_lines(repo, main))
    assert [(p.number, p.head, p.base, p.unseen) for p in found] == [(0, own, base, 1)]
    assert "- \"Raise the memory fraction to 0.9 on every TP8 row.\"" in held  # the pull request's commit held it
    assert "- \"Lower the chunked prefill size to 8192 on TP4.\"" not in held


def test_forks_give_only_lines_neither_the_repository_nor_its_pull_requests_held(tmp_path: Path) -> None:
    repo = new_repo(tmp_path)
    start = ENTRY.format(text="The first entry of the changelog, on the default branch.", n=1)
    base = commit(repo, start)
    git(repo, "checkout", "-qb", "proposed")
    proposed_line = ENTRY.format(text="Raise the memory fraction to 0.9 on every TP8 row.", n=2)
    git(repo, "update-ref", "refs/pull/2/head", commit(repo, start + proposed_line))
    git(repo, "checkout", "-qb", "own", "main")
    own_line = ENTRY.format(text="Lower the chunked prefill size to 8192 on TP4.", n=2)
    commit(repo, start + own_line)
    # A fork's branch: built on the repository's own branch, it repeats the pull request's line and adds one.
    fork_line = ENTRY.format(text="Update the image to nightly-20260520 for every job.", n=2)
    fork = commit(repo, start + own_line + proposed_line + fork_line)
    git(repo, "update-ref", "refs/forks/someone/feature", fork)
    git(repo, "reset", "-q", "--hard", "HEAD~1")  # the repository's own branch does not hold the fork's commit
    git(repo, "checkout", "-q", "main")
    main = git(repo, "rev-parse", "HEAD")

    found, held = prs.fork_commits(repo, main, prs.main_lines(repo, main))
    assert [(p.number, p.head, p.base, p.unseen) for p in found] == [(0, fork, base, 1)]
    assert "- \"Lower the chunked prefill size to 8192 on TP4.\"" in held  # the repository's own branch held it
    assert "- \"Raise the memory fraction to 0.9 on every TP8 row.\"" in held  # and the pull request's commit
    assert "- \"Update the image to nightly-20260520 for every job.\"" not in held
    # The repository's own branches are no fork's: --branches finds the own branch's line only.
    own, _ = prs.unproposed_branches(repo, main, prs.main_lines(repo, main))
    assert [p.unseen for p in own] == [1] and own[0].head != fork


def test_forks_without_fork_refs_say_how_to_bring_them_in(tmp_path: Path) -> None:
    repo = new_repo(tmp_path)
    main = commit(repo, ENTRY.format(text="The first entry of the changelog, on the default branch.", n=1))
    try:
        prs.fork_commits(repo, main, set())
    except SystemExit as exc:
        assert "refs/forks" in str(exc) and "fetch" in str(exc)
    else:
        raise AssertionError("no refs/forks/* must stop the bench with how to fetch them")


def test_each_proposal_is_counted_by_what_its_check_would_have_told_its_author() -> None:
    def pair(pr: int, severity: str, disagreement: str, commit: str = "c") -> tuple[dict[str, Any], dict[str, Any]]:
        return {"pr": pr, "severity": severity, "data": {"commit": commit}}, {"disagreement": disagreement}

    outcome = prs.per_proposal([
        pair(1, "error", "none"), pair(1, "error", "all"),  # a true error among false ones: a real failure
        pair(2, "error", "none"), pair(2, "warning", "all"),  # failed by a false error alone
        pair(3, "warning", "none"), pair(3, "warning", "some"),  # warned, truly
        pair(4, "warning", "none"),
        pair(0, "error", "none", "aaa"), pair(0, "error", "all", "bbb"),  # commits no pull request holds: each its own
    ])
    assert outcome == {"a true error": 2, "only false errors": 2, "a true warning": 1, "only false warnings": 1}


def test_findings_are_counted_by_the_kind_of_disagreement_their_rule_and_message_state() -> None:
    """The kinds the bench splits precision by, from the claims checker's own message forms (the rule alone
    does not tell a sweep size from a value)."""
    kinds = {
        "changelog says TP4 runs concurrency 8 (perf-changelog.yaml:12), but no job is TP4 (the jobs run TP8/EP1)":
            "arm missing",
        "changelog says --max-num-batched-tokens is 8192 (x:1), but the recipe does not pass "
        "--max-num-batched-tokens for all 4 jobs of k": "setting missing",
        "changelog says X is 1 (x:1), but the recipe never sets X for all 2 jobs of k": "setting missing",
        "changelog says no TP8 job runs (x:1), but the config runs TP8 (TP8/EP1) at concurrency 1": "arm present",
        "changelog says the sweep has 3 topologies (x:1), but the config generates 4 jobs (c:1)": "sweep size",
        "changelog says DEP8 runs concurrency 64 (x:1), but the config generates concurrency 32/48": "concurrencies",
        "changelog says --max-num-seqs is 256 (x:1), but the recipe passes --max-num-seqs 128 (r:3)": "value",
    }
    assert {message: prs.finding_kind(message) for message in kinds} == kinds
