"""Recipe resolution with fallback (the environment a recipe receives: test_matrix_env.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ci_tools.config import load_config
from ci_tools.jobs.contract import recipe_candidates, resolve_recipe
from ci_tools.jobs.matrix import expand
from ci_tools.jobs.job import Job
from ci_tools.model.repository import RepoData, load_repo
from ci_tools.revision.snapshot import WorkTreeSnapshot


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


def test_recipe_candidates_do_not_repeat(full_corpus_jobs: list[Job], full_corpus_repo: RepoData) -> None:
    for job in full_corpus_jobs:
        cands = recipe_candidates(job, full_corpus_repo.config)
        assert len(cands) == len(set(cands))


def test_a_template_with_an_unknown_placeholder_is_a_usage_error(tmp_path: Path) -> None:
    from ci_tools.errors import UsageError

    root = recipe_repo(tmp_path, [], 'recipe-templates:\n  single-node:\n    - "recipes/{gpu}_{vendor}.sh"\n')
    with pytest.raises(UsageError) as err:
        resolutions(root)
    assert str(err.value).startswith(f"{root / '.ci-tools.yaml'}: recipe template `recipes/{{gpu}}_{{vendor}}.sh` "
                                     "cannot be filled (KeyError: 'vendor'); expected only the placeholders "
                                     "{model_prefix}, {precision}, {gpu}, {framework}")
