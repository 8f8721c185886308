"""A launcher change counts for a job only if it changes what the job runs, judged by evaluating the launcher
for the job at the base and at the head (:mod:`ci_tools.evaluation.launcher_run`).

- The real tree's ``launch_b300-nv.sh`` with what InferenceX d8933d70b4bb and 726a9db9eb73 changed undone
  (an override variable the sweep never sets, salloc's time limit through a variable that defaults to the
  same value, the squash file kept in another directory): no config counts (before: every b300 config).
- A small repository with a launcher that starts its recipe in a container: a variable exported to the
  recipe, the image, the recipe path, a container option and an in-place edit of a file count; a log path, a job name, a time limit and a
  function nobody calls do not; a launcher that sources a file the repository does not hold cannot be
  evaluated, and its change counts with the reason said.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

import pytest

from test_changelog_support import Repo, clear_github_env, run
from test_coverage_run_effect import SN, adding_log, commit, edit, two_model_master, uncovered


def test_scheduling_and_an_unset_override_in_the_real_b300_launcher_change_no_run(
        real_repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # The tree already has both hooks (d8933d70b4bb added them): the change here takes them out again.
    launcher = real_repo / "runners/launch_b300-nv.sh"
    edit(launcher, '    if [[ -n "${BENCH_SCRIPT_OVERRIDE:-}" ]]; then\n        BENCH_SCRIPT="$BENCH_SCRIPT_OVERRIDE"\n    fi\n', "")
    edit(launcher, '    SALLOC_TIME_LIMIT="${SALLOC_TIME_LIMIT:-480}"\n', "")
    edit(launcher, '--time="$SALLOC_TIME_LIMIT"', "--time=480")
    # 726a9db9eb73 moved the squash files of the single-node branch.
    edit(launcher, '    SQUASH_FILE="/data/squash/', '    SQUASH_FILE="/data/home/sa-shared/gharunners/squash/')
    commit(real_repo, "b300: an override hook, salloc's time limit, the squash directory")
    assert uncovered(real_repo, "origin/main", capsys) == {}


MASTER = two_model_master("h100", "vllm/vllm-openai:v0.1")
LOG = adding_log("ma-fp8-h100-vllm")
RECIPE = """\
#!/usr/bin/env bash
vllm serve "$MODEL" --tensor-parallel-size "$TP" &
python3 bench.py --max-concurrency "$CONC"
"""
LAUNCHER = """\
#!/usr/bin/bash
PARTITION="gpu"
cleanup() { rm -rf /tmp/scratch; }
if [[ $MODEL_PREFIX == "ma" ]]; then
    export MODEL_PATH="/models/ma"
else
    export MODEL_PATH="/models/other"
fi
SQUASH_FILE="/squash/$(echo "$IMAGE" | tr '/:' '__').sqsh"
enroot import -o "$SQUASH_FILE" "docker://$IMAGE"
LOG_DIR="/logs/$RUNNER_NAME"
sed -i 's/^batch: .*/batch: 64/' benchmarks/serve.yaml
salloc --partition=$PARTITION -N 1 --gres=gpu:$TP --time=180 --no-shell --job-name="$RUNNER_NAME"
JOB_ID=$(squeue --name="$RUNNER_NAME" -h -o %A | head -n1)
srun --jobid=$JOB_ID --container-image=$SQUASH_FILE --container-mounts=$GITHUB_WORKSPACE:/workspace \\
    --container-workdir=/workspace --output="$LOG_DIR/out.log" --export=ALL,PORT=8888 \\
    bash benchmarks/single_node/fixed_seq_len/${MODEL_PREFIX}_fp8_h100_vllm.sh
"""


def _launcher_repo(path: Path, launcher_text: str, capsys: pytest.CaptureFixture[str]) -> Callable[[str, str],
                                                                                         dict[str, str]]:
    """A repository of two vLLM keys on h100 whose launcher is ``launcher_text``; the function it returns commits
    the launcher with ``old`` replaced by ``new``, checks, restores it, and gives the keys that count (-> why)."""
    repo = Repo(path)
    launcher = "runners/launch_h100-cw.sh"
    base = repo.commit({
        ".ci-tools.yaml": b"repository: acme/bench\n",
        "configs/nvidia-master.yaml": MASTER.encode(),
        "configs/runners.yaml": b"labels:\n  h100:\n    - h100-cw_01\nhardware: {}\n",
        f"{SN}/ma_fp8_h100_vllm.sh": RECIPE.encode(),
        f"{SN}/mb_fp8_h100_vllm.sh": RECIPE.encode(),
        launcher: launcher_text.encode(),
        "perf-changelog.yaml": LOG,
    }, "base")

    def changed(old: str, new: str) -> dict[str, str]:
        assert old in launcher_text, old
        repo.commit({launcher: launcher_text.replace(old, new, 1).encode()}, f"{old} -> {new}")
        code, out, err = run(["check", "--repo", str(repo.path), "--base", base, "--format", "json",
                              "--select", "coverage-uncovered-key"], capsys)
        assert code in (0, 1), err
        repo.commit({launcher: launcher_text.encode()}, "back")
        return {f["data"]["key"]: f["message"] for f in json.loads(out)["findings"]}

    return changed


def test_a_launcher_change_counts_when_the_evaluated_run_differs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    clear_github_env(monkeypatch)
    changed = _launcher_repo(tmp_path / "repo", LAUNCHER, capsys)
    both = {"ma-fp8-h100-vllm", "mb-fp8-h100-vllm"}
    # What the job runs: the environment its recipe receives (one model's branch), the image, the recipe,
    # a container option.
    found = changed('export MODEL_PATH="/models/ma"', 'export MODEL_PATH="/models/ma-v2"')
    assert set(found) == {"ma-fp8-h100-vllm"}
    assert "starts with another environment (MODEL_PATH)" in found["ma-fp8-h100-vllm"]
    assert set(changed('"docker://$IMAGE"', '"docker://$IMAGE-debug"')) == both
    assert set(changed("bash benchmarks/", "bash -x benchmarks/")) == both
    assert set(changed("--container-workdir=/workspace", "--container-workdir=/ix")) == both
    # A file the recipe reads, edited in place: the edit is a step of its own.
    assert set(changed("batch: 64/", "batch: 128/")) == both
    # Scheduling and housekeeping: where the squash file and the logs are kept, the job's name, its time
    # limit (a variable nobody sets, defaulting to the same value), a function nobody calls.
    assert changed('SQUASH_FILE="/squash/', 'SQUASH_FILE="/data/squash/') == {}
    assert changed('LOG_DIR="/logs/', 'LOG_DIR="/scratch/logs/') == {}
    assert changed('--job-name="$RUNNER_NAME"', '--job-name="bench-$RUNNER_NAME"') == {}
    assert changed("--time=180", '--time="${SALLOC_TIME_LIMIT:-180}"') == {}
    assert changed("--time=180", "--time=600") == {}
    assert changed("rm -rf /tmp/scratch", "rm -rf /tmp/scratch /tmp/more") == {}
    # An override variable the workflow never sets keeps the recipe; one it sets would not, but none does.
    assert changed("srun --jobid", 'if [[ -n "${RECIPE_OVERRIDE:-}" ]]; then exit 1; fi\nsrun --jobid') == {}
    # What cannot be evaluated counts, and says why.
    found = changed('PARTITION="gpu"', 'PARTITION="gpu"\nsource "$TOOLS_DIR/env.sh"')
    assert set(found) == both
    assert "its evaluation cannot tell whether the job's run changed" in found["ma-fp8-h100-vllm"]


def test_a_virtual_environment_the_launcher_makes_and_activates_keeps_its_run_known(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    # As launch_gb300-nv.sh does: a venv made at run time, then `source "$VENV_DIR/bin/activate"` (no such file
    # in the repository): the activation's effect is known, so the launcher's run still is.
    venv = LAUNCHER.replace('PARTITION="gpu"\n', 'PARTITION="gpu"\n'
                            'VENV_DIR="${GITHUB_WORKSPACE}/.venv-srt-${GITHUB_RUN_ID:-manual}"\n'
                            'uv venv --seed "$VENV_DIR"\nsource "$VENV_DIR/bin/activate"\n')
    clear_github_env(monkeypatch)
    changed = _launcher_repo(tmp_path / "repo", venv, capsys)

    assert changed('LOG_DIR="/logs/', 'LOG_DIR="/scratch/logs/') == {}  # was: cannot tell, every key
    found = changed('export MODEL_PATH="/models/ma"', 'export MODEL_PATH="/models/ma-v2"')
    assert set(found) == {"ma-fp8-h100-vllm"} and "(MODEL_PATH)" in found["ma-fp8-h100-vllm"]
    # the environment the activation exports reaches the programs started after it
    assert set(changed('source "$VENV_DIR/bin/activate"', 'source "$VENV_DIR-b/bin/activate"')) == {
        "ma-fp8-h100-vllm", "mb-fp8-h100-vllm"}
