"""Limits: a runaway file is one finding at the file, and later stages read a bounded number of entries."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ci_tools.changelog.lint import ChangelogChange
from ci_tools.config import load_config
from ci_tools.config.limits import DEFAULT_MAX_FILE_BYTES, Limits, limits_of
from test_changelog_support import E1, entry, run

CHANGELOG = "perf-changelog.yaml"


def _grow_past(data: bytes, size: int) -> bytes:
    """``data`` with whole copies of its entries appended until it is larger than ``size``."""
    body = data[data.index(b"\n- config-keys:") + 1:]
    copies = size // len(body) + 1
    return data + b"".join(b"\n" + body for _ in range(copies))


def test_defaults_and_configured_limits(tmp_path: Path) -> None:
    assert limits_of(load_config(tmp_path)) == Limits(DEFAULT_MAX_FILE_BYTES, 100)
    (tmp_path / ".ci-tools.yaml").write_text("limits:\n  max-file-bytes: 1000\n  max-appended-entries: 3\n")
    assert limits_of(load_config(tmp_path)) == Limits(1000, 3)


def test_a_changelog_over_the_limit_is_one_finding_for_check_and_validate(real_repo: Path,
                                                                          capsys: pytest.CaptureFixture[str]) -> None:
    path = real_repo / CHANGELOG
    grown = _grow_past(path.read_bytes(), DEFAULT_MAX_FILE_BYTES)
    path.write_bytes(grown)
    selected = ["--select", "changelog-", "--select", "file-", "--select", "yaml-", "--select", "claim-",
                "--select", "coverage-"]
    code, out, _ = run(["check", "--repo", str(real_repo), "--base", "HEAD", "--format", "json", *selected], capsys)
    findings = json.loads(out)["findings"]
    assert code == 1
    assert [(f["rule"], f["path"], f["line"]) for f in findings] == [("file-too-large", CHANGELOG, 0)]
    assert findings[0]["message"].startswith(f"file is {len(grown):,} bytes ({len(grown) / 2**20:.1f} MiB), over the "
                                             "limit of 8,388,608 bytes (8.0 MiB)")
    code, out, _ = run(["validate", "--repo", str(real_repo), "--format", "json", *selected], capsys)
    assert [f["rule"] for f in json.loads(out)["findings"]] == ["file-too-large"]


def test_a_raised_limit_reads_the_file_again(real_repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = real_repo / CHANGELOG
    path.write_bytes(_grow_past(path.read_bytes(), 1_000_000))
    (real_repo / ".ci-tools.yaml").write_text("limits:\n  max-file-bytes: 900000\n", encoding="utf-8")
    code, out, _ = run(["changelog", "lint", "--repo", str(real_repo), "--base", "HEAD", "--format", "json"], capsys)
    assert [f["rule"] for f in json.loads(out)["findings"]] == ["file-too-large"]
    (real_repo / ".ci-tools.yaml").write_text("limits:\n  max-file-bytes: 2000000\n", encoding="utf-8")
    code, out, _ = run(["changelog", "lint", "--repo", str(real_repo), "--base", "HEAD", "--format", "json",
                        "--select", "changelog-too-many-entries"], capsys)
    findings = json.loads(out)["findings"]
    assert code == 1 and [f["rule"] for f in findings] == ["changelog-too-many-entries"]
    assert findings[0]["data"]["limit"] == 100 and findings[0]["data"]["appended"] > 1000


def test_later_stages_read_at_most_the_limit_of_appended_entries() -> None:
    head = E1 + b"".join(b"\n" + entry(desc=f"Change {i}", link=f"https://github.com/acme/bench/pull/{i + 2}")
                         for i in range(5))
    change = ChangelogChange(CHANGELOG, E1, head, limits=Limits(max_appended_entries=3))
    assert len(change.parsed.entries) == 5  # all parsed (each is held to the schema) ...
    assert [e.get("description") for e in change.new_entries] == [["Change 0"], ["Change 1"], ["Change 2"]]


def test_the_gate_never_reads_lines_of_an_oversized_head() -> None:
    change = ChangelogChange(CHANGELOG, E1, E1 + b"\n" + entry() * 10, limits=Limits(max_file_bytes=len(E1)))
    assert change.oversized and change.diff is None and change.new_entries == []
    assert change.head is None  # no reader gets a line of it


def test_claims_alone_says_which_entries_past_the_limit_it_did_not_read(real_repo: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    path = real_repo / CHANGELOG
    path.write_bytes(_grow_past(path.read_bytes(), 1_000_000))
    (real_repo / ".ci-tools.yaml").write_text("limits:\n  max-file-bytes: 2000000\n  max-appended-entries: 2\n",
                                              encoding="utf-8")
    code, out, _ = run(["claims", "--repo", str(real_repo), "--base", "HEAD", "--format", "json",
                        "--select", "changelog-too-many-entries"], capsys)
    findings = json.loads(out)["findings"]
    # without it, `claims` passed the entries from the third on in silence (`check` said so in its gate only)
    assert code == 1 and [f["rule"] for f in findings] == ["changelog-too-many-entries"]
    assert findings[0]["data"]["limit"] == 2 and "from this one on are not checked for claims" in findings[0]["message"]
