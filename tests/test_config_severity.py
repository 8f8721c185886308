"""`severity:` in .ci-tools.yaml: the findings of a rule reported with another severity, which decides the exit."""

from __future__ import annotations

from pathlib import Path

from test_claims_seed import git, run_claims, seed_repo


def configure(repo: Path, text: str) -> None:
    (repo / ".ci-tools.yaml").write_text(text, encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "configure")


def test_a_rule_made_a_warning_reports_its_findings_without_failing(tmp_path: Path) -> None:
    repo, base = seed_repo(tmp_path)
    code, report = run_claims(repo, "--base", base, "--head", "HEAD", "--select", "claim-contradicted")
    assert code == 1 and {f["severity"] for f in report["findings"]} == {"error"}
    errors = [(f["line"], f["message"]) for f in report["findings"]]
    configure(repo, "severity:\n  claim-contradicted: warning\n")
    code, report = run_claims(repo, "--base", base, "--head", "HEAD", "--select", "claim-contradicted")
    assert code == 0
    assert [(f["line"], f["message"], f["severity"]) for f in report["findings"]] == [
        (line, message, "warning") for line, message in errors]


def test_the_most_specific_entry_wins(tmp_path: Path) -> None:
    repo, base = seed_repo(tmp_path)
    configure(repo, "severity:\n  claim: note\n  claim-contradicted: error\n")
    code, report = run_claims(repo, "--base", base, "--head", "HEAD", "-v")
    by_rule = {(f["rule"], f["severity"]) for f in report["findings"]}
    assert code == 1 and ("claim-contradicted", "error") in by_rule
    assert all(sev == "note" for rule, sev in by_rule if rule != "claim-contradicted")
