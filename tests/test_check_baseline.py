"""`check` judges the pull request, not the repository: new, unchanged and absent findings.

The acceptance cases run on the real InferenceX tree at 843c6254f, which has
13 real defects on its main branch (8 undefined runner labels, 5 missing
recipes), as the PR job runs inside GitHub Actions: a `pull_request` event,
the job summary file, the default `github` format.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ci_tools.check.marking import mark
from ci_tools.findings import Baseline, Finding, Location, Severity
from test_changelog_support import E1, base_files, entry, git, new_repo, run

PR = 4242
KEY = "dsr1-fp8-mi325x-sglang"  # its recipe passes --mem-fraction-static=0.8 to all 5 jobs
ENTRY = ("\n- config-keys:\n    - {key}\n  description:\n    - \"{text}\"\n"
         f"  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/{PR}\n")
RUNNER_LINE = 1629  # configs/amd-master.yaml: `runner: cluster:mi325x-tw` of dsv4-fp8-mi325x-vllm
RULES = "https://github.com/ci-tools/ci-tools/blob/main/docs/rules/"


def _finding(rule: str, message: str, line: int, path: str = "configs/a.yaml") -> Finding:
    return Finding(rule, Severity.ERROR, message, Location(path, line, 1))


# --- matching ---------------------------------------------------------------------------------------------


def test_a_finding_whose_lines_moved_is_unchanged_and_equal_ones_match_by_count() -> None:
    base = [_finding("runner-undefined", "label `x` of `a` (defined at line 3)", 10),
            _finding("recipe-missing", "no recipe for this row of `q`", 20),
            _finding("recipe-missing", "no recipe for this row of `q`", 21)]
    head = [_finding("runner-undefined", "label `x` of `a` (defined at line 5)", 12),  # two lines added above
            _finding("recipe-missing", "no recipe for this row of `q`", 22),  # one of the two rows fixed
            _finding("runner-undefined", "label `y` of `b`", 40)]
    marked = mark(head, base)
    assert [(f.location.line, f.baseline) for f in marked] == [
        (12, Baseline.UNCHANGED), (22, Baseline.UNCHANGED), (40, Baseline.NEW), (21, Baseline.ABSENT)]


def test_a_message_naming_its_revision_is_compared_as_found_at_the_head() -> None:
    base = [_finding("file-missing", "file x does not exist in the main (0123456789ab)", 0)]
    head = [_finding("file-missing", "file x does not exist in the work tree", 0)]
    assert [f.baseline for f in mark(head, base, ("main (0123456789ab)", "work tree"))] == [Baseline.UNCHANGED]
    assert [f.baseline for f in mark(head, base)] == [Baseline.NEW, Baseline.ABSENT]


# --- the acceptance cases on the real tree ------------------------------------------------------------------


@pytest.fixture
def pr_job(real_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:  # noqa: F811
    """The real tree on a PR branch, and the environment of the PR job: a pull_request event, a job summary."""
    base = git(real_repo, "rev-parse", "HEAD")
    git(real_repo, "checkout", "-q", "-b", "feature")
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"number": PR, "pull_request": {
        "number": PR, "body": "", "base": {"sha": base, "ref": "main"}, "head": {"sha": "f" * 40}},
        "repository": {"full_name": "SemiAnalysisAI/InferenceX"}}), encoding="utf-8")
    summary = tmp_path / "summary.md"
    for name, value in {"GITHUB_ACTIONS": "true", "GITHUB_EVENT_NAME": "pull_request", "GITHUB_EVENT_PATH": str(event),
                        "GITHUB_STEP_SUMMARY": str(summary), "GITHUB_SERVER_URL": "https://github.com",
                        "GITHUB_REPOSITORY": "SemiAnalysisAI/InferenceX"}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(real_repo)
    return real_repo, summary


def _append(repo: Path, text: str, key: str = KEY) -> None:
    with (repo / "perf-changelog.yaml").open("a", encoding="utf-8") as out:
        out.write(ENTRY.format(key=key, text=text))


def _annotations(out: str) -> list[str]:
    return [line for line in out.splitlines() if line.startswith("::")]


def test_a_pr_with_one_false_claim_fails_on_that_claim_alone(pr_job: tuple[Path, Path],
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    repo, summary = pr_job
    _append(repo, "Set --mem-fraction-static to 0.9")
    code, out, err = run(["check"], capsys)
    assert code == 1
    annotations = _annotations(out)
    assert len(annotations) == 1 and annotations[0].startswith(
        "::error file=perf-changelog.yaml,line=6385,col=12,endLine=6385,endColumn=40,title=ci-tools claim-contradicted")
    assert "not annotated: 13 already on the base revision; they are listed in the job summary" in out
    assert err.endswith("773 changelog entries (1 appended): 1 new, 13 already on the base (14 error(s))\n")
    text = summary.read_text(encoding="utf-8")
    assert text.startswith("### ci-tools: 1 new, 13 already on the base (14 error(s), 0 warning(s), 0 note(s))\n")
    # The change's own finding first, its location a link to the line at the commit checked.
    head = git(repo, "rev-parse", "HEAD")
    first = text.split("\n| error |", 2)[1]
    assert first.startswith(f" [`claim-contradicted`]({RULES}claim-contradicted.md) | [`perf-changelog.yaml:6385:12`]"
                            f"(https://github.com/SemiAnalysisAI/InferenceX/blob/{head}/perf-changelog.yaml#L6385) |")
    assert text.index("claim-contradicted") < text.index("<details><summary>13 already on the base revision</summary>")


def test_the_same_pr_with_a_true_claim_passes_and_shows_the_existing_errors(pr_job: tuple[Path, Path],
                                                                            capsys: pytest.CaptureFixture[str]) -> None:
    repo, summary = pr_job
    _append(repo, "Set --mem-fraction-static to 0.8")
    code, out, err = run(["check"], capsys)
    assert code == 0 and _annotations(out) == []
    assert err.endswith(": 0 new, 13 already on the base (13 error(s))\n")
    text = summary.read_text(encoding="utf-8")
    assert "\nNo new findings.\n" in text
    collapsed = text.split("<details><summary>13 already on the base revision</summary>", 1)[1].split("</details>")[0]
    rows = [line for line in collapsed.splitlines() if line.startswith("| error |")]
    assert len(rows) == 13
    assert sum("runner-undefined" in r for r in rows) == 8 and sum("recipe-missing" in r for r in rows) == 5
    # `fail-on: all` (or --fail-on all): the old behaviour, for repositories that want every error to fail
    (repo / ".ci-tools.yaml").write_text("fail-on: all\n", encoding="utf-8")
    assert run(["check"], capsys)[0] == 1


def test_a_pr_fixing_a_runner_label_passes_and_shows_the_fix(pr_job: tuple[Path, Path],
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    repo, summary = pr_job
    master = repo / "configs" / "amd-master.yaml"
    lines = master.read_text(encoding="utf-8").split("\n")
    assert lines[RUNNER_LINE - 1] == "  runner: cluster:mi325x-tw"
    lines[RUNNER_LINE - 1] = "  runner: cluster:mi325x-amds"
    master.write_text("\n".join(lines), encoding="utf-8")
    _append(repo, "Run on the mi325x-amds cluster", key="dsv4-fp8-mi325x-vllm")
    code, out, err = run(["check"], capsys)
    # No error of its own. The new fleet's launcher starts the recipe with the workflow's environment where
    # mi325x-tw's docker run passed only its -e list: PYTHONPYCACHEPREFIX and AIPERF_FAILED_REQUEST_THRESHOLD
    # now reach the server as the workflow sets them (two warnings).
    assert code == 0 and not any(a.startswith("::error") for a in _annotations(out))
    assert err.endswith(": 2 new, 12 already on the base, 1 fixed (12 error(s), 2 warning(s))\n")
    fixed = summary.read_text(encoding="utf-8").split("<details><summary>1 fixed by this change</summary>", 1)[1]
    base = git(repo, "rev-parse", "main")
    assert (f"[`configs/amd-master.yaml:{RUNNER_LINE}:11`](https://github.com/SemiAnalysisAI/InferenceX/blob/{base}/"
            f"configs/amd-master.yaml#L{RUNNER_LINE}) | runner label `cluster:mi325x-tw` of `dsv4-fp8-mi325x-vllm`") in fixed
    code, out, _ = run(["check", "--format", "json"], capsys)
    absent = [f for f in json.loads(out)["findings"] if f.get("baseline") == "absent"]
    assert [(f["rule"], f["line"], f["data"]["config_key"]) for f in absent] == [
        ("runner-undefined", RUNNER_LINE, "dsv4-fp8-mi325x-vllm")]



def test_sarif_carries_the_baseline_state_and_no_result_for_a_fix() -> None:
    from ci_tools.report import sarif

    marked = mark([_finding("runner-undefined", "label `x`", 3), _finding("claim-contradicted", "says 1", 9)],
                  [_finding("runner-undefined", "label `x`", 3), _finding("runner-undefined", "label `y`", 5)])
    results = sarif.to_sarif(marked)["runs"][0]["results"]
    # code scanning closes the alert of a result that is gone; a result marked absent would open one
    assert [(r["ruleId"], r["baselineState"]) for r in results] == [
        ("runner-undefined", "unchanged"), ("claim-contradicted", "new")]


# --- the base's side of the recipe rules ----------------------------------------------------------------------

GUARD = b'if [ "$TP" -eq 8 ]; then\n    echo "TP8 is not supported" >&2\n    exit 1\nfi\n'
ATOM = "benchmarks/single_node/fixed_seq_len/dsr1_fp8_mi355x_atom.sh"


@pytest.mark.parametrize("guard_at_base", [True, False], ids=["guard-at-base", "guard-added"])
def test_a_recipe_finding_is_new_only_when_the_change_brings_it(guard_at_base: bool, tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    files = base_files()
    plain = files[ATOM] or b""
    guarded = plain.replace(b"python3 -m", GUARD + b"python3 -m")
    repo, base = new_repo(tmp_path, monkeypatch, {**files, ATOM: guarded if guard_at_base else plain})
    # The change edits the server line (so the recipes stage evaluates the jobs) and keeps or adds the guard.
    repo.write({ATOM: guarded.replace(b'--port "$PORT"', b'--port "$PORT" --max-num-seqs 64'),
                "perf-changelog.yaml": E1 + b"\n" + entry(desc="Cap the batch")})
    code, out, _ = run(["check", "--repo", str(repo.path), "--base", base, "--pr-number", "3", "--format", "json",
                        "--select", "recipe-"], capsys)
    found = [(f["rule"], f["line"], f["baseline"]) for f in json.loads(out)["findings"]]
    if guard_at_base:
        assert (code, found) == (0, [("recipe-early-exit", 3, "unchanged")])
    else:
        assert (code, found) == (1, [("recipe-early-exit", 3, "new")])


def test_validate_of_the_base_beside_the_head_equals_a_full_load(real_repo: Path) -> None:  # noqa: F811
    """The base is loaded beside the head (a changed master file parsed only where it differs); its
    validate findings are those of the base loaded on its own."""
    from ci_tools.check import CheckContext, Comparison
    from ci_tools.config import load_config
    from ci_tools.model.repository import load_repo
    from ci_tools.revision.snapshot import GitSnapshot
    from ci_tools.validation.validate import validate

    master = real_repo / "configs" / "nvidia-master.yaml"
    text = master.read_text(encoding="utf-8")
    master.write_text(re.sub(r"conc-end: 64\b", "conc-end: 128", text, count=3), encoding="utf-8")
    config = load_config(real_repo)
    ctx = CheckContext(config, Comparison(git(real_repo, "rev-parse", "HEAD")))
    from ci_tools.check.baseline import _validate_inputs_unchanged, base_validate_repo

    assert not _validate_inputs_unchanged(ctx)
    beside = validate(base_validate_repo(ctx))
    alone = validate(load_repo(GitSnapshot(real_repo, "HEAD"), config, with_changelog=False))
    assert sorted(f.sort_key() for f in beside) == sorted(f.sort_key() for f in alone) and len(alone) == 13


def test_the_base_is_not_validated_again_when_nothing_validate_reads_changed(real_repo: Path) -> None:  # noqa: F811
    from ci_tools.check import CheckContext, Comparison
    from ci_tools.check.baseline import _validate_inputs_unchanged
    from ci_tools.config import load_config

    config = load_config(real_repo)
    head = git(real_repo, "rev-parse", "HEAD")

    def unchanged() -> bool:
        return _validate_inputs_unchanged(CheckContext(config, Comparison(head)))

    _append(real_repo, "Rerun")
    recipe = real_repo / "benchmarks" / "single_node" / "fixed_seq_len" / "dsr1_fp8_mi325x.sh"
    recipe.write_text(recipe.read_text(encoding="utf-8").replace("=0.8 ", "=0.85 "), encoding="utf-8")
    assert unchanged()  # an appended entry and a recipe's text: validate reads neither
    (real_repo / "benchmarks" / "single_node" / "agentic" / "qwen3.5_fp8_h100.sh").write_text("#!/bin/bash\n")
    assert not unchanged()  # a new file can be the recipe a row looks for


def test_defects_in_a_master_file_the_change_edits_elsewhere_stay_the_bases(
        real_repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """The base beside the head is assembled from its configs where the change edited the file (model/beside.py):
    a schema defect or a key YAML reads as a number in a config the change does not touch is the base's, not the
    change's (InferenceX pull request 1990 edited one config of nvidia-master.yaml and was told of 83 new schema
    errors its base had)."""
    from test_changelog_support import clear_github_env

    clear_github_env(monkeypatch)
    monkeypatch.chdir(real_repo)
    master = real_repo / "configs" / "amd-master.yaml"
    text = master.read_text(encoding="utf-8")
    mtp = text[text.index("dsr1-fp8-mi355x-sglang-mtp:\n"):text.index("qwen3.5-fp8-mi325x-sglang:\n")]
    defective = text.replace("dsr1-fp8-mi355x-sglang-mtp:\n  image:", "dsr1-fp8-mi355x-sglang-mtp:\n  duration: 300\n  image:")
    master.write_text(defective + "\n" + mtp.replace("dsr1-fp8-mi355x-sglang-mtp:", "2026:"), encoding="utf-8")
    git(real_repo, "commit", "-qam", "main with two defects")
    base = git(real_repo, "rev-parse", "HEAD")
    edited = master.read_text(encoding="utf-8")
    at = edited.index("dsr1-fp8-mi355x-sglang:\n")
    row = edited.index("      - { tp: 8, conc-start: 4, conc-end: 64 }\n", at)
    master.write_text(edited[:row] + edited[row:].replace("conc-end: 64 }", "conc-end: 128 }", 1), encoding="utf-8")
    _append(real_repo, "Run TP8 up to concurrency 128", key="dsr1-fp8-mi355x-sglang")
    code, out, _ = run(["check", "--base", base, "--pr-number", str(PR), "--format", "json"], capsys)
    found = json.loads(out)["findings"]
    defects = [(f["rule"], f["baseline"]) for f in found if f["rule"] in ("config-schema", "config-key-invalid")]
    assert sorted(defects) == [("config-key-invalid", "unchanged"), ("config-schema", "unchanged")]
    assert not [f for f in found if f["baseline"] == "new" and f["severity"] == "error"]
