"""Every rule's ok and err fixtures, run through the real CLI.

Layout: ``tests/fixtures/rules/<rule-id>/{ok,err}/<case>/``.  A case is a
repository tree, or has ``base/`` and ``head/`` trees from which a throwaway
git repository is built (base committed, then head).  ``args.txt`` holds the
command line (default ``validate``, or ``check --base BASE`` for base/head
cases; ``BASE`` becomes the base commit).  The harness adds ``--repo``,
``--format text`` and ``--select <rule-id>``.  Err cases compare the output
with ``expected.txt`` exactly; ok cases must print nothing and exit 0.

A case tree (the case, or its ``base/`` and ``head/``) stores only what is
its own: an ``inherit.txt`` in it names the shared trees under
``tests/fixtures/shared/`` it starts from (``TREE`` for all of a tree's
files, ``TREE PATH ...`` for some of them), and its own files override them
(``fixture_trees.py`` has the rules).  A case naming a shared tree or path
that does not exist fails; so does one keeping a byte-identical copy of a
file it inherits (``test_fixture_trees.py``).

The completeness test fails when a registered rule lacks documentation or
lacks an ok or an err case, and when a fixture directory names no rule.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from ci_tools.cli.main import main
from ci_tools.findings import all_rules
from fixture_trees import InheritError, copy_tree

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "rules"
CASE_FILES = {"args.txt", "expected.txt"}
GIT_ENV = {
    "GIT_AUTHOR_NAME": "Fixture Author", "GIT_AUTHOR_EMAIL": "author@example.invalid",
    "GIT_COMMITTER_NAME": "Fixture Author", "GIT_COMMITTER_EMAIL": "author@example.invalid",
    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
    "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
}


def _cases() -> list[tuple[str, str, Path]]:
    out = []
    if FIXTURES.is_dir():
        for rule_dir in sorted(p for p in FIXTURES.iterdir() if p.is_dir()):
            for kind in ("ok", "err"):
                for case in sorted(p for p in (rule_dir / kind).glob("*") if p.is_dir()):
                    out.append((rule_dir.name, kind, case))
    return out


def _copy_tree(src: Path, dest: Path) -> None:
    copy_tree(src, dest, skip=CASE_FILES)


def _git(repo: Path, *args: str) -> str:
    env = {**os.environ, **GIT_ENV}
    done = subprocess.run(["git", "-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main", *args],
                          cwd=repo, env=env, check=True, capture_output=True, text=True)
    return done.stdout.strip()


def _build_history(case: Path, repo: Path) -> str:
    """Commit base/, then head/; returns the base commit id."""
    repo.mkdir()
    _git(repo, "init", "-q")
    _copy_tree(case / "base", repo)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "--allow-empty", "-m", "base")
    base = _git(repo, "rev-parse", "HEAD")
    for path in repo.iterdir():
        if path.name != ".git":
            shutil.rmtree(path) if path.is_dir() else path.unlink()
    _copy_tree(case / "head", repo)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "--allow-empty", "-m", "head")
    return base


def run_case(case: Path, rule_id: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    repo = tmp_path / "repo"
    history = (case / "base").is_dir() and (case / "head").is_dir()
    base = ""
    if history:
        base = _build_history(case, repo)
        default_args = "check --base BASE"
    else:
        repo.mkdir()
        _copy_tree(case, repo)
        default_args = "validate"
    args_file = case / "args.txt"
    args = args_file.read_text(encoding="utf-8").strip() if args_file.is_file() else default_args
    argv = [a.replace("BASE", base) if base else a for a in shlex.split(args)]
    argv += ["--repo", str(repo), "--format", "text", "--select", rule_id]
    capsys.readouterr()
    cwd = os.getcwd()
    try:
        os.chdir(repo)
        code = main(argv)
    finally:
        os.chdir(cwd)
    return code, capsys.readouterr().out


@pytest.mark.parametrize(("rule_id", "kind", "case"), _cases(), ids=lambda v: v.name if isinstance(v, Path) else str(v))
def test_fixture(rule_id: str, kind: str, case: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                 monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY", "GITHUB_EVENT_PATH", "GITHUB_EVENT_NAME", "GITHUB_REPOSITORY"):
        monkeypatch.delenv(name, raising=False)
    code, out = run_case(case, rule_id, tmp_path, capsys)
    if kind == "ok":
        assert out == "", f"{case}: expected no {rule_id} finding, got:\n{out}"
        assert code == 0
        return
    expected = (case / "expected.txt").read_text(encoding="utf-8")
    assert expected.strip(), f"{case}/expected.txt is empty"
    assert out == expected
    has_error = any(": error: " in line for line in out.splitlines())
    assert code == (1 if has_error else 0)


def test_every_rule_is_documented_and_has_ok_and_err_fixtures() -> None:
    problems = []
    rules = {r.id: r for r in all_rules()}
    for rule in rules.values():
        for section in ("summary", "what", "why", "example", "fix"):
            if not getattr(rule, section).strip():
                problems.append(f"{rule.id}: empty {section}")
        for kind in ("ok", "err"):
            cases = [p for p in (FIXTURES / rule.id / kind).glob("*") if p.is_dir()]
            if not cases:
                problems.append(f"{rule.id}: no {kind} fixture under tests/fixtures/rules/{rule.id}/{kind}/")
            if kind == "err":
                problems.extend(f"{rule.id}: {c.name} has no expected.txt" for c in cases
                                if not (c / "expected.txt").is_file())
    if FIXTURES.is_dir():
        problems.extend(f"fixture directory {p.name} names no registered rule"
                        for p in FIXTURES.iterdir() if p.is_dir() and p.name not in rules)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("history", [False, True], ids=["tree", "base-head"])
def test_a_case_inheriting_a_shared_tree_that_does_not_exist_fails(
        history: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    case = tmp_path / "case"
    for tree in ([case / "base", case / "head"] if history else [case]):
        tree.mkdir(parents=True)
        (tree / "configs").mkdir()
        (tree / "configs" / "runners.yaml").write_text("labels: {}\n", encoding="utf-8")
    (case / "head" if history else case).joinpath("inherit.txt").write_text("no-such-tree\n", encoding="utf-8")
    with pytest.raises(InheritError, match=r"inherit.txt:1: no shared tree 'no-such-tree'"):
        run_case(case, "runner-undefined", tmp_path, capsys)
