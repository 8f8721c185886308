"""``scripts/extract_claims_case.py``: an extract of a replayed case is that case again, stored once.

The script is run on a repository replayed from a committed extract
(tests/data/claims_real), so the files it must find, trim and verify are
real InferenceX files; what it writes, once inheritance is resolved, must be
the extract it started from.
"""

from __future__ import annotations

import importlib.util
import shutil
import sys
from pathlib import Path
from types import ModuleType

import pytest

from fixture_trees import INHERIT, tree_files
from test_changelog_support import git
from test_claims_real import DATA, replay

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "extract_claims_case.py"
CASE = "ed5e88bf843a"  # the smallest of the extracts the script wrote


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("extract_claims_case", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def _contents(tree: Path, shared: Path) -> dict[str, bytes]:
    return {rel: path.read_bytes() for rel, path in tree_files(tree, shared=shared).items()}


def test_an_extract_of_a_replayed_case_is_the_case_and_a_file_another_extract_stores_is_inherited(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    repo, _ = replay(CASE, tmp_path, monkeypatch)
    shared = tmp_path / "cases"
    # Another extract that stores the same benchmark_lib.sh: the new one must name it instead of a copy.
    sibling = shared / "000000000000" / "common" / "benchmarks"
    sibling.mkdir(parents=True)
    shutil.copyfile(DATA / CASE / "common" / "benchmarks" / "benchmark_lib.sh", sibling / "benchmark_lib.sh")
    out = shared / CASE

    assert _script().main([str(repo.path), "HEAD", str(out)]) == 0

    printed = capsys.readouterr().out
    assert "('claim-setting-missing', 20, '--tool-call-parser', 'qwen3_coder')," in printed
    assert not (out / "common" / "benchmarks" / "benchmark_lib.sh").exists()
    assert (out / "common" / INHERIT).read_text().splitlines()[1:] == ["000000000000/common benchmarks/benchmark_lib.sh"]
    for part in ("common", "head", "base"):
        assert _contents(out / part, shared) == _contents(DATA / CASE / part, DATA), part


def test_a_commit_that_adds_no_changelog_entry_is_refused_and_nothing_is_written(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    repo, _ = replay(CASE, tmp_path, monkeypatch)
    recipe = repo.path / "benchmarks" / "single_node" / "agentic" / "qwen3.5_fp8_h100_mtp.sh"
    recipe.write_text(recipe.read_text() + "# a comment\n")
    git(repo.path, "commit", "-q", "-am", "recipe only")
    out = tmp_path / "cases" / "recipe-only"

    assert _script().main([str(repo.path), "HEAD", str(out)]) == 1

    err = capsys.readouterr().err
    assert "adds no entry to perf-changelog.yaml; expected a commit that adds one" in err
    assert not out.exists()
