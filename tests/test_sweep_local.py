"""`ci-tools sweep local` (several jobs on one machine) and `ci-tools sweep plan` (fitting GitHub's matrix)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "fixtures" / "sweep"))

from sweeplib import alive, end_jobs_under, all_jobs, cli, job_of, make_repo, popen_cli, status_of, wait_for_file, write_matrix  # noqa: E402

from ci_tools.github.selection import DispatchSelection, Target, jobs_digest  # noqa: E402
from ci_tools.sweep.plan import plan_entries  # noqa: E402


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path)


def test_local_runs_the_selection_in_parallel(repo: Path) -> None:
    proc = cli(repo, "sweep", "local", "--key", "ok-*", "--key", "fail-*", "-j", "2", "--result-dir", "out")
    assert proc.returncode == 1, proc.stderr
    expected = [j for j in all_jobs(repo) if j.config_key in ("ok-fp8-mi355x-vllm", "fail-fp8-mi355x-vllm",
                                                              "ok-fp8-mi355x-atom")]
    assert len(expected) == 4
    statuses = {j.config_key + str(j.conc): status_of(repo / "out", j)["status"] for j in expected}
    assert statuses == {"ok-fp8-mi355x-vllm4": "success", "ok-fp8-mi355x-vllm8": "success",
                        "fail-fp8-mi355x-vllm4": "failed", "ok-fp8-mi355x-atom64": "success"}
    assert "4 job(s) ran: 3 succeeded, 1 did not" in proc.stderr


def test_local_filters_and_matrix_indices(repo: Path) -> None:
    proc = cli(repo, "sweep", "local", "--key", "ok-fp8-mi355x-vllm", "--conc", "8", "--result-dir", "out",
               "--no-progress")
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in (repo / "out").iterdir()) == [job_of(repo, "ok-fp8-mi355x-vllm", 8).id]
    matrix = write_matrix(repo)
    entries = json.loads(matrix.read_text())
    picks = [i for i, e in enumerate(entries) if e["config-key"] == "ok-fp8-mi355x-vllm"]
    proc = cli(repo, "sweep", "local", "--matrix", "matrix.json", "--indices", ",".join(map(str, picks)),
               "--result-dir", "out2")
    assert proc.returncode == 0, proc.stderr
    assert len(list((repo / "out2").iterdir())) == 2
    # A matrix file that asks for evals sets RUN_EVAL for every job.
    (repo / "evals.json").write_text(json.dumps({"run-eval": True, "jobs": entries}))
    proc = cli(repo, "sweep", "local", "--matrix", "evals.json", "--indices", str(picks[0]), "--dry-run")
    assert "RUN_EVAL=true" in proc.stdout.splitlines()


@pytest.mark.parametrize("args, message", [
    (["--key", "nothing-*"], "no config key matches nothing-*"),
    (["--key", "ok-*", "--conc", "999"], "the selection leaves no job to run"),
    (["--indices", "1"], "--indices selects jobs of a --matrix file"),
])
def test_local_selection_errors(repo: Path, args: list[str], message: str) -> None:
    proc = cli(repo, "sweep", "local", *args)
    assert proc.returncode == 2 and message in proc.stderr


def test_sigterm_stops_running_jobs_and_starts_no_more(repo: Path) -> None:
    hang = job_of(repo, "hang-fp8-mi355x-vllm")
    stubborn = job_of(repo, "stubborn-fp8-mi355x-vllm")
    proc = popen_cli(repo, "sweep", "local", "--key", "hang-*", "--key", "stubborn-*", "--key", "leaky-*",
                     "-j", "2", "--grace", "0.5", "--result-dir", "out", "--no-progress")
    # (generous limits: on a machine starved of CPU the stop took over 30 s once; a sweep that does not stop at all
    # still fails, its recipes running for 300 s)
    try:
        for job in (hang, stubborn):
            wait_for_file(repo / "out" / job.id / "results" / "started", limit=120)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            end_jobs_under(repo)
    assert proc.returncode == 143, err
    for job in (hang, stubborn):
        assert status_of(repo / "out", job)["status"] == "stopped"
        assert not alive(int((repo / "out" / job.id / "results" / "child.pid").read_text()))
    assert status_of(repo / "out", stubborn)["killed"] is True
    # Both workers were busy, so the third job was still waiting: it never starts.
    assert "2 job(s) ran: 0 succeeded, 2 did not; 1 not started (stopped)" in err
    assert not (repo / "out" / job_of(repo, "leaky-fp8-mi355x-vllm").id).exists()


def test_plan_fits_any_sweep_into_256_entries() -> None:
    entries = [{"config-key": f"k{i}", "scenario-type": "fixed-seq-len", "runner": "mi355x" if i % 3 else "cluster:mi355x-amds",
                "conc": i} for i in range(1820)]
    planned = plan_entries(entries, "m.json")
    assert len(planned) == 256
    covered = sorted(i for e in planned for i in e.indices)
    assert covered == list(range(1820))
    for e in planned:
        assert {entries[i]["runner"] for i in e.indices} == {e.runner}
    sizes = {r: [len(e.indices) for e in planned if e.runner == r] for r in ("mi355x", "cluster:mi355x-amds")}
    assert max(sizes["mi355x"]) - min(sizes["mi355x"]) <= 1
    assert max(max(s) for s in sizes.values()) <= 8
    small = plan_entries(entries[:5], "m.json")
    assert [e.to_json() for e in small] == [
        {"runner": "cluster:mi355x-amds", "indices": "0", "jobs": 1}, {"runner": "cluster:mi355x-amds", "indices": "3", "jobs": 1},
        {"runner": "mi355x", "indices": "1", "jobs": 1}, {"runner": "mi355x", "indices": "2", "jobs": 1},
        {"runner": "mi355x", "indices": "4", "jobs": 1}]


def _git(repo: Path, *args: str) -> str:
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.com", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@example.com", GIT_CONFIG_NOSYSTEM="1", HOME=str(repo))
    return subprocess.run(["git", "-C", str(repo), "-c", "commit.gpgsign=false", *args], env=env, check=True,
                          capture_output=True, text=True, timeout=30).stdout.strip()


@pytest.fixture
def committed(repo: Path) -> tuple[Path, str]:
    _git(repo, "init", "--quiet")
    _git(repo, "add", "-A")
    _git(repo, "commit", "--quiet", "-m", "fixture")
    return repo, _git(repo, "rev-parse", "HEAD")


def _selection(sha: str, jobs: list, **kw: object) -> str:  # type: ignore[type-arg]
    fields: dict[str, object] = dict(mode="keys", sha=sha, targets=(Target("ok-fp8-mi355x-vllm", ("fixed-seq-len",)),),
                                     conc=(8,), jobs=len(jobs), jobs_digest=jobs_digest(jobs), evals=True)
    fields.update(kw)
    return DispatchSelection(**fields).dumps()  # type: ignore[arg-type]


def test_plan_from_a_dispatched_selection(committed: tuple[Path, str], tmp_path: Path) -> None:
    repo, sha = committed
    job = job_of(repo, "ok-fp8-mi355x-vllm", 8)
    # The work tree changes after the commit: the plan must read the pinned commit, not the files on disk.
    (repo / "configs" / "amd-master.yaml").write_text("{}\n")
    output = tmp_path / "github_output"
    env = dict(os.environ, GITHUB_OUTPUT=str(output))
    proc = cli(repo, "sweep", "plan", "--rev", sha, "--selection", _selection(sha, [job]), "--write-matrix", "plan.json",
               "--github-output", env=env)
    assert proc.returncode == 0, proc.stderr
    assert json.loads((repo / "plan.json").read_text()) == {"sha": sha, "run-eval": True, "jobs": [job.to_json()]}
    assert output.read_text() == 'matrix={"include":[{"runner":"mi355x","indices":"0","jobs":1}]}\njobs=1\n'


@pytest.mark.parametrize("change, message", [
    ({"jobs": 2}, "give 1 job(s)"),
    ({"conc": (4,)}, "refusing to run anything other than what was approved"),
])
def test_plan_refuses_what_was_not_approved(committed: tuple[Path, str], change: dict, message: str) -> None:  # type: ignore[type-arg]
    repo, sha = committed
    job = job_of(repo, "ok-fp8-mi355x-vllm", 8)
    selection = json.loads(_selection(sha, [job]))
    selection.update({k: list(v) if isinstance(v, tuple) else v for k, v in change.items()})
    proc = cli(repo, "sweep", "plan", "--rev", sha, "--selection", json.dumps(selection), "--write-matrix", "p.json")
    assert proc.returncode == 2 and message in proc.stderr, proc.stderr
    assert not (repo / "p.json").exists()


def test_plan_refuses_a_selection_for_another_commit(committed: tuple[Path, str]) -> None:
    repo, sha = committed
    other = "0" * 40
    job = job_of(repo, "ok-fp8-mi355x-vllm", 8)
    proc = cli(repo, "sweep", "plan", "--rev", sha, "--selection", _selection(other, [job]), "--write-matrix", "p.json")
    assert proc.returncode == 2
    assert f"--rev {sha} is commit {sha}, but the selection was authorised for {other}" in proc.stderr
    proc = cli(repo, "sweep", "plan", "--rev", sha, "--selection", '{"version": 1}', "--write-matrix", "p.json")
    assert proc.returncode == 2 and "--selection: the selection has unexpected keys" in proc.stderr


def test_settings_from_a_trusted_checkout_override_the_repository_s_own(tmp_path: Path) -> None:
    """The pull request's `.ci-tools.yaml` cannot pick the launcher or docker arguments of the runner it runs on."""
    hostile = ('sweep:\n  default-launcher: docker\n  docker-args: ["--privileged", "-v", "/:/host"]\n'
               '  model-cache: /\n')
    repo = make_repo(tmp_path, sweep_config=hostile)
    trusted = tmp_path / "trusted"
    trusted.mkdir()
    (trusted / ".ci-tools.yaml").write_text('sweep:\n  default-launcher: docker\n  docker-args: ["--shm-size", "64g"]\n'
                                            "  model-cache: /models\n", encoding="utf-8")
    job = job_of(repo, "ok-fp8-mi355x-vllm", 4)
    args = ("sweep", "local", "--key", "ok-fp8-mi355x-vllm", "--conc", "4", "--dry-run")
    own = cli(repo, *args)
    assert own.returncode == 0, own.stderr
    assert "--privileged -v /:/host" in own.stdout  # what the repository alone would do
    proc = cli(repo, *args, "--settings-from", str(trusted))
    assert proc.returncode == 0, proc.stderr
    command = proc.stdout.splitlines()[-1]
    assert command.startswith(f"docker run --rm --name ci-tools-{job.id} ")
    assert "--shm-size 64g" in command and "-v /models:/models" in command
    assert "--privileged" not in command and "/:/host" not in command


def test_settings_from_a_checkout_without_configuration_are_the_defaults(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, sweep_config='sweep:\n  default-launcher: docker\n  docker-args: ["--privileged"]\n')
    empty = tmp_path / "trusted"
    empty.mkdir()
    proc = cli(repo, "sweep", "run", "--job", json.dumps(job_of(repo, "ok-fp8-mi355x-vllm", 4).to_json()),
               "--dry-run", "--settings-from", str(empty))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[0].endswith("launcher direct)")
    missing = cli(repo, "sweep", "local", "--key", "ok-*", "--dry-run", "--settings-from", str(tmp_path / "nope"))
    assert missing.returncode == 2 and "--settings-from" in missing.stderr and "does not exist" in missing.stderr
