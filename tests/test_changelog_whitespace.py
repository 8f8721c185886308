"""Blank lines between changelog entries: the gate's whitespace policy, on real InferenceX commits.

InferenceX's own changelog check lets a change delete blank or whitespace-only lines (its #623), and its
history has such edits.  Three of them, extracted under tests/data/check_real (README there):

- 0ee5ff342d54 (#1003): the base ends with two blank lines; the change leaves one and appends two entries;
- 6e01f1e25c81 (#1554): one of two blank lines between two historical entries removed, one entry appended;
- f43a0b4835ce (#1627): a whitespace-only line between two historical entries emptied, one entry appended.

With the default policy (``editable``) none is a ``changelog-history-changed`` error; with ``history`` each
is, and there an append still passes when it keeps the base's blank lines: under neither policy can every
append fail.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ci_tools.changelog.new import NewEntrySpec, append_entry, render_entry
from ci_tools.errors import UsageError
from test_changelog_support import Repo, run
from test_claims_real import replay

DATA = Path(__file__).parent / "data" / "check_real"
CASES = ("0ee5ff342d54", "6e01f1e25c81", "f43a0b4835ce")
CHANGELOG = "perf-changelog.yaml"
HISTORY = b"changelog-gate:\n  whitespace-between-entries: history\n"


def gate(repo: Repo, base: str, capsys: pytest.CaptureFixture[str]) -> list[tuple[str, int]]:
    """The changelog findings of ``check --base`` (rule, line)."""
    code, out, err = run(["check", "--repo", str(repo.path), "--base", base, "--format", "json"], capsys)
    assert code in (0, 1), err
    return sorted((f["rule"], f["line"]) for f in json.loads(out)["findings"] if str(f["rule"]).startswith("changelog"))


def with_policy(repo: Repo, policy: bytes) -> None:
    config = repo.path / ".ci-tools.yaml"
    config.write_bytes(config.read_bytes() + policy)


@pytest.mark.parametrize("case", CASES)
def test_real_edits_of_blank_lines_between_entries_pass_by_default(case: str, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    repo, base = replay(case, tmp_path, monkeypatch, data=DATA)
    assert gate(repo, base, capsys) == []


@pytest.mark.parametrize(("case", "expected"), [
    # The base's second blank line removed: a history edit, and the entry after it is not preceded by the two
    # blank lines the base ends with.
    ("0ee5ff342d54", [("changelog-history-changed", 17), ("changelog-separator", 17)]),
    ("6e01f1e25c81", [("changelog-history-changed", 15)]),
    ("f43a0b4835ce", [("changelog-history-changed", 12)]),
])
def test_with_the_history_policy_they_are_history_edits(case: str, expected: list[tuple[str, int]], tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    repo, base = replay(case, tmp_path, monkeypatch, data=DATA)
    with_policy(repo, HISTORY)
    repo.commit({}, "the history policy")
    assert gate(repo, base, capsys) == expected


@pytest.mark.parametrize("policy", [b"", HISTORY])
def test_an_append_after_a_base_ending_in_extra_blank_lines_can_pass_under_either_policy(
        policy: bytes, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """0ee5ff342d54's base ends with two blank lines: `changelog new` appends as the policy reads them, and the
    gate accepts what it wrote (before, the gate had no answer: keep the lines and the separator rule fails,
    remove one and the history rule fails)."""
    repo, _ = replay("0ee5ff342d54", tmp_path, monkeypatch, data=DATA)
    with_policy(repo, policy)
    # The base's changelog again, with the head's configs (the appended entry names a config the head adds).
    git_base = repo.commit({CHANGELOG: (DATA / "0ee5ff342d54" / "base" / CHANGELOG).read_bytes()}, "the base's log")
    before = (repo.path / CHANGELOG).read_bytes()
    assert before.endswith(b"/pull/947\n\n\n")
    code, _, err = run(["changelog", "new", "--repo", str(repo.path), "--key", "minimaxm2.5-fp8-mi355x-vllm", "-m",
                        "Upgrade vLLM image to v0.19.0"], capsys)
    assert code == 0, err
    after = (repo.path / CHANGELOG).read_bytes()
    separator = b"\n\n\n" if policy else b"\n\n"  # history keeps the base's two blank lines; editable leaves one
    assert after.startswith(before.rstrip(b"\n") + separator + b"- config-keys:\n    - minimaxm2.5-fp8-mi355x-vllm\n")
    assert after.endswith(b"/pull/XXX\n")
    repo.commit({CHANGELOG: after[:-len(b"XXX\n")] + b"1003\n"}, "the entry, as merged")
    assert gate(repo, git_base, capsys) == []
    if policy:  # under history, one blank line more than the base's is the change's, and wrong
        grown = (repo.path / CHANGELOG).read_bytes().replace(b"/pull/947\n\n\n", b"/pull/947\n\n\n\n")
        repo.commit({CHANGELOG: grown}, "one more")
        assert gate(repo, git_base, capsys) == [("changelog-separator", 19)]


def test_append_entry_follows_the_policy() -> None:
    from ci_tools.changelog.policy import GatePolicy

    new = render_entry(NewEntrySpec(("k",), ("m",), "XXX"))
    old = b"- config-keys:\n    - a\n  description:\n    - \"x\"\n  pr-link: XXX\n"
    assert append_entry(old + b"\n\n", new) == old + b"\n" + new
    assert append_entry(old + b"\n  \n\n", new) == old + b"\n" + new
    assert append_entry(old + b"\n\n", new, GatePolicy("history")) == old + b"\n\n" + new
    assert append_entry(old + b"\n  ", new, GatePolicy("history")) == old + b"\n  \n" + new
    assert append_entry(old + b"\n  ", new) == old + b"\n" + new


@pytest.mark.parametrize(("text", "message"), [
    ("changelog-gate:\n  whitespace-between-entries: free\n",
     ".ci-tools.yaml:2: `changelog-gate.whitespace-between-entries` is 'free', expected one of: editable, history"),
    ("changelog-gate:\n  blank-lines: editable\n",
     ".ci-tools.yaml:2: unknown setting `changelog-gate.blank-lines`, expected one of: whitespace-between-entries"),
])
def test_a_bad_policy_is_a_usage_error_at_its_line(text: str, message: str, tmp_path: Path) -> None:
    from ci_tools.config import load_config

    (tmp_path / ".ci-tools.yaml").write_text(text)
    with pytest.raises(UsageError) as caught:
        load_config(tmp_path)
    assert f"{caught.value.path}:{caught.value.line}: {caught.value}".endswith(message)
