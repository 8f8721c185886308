"""A new user's first hour: each mistake or unusual input is one clear line and exit 2, or one finding.

The cases come from adopting ci-tools in a copy of the real InferenceX tree:
an output path in a missing directory, a concurrency the key does not run,
a command run from a subfolder, an emptied changelog, the pr-link
placeholder judged by how the base was given, `--since` with a bad
revision, findings about the PR description, and the action's own example.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from ci_tools.findings import PR_DESCRIPTION, Finding, Location, Severity, unknown_patterns
from ci_tools.report import github, sarif
from conftest import full_corpus_dir
from test_changelog_support import E1, Repo, base_files, entry, git, new_repo, run

ROOT = Path(__file__).resolve().parent.parent
KEY = "dsr1-fp8-mi325x-sglang"  # 5 jobs, conc 4..64
XXX = entry(link="https://github.com/acme/bench/pull/XXX")


@pytest.fixture
def small(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Repo, str]:
    return new_repo(tmp_path, monkeypatch, base_files())


# --- --output -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("command", [["validate"], ["check"], ["recipe", "lint"]])
def test_output_in_a_missing_directory_is_one_usage_line(small: tuple[Repo, str], command: list[str],
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    repo, _ = small
    code, out, err = run([*command, "--repo", str(repo.path), "--output", "/nonexistent/dir/x.json"], capsys)
    assert (code, out) == (2, "")
    assert err == ("ci-tools: error: cannot write --output /nonexistent/dir/x.json: the directory /nonexistent/dir "
                   "does not exist; create it first or name a file in an existing directory\n")


def test_output_naming_a_directory_is_one_usage_line(small: tuple[Repo, str], capsys: pytest.CaptureFixture[str]) -> None:
    repo, _ = small
    code, _, err = run(["validate", "--repo", str(repo.path), "--output", str(repo.path)], capsys)
    assert code == 2 and err == f"ci-tools: error: --output {repo.path} is a directory; expected a file path\n"


# --- a concurrency the key does not run --------------------------------------------------------------------


@pytest.mark.parametrize("command", [["matrix", KEY], ["recipe", "show", KEY]])
def test_a_concurrency_the_key_does_not_run_says_what_it_offers(command: list[str],
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    tree = str(full_corpus_dir())  # read only
    code, out, err = run([*command, "--repo", tree, "--conc", "3"], capsys)
    assert (code, out) == (2, "")
    assert err == (f"ci-tools: error: `--conc 3` leaves none of the 5 jobs of {KEY}; they offer: scenario "
                   "fixed-seq-len; tp 8; ep 1; conc 4,8,16,32,64\n")
    code, out, _ = run([*command, "--repo", tree, "--conc", "3", "--conc", "16"], capsys)
    assert code == 0 and "16" in out


def test_matrix_filters_that_leave_nothing_name_every_filter(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["matrix", KEY, "--repo", str(full_corpus_dir()), "--tp", "4", "--conc", "8"], capsys)
    assert code == 2 and err.startswith(f"ci-tools: error: `--conc 8 --tp 4` leaves none of the 5 jobs of {KEY};")


# --- run from a subfolder ----------------------------------------------------------------------------------


def test_validate_from_a_subfolder_reads_the_repository_root(real_repo: Path, monkeypatch: pytest.MonkeyPatch,  # noqa: F811
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(real_repo)
    top = run(["validate", "--format", "json"], capsys)
    monkeypatch.chdir(real_repo / "benchmarks" / "single_node")
    below = run(["validate", "--format", "json"], capsys)
    assert below == top
    rules = sorted({f["rule"] for f in json.loads(below[1])["findings"]})
    assert rules == ["recipe-missing", "runner-undefined"]  # the 13 real defects, no false file-missing


def test_check_from_a_subfolder_compares_with_main_and_finds_the_config(small: tuple[Repo, str],
                                                                        monkeypatch: pytest.MonkeyPatch,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    repo, base = small
    git(repo.path, "checkout", "-q", "-b", "feature")
    repo.write({"perf-changelog.yaml": E1 + b"\n" + XXX})
    monkeypatch.chdir(repo.path / "benchmarks" / "single_node")
    code, out, err = run(["check"], capsys)
    assert (code, out) == (0, "")
    assert err.startswith(f"ci-tools check: base {base[:12]} (the merge-base with main) against the work tree")


def test_the_root_is_the_nearest_git_directory_and_repo_still_wins(small: tuple[Repo, str], tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from ci_tools.config import find_root, load_config

    repo, _ = small
    deep = repo.path / "benchmarks" / "single_node" / "fixed_seq_len"
    assert find_root(deep) == repo.path.resolve()
    monkeypatch.chdir(deep)
    assert load_config(None).root == repo.path.resolve()
    assert load_config(None).repository == "acme/bench"  # .ci-tools.yaml of the root
    assert load_config(deep).root == deep.resolve()  # --repo DIR is taken as given
    plain = tmp_path / "plain" / "sub"
    plain.mkdir(parents=True)
    (plain.parent / ".ci-tools.yaml").write_text("default-branch: trunk\n")
    assert find_root(plain) == plain.parent.resolve()  # no .git anywhere: the nearest configuration


# --- the changelog ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("emptied", [b"", b"# nothing here yet\n\n"])
def test_an_emptied_changelog_is_one_finding(real_repo: Path, emptied: bytes,  # noqa: F811
                                             capsys: pytest.CaptureFixture[str]) -> None:
    (real_repo / "perf-changelog.yaml").write_bytes(emptied)
    code, out, _ = run(["check", "--repo", str(real_repo), "--base", "HEAD", "--format", "json",
                        "--select", "changelog", "--select", "yaml"], capsys)
    findings = json.loads(out)["findings"]
    assert code == 1 and len(findings) == 1, [f["rule"] for f in findings]
    assert findings[0]["rule"] == "changelog-entry-removed" and findings[0]["line"] == 1
    assert findings[0]["message"].startswith("the changelog was emptied: all 772 entries of the base revision were removed")


def test_the_placeholder_gets_one_verdict_however_the_base_is_given(small: tuple[Repo, str],
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    repo, base = small
    git(repo.path, "checkout", "-q", "-b", "feature")
    repo.write({"perf-changelog.yaml": E1 + b"\n" + XXX})
    plain = run(["check", "--repo", str(repo.path), "--select", "changelog-"], capsys)
    named = run(["check", "--repo", str(repo.path), "--base", "main", "--select", "changelog-"], capsys)
    by_sha = run(["check", "--repo", str(repo.path), "--base", base, "--select", "changelog-"], capsys)
    assert plain[:2] == named[:2] == by_sha[:2] == (0, "")
    git(repo.path, "checkout", "-q", "main")  # on the default branch itself the link must be the real one
    for argv in (["check"], ["check", "--base", base]):
        code, out, _ = run([*argv, "--repo", str(repo.path), "--select", "changelog-pr-link"], capsys)
        assert code == 1 and "is a placeholder" in out


def test_changelog_new_links_the_pr_it_knows(small: tuple[Repo, str], tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    repo, _ = small
    argv = ["changelog", "new", "--repo", str(repo.path), "--key", "dsr1-fp8-mi355x-atom", "-m", "Raise", "--dry-run"]
    assert run([*argv, "--pr-number", "41"], capsys)[1].endswith("pr-link: https://github.com/acme/bench/pull/41\n")
    assert run(argv, capsys)[1].endswith("pr-link: https://github.com/acme/bench/pull/XXX\n")
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"number": 77, "pull_request": {"number": 77, "body": "", "base": {"sha": "0" * 40}}}))
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_EVENT_NAME", "pull_request")
    monkeypatch.setenv("GITHUB_EVENT_PATH", str(event))
    assert run(argv, capsys)[1].endswith("pr-link: https://github.com/acme/bench/pull/77\n")


def test_changelog_new_refuses_a_numbered_link_to_an_unknown_repository(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    repo, _ = new_repo(tmp_path, monkeypatch, {**base_files(), ".ci-tools.yaml": None})
    code, out, err = run(["changelog", "new", "--repo", str(repo.path), "--key", "dsr1-fp8-mi355x-atom", "-m", "Raise",
                          "--pr-number", "41", "--dry-run"], capsys)
    assert (code, out) == (2, "")
    assert err.startswith("ci-tools: error: cannot write the link of PR #41: the repository is not known")


# --- claims --history --since -------------------------------------------------------------------------------


def test_since_with_an_unknown_revision_names_the_option(small: tuple[Repo, str], capsys: pytest.CaptureFixture[str]) -> None:
    repo, _ = small
    code, out, err = run(["claims", "--history", "--since", "nope", "--repo", str(repo.path)], capsys)
    assert (code, out) == (2, "")
    assert err.startswith("ci-tools: error: unknown revision 'nope' (given by --since)") and len(err.splitlines()) == 1


# --- findings about the PR description --------------------------------------------------------------------------


def _about_the_description() -> Finding:
    return Finding("claim-contradicted", Severity.ERROR, "says --max-num-seqs is 256, but the recipe passes 128",
                   Location(PR_DESCRIPTION, 3, 7, 3, 12), related=(Location("bench.sh", 4, 1, note="set here"),))


def test_a_pr_description_finding_is_an_annotation_without_a_file() -> None:
    line = github.annotation(_about_the_description())
    assert line.startswith("::error title=ci-tools claim-contradicted::PR description:3:7: says --max-num-seqs")
    assert "file=" not in line


def test_a_pr_description_finding_is_a_sarif_logical_location() -> None:
    result = sarif.to_sarif([_about_the_description()])["runs"][0]["results"][0]
    assert result["locations"] == [{"logicalLocations": [{"name": PR_DESCRIPTION, "kind": "resource"}],
                                    "message": {"text": "PR description:3:7"}}]
    assert result["relatedLocations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "bench.sh"


# --- the action's own example ---------------------------------------------------------------------------------


def test_rule_ids_the_action_and_readme_suggest_are_rules() -> None:
    texts = {"action.yml": (ROOT / "action.yml").read_text(encoding="utf-8"),
             "README.md": (ROOT / "README.md").read_text(encoding="utf-8")}
    suggested = {name: re.findall(r"--(?:ignore|select)[ =]([A-Za-z0-9_.-]+)", text) for name, text in texts.items()}
    assert suggested["action.yml"], "the action documents an --ignore example"
    for name, ids in suggested.items():
        assert unknown_patterns([i for i in ids if i != "ID"]) == [], name
    inputs = yaml.safe_load(texts["action.yml"])["inputs"]
    assert "--ignore changelog-pr-link" in inputs["args"]["description"]
