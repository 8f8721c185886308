"""`ci-tools sweep local -j 4` on a copy of the real InferenceX tree, with the GPU fleet's programs stood in for
(tests/standins): the fleet's own launcher (launch_mi355x-amds.sh: salloc, srun into an enroot container,
the recipe's /workspace mounts) runs the real recipe, which starts its server and benchmarks it."""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

import pytest

from conftest import full_corpus_dir

from ci_tools.results.record import load as load_record
from ci_tools.sweep.report import collect, render_markdown
from standins.install import install
from standins.record import read_calls
from standins.sandbox import Sandbox, run_sandboxed, unavailable

pytestmark = pytest.mark.skipif(unavailable() is not None, reason=str(unavailable()))

WORKSPACE = "/home/runner/work/InferenceX/InferenceX"
# Each job's allocation waits until all four jobs asked for theirs: they are running at the same time
# however slowly this machine starts them (their benchmarks take a second, the fleet's take hours).
SALLOC_BARRIER = """#!/bin/bash
touch "/barrier/$RUNNER_NAME"
for _ in $(seq 1200); do
    [ "$(ls /barrier | wc -l)" -ge 4 ] && exec /standins/bin/salloc "$@"
    /bin/sleep 0.1
done
echo "salloc: the other jobs never asked for their allocation" >&2
exit 1
"""


def test_a_real_recipe_runs_through_the_fleet_launcher_four_jobs_at_once(tmp_path: Path) -> None:
    repo = tmp_path / "ix"
    shutil.copytree(full_corpus_dir(), repo, ignore=shutil.ignore_patterns("expected"))
    for path in [repo, *repo.rglob("*")]:
        path.chmod(path.stat().st_mode | 0o200)
    standins = install(tmp_path / "standins", vendor="amd", gpus=8)
    barrier, wrappers = tmp_path / "barrier", tmp_path / "wrappers"
    barrier.mkdir()
    wrappers.mkdir()
    (wrappers / "salloc").write_text(SALLOC_BARRIER)
    (wrappers / "salloc").chmod(0o755)
    sandbox = Sandbox(tmp_path / "sandbox", binds={WORKSPACE: repo, "/standins": standins, "/barrier": barrier,
                                                   "/wrappers": wrappers})
    env = {"PATH": "/wrappers:/standins/bin:/usr/local/bin:/usr/bin:/bin", "HOME": "/root", "USER": "runner",
           "HF_TOKEN": "standin-secret"}
    out = tmp_path / "out.log"
    code = run_sandboxed(sandbox, [sys.executable, "-m", "ci_tools", "sweep", "local", "--key", "dsr1-fp8-mi355x-sglang",
                                   "--conc", "32", "--conc", "64", "-j", "4", "--no-progress", "--grace", "5"],
                         env, WORKSPACE, timeout=240, output=out)
    log = out.read_text(errors="replace")
    assert code == 0, log
    assert "4 job(s) ran: 4 succeeded, 0 did not" in log

    results = repo / "sweep-results"
    jobs = sorted(p for p in results.iterdir() if p.is_dir() and p.name != ".workspaces")
    assert len(jobs) == 4 and not (results / ".workspaces").exists()
    calls = read_calls(standins / "log")
    ports: dict[str, tuple[int, int]] = {}
    for job_dir in jobs:
        status = json.loads((job_dir / "status.json").read_text())
        record = load_record(job_dir / "record.json")
        name = status["result-filename"]
        assert (status["launcher"], status["argv"], status["status"]) == \
            ("repository", ["bash", "./runners/launch_mi355x-amds.sh"], "success")
        assert name.endswith(f"_conc{status['conc']}_{status['node']}") and status["result-file"] == f"{name}.json"
        # The recipe's /workspace/$RESULT_FILENAME.json and server.log reached the job's result directory.
        assert {f"{name}.json", "server.log", "gpu_metrics.csv"} <= set(status["results"])
        # The benchmark reached the server; the recipe left it running, and the job ended it.
        [point] = record.results
        assert point.validity.completed == point.validity.requested == status["conc"] * 10
        assert point.metrics["throughput_per_gpu"] > 0
        assert (record.gpus.model, record.gpus.count, record.node) == ("AMD Instinct MI355X", 8, status["node"])
        assert status["leftover-processes"] >= 1 and "sglang" in " ".join(status["leftovers"])
        # Each job's client benchmarked the server of the same job (calls carry the job's marker).
        mine = [c for c in calls if c.env.get("CI_TOOLS_SWEEP_JOB", "").startswith(status["job-id"])]
        server = next(c for c in mine if c.launched(("python* -m sglang.launch_server",)))
        client = next(c for c in mine if c.is_client())
        server_port = int(server.args[server.args.index("--port") + 1])
        client_port = int(re.search(r":(\d+)$", client.args[client.args.index("--base-url") + 1]).group(1))
        ports[status["node"]] = (server_port, client_port)
    # Four nodes of the label, four ports (the launcher's 8888 + the node's last digit): never one another's.
    assert ports == {f"mi355x-amds_0{i}": (8888 + i, 8888 + i) for i in range(4)}

    text = render_markdown(collect([results])[0], metrics=("throughput_per_gpu",), log_tail=0)
    assert "**4 jobs**: 4 success" in text and text.count("| 🧹 |") == 4
