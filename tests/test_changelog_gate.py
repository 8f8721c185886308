"""The append-only gate on byte strings (every rule, the legal cases next to the violations) and through git."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from ci_tools.changelog.layout import Layout
from ci_tools.changelog.lint import ChangelogChange, HeadConfigs, lint_changelog
from ci_tools.config import ProjectConfig
from ci_tools.findings import sort_findings
from test_changelog_support import E1, Repo, base_files, clear_github_env, entry, run

CONFIG = ProjectConfig(root=Path("."), repository_setting="acme/bench")
KEYS = HeadConfigs(("dsr1-fp8-mi355x-atom", "gptoss-fp4-mi355x-vllm"), ("configs/amd-master.yaml",))
E2 = entry("gptoss-*", "Bump the vLLM image", "https://github.com/acme/bench/pull/2")
BASE = E1 + b"\n" + E2
NEW = entry()


def lint(base: bytes | None, head: bytes | None, pr: int | None = None, *, compared: bool = True) -> list[tuple[str, int]]:
    change = ChangelogChange("perf-changelog.yaml", base, head, compared=compared)
    findings = sort_findings(lint_changelog(change, CONFIG, pr_number=pr, head_configs=lambda: KEYS))
    return [(f.rule, f.location.line) for f in findings]


def test_plain_append_is_clean_and_parses_only_the_new_entry() -> None:
    change = ChangelogChange("perf-changelog.yaml", BASE, BASE + b"\n" + NEW)
    assert lint_changelog(change, CONFIG, pr_number=None, head_configs=lambda: KEYS) == []
    assert [e.line for e in change.new_entries] == [13]
    assert change.new_entries[0].config_keys[0][0] == "dsr1-fp8-mi355x-atom"
    assert change.new_entries[0].config_keys[0][1].line == 14


def test_unchanged_file_has_no_findings_even_with_bad_history() -> None:
    bad = BASE.replace(b"pull/1\n", b"pull/1  \n") + b"\n\n"
    assert lint(bad, bad) == []


def test_several_appended_entries_each_checked() -> None:
    third = entry("gptoss-fp4-mi355x-vllm", link="https://github.com/acme/bench/pull/XXX")
    assert lint(BASE, BASE + b"\n" + NEW + b"\n" + third) == [("changelog-pr-link", 23)]
    assert lint(BASE, BASE + b"\n" + NEW + b"\n" + third, pr=9) == [("changelog-pr-link", 17)]


def test_base_ending_in_a_blank_line_then_append_is_legal() -> None:
    assert lint(BASE + b"\n", BASE + b"\n" + NEW) == []


def test_base_without_final_newline_may_get_it_with_the_append() -> None:
    assert lint(BASE[:-1], BASE + b"\n" + NEW) == []
    # Gluing text onto the last historical line changes history.
    assert lint(BASE[:-1], BASE[:-1] + b"x\n") == [("changelog-history-changed", 11)]


def test_whitespace_only_separator_counts_as_blank_but_is_trailing_whitespace() -> None:
    assert lint(BASE, BASE + b"  \n" + NEW) == [("changelog-trailing-whitespace", 12)]
    assert lint(BASE, BASE + b"  \n\n" + NEW) == [("changelog-trailing-whitespace", 12), ("changelog-separator", 14)]


def test_comment_lines_before_a_new_entry_are_not_history_edits() -> None:
    assert lint(BASE, BASE + b"\n# next release\n" + NEW) == [("changelog-separator", 14)]


def test_yaml_errors_in_the_appended_part_point_at_head_lines() -> None:
    broken = NEW.replace(b'    - "Raise the range"', b'    - "Raise the range')
    found = lint(BASE, BASE + b"\n" + broken)
    assert found[0][0] == "yaml-syntax" and found[0][1] >= 16
    dup = NEW + b"  pr-link: https://github.com/acme/bench/pull/4\n"
    assert lint(BASE, BASE + b"\n" + dup) == [("yaml-duplicate-key", 18)]


def test_count_mismatch_names_each_entry_that_does_not_start_with_config_keys() -> None:
    flow = b'- {config-keys: [dsr1-fp8-mi355x-atom], description: ["x"], pr-link: "https://github.com/acme/bench/pull/3"}\n'
    assert lint(BASE, BASE + b"\n" + NEW + b"\n" + flow) == [("changelog-entry-count", 19)]
    change = ChangelogChange("perf-changelog.yaml", BASE, BASE + b"\n" + flow)
    (finding,) = lint_changelog(change, CONFIG, pr_number=None, head_configs=lambda: KEYS)
    assert finding.message.startswith("entry starts with `- {config-keys: [dsr1-fp8-mi355x-atom]")
    assert finding.data == {"config_keys_lines": 0, "entries": 1}


def test_pr_link_correction_alone_is_legal_and_must_be_canonical() -> None:
    placeholder = BASE.replace(b"pull/2\n", b"pull/XXX\n")
    assert lint(placeholder, BASE) == []
    assert lint(placeholder, BASE.replace(b"pull/2\n", b"pull/2/changes\n")) == [("changelog-pr-link-correction", 11)]
    assert lint(placeholder, BASE + b"\n" + NEW) == [("changelog-correction-mixed", 11)]
    # Quotes around the same link are not a correction: history changed.
    quoted = BASE.replace(b"pr-link: https://github.com/acme/bench/pull/2", b"pr-link: 'https://github.com/acme/bench/pull/2'")
    assert lint(BASE, quoted) == [("changelog-history-changed", 11)]


def test_history_edits_point_at_head_and_base_lines() -> None:
    change = ChangelogChange("perf-changelog.yaml", BASE, b"# header\n" + BASE.replace(b"Bump the vLLM", b"Bump vLLM") + b"\n" + NEW)
    findings = sort_findings(lint_changelog(change, CONFIG, pr_number=None, head_configs=lambda: KEYS))
    assert [(f.rule, f.location.line, [r.line for r in f.related]) for f in findings] == [
        ("changelog-history-changed", 1, [1]),
        ("changelog-history-changed", 11, [10]),
    ]


def test_removed_and_inserted_entries() -> None:
    assert lint(BASE, E2) == [("changelog-entry-removed", 1)]
    assert lint(BASE, E1 + b"\n" + NEW + b"\n" + E2) == [("changelog-entry-not-at-end", 7)]
    assert lint(BASE, None) == [("changelog-entry-removed", 0)]


def test_new_changelog_file_is_checked_whole_and_its_first_entry_needs_no_separator() -> None:
    assert lint(None, E1) == []
    assert lint(None, b"\n" + E1) == []
    assert lint(None, b"\n\n" + E1) == [("changelog-separator", 3)]
    assert lint(None, b"") == [("changelog-not-a-list", 1)]


def test_without_a_base_only_file_rules_run() -> None:
    history = BASE.replace(b"pull/1\n", b"pull/1  \n").replace(b"pull/2", b"pull/XXX")
    assert lint(None, history, compared=False) == []
    assert lint(None, history + b"\n", compared=False) == [("changelog-trailing-blank-line", 12)]
    assert lint(None, history.replace(b"  description", b"\tdescription", 1), compared=False) == [
        ("changelog-forbidden-byte", 3), ("yaml-syntax", 3)]


def test_layout_blocks_and_gaps() -> None:
    layout = Layout(BASE + b"\n\n" + NEW + b"\n")
    assert [(b.start, b.end, b.gap) for b in layout.blocks] == [(1, 5, 1), (7, 11, 2), (14, 18, 1)]
    assert layout.blank_lines_above(14) == 2
    assert layout.entry_start_lines() == [1, 7, 14]


# --- through git and the CLI -------------------------------------------------------------


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Repo:
    clear_github_env(monkeypatch)
    return Repo(tmp_path / "repo")


def test_cli_lint_between_two_commits(repo: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    base = repo.commit(base_files(BASE))
    head = repo.commit({"perf-changelog.yaml": BASE + b"\n\n" + NEW.replace(b"pull/3", b"pull/XXX")})
    code, out, _ = run(["changelog", "lint", "--repo", str(repo.path), "--base", base, "--head", head, "--format", "text"], capsys)
    assert code == 1
    assert out == (
        "perf-changelog.yaml:14:1: error: new entry is preceded by 2 blank lines; expected exactly one blank line [changelog-separator]\n"
        "perf-changelog.yaml:18:12: error: pr-link `https://github.com/acme/bench/pull/XXX` is a placeholder; expected a canonical "
        "link https://github.com/acme/bench/pull/<number> (no PR number given, so this is the main branch) [changelog-pr-link]\n"
        "2 error(s), 0 warning(s), 0 note(s)\n"
    )
    code, out, _ = run(["changelog", "lint", "--repo", str(repo.path), "--base", base, "--head", head,
                        "--pr-number", "12", "--select", "changelog-pr-link"], capsys)
    assert (code, out) == (0, "")


def test_cli_lint_work_tree_against_head(repo: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    repo.commit(base_files(BASE))
    repo.write({"perf-changelog.yaml": BASE + b"\n" + NEW})
    code, out, err = run(["changelog", "lint", "--repo", str(repo.path), "--base", "HEAD"], capsys)
    assert (code, out, err) == (0, "", "")


def test_cli_duplicate_key_reported_once_by_check(repo: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    base = repo.commit(base_files(BASE))
    repo.commit({"perf-changelog.yaml": BASE + b"\n" + NEW + b"  pr-link: https://github.com/acme/bench/pull/4\n"})
    code, out, _ = run(["check", "--repo", str(repo.path), "--base", base, "--select", "yaml-duplicate-key"], capsys)
    assert code == 1
    assert out.count("[yaml-duplicate-key]") == 1
    assert out.startswith("perf-changelog.yaml:18:3: error: duplicate key `pr-link`: first defined at line 17")


def test_unknown_base_revision_is_a_usage_error(repo: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    repo.commit(base_files(BASE))
    code, out, err = run(["changelog", "lint", "--repo", str(repo.path), "--base", "no-such-branch"], capsys)
    assert code == 2 and out == ""
    assert "unknown revision 'no-such-branch'" in err and "fetch-depth: 0" in err and "Traceback" not in err


def test_shallow_clone_without_the_base_says_what_to_do(repo: Repo, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = repo.commit(base_files(BASE))
    repo.commit({"perf-changelog.yaml": BASE + b"\n" + NEW})
    clone = tmp_path / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "1", f"file://{repo.path}", str(clone)], check=True, capture_output=True)
    code, _, err = run(["check", "--repo", str(clone), "--base", base], capsys)
    assert code == 2
    assert "which is a shallow clone" in err and "fetch-depth: 0" in err


def test_snapshot_refuses_paths_outside_the_repository(repo: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    base = repo.commit(base_files(BASE))
    (repo.path / ".ci-tools.yaml").write_text("repository: acme/bench\nchangelog: ../outside.yaml\n")
    code, _, err = run(["changelog", "lint", "--repo", str(repo.path), "--base", base], capsys)
    assert code == 2
    assert "'../outside.yaml' is outside the repository" in err


from hypothesis import given, settings
from hypothesis import strategies as st

_PIECES = st.sampled_from([
    b"- config-keys:\n", b"    - dsr1-fp8-mi355x-atom\n", b"  description:\n", b'    - "x"\n', b"  pr-link: XXX\n",
    b"\n", b"  \n", b"\t", b"\r\n", b"\x00", b"\xe9", b"- ", b"key: [", b"  append-only: true\n", b"#c\n", b"  pr-link: ",
])


@settings(max_examples=200, deadline=None)
@given(history=st.lists(_PIECES, max_size=8), tail=st.lists(_PIECES, max_size=12), edit=st.booleans())
def test_any_bytes_give_findings_never_a_crash(history: list[bytes], tail: list[bytes], edit: bool) -> None:
    base = BASE + b"".join(history)
    head = (base.replace(b"Bump", b"Raise") if edit else base) + b"".join(tail)
    change = ChangelogChange("perf-changelog.yaml", base, head)
    findings = lint_changelog(change, CONFIG, pr_number=None, head_configs=lambda: KEYS)
    lines = head.count(b"\n") + 1
    assert all(0 <= f.location.line <= lines for f in findings)
    assert all(f.message and f.rule.startswith(("changelog-", "yaml-")) for f in findings)


def test_append_only_entry_for_a_brand_new_config_only_adds(repo: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    from test_changelog_support import MASTER

    base = repo.commit(base_files(BASE))
    twin = MASTER.replace(b"dsr1-fp8-mi355x-atom:", b"dsr1-fp8-mi355x-atom-mtp:")
    repo.commit({"configs/amd-master.yaml": MASTER + b"\n" + twin,
                 "perf-changelog.yaml": BASE + b"\n" + entry("dsr1-fp8-mi355x-atom-mtp", extra="  append-only: true\n")})
    code, out, _ = run(["check", "--repo", str(repo.path), "--base", base, "--select", "changelog-append-only"], capsys)
    assert (code, out) == (0, "")


def test_a_line_end_conversion_of_the_whole_file_is_one_finding() -> None:
    # an editor saving the changelog with CRLF changes every entry: one finding says so, not one per entry
    many = b"\n".join(entry("gptoss-*", f"Change {i}", f"https://github.com/acme/bench/pull/{i}") for i in range(30))
    change = ChangelogChange("perf-changelog.yaml", many, many.replace(b"\n", b"\r\n") + b"\r\n" + NEW)
    found = [f for f in lint_changelog(change, CONFIG, pr_number=None, head_configs=lambda: KEYS)
             if f.rule == "changelog-history-changed"]
    assert [(f.location.line, f.data["base_line"]) for f in found] == [(1, 1)]
    assert "every line now ends in CRLF" in found[0].message


def test_a_rewrite_of_many_entries_lists_twenty_and_counts_the_rest() -> None:
    many = b"\n".join(entry("gptoss-*", f"Change {i}", f"https://github.com/acme/bench/pull/{i}") for i in range(30))
    reindented = many.replace(b"\n    - ", b"\n      - ")
    found = sort_findings([f for f in lint_changelog(ChangelogChange("perf-changelog.yaml", many, reindented), CONFIG,
                                                     pr_number=None, head_configs=lambda: KEYS)
                           if f.rule == "changelog-history-changed"])
    assert len(found) == 21 and found[-1].data["more"] == 10
    assert "10 more historical entries changed from here on" in found[-1].message
    # each listed one is at its own entry, the count at the first entry not listed
    assert found[-1].location.line > found[-2].location.line
