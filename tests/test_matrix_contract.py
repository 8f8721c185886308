"""The env contract of single-node and multinode jobs, and recipe resolution with fallback."""

from __future__ import annotations

from pathlib import Path

import pytest

from ci_tools.config import load_config
from ci_tools.contract import default_runner_name, job_env, recipe_candidates, resolve_recipe
from ci_tools.matrix import Job, expand
from ci_tools.model.repository import RepoData, load_repo
from ci_tools.snapshot import WorkTreeSnapshot

from conftest import corpus_dir


def load(root: Path) -> RepoData:
    config = load_config(root)
    return load_repo(WorkTreeSnapshot(config.root), config, with_changelog=False)


@pytest.fixture(scope="module")
def repo() -> RepoData:
    return load(corpus_dir())


@pytest.fixture(scope="module")
def jobs(repo: RepoData) -> list[Job]:
    return expand(repo)


def first(jobs: list[Job], key: str, **fields: object) -> Job:
    return next(j for j in jobs if j.config_key == key and all(j.get(k) == v for k, v in fields.items()))


def test_single_node_env_exact(jobs: list[Job], repo: RepoData) -> None:
    job = first(jobs, "dsv4-fp4-mi355x-sglang", tp=8, conc=128)
    env = job_env(job, runner_name=default_runner_name(job, repo.runner_labels))
    assert env == {
        "MODEL": "deepseek-ai/DeepSeek-V4-Pro",
        "MODEL_PREFIX": "dsv4",
        "IMAGE": job.get("image"),
        "FRAMEWORK": "sglang",
        "PRECISION": "fp4",
        "ISL": "8192",
        "OSL": "1024",
        "MAX_MODEL_LEN": "9472",
        "SPEC_DECODING": "none",
        "DISAGG": "false",
        "RUN_EVAL": "false",
        "EVAL_ONLY": "false",
        "SCENARIO_TYPE": "fixed-seq-len",
        "IS_AGENTIC": "0",
        "KV_OFFLOADING": "none",
        "KV_OFFLOAD_BACKEND": "",
        "TOTAL_CPU_DRAM_GB": "",
        "DURATION": "",
        "EXP_NAME": "dsv4_8k1k",
        "RESULT_DIR": "/workspace/results",
        "PORT": "8888",
        "RUNNER_NAME": "mi355x-amds_00",
        "TP": "8",
        "PP_SIZE": "1",
        "DCP_SIZE": "1",
        "PCP_SIZE": "1",
        "EP_SIZE": "1",
        "DP_ATTENTION": "true",
        "CONC": "128",
        "GPU_COUNT": "8",
    }


def test_single_node_agentic_env(jobs: list[Job]) -> None:
    job = first(jobs, "kimik3-fp4-mi355x-atom-agentic-mtp", conc=10)
    env = job_env(job, run_eval=True, runner_name="mi355x-amds_03")
    picked = {k: env[k] for k in ("ISL", "OSL", "MAX_MODEL_LEN", "SCENARIO_TYPE", "IS_AGENTIC", "KV_OFFLOADING",
                                  "KV_OFFLOAD_BACKEND", "TOTAL_CPU_DRAM_GB", "DURATION", "EXP_NAME", "RUN_EVAL",
                                  "RUNNER_NAME", "SPEC_DECODING", "CONC", "GPU_COUNT")}
    assert picked == {
        "ISL": "0", "OSL": "0", "MAX_MODEL_LEN": "0",
        "SCENARIO_TYPE": "agentic-coding", "IS_AGENTIC": "1",
        "KV_OFFLOADING": "dram", "KV_OFFLOAD_BACKEND": "lmcache", "TOTAL_CPU_DRAM_GB": "257", "DURATION": "3600",
        "EXP_NAME": "kimik3_tp8_conc10_kvdram-lmcache_spec-mtp", "RUN_EVAL": "true",
        "RUNNER_NAME": "mi355x-amds_03", "SPEC_DECODING": "mtp", "CONC": "10", "GPU_COUNT": "8",
    }


def test_multinode_env_exact(jobs: list[Job], repo: RepoData) -> None:
    job = first(jobs, "qwen3.5-fp8-mi355x-sglang-disagg")
    env = job_env(job, runner_name=default_runner_name(job, repo.runner_labels))
    assert env == {
        "MODEL": "Qwen/Qwen3.5-397B-A17B-FP8",
        "MODEL_PREFIX": "qwen3.5",
        "IMAGE": "lmsysorg/sglang:v0.5.16-rocm720-mi35x",
        "FRAMEWORK": "sglang-disagg",
        "PRECISION": "fp8",
        "ISL": "8192",
        "OSL": "1024",
        "MAX_MODEL_LEN": "9472",
        "SPEC_DECODING": "none",
        "DISAGG": "true",
        "RUN_EVAL": "false",
        "EVAL_ONLY": "false",
        "SCENARIO_TYPE": "fixed-seq-len",
        "IS_AGENTIC": "0",
        "KV_OFFLOADING": "none",
        "KV_OFFLOAD_BACKEND": "",
        "TOTAL_CPU_DRAM_GB": "",
        "DURATION": "",
        "EXP_NAME": "qwen3.5_8k1k",
        "RESULT_DIR": "/workspace/results",
        "PORT": "8888",
        "RUNNER_NAME": "mi355x-amds_06",
        "CONC_LIST": "8 16 32 64 128",
        "PREFILL_NUM_WORKERS": "1",
        "PREFILL_TP": "4",
        "PREFILL_EP": "1",
        "PREFILL_DP_ATTN": "false",
        "PREFILL_PP_SIZE": "1",
        "PREFILL_DCP_SIZE": "1",
        "PREFILL_PCP_SIZE": "1",
        "PREFILL_NODES": "1",
        "DECODE_NUM_WORKERS": "1",
        "DECODE_TP": "8",
        "DECODE_EP": "1",
        "DECODE_DP_ATTN": "false",
        "DECODE_PP_SIZE": "1",
        "DECODE_DCP_SIZE": "1",
        "DECODE_PCP_SIZE": "1",
        "DECODE_NODES": "1",
        "DECODE_MTP_SIZE": "0",
    }


def test_runner_name_falls_back_to_the_label(jobs: list[Job]) -> None:
    job = first(jobs, "dsr1-fp4-mi355x-sglang")
    assert default_runner_name(job, {}) == "mi355x"
    assert job_env(job)["RUNNER_NAME"] == "mi355x"


# -- recipe resolution -----------------------------------------------------------------------

RECIPE_MASTER = """\
plain-sglang:
  image: img
  model: org/m
  model-prefix: dsr1
  runner: mi355x
  precision: fp4
  framework: sglang
  multinode: false
  scenarios:
    fixed-seq-len:
    - { isl: 1024, osl: 1024, search-space: [ { tp: 8, conc-list: [4] } ] }
atom-mtp:
  image: img
  model: org/m
  model-prefix: dsr1
  runner: mi355x
  precision: fp4
  framework: atom
  multinode: false
  scenarios:
    fixed-seq-len:
    - { isl: 1024, osl: 1024, search-space: [ { tp: 8, spec-decoding: mtp, conc-list: [4] } ] }
agentic-vllm:
  image: img
  model: org/m
  model-prefix: kimik3
  runner: cluster:mi355x-amds
  precision: fp4
  framework: vllm
  multinode: false
  scenarios:
    agentic-coding:
    - { dram-utilization: 0.5, search-space: [ { tp: 8, kv-offloading: none, conc-list: [1] } ] }
disagg:
  image: img
  model: org/m
  model-prefix: dsr1
  runner: mi355x-disagg
  precision: fp8
  framework: sglang-disagg
  multinode: true
  disagg: true
  kv-p2p-transfer: mori
  scenarios:
    agentic-coding:
    - search-space:
      - conc-list: [8]
        prefill: { num-worker: 1, tp: 8, ep: 1, dp-attn: false }
        decode: { num-worker: 1, tp: 8, ep: 1, dp-attn: false }
"""

RUNNERS = """\
labels:
  mi355x: [mi355x-amds_00]
  mi355x-disagg: [mi355x-amds_06]
  cluster:mi355x-amds: [mi355x-amds_00]
hardware:
  cluster:mi355x-amds: { available-cpu-dram-mib: 3_095_781, gpus-per-node: 8 }
"""


def recipe_repo(tmp_path: Path, recipes: list[str], config: str = "") -> Path:
    root = tmp_path / "repo"
    (root / "configs").mkdir(parents=True)
    (root / "configs" / "amd-master.yaml").write_text(RECIPE_MASTER)
    (root / "configs" / "runners.yaml").write_text(RUNNERS)
    if config:
        (root / ".ci-tools.yaml").write_text(config)
    for path in recipes:
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text("#!/usr/bin/env bash\n")
    return root


def resolutions(root: Path) -> dict[str, tuple[str | None, tuple[str, ...]]]:
    config = load_config(root)
    repo = load_repo(WorkTreeSnapshot(config.root), config, with_changelog=False)
    out = {}
    for job in expand(repo):
        res = resolve_recipe(job, config, repo.snapshot)
        out[job.config_key] = (res.path, res.candidates)
    return out


def test_candidates_in_fallback_order(tmp_path: Path) -> None:
    res = resolutions(recipe_repo(tmp_path, []))
    assert res["plain-sglang"] == (None, (
        "benchmarks/single_node/fixed_seq_len/dsr1_fp4_mi355x_sglang.sh",
        "benchmarks/single_node/fixed_seq_len/dsr1_fp4_mi355x.sh",
        "benchmarks/single_node/dsr1_fp4_mi355x_sglang.sh",
        "benchmarks/single_node/dsr1_fp4_mi355x.sh",
    ))
    assert res["atom-mtp"][1] == (
        "benchmarks/single_node/fixed_seq_len/dsr1_fp4_mi355x_atom_mtp.sh",
        "benchmarks/single_node/dsr1_fp4_mi355x_atom_mtp.sh",
    )  # `_atom` names the framework either way, so the two templates coincide
    assert res["agentic-vllm"][1][0] == "benchmarks/single_node/agentic/kimik3_fp4_mi355x_vllm.sh"
    # launch_mi355x-amds.sh runs exactly one multinode script: no fallback, no spec-decoding suffix.
    assert res["disagg"][1] == ("benchmarks/multi_node/agentic/dsr1_fp8_mi355x_sglang-disagg.sh",)


def test_framework_named_recipe_wins_over_the_fallback(tmp_path: Path) -> None:
    root = recipe_repo(tmp_path, ["benchmarks/single_node/fixed_seq_len/dsr1_fp4_mi355x_sglang.sh",
                                  "benchmarks/single_node/fixed_seq_len/dsr1_fp4_mi355x.sh"])
    assert resolutions(root)["plain-sglang"][0] == "benchmarks/single_node/fixed_seq_len/dsr1_fp4_mi355x_sglang.sh"


def test_fallback_without_framework_then_old_layout(tmp_path: Path) -> None:
    root = recipe_repo(tmp_path, ["benchmarks/single_node/fixed_seq_len/dsr1_fp4_mi355x.sh",
                                  "benchmarks/single_node/dsr1_fp4_mi355x_sglang.sh"])
    assert resolutions(root)["plain-sglang"][0] == "benchmarks/single_node/fixed_seq_len/dsr1_fp4_mi355x.sh"
    old = recipe_repo(tmp_path / "old", ["benchmarks/single_node/dsr1_fp4_mi355x.sh"])
    assert resolutions(old)["plain-sglang"][0] == "benchmarks/single_node/dsr1_fp4_mi355x.sh"


def test_mtp_recipe_only_for_mtp_jobs(tmp_path: Path) -> None:
    root = recipe_repo(tmp_path, ["benchmarks/single_node/fixed_seq_len/dsr1_fp4_mi355x_atom.sh",
                                  "benchmarks/single_node/fixed_seq_len/dsr1_fp4_mi355x_atom_mtp.sh"])
    res = resolutions(root)
    assert res["atom-mtp"][0] == "benchmarks/single_node/fixed_seq_len/dsr1_fp4_mi355x_atom_mtp.sh"


def test_configured_templates_replace_the_defaults(tmp_path: Path) -> None:
    config = ('recipe-templates:\n  single-node:\n    - "recipes/{config_key}.sh"\n'
              '    - "recipes/{model_prefix}-{gpu}{mtp}.sh"\n')
    root = recipe_repo(tmp_path, ["recipes/dsr1-mi355x_mtp.sh"], config)
    res = resolutions(root)
    assert res["plain-sglang"] == (None, ("recipes/plain-sglang.sh", "recipes/dsr1-mi355x.sh"))
    assert res["atom-mtp"] == ("recipes/dsr1-mi355x_mtp.sh", ("recipes/atom-mtp.sh", "recipes/dsr1-mi355x_mtp.sh"))


def test_recipe_candidates_do_not_repeat(jobs: list[Job], repo: RepoData) -> None:
    for job in jobs:
        cands = recipe_candidates(job, repo.config)
        assert len(cands) == len(set(cands))


def test_a_template_with_an_unknown_placeholder_is_a_usage_error(tmp_path: Path) -> None:
    from ci_tools.errors import UsageError

    root = recipe_repo(tmp_path, [], 'recipe-templates:\n  single-node:\n    - "recipes/{gpu}_{vendor}.sh"\n')
    with pytest.raises(UsageError) as err:
        resolutions(root)
    assert str(err.value).startswith(f"{root / '.ci-tools.yaml'}: recipe template `recipes/{{gpu}}_{{vendor}}.sh` "
                                     "cannot be filled (KeyError: 'vendor'); expected only the placeholders "
                                     "{model_prefix}, {precision}, {gpu}, {framework}")
