"""Each job's environment, derived from the workflow templates and the fleets' launchers of the real tree."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ci_tools.config import load_config
from ci_tools.jobs.contract import job_env, recipe_env
from ci_tools.errors import UsageError
from ci_tools.jobs.env.contract import EnvVar, JobEnvContract, bucket_of, contract_for, load_contract
from ci_tools.jobs.env.expr import UNKNOWN, ExprError, compile_expression, compile_value, to_text
from ci_tools.jobs.env.launchers import scan_launcher
from ci_tools.jobs.env.workflow import BUILTIN
from ci_tools.jobs.matrix import expand
from ci_tools.jobs.job import Job
from ci_tools.model.repository import RepoData, load_repo
from ci_tools.evaluation.evaluate import evaluate_job
from ci_tools.revision.snapshot import WorkTreeSnapshot

from conftest import full_corpus_dir

ROOT = Path(__file__).resolve().parent.parent
SINGLE = ".github/workflows/benchmark-tmpl.yml"
MULTI = ".github/workflows/benchmark-multinode-tmpl.yml"

# expected/job-env.json lists what the templates derive from each job; the workflow files set more, which
# it leaves out.  Every one of these is in the template's text (line at 843c625), so the workflow wins:
ORACLE_OMITS = {
    SINGLE: {
        "RANDOM_RANGE_RATIO": 158, "HF_TOKEN": 159, "HF_HUB_CACHE": 160, "REQUIRE_POWER": 193,
        "AIPERF_EXPERIMENTAL_FAST": 194, "EVAL_LIMIT": 195, "SWEBENCH_GEN_MODE": 196,
        "AIPERF_FAILED_REQUEST_THRESHOLD": 197, "PYTHONDONTWRITEBYTECODE": 199, "PYTHONPYCACHEPREFIX": 200,
        "SWEBENCH_USE_MODAL": 202, "MODAL_TOKEN_ID": 203, "MODAL_TOKEN_SECRET": 204, "SALLOC_EXCLUDE": 206,
        # the launch step's env: and what its script exports
        "RUNNER_NAME": 276, "RUNNER_TYPE": 277, "RESULT_FILENAME_BASE": 278, "GITHUB_STEP_SUMMARY": 281,
        "RESULT_FILENAME": 283,
    },
    MULTI: {
        "RANDOM_RANGE_RATIO": 218, "HF_TOKEN": 223, "EVAL_LIMIT": 242, "SWEBENCH_GEN_MODE": 243,
        "SWEBENCH_USE_MODAL": 245, "MODAL_TOKEN_ID": 246, "MODAL_TOKEN_SECRET": 247, "REQUIRE_POWER": 248,
        "POWER_PRODUCER_SHA": 249, "AIPERF_EXPERIMENTAL_FAST": 256, "PYTHONDONTWRITEBYTECODE": 263,
        "PYTHONPYCACHEPREFIX": 264, "RUNNER_NAME": 343, "RUNNER_TYPE": 344, "RESULT_FILENAME_BASE": 345,
        "RESULT_FILENAME": 348,
    },
}


@pytest.fixture(scope="module")
def contract(full_corpus_repo: RepoData) -> JobEnvContract:
    return contract_for(full_corpus_repo.config, full_corpus_repo.snapshot)


@pytest.fixture(scope="module")
def workflow_envs(contract: JobEnvContract, full_corpus_jobs: list[Job]) -> list[dict[str, EnvVar]]:
    return [contract.workflow_env(job) for job in full_corpus_jobs]


def first(jobs: list[Job], key: str, **fields: Any) -> Job:
    return next(j for j in jobs if j.config_key == key and all(j.get(k) == v for k, v in fields.items()))


# -- the templates' environment, for every job -------------------------------------------------


def test_every_jobs_environment_is_what_the_templates_give(contract: JobEnvContract, full_corpus_jobs: list[Job],
                                                           workflow_envs: list[dict[str, EnvVar]]) -> None:
    """expected/job-env.json (derived by reading run-sweep.yml into the two templates), job for job."""
    oracle = json.loads((full_corpus_dir() / "expected" / "job-env.json").read_text())
    assert contract.source == ".github/workflows/run-sweep.yml" and contract.problems == ()
    assert len(oracle) == len(full_corpus_jobs) == 1820
    differing, extra_names = [], []
    for job, expected, env in zip(full_corpus_jobs, oracle, workflow_envs):
        assert (expected["config-key"], expected["exp-name"]) == (job.config_key, job.get("exp-name"))
        ours = {name: var.value for name, var in env.items()}
        differing += [(job.label(), n, ours.get(n, "<absent>"), v) for n, v in expected["env"].items() if ours.get(n) != v]
        template = MULTI if job.multinode else SINGLE
        extra = set(ours) - set(expected["env"])
        if extra != set(ORACLE_OMITS[template]):
            extra_names.append((job.label(), sorted(extra ^ set(ORACLE_OMITS[template]))))
    assert differing == []
    assert extra_names == []


# What the recipe receives differs from what the templates give only where the job's fleet's launcher
# replaces a variable with a value of its own (line at 843c625); the value is then unknown.
LAUNCHER_REPLACES = {
    ("IMAGE", "runners/launch_gb200-nv.sh"): 330,             # export IMAGE=$SQUASH_FILE
    ("IS_MULTINODE", "runners/launch_gb300-nv.sh"): 720,      # export IS_MULTINODE=true
    ("MODEL", "runners/launch_b200-dgxc.sh"): 552,            # export MODEL="$MODEL_PATH"
    ("SCENARIO_SUBDIR", "runners/launch_rtx6000pro-lat.sh"): 40,  # ${SCENARIO_SUBDIR:-...}, then reshaped
}


def test_matrix_env_is_the_templates_environment_but_where_a_launcher_replaces_a_variable(
        full_corpus_repo: RepoData, full_corpus_jobs: list[Job]) -> None:
    oracle = json.loads((full_corpus_dir() / "expected" / "job-env.json").read_text())
    contract = contract_for(full_corpus_repo.config, full_corpus_repo.snapshot)
    replaced: dict[tuple[str, str], int] = {}
    for job, expected in zip(full_corpus_jobs, oracle):
        env = contract.recipe_env(job)  # what `matrix --env` prints
        for name, value in expected["env"].items():
            if env[name].value != value:
                assert env[name].value is None, (job.label(), name)
                # (the file read: launch_b200-dgxc-slurm.sh is a link to launch_b200-dgxc.sh)
                sources = {contract.launchers[p].path for p in contract.launcher_paths(job)}
                assert env[name].origin.path in sources, (job.label(), name)
                key = (name, env[name].origin.path)
                replaced[key] = env[name].origin.line
    assert replaced == LAUNCHER_REPLACES


def test_the_variables_the_oracle_leaves_out_are_in_the_templates(contract: JobEnvContract,
                                                                  full_corpus_jobs: list[Job],
                                                                  workflow_envs: list[dict[str, EnvVar]]) -> None:
    lines = {path: (full_corpus_dir() / path).read_text().splitlines() for path in ORACLE_OMITS}
    for path, names in ORACLE_OMITS.items():
        for name, line in names.items():
            assert f"{name}" in lines[path][line - 1], (path, line, name)
    single = workflow_envs[0]
    assert (single["RANDOM_RANGE_RATIO"].value, single["RANDOM_RANGE_RATIO"].origin.line) == ("0.8", 158)
    # Set from the node's name (`runner.name`) or a secret: present, value known only at run time.
    assert [single[n].value for n in ("RUNNER_NAME", "RESULT_FILENAME_BASE", "RESULT_FILENAME", "HF_TOKEN")] == [None] * 4


def test_buckets_and_the_sweep_jobs_that_run_them(contract: JobEnvContract, full_corpus_jobs: list[Job]) -> None:
    callers = {bucket: c.job for bucket, c in contract.workflows.callers.items()}
    assert callers == {
        ("multi_node", "1k1k"): "sweep-multi-node-1k1k", ("multi_node", "8k1k"): "sweep-multi-node-8k1k",
        ("single_node", "1k1k"): "sweep-single-node-1k1k", ("single_node", "8k1k"): "sweep-single-node-8k1k",
        ("single_node", "agentic"): "sweep-agentic", ("multi_node", "agentic"): "sweep-multi-node-agentic",
        ("evals",): "sweep-evals", ("agentic_evals",): "sweep-agentic-evals",
        ("multinode_evals",): "sweep-multi-node-evals", ("multinode_agentic_evals",): "sweep-multi-node-agentic-evals",
    }
    job = full_corpus_jobs[0]
    assert bucket_of(job) == ("single_node", "8k1k")
    eval_only = job.with_fields(**{"eval-only": True, "run-eval": True})
    assert bucket_of(eval_only) == ("evals",)
    env = contract.workflow_env(eval_only)
    assert (env["RUN_EVAL"].value, env["EVAL_ONLY"].value) == ("true", "true")  # sweep-evals passes both as true
    # A sequence length no sweep job runs takes the template of its kind.
    odd = job.with_fields(isl=2048, osl=512, **{"max-model-len": 2816})
    assert contract.caller_for(odd) is contract.workflows.callers[("single_node", "1k1k")]
    assert contract.workflow_env(odd)["ISL"].value == "2048"


def test_multinode_environment_exact(contract: JobEnvContract, full_corpus_jobs: list[Job]) -> None:
    job = first(full_corpus_jobs, "dsv4-fp4-mi355x-sglang-disagg-agentic-hicache-mtp", conc=[64])
    env = {n: v.value for n, v in contract.workflow_env(job, {"name": "mi355x-amds_06"}).items()}
    picked = {n: env[n] for n in ("CONC_LIST", "CONC", "ISL", "SCENARIO_SUBDIR", "KV_OFFLOAD_BACKEND_METADATA",
                                  "TOTAL_CPU_DRAM_GB", "PREFILL_NODES", "CLIENT_IMAGE", "DECODE_MTP_SIZE",
                                  "IS_MULTINODE", "RESULT_FILENAME", "RUN_EVAL", "ROUTER_METADATA")}
    assert picked == {
        "CONC_LIST": "64", "CONC": "64", "ISL": "0", "SCENARIO_SUBDIR": "agentic/",
        "KV_OFFLOAD_BACKEND_METADATA": '{\n  "name": "hicache"\n}', "TOTAL_CPU_DRAM_GB": "2399",
        # a worker's additional-settings, exported by the launch step
        "PREFILL_NODES": "1", "CLIENT_IMAGE": "lmsysorg/sglang-rocm:v0.5.15.post1-rocm720-mi35x-20260719",
        "DECODE_MTP_SIZE": "3", "IS_MULTINODE": "true",
        # known once the node is: the sweep executor passes it as the runner context
        "RESULT_FILENAME": "dsv4_p1x8_d1x8_conc64_kvdram-hicache_fp4_sglang-disagg_prefill-tp8-pp1-dcp1-pcp1-ep1-"
                           "dpfalse-nw1_decode-tp8-pp1-dcp1-pcp1-ep1-dpfalse-nw1_disagg-true_spec-mtp_conc64_"
                           "mi355x-amds_06",
        "RUN_EVAL": "false", "ROUTER_METADATA": "",
    }


# -- what only the node knows ------------------------------------------------------------------


def test_launcher_variables_exist_with_unknown_values(full_corpus_repo: RepoData, full_corpus_jobs: list[Job]) -> None:
    config, snapshot = full_corpus_repo.config, full_corpus_repo.snapshot
    job = first(full_corpus_jobs, "dsr1-fp4-mi355x-sglang", conc=4)  # runner mi355x: launch_mi355x-amds.sh
    env = recipe_env(job, config, snapshot)
    assert [env[n] for n in ("MODEL_PATH", "PORT", "HF_HUB_CACHE_MOUNT", "RUNNER_NAME")] == [None] * 4
    assert (env["MODEL"], env["TP"], env["GPU_COUNT"]) == ("amd/DeepSeek-R1-0528-MXFP4-Preview", "4", "4")
    assert contract_for(config, snapshot).launcher_paths(job) == ("runners/launch_mi355x-amds.sh",)
    # launch_b200-dgxc.sh replaces MODEL with its local path: on the b200 fleet MODEL is only known there.
    b200 = next(j for j in full_corpus_jobs if j.get("runner") == "b200")
    assert "runners/launch_b200-dgxc.sh" in contract_for(config, snapshot).launcher_paths(b200)
    assert recipe_env(b200, config, snapshot)["MODEL"] is None
    # A label runners.yaml does not define: the fleet it names, else any fleet.
    contract = contract_for(config, snapshot)
    named = next(j for j in full_corpus_jobs if j.get("runner") == "gb300-nv")
    assert contract.launcher_paths(named) == ("runners/launch_gb300-nv.sh",)
    unnamed = next(j for j in full_corpus_jobs if j.get("runner") == "h200-dgxc")
    assert contract.launcher_paths(unnamed) == tuple(contract.launchers) and len(contract.launchers) == 19


def test_launcher_scan_tells_own_values_from_passed_on_ones() -> None:
    found = scan_launcher("runners/launch_x.sh", b"""#!/usr/bin/env bash
export MODEL_PATH=/models/x PORT=$((8888 + 1))
export ISL="$ISL"
export GPU_COUNT="${GPU_COUNT:-${TP:?TP must be set}}"
UCX=eth0
IFS= read -r line < /dev/null
srun --export=ALL,UCX=$UCX,CACHE=/c bash "$SCRIPT"
docker run -e TP -e OWN=1 --env=KEY=v img
if [ "$IS_MULTINODE" = true ]; then export SLURM_PARTITION=gpu; fi
""")
    assert sorted(n for n, _ in found.sets) == ["CACHE", "KEY", "MODEL_PATH", "OWN", "PORT", "SLURM_PARTITION", "UCX"]
    assert [n for n, _ in found.fills] == ["GPU_COUNT"]
    assert dict(found.sets)["SLURM_PARTITION"].line == 9


def test_a_launcher_kept_as_a_symbolic_link_is_followed(full_corpus_repo: RepoData) -> None:
    contract = contract_for(full_corpus_repo.config, full_corpus_repo.snapshot)
    # launch_b200-dgxc-slurm.sh holds `launch_b200-dgxc.sh`, as git stores a symbolic link.
    def names(path: str) -> list[str]:
        return [n for n, _ in contract.launchers[path].sets]

    assert names("runners/launch_b200-dgxc-slurm.sh") == names("runners/launch_b200-dgxc.sh")
    assert "MODEL_PATH" in names("runners/launch_b200-dgxc.sh")


def test_fixed_seq_len_recipes_no_longer_stop_at_check_env_vars(full_corpus_repo: RepoData,
                                                                 full_corpus_jobs: list[Job]) -> None:
    # dsr1_fp4_mi355x_atom.sh: check_env_vars ... RANDOM_RANGE_RATIO RESULT_FILENAME (and MODEL_PATH via the launcher)
    job = first(full_corpus_jobs, "dsr1-fp4-mi355x-atom", conc=4)
    result = evaluate_job(job, full_corpus_repo.config, full_corpus_repo.snapshot)
    assert result is not None and result.recipe == "benchmarks/single_node/fixed_seq_len/dsr1_fp4_mi355x_atom.sh"
    assert result.missing_env == [] and len(result.servers) == 1
    port = result.flag_values("--server-port") or result.flag_values("--port")
    assert port and all(p is not None and p.text is None for p in port)  # the node's port: unknown, not 8888


# -- the sweep executor's concrete environment ---------------------------------------------------


def test_the_sweep_executor_fills_in_what_it_knows(full_corpus_repo: RepoData, full_corpus_jobs: list[Job]) -> None:
    contract = contract_for(full_corpus_repo.config, full_corpus_repo.snapshot)
    job = first(full_corpus_jobs, "dsr1-fp4-mi355x-sglang", conc=32)  # marked for evals
    env = job_env(job, result_dir="/r", port="9000", runner_name="mi355x-amds_03", contract=contract)
    assert (env["RESULT_DIR"], env["PORT"], env["RUNNER_NAME"], env["RUN_EVAL"]) == (
        "/r", "9000", "mi355x-amds_03", "false")
    assert env["RESULT_FILENAME"] == ("dsr1_8k1k_fp4_sglang_tp4-pp1-dcp1-pcp1-ep1-dpafalse_disagg-false_spec-none_"
                                      "conc32_mi355x-amds_03")
    assert "HF_TOKEN" not in env and "MODEL_PATH" not in env  # left to the runner's own environment
    assert job_env(job, run_eval=True, contract=contract)["RUN_EVAL"] == "true"
    assert "RUNNER_NAME" not in job_env(job, contract=contract)


# -- without templates: the built-in contract ---------------------------------------------------


def test_a_repository_without_templates_gets_the_built_in_contract() -> None:
    config = load_config(ROOT)
    repo = load_repo(WorkTreeSnapshot(ROOT), config, with_changelog=False)
    contract = contract_for(config, repo.snapshot)
    assert contract.source == BUILTIN and contract.problems == ()
    job = expand(repo)[0]
    env = recipe_env(job, config, repo.snapshot)
    assert env["PORT"] is None  # ci-tools sweep sets it when it runs the job
    assert (env["SCENARIO_SUBDIR"], env["RANDOM_RANGE_RATIO"], env["RESULT_DIR"], env["GPU_COUNT"]) == (
        "fixed_seq_len/", "0.8", "/workspace/results", str(job.get("tp")))
    assert "HF_HUB_CACHE" not in env  # no infrastructure path of InferenceX's runners


# -- the contract follows the repository --------------------------------------------------------


def contract_repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    for part in ("configs", ".github/workflows", "runners"):
        shutil.copytree(full_corpus_dir() / part, root / part)
    for path in root.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)
    return root


def test_an_edited_template_changes_the_environment(tmp_path: Path) -> None:
    root = contract_repo(tmp_path)
    template = root / SINGLE
    template.write_text(template.read_text().replace("  RANDOM_RANGE_RATIO: 0.8\n", "  RANDOM_RANGE_RATIO: 0.9\n"
                                                     "  NEW_KNOB: ${{ inputs.tp }}-${{ inputs.conc }}\n"))
    config = load_config(root)
    snapshot = WorkTreeSnapshot(root)
    job = expand(load_repo(snapshot, config, with_changelog=False))[0]
    env = recipe_env(job, config, snapshot)
    assert (env["RANDOM_RANGE_RATIO"], env["NEW_KNOB"]) == ("0.9", "4-4")


def test_workflows_holding_the_same_bytes_are_read_once(tmp_path: Path) -> None:
    """The base and the head of a change that leaves the workflows alone share one compiled reading."""
    from ci_tools.jobs.env.workflow import load_workflows

    first, second = contract_repo(tmp_path / "a"), contract_repo(tmp_path / "b")
    sweep = ".github/workflows/run-sweep.yml"
    read = load_workflows(WorkTreeSnapshot(first), sweep)
    assert load_workflows(WorkTreeSnapshot(second), sweep) is read
    (second / SINGLE).write_text((second / SINGLE).read_text() + "\n# edited\n")
    edited = load_workflows(WorkTreeSnapshot(second), sweep)
    assert edited is not read and set(edited.callers) == set(read.callers)


def test_a_broken_expression_is_reported_with_its_line_and_leaves_the_value_unknown(tmp_path: Path) -> None:
    root = contract_repo(tmp_path)
    template = root / SINGLE
    template.write_text(template.read_text().replace("  MODEL: ${{ inputs.model }}\n",
                                                     "  MODEL: ${{ inputs.model ) }}\n"))
    proc = subprocess.run([sys.executable, "-m", "ci_tools", "matrix", "--repo", str(root), "--env",
                           "dsr1-fp4-mi355x-sglang", "--conc", "4", "--tp", "4"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == (f"ci-tools: warning: {SINGLE}:163: unexpected `)` at column 14 of `inputs.model )`; "
                           "expected the end; the value is taken as unknown\n")
    [entry] = json.loads(proc.stdout)["shards"][0]["include"]
    assert entry["env"]["MODEL"] is None and entry["env"]["TP"] == "4"


def test_missing_or_partial_templates_are_reported(tmp_path: Path) -> None:
    root = contract_repo(tmp_path)
    (root / MULTI).unlink()
    single = root / SINGLE
    text = single.read_text()
    single.write_text(text.replace("bash ./runners/launch_${RUNNER_NAME%%_*}.sh", "echo no launcher here"))
    config = load_config(root)
    snapshot = WorkTreeSnapshot(root)
    contract = load_contract(config, snapshot)
    assert contract.problems == (
        f"{MULTI}: the workflow does not exist",
        f"{SINGLE}: no step calls a runner launcher (`bash ./runners/launch_....sh`); only the template's env: "
        "blocks are known",
    )
    jobs = expand(load_repo(snapshot, config, with_changelog=False))
    single_job = jobs[0]
    env = contract.recipe_env(single_job)
    assert env["TP"] == EnvVar("4", env["TP"].origin) and "RESULT_FILENAME" not in env and "MODEL_PATH" not in env
    multi = next(j for j in jobs if j.multinode)
    assert contract.caller_for(multi) is None and contract.workflow_env(multi) == {}  # no template runs it


def test_runtime_names_are_configured_and_checked(tmp_path: Path) -> None:
    root = contract_repo(tmp_path)
    (root / ".ci-tools.yaml").write_text("job-env:\n  runtime: [SITE_CACHE]\n")
    config = load_config(root)
    snapshot = WorkTreeSnapshot(root)
    job = expand(load_repo(snapshot, config, with_changelog=False))[0]
    assert recipe_env(job, config, snapshot)["SITE_CACHE"] is None
    (root / ".ci-tools.yaml").write_text("job-env:\n  workflow: .github/workflows/run-sweep.yml\n  runtim: [X]\n")
    with pytest.raises(UsageError) as err:  # refused when the file is loaded, by the configuration schema
        load_contract(load_config(root), snapshot)
    assert (str(err.value), err.value.line) == (
        f"{root / '.ci-tools.yaml'}:3: unknown setting `job-env.runtim`, expected one of: workflow, runtime", 3)
    (root / ".ci-tools.yaml").write_text("job-env:\n  runtime: [not a name]\n")
    with pytest.raises(UsageError, match="must be a list of environment variable names"):
        load_contract(load_config(root), snapshot)


def test_matrix_env_adds_each_jobs_environment(full_corpus_repo: RepoData) -> None:
    from ci_tools.sweep.jobs import job_from_entry

    proc = subprocess.run([sys.executable, "-m", "ci_tools", "matrix", "--repo", str(full_corpus_dir()), "--env",
                           "kimik3-fp4-mi355x-*"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    entries = [e for s in json.loads(proc.stdout)["shards"] for e in s["include"]]
    assert len(entries) == 8
    for entry in entries:
        job = job_from_entry(entry)  # the env annotation is not a field: the id still checks out
        assert entry["env"] == recipe_env(job, full_corpus_repo.config, full_corpus_repo.snapshot)
        assert entry["env"]["CONC"] == str(job.conc) and entry["env"]["MODEL_PATH"] is None


def test_what_the_launch_step_exports_comes_in_name_order(tmp_path: Path) -> None:
    """The interpreter keeps exported names in a set: name order keeps `matrix --env` the same from run to run."""
    from ci_tools.findings import Location
    from ci_tools.jobs.env.launch import script_exports

    script = "export ZED=1\nexport ALPHA=2\nexport MID=$ALPHA-x\nexport BETA\n"
    out = script_exports(script, {"BETA": "b"}, Location(".github/workflows/t.yml", 3), load_config(tmp_path),
                         WorkTreeSnapshot(tmp_path))
    assert list(out) == ["ALPHA", "MID", "ZED"] and out["MID"] == "2-x"


# -- expressions -------------------------------------------------------------------------------


CTX = {"matrix": {"config": {"conc": [8, 16], "router": {"name": "r", "version": "1"}, "dp-attn": False,
                             "model-prefix": "dsr1", "tp": 4}},
       "inputs": {"scenario-type": "agentic-coding", "flag": True, "empty": ""},
       "github": UNKNOWN, "secrets": UNKNOWN}


@pytest.mark.parametrize(("text", "expected"), [
    ("matrix.config.model-prefix", "dsr1"),
    ("matrix.config['model-prefix']", "dsr1"),
    ("matrix.config.conc[0]", 8),
    ("matrix.config.missing.name", None),
    ("toJson(matrix.config.conc)", "[\n  8,\n  16\n]"),
    ("join(matrix.config.conc, 'x')", "8x16"),
    ("join(fromJson('[\"A=1\", \"B=2\"]'), ' ')", "A=1 B=2"),
    ("matrix.config.router && toJson(matrix.config.router) || ''", '{\n  "name": "r",\n  "version": "1"\n}'),
    ("matrix.config.nothing && toJson(matrix.config.nothing) || ''", ""),
    ("inputs.scenario-type == 'agentic-coding' && 'agentic/' || 'fixed_seq_len/'", "agentic/"),
    ("inputs.scenario-type == 'AGENTIC-coding'", True),
    ("!inputs.empty", True),
    ("inputs.flag && '1' || '0'", "1"),
    ("format('{0}-{1}{{x}}', matrix.config.tp, 'a')", "4-a{x}"),
    ("contains(matrix.config.conc, 16)", True),
    ("contains(github.event.pull_request.labels.*.name, 'x')", UNKNOWN),
    ("secrets.TOKEN", UNKNOWN),
    ("false && secrets.TOKEN", False),
    ("secrets.TOKEN || 'x'", UNKNOWN),
    ("success()", UNKNOWN),
    ("1 < 2", True),
])
def test_expressions(text: str, expected: Any) -> None:
    assert compile_expression(text)(CTX) == expected


def test_values_keep_their_type_or_are_interpolated() -> None:
    assert compile_value("${{ matrix.config.dp-attn }}")(CTX) is False
    assert compile_value("tp${{ matrix.config.tp }}_${{ matrix.config.model-prefix }}")(CTX) == "tp4_dsr1"
    assert compile_value("x_${{ secrets.T }}")(CTX) is UNKNOWN
    assert compile_value(0.8)(CTX) == 0.8 and to_text(0.8) == "0.8" and to_text(4.0) == "4" and to_text(None) == ""
    with pytest.raises(ExprError, match="unknown function `nope`"):
        compile_expression("nope(1)")


def test_a_launcher_scan_is_kept_by_path_and_content() -> None:
    """Scans are shared across the snapshots of a history: another content, or the same content at another
    path, is scanned for itself."""
    one = b"export MODEL_PATH=/models/x\ndocker run -e TP img\n"
    other = b"export HF_HOME=/cache\nsrun bash \"$SCRIPT\"\n"
    first = scan_launcher("runners/launch_a.sh", one)
    assert [n for n, _ in first.sets] == ["MODEL_PATH"] and first.passes == frozenset({"TP"})
    changed = scan_launcher("runners/launch_a.sh", other)
    assert [n for n, _ in changed.sets] == ["HF_HOME"] and changed.passes is None
    elsewhere = scan_launcher("runners/launch_b.sh", bytes(one))
    assert elsewhere.path == "runners/launch_b.sh" and elsewhere.sets[0][1].path == "runners/launch_b.sh"
    assert scan_launcher("runners/launch_a.sh", bytes(one)) == first


def test_a_launcher_value_naming_another_variable_is_its_own() -> None:
    # `${ISLX}` or `$ISL_MAX` is not the job's ISL passed on: the launcher sets ISL itself; `${ISL:=1}` fills it.
    found = scan_launcher("runners/launch_y.sh", b"""export ISL="${ISLX}"
export OSL=$OSL_MAX
export CONC="${CONC_LIST:-4}"
export TP=${TP:=8}
export EP="${EP}"
""")
    assert sorted(n for n, _ in found.sets) == ["CONC", "ISL", "OSL"]
    assert [n for n, _ in found.fills] == ["TP"]
