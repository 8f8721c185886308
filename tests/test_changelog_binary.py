"""A changelog that is not text: one `changelog-encoding` finding, and `changelog new` refuses to write."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from ci_tools.changelog.layout import binary_evidence, line_and_column
from test_changelog_support import run

CHANGELOG = "perf-changelog.yaml"


def _findings(out: str) -> list[tuple[str, int, int]]:
    return [(f["rule"], f["line"], f["column"]) for f in json.loads(out)["findings"]]


def test_utf16_changelog_is_one_encoding_finding_not_772_removals(real_repo: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    text = (real_repo / CHANGELOG).read_text(encoding="utf-8")
    (real_repo / CHANGELOG).write_bytes(text.encode("utf-16"))
    code, out, _ = run(["check", "--repo", str(real_repo), "--base", "HEAD", "--format", "json",
                        "--select", "changelog-", "--select", "yaml-", "--select", "claim-", "--select", "coverage-"],
                       capsys)
    assert code == 1
    assert _findings(out) == [("changelog-encoding", 1, 1)]
    message = json.loads(out)["findings"][0]["message"]
    assert message.startswith("the changelog is not text: a UTF-16 byte-order mark at line 1, column 1")


def test_compressed_changelog_is_reported_at_its_first_nul_byte(real_repo: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    packed = gzip.compress((real_repo / CHANGELOG).read_bytes(), mtime=0)
    (real_repo / CHANGELOG).write_bytes(packed)
    code, out, _ = run(["changelog", "lint", "--repo", str(real_repo), "--base", "HEAD", "--format", "json"], capsys)
    offset = packed.index(b"\x00")
    assert code == 1
    assert _findings(out) == [("changelog-encoding", *line_and_column(packed, offset))]
    assert "a NUL byte" in json.loads(out)["findings"][0]["message"]


def test_changelog_new_refuses_to_append_to_a_binary_file(real_repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    binary = (real_repo / CHANGELOG).read_text(encoding="utf-8").encode("utf-16")
    (real_repo / CHANGELOG).write_bytes(binary)
    code, out, err = run(["changelog", "new", "--repo", str(real_repo), "-m", "Raise the range",
                          "--key", "dsr1-fp8-mi355x-atom"], capsys)
    assert (code, out) == (2, "")
    assert f"{CHANGELOG}:1: the changelog is not text (a UTF-16 byte-order mark at column 1); refusing to append" in err
    assert (real_repo / CHANGELOG).read_bytes() == binary


def test_changelog_new_refuses_invalid_utf8_and_names_the_line(real_repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = (real_repo / CHANGELOG).read_bytes()
    broken = data.replace(b"description:", b"descr\xe9ption:", 1)
    (real_repo / CHANGELOG).write_bytes(broken)
    line = data[: data.index(b"description:")].count(b"\n") + 1
    code, _, err = run(["changelog", "new", "--repo", str(real_repo), "-m", "x", "--key", "dsr1-fp8-mi355x-atom"], capsys)
    assert code == 2
    assert f"{CHANGELOG}:{line}: file is not valid UTF-8: found byte 0xe9" in err
    assert (real_repo / CHANGELOG).read_bytes() == broken


def test_binary_evidence() -> None:
    assert binary_evidence(b"- config-keys:\n    - a\n") is None
    assert binary_evidence("x".encode("utf-16-le")) == (1, "a NUL byte")
    assert binary_evidence(b"\xfe\xff\x00x") == (0, "a UTF-16 byte-order mark")
    assert binary_evidence(b"\xff\xfe\x00\x00") == (0, "a UTF-32 byte-order mark")
    # Past git's 8000-byte probe a NUL is a forbidden byte of a text file, not a sign of a binary one.
    assert binary_evidence(b"a\n" * 5000 + b"\x00") is None
    assert line_and_column(b"ab\ncd\x00", 5) == (2, 3)
