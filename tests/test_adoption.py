"""Adopting ci-tools in a copy of InferenceX exactly as the README's "Use it in your repository" says.

The README's blocks marked ``<!-- adopt: NAME -->`` are what an adopter
writes: ``.ci-tools.yaml``, the ``CI_TOOLS`` line each copied workflow gets,
``.pre-commit-config.yaml``.  The adopted workflows must pass actionlint and
zizmor, and the PR job's steps run as the workflow runs them: ``run:``
scripts with ``bash -e`` in the checkout, with the step's and workflow's
``env:`` and the variables GitHub sets for a ``pull_request`` event; a step
after a failure only when its ``if:`` says ``always()``.  Two things cannot
happen offline and are stood in for: the install step's pip (the pinned
``git+https://`` URL needs the network) is a program that records what it
was asked to install, and ``ci-tools`` is then the build under test.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from test_changelog_support import git
from test_workflows import _tool

ROOT = Path(__file__).resolve().parent.parent
WORKFLOWS = ("pr-checks.yml", "run-benchmark.yml", "sweep.yml")
PR = 2800
ENTRY = ("\n- config-keys:\n    - dsr1-fp8-mi325x-sglang\n  description:\n    - \"Set --mem-fraction-static to 0.8\"\n"
         f"  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/{PR}\n")


def _readme_blocks() -> dict[str, str]:
    """The adoption section's blocks by the name of their marker."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Use it in your repository\n", 1)[1].split("\n## ", 1)[0]
    found = re.findall(r"<!-- adopt: (\S+) -->\n\s*```yaml\n(.*?)\n\s*```", section, flags=re.S)
    return {name: "\n".join(line[3:] if line.startswith("   ") else line for line in body.split("\n")) + "\n"
            for name, body in found}


def _adopt(repo: Path) -> str:
    """Do what the README says; returns the pinned CI_TOOLS line."""
    blocks = _readme_blocks()
    assert set(blocks) == {".ci-tools.yaml", "CI_TOOLS", ".pre-commit-config.yaml"}
    (repo / ".ci-tools.yaml").write_text(blocks[".ci-tools.yaml"], encoding="utf-8")
    (repo / ".pre-commit-config.yaml").write_text(blocks[".pre-commit-config.yaml"], encoding="utf-8")
    pinned = blocks["CI_TOOLS"].rstrip("\n")
    for name in WORKFLOWS:
        text = (ROOT / ".github" / "workflows" / name).read_text(encoding="utf-8")
        lines = [pinned if re.fullmatch(r"  CI_TOOLS: \S+", line) else line for line in text.split("\n")]
        assert lines.count(pinned) == 1, f"{name}: expected one `CI_TOOLS:` line to pin"
        (repo / ".github" / "workflows" / name).write_text("\n".join(lines), encoding="utf-8")
    return pinned


def _pip_standin(directory: Path, record: Path) -> None:
    """`python` on the job's PATH: `python -m pip install ...` is recorded; anything else runs Python."""
    directory.mkdir()
    script = directory / "python"
    script.write_text("#!/usr/bin/env bash\n"
                      f"if [ \"$1 $2 $3\" = '-m pip install' ]; then printf '%s\\n' \"$@\" > {record}; exit 0; fi\n"
                      f"exec {sys.executable} \"$@\"\n", encoding="utf-8")
    script.chmod(0o755)


def _always(step: dict[str, Any]) -> bool:
    return "always()" in str(step.get("if", ""))


def test_adopting_in_a_copy_of_inferencex_as_the_readme_says(real_repo: Path, tmp_path: Path,  # noqa: F811
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    repo = real_repo
    pinned = _adopt(repo)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "Adopt ci-tools")
    base = git(repo, "rev-parse", "HEAD")
    git(repo, "checkout", "-q", "-b", "feature")
    with (repo / "perf-changelog.yaml").open("a", encoding="utf-8") as out:
        out.write(ENTRY)
    git(repo, "commit", "-q", "-am", "Document the memory fraction")
    head = git(repo, "rev-parse", "HEAD")

    # The adopted workflows, beside InferenceX's own, pass actionlint and zizmor.
    adopted = [f".github/workflows/{name}" for name in WORKFLOWS]
    lint = subprocess.run([_tool("actionlint"), "-no-color", *adopted], cwd=repo, capture_output=True, text=True,
                          timeout=120)
    assert (lint.returncode, lint.stdout, lint.stderr) == (0, "", "")
    audit = subprocess.run([_tool("zizmor"), "--offline", "--no-progress", "--format", "plain", *adopted], cwd=repo,
                           capture_output=True, text=True, timeout=120)
    assert audit.returncode == 0 and "No findings to report" in audit.stdout, audit.stdout + audit.stderr

    # The PR job's steps, as the runner runs them.
    workflow = yaml.safe_load((repo / adopted[0]).read_text(encoding="utf-8"))
    job = workflow["jobs"]["check"]
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"number": PR, "pull_request": {
        "number": PR, "body": "Document the memory fraction", "base": {"sha": base, "ref": "main"},
        "head": {"sha": head}}, "repository": {"full_name": "SemiAnalysisAI/InferenceX"}}), encoding="utf-8")
    summary, installed, standins = tmp_path / "step-summary.md", tmp_path / "pip-args.txt", tmp_path / "bin"
    _pip_standin(standins, installed)
    env = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_") and k not in ("CI", "NO_COLOR")}
    env.update({"GITHUB_ACTIONS": "true", "CI": "true", "GITHUB_EVENT_NAME": "pull_request",
                "GITHUB_EVENT_PATH": str(event), "GITHUB_STEP_SUMMARY": str(summary), "GITHUB_WORKSPACE": str(repo),
                "GITHUB_SHA": head, "GITHUB_REPOSITORY": "SemiAnalysisAI/InferenceX",
                "GITHUB_SERVER_URL": "https://github.com", "GITHUB_OUTPUT": str(tmp_path / "output"),
                "RUNNER_TEMP": str(tmp_path), "PATH": f"{standins}:{Path(sys.executable).parent}:{env['PATH']}",
                **workflow.get("env", {})})
    failed = False
    ran: dict[str, subprocess.CompletedProcess[str]] = {}
    for step in job["steps"]:
        if failed and not _always(step):
            continue
        uses = str(step.get("uses", ""))
        if uses.startswith("actions/checkout@"):
            assert step["with"]["fetch-depth"] == 0  # the base revision is in the clone, as here
        elif uses.startswith("github/codeql-action/upload-sarif@"):
            assert "hashFiles('ci-tools.sarif')" in step["if"] and (repo / step["with"]["sarif_file"]).is_file()
        elif "run" in step:
            done = subprocess.run(["bash", "-e", "-c", step["run"]], cwd=repo, env={**env, **step.get("env", {})},
                                  capture_output=True, text=True, timeout=300)
            ran[step["name"]] = done
            failed = failed or done.returncode != 0

    # The install step asked pip for the pinned ci-tools, not for the benchmark repository's root.
    assert installed.read_text(encoding="utf-8").split("\n")[3:5] == ["--quiet", pinned.split(": ", 1)[1]]
    check = ran["ci-tools check"]
    assert check.returncode == 0, check.stderr
    assert not [line for line in check.stdout.splitlines() if line.startswith("::error")]
    assert check.stderr.endswith("773 changelog entries (1 appended): 0 new, 13 already on the base (13 error(s))\n")
    assert "<details><summary>13 already on the base revision</summary>" in summary.read_text(encoding="utf-8")
    results = json.loads((repo / "ci-tools.sarif").read_text(encoding="utf-8"))["runs"][0]["results"]
    assert len(results) == 13 and {r["baselineState"] for r in results} == {"unchanged"}
    shutil.rmtree(standins)
