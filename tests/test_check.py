"""``ci-tools check``: what it compares with (flag, GitHub event, merge-base, nothing) and its stages."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ci_tools import check
from ci_tools.check import CheckContext, Comparison, resolve_comparison, run_check
from ci_tools.config import load_config
from ci_tools.findings import Finding, Location, Severity
from ci_tools.github.run_event import load_event, parse_event
from ci_tools.errors import UsageError
from test_changelog_support import E1, Repo, base_files, clear_github_env, entry, git, run

NEW_XXX = entry(link="https://github.com/acme/bench/pull/XXX")


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    clear_github_env(monkeypatch)


@pytest.fixture
def repo(tmp_path: Path, clean_env: None) -> Repo:
    return Repo(tmp_path / "repo")


def test_explicit_base_and_pr_number(repo: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    base = repo.commit(base_files())
    repo.commit({"perf-changelog.yaml": E1 + b"\n" + NEW_XXX})
    code, out, err = run(["check", "--repo", str(repo.path), "--base", base, "--pr-number", "5", "--select", "changelog-"], capsys)
    assert (code, out) == (0, "")
    assert err == (f"ci-tools check: base {base[:12]} (--base) against the work tree, 1 file(s) changed; 1 master file(s), "
                   "1 configs, 3 jobs, 2 changelog entries (1 appended): no findings\n")
    code, out, _ = run(["check", "--repo", str(repo.path), "--base", base, "--select", "changelog-"], capsys)
    assert code == 1 and "[changelog-pr-link]" in out


def test_local_run_compares_with_the_merge_base_of_main(repo: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    base = repo.commit(base_files())
    git(repo.path, "checkout", "-q", "-b", "feature")
    repo.commit({"perf-changelog.yaml": E1 + entry()})  # no separator
    config = load_config(repo.path)
    assert resolve_comparison(config, base=None, head=None, pr_number=None, pr_body=None, env={}) == Comparison(
        base, None, None, None, "the merge-base with main", "feature")
    code, out, err = run(["check", "--repo", str(repo.path), "--select", "changelog-"], capsys)
    assert code == 1 and err.startswith(f"ci-tools check: base {base[:12]} (the merge-base with main) against the work tree")
    assert err.endswith(": 1 new, 0 already on the base (1 error(s))\n") and len(err.splitlines()) == 1
    assert out.startswith("perf-changelog.yaml:6:1: error: new entry is preceded by no blank line")


def test_placeholder_is_fine_on_a_local_feature_branch_but_not_on_main(repo: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    repo.commit(base_files())
    git(repo.path, "checkout", "-q", "-b", "feature")
    repo.write({"perf-changelog.yaml": E1 + b"\n" + NEW_XXX})
    assert run(["check", "--repo", str(repo.path), "--select", "changelog-"], capsys)[:2] == (0, "")
    git(repo.path, "checkout", "-q", "main")
    code, out, _ = run(["check", "--repo", str(repo.path), "--select", "changelog-"], capsys)
    assert code == 1 and "is a placeholder" in out and "no PR number given, so this is the main branch" in out


def test_origin_default_branch_is_preferred(repo: Repo) -> None:
    first = repo.commit(base_files())
    git(repo.path, "update-ref", "refs/remotes/origin/main", first)
    repo.commit({"README.md": b"x\n"})
    found = resolve_comparison(load_config(repo.path), base=None, head=None, pr_number=None, pr_body=None, env={})
    assert (found.base, found.source) == (first, "the merge-base with origin/main")


def test_nothing_to_compare_validates_only_and_says_so(tmp_path: Path, clean_env: None, capsys: pytest.CaptureFixture[str]) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    for rel, data in base_files(E1 + b"\n" + NEW_XXX).items():
        (plain / rel).parent.mkdir(parents=True, exist_ok=True)
        (plain / rel).write_bytes(data or b"")
    code, out, err = run(["check", "--repo", str(plain), "--select", "changelog-"], capsys)
    assert (code, out) == (0, "")
    assert err.splitlines() == [
        f"ci-tools: note: {plain.resolve()} is not a git repository; nothing to compare, so only the head is "
        "validated (pass --base REV to check a change)",
        f"ci-tools check: the work tree alone ({plain.resolve()} is not a git repository); 1 master file(s), 1 configs, "
        "3 jobs, 2 changelog entries: no findings",
    ]


def test_repository_without_a_default_branch(repo: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    git(repo.path, "checkout", "-q", "-b", "trunk")
    repo.commit(base_files())
    code, _, err = run(["check", "--repo", str(repo.path), "--select", "changelog-"], capsys)
    assert code == 0
    assert "no --base given and no origin/main or main branch to compare with" in err


def write_event(tmp_path: Path, payload: dict[str, object]) -> Path:
    path = tmp_path / "event.json"
    path.write_text(json.dumps(payload), encoding="utf-8")
    return path


def test_github_actions_pull_request_event_gives_base_pr_and_body(repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    base = repo.commit(base_files())
    repo.commit({"perf-changelog.yaml": E1 + b"\n" + entry(link="https://github.com/acme/bench/pull/41")})
    event = write_event(tmp_path, {"number": 41, "pull_request": {
        "number": 41, "body": "Raise the range", "base": {"sha": base, "ref": "main"}, "head": {"sha": "f" * 40}},
        "repository": {"full_name": "acme/bench"}})
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_EVENT_PATH", str(event))
    monkeypatch.setenv("GITHUB_EVENT_NAME", "pull_request")
    found = resolve_comparison(load_config(repo.path), base=None, head=None, pr_number=None, pr_body=None)
    assert found == Comparison(base, None, 41, "Raise the range", "the pull_request event's base")
    code, out, _ = run(["check", "--repo", str(repo.path), "--format", "text", "--select", "changelog-"], capsys)
    assert (code, out) == (0, "")


def test_event_payload_shapes() -> None:
    push = parse_event("push", {"before": "a" * 40, "after": "b" * 40, "ref": "refs/heads/main"})
    assert (push.base_sha, push.head_sha, push.pr_number) == ("a" * 40, "b" * 40, None)
    assert parse_event("push", {"before": "0" * 40}).base_sha is None  # a new branch has no previous head
    comment = parse_event("issue_comment", {"issue": {"number": 7, "body": "b", "pull_request": {"url": "u"}}})
    assert (comment.pr_number, comment.base_sha, comment.pr_body) == (7, None, "b")
    group = parse_event("merge_group", {"merge_group": {"base_sha": "c" * 40, "head_sha": "d" * 40, "base_ref": "refs/heads/main"}})
    assert (group.base_sha, group.head_sha) == ("c" * 40, "d" * 40)
    assert parse_event("workflow_dispatch", {"repository": {"full_name": "o/r"}}).repository == "o/r"


def test_unreadable_event_payload_is_a_usage_error(tmp_path: Path) -> None:
    assert load_event({}) is None
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(UsageError, match="cannot read the event payload"):
        load_event({"GITHUB_EVENT_PATH": str(bad)})
    with pytest.raises(UsageError, match="does not exist"):
        load_event({"GITHUB_EVENT_PATH": str(tmp_path / "missing.json")})


def test_pr_body_file_reaches_the_stages(repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    base = repo.commit(base_files())
    body = tmp_path / "body.md"
    body.write_text("将 c48 及以上切换到 DEP\n", encoding="utf-8")
    seen: list[str | None] = []

    def spy(ctx: CheckContext) -> list[Finding]:
        seen.append(ctx.pr_body)
        return []

    monkeypatch.setattr(check, "STAGES", [*check.STAGES, ("spy", spy)])
    code, _, _ = run(["check", "--repo", str(repo.path), "--base", base, "--pr-body", str(body)], capsys)
    assert code == 0 and seen == ["将 c48 及以上切换到 DEP\n"]


def test_a_stage_is_one_line_and_may_be_a_lazy_reference(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    base = repo.commit(base_files())
    ctx = CheckContext(load_config(repo.path), Comparison(base))
    note = Finding("x-demo", Severity.NOTE, "from a stage", Location("README.md"))
    monkeypatch.setattr(check, "_demo_stage", lambda c: [note, note], raising=False)
    findings = run_check(ctx, [("demo", "ci_tools.check:_demo_stage")])
    assert findings == [note]  # the same finding twice is reported once


def test_context_loads_each_revision_once(repo: Repo) -> None:
    base = repo.commit(base_files())
    repo.commit({"perf-changelog.yaml": E1 + b"\n" + entry()})
    ctx = CheckContext(load_config(repo.path), Comparison(base))
    mine = [(name, stage) for name, stage in check.STAGES if name in ("validate", "changelog", "coverage")]
    assert len(mine) == 3
    assert run_check(ctx, mine) == []
    assert ctx.head_configs_repo is ctx.head_repo  # validate loaded it first; the changelog gate reused it
    assert ctx.changed_paths == frozenset({"perf-changelog.yaml"})
    assert "base_repo" not in ctx.__dict__  # nothing needed the base's configs


def test_check_at_the_root_of_a_clone_of_this_repository(tmp_path: Path, clean_env: None,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """The README's main job: `ci-tools check` with no arguments, at the repository root."""
    import os
    import subprocess

    from conftest import ROOT

    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", "--no-hardlinks", str(ROOT), str(clone)], check=True, capture_output=True)
    cwd = os.getcwd()
    os.chdir(clone)
    try:
        code, out, err = run(["check", "--format", "text"], capsys)
    finally:
        os.chdir(cwd)
    assert (code, out) == (0, "")
    assert err.startswith("ci-tools check: base ") and err.endswith(": no findings\n")


def test_appended_entries_meet_the_schema_as_validate_reports_it(repo: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    bad_history = E1.replace(b"pr-link: https://github.com/acme/bench/pull/1", b"pr-link: 1")
    base = repo.commit(base_files(bad_history))
    bad_new = entry().replace(b"  description:\n", b"  descriptions:\n")
    repo.commit({"perf-changelog.yaml": bad_history + b"\n" + bad_new})
    args = ["--repo", str(repo.path), "--select", "changelog-entry-schema", "--format", "json"]
    _, out, _ = run(["check", "--base", base, *args], capsys)
    from_check = json.loads(out)["findings"]
    _, out, _ = run(["validate", *args], capsys)
    from_validate = json.loads(out)["findings"]
    # check reports only the appended entry (history is the base's); validate reports both, the same way.
    assert [f["line"] for f in from_check] == [7, 9]
    assert {f["data"]["entry"] for f in from_check} == {2}
    assert all(f.pop("baseline") == "new" for f in from_check)  # the base's entries hold no appended one
    assert [f for f in from_validate if f["line"] >= 7] == from_check
    assert any(f["line"] == 5 for f in from_validate)


def test_pull_request_target_and_review_events_carry_the_pr() -> None:
    payload = {"pull_request": {"number": 3, "base": {"sha": "a" * 40, "ref": "main"}, "head": {"sha": "b" * 40}, "body": None}}
    for name in ("pull_request_target", "pull_request_review"):
        event = parse_event(name, payload)
        assert (event.base_sha, event.pr_number, event.pr_body, event.is_pull_request) == ("a" * 40, 3, None, True)


# --- the recipes stage, on the real InferenceX tree --------------------------------------------

MI325X_RECIPE = "benchmarks/single_node/fixed_seq_len/dsr1_fp8_mi325x.sh"


@pytest.fixture(scope="module")
def real_base(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A git repository of the real tree, committed once; tests change its work tree."""
    import shutil

    from conftest import full_corpus_dir

    repo = tmp_path_factory.mktemp("real") / "ix"
    shutil.copytree(full_corpus_dir(), repo)
    for path in [repo, *repo.rglob("*")]:  # the shared copy is read-only
        path.chmod(path.stat().st_mode | 0o200)
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "-c", "commit.gpgsign=false", "commit", "-q", "-m", "base")
    return repo, git(repo, "rev-parse", "HEAD")


@pytest.fixture
def real_change(real_base: tuple[Path, str], clean_env: None) -> object:
    repo, base = real_base
    yield repo, base
    git(repo, "checkout", "-q", "--", ".")
    git(repo, "clean", "-fdq")


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def test_check_reports_a_recipe_a_pr_breaks(real_change: tuple[Path, str], capsys: pytest.CaptureFixture[str]) -> None:
    repo, base = real_change
    lines = (repo / MI325X_RECIPE).read_text(encoding="utf-8").splitlines()
    assert lines[16] == "fi"
    edit(repo / MI325X_RECIPE, '  echo "JOB $SLURM_JOB_ID running on $SLURMD_NODENAME"\nfi\n',
         '  echo "JOB $SLURM_JOB_ID running on $SLURMD_NODENAME"\n')
    code, out, _ = run(["check", "--repo", str(repo), "--base", base, "--select", "recipe-syntax", "--format", "json"], capsys)
    found = json.loads(out)["findings"]
    assert code == 1
    assert [(f["rule"], f["path"]) for f in found] == [("recipe-syntax", MI325X_RECIPE)]
    assert found[0]["message"].startswith("bash syntax error")


def test_check_reports_an_early_exit_a_pr_adds_for_existing_jobs(real_change: tuple[Path, str],
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    repo, base = real_change
    edit(repo / MI325X_RECIPE, 'benchmark_lib.sh"\n', 'benchmark_lib.sh"\nif [ "$TP" -eq 8 ]; then\n    echo "TP8 is retired" >&2\n    exit 1\nfi\n')
    code, out, _ = run(["check", "--repo", str(repo), "--base", base, "--select", "recipe-early-exit", "--format", "json"],
                       capsys)
    [found] = json.loads(out)["findings"]
    assert code == 1
    assert (found["rule"], found["path"], found["line"]) == ("recipe-early-exit", MI325X_RECIPE, 5)
    # Every job of the configs running the recipe (dsr1-fp8-mi325x-sglang: TP8, c4..c64), and no other config's.
    assert found["message"].startswith("recipe exits with status 1 at `[ \"$TP\" -eq 8 ]` for 5 jobs of dsr1-fp8-mi325x-sglang")


def test_only_jobs_with_a_different_run_are_evaluated(real_change: tuple[Path, str], monkeypatch: pytest.MonkeyPatch) -> None:
    from ci_tools.changelog.coverage import changed_jobs
    from ci_tools.evaluation import evaluate

    repo, base = real_change
    # A changelog-only change affects no config: nothing is evaluated.
    edit(repo / "perf-changelog.yaml", "- config-keys:", "- config-keys:")
    with (repo / "perf-changelog.yaml").open("a", encoding="utf-8") as fh:
        fh.write("\n- config-keys:\n    - dsr1-fp8-mi325x-sglang\n  description:\n    - Nothing changes\n"
                 "  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/XXX\n")

    def no_evaluation(*args: object, **kwargs: object) -> None:
        raise AssertionError("a recipe was evaluated")

    monkeypatch.setattr(evaluate, "evaluate_recipe", no_evaluation)
    ctx = CheckContext(load_config(repo), Comparison(base))
    assert check.recipe_stage(ctx) == [] and ctx.affected == []
    monkeypatch.undo()
    # Raising conc-end adds one point: only that job runs something new.
    edit(repo / "configs" / "amd-master.yaml", "      - { tp: 8, conc-start: 4, conc-end: 64 }\n\n# DeepSeek-V4-Pro FP8 single-node on MI300X",
         "      - { tp: 8, conc-start: 4, conc-end: 128 }\n\n# DeepSeek-V4-Pro FP8 single-node on MI300X")
    ctx = CheckContext(load_config(repo), Comparison(base))
    assert [a.key for a in ctx.affected] == ["dsr1-fp8-mi325x-sglang"]
    assert [j.label() for j in changed_jobs(ctx.change_inputs(), ctx.affected)] == [
        "dsr1-fp8-mi325x-sglang fixed-seq-len 8192/1024 TP8/EP1 c128"]


def test_check_without_a_base_reports_exactly_the_real_trees_defects(clean_env: None,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    from conftest import full_corpus_dir
    from test_validate import REAL_DEFECTS

    tree = full_corpus_dir()  # not a git repository: nothing to compare, the head is validated
    code, out, err = run(["check", "--repo", str(tree), "--format", "json"], capsys)
    found = json.loads(out)["findings"]
    assert code == 1 and "nothing to compare" in err
    assert [(f["rule"], f["path"], f["line"], f["data"]["config_key"]) for f in found] == REAL_DEFECTS
