"""`ignore:` in .ci-tools.yaml: findings not reported, each entry with its reason, never dropped silently."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ci_tools.config import load_config
from ci_tools.config.suppressions import Suppression, apply_suppressions, glob_regex
from ci_tools.errors import UsageError
from ci_tools.findings import Finding, Location, Severity
from conftest import full_corpus_dir
from test_changelog_support import git, run

IGNORE = """\
ignore:
  - rule: runner-undefined
    path: configs/nvidia-master.yaml
    config-key: dsv4-fp4-gb300-*
    reason: the gb300-nv label is being renamed to cluster:gb300-nv
  - rule: recipe-missing
    path: configs/*-master.yaml
    config-key: qwen3.5-fp8-h100-sglang-agentic
    reason: the H100 agentic recipe is being restored upstream
  - rule: recipe-missing
    path: configs/amd-master.yaml
    reason: no AMD recipe is missing; this entry is stale
"""


def _write(tmp_path: Path, text: str) -> Path:
    (tmp_path / ".ci-tools.yaml").write_text(text, encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize(("text", "message", "line"), [
    ("ignore:\n  - rule: runner-undefined\n    path: configs/x.yaml\n", "missing required key `reason` in `ignore` entry", 2),
    ("ignore:\n  - rule: runner-undefined\n    path: x\n    reason: ''\n", "`reason` must not be empty", 4),
    ("ignore:\n  - {rule: runer-undefined, path: x, reason: typo}\n", "`rule: runer-undefined` matches no rule", 2),
    ("ignore:\n  - {rule: runner-undefined, path: 'configs/[ab.yaml', reason: r}\n", "is not a glob", 2),
    ("ignore:\n  - {rule: runner-undefined, path: x, reason: r, because: y}\n", "unknown setting `ignore.0.because`", 2),
])
def test_a_bad_entry_is_a_usage_error_at_its_line(tmp_path: Path, text: str, message: str, line: int) -> None:
    with pytest.raises(UsageError) as caught:
        load_config(_write(tmp_path, text))
    assert message in str(caught.value) and caught.value.line == line, (str(caught.value), caught.value.line)


def test_entries_are_read_with_their_lines(tmp_path: Path) -> None:
    config = load_config(_write(tmp_path, IGNORE))
    assert [(s.rule, s.path, s.config_key, s.line) for s in config.suppressions] == [
        ("runner-undefined", "configs/nvidia-master.yaml", "dsv4-fp4-gb300-*", 2),
        ("recipe-missing", "configs/*-master.yaml", "qwen3.5-fp8-h100-sglang-agentic", 6),
        ("recipe-missing", "configs/amd-master.yaml", None, 10)]


@pytest.mark.parametrize(("glob", "path", "hit"), [
    ("configs/*.yaml", "configs/amd-master.yaml", True),
    ("configs/*.yaml", "configs/sub/amd-master.yaml", False),
    ("configs/**/*.yaml", "configs/amd-master.yaml", True),
    ("configs/**/*.yaml", "configs/a/b/c.yaml", True),
    ("**", "benchmarks/single_node/x.sh", True),
    ("benchmarks/single_node/?sr1_*.sh", "benchmarks/single_node/dsr1_fp8.sh", True),
    ("configs/[an]*-master.yaml", "configs/nvidia-master.yaml", True),
    ("configs/[!n]*-master.yaml", "configs/nvidia-master.yaml", False),
])
def test_path_globs_read_as_gitignore_and_ruff_read_them(glob: str, path: str, hit: bool) -> None:
    assert bool(glob_regex(glob).fullmatch(path)) is hit


def test_a_config_key_entry_covers_only_findings_about_those_configs() -> None:
    entry = Suppression("claim-", "**", "judged by hand", config_key="dsr1-*")
    about = [Finding("claim-contradicted", Severity.ERROR, "m", Location("perf-changelog.yaml", 3), data={"config_key": k})
             for k in ("dsr1-fp8-h200", ["dsr1-a", "dsr1-b"], ["dsr1-a", "gptoss-b"])]
    unkeyed = Finding("claim-contradicted", Severity.ERROR, "m", Location("perf-changelog.yaml", 4))
    result = apply_suppressions([*about, unkeyed], [entry])
    assert [f for f, _ in result.suppressed] == about[:2] and result.kept == [about[2], unkeyed] and result.unused == []


def test_check_counts_what_it_suppressed_lists_the_reasons_and_warns_of_a_stale_entry(
        real_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,  # noqa: F811
        capsys: pytest.CaptureFixture[str]) -> None:
    _write(real_repo, IGNORE)
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    code, out, err = run(["check", "--repo", str(real_repo), "--base", "HEAD", "--format", "json"], capsys)
    document = json.loads(out)
    rules = sorted((f["rule"], f["path"], f["line"]) for f in document["findings"])
    # 13 real defects: 3 gb300 runner labels and the 2 H100 agentic rows suppressed, 8 reported.
    assert sum(r == "runner-undefined" for r, _, _ in rules) == 5 and sum(r == "recipe-missing" for r, _, _ in rules) == 3
    assert ("config-ignore-unused", ".ci-tools.yaml", 10) in rules
    assert document["summary"]["suppressed"] == 5
    assert err.endswith("(8 error(s), 1 warning(s)); 5 suppressed by `ignore` in .ci-tools.yaml\n")
    # The job summary lists what was suppressed, with each entry's reason and line.
    run(["check", "--repo", str(real_repo), "--base", "HEAD", "--format", "github"], capsys)
    text = summary.read_text(encoding="utf-8")
    section = text.split("<details><summary>5 suppressed by <code>ignore</code> in .ci-tools.yaml</summary>")[1]
    assert section.count("the gb300-nv label is being renamed to cluster:gb300-nv (`.ci-tools.yaml:2`)") == 3
    assert section.count("the H100 agentic recipe is being restored upstream (`.ci-tools.yaml:6`)") == 2


def test_validate_honours_the_entries_too(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = _write(tmp_path, IGNORE) / ".ci-tools.yaml"
    code, out, _ = run(["validate", "--repo", str(full_corpus_dir()), "--config", str(config), "--format", "json"], capsys)
    assert code == 1 and len(json.loads(out)["findings"]) == 8  # no unused-entry warning: that is check's to give
