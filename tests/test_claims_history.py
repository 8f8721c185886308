"""``claims --history``: each appended entry checked at the commit that appended it."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import pytest

from ci_tools.claims.verdict.history import added_in
from ci_tools.findings import Finding
from fixture_trees import copy_tree
from test_claims_seed import DATA, git, run_claims

ENTRY = """
- config-keys:
    - dsv4-fp4-mi355x-atom-agentic-mtp
  scenario-type:
    - agentic-coding
  description:
    - "{text}"
  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/{n}
"""


def append(repo: Path, text: str, n: int) -> None:
    with (repo / "perf-changelog.yaml").open("a", encoding="utf-8") as fh:
        fh.write(ENTRY.format(text=text, n=n))


def commit(repo: Path, message: str) -> str:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


def history_repo(tmp_path: Path) -> tuple[Path, list[str]]:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    copy_tree(DATA / "common", repo)
    copy_tree(DATA / "base", repo)
    shas = [commit(repo, "base")]
    append(repo, "Keep max-num-seqs at twice the concurrency.", 10)
    shas.append(commit(repo, "true claim at the base revision"))
    # The seed change: recipe, config and an entry with two false claims.
    before = (repo / "perf-changelog.yaml").read_text(encoding="utf-8")
    copy_tree(DATA / "head", repo)
    seed_entry = (DATA / "head" / "perf-changelog.yaml").read_text(encoding="utf-8")[len(
        (DATA / "base" / "perf-changelog.yaml").read_text(encoding="utf-8")):]
    (repo / "perf-changelog.yaml").write_text(before + seed_entry, encoding="utf-8")
    append(repo, "Keep max-num-seqs at twice the concurrency on DEP.", 11)
    shas.append(commit(repo, "seed change"))
    (repo / "README.md").write_text("docs only\n", encoding="utf-8")
    shas.append(commit(repo, "a commit that does not touch the changelog"))
    append(repo, "Keep the state checkpoint interval at 8192 tokens on DEP.", 12)
    shas.append(commit(repo, "true claim at the head"))
    return repo, shas


def test_history_reports_each_false_claim_at_the_commit_that_added_it(tmp_path: Path) -> None:
    repo, shas = history_repo(tmp_path)
    code, report = run_claims(repo, "--history", "--select", "claim-contradicted")
    assert code == 1
    got = [(f["line"], f["data"]["subject"], f["data"]["commit"]) for f in report["findings"]]
    assert got == [
        (25, "ATOM_DP_LB_REQ_EQUIV", shas[2]),
        (25, "--state-checkpoint-interval-tokens", shas[2]),
    ]
    assert report["findings"][0]["message"].endswith(f"[at {shas[2][:12]}]")


def test_history_since_skips_older_commits(tmp_path: Path) -> None:
    repo, shas = history_repo(tmp_path)
    code, report = run_claims(repo, "--history", "--since", shas[2], "--select", "claim-contradicted")
    assert (code, report["findings"]) == (0, [])
    code, report = run_claims(repo, "--history", "--since", shas[1], "--select", "claim-contradicted")
    assert code == 1 and len(report["findings"]) == 2


def test_a_pull_request_is_replayed_against_its_merge_base(tmp_path: Path) -> None:
    """(head, base) pairs: a pull request's head is checked for the entries it appends over the base it was
    branched from, however far the default branch has moved since."""
    from ci_tools.claims.verdict.history import replay_pairs
    from ci_tools.config import load_config

    repo, shas = history_repo(tmp_path)
    config = load_config(repo)
    found = replay_pairs(config, [(shas[2], shas[0]), (shas[4], shas[2])])
    contradicted = [(f.location.line, f.data["subject"], f.data["commit"]) for f in found
                    if f.rule == "claim-contradicted"]
    assert contradicted == [(25, "ATOM_DP_LB_REQ_EQUIV", shas[2]),
                            (25, "--state-checkpoint-interval-tokens", shas[2])]
    # The same head against a base that already holds the seed entry: nothing of it is appended there.
    assert not [f for f in replay_pairs(config, [(shas[2], shas[2])]) if f.rule == "claim-contradicted"]


def test_added_entries_are_parsed_alone_with_head_positions() -> None:
    base = (DATA / "base" / "perf-changelog.yaml").read_bytes()
    head = (DATA / "head" / "perf-changelog.yaml").read_bytes()
    entries = added_in("perf-changelog.yaml", base, head)
    assert len(entries) == 1
    entry = entries[0]
    assert entry.patterns == ["dsv4-fp4-mi355x-atom-agentic-mtp"]
    assert entry.location.line == 10
    assert [d.positions[0] for d in entry.descriptions] == [(15, 8), (16, 8), (17, 8), (18, 8)]
    assert added_in("perf-changelog.yaml", head, head) == []


def test_history_in_worker_processes_gives_the_same_findings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Chunks of commits replayed in forked workers (whose caches die with them) change nothing found."""
    from ci_tools.claims.verdict import history
    from ci_tools.config import load_config

    repo, _ = history_repo(tmp_path)
    config = load_config(repo)

    def brief() -> list[tuple[str, int, str]]:
        return [(f.rule, f.location.line, f.message) for f in history.replay_history(config, since=None)]

    monkeypatch.setattr(history, "CHUNK", 100)
    in_process = brief()
    monkeypatch.setattr(history, "CHUNK", 2)
    assert brief() == in_process  # one worker takes every commit: its peak memory stays within the budget
    monkeypatch.setattr(history, "WORKER_MEMORY_MIB", 0)
    assert brief() == in_process  # a worker per commit: each takes one, however far past the budget it starts
    assert any(rule == "claim-contradicted" for rule, _, _ in in_process)


def test_a_history_worker_takes_commits_until_its_memory_passes_the_budget(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """The workers share the commits out by memory, not by count: each takes at least one, and stops at the
    first commit after its peak passed the budget."""
    from ci_tools.claims.verdict import history
    from ci_tools.config import load_config

    repo, _ = history_repo(tmp_path)
    config = load_config(repo)
    commits = history.changelog_commits(config, None, "HEAD")
    assert len(commits) >= 3
    taken: list[int] = []
    real = history._in_worker

    def counted(work: Callable[[], tuple[list[Finding], int]]) -> tuple[tuple[list[Finding], int], list[str]]:
        (found, done), loaded = real(work)
        taken.append(done)  # as the worker said, in this process
        return (found, done), loaded

    monkeypatch.setattr(history, "_in_worker", counted)
    monkeypatch.setattr(history, "CHUNK", 1)
    monkeypatch.setattr(history, "WORKER_MEMORY_MIB", 0)
    history.replay_history(config, since=None)
    assert taken == [1] * len(commits)
    taken.clear()
    monkeypatch.setattr(history, "WORKER_MEMORY_MIB", history.peak_memory_mib() + 1024)
    history.replay_history(config, since=None)
    assert taken == [len(commits)]


def test_an_error_in_a_history_worker_reaches_the_caller() -> None:
    from ci_tools.claims.verdict.history import _in_worker
    from ci_tools.errors import UsageError

    def fails() -> list[Finding]:
        raise UsageError("bad revision")

    with pytest.raises(UsageError, match="bad revision"):
        _in_worker(fails)


def test_the_modules_a_history_worker_imported_are_imported_for_the_next_one() -> None:
    """A worker says which ci_tools modules it imported; the parent imports them once, so the next fork has them."""
    import sys

    from ci_tools.claims.verdict.history import _in_worker, _load_here
    from ci_tools.findings import Location, Severity

    name = "ci_tools.report.rule_docs"
    kept = sys.modules.pop(name, None)
    try:
        def imports() -> list[Finding]:
            __import__(name)
            return [Finding("r", Severity.ERROR, "found in the worker", Location("f", 1))]

        found, loaded = _in_worker(imports)
        assert [f.message for f in found] == ["found in the worker"] and name in loaded
        assert name not in sys.modules  # the worker's import stayed in the worker
        _load_here([*loaded, "ci_tools.no_such_module"])  # one that cannot load is passed over
        assert name in sys.modules
    finally:
        if kept is not None:
            sys.modules[name] = kept
