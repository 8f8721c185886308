"""`check` ends with one line on stderr: what was compared, how much was checked, the result.

Machine formats stay clean: stdout holds only the JSON or SARIF document.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from test_changelog_support import git, run

# The real tree at 843c6254f: InferenceX's own generator makes 1,820 jobs of its 208 config keys.
COUNTS = "2 master file(s), 208 configs, 1,820 jobs"


def _append_entry(repo: Path) -> None:
    with (repo / "perf-changelog.yaml").open("a", encoding="utf-8") as out:
        out.write("\n- config-keys:\n    - dsr1-fp8-mi355x-atom\n  description:\n    - \"Rerun the sweep\"\n"
                  "  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/XXX\n")


@pytest.mark.parametrize("fmt", ["json", "sarif"])
def test_machine_formats_keep_stdout_a_document_and_the_line_on_stderr(fmt: str, real_repo: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    _append_entry(real_repo)
    code, out, err = run(["check", "--repo", str(real_repo), "--base", "HEAD", "--pr-number", "9999",
                          "--format", fmt, "--select", "changelog-"], capsys)
    document = json.loads(out)  # nothing but the document on stdout
    assert code == 0 and (document["findings"] == [] if fmt == "json" else document["runs"][0]["results"] == [])
    base = git(real_repo, "rev-parse", "HEAD")[:12]
    assert err.splitlines()[-1].startswith(
        f"ci-tools check: base {base} (HEAD, --base) against the work tree, 1 file(s) changed; {COUNTS}, "
        "773 changelog entries (1 appended): no findings (")
    assert "more left out by --select/--ignore)" in err


def test_a_clean_text_run_says_what_it_checked(real_repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _append_entry(real_repo)
    git(real_repo, "checkout", "-q", "-b", "feature")
    code, out, err = run(["check", "--repo", str(real_repo), "--select", "changelog-", "--format", "text"], capsys)
    base = git(real_repo, "rev-parse", "HEAD")[:12]
    assert (code, out) == (0, "")
    assert err.startswith(f"ci-tools check: base {base} (the merge-base with origin/main) against the work tree, "
                          f"1 file(s) changed; {COUNTS}, 773 changelog entries (1 appended): no findings")


def test_the_result_counts_what_was_reported(real_repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["check", "--repo", str(real_repo), "--base", "HEAD", "--format", "json"], capsys)
    summary = json.loads(out)["summary"]
    # Nothing changed: the real tree's 13 defects are all on the base, so none fails the check.
    assert code == 0 and summary["error"] == 13 and summary["baseline"] == {"new": 0, "unchanged": 13, "absent": 0}
    line = err.splitlines()[-1]
    assert line.endswith("772 changelog entries (0 appended): 0 new, 13 already on the base (13 error(s))")
    code, _, _ = run(["check", "--repo", str(real_repo), "--base", "HEAD", "--format", "json", "--fail-on", "all"], capsys)
    assert code == 1
