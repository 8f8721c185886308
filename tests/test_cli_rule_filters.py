"""``--select`` / ``--ignore``: an id or prefix that names no rule is a usage error, not a silent filter."""

from __future__ import annotations

from pathlib import Path

import pytest

from ci_tools.cli.main import main
from ci_tools.findings import unknown_patterns


def _repo_with_one_error(tmp_path: Path) -> Path:
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "runners.yaml").write_text("labels: {}\nhardware: {}\n")
    (tmp_path / "configs" / "a-master.yaml").write_text("key: [unclosed\n")
    return tmp_path


@pytest.mark.parametrize("option", ["--select", "--ignore"])
def test_unknown_rule_id_is_a_usage_error_listing_the_ids(option: str, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    repo = _repo_with_one_error(tmp_path)
    code = main(["validate", "--repo", str(repo), "--format", "text", option, "nonsense-rule"])
    captured = capsys.readouterr()
    assert code == 2
    assert captured.out == ""  # no report that could pass for a clean run
    assert f"Invalid value for '{option}': 'nonsense-rule' matches no rule" in captured.err
    assert "yaml-syntax" in captured.err and "changelog-entry-removed" in captured.err


def test_every_unknown_value_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["validate", "--repo", str(_repo_with_one_error(tmp_path)), "--select", "yaml-syntax",
                 "--select", "yaml-syntx", "--select", "chang"])
    assert code == 2
    assert "'yaml-syntx', 'chang' match no rule" in capsys.readouterr().err


@pytest.mark.parametrize("prefix", ["yaml", "yaml-", "changelog", "yaml-syntax"])
def test_ids_and_prefixes_that_match_a_rule_stay_valid(prefix: str, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["validate", "--repo", str(_repo_with_one_error(tmp_path)), "--format", "text", "--select", prefix])
    out = capsys.readouterr().out
    if prefix == "changelog":
        assert code == 0 and out == ""  # valid filter, no changelog finding in this repository
    else:
        assert code == 1 and "[yaml-syntax]" in out


def test_unknown_patterns_follows_the_word_boundary_of_matching() -> None:
    assert unknown_patterns(["changelog-", "claim", "recipe-syntax", "chang", "recipe-syntax-x", ""]) == [
        "chang", "recipe-syntax-x", ""]
