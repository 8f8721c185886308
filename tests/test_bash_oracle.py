"""Real bash checks the recipe evaluator, on real InferenceX jobs chosen to leave nothing of a wide sample unchecked.

Each job run runs for real: the workflow's launch step in bash, the fleet's
launcher, the recipe, with the stand-ins on PATH in a sandbox
(tests/standins).  Every flag and variable ``recipe show`` states for the job
must be what bash gave the server it started.  The sample is fixed: every
recipe of the tree in turn, each one's jobs spread over its list, 100 jobs of
100 recipes, and the first job that starts a router of each recipe that starts
one for none of those.  Of it, the jobs run are the few that together have everything
any job of the sample has (``standins.oracle.features``): every fleet's
launcher with every framework and scenario it starts, every model and
precision, every flag and variable name ``recipe show`` states, every kind of
bash syntax node under every kind of parent and every command name the
recipes spell.  So every statement name and every construct the evaluator
reads in the 100 recipes is held to bash, at about half the processes (each
job is 60-80 of them).  A job left out adds no fleet with a framework and
scenario, no statement name and no kind of construct; what is not run here is
its own values and its own arrangement of those constructs, which
bench/bench_bash_oracle.py checks: it runs every job.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import full_corpus_dir

from standins.jobrun import node_for
from standins.oracle import OracleReport, covering, evaluate_all, features, run_oracle, sample
from standins.sandbox import unavailable

pytestmark = pytest.mark.skipif(unavailable() is not None, reason=str(unavailable()))

SAMPLE_SIZE = 100
# Recipes the stand-ins do not carry: before it starts the server, the recipe needs an active RDMA device in
# /sys/class/infiniband (kimik3 on B300 with vLLM, Mooncake) or patches files of the real image's vLLM and aiter
# installation (kimik3 on MI355X with vLLM).
NOT_CARRIED = frozenset({"benchmarks/single_node/agentic/kimik3_fp4_b300_vllm_mtp.sh",
                         "benchmarks/single_node/agentic/kimik3_fp4_mi355x_mtp.sh"})


# Jobs of several nodes listen on the nodes' own addresses (127.0.0.k) at the ports their recipes give (8000,
# 30000): run one at a time, on one worker (`--dist loadgroup`), or two would bind the same address and port.
NODES = pytest.mark.xdist_group("standin-nodes")
# The tests of the oracle's sample share one run of it (about 35 s): on one worker, or each worker runs it again.
SAMPLE = pytest.mark.xdist_group("bash-oracle-sample")


@dataclass
class Run:
    sample: list  # type: ignore[type-arg]  # the jobs of the sample
    features: list[frozenset[tuple[str, ...]]]  # each one's, as standins.oracle.features gives them
    chosen: list[int]  # the jobs run: indices into ``sample``
    report: OracleReport


def routed_jobs(chosen: list) -> list:  # type: ignore[type-arg]
    """For each recipe that starts a router for some of its jobs and for none of ``chosen``, its first such job:
    a router line is held to bash for every recipe that has one (the sample, by recipe, picks its jobs by
    their place in the list, which for most of them is a job without DP attention and so without a router)."""
    from real_jobs import real_evaluations

    have = {rj.recipe for rj, r in real_evaluations() if r is not None and r.routers and rj.job in chosen}
    out: dict[str, object] = {}
    for rj, result in real_evaluations():
        if result is not None and result.routers and rj.recipe not in have and rj.recipe not in out:
            out[str(rj.recipe)] = rj.job
    return list(out.values())


@pytest.fixture(scope="session")  # (a module's fixture is set up again when its tests do not run in one stretch)
def oracle(full_corpus_jobs) -> Run:  # type: ignore[no-untyped-def]
    from ci_tools.config import load_config
    from ci_tools.jobs.contract import resolve_recipe
    from ci_tools.revision.snapshot import WorkTreeSnapshot

    root = full_corpus_dir()
    config = load_config(root)
    snapshot = WorkTreeSnapshot(config.root)
    # A job whose runner label has no node and names no launcher runs nowhere (4 configs of the tree).
    jobs = sample(full_corpus_jobs, config, snapshot, SAMPLE_SIZE,
                  exclude=lambda job: resolve_recipe(job, config, snapshot).script in NOT_CARRIED
                  or node_for(job, config, snapshot) is None)
    jobs += routed_jobs(jobs)
    found = [features(job, result, config, snapshot)
             for job, result in zip(jobs, evaluate_all(jobs, config, snapshot))]
    chosen = covering(found)
    # The result step (utils/process_result.py) is left out: tests/test_standins.py shows it reads the client's file.
    report = run_oracle([jobs[i] for i in chosen], config, snapshot, root, workers=4, timeout=90, process=False)
    return Run(jobs, found, chosen, report)


@pytest.fixture(scope="session")
def report(oracle: Run) -> OracleReport:
    return oracle.report


@SAMPLE
def test_the_jobs_run_have_everything_a_sample_spanning_the_recipe_families_has(oracle: Run) -> None:
    from ci_tools.config import load_config
    from ci_tools.jobs.contract import resolve_recipe
    from ci_tools.revision.snapshot import WorkTreeSnapshot

    config = load_config(full_corpus_dir())
    snapshot = WorkTreeSnapshot(config.root)
    recipes = {resolve_recipe(job, config, snapshot).script for job in oracle.sample}
    assert len(oracle.sample) >= SAMPLE_SIZE >= 100
    assert len(recipes) >= 90
    assert {job.scenario for job in oracle.sample} == {"fixed-seq-len", "agentic-coding"}
    assert [o.job for o in oracle.report.outcomes] == [oracle.sample[i] for i in oracle.chosen]
    everything = frozenset().union(*oracle.features)
    run = frozenset().union(*(oracle.features[i] for i in oracle.chosen))
    assert run == everything
    kinds = {f[0] for f in everything}
    assert kinds == {"fleet", "framework", "model", "precision", "flag", "router flag", "variable", "syntax",
                     "command"}
    assert len({f for f in everything if f[0] == "fleet"}) >= 10 and len(everything) > 600
    assert len(oracle.chosen) < len(oracle.sample)


@SAMPLE
def test_every_job_of_the_sample_reaches_its_server_in_bash(report: OracleReport) -> None:
    not_compared = [f"{o.job.label()}: {o.skipped}" for o in report.outcomes if o.comparison is None]
    assert not not_compared, "\n".join(not_compared)


@SAMPLE
def test_every_flag_and_variable_recipe_show_states_is_what_bash_ran(report: OracleReport) -> None:
    totals = report.totals()
    print(totals)  # shown with -rA, and beside a failure
    disagreements = [f"{o.job.label()} ({o.node}): {d}" for o in report.compared
                     for d in (o.comparison.disagreements if o.comparison else [])]
    assert not disagreements, "\n".join(disagreements)
    assert totals["flags_stated"] == totals["flags_equal"] > 750
    assert totals["env_stated"] == totals["env_equal"] > 450
    assert totals["servers_stated"] == totals["servers_run"] == totals["lines_identical"]
    # the routers started in front of the servers (sglang-router, vllm-router): each line as bash gave it
    assert totals["routers_stated"] == totals["routers_run"] == totals["router_lines_identical"] > 0
    # Every variable a server got beyond the launch step's environment is one recipe show lists.
    unlisted = [f"{o.job.label()}: {v}" for o in report.compared
                for v in (o.comparison.env_unstated if o.comparison else [])]
    assert not unlisted, "\n".join(unlisted)


# A recipe of the tree that fails after its server, on a real runner as here: it passes a stray word to
# run_benchmark_serving ("EP_SIZE \\" among the options), which stops with "Unknown parameter: EP_SIZE".
FAILS_AFTER_SERVER = frozenset({"benchmarks/single_node/fixed_seq_len/qwen3.5_fp8_mi325x_mtp.sh"})


@SAMPLE
def test_fixed_sequence_jobs_leave_their_result_where_the_workflow_looks(report: OracleReport) -> None:
    from ci_tools.config import load_config
    from ci_tools.jobs.contract import resolve_recipe
    from ci_tools.revision.snapshot import WorkTreeSnapshot

    config = load_config(full_corpus_dir())
    snapshot = WorkTreeSnapshot(config.root)
    fixed = [o for o in report.outcomes if o.job.scenario == "fixed-seq-len" and not o.job.fields.get("eval-only")]
    missing = {resolve_recipe(o.job, config, snapshot).script: o.job.label() for o in fixed if not o.result_file}
    assert len(fixed) > 25 and set(missing) <= FAILS_AFTER_SERVER, missing
    assert all(o.clients_reached_own_server for o in fixed)


# The sample runs the workflow's launch step itself; `ci-tools sweep run` runs the same launcher the same way,
# at about 0.5 s more CPU a job (ci-tools' own start). Both must start the same servers.
SWEEP_CASES = ("dsr1-fp8-mi355x-sglang",)
# What differs by design: sweep's process marker and the per-job files it gives the steps.
RUNNER_ONLY = {"CI_TOOLS_SWEEP_JOB", "GITHUB_ENV", "GITHUB_OUTPUT", "GITHUB_PATH", "GITHUB_RUN_ID",
               "GITHUB_RUN_ATTEMPT", "MODAL_TOKEN_ID", "MODAL_TOKEN_SECRET", "SHLVL"}


@pytest.mark.parametrize("key", SWEEP_CASES)
def test_sweep_run_starts_the_servers_the_launch_step_starts(key: str, full_corpus_jobs, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from ci_tools.config import load_config
    from ci_tools.revision.snapshot import WorkTreeSnapshot

    from standins.jobrun import STEP, SWEEP, run_job

    config = load_config(full_corpus_dir())
    snapshot = WorkTreeSnapshot(config.root)
    job = next(j for j in full_corpus_jobs if j.config_key == key)
    runs = {how: run_job(job, config, snapshot, config.root, tmp_path / how, through=how, process=False, timeout=90)
            for how in (STEP, SWEEP)}
    assert [r.exit_code for r in runs.values()] == [0, 0]
    step, sweep = (runs[h].servers(config.server_patterns) for h in (STEP, SWEEP))
    assert len(step) == len(sweep) == 1
    assert step[0][1:] == sweep[0][1:]
    differ = {k for k in set(step[0][0].env) | set(sweep[0][0].env) if step[0][0].env.get(k) != sweep[0][0].env.get(k)}
    assert differ <= RUNNER_ONLY, differ
    assert all(r.result_file() is not None for r in runs.values())


def test_the_comparison_finds_what_bash_gave_otherwise(full_corpus_jobs) -> None:  # type: ignore[no-untyped-def]
    """compare.py against words made from recipe show's own line, then changed: each change is one finding."""
    from ci_tools.config import load_config
    from ci_tools.revision.snapshot import WorkTreeSnapshot

    from standins.compare import compare
    from standins.oracle import evaluate_all

    config = load_config(full_corpus_dir())
    snapshot = WorkTreeSnapshot(config.root)
    job = next(j for j in full_corpus_jobs if j.config_key == "dsr1-fp8-mi355x-sglang")
    result = evaluate_all([job], config, snapshot)[0]
    assert result is not None and len(result.servers) == 1
    flags = [f for f in result.servers[0] if f.value is None or f.value.text is not None]
    assert len(flags) < len(result.servers[0])  # --port "$PORT": known when the job runs
    words: list[str] = []
    for flag in result.servers[0]:
        words += [flag.name] if flag.value is None else [flag.name, flag.value.text or "8888"]
    env = {name: str(v.text) for name, v in result.env.items() if v.text is not None}
    same = compare(result, [("python3 -m sglang.launch_server", tuple(words), env)])
    assert same.equal and same.flags_stated == same.flags_equal == len(flags) > 10
    assert same.env_stated == same.env_equal > 5 and (same.lines_identical, same.lines_identical_known) == (1, 0)

    valued = next(i for i, w in enumerate(words) if w == "--tensor-parallel-size")
    changed = list(words)
    changed[valued + 1] = "2"
    del changed[changed.index("--trust-remote-code")]
    changed += ["--not-in-the-recipe", "1"]
    variable = next(n for n, v in result.env.items() if v.text is not None and v.location.note != "job environment")
    other = compare(result, [("python3 -m sglang.launch_server", tuple(changed),
                              {**env, variable: "other", "SET_BY_NOBODY": "1", "FROM_THE_STEP": "1"})],
                    {"FROM_THE_STEP": "1"})
    found = sorted(str(d) for d in other.disagreements)
    assert found == sorted([f"server 0: ci-tools states --tensor-parallel-size '{job.fields['tp']}', bash ran "
                            f"--tensor-parallel-size '2'",
                            "server 0: ci-tools states --trust-remote-code, bash ran no --trust-remote-code",
                            f"server 0: ci-tools states {variable}={env[variable]!r}, bash ran {variable}='other'"])
    assert other.unstated == ["--not-in-the-recipe '1'"] and other.lines_identical == 0
    assert other.env_unstated == ["server 0: SET_BY_NOBODY='1'"]
    none = compare(result, [])
    assert [d.actual for d in none.disagreements] == ["no such server started"]


def _through_sweep(jobs, key: str, tmp_path: Path):  # type: ignore[no-untyped-def]
    """The first job of ``key`` run through `ci-tools sweep run` with the stand-ins, and what it was run with."""
    from ci_tools.config import load_config
    from ci_tools.revision.snapshot import WorkTreeSnapshot

    from standins.jobrun import SWEEP, run_job

    config = load_config(full_corpus_dir())
    snapshot = WorkTreeSnapshot(config.root)
    job = next(j for j in jobs if j.config_key == key)
    return config, snapshot, job, run_job(job, config, snapshot, config.root, tmp_path / "job", through=SWEEP,
                                          process=False, timeout=120)


@NODES
def test_a_multinode_job_runs_on_its_nodes_as_the_fleet_runs_it(full_corpus_jobs, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """An AMD disaggregated job (P1xTP4 D1xTP8: two nodes) through `sweep run`, with the fleet's launcher,
    submit.sh, job.slurm and server_sglang.sh in bash: the job's two nodes each start their server in a
    container on their own address (prefill on the first, decode on the second, both on port 8000), the
    router on the first node is given both, the benchmark runs through it, and the job ends with its sweep.
    Every server flag and variable `recipe show` states for the two roles and the router is the one bash
    gave; the router's server URLs hold the nodes' addresses, known only at run time."""
    from standins.compare import compare

    config, snapshot, job, run = _through_sweep(full_corpus_jobs, "qwen3.5-fp8-mi355x-sglang-disagg", tmp_path)
    assert run.exit_code == 0, run.diagnosis()
    servers = run.servers(config.server_patterns)
    placed = sorted((call.env.get("STANDIN_NODE_ADDR"), words[words.index("--disaggregation-mode") + 1],
                     words[words.index("--port") + 1]) for call, _, words in servers)
    assert placed == [("127.0.0.1", "prefill", "8000"), ("127.0.0.2", "decode", "8000")]
    routers = run.servers(config.router_patterns)
    assert len(routers) == 1
    router_words = routers[0][2]
    assert router_words[router_words.index("--prefill") + 1] == "http://127.0.0.1:8000"
    assert router_words[router_words.index("--decode") + 1] == "http://127.0.0.2:8000"
    assert any(call.is_client() for call in run.calls)

    result = evaluate_all([job], config, snapshot)[0]
    assert result is not None and result.roles == ["prefill", "decode"]
    comparison = compare(result, [(form, words, call.env) for call, form, words in servers], None,
                         [(form, words) for _, form, words in routers])
    assert comparison.lines_identical == 2 and comparison.replicas == 0
    # every flag and variable stated, the router's included, is the one bash gave the node's server
    assert comparison.disagreements == []
    # the router is stated with both servers' URLs, each holding a node's address known only at run time
    [router] = result.routers
    assert [(f.name, f.value.text if f.value is not None else "") for f in router.flags
            if f.name in ("--prefill", "--decode")] == [("--prefill", None), ("--decode", None)]
    assert [f.location.line for f in router.flags if f.name in ("--prefill", "--decode")] == [321, 332]


@NODES
def test_an_agentic_multinode_job_replays_its_trace_through_the_router(full_corpus_jobs, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The AMD agentic job (DeepSeek-V4 P1xTP8 D1xTP8, DRAM HiCache offload) through `sweep run`: both nodes'
    servers start with --enable-metrics (ENABLE_METRICS=1: a `[[ ... != *"--enable-metrics"* ]]` pattern of
    three words), the router, and the trace replay in its client container, which flushes each server's cache
    before the run (the stand-in answers as SGLang does) and replays through the router. Every stated flag and
    variable is bash's. InferenceX's own process_agentic_result and validate_agentic_result read the replay's
    artifacts; the aggregate comes back in the job's record with its metrics, its warmup requests not counted
    as failed ones."""
    from ci_tools.results.record import load
    from standins.compare import compare

    config, snapshot, job, run = _through_sweep(full_corpus_jobs, "dsv4-fp4-mi355x-sglang-disagg-agentic-hicache-mtp", tmp_path)
    log = "\n".join(p.read_text(errors="replace") for p in sorted(run.written.rglob("slurm_job-*.out")))
    assert "[clear_caches] http://127.0.0.1:8000: L1+L2 flushed" in log, log[-3000:]
    assert "[clear_caches] http://127.0.0.2:8000: L1+L2 flushed" in log
    assert "Validated aiperf request error rate: 0/3 = 0.000% <= 10.000%" in log
    assert run.exit_code == 0, run.diagnosis()
    servers = run.servers(config.server_patterns)
    assert sorted((call.env.get("STANDIN_NODE_ADDR"), "--enable-metrics" in words) for call, _, words in servers) == [
        ("127.0.0.1", True), ("127.0.0.2", True)]
    routers = run.servers(config.router_patterns)
    [replay] = [call for call in run.calls if call.name == "aiperf" and "profile" in call.args]
    reached = replay.extra(".aiperf.json")
    router_port = routers[0][2][routers[0][2].index("--port") + 1]
    assert reached is not None and reached["errors"] == []
    assert [s.split(":")[1] for s in reached["servers"]] == [router_port]

    [record_path] = run.written.glob("sweep-results/*/record.json")
    record = load(record_path)
    assert record.status.state == "success" and record.job.scenario == "agentic-coding"
    [point] = record.results
    assert point.concurrency == 1 and point.validity.valid, point.validity
    # one lane: its 10 warmup requests (AIPERF_WARMUP_REQUESTS_PER_LANE's default), then 3 profiled turns
    assert (point.validity.completed, point.validity.requested) == (3, 3)
    aggregate = json.loads((record_path.parent / point.aggregate).read_text())
    assert aggregate["request_accounting"]["records_warmup_dropped"] == 10
    assert point.metrics["throughput_per_gpu"] > 0 and point.metrics["ttft_median"] > 0

    result = evaluate_all([job], config, snapshot)[0]
    assert result is not None
    comparison = compare(result, [(form, words, call.env) for call, form, words in servers], None,
                         [(form, words) for _, form, words in routers])
    assert comparison.lines_identical == 2 and comparison.disagreements == []


@NODES
def test_an_llm_d_job_runs_on_four_nodes_in_pyxis_containers(full_corpus_jobs, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """llm-d on GB200 (P1xTP1/EP8 over two nodes, D1xTP8 over two) through `sweep run`: launch_gb200-nv.sh,
    submit.sh and job.slurm in bash; one pyxis container per node runs server.sh, four vLLM servers start on
    their nodes, the decode leader starts its sidecar, EPP and Envoy and runs the benchmark, whose result the
    launcher keeps; its scancel ends the job's workers.  Every flag `recipe show` states is bash's; of the
    variables, only PORT differs: `sweep` gives every job a free port, which llm-d's server.sh reads where the
    fleet, giving none, has benchmark_lib.sh's 8888."""
    from standins.compare import compare

    config, snapshot, job, run = _through_sweep(full_corpus_jobs, "dsv4-fp4-gb200-llmd-vllm", tmp_path)
    assert run.exit_code == 0, run.diagnosis()
    servers = run.servers(config.server_patterns)
    assert sorted(call.env.get("STANDIN_NODE_ADDR") for call, _, _ in servers) == [
        "127.0.0.1", "127.0.0.2", "127.0.0.3", "127.0.0.4"]
    assert {call.name for call in run.calls} >= {"pd-sidecar", "epp", "envoy", "scancel"}
    assert list(run.written.glob("sweep-results/*/results/*.json")) or list(run.written.glob("*.json"))

    result = evaluate_all([job], config, snapshot)[0]
    assert result is not None
    comparison = compare(result, [(form, words, call.env) for call, form, words in servers], None, [])
    assert comparison.lines_identical == 2
    assert {d.name for d in comparison.disagreements} == {"PORT"}
