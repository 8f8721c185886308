"""GitHub shows 10 error and 10 warning annotations per step: emit the most important, count the rest,
and put every finding in the job summary (saying so in the log when 1 MiB cuts it)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ci_tools.cli.common import finish
from ci_tools.cli.main import main
from ci_tools.findings import Finding, Location, Severity
from ci_tools.report import github, summary_file
from conftest import full_corpus_dir


def _annotations(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("::")]


@pytest.fixture(scope="module")
def real_tree_reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """`validate` of the real tree in the github format (with its job summary) and in JSON."""
    tree = full_corpus_dir()
    summary = tmp_path_factory.mktemp("summary") / "step-summary.md"
    summary.write_text("", encoding="utf-8")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("GITHUB_STEP_SUMMARY", str(summary))
        capture = tmp_path_factory.mktemp("out")
        main(["validate", "--repo", str(tree), "--format", "github", "--output", str(capture / "github.txt")])
        main(["validate", "--repo", str(tree), "--format", "json", "--output", str(capture / "report.json")])
    return {"github": (capture / "github.txt").read_text(encoding="utf-8"),
            "json": (capture / "report.json").read_text(encoding="utf-8"),
            "summary": summary.read_text(encoding="utf-8")}


def test_real_tree_annotations_are_capped_and_cover_every_rule(real_tree_reports: dict[str, str]) -> None:
    findings = json.loads(real_tree_reports["json"])["findings"]
    assert len(findings) > 10  # the real tree's known defects (undefined runners, missing recipes): more than a step shows
    lines = _annotations(real_tree_reports["github"])
    errors = [line for line in lines if line.startswith("::error ")]
    assert len(errors) == 10 and len(lines) <= 30
    error_rules = {f["rule"] for f in findings if f["severity"] == "error"}
    annotated_rules = {line.split("title=ci-tools ", 1)[1].split("::", 1)[0] for line in errors}
    assert annotated_rules == error_rules if len(error_rules) <= 10 else len(annotated_rules) == 10
    total_errors = sum(f["severity"] == "error" for f in findings)
    assert f"not annotated: {total_errors - 10:,} error(s)" in real_tree_reports["github"].splitlines()[-1]


def test_real_tree_job_summary_lists_every_finding(real_tree_reports: dict[str, str]) -> None:
    findings = json.loads(real_tree_reports["json"])["findings"]
    summary = real_tree_reports["summary"]
    assert summary.count("\n| error |") + summary.count("\n| warning |") + summary.count("\n| note |") == len(findings)
    assert "not shown" not in summary


def _finding(rule: str, line: int, severity: Severity = Severity.ERROR) -> Finding:
    return Finding(rule, severity, f"problem {line} " + "x" * 150, Location("perf-changelog.yaml", line, 1))


def test_rules_take_turns_so_a_rare_rule_is_not_buried() -> None:
    findings = [_finding("changelog-key-unmatched", n) for n in range(1, 500)] + [
        _finding("changelog-entry-removed", 900), _finding("claim-contradicted", 901, Severity.WARNING)]
    chosen = github.most_important(findings)
    assert [f.rule for f in chosen].count("changelog-entry-removed") == 1
    assert [f.rule for f in chosen].count("changelog-key-unmatched") == 9
    assert [f.rule for f in chosen].count("claim-contradicted") == 1
    assert chosen == [f for f in findings if f in chosen]  # the report order is kept
    last = github.render(findings).splitlines()[-1]
    assert last.startswith("not annotated: 490 error(s) (GitHub shows 10 annotations of each severity per step)")


def test_no_line_about_the_cap_when_everything_is_annotated() -> None:
    text = github.render([_finding("recipe-missing", n) for n in range(1, 11)])
    assert len(_annotations(text)) == 10 and "not annotated" not in text


def test_a_large_report_is_capped_and_the_summary_cut_is_announced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    findings = [_finding("changelog-key-unmatched", n) for n in range(1, 70_001)]
    summary = tmp_path / "step-summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    assert finish(findings, "github", (), ()) == 1
    captured = capsys.readouterr()
    assert len(_annotations(captured.out)) == 10
    assert "not annotated: 69,990 error(s)" in captured.out
    rows = summary.read_text(encoding="utf-8").count("\n| error |")
    assert 0 < rows < 70_000 and summary.stat().st_size <= summary_file.SUMMARY_LIMIT
    assert f"ci-tools: note: the job summary lists {rows:,} of 70,000 findings (GitHub allows 1024 KiB per step)" \
        in captured.err


def test_summary_puts_errors_before_notes_so_a_cut_drops_the_least_important() -> None:
    findings = [_finding("claim-unverified", n, Severity.NOTE) for n in range(1, 6000)] + [
        _finding("changelog-entry-removed", 9000)]
    text = summary_file.summary_text(findings)
    assert "more finding(s) not shown" in text
    assert text.index("| error | [`changelog-entry-removed`]") < text.index("| note |")
