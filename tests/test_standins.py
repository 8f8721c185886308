"""The programs standing in for a GPU fleet (tests/standins), and the sandbox real recipes run in.

Each test runs real bash in a sandbox with the stand-ins first on PATH, as a
recipe or launcher uses them, and checks what a recipe and InferenceX's own
tools read back: the server answers its health and completion endpoints, the
client's result file is the one InferenceX's ``benchmark_serving.py
--save-result`` writes (and its ``utils/process_result.py`` reads it), a
``docker run`` or ``srun --container-image`` is a container (its mounts, working
directory and environment), Slurm jobs come and go, and nothing a recipe
writes or starts outlives the sandbox.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import full_corpus_dir

from standins.install import install
from standins.record import read_calls
from standins.sandbox import Sandbox, run_sandboxed, unavailable

pytestmark = pytest.mark.skipif(unavailable() is not None, reason=str(unavailable()))

PATH = "/standins/bin:/usr/local/bin:/usr/bin:/bin"
# The keys benchmark_serving.py --save-result writes, in order (main() and benchmark() at 843c6254f, with
# --percentile-metrics ttft,tpot,itl,e2el and the default --metric-percentiles 90,99,99.9).
RESULT_KEYS = ["date", "backend", "model_id", "tokenizer_id", "best_of", "num_prompts", "request_rate", "burstiness",
               "max_concurrency", "duration", "benchmark_start_time_unix", "benchmark_end_time_unix", "completed",
               "total_input_tokens", "total_output_tokens", "request_throughput", "request_goodput:",
               "output_throughput", "total_token_throughput", "input_lens", "output_lens"] + [
    f"{stat}_{metric}_ms" for metric in ("ttft", "tpot", "itl", "e2el")
    for stat in ("mean", "median", "std", "p90", "p99", "p99.9")]


# Jobs of several nodes listen on the nodes' own addresses (127.0.0.k) at the ports their recipes give (8000,
# 30000): run one at a time, on one worker (`--dist loadgroup`), or two would bind the same address and port.
NODES = pytest.mark.xdist_group("standin-nodes")


def _sandboxed(tmp_path: Path, script: str, *, vendor: str = "nvidia", env: dict[str, str] | None = None,
               binds: dict[str, Path] | None = None, timeout: float = 30) -> tuple[int, str, Path]:
    standins = install(tmp_path / "standins", vendor=vendor, gpus=8)
    sandbox = Sandbox(tmp_path / "sandbox", binds={"/standins": standins, **(binds or {})}, hostname="node_01")
    out = tmp_path / "out.log"
    code = run_sandboxed(sandbox, ["bash", "-c", script], {"PATH": PATH, "HOME": "/root", **(env or {})}, "/",
                         timeout=timeout, output=out)
    return code, out.read_text(errors="replace"), standins


def test_sandbox_keeps_writes_and_processes_inside(tmp_path: Path) -> None:
    marker = f"standin-marker-{os.getpid()}-{tmp_path.name}"
    shared = tmp_path / "shared"
    shared.mkdir()
    script = f"""
set -e
mkdir -p /workspace && echo result > /workspace/{marker}.json
echo leak > /usr/{marker}
echo scratch > /tmp/{marker}
echo kept > /shared/out.txt
python3 -c 'import socket, time; s = socket.socket(); s.bind(("0.0.0.0", 8888)); s.listen(); time.sleep(600)' &
bash -c 'exec -a {marker} sleep 600' &
sleep 0.3
echo "host=$(hostname) pid1=$(cat /proc/1/comm)"
"""
    code, out, _ = _sandboxed(tmp_path, script, binds={"/shared": shared})
    assert code == 0, out
    assert "host=node_01" in out
    assert not Path(f"/workspace/{marker}.json").exists() and not Path(f"/usr/{marker}").exists()
    assert (shared / "out.txt").read_text() == "kept\n"
    assert (tmp_path / "sandbox" / "tmp" / marker).read_text() == "scratch\n"
    # What the command left running ended with it.
    alive = [p for p in Path("/proc").iterdir() if p.name.isdigit() and marker.encode() in _cmdline(p)]
    assert alive == []


def _cmdline(proc: Path) -> bytes:
    try:
        return (proc / "cmdline").read_bytes()
    except OSError:
        return b""


def test_sandboxes_each_have_their_own_port_8888(tmp_path: Path) -> None:
    script = "vllm serve org/m --port 8888 > /tmp/s.log 2>&1 & for i in $(seq 50); do curl -sf http://127.0.0.1:8888/health && break; /usr/bin/sleep 0.1; done; /usr/bin/sleep 1; echo up"
    procs = []
    for i in range(2):
        standins = install(tmp_path / f"s{i}", vendor="nvidia")
        sandbox = Sandbox(tmp_path / f"sb{i}", binds={"/standins": standins})
        spec = json.dumps(sandbox.spec(["bash", "-c", script], {"PATH": PATH}, "/"))
        procs.append(subprocess.Popen([sys.executable, "-S", "-E", str(Path(__file__).parent / "standins" / "enter.py"),
                                       spec], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
    outs = [p.communicate(timeout=60)[0] for p in procs]
    assert all(p.returncode == 0 and out.strip().endswith("up") for p, out in zip(procs, outs)), outs


def test_server_answers_and_client_writes_the_inferencex_result(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    script = """
set -e
cd /work
STANDIN_TEST=1 vllm serve org/model-x --host 0.0.0.0 --port 8888 --max-num-seqs 8 --enable-expert-parallel > server.log 2>&1 &
until curl --output /dev/null --silent --fail http://0.0.0.0:8888/health; do /usr/bin/sleep 0.05; done
curl -sf http://0.0.0.0:8888/v1/models
curl -sf -X POST http://0.0.0.0:8888/flush_cache
python3 /work/utils/bench_serving/benchmark_serving.py --model org/model-x --backend vllm \\
    --base-url http://0.0.0.0:8888 --dataset-name random --random-input-len 1024 --random-output-len 128 \\
    --random-range-ratio 0.8 --num-prompts 40 --max-concurrency 4 --request-rate inf --ignore-eos --save-result \\
    --num-warmups 8 --percentile-metrics 'ttft,tpot,itl,e2el' --result-dir /work/ --result-filename res.json
"""
    code, out, standins = _sandboxed(tmp_path, script, binds={"/work": work})
    assert code == 0, out
    assert '"id": "org/model-x"' in out
    assert "Cache flushed." in out  # SGLang's words, which the agentic trace replay waits to read
    result = json.loads((work / "res.json").read_text())
    assert list(result) == RESULT_KEYS
    assert (result["backend"], result["model_id"], result["num_prompts"], result["max_concurrency"]) == (
        "vllm", "org/model-x", 40, 4)
    assert result["request_rate"] == "inf" and result["completed"] == 40
    assert all(819 <= n <= 1024 for n in result["input_lens"]) and len(result["input_lens"]) == 40
    assert result["total_output_tokens"] == sum(result["output_lens"])
    assert result["p99_ttft_ms"] >= result["median_ttft_ms"] > 0
    calls = read_calls(standins / "log")
    server = next(c for c in calls if c.name == "vllm")
    assert server.args == ("serve", "org/model-x", "--host", "0.0.0.0", "--port", "8888", "--max-num-seqs", "8",
                           "--enable-expert-parallel")
    assert server.env["STANDIN_TEST"] == "1" and server.cwd == "/work"
    client = next(c for c in calls if c.is_client())
    reached = client.extra(".client.json")
    assert reached is not None and reached["errors"] == []
    assert [s.split(":")[:2] for s in reached["servers"]] == [["node_01", "8888"]]
    # InferenceX's own result processing reads the file.
    env = {**os.environ, "RUNNER_TYPE": "b200", "FRAMEWORK": "vllm", "PRECISION": "fp8", "SPEC_DECODING": "none",
           "RESULT_FILENAME": "res", "ISL": "1024", "OSL": "128", "DISAGG": "false", "MODEL_PREFIX": "x",
           "IMAGE": "vllm/vllm-openai:v0", "TP": "8", "EP_SIZE": "1", "DP_ATTENTION": "false"}
    processed = subprocess.run([sys.executable, str(full_corpus_dir() / "utils" / "process_result.py")], cwd=work,
                               env=env, capture_output=True, text=True)
    agg = json.loads((work / "agg_res.json").read_text())
    assert agg["conc"] == 4 and agg["tput_per_gpu"] == pytest.approx(result["total_token_throughput"] / 8), \
        processed.stderr


def test_trace_replay_writes_what_inferencex_aggregates_and_validates(tmp_path: Path) -> None:
    """`aiperf profile` (the agentic recipes' trace replay) reaches the SGLang server it is given and writes
    AIPerf's artifacts: a record a request, each lane's warmup requests first; the aggregate; and what the
    server's /metrics counted while it ran, under SGLang's "sglang:" prefix. InferenceX's own
    process_agentic_result and validate_agentic_result read them."""
    work = tmp_path / "work"
    work.mkdir()
    script = """
set -e
# (a port no recipe serves on: the multinode jobs of the other worker bind 30000 and wait for it to close)
python3 -m sglang.launch_server --model-path org/model-x --host 0.0.0.0 --port 39517 > /work/server.log 2>&1 &
until curl --output /dev/null --silent --fail http://0.0.0.0:39517/health; do /usr/bin/sleep 0.05; done
aiperf profile --scenario inferencex-agentx-mvp --url http://localhost:39517 --endpoint /v1/chat/completions \\
    --endpoint-type chat --streaming --model org/model-x --concurrency 2 --warmup-requests-per-lane 2 \\
    --failed-request-threshold 0.1 --max-context-length 32768 --output-artifact-dir /work/res/aiperf_artifacts
"""
    code, out, standins = _sandboxed(tmp_path, script, binds={"/work": work})
    assert code == 0, out
    artifacts = work / "res" / "aiperf_artifacts"
    records = [json.loads(line) for line in (artifacts / "profile_export.jsonl").read_text().splitlines()]
    phases = [(r["metadata"]["conversation_id"], r["metadata"]["benchmark_phase"]) for r in records]
    assert phases == [(f"lane-{lane}", phase) for lane in (0, 1) for phase in ["warmup"] * 2 + ["profiling"] * 3]
    assert all(r["error"] is None and r["metrics"]["input_sequence_length"]["value"] <= 32768 for r in records)
    aggregate = json.loads((artifacts / "profile_export_aiperf.json").read_text())
    assert (aggregate["request_count"]["avg"], aggregate["error_request_count"]["avg"]) == (6, 0)
    exported = json.loads((artifacts / "server_metrics_export.json").read_text())
    assert exported["summary"]["endpoints_successful"] == ["http://localhost:39517/metrics"]
    # the replay's three real requests, 16 tokens each, as the server counted them during the run
    requests = exported["metrics"]["sglang:num_requests"]
    assert requests["type"] == "counter" and requests["series"][0]["stats"]["total"] == 3
    assert exported["metrics"]["sglang:generation_tokens"]["series"][0]["stats"]["total"] == 48
    assert "sglang:generation_tokens" in (artifacts / "server_metrics_export.csv").read_text()
    [replay] = [c for c in read_calls(standins / "log") if c.name == "aiperf"]
    reached = replay.extra(".aiperf.json")
    assert reached is not None and reached["errors"] == [] and len(reached["servers"]) == 1

    env = {**os.environ, "RESULT_DIR": str(work / "res"), "AGENTIC_OUTPUT_DIR": str(work),
           "RESULT_FILENAME": "agentic", "KV_OFFLOADING": "none", "FRAMEWORK": "sglang", "TP": "8", "CONC": "2"}
    processed = subprocess.run([sys.executable, "-m", "utils.agentic.aggregation.process_agentic_result"],
                               cwd=full_corpus_dir(), env=env, capture_output=True, text=True)
    assert processed.returncode == 0, processed.stderr
    agg = json.loads((work / "agentic.json").read_text())
    assert (agg["num_requests_successful"], agg["num_requests_total"]) == (6, 10)
    assert agg["request_accounting"]["records_warmup_dropped"] == 4
    assert agg["server_metrics"]["tokens"]["generation_total"] == 48
    validated = subprocess.run([sys.executable, "-m", "utils.agentic.validation.validate_agentic_result",
                                str(artifacts), "--failed-request-threshold", "0.1"],
                               cwd=full_corpus_dir(), env=env, capture_output=True, text=True)
    assert validated.returncode == 0 and "0/6 = 0.000%" in validated.stdout, validated.stderr


def test_trace_replay_without_a_server_fails_over_its_threshold(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    script = """
aiperf profile --url http://localhost:39517 --endpoint /v1/chat/completions --model org/model-x --concurrency 1 \\
    --failed-request-threshold 0.1 --output-artifact-dir /work/aiperf_artifacts
"""
    code, out, _ = _sandboxed(tmp_path, script, binds={"/work": work})
    assert code == 1 and "3 of 3 requests failed, over the threshold 0.1" in out, out
    records = [json.loads(line) for line in (work / "aiperf_artifacts" / "profile_export.jsonl").read_text().splitlines()]
    assert records and all(r["error"]["type"] == "ConnectionError" for r in records)
    assert not (work / "aiperf_artifacts" / "server_metrics_export.json").exists()


def test_client_without_a_server_fails_as_the_real_one(tmp_path: Path) -> None:
    script = ("python3 /x/utils/bench_serving/benchmark_serving.py --model m --base-url http://127.0.0.1:8999 "
              "--dataset-name random --num-prompts 10 --max-concurrency 2 --save-result --result-dir /tmp "
              "--result-filename r.json")
    code, out, _ = _sandboxed(tmp_path, script)
    assert code == 1
    assert "FAIL: request failure rate 100.0% exceeds 5% threshold (0/10 completed)" in out


def test_docker_run_is_a_container(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "recipe.sh").write_text("echo in-recipe\n")
    script = ("A=1 C=3 docker run --rm --network=host --name=bmk --gpus=8 --ipc=host -v /src:/workspace/ "
              "-w /workspace/ -e A -e B=2 -e C= --entrypoint=/bin/bash img:tag "
              "-c 'pwd; echo \"A=$A B=$B C=[$C] D=${D-unset}\"; bash recipe.sh; echo hi > from-container'")
    code, out, standins = _sandboxed(tmp_path, script, binds={"/src": src}, env={"D": "4"})
    assert code == 0, out
    assert out.splitlines()[-3:] == ["/workspace", "A=1 B=2 C=[] D=unset", "in-recipe"]
    assert (src / "from-container").read_text() == "hi\n"
    assert [c.name for c in read_calls(standins / "log")] == ["docker"]


@NODES
def test_slurm_allocation_and_pyxis_container(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    script = """
set -e
JOB_ID=$(salloc --partition=compute --gres=gpu:8 --exclusive --time=180 --no-shell --job-name=node_01 2>&1 \\
    | tee /dev/stderr | grep -oP 'Granted job allocation \\K[0-9]+')
echo "listed=$(squeue --name=node_01 -h -o %A)"
srun --jobid=$JOB_ID --container-image=/squash/img.sqsh --container-mounts=/src:/workspace/,/cache:/hf \\
    --container-workdir=/workspace/ --no-container-entrypoint --export=ALL,K=V \\
    bash -c 'echo "in=$(pwd) K=$K job=$SLURM_JOB_ID node=$SLURMD_NODENAME"; touch made-here; test -d /hf'
scancel $JOB_ID
echo "after=[$(squeue --name=node_01 -h -o %A)]"
"""
    code, out, _ = _sandboxed(tmp_path, script, binds={"/src": src})
    assert code == 0, out
    lines = out.splitlines()
    assert "listed=1000" in lines and "after=[]" in lines
    assert "in=/workspace K=V job=1000 node=node_01" in lines
    assert (src / "made-here").exists()


@NODES
@pytest.mark.parametrize("step", ["", "--container-image=/squash/img.sqsh"])
def test_a_task_that_signals_its_own_process_group_ends_on_its_node_only(tmp_path: Path, step: str) -> None:
    """Each task of a step over several nodes runs in a process group of its own, as slurmstepd runs a node's
    tasks: a node that signals its own group (server_sglang.sh's `kill -TERM -$pgid`, with the pgid `ps` read
    before the server's setsid took effect) ends its own task and nothing of the batch script on the first node,
    whose job goes on and ends; scancel still reaches a task's group."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "job.sh").write_text(f"""#!/bin/bash
trap 'echo batch got TERM' TERM
srun --nodes=2 {step} bash -c 'if [ "$SLURM_PROCID" = 1 ]; then kill -TERM -- -$(ps -o pgid= -p $$ | tr -d " "); fi
    echo "task $SLURM_PROCID done"'
echo "batch went on"
srun --nodes=2 {step} bash -c 'echo "waiting $SLURM_PROCID"; exec -a standin-task-waits /bin/sleep 600' &
for i in $(seq 1 200); do
    (( $(grep -c '^waiting' /out/slurm-$SLURM_JOB_ID.out) == 2 )) && break; /bin/sleep 0.1
done
scancel "$SLURM_JOB_ID"
""")
    script = """
set -e
JOB=$(sbatch --parsable -N 2 -o /out/slurm-%j.out /out/job.sh)
for i in $(seq 1 100); do squeue -h -j "$JOB" -o %i | grep -q . || break; /bin/sleep 0.1; done
echo "queued after: $(squeue -h -j "$JOB" -o %i)"
/bin/sleep 0.5
cat /out/slurm-$JOB.out
echo "left: $(ps -eo args | grep -c '^standin-task-waits')"
"""
    code, out, _ = _sandboxed(tmp_path, script, vendor="amd", binds={"/out": src}, timeout=60)
    assert code == 0, out
    lines = out.splitlines()
    assert "task 0 done" in lines and "task 1 done" not in lines
    # the batch script is signalled by the scancel at its end only, not by the second node's kill
    assert lines.count("batch got TERM") == 1 and lines.index("batch went on") < lines.index("batch got TERM"), out
    assert sorted(line for line in lines if line.startswith("waiting ")) == ["waiting 0", "waiting 1"]
    assert "queued after: " in lines and "left: 0" in lines, out


def test_ps_gives_a_background_programs_group_once_its_setsid_took_effect(tmp_path: Path) -> None:
    """`ps -o pgid= -p $!` right after starting a program that calls setsid answers the program's own group, even
    when the program takes its time to get there (here 0.2 s, as a loaded machine may make it), as on a node whose
    idle cores run the child at once; a program that stays in the caller's group is answered after 0.5 s."""
    script = r"""
bash -c '/bin/sleep 0.2; exec setsid /bin/sleep 1' &
child=$!
echo "setsid child: $([ "$(ps -o pgid= -p "$child" | tr -d ' ')" = "$child" ] && echo own group || echo caller group)"
/bin/sleep 1 &
echo "plain child: $([ "$(ps -o pgid= -p "$!" | tr -d ' ')" = "$(ps -o pgid= -p $$ | tr -d ' ')" ] && echo caller group)"
"""
    code, out, _ = _sandboxed(tmp_path, script)
    assert code == 0, out
    assert out.splitlines()[:2] == ["setsid child: own group", "plain child: caller group"], out


def test_a_batch_job_that_signals_its_own_group_still_ends(tmp_path: Path) -> None:
    """What stands for slurmstepd outlives a signal to the batch script's process group and records the job's end
    (squeue no longer lists it), as no signal of the script's reaches slurmstepd."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "job.sh").write_text("""#!/bin/bash
trap 'echo batch got TERM' TERM
kill -TERM 0
echo "batch went on"
""")
    script = """
JOB=$(sbatch --parsable -o /out/slurm-%j.out /out/job.sh)
for i in $(seq 1 50); do squeue -h -j "$JOB" -o %i | grep -q . || break; /bin/sleep 0.1; done
echo "queued after: $(squeue -h -j "$JOB" -o %i)"
cat /out/slurm-$JOB.out
"""
    code, out, _ = _sandboxed(tmp_path, script, binds={"/out": src}, timeout=30)
    assert code == 0, out
    assert out.splitlines()[:3] == ["queued after: ", "batch got TERM", "batch went on"], out


@NODES
def test_a_job_of_several_nodes_runs_a_task_on_each_node_with_its_own_address(tmp_path: Path) -> None:
    """sbatch -N 3 allocates three nodes; an srun step over them runs its command once per node, at once, each
    task with its rank, its node's name and its node's own address (hostname, `ip route get`, the address a
    stand-in server binds), so servers of different nodes can take the same port, as the AMD multinode chain
    has them; a container started on a node is on that node, and a pyxis step (`srun --container-image`)
    with no size runs a container on every node of the job."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "job.sh").write_text(r"""#!/bin/bash
#SBATCH --job-name=multi
echo "batch on $(hostname) nodes=$SLURM_JOB_NODELIST n=$SLURM_NNODES"
echo "squeue $(squeue -j "$SLURM_JOB_ID" -h -o '%N %D')"
srun --nodes=3 --ntasks=3 bash -c 'echo "task $SLURM_PROCID on $(hostname) $(hostname -I) $(ip route get 1.1.1.1 | awk "/src/ {print \$7}")"'
srun --nodelist="$(scontrol show hostnames "$SLURM_JOB_NODELIST" | sed -n 2,3p | paste -sd,)" bash -c \
    'docker run --rm --network=host img bash -c "echo container \$(hostname)"'
srun --nodes=2 bash -c 'python3 -m sglang.launch_server --host 0.0.0.0 --port 8000 > /out/server-$SLURM_PROCID.log 2>&1 &
    for i in 1 2 3 4 5 6 7 8 9 10; do curl -sf http://$(hostname -I):8000/health > /dev/null && break; sleep 1; done
    curl -s -D - -o /dev/null http://localhost:8000/health | grep -i x-standin-server | tr -d "\r"'
srun --container-image=/squash/img.sqsh bash -c 'echo "pyxis $SLURM_PROCID of $SLURM_NTASKS on $(hostname) $SLURM_NNODES"'
""")
    script = """
set -e
JOB=$(sbatch --parsable -N 3 -o /out/slurm-%j.out /out/job.sh)
while squeue -h -j "$JOB" -o %i | grep -q .; do sleep 0.1; done
cat /out/slurm-$JOB.out
"""
    code, out, standins = _sandboxed(tmp_path, script, vendor="amd", binds={"/out": src}, timeout=60)
    assert code == 0, out
    lines = out.splitlines()
    assert "batch on node_01 nodes=node_01,node_01-1,node_01-2 n=3" in lines
    assert "squeue node_01,node_01-1,node_01-2 3" in lines  # what launchers give `scontrol show hostnames`
    assert sorted(line for line in lines if line.startswith("task ")) == [
        "task 0 on node_01 127.0.0.1 127.0.0.1", "task 1 on node_01-1 127.0.0.2 127.0.0.2",
        "task 2 on node_01-2 127.0.0.3 127.0.0.3"]
    assert sorted(line for line in lines if line.startswith("container ")) == [
        "container node_01-1", "container node_01-2"]
    # A pyxis step with no size is the whole job: a container on each node.
    assert sorted(line for line in lines if line.startswith("pyxis ")) == [
        "pyxis 0 of 3 on node_01 3", "pyxis 1 of 3 on node_01-1 3", "pyxis 2 of 3 on node_01-2 3"]
    # Both nodes' servers took port 8000, each on its node's address, and each answered as its node (curl's
    # "localhost" on a node is that node).
    served = sorted(line.split(":", 1)[1].strip().rsplit(":", 1)[0] for line in lines
                    if line.lower().startswith("x-standin-server:"))
    assert served == ["node_01-1:8000", "node_01:8000"], out
    servers = [c for c in read_calls(standins / "log") if c.name == "python3" and "sglang.launch_server" in c.args]
    assert sorted(c.env.get("STANDIN_NODE_ADDR") for c in servers) == ["127.0.0.1", "127.0.0.2"]


@NODES
def test_llm_d_proxies_listen_where_their_options_and_configuration_say(tmp_path: Path) -> None:
    """llm-d's coordinator starts EPP (gRPC, health and metrics ports), Envoy (the listeners of its real
    configuration, benchmarks/llm-d/envoy.yaml: 8080 and the admin 9901, not the EPP upstream it names) and a
    pd-sidecar on each decode node, and waits for each as llm-d's server.sh does."""
    llmd = full_corpus_dir() / "benchmarks" / "llm-d"
    script = """
epp --pool-name=epp --grpc-port=9002 --grpc-health-port=9003 --metrics-port=9090 > /tmp/epp.log 2>&1 &
envoy -c /etc/envoy/envoy.yaml > /tmp/envoy.log 2>&1 &
pd-sidecar --port=8000 --vllm-port=8200 --kv-connector=nixlv2 > /tmp/sidecar.log 2>&1 &
until (echo > /dev/tcp/127.0.0.1/9002) 2>/dev/null; do /usr/bin/sleep 0.05; done
until [[ "$(curl -o /dev/null -s -w '%{http_code}' http://127.0.0.1:9901/ready)" == 200 ]]; do /usr/bin/sleep 0.05; done
until curl -sf http://0.0.0.0:8000/health; do /usr/bin/sleep 0.05; done
for port in 9003 9090 8080 9002; do (echo > /dev/tcp/127.0.0.1/$port) 2>/dev/null && echo "open $port"; done
envoy -c /nowhere.yaml; echo "envoy without a configuration: $?"
"""
    code, out, _ = _sandboxed(tmp_path, script, binds={"/etc/envoy": llmd}, timeout=30)
    assert code == 0, out
    assert [line for line in out.splitlines() if line.startswith("open ")] == [
        "open 9003", "open 9090", "open 8080", "open 9002"]
    assert "envoy: cannot read /nowhere.yaml" in out and "envoy without a configuration: 1" in out


def test_gpu_tools_are_the_nodes(tmp_path: Path) -> None:
    lib = full_corpus_dir() / "benchmarks" / "benchmark_lib.sh"
    script = f"""
command -v nvidia-smi || echo "no nvidia-smi"
amd-smi static --json | python3 -c 'import json, sys; d = json.load(sys.stdin)["gpu_data"]; print(len(d), d[0]["asic"]["market_name"])'
source /ix/benchmarks/benchmark_lib.sh
wait_for_amd_gpu_clean
"""
    code, out, _ = _sandboxed(tmp_path, script, vendor="amd", binds={"/ix/benchmarks": lib.parent})
    assert code == 0, out
    assert "no nvidia-smi" in out and "8 AMD Instinct MI355X" in out and "GPUs clean (vram%max=0 after 10s)" in out
    header = ("timestamp, index, power.draw [W], temperature.gpu, clocks.current.sm [MHz], clocks.current.memory [MHz], "
              "utilization.gpu [%], utilization.memory [%]")  # what InferenceX's own tests feed its power parser
    script = ("nvidia-smi --query-gpu=timestamp,index,power.draw,temperature.gpu,clocks.current.sm,"
              "clocks.current.memory,utilization.gpu,utilization.memory --format=csv | head -3")
    code, out, _ = _sandboxed(tmp_path / "nv", script)
    lines = out.splitlines()
    assert code == 0 and lines[0] == header, out
    assert lines[1].split(", ")[1:3] == ["0", "120.00 W"] and lines[2].split(", ")[1] == "1"


def test_hf_download_fills_a_checkpoint(tmp_path: Path) -> None:
    script = """
hf download org/model --local-dir /models/m
hf download --repo-type dataset org/traces
python3 -c 'import json; print(sorted(json.load(open("/models/m/model.safetensors.index.json"))["weight_map"].values()))'
ls /models/m
"""
    code, out, _ = _sandboxed(tmp_path, script, env={"HF_HUB_CACHE": "/hub"})
    assert code == 0, out
    lines = out.splitlines()
    assert lines[:2] == ["/models/m", "/hub/models--org--traces/snapshots/" + "0" * 40]
    assert lines[2] == "['model-00001-of-00001.safetensors']"
    assert lines[3:] == ["config.json", "model-00001-of-00001.safetensors", "model.safetensors.index.json",
                         "tokenizer.json", "tokenizer_config.json"]


def test_the_images_python_survives_a_daemon_thread_writing_as_it_exits(tmp_path: Path) -> None:
    # What sync.py's barrier can do (shims/python3.sh): a daemon thread still writing to stderr when the main
    # thread returns.  A buffered stderr makes the interpreter abort at shutdown; every run here did.
    script = """
cat > /tmp/exits.py <<'PY'
import sys, threading, time
def write():
    while True:
        sys.stderr.write("accept() on a closed socket\\n")
threading.Thread(target=write, daemon=True).start()
time.sleep(0.01)
print("barrier passed")
PY
for n in 1 2 3 4 5; do python3 /tmp/exits.py 2>/dev/null; echo "exit $?"; done
"""
    code, out, _ = _sandboxed(tmp_path, script, vendor="amd")
    assert code == 0, out
    assert out.splitlines() == ["barrier passed", "exit 0"] * 5, out
