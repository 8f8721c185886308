"""The line scan that lists master-config keys for config-key glob matching."""

from __future__ import annotations

from pathlib import Path

import pytest

from ci_tools.changelog.config_keys import top_level_keys
from ci_tools.revision.yamlpos import load_yaml
from conftest import ROOT, corpus_dir


@pytest.mark.parametrize("name", ["corpus", "repository"])
def test_scan_agrees_with_the_yaml_loader_on_real_master_files(name: str) -> None:
    path = (corpus_dir() if name == "corpus" else ROOT) / "configs" / "amd-master.yaml"
    data = path.read_bytes()
    assert top_level_keys(data) == [str(k) for k in load_yaml(data, str(path)).value]


def test_quoted_keys_comments_and_indented_lines() -> None:
    text = b'# header\n"dsr1: quoted": {}\n\'single\': 1\n  nested: 2\nplain-key:\n  image: x\n'
    assert top_level_keys(text) == ["dsr1: quoted", "single", "plain-key"]


@pytest.mark.parametrize("text", [
    b"a: 1\n---\nb: 2\n",          # a second document
    b"{a: 1, b: 2}\n",              # flow style
    b"<<: *defaults\n",             # merge key
    b"&anchor a: 1\n",              # anchor
    b"true: 1\n", b"8: 1\n",        # not string keys
    b'"esc\\"aped": 1\n',           # escapes
    b"- a\n- b\n",                  # not a mapping
])
def test_scan_gives_up_where_it_cannot_be_sure(text: bytes) -> None:
    assert top_level_keys(text) is None


def test_changelog_lint_does_not_load_the_master_configs(tmp_path: Path) -> None:
    from ci_tools.check import CheckContext, Comparison, changelog_stage
    from ci_tools.config import load_config
    from test_changelog_support import E1, Repo, base_files, entry

    repo = Repo(tmp_path / "repo")
    base = repo.commit(base_files())
    repo.commit({"perf-changelog.yaml": E1 + b"\n" + entry("dsr1-*", link="https://github.com/acme/bench/pull/2")})
    ctx = CheckContext(load_config(repo.path), Comparison(base))
    assert changelog_stage(ctx) == []
    assert "head_configs_repo" not in ctx.__dict__ and "head_repo" not in ctx.__dict__
