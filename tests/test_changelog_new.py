"""``ci-tools changelog new``: a correctly separated entry, every existing byte kept."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from ci_tools.changelog.new import NewEntrySpec, append_entry, render_entry
from ci_tools.errors import UsageError
from test_changelog_support import E1, MASTER, Repo, base_files, new_repo, run

ATOM = "benchmarks/single_node/fixed_seq_len/dsr1_fp8_mi355x_atom.sh"


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Repo, str]:
    return new_repo(tmp_path, monkeypatch, base_files())


def changelog(r: Repo) -> bytes:
    return (r.path / "perf-changelog.yaml").read_bytes()


def test_new_entry_with_keys_appends_after_one_blank_line(repo: tuple[Repo, str], capsys: pytest.CaptureFixture[str]) -> None:
    r, base = repo
    code, out, err = run(["changelog", "new", "--repo", str(r.path), "--key", "dsr1-fp8-mi355x-atom", "--key", "*mi355x*",
                          "-m", 'Set "max-num-seqs" to 2x CONC: 调优', "-m", "Keep TP8", "--scenario-type", "fixed-seq-len"], capsys)
    assert (code, out) == (0, "")
    assert err == "appended an entry for dsr1-fp8-mi355x-atom, *mi355x* at perf-changelog.yaml:7\n"
    text = changelog(r)
    assert text == E1 + (
        "\n- config-keys:\n    - dsr1-fp8-mi355x-atom\n    - '*mi355x*'\n  scenario-type:\n    - fixed-seq-len\n"
        '  description:\n    - "Set \\"max-num-seqs\\" to 2x CONC: 调优"\n    - "Keep TP8"\n'
        "  pr-link: https://github.com/acme/bench/pull/XXX\n"
    ).encode()
    assert yaml.safe_load(text)[1]["description"][0] == 'Set "max-num-seqs" to 2x CONC: 调优'
    code, out, _ = run(["changelog", "lint", "--repo", str(r.path), "--base", base, "--pr-number", "9"], capsys)
    assert (code, out) == (0, "")


def test_keys_default_to_the_configs_the_change_affects(repo: tuple[Repo, str], capsys: pytest.CaptureFixture[str]) -> None:
    r, base = repo
    r.write({"configs/amd-master.yaml": MASTER.replace(b"rocm/atom:v1", b"rocm/atom:v2")})
    code, _, err = run(["changelog", "new", "--repo", str(r.path), "--base", base, "--pr-number", "12", "-m", "Bump ATOM"], capsys)
    assert code == 0 and "appended an entry for dsr1-fp8-mi355x-atom" in err
    assert changelog(r).endswith(b"\n\n- config-keys:\n    - dsr1-fp8-mi355x-atom\n  description:\n    - \"Bump ATOM\"\n"
                                 b"  pr-link: https://github.com/acme/bench/pull/12\n")
    code, out, _ = run(["check", "--repo", str(r.path), "--base", base, "--pr-number", "12",
                        "--select", "changelog-", "--select", "coverage-"], capsys)
    assert (code, out) == (0, "")


def test_no_affected_config_and_no_key_is_a_usage_error(repo: tuple[Repo, str], capsys: pytest.CaptureFixture[str]) -> None:
    r, base = repo
    r.write({"README.md": b"docs\n"})
    code, _, err = run(["changelog", "new", "--repo", str(r.path), "--base", base, "-m", "Docs"], capsys)
    assert code == 2
    assert "no config is affected by the changes since" in err and "pass --key KEY" in err
    assert changelog(r) == E1


def test_dry_run_prints_and_writes_nothing(repo: tuple[Repo, str], capsys: pytest.CaptureFixture[str]) -> None:
    r, _ = repo
    code, out, _ = run(["changelog", "new", "--repo", str(r.path), "--key", "dsr1-*", "-m", "x", "--append-only", "--dry-run"], capsys)
    assert code == 0
    assert out == ('- config-keys:\n    - dsr1-*\n  description:\n    - "x"\n'
                   "  pr-link: https://github.com/acme/bench/pull/XXX\n  append-only: true\n")
    assert changelog(r) == E1


def test_append_keeps_every_entry_byte_and_separates_by_one_blank_line() -> None:
    new = render_entry(NewEntrySpec(("k",), ("m",), "XXX"))
    assert append_entry(E1, new) == E1 + b"\n" + new
    assert append_entry(E1 + b"\n", new) == E1 + b"\n" + new  # a base already ending in a blank line
    assert append_entry(E1[:-1], new) == E1 + b"\n" + new  # no final newline
    assert append_entry(E1 + b"  \n", new) == E1 + b"  \n" + new  # a whitespace-only line is kept as it is
    assert append_entry(None, new) == new
    # Extra blank lines at the end are not history under the default whitespace policy: they become one
    # (tests/test_changelog_whitespace.py: the other policy, and the gate's verdict on both).
    assert append_entry(E1 + b"\n\n", new) == E1 + b"\n" + new


def test_empty_description_is_refused() -> None:
    with pytest.raises(UsageError, match="non-empty description"):
        render_entry(NewEntrySpec(("k",), ("  ",), "XXX"))


def test_a_key_that_matches_no_config_is_refused(repo: tuple[Repo, str], capsys: pytest.CaptureFixture[str]) -> None:
    r, _ = repo
    code, _, err = run(["changelog", "new", "--repo", str(r.path), "--key", "dsr1-fp8-mi355x-atomm", "-m", "x"], capsys)
    assert code == 2
    assert "--key dsr1-fp8-mi355x-atomm matches no config in the work tree (1 configs)" in err
    assert changelog(r) == E1


def test_an_append_that_would_not_read_back_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    """A changelog that is a mapping (or does not parse) would take the appended entry for something else:
    before, `changelog new` wrote it anyway; now the file is left as it was."""
    from ci_tools.cli.main import main

    for text in (b"config-keys: [a]\ndescription: [x]\n", b'- config-keys: [a]\n  description: ["x\n'):
        (tmp_path / "perf-changelog.yaml").write_bytes(text)
        assert main(["changelog", "new", "--repo", str(tmp_path), "--key", "a", "-m", "y"]) == 2
        assert (tmp_path / "perf-changelog.yaml").read_bytes() == text
