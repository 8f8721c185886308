from __future__ import annotations

from pathlib import Path

import pytest

from ci_tools.config import ProjectConfig, load_config
from ci_tools.errors import UsageError


def test_defaults_match_the_inferencex_layout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GITHUB_REPOSITORY", raising=False)
    cfg = load_config(tmp_path)
    assert cfg.master_configs == ("configs/*-master.yaml",)
    assert cfg.runners == "configs/runners.yaml"
    assert cfg.changelog == "perf-changelog.yaml"
    assert cfg.single_node_templates[0].startswith("benchmarks/single_node/{scenario_dir}/")
    assert cfg.source is None


def test_file_overrides_and_pr_link(tmp_path: Path) -> None:
    (tmp_path / ".ci-tools.yaml").write_text(
        "repository: acme/bench\nchangelog: CHANGES.yaml\nmaster-configs: [a/*-master.yaml, b.yaml]\n"
        "recipe-templates:\n  single-node: ['r/{model_prefix}.sh']\n"
    )
    cfg = load_config(tmp_path)
    assert cfg.repository == "acme/bench"
    assert cfg.changelog == "CHANGES.yaml"
    assert cfg.master_configs == ("a/*-master.yaml", "b.yaml")
    assert cfg.single_node_templates == ("r/{model_prefix}.sh",)
    assert cfg.pr_link(12) == "https://github.com/acme/bench/pull/12"
    rx = cfg.pr_link_regex()
    m = rx.match("https://github.com/acme/bench/pull/12")
    assert m is not None and m.group("number") == "12"
    assert rx.match("https://github.com/other/bench/pull/12") is None
    assert rx.match("https://github.com/acme/bench/pull/XXX") is None


@pytest.mark.parametrize(
    ("text", "message", "line"),
    [
        ("colour: blue\n", "unknown setting `colour`", 1),
        ("runners: 3\n", "`runners` must be a non-empty string, found 3", 1),
        ("repository: not a slug\n", "`repository` must look like OWNER/NAME", 0),
        ("changelog: a\nchangelog: b\n", "duplicate key `changelog` (first defined at line 1)", 2),
        ("- a\n", "the configuration must be a mapping", 1),
        ("a: [\n", "invalid YAML", 2),
        ("dispatch: 5\n", "`dispatch` must be a mapping, found 5", 1),
    ],
)
def test_bad_configuration_names_file_line_and_problem(tmp_path: Path, text: str, message: str, line: int) -> None:
    (tmp_path / ".ci-tools.yaml").write_text(text)
    with pytest.raises(UsageError) as err:
        load_config(tmp_path)
    assert message in str(err.value)
    assert str(tmp_path / ".ci-tools.yaml") in str(err.value)
    assert err.value.line == line


def test_missing_explicit_config_file_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="does not exist"):
        load_config(tmp_path, tmp_path / "nope.yaml")


def test_repository_falls_back_to_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_REPOSITORY", "octo/repo")
    assert load_config(tmp_path).repository == "octo/repo"
    assert isinstance(load_config(tmp_path), ProjectConfig)
