"""``claims`` is never silently green: unreadable configs and unevaluated entries are said."""

from __future__ import annotations

from pathlib import Path

import pytest

from test_claims_history import append, commit, history_repo
from test_claims_seed import run_claims


def break_master(repo: Path) -> None:
    master = repo / "configs" / "amd-master.yaml"
    master.write_text(master.read_text(encoding="utf-8") + "broken: [unclosed\n", encoding="utf-8")


def test_a_master_file_that_does_not_parse_is_reported_by_claims(tmp_path: Path) -> None:
    repo, shas = history_repo(tmp_path)
    break_master(repo)
    append(repo, "Keep max-num-seqs at twice the concurrency on the TP band.", 20)
    head = commit(repo, "broken master file and a new entry")
    code, report = run_claims(repo, "--base", shas[-1], "--head", head)
    assert code == 1
    syntax = [f for f in report["findings"] if f["rule"] == "yaml-syntax"]
    assert [(f["path"], f["severity"]) for f in syntax] == [("configs/amd-master.yaml", "error")]
    # Nothing in scope could be evaluated either, and that is said too.
    assert [f["rule"] for f in report["findings"] if f["rule"] == "claim-not-checked"] == ["claim-not-checked"]


def test_history_reports_a_master_file_broken_at_the_commit_that_added_an_entry(tmp_path: Path) -> None:
    repo, shas = history_repo(tmp_path)
    break_master(repo)
    append(repo, "Keep max-num-seqs at twice the concurrency on the TP band.", 20)
    head = commit(repo, "broken master file and a new entry")
    code, report = run_claims(repo, "--history", "--since", shas[-1])
    assert code == 1
    found = [(f["rule"], f["path"], f["data"]["commit"]) for f in report["findings"] if f["severity"] == "error"]
    assert found == [("yaml-syntax", "configs/amd-master.yaml", head)]


def test_an_entry_about_a_config_whose_recipe_is_gone_is_not_checked_and_says_so(tmp_path: Path) -> None:
    repo, shas = history_repo(tmp_path)
    (repo / "benchmarks/single_node/agentic/dsv4_fp4_mi355x_atom_mtp.sh").unlink()
    append(repo, "Set the state checkpoint interval to 32768 tokens on DEP.", 21)
    head = commit(repo, "recipe deleted")
    code, report = run_claims(repo, "--base", shas[-1], "--head", head)
    assert code == 0
    notes = [f for f in report["findings"] if f["rule"] == "claim-not-checked"]
    assert len(notes) == 1 and notes[0]["severity"] == "note"
    assert "has a recipe in the repository" in notes[0]["message"]
    assert not [f for f in report["findings"] if f["rule"].startswith("claim-") and f["severity"] == "error"]


def test_history_reads_configs_where_an_old_revision_kept_them(tmp_path: Path) -> None:
    """InferenceX kept configs under .github/configs/ until 2026-07-02; a replay across the move reads both."""
    repo, shas = history_repo(tmp_path)
    from test_claims_seed import git

    (repo / ".github").mkdir()
    git(repo, "mv", "configs", ".github/configs")
    append(repo, "Set the state checkpoint interval to 32768 tokens on DEP.", 22)
    old = commit(repo, "an entry while the configs lived under .github/")
    git(repo, "mv", ".github/configs", "configs")
    append(repo, "Keep max-num-seqs at twice the concurrency on the TP band.", 23)
    commit(repo, "configs moved to the root")
    code, report = run_claims(repo, "--history", "--since", shas[-1])
    assert [f["rule"] for f in report["findings"] if f["rule"] in ("file-missing", "yaml-syntax")] == []
    found = [(f["data"]["subject"], f["data"]["commit"]) for f in report["findings"] if f["rule"] == "claim-contradicted"]
    assert found == [("--state-checkpoint-interval-tokens", old)] and code == 1


@pytest.mark.parametrize("keys, found", [
    ("7", "`config-keys` must be a list, found the integer 7"),
    ("{a: 1}", "`config-keys` must be a list, found a mapping"),
    ("[]", "`config-keys`"),
])
def test_an_appended_entry_of_the_wrong_shape_is_reported_by_claims(tmp_path: Path, keys: str, found: str) -> None:
    # Its keys select no job: without the schema's finding, `claims` passed it with a note that nothing was checked.
    repo, shas = history_repo(tmp_path)
    with (repo / "perf-changelog.yaml").open("a", encoding="utf-8") as log:
        log.write(f"\n- config-keys: {keys}\n  description: [x]\n"
                  "  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/XXX\n")
    head = commit(repo, "an entry whose config-keys are not a list of keys")
    code, report = run_claims(repo, "--base", shas[-1], "--head", head)
    schema = [f for f in report["findings"] if f["rule"] == "changelog-entry-schema"]
    assert code == 1 and len(schema) == 1
    assert schema[0]["path"] == "perf-changelog.yaml" and schema[0]["severity"] == "error"
    assert found in schema[0]["message"]
