"""Matrix expansion pinned on the real InferenceX tree at 843c625: its generator's full sweep, entry for entry."""

from __future__ import annotations

import json
import math
import re
import shutil
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from ci_tools.config import load_config
from ci_tools.jobs.matrix import conc_values, expand, gpu_name
from ci_tools.jobs.job import AGENTIC, FIXED, Job
from ci_tools.model.keys import keys_matching, match_key_glob
from ci_tools.model.repository import RepoData, load_repo
from ci_tools.revision.snapshot import WorkTreeSnapshot

from conftest import full_corpus_dir

MASTER = "configs/amd-master.yaml"


def load(root: Path) -> RepoData:
    config = load_config(root)
    return load_repo(WorkTreeSnapshot(config.root), config, with_changelog=False)


def jobs_of(jobs: list[Job], key: str) -> list[Job]:
    return [j for j in jobs if j.config_key == key]


def configs_copy(tmp_path: Path) -> Path:
    """The real tree's configs (both master files and runners.yaml) in a writable repository."""
    root = tmp_path / "repo"
    shutil.copytree(full_corpus_dir() / "configs", root / "configs")
    for path in (root / "configs").iterdir():
        path.chmod(0o644)
    return root


def edit(root: Path, old: str, new: str) -> None:
    master = root / MASTER
    text = master.read_text()
    assert old in text, old
    master.write_text(text.replace(old, new, 1))


# -- the generator's output, all of it -----------------------------------------------------------


def test_full_sweep_is_the_generators_job_for_job_field_for_field(full_corpus_jobs: list[Job]) -> None:
    """expected/full-sweep-keyed.json is `generate_sweep_configs.py full-sweep` at 843c625 (1,820 jobs)."""
    expected = json.loads((full_corpus_dir() / "expected" / "full-sweep-keyed.json").read_text())
    assert len(full_corpus_jobs) == len(expected) == 1820
    mismatches = []
    for index, (job, entry) in enumerate(zip(full_corpus_jobs, expected)):
        ours = {"config-key": job.config_key, **job.fields}
        if ours != entry or list(ours) != list(entry):  # same values, and the generator's key order
            mismatches.append((index, job.label(), sorted(k for k in set(ours) | set(entry)
                                                          if ours.get(k, "-") != entry.get(k, "-"))))
    assert mismatches == []
    # The JSON of a job is that entry with its id first.
    for job in full_corpus_jobs[::97]:
        assert json.loads(job.json_text()) == {"id": job.id, "config-key": job.config_key, **job.fields}


def test_full_sweep_ids_are_unique_and_cover_every_kind(full_corpus_jobs: list[Job], full_corpus_repo: RepoData) -> None:
    assert len({j.id for j in full_corpus_jobs}) == 1820
    assert all(re.fullmatch(r"[0-9a-f]{16}", j.id) for j in full_corpus_jobs)
    assert {j.config_key for j in full_corpus_jobs} == set(full_corpus_repo.configs)
    kinds = {(j.scenario, j.multinode): 0 for j in full_corpus_jobs}
    for j in full_corpus_jobs:
        kinds[(j.scenario, j.multinode)] += 1
    assert kinds == {(FIXED, False): 690, (AGENTIC, False): 482, (FIXED, True): 384, (AGENTIC, True): 264}


def test_full_sweep_is_reproducible_run_to_run(full_corpus_jobs: list[Job], full_corpus_repo: RepoData) -> None:
    again = expand(full_corpus_repo)
    assert [j.json_text() for j in again] == [j.json_text() for j in full_corpus_jobs]


def test_expand_restricted_to_keys(full_corpus_jobs: list[Job], full_corpus_repo: RepoData) -> None:
    assert expand(full_corpus_repo, ["dsr1-fp4-mi355x-sglang"]) == jobs_of(full_corpus_jobs, "dsr1-fp4-mi355x-sglang")


# -- concurrency -----------------------------------------------------------------------------


def test_conc_range_doubles_and_clamps_the_last_value() -> None:
    assert conc_values({"conc-start": 3, "conc-end": 50}) == [3, 6, 12, 24, 48, 50]
    assert conc_values({"conc-start": 4, "conc-end": 64}) == [4, 8, 16, 32, 64]
    assert conc_values({"conc-start": 4, "conc-end": 4}) == [4]


def test_conc_list_is_taken_verbatim_even_unsorted() -> None:
    assert conc_values({"conc-list": [256, 128, 64, 4, 4]}) == [256, 128, 64, 4, 4]


@pytest.mark.parametrize("row", [
    {"conc-start": 0, "conc-end": 8}, {"conc-start": 9, "conc-end": 8}, {"conc-start": "4", "conc-end": 8},
    {"conc-start": True, "conc-end": 8}, {"conc-list": []}, {"conc-list": [4, "8"]}, {"conc-list": 4}, {},
])
def test_malformed_concurrency_generates_nothing(row: dict[str, Any]) -> None:
    assert conc_values(row) == []


def test_range_rows_expand_per_concurrency(full_corpus_jobs: list[Job]) -> None:
    # dsr1-fp4-mi355x-sglang: { tp: 4, conc-start: 4, conc-end: 64 } and the same with tp 8
    jobs = jobs_of(full_corpus_jobs, "dsr1-fp4-mi355x-sglang")
    assert [(j.get("tp"), j.conc) for j in jobs] == [(4, c) for c in (4, 8, 16, 32, 64)] + [(8, c) for c in (4, 8, 16, 32, 64)]


def test_clamp_on_a_config_with_an_uneven_end(tmp_path: Path) -> None:
    root = configs_copy(tmp_path)
    edit(root, "- { tp: 4, conc-start: 4, conc-end: 64 }", "- { tp: 4, conc-start: 3, conc-end: 50 }")
    jobs = [j for j in jobs_of(expand(load(root)), "dsr1-fp4-mi355x-sglang") if j.get("tp") == 4]
    assert [j.conc for j in jobs] == [3, 6, 12, 24, 48, 50]


def test_multinode_fixed_rows_keep_their_whole_list_in_one_job(full_corpus_jobs: list[Job]) -> None:
    jobs = jobs_of(full_corpus_jobs, "dsr1-fp8-mi355x-sglang-disagg")
    assert [j.get("conc") for j in jobs] == [[1024, 2048], [256, 128, 64, 32, 16, 8, 4], [64, 32, 16, 8, 4, 2, 1]]
    assert [j.concs for j in jobs] == [j.get("conc") for j in jobs] and all(j.conc is None for j in jobs)


# -- single-node fields and defaults ---------------------------------------------------------


def test_single_node_fixed_job_exact_fields_in_the_generators_order(full_corpus_jobs: list[Job]) -> None:
    job = jobs_of(full_corpus_jobs, "dsr1-fp4-mi355x-sglang")[0]
    assert job.scenario == FIXED and not job.multinode
    assert list(job.fields.items()) == [
        ("image", "lmsysorg/sglang:v0.5.12-rocm700-mi35x"), ("model", "amd/DeepSeek-R1-0528-MXFP4-Preview"),
        ("model-prefix", "dsr1"), ("precision", "fp4"), ("framework", "sglang"), ("runner", "mi355x"),
        ("isl", 8192), ("osl", 1024), ("tp", 4), ("pp", 1), ("dcp-size", 1), ("pcp-size", 1), ("conc", 4),
        ("max-model-len", 8192 + 1024 + 256), ("ep", 1), ("dp-attn", False), ("spec-decoding", "none"),
        ("exp-name", "dsr1_8k1k"), ("disagg", False), ("run-eval", False),
    ]
    assert (job.row.path, job.row.line) == (MASTER, 14)


def test_pp_dcp_pcp_come_from_the_row(tmp_path: Path) -> None:
    root = configs_copy(tmp_path)
    edit(root, "- { tp: 4, conc-start: 4, conc-end: 64 }",
         "- { tp: 4, pp: 2, dcp-size: 2, pcp-size: 2, conc-start: 4, conc-end: 4 }")
    job = jobs_of(expand(load(root)), "dsr1-fp4-mi355x-sglang")[0]
    assert (job.get("pp"), job.get("dcp-size"), job.get("pcp-size"), job.conc) == (2, 2, 2, 4)


def test_exp_name_for_other_sequence_lengths(tmp_path: Path) -> None:
    root = configs_copy(tmp_path)
    edit(root, "    - isl: 8192\n      osl: 1024\n", "    - isl: 2048\n      osl: 512\n")
    job = jobs_of(expand(load(root)), "dsr1-fp4-mi355x-sglang")[0]
    assert (job.get("exp-name"), job.get("max-model-len")) == ("dsr1_2048_512", 2048 + 512 + 256)


# -- agentic ---------------------------------------------------------------------------------


def _dram(available_mib: int, utilization: str, gpus: int, per_node: int) -> int:
    """The generator's budget: int(min(available, 2,861,022) MiB x 2^20 x utilization x gpus / per node / 10^9)."""
    return int(Decimal(min(available_mib, 2_861_022)) * 1024 * 1024 * Decimal(utilization) * gpus / per_node / 10**9)


def test_runner_hardware_numbers_used_below_are_the_real_ones(full_corpus_repo: RepoData) -> None:
    hardware = full_corpus_repo.hardware
    assert hardware["cluster:mi355x-amds"] == {"available-cpu-dram-mib": 3_095_781, "gpus-per-node": 8}
    assert hardware["cluster:mi300x-amds"] == {"available-cpu-dram-mib": 2_321_924, "gpus-per-node": 8}


def test_agentic_job_exact_fields_and_dram_budget_capped(full_corpus_jobs: list[Job]) -> None:
    # kimik3-fp4-mi355x-atom-agentic-mtp, dram-utilization 0.086 on cluster:mi355x-amds (3,095,781 MiB, capped).
    # Its config comment says this budget is 257 GB (and 0.085 would give 254).
    jobs = jobs_of(full_corpus_jobs, "kimik3-fp4-mi355x-atom-agentic-mtp")
    assert [j.conc for j in jobs] == [1, 4, 8, 10]
    assert _dram(3_095_781, "0.086", 8, 8) == 257 and _dram(3_095_781, "0.085", 8, 8) == 254
    dram_job = jobs[2]
    assert dram_job.scenario == AGENTIC
    assert list(dram_job.fields.items()) == [
        ("image", "rocm/atom-dev:ubuntu24.04_py3.12_pytorch_release_2.10.0_kimi_k3_agentic_0820"),
        ("model", "moonshotai/Kimi-K3"), ("model-prefix", "kimik3"), ("precision", "fp4"), ("framework", "atom"),
        ("runner", "cluster:mi355x-amds"), ("tp", 8), ("pp", 1), ("dcp-size", 1), ("pcp-size", 1), ("ep", 1),
        ("dp-attn", False), ("spec-decoding", "mtp"), ("conc", 8), ("kv-offloading", "dram"),
        ("total-cpu-dram-gb", 257), ("duration", 3600), ("exp-name", "kimik3_tp8_conc8_kvdram-lmcache_spec-mtp"),
        ("scenario-type", "agentic-coding"), ("kv-offload-backend", {"name": "lmcache", "version": "0.4.5"}),
        ("run-eval", False),
    ]
    # Without offloading: budget 0 (the generator gives 0 unless kv-offloading is dram), name says kvnone.
    none_job = jobs[0]
    assert (none_job.get("kv-offloading"), none_job.get("total-cpu-dram-gb"), none_job.get("exp-name")) == (
        "none", 0, "kimik3_tp8_conc1_kvnone_spec-mtp")
    assert "kv-offload-backend" not in none_job.fields and "isl" not in none_job.fields


def test_agentic_dram_budget_uncapped_and_per_gpu_share(full_corpus_jobs: list[Job]) -> None:
    # cluster:mi300x-amds has 2,321,924 MiB, under the cap: the budget uses it as is, on its dram rows only.
    mi300 = jobs_of(full_corpus_jobs, "minimaxm3-fp8-mi300x-vllm-agentic-mtp")
    assert [(j.conc, j.get("total-cpu-dram-gb")) for j in mi300] == [
        (2, 0), (4, 0), (6, 0), (8, 0), (10, 0), (16, _dram(2_321_924, "0.80", 8, 8))]
    assert _dram(2_321_924, "0.80", 8, 8) == 1947


def test_agentic_budget_counts_pp_and_pcp_but_not_dcp(tmp_path: Path) -> None:
    root = configs_copy(tmp_path)
    row = ("- {{ tp: 2, {extra}spec-decoding: mtp, kv-offloading: dram, kv-offload-backend: {{ name: hicache }}, "
           "conc-list: [1] }}")
    edit(root, "- { tp: 2, ep: 2, spec-decoding: mtp, kv-offloading: none, conc-list: [1, 4, 6] }",
         "\n      ".join(row.format(extra=e) for e in ("", "pp: 2, ", "pcp-size: 2, ", "dcp-size: 2, ")))
    jobs = jobs_of(expand(load(root)), "qwen3.5-fp8-mi325x-sglang-agentic-mtp")[:4]
    # cluster:mi325x-amds: 3,091,589 MiB (capped), 8 GPUs a node, dram-utilization 0.80
    share = [_dram(3_091_589, "0.80", gpus, 8) for gpus in (2, 4, 4, 2)]
    assert [j.get("total-cpu-dram-gb") for j in jobs] == share == [599, 1199, 1199, 599]


def test_agentic_rows_without_dram_utilization_get_a_zero_budget(tmp_path: Path) -> None:
    # A block that offloads nothing needs no dram-utilization; its jobs still carry the budget 0.
    root = configs_copy(tmp_path)
    edit(root, "    - dram-utilization: 0.80\n      search-space:\n      - { tp: 2, ep: 2, spec-decoding: mtp",
         "    - search-space:\n      - { tp: 2, ep: 2, spec-decoding: mtp")
    jobs = jobs_of(expand(load(root)), "qwen3.5-fp8-mi325x-sglang-agentic-mtp")
    assert len(jobs) == 32 and {j.get("total-cpu-dram-gb") for j in jobs} == {0}


# -- multinode -------------------------------------------------------------------------------


def test_multinode_fixed_job_exact_fields(full_corpus_jobs: list[Job]) -> None:
    [job] = jobs_of(full_corpus_jobs, "qwen3.5-fp8-mi355x-sglang-disagg")
    assert job.multinode and job.conc is None and job.concs == [8, 16, 32, 64, 128]
    assert list(job.fields.items()) == [
        ("image", "lmsysorg/sglang:v0.5.16-rocm720-mi35x"), ("model", "Qwen/Qwen3.5-397B-A17B-FP8"),
        ("model-prefix", "qwen3.5"), ("precision", "fp8"), ("framework", "sglang-disagg"), ("runner", "mi355x-disagg"),
        ("isl", 8192), ("osl", 1024), ("spec-decoding", "none"),
        # the worker as written, pp/dcp-size/pcp-size made explicit after it
        ("prefill", {"num-worker": 1, "tp": 4, "ep": 1, "dp-attn": False, "additional-settings": ["PREFILL_NODES=1"],
                     "pp": 1, "dcp-size": 1, "pcp-size": 1}),
        ("decode", {"num-worker": 1, "tp": 8, "ep": 1, "dp-attn": False,
                    "additional-settings": ["DECODE_NODES=1", "DECODE_MTP_SIZE=0"], "pp": 1, "dcp-size": 1,
                    "pcp-size": 1}),
        ("conc", [8, 16, 32, 64, 128]), ("max-model-len", 9472), ("exp-name", "qwen3.5_8k1k"), ("disagg", True),
        ("run-eval", True), ("router", {"name": "sglang-router", "version": "0.3.2"}), ("kv-p2p-transfer", "mori"),
        ("eval-conc", 128),
    ]


def test_multinode_agentic_gives_one_job_per_concurrency(full_corpus_jobs: list[Job]) -> None:
    jobs = jobs_of(full_corpus_jobs, "dsv4-fp4-mi355x-sglang-disagg-agentic-hicache-mtp")
    assert [j.get("conc") for j in jobs] == [[c] for c in (1, 2, 4, 8, 16, 32, 48, 64, 64, 96, 128, 192)]
    first, dep = jobs[0], jobs[8]
    # Topology per role with `ep` and `dpa` tags, a suffix only when offloading, never a spec suffix.
    assert first.get("exp-name") == "dsv4_p1x8_d1x8_conc1_kvdram-hicache"
    assert dep.get("exp-name") == "dsv4_p1x8ep8dpa_d1x8ep8dpa_conc64_kvdram-hicache"
    assert first.get("spec-decoding") == "mtp"
    # The prefill workers (8 of the node's 8 GPUs) offload: the whole capped budget at 0.80.
    assert {j.get("total-cpu-dram-gb") for j in jobs} == {_dram(3_095_781, "0.80", 8, 8)} == {2399}
    assert first.get("prefill")["additional-settings"] == [
        "PREFILL_NODES=1", "CLIENT_IMAGE=lmsysorg/sglang-rocm:v0.5.15.post1-rocm720-mi35x-20260719"]
    assert (first.get("kv-offloading"), first.get("kv-offload-backend"), first.get("duration")) == (
        "dram", {"name": "hicache"}, 3600)
    assert len({j.id for j in jobs}) == len(jobs)


def test_a_backend_named_alone_is_the_layout_before_the_mapping(tmp_path: Path) -> None:
    """InferenceX wrote `kv-offload-backend: hicache` until the backend became a mapping (2026-07-13, #2096);
    its generator then named jobs kv<mode>-<name>.  Such a revision keeps its jobs (claims --history reads
    them); an empty name or a list is still refused."""
    from ci_tools.validation.validate import input_findings

    key = "dsv4-fp4-mi355x-sglang-disagg-agentic-hicache-mtp"
    root = configs_copy(tmp_path)
    text = (root / "configs/amd-master.yaml").read_text()
    assert "kv-offload-backend: { name: hicache }" in text
    (root / "configs/amd-master.yaml").write_text(text.replace("kv-offload-backend: { name: hicache }",
                                                               "kv-offload-backend: hicache"))
    repo = load(root)
    jobs = jobs_of(expand(repo), key)
    assert jobs and jobs[0].get("exp-name") == "dsv4_p1x8_d1x8_conc1_kvdram-hicache"
    assert jobs[0].get("kv-offload-backend") == "hicache"
    assert not [f for f in input_findings(repo) if f.data.get("config_key") == key]
    for bad, message in (('""', "`kv-offload-backend` must not be empty"), ("[hicache]", "`kv-offload-backend` must be")):
        (root / "configs/amd-master.yaml").write_text(text.replace("kv-offload-backend: { name: hicache }",
                                                                   f"kv-offload-backend: {bad}"))
        repo = load(root)
        assert jobs_of(expand(repo), key) == []
        assert any(f.message.startswith(message) for f in input_findings(repo) if f.data.get("config_key") == key)


def test_multinode_agentic_without_offloading_has_no_suffix(full_corpus_jobs: list[Job]) -> None:
    plain = [j for j in full_corpus_jobs if j.multinode and j.scenario == AGENTIC and j.get("kv-offloading") == "none"]
    assert plain and all(re.fullmatch(r".+_p\d+x\d+(ep\d+)?(dpa)?_d\d+x\d+(ep\d+)?(dpa)?_conc\d+", j.get("exp-name"))
                         for j in plain)


def test_a_config_that_fails_its_schema_builds_no_job(tmp_path: Path) -> None:
    """`additional-settings: 5`, `tp: "x"`, `conc-start: [1]`: no job is built from a value of the wrong type
    (before, the matrix carried `"additional-settings": 5` to the runner); the config's schema findings say
    why, and the other configs keep their jobs."""
    from ci_tools.validation.validate import input_findings

    root = configs_copy(tmp_path)
    edit(root, '          additional-settings:\n          - "PREFILL_NODES=1"\n', "          additional-settings: 5\n")
    edit(root, "- { tp: 4, conc-start: 4, conc-end: 64 }", '- { tp: "x", conc-start: [1], conc-end: 64 }')
    repo = load(root)
    jobs = expand(repo)
    assert jobs_of(jobs, "qwen3.5-fp8-mi355x-sglang-disagg") == [] and jobs_of(jobs, "dsr1-fp4-mi355x-sglang") == []
    assert len(jobs_of(jobs, "dsr1-fp4-mi355x-sglang-mtp")) > 0
    found = {(f.data["config_key"], f.message) for f in input_findings(repo)}
    assert ("qwen3.5-fp8-mi355x-sglang-disagg", "`additional-settings` must be a list, found the integer 5") in found
    assert ("dsr1-fp4-mi355x-sglang", '`tp` must be an integer, found the string "x"') in found
    assert ("dsr1-fp4-mi355x-sglang", "`conc-start` must be an integer, found a list") in found


# -- eval marks ------------------------------------------------------------------------------


def test_evals_at_the_highest_and_median_concurrency_of_each_8k1k_group(full_corpus_jobs: list[Job]) -> None:
    # dsr1-fp4-mi355x-sglang: concurrencies 4..64 at 8k1k for tp 4 and tp 8 (one group); eligible are
    # 16, 32, 64 (at least 16): the highest (64) and the median (32) run evals, for both tps.
    jobs = jobs_of(full_corpus_jobs, "dsr1-fp4-mi355x-sglang")
    assert [(j.get("tp"), j.conc) for j in jobs if j.get("run-eval")] == [(4, 32), (4, 64), (8, 32), (8, 64)]
    assert all("eval-conc" not in j.fields for j in jobs)
    # Multinode: the row holding the group's highest eligible concurrency, at that concurrency.
    multi = jobs_of(full_corpus_jobs, "dsr1-fp8-mi355x-sglang-disagg")
    assert [(j.get("run-eval"), j.get("eval-conc")) for j in multi] == [(True, 2048), (True, 256), (True, 64)]
    # Agentic jobs never run evals by default; every job says whether it does.
    assert all(j.get("run-eval") is False for j in full_corpus_jobs if j.scenario == AGENTIC)
    assert all(isinstance(j.get("run-eval"), bool) for j in full_corpus_jobs)


def test_eval_marks_over_malformed_fields_group_them_as_written() -> None:
    from ci_tools.jobs.evals import eval_marks

    base = {"isl": 8192, "osl": 1024, "tp": 8, "runner": "mi355x", "dp-attn": [True]}
    entries = [{**base, "model": ["m"], "conc": c} for c in (16, 32, 64)] + [{**base, "model": {"a": 1, 0: 2}, "conc": 64}]
    # Unhashable values (the schema rules report them) still group: highest and median of the list model's group.
    assert eval_marks(entries) == {1: None, 2: None, 3: None}


def test_eval_marks_are_not_part_of_a_jobs_id(full_corpus_jobs: list[Job]) -> None:
    job = next(j for j in full_corpus_jobs if j.get("run-eval") is True)
    assert job.with_fields(**{"run-eval": False}).id == job.id
    assert job.with_fields(exp_name="other").id != job.id


# -- ids -------------------------------------------------------------------------------------


def test_ids_change_exactly_when_recipe_inputs_change(tmp_path: Path, full_corpus_jobs: list[Job]) -> None:
    root = configs_copy(tmp_path)
    master = root / MASTER
    text = master.read_text()
    # A changed image for one config, and comments that move every line below.
    old = "image: lmsysorg/sglang:v0.5.12-rocm700-mi35x\n  model: amd/DeepSeek-R1-0528-MXFP4-Preview"
    assert text.count(old) == 1
    master.write_text("# moved\n# down\n" + text.replace(old, old.replace("v0.5.12", "v0.5.13")))
    changed = expand(load(root))
    before = {(j.config_key, j.label(), j.scenario_index, j.row_index): j.id for j in full_corpus_jobs}
    after = {(j.config_key, j.label(), j.scenario_index, j.row_index): j.id for j in changed}
    assert before.keys() == after.keys()
    assert {k[0] for k in before if before[k] != after[k]} == {"dsr1-fp4-mi355x-sglang"}
    assert next(j for j in changed if j.config_key == "dsr1-fp4-mi355x-sglang").row.line == 16


def test_an_inverted_range_is_a_row_without_jobs_not_fatal(tmp_path: Path) -> None:
    root = configs_copy(tmp_path)
    edit(root, "- { tp: 4, conc-start: 4, conc-end: 64 }", "- { tp: 4, conc-start: 64, conc-end: 4 }")
    jobs = jobs_of(expand(load(root)), "dsr1-fp4-mi355x-sglang")
    assert [(j.get("tp"), j.conc) for j in jobs] == [(8, c) for c in (4, 8, 16, 32, 64)]


# -- key globs and gpu names -----------------------------------------------------------------


@pytest.mark.parametrize(("pattern", "key", "expected"), [
    ("dsr1-fp4-mi355x-sglang", "dsr1-fp4-mi355x-sglang", True),
    ("dsr1-fp4-mi355x-sglang", "dsr1-fp4-mi355x-sglang-mtp", False),
    ("dsr1-*", "dsr1-fp4-mi355x-sglang", True),
    ("*-mtp", "dsr1-fp4-mi355x-sglang-mtp", True),
    ("*-mtp", "dsr1-fp4-mi355x-sglang", False),
    ("dsr1-*-sglang", "dsr1-fp4-mi355x-sglang", True),
    ("dsr1-*-sglang", "dsr1-fp4-mi355x-sglang-mtp", False),
    ("a*a", "a", False),
    ("*mi355x*atom*", "dsv4-fp4-mi355x-atom-mtp", True),
    ("*atom*mi355x*", "dsv4-fp4-mi355x-atom-mtp", False),
    ("dsr1-fp?-mi355x-sglang", "dsr1-fp4-mi355x-sglang", False),  # changelog keys: only * is a wildcard
])
def test_match_key_glob(pattern: str, key: str, expected: bool) -> None:
    assert match_key_glob(pattern, key) is expected


def test_keys_matching_keeps_key_order() -> None:
    keys = ["b-sglang", "a-vllm", "c-sglang"]
    assert keys_matching(["*-sglang", "a-*"], keys) == ["b-sglang", "a-vllm", "c-sglang"]
    assert keys_matching(["*-trt"], keys) == []


@pytest.mark.parametrize(("label", "gpu"), [
    ("mi355x", "mi355x"), ("cluster:mi355x-amds", "mi355x"), ("mi355x-disagg", "mi355x"),
    ("b200-nscale", "b200"), ("rtx6000pro-lat", "rtx6000pro"), ("h100-multinode", "h100"), ("gb200", "gb200"),
])
def test_gpu_name(label: str, gpu: str) -> None:
    assert gpu_name(label) == gpu


# -- robustness: whatever the schema rules will report, expansion does not crash -----------------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_scalars = st.one_of(st.none(), st.booleans(), st.integers(-3, 300), st.sampled_from(["8", "mtp", "none", "dram", ""]),
                     st.floats(allow_nan=True, allow_infinity=True))
_values = st.recursive(_scalars, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                          st.dictionaries(st.sampled_from(["name", "version", "tp", "ep", "num-worker", "additional-settings", "dp-attn"]), inner, max_size=4)),
                       max_leaves=6)
_row_keys = ["tp", "ep", "dp-attn", "pp", "dcp-size", "pcp-size", "spec-decoding", "conc-start", "conc-end", "conc-list",
             "kv-offloading", "kv-offload-backend", "router", "kv-p2p-transfer", "prefill", "decode"]
_concs = st.one_of(st.fixed_dictionaries({"conc-list": st.lists(st.integers(1, 64), min_size=1, max_size=3)}),
                   st.fixed_dictionaries({"conc-list": st.lists(st.sampled_from([16, 32, 64]), min_size=1, max_size=3)}),
                   st.fixed_dictionaries({"conc-start": st.integers(1, 8), "conc-end": st.integers(8, 40)}))
_rows = st.builds(lambda extra, conc: {**extra, **conc},
                  st.dictionaries(st.sampled_from(_row_keys[:7] + _row_keys[10:]), _values, max_size=6), _concs)
_blocks = st.fixed_dictionaries({"search-space": st.one_of(st.lists(_rows, max_size=3), _values)},
                                optional={"isl": st.one_of(st.just(8192), _values), "osl": st.one_of(st.just(1024), _values),
                                          "dram-utilization": _values})
_configs = st.fixed_dictionaries({
    "model-prefix": _scalars, "runner": st.sampled_from(["mi355x", "cluster:mi355x-amds", 7]),
    "model": _values, "precision": _values,
    "multinode": st.one_of(st.booleans(), _scalars),
    "scenarios": st.one_of(_values, st.dictionaries(st.sampled_from(["fixed-seq-len", "agentic-coding", "other"]),
                                                    st.one_of(st.lists(_blocks, max_size=2), _values), max_size=2)),
})
GENERATED: list[str] = []


@settings(max_examples=150, deadline=None)
@given(_configs)
def test_expansion_of_arbitrary_config_shapes_never_raises(data: dict[str, Any]) -> None:
    import yaml

    from ci_tools.jobs.contract import job_env
    from ci_tools.jobs.evals import mark_evals
    from ci_tools.jobs.matrix import expand_config
    from ci_tools.model.repository import ConfigEntry, LoadedFile
    from ci_tools.revision.yamlpos import load_yaml

    text = yaml.safe_dump({"k": data})
    loaded = load_yaml(text, MASTER)
    file = LoadedFile(MASTER, text.encode(), loaded)
    # Unchecked: the expansion itself must survive any shape (validate's rules read rows of invalid configs);
    # the commands build no job from a config that fails its schema (test_a_config_that_fails_its_schema_...).
    entry = ConfigEntry("k", file, loaded.value["k"], (1, 1, 1, 2))
    for job in mark_evals(expand_config(entry, _real_repo(), checked=False)):
        assert job.concs
        json.loads(job.json_text())
        # Whatever the fields hold, the (built-in) env contract gives an environment of strings.
        assert all(isinstance(v, str) for v in job_env(job).values())
        GENERATED.append(job.id)


_REPO: list[RepoData] = []


def _real_repo() -> RepoData:
    if not _REPO:
        _REPO.append(load(full_corpus_dir()))
    return _REPO[0]


def test_the_property_path_generates_jobs_for_a_valid_shape() -> None:
    # The property test's body must not be vacuous: a valid shape through the same path yields jobs.
    GENERATED.clear()
    test_expansion_of_arbitrary_config_shapes_never_raises.hypothesis.inner_test(  # type: ignore[attr-defined]
        {"model-prefix": "m", "runner": "mi355x", "multinode": False,
         "scenarios": {"fixed-seq-len": [{"isl": 1024, "osl": 1024,
                                           "search-space": [{"tp": 8, "conc-start": 1, "conc-end": 64}]}]}})
    assert len(GENERATED) == 7


def test_dram_budget_of_a_non_finite_utilization_is_unknown_not_a_crash() -> None:
    from ci_tools.jobs.matrix import dram_offload_gb

    hardware = {"available-cpu-dram-mib": 1000, "gpus-per-node": 8}
    assert dram_offload_gb({"tp": 8}, "dram", math.inf, hardware) is None
    assert dram_offload_gb({"tp": 8}, "dram", math.nan, hardware) is None
    assert dram_offload_gb({"tp": 8}, "none", math.nan, hardware) == 0
    assert dram_offload_gb({"tp": 16}, "dram", 0.5, hardware) is None  # more GPUs than the node has
