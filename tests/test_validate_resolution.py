"""Recipe resolution as the launchers do it, on the real InferenceX tree, and its configuration.

What each runner fleet's launcher (runners/launch_<fleet>.sh at 843c6254f)
runs for a job: single-node scripts named per fleet, the AMD multinode disagg
scripts (no spec-decoding suffix), srt-slurm recipes named by CONFIG_FILE
(in the repository, or external), the llm-d and TileRT scripts.
"""

from __future__ import annotations

import os
from collections import Counter
from functools import cache
from pathlib import Path

import pytest

from ci_tools.config import load_config
from ci_tools.jobs.contract import RecipeResolution, recipe_candidates, resolve_recipe
from ci_tools.errors import UsageError
from ci_tools.jobs.matrix import expand
from ci_tools.jobs.job import Job
from ci_tools.model.repository import RepoData, load_repo
from ci_tools.jobs.resolution import fleets_of, job_settings
from ci_tools.revision.snapshot import WorkTreeSnapshot
from conftest import full_corpus_dir
from test_validate_rules_real import real_config


@cache
def real() -> tuple[RepoData, tuple[Job, ...]]:
    config = load_config(full_corpus_dir())
    repo = load_repo(WorkTreeSnapshot(config.root), config, with_changelog=False)
    return repo, tuple(expand(repo))


def resolved(key: str) -> list[tuple[Job, RecipeResolution]]:
    repo, jobs = real()
    return [(j, resolve_recipe(j, repo.config, repo.snapshot)) for j in jobs if j.config_key == key]


def test_every_real_job_resolves_to_the_kind_its_launcher_runs() -> None:
    repo, jobs = real()
    kinds: Counter[tuple[str, bool]] = Counter()
    for job in jobs:
        res = resolve_recipe(job, repo.config, repo.snapshot)
        framework = str(job.get("framework"))
        if not job.multinode:
            assert res.kind == "script" and res.path is not None or res.missing, job.label()
        elif framework in ("sglang-disagg", "atom-disagg", "llmd-vllm", "tilert"):
            assert res.kind == "script" and res.path and res.path.startswith("benchmarks/multi_node/"), job.label()
        else:  # every other multinode fleet submits an srt-slurm recipe
            assert res.kind in ("srt-slurm", "external"), job.label()
            assert res.reference == job_settings(job)["CONFIG_FILE"]
        if res.path is not None:
            assert (full_corpus_dir() / res.path).is_file()
        kinds[(res.kind, res.missing)] += 1
    assert kinds[("script", False)] > 1000 and kinds[("srt-slurm", False)] > 100 and kinds[("external", False)] > 100
    # The real defects: the two qwen3.5 H100 agentic rows (7 jobs) and the three deleted srt-slurm recipes (3 jobs).
    assert kinds[("script", True)] == len([j for j in jobs if j.config_key == "qwen3.5-fp8-h100-sglang-agentic"])
    assert kinds[("srt-slurm", True)] == 3


def test_external_srt_slurm_recipes_are_those_whose_directory_the_repository_lacks() -> None:
    # Counted independently: a CONFIG_FILE whose directory is not under the
    # repository's srt-slurm-recipes/ is the launcher's srt-slurm checkout's.
    repo, jobs = real()
    root = full_corpus_dir() / "benchmarks" / "multi_node" / "srt-slurm-recipes"
    expected, found = 0, 0
    for job in jobs:
        if not job.multinode or job.get("framework") == "llmd-vllm" or "CONFIG_FILE" not in job_settings(job):
            continue
        path = job_settings(job)["CONFIG_FILE"].split(":")[0]
        local = root / path.removeprefix("recipes/") if path.startswith("recipes/") else full_corpus_dir() / path
        expected += not local.is_file() and not local.parent.is_dir()
        found += resolve_recipe(job, repo.config, repo.snapshot).kind == "external"
    assert found == expected > 100


def test_srt_slurm_recipe_in_the_repository_keeps_its_selector() -> None:
    selected = [res for _, res in resolved("dsr1-fp4-b200-dynamo-sglang") if res.selector]
    assert {res.selector for res in selected} >= {"zip_override_stp_lowlat[0]", "override_stp_tp4"}
    assert all(res.kind == "external" and res.reference and res.reference.endswith(f":{res.selector}") for res in selected)
    in_repo = [res for _, res in resolved("dsv4-fp4-gb300-dynamo-trt-agentx")]
    # CONFIG_FILE given as the repository path the gb300 launcher copies into its checkout.
    assert in_repo and all(res.kind == "srt-slurm" and res.path == res.reference for res in in_repo)
    assert in_repo[0].script is None  # an srt-slurm recipe is not a bash script to evaluate


def test_amd_multinode_jobs_run_the_disagg_script_without_a_spec_suffix() -> None:
    repo, jobs = real()
    mtp = [j for j in jobs if j.multinode and j.get("framework") == "sglang-disagg" and j.get("spec-decoding") == "mtp"]
    assert mtp
    for job in mtp:
        res = resolve_recipe(job, repo.config, repo.snapshot)
        agentic = "agentic/" if job.scenario == "agentic-coding" else ""
        name = f"{job.get('model-prefix')}_{job.get('precision')}_mi355x_sglang-disagg.sh"
        assert res.path == f"benchmarks/multi_node/{agentic}{name}"


def test_llm_d_and_tilert_run_their_own_scripts() -> None:
    [(_, llmd), *_] = resolved("dsv4-fp4-gb200-llmd-vllm")
    assert llmd.path == "benchmarks/multi_node/dsv4_fp4_gb200_llmd-vllm-disagg.sh"
    assert llmd.inputs and llmd.inputs[0].startswith("benchmarks/multi_node/llm-d-recipes/dsv4-fp4-gb200-")
    tilert = {res.path for _, res in resolved("glm5.1-fp8-b200-tilert")}
    assert tilert == {"benchmarks/multi_node/glm5.1_fp8_b200_tilert-disagg.sh"}


def test_single_node_names_follow_each_fleet() -> None:
    repo, _ = real()
    assert fleets_of("h200", repo.runner_labels) == ("h200-cw", "h200-nb", "h200-dgxc-slurm")  # runners.yaml order
    # H100 launchers put no framework in the name; the label's fleets all agree.
    [(job, h100), *_] = resolved("qwen3.5-fp8-h100-sglang")
    assert h100.path == "benchmarks/single_node/fixed_seq_len/qwen3.5_fp8_h100.sh" and not h100.alternatives
    assert recipe_candidates(job, repo.config, repo.snapshot) == ("benchmarks/single_node/fixed_seq_len/qwen3.5_fp8_h100.sh",)
    [(_, mi355x), *_] = resolved("dsr1-fp4-mi355x-atom")
    assert mi355x.path == "benchmarks/single_node/fixed_seq_len/dsr1_fp4_mi355x_atom.sh"
    assert mi355x.fleets == ("mi355x-amds",)


def test_an_undefined_label_resolves_as_the_fleet_it_is_named_after() -> None:
    repo, _ = real()
    assert fleets_of("cluster:mi325x-tw", repo.runner_labels) == ("mi325x-tw",)
    [(_, res), *_] = resolved("dsv4-fp8-mi325x-vllm")
    assert res.path == "benchmarks/single_node/fixed_seq_len/dsv4_fp8_mi325x.sh"


# --- configuration -------------------------------------------------------------------------------

# A real config on a runner label whose nodes belong to a fleet of this test's own.
RUNNERS = "labels:\n  mi325x:\n  - lab-mi325x_0\n"


def small(tmp_path: Path, ci_tools: str, files: tuple[str, ...] = ()) -> tuple[RepoData, list[Job]]:
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "amd-master.yaml").write_text(real_config("dsr1-fp8-mi325x-sglang"), encoding="utf-8")
    (tmp_path / "configs" / "runners.yaml").write_text(RUNNERS, encoding="utf-8")
    (tmp_path / ".ci-tools.yaml").write_text(ci_tools, encoding="utf-8")
    for rel in files:
        os.makedirs((tmp_path / rel).parent, exist_ok=True)
        (tmp_path / rel).write_text("#!/usr/bin/env bash\n", encoding="utf-8")
    config = load_config(tmp_path)
    repo = load_repo(WorkTreeSnapshot(config.root), config, with_changelog=False)
    return repo, expand(repo)


def test_a_repository_rule_is_tried_before_the_defaults(tmp_path: Path) -> None:
    repo, jobs = small(tmp_path, (
        "recipe-resolution:\n"
        "  - name: lab fleet\n"
        "    match: {fleet: lab-*, multinode: false}\n"
        "    kind: script\n"
        "    templates: ['lab/{model_prefix}-{framework}-{fleet}.sh', 'lab/{model_prefix}.sh']\n"
    ), files=("lab/dsr1.sh",))
    res = resolve_recipe(jobs[0], repo.config, repo.snapshot)
    assert (res.path, res.candidates, res.rule) == ("lab/dsr1.sh", ("lab/dsr1-sglang-lab-mi325x.sh", "lab/dsr1.sh"), "lab fleet")
    assert res.rule_source == f"{tmp_path / '.ci-tools.yaml'}:2"


def test_an_external_rule_makes_nothing_missing(tmp_path: Path) -> None:
    repo, jobs = small(tmp_path, "recipe-resolution:\n  - {match: {runner: mi325x}, kind: external}\n")
    res = resolve_recipe(jobs[0], repo.config, repo.snapshot)
    assert (res.kind, res.path, res.missing) == ("external", None, False)


@pytest.mark.parametrize(("text", "message", "line"), [
    ("recipe-resolution: {kind: script}\n", "`recipe-resolution` must be a non-empty list of rules", 1),
    ("recipe-resolution:\n  - {match: {}, kind: bash}\n", "`recipe-resolution[0].kind` must be one of script, srt-slurm, external, found 'bash'", 2),
    ("recipe-resolution:\n  - match:\n      gpu: b200\n    kind: script\n",
     "unknown key `gpu` in `recipe-resolution[0].match`, expected one of: fleet, runner, framework", 3),
    ("recipe-resolution:\n  - {match: {multinode: yes please}, kind: script}\n",
     "`recipe-resolution[0].match.multinode` must be true or false, found 'yes please'", 2),
    ("recipe-resolution:\n  - kind: srt-slurm\n    templates: [a.sh]\n",
     "`recipe-resolution[0].templates` only applies to kind script, not srt-slurm", 3),
    ("recipe-resolution:\n  - kind: script\n    colour: red\n", "unknown key `colour` in `recipe-resolution[0]`", 3),
])
def test_a_bad_rule_is_a_usage_error_at_its_line(tmp_path: Path, text: str, message: str, line: int) -> None:
    (tmp_path / ".ci-tools.yaml").write_text(text, encoding="utf-8")
    with pytest.raises(UsageError) as err:
        load_config(tmp_path)
    assert message in str(err.value)
    assert (err.value.path, err.value.line) == (str(tmp_path / ".ci-tools.yaml"), line)


def test_a_rule_template_with_an_unknown_placeholder_names_the_configuration(tmp_path: Path) -> None:
    repo, jobs = small(tmp_path, "recipe-resolution:\n  - {match: {}, kind: script, templates: ['r/{vendor}.sh']}\n")
    with pytest.raises(UsageError) as err:
        resolve_recipe(jobs[0], repo.config, repo.snapshot)
    assert "recipe template `r/{vendor}.sh` cannot be filled (KeyError: 'vendor')" in str(err.value)
    assert err.value.path == str(tmp_path / ".ci-tools.yaml")
