"""The CLI contract: exit codes, --version, --help on every command, no tracebacks."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import click
import pytest

from ci_tools import __version__
from ci_tools.cli.main import cli, main


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ci_tools", *args], capture_output=True, text=True, cwd=cwd)


def test_version() -> None:
    proc = run("--version")
    assert proc.returncode == 0
    assert proc.stdout.strip() == f"ci-tools, version {__version__}"


def _all_commands(group: click.Group, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    out: list[tuple[str, ...]] = []
    for name, command in sorted(group.commands.items()):
        out.append((*prefix, name))
        if isinstance(command, click.Group):
            out.extend(_all_commands(command, (*prefix, name)))
    return out


@pytest.mark.parametrize("command", _all_commands(cli))
def test_help_on_every_command(command: tuple[str, ...], capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*command, "--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Usage: ci-tools " + " ".join(command))


def test_bad_usage_is_exit_2_without_traceback() -> None:
    proc = run("validate", "--no-such-flag")
    assert proc.returncode == 2
    assert "No such option '--no-such-flag'" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_missing_repo_directory_is_exit_2(tmp_path: Path) -> None:
    proc = run("validate", "--repo", str(tmp_path / "absent"))
    assert proc.returncode == 2
    assert "does not exist" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_findings_give_exit_1_and_clean_gives_0(tmp_path: Path) -> None:
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "runners.yaml").write_text("labels: {}\nhardware: {}\n")
    (tmp_path / "configs" / "a-master.yaml").write_text("key: [unclosed\n")
    proc = run("validate", "--repo", str(tmp_path), "--select", "yaml-syntax", "--format", "text")
    assert proc.returncode == 1
    assert proc.stdout.startswith("configs/a-master.yaml:2:1: error: invalid YAML")
    assert proc.stdout.rstrip().endswith("1 error(s), 0 warning(s), 0 note(s)")


def test_explain_unknown_rule_is_usage_error() -> None:
    proc = run("explain", "no-such-rule")
    assert proc.returncode == 2
    assert "unknown rule 'no-such-rule'" in proc.stderr


def test_explain_prints_all_four_sections() -> None:
    proc = run("explain", "yaml-duplicate-key")
    assert proc.returncode == 0
    for section in ("What it does", "Why", "Example", "Fix"):
        assert f"\n{section}\n" in proc.stdout



@pytest.mark.parametrize("args", [("rules",), ("explain", "claim-contradicted"), ("matrix", "--repo", "FULL")],
                         ids=["rules", "explain", "matrix"])
def test_a_reader_that_closed_the_output_ends_the_command_quietly_with_141(args: tuple[str, ...]) -> None:
    """`ci-tools ... | head` once head has gone: exit 141 as for SIGPIPE, no internal error, no ignored exception."""
    import os

    if "FULL" in args:
        from conftest import full_corpus_dir

        args = tuple(str(full_corpus_dir()) if a == "FULL" else a for a in args)
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the first byte: every write meets a closed pipe
    try:
        proc = subprocess.run([sys.executable, "-m", "ci_tools", *args], stdout=write_end, stderr=subprocess.PIPE,
                              text=True, timeout=60)
    finally:
        os.close(write_end)
    assert (proc.returncode, proc.stderr) == (141, "")
