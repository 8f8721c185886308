"""A launcher that starts recipes only with `docker run` passes them only what its -e options name.

InferenceX's launch_mi325x-tw.sh, launch_h100-cr.sh and launch_rtx6000pro-lat.sh
run the recipe in a container whose environment is the ``-e``/``--env`` list;
the workflow's other variables (AIPERF_FAILED_REQUEST_THRESHOLD, EXP_NAME, ...)
never reach it.  Real bash showed the difference: for dsv4-fp8-mi325x-vllm,
``recipe show`` stated AIPERF_FAILED_REQUEST_THRESHOLD=0.10 in the server's
environment (benchmark_lib.sh assigns it, and the workflow exports it), but the
server started without it (tests/standins, bench/bench_bash_oracle.py).
"""

from __future__ import annotations

from ci_tools.config import load_config
from ci_tools.evaluation.evaluate import evaluate_job
from ci_tools.jobs.contract import recipe_env
from ci_tools.jobs.env.launchers import scan_launcher
from ci_tools.revision.snapshot import WorkTreeSnapshot

from conftest import full_corpus_dir

DOCKER = b"""#!/usr/bin/bash
PORT=8888
docker rm -f bmk || true
docker run --rm --network=host -v "$GITHUB_WORKSPACE:/workspace/" -w /workspace/ \\
  -e HF_TOKEN -e TP -e PORT="$PORT" --env CONC --env=ISL \\
  --entrypoint=/bin/bash "$IMAGE" benchmarks/single_node/"${EXP_NAME%%_*}_mi325x.sh"
"""


def test_a_docker_only_launcher_passes_its_env_options() -> None:
    assert scan_launcher("runners/launch_x.sh", DOCKER).passes == frozenset({"HF_TOKEN", "TP", "PORT", "CONC", "ISL"})


def test_a_launcher_that_may_start_a_recipe_otherwise_passes_everything() -> None:
    with_srun = DOCKER + b'srun --jobid=1 --export=ALL bash "$BENCH_SCRIPT"\n'
    with_env_file = DOCKER.replace(b"--env CONC", b"--env-file job.env")
    with_bash = DOCKER + b'bash "$RECIPE"\n'
    with_array = DOCKER.replace(b"--env=ISL", b'"${ENV_ARGS[@]}"')
    assert scan_launcher("l.sh", with_srun).passes is None
    assert scan_launcher("l.sh", with_env_file).passes is None
    assert scan_launcher("l.sh", with_bash).passes is None
    assert scan_launcher("l.sh", with_array).passes is None
    assert scan_launcher("l.sh", b"export PORT=8888\nsalloc --no-shell\n").passes is None


def test_the_recipe_of_a_docker_fleet_is_evaluated_with_what_reaches_it(full_corpus_jobs) -> None:  # type: ignore[no-untyped-def]
    config = load_config(full_corpus_dir())
    snapshot = WorkTreeSnapshot(config.root)
    job = next(j for j in full_corpus_jobs if j.config_key == "dsv4-fp8-mi325x-vllm")
    launched = recipe_env(job, config, snapshot)  # what the launch step has (matrix --env)
    started = recipe_env(job, config, snapshot, as_run=True)
    assert launched["AIPERF_FAILED_REQUEST_THRESHOLD"] == "0.10" and "EXP_NAME" in launched
    assert "AIPERF_FAILED_REQUEST_THRESHOLD" not in started and "EXP_NAME" not in started
    assert started["MODEL"] == launched["MODEL"] and started["TP"] == "8" and "PORT" in started
    result = evaluate_job(job, config, snapshot)
    assert result is not None and result.servers
    assert "AIPERF_FAILED_REQUEST_THRESHOLD" not in result.env
    assert "AIPERF_FAILED_REQUEST_THRESHOLD" in result.variables  # benchmark_lib.sh sets it, unexported
