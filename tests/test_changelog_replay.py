"""Replay of the real InferenceX changelog as a two-commit history.

Base: every entry but the last 85; head: the whole file, with the corpus's
configs.  The gate must report what that part of the real history deserves
(it was merged while the public gate checked only the final newline): the
double blank separators, the whitespace-only lines and the `pull/XXX`
placeholder, and nothing else.

One outcome needs its explanation: the corpus holds only the AMD master file,
so every config key of an NVIDIA config (b200, h100, gb300, ...) that these
entries name matches no config at the head.  Those `changelog-key-unmatched`
findings are right for this data set; the test proves that each of them
names a key the AMD master file does not define and none names an AMD GPU.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
import yaml

from ci_tools.changelog.layout import Layout
from conftest import corpus_dir
from test_changelog_support import Repo, run

N = 85

EXPECTED = [
    (5570, 1, "changelog-trailing-whitespace"),
    (5590, 1, "changelog-trailing-whitespace"),
    (5598, 12, "changelog-pr-link"),
    (5621, 1, "changelog-trailing-whitespace"),
    (5623, 1, "changelog-separator"),
    (5797, 1, "changelog-trailing-whitespace"),
    (6053, 1, "changelog-trailing-whitespace"),
    (6075, 1, "changelog-trailing-whitespace"),
    (6084, 1, "changelog-trailing-whitespace"),
    (6093, 1, "changelog-trailing-whitespace"),
    (6104, 1, "changelog-separator"),
    (6319, 1, "changelog-trailing-whitespace"),
    (6327, 1, "changelog-trailing-whitespace"),
    (6329, 1, "changelog-separator"),
    (6342, 1, "changelog-trailing-whitespace"),
    (6352, 1, "changelog-trailing-whitespace"),
    (6354, 1, "changelog-separator"),
]


@pytest.fixture(scope="module")
def replay(tmp_path_factory: pytest.TempPathFactory) -> tuple[Repo, str, str]:
    corpus = corpus_dir()
    repo = Repo(tmp_path_factory.mktemp("replay") / "repo")
    full = (corpus / "perf-changelog.yaml").read_bytes()
    layout = Layout(full)
    shutil.copytree(corpus / "configs", repo.path / "configs")
    base = repo.commit({
        ".ci-tools.yaml": b"repository: SemiAnalysisAI/InferenceX\n",
        "perf-changelog.yaml": layout.text(1, layout.blocks[-N].start - 1),
    })
    head = repo.commit({"perf-changelog.yaml": full})
    return repo, base, head


def _findings(out: str) -> list[dict[str, object]]:
    findings: list[dict[str, object]] = json.loads(out)["findings"]
    return findings


def test_replay_reports_exactly_what_the_real_history_deserves(replay: tuple[Repo, str, str],
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    repo, base, head = replay
    code, out, _ = run(["changelog", "lint", "--repo", str(repo.path), "--base", base, "--head", head, "--format", "json"], capsys)
    assert code == 1
    findings = _findings(out)
    others = [(f["line"], f["column"], f["rule"]) for f in findings if f["rule"] != "changelog-key-unmatched"]
    assert others == EXPECTED
    placeholder = next(f for f in findings if f["rule"] == "changelog-pr-link")
    assert "`https://github.com/SemiAnalysisAI/InferenceX/pull/XXX` is a placeholder" in str(placeholder["message"])

    # The explained outcome: NVIDIA keys, absent from the AMD-only corpus.
    amd_keys = set(yaml.safe_load((corpus_dir() / "configs" / "amd-master.yaml").read_text()))
    unmatched = [f["data"]["key"] for f in findings if f["rule"] == "changelog-key-unmatched"]  # type: ignore[index]
    assert len(unmatched) == 88
    assert not any(re.search(r"mi3[0-9]{2}x", str(k)) for k in unmatched)
    assert not set(unmatched) & amd_keys
    # ... and every AMD key these entries name resolves.
    head_layout = Layout((repo.path / "perf-changelog.yaml").read_bytes())
    appended = yaml.safe_load(head_layout.text(head_layout.blocks[-N].start))
    named_amd = {k for e in appended for k in e["config-keys"] if re.search(r"mi3[0-9]{2}x", k)}
    assert named_amd and named_amd <= amd_keys | {k for k in named_amd if "*" in k}


def test_replay_as_a_pr_accepts_the_placeholder(replay: tuple[Repo, str, str], capsys: pytest.CaptureFixture[str]) -> None:
    repo, base, head = replay
    code, out, _ = run(["changelog", "lint", "--repo", str(repo.path), "--base", base, "--head", head,
                        "--pr-number", "2800", "--select", "changelog-pr-link", "--format", "json"], capsys)
    links = [f for f in _findings(out) if f["rule"] == "changelog-pr-link"]
    # On a PR, every other entry's link is someone else's PR; the placeholder is the one that passes.
    assert code == 1 and len(links) == N - 1
    assert all(f["line"] != 5598 for f in links)


def test_replay_check_adds_no_coverage_finding(replay: tuple[Repo, str, str], capsys: pytest.CaptureFixture[str]) -> None:
    repo, base, head = replay
    code, out, _ = run(["check", "--repo", str(repo.path), "--base", base, "--head", head, "--format", "json",
                        "--select", "changelog-", "--select", "coverage-", "--ignore", "changelog-key-unmatched",
                        "--ignore", "changelog-entry-schema"], capsys)
    assert code == 1
    assert [(f["line"], f["column"], f["rule"]) for f in _findings(out)] == EXPECTED


def test_replay_of_one_entry_is_clean_but_for_its_nvidia_key(replay: tuple[Repo, str, str], tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    repo, _, head = replay
    full = (repo.path / "perf-changelog.yaml").read_bytes()
    layout = Layout(full)
    other = Repo(tmp_path / "one")
    shutil.copytree(repo.path / "configs", other.path / "configs")
    base = other.commit({".ci-tools.yaml": b"repository: SemiAnalysisAI/InferenceX\n",
                         "perf-changelog.yaml": layout.text(1, layout.blocks[-1].start - 1)})
    other.commit({"perf-changelog.yaml": full})
    code, out, _ = run(["changelog", "lint", "--repo", str(other.path), "--base", base, "--format", "json"], capsys)
    assert [(f["rule"], f["data"].get("key")) for f in _findings(out)] == [  # type: ignore[attr-defined]
        ("changelog-key-unmatched", "dsv4-fp4-b200-vllm-agentic-mtp")]
