"""Renderers: exact snapshots, escaping, the job summary, SARIF against its schema."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from ci_tools.cli.main import main
from ci_tools.findings import Finding, Location, Severity
from ci_tools.report import RENDERERS, github, markdown, sarif, summary_file
from fixture_trees import tree_files

DATA = Path(__file__).resolve().parent / "data"
RULES = "https://github.com/ci-tools/ci-tools/blob/main/docs/rules/"
ODD_PATH = "configs/a,b:c%d.yaml"

FINDINGS = [
    Finding("runner-undefined", Severity.ERROR, "runner label `cluster:mi325x-tw` is not defined",
            Location("configs/amd-master.yaml", 5, 11, 5, 28), data={"runner": "cluster:mi325x-tw"}),
    Finding("conc-range-inverted", Severity.WARNING, "start | end\nsecond line, 50%: <b>",
            Location(ODD_PATH, 3, 2, 4, 1), related=(Location(ODD_PATH, 3, 9, note="conc-end"),)),
    Finding("file-missing", Severity.NOTE, "50% of files: gone, really\r\nyes", Location("configs/runners.yaml")),
]


def test_renderer_table_is_the_format_choice_list() -> None:
    assert sorted(RENDERERS) == ["github", "json", "markdown", "sarif", "text"]


def test_github_annotations_snapshot() -> None:
    assert github.render(FINDINGS) == (
        "::error file=configs/amd-master.yaml,line=5,col=11,endLine=5,endColumn=28,title=ci-tools runner-undefined"
        "::runner label `cluster:mi325x-tw` is not defined\n"
        "::warning file=configs/a%2Cb%3Ac%25d.yaml,line=3,col=2,endLine=4,title=ci-tools conc-range-inverted"
        "::start | end%0Asecond line, 50%25: <b>%0Arelated: configs/a,b:c%25d.yaml:3:9 (conc-end)\n"
        "::notice file=configs/runners.yaml,title=ci-tools file-missing::50%25 of files: gone, really%0D%0Ayes\n"
        "1 error(s), 1 warning(s), 1 note(s)\n"
    )


@pytest.mark.parametrize(("raw", "data", "prop"), [
    ("100%", "100%25", "100%25"),
    ("a,b", "a,b", "a%2Cb"),
    ("a:b", "a:b", "a%3Ab"),
    ("one\ntwo\r\nthree\r", "one%0Atwo%0D%0Athree%0D", "one%0Atwo%0D%0Athree%0D"),
    ("%0A", "%250A", "%250A"),  # an escape sequence in the text is not decoded by GitHub
    ("::error::x", "::error::x", "%3A%3Aerror%3A%3Ax"),
])
def test_annotation_escaping(raw: str, data: str, prop: str) -> None:
    assert github.escape_data(raw) == data
    assert github.escape_property(raw) == prop


def test_annotation_with_hostile_path_and_message_stays_one_command() -> None:
    finding = Finding("recipe-missing", Severity.ERROR, "line1\n::error::injected",
                      Location("dir:1,x\n/f%.yaml", 2, 3, 2, 9))
    line = github.annotation(finding)
    assert "\n" not in line and "\r" not in line
    assert line == ("::error file=dir%3A1%2Cx%0A/f%25.yaml,line=2,col=3,endLine=2,endColumn=9,"
                    "title=ci-tools recipe-missing::line1%0A::error::injected")


def test_markdown_snapshot() -> None:
    assert markdown.render(FINDINGS) == (
        "### ci-tools: 1 error(s), 1 warning(s), 1 note(s)\n\n"
        "| Severity | Rule | Location | Message |\n|---|---|---|---|\n"
        f"| error | [`runner-undefined`]({RULES}runner-undefined.md) | `configs/amd-master.yaml:5:11` | runner label "
        "`cluster:mi325x-tw` is not defined |\n"
        f"| warning | [`conc-range-inverted`]({RULES}conc-range-inverted.md) | `configs/a,b:c%d.yaml:3:2` | start \\| end"
        "<br>second line, 50%: &lt;b&gt;<br>related: configs/a,b:c%d.yaml:3:9 (conc-end) |\n"
        f"| note | [`file-missing`]({RULES}file-missing.md) | `configs/runners.yaml` | 50% of files: gone, really<br>yes |\n"
    )
    assert markdown.render([]) == "### ci-tools: no findings\n"


def test_summary_is_appended_when_the_variable_is_set(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "summary.md"
    target.write_text("earlier step output\n", encoding="utf-8")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(target))
    summary_file.write_step_summary(FINDINGS)
    assert target.read_text(encoding="utf-8") == "earlier step output\n" + markdown.render(FINDINGS)


def test_summary_without_the_variable_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    monkeypatch.chdir(tmp_path)
    summary_file.write_step_summary(FINDINGS)
    assert list(tmp_path.iterdir()) == []


def _many(n: int) -> list[Finding]:
    return [Finding("recipe-missing", Severity.ERROR, f"finding {i} " + "x" * 200, Location("configs/a.yaml", i + 1, 1))
            for i in range(n)]


def test_summary_is_truncated_under_the_limit_with_a_note() -> None:
    findings = _many(10_000)  # about 2.4 MB of rows
    text = summary_file.summary_text(findings)
    size = len(text.encode("utf-8"))
    assert size <= summary_file.SUMMARY_LIMIT
    shown = text.count(f"| error | [`recipe-missing`]({RULES}recipe-missing.md) |")
    assert 0 < shown < 10_000
    assert f"**{10_000 - shown} more finding(s) not shown**" in text
    assert text.startswith("### ci-tools: 10000 error(s), 0 warning(s), 0 note(s)\n")


def test_summary_limit_accounts_for_what_the_step_already_wrote(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "summary.md"
    target.write_bytes(b"x" * (summary_file.SUMMARY_LIMIT - 100_000))
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(target))
    summary_file.write_step_summary(_many(5_000))
    assert target.stat().st_size <= summary_file.SUMMARY_LIMIT
    assert "more finding(s) not shown" in target.read_text(encoding="utf-8")


def test_small_summary_is_not_truncated() -> None:
    text = summary_file.summary_text(_many(3))
    assert "not shown" not in text and text.count("| error |") == 3


def _sarif_validator() -> jsonschema.Draft4Validator:
    schema = json.loads((DATA / "sarif" / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
    return jsonschema.Draft4Validator(schema, format_checker=jsonschema.FormatChecker())


def test_sarif_validates_against_the_official_schema() -> None:
    log = json.loads(sarif.render(FINDINGS))
    errors = [f"{list(e.absolute_path)}: {e.message}" for e in _sarif_validator().iter_errors(log)]
    assert errors == []


def test_sarif_of_no_findings_validates() -> None:
    log = json.loads(sarif.render([]))
    assert list(_sarif_validator().iter_errors(log)) == []
    assert log["runs"][0]["results"] == [] and log["runs"][0]["tool"]["driver"]["rules"] == []


def test_sarif_the_schema_rejects_a_broken_log() -> None:
    # The validator is real: a result without a message is refused.
    log = json.loads(sarif.render(FINDINGS))
    del log["runs"][0]["results"][0]["message"]
    assert list(_sarif_validator().iter_errors(log))


def test_sarif_rules_results_and_locations() -> None:
    log = json.loads(sarif.render(FINDINGS + [FINDINGS[0]]))
    run = log["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == ["conc-range-inverted", "file-missing", "runner-undefined"]
    runner = rules[2]
    assert runner["shortDescription"]["text"] == "a config's runner label is not defined in runners.yaml"
    assert "**Fix**: Use a label that runners.yaml defines" in runner["help"]["markdown"]
    assert runner["defaultConfiguration"] == {"level": "error"}
    results = run["results"]
    assert [(r["ruleId"], r["ruleIndex"], r["level"]) for r in results] == [
        ("runner-undefined", 2, "error"), ("conc-range-inverted", 0, "warning"),
        ("file-missing", 1, "note"), ("runner-undefined", 2, "error")]
    assert results[0]["locations"][0]["physicalLocation"] == {
        "artifactLocation": {"uri": "configs/amd-master.yaml", "uriBaseId": "%SRCROOT%"},
        "region": {"startLine": 5, "startColumn": 11, "endLine": 5, "endColumn": 28}}
    assert results[0]["properties"] == {"data": {"runner": "cluster:mi325x-tw"}}
    odd = results[1]
    assert odd["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "configs/a%2Cb%3Ac%25d.yaml"
    assert odd["relatedLocations"] == [{
        "id": 0, "message": {"text": "conc-end"},
        "physicalLocation": {"artifactLocation": {"uri": "configs/a%2Cb%3Ac%25d.yaml", "uriBaseId": "%SRCROOT%"},
                             "region": {"startLine": 3, "startColumn": 9}}}]
    # A finding about a whole file has no region (SARIF lines start at 1).
    assert results[2]["locations"][0]["physicalLocation"] == {
        "artifactLocation": {"uri": "configs/runners.yaml", "uriBaseId": "%SRCROOT%"}}


def test_sarif_snapshot() -> None:
    expected = (DATA / "render" / "findings.sarif.json").read_text(encoding="utf-8")
    assert sarif.render(FINDINGS) == expected


def _repo_with_undefined_runner(tmp_path: Path) -> Path:
    fixture = Path(__file__).resolve().parent / "fixtures" / "rules" / "runner-undefined" / "err" / "undefined-cluster-label"
    repo = tmp_path / "repo"
    for rel, path in tree_files(fixture).items():
        if rel.endswith(".yaml"):
            dest = repo / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(path.read_bytes())
    return repo


def test_cli_defaults_to_github_inside_actions_and_writes_the_summary(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    repo = _repo_with_undefined_runner(tmp_path)
    summary = tmp_path / "step-summary.md"
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    code = main(["validate", "--repo", str(repo), "--select", "runner-undefined"])
    out = capsys.readouterr().out
    assert code == 1
    assert out.startswith("::error file=configs/amd-master.yaml,line=5,col=11,endLine=5,endColumn=28,"
                          "title=ci-tools runner-undefined::runner label `cluster:mi325x-tw`")
    assert (f"| error | [`runner-undefined`]({RULES}runner-undefined.md) | `configs/amd-master.yaml:5:11` |"
            in summary.read_text(encoding="utf-8"))


def test_cli_sarif_and_markdown_formats(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    repo = _repo_with_undefined_runner(tmp_path)
    assert main(["validate", "--repo", str(repo), "--select", "runner-undefined", "--format", "sarif"]) == 1
    log = json.loads(capsys.readouterr().out)
    assert list(_sarif_validator().iter_errors(log)) == []
    assert [r["ruleId"] for r in log["runs"][0]["results"]] == ["runner-undefined"]
    assert main(["validate", "--repo", str(repo), "--select", "runner-undefined", "--format", "markdown"]) == 1
    assert capsys.readouterr().out.startswith("### ci-tools: 1 error(s), 0 warning(s), 0 note(s)\n")
