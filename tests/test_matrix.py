"""Matrix expansion pinned on the real InferenceX data (configs/amd-master.yaml at 843c625)."""

from __future__ import annotations

import functools
import math
import re
from pathlib import Path
from typing import Any

import pytest

from ci_tools.config import load_config
from ci_tools.matrix import (
    AGENTIC,
    FIXED,
    Job,
    conc_values,
    expand,
    gpu_name,
    keys_matching,
    match_key_glob,
)
from ci_tools.model.repository import RepoData, load_repo
from ci_tools.snapshot import WorkTreeSnapshot

from conftest import corpus_dir

MASTER = "configs/amd-master.yaml"


def load(root: Path) -> RepoData:
    config = load_config(root)
    return load_repo(WorkTreeSnapshot(config.root), config, with_changelog=False)


@pytest.fixture(scope="module")
def corpus_jobs() -> list[Job]:
    return expand(load(corpus_dir()))


def jobs_of(jobs: list[Job], key: str) -> list[Job]:
    return [j for j in jobs if j.config_key == key]


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


def test_corpus_range_rows_expand_per_concurrency(corpus_jobs: list[Job]) -> None:
    # dsr1-fp4-mi355x-sglang: { tp: 4, conc-start: 4, conc-end: 64 } and the same with tp 8
    jobs = jobs_of(corpus_jobs, "dsr1-fp4-mi355x-sglang")
    assert [(j.get("tp"), j.conc) for j in jobs] == [(4, c) for c in (4, 8, 16, 32, 64)] + [(8, c) for c in (4, 8, 16, 32, 64)]
    # dsr1-fp4-mi355x-atom: { tp: 8, ep: 1, conc-start: 4, conc-end: 4 } is a single point
    atom = [j for j in jobs_of(corpus_jobs, "dsr1-fp4-mi355x-atom") if j.get("tp") == 8]
    assert [j.conc for j in atom] == [4]


def test_clamp_on_a_corpus_config_with_an_uneven_end(tmp_path: Path) -> None:
    root = _corpus_copy(tmp_path)
    master = root / MASTER
    text = master.read_text()
    master.write_text(text.replace("- { tp: 4, conc-start: 4, conc-end: 64 }", "- { tp: 4, conc-start: 3, conc-end: 50 }", 1))
    jobs = [j for j in jobs_of(expand(load(root)), "dsr1-fp4-mi355x-sglang") if j.get("tp") == 4]
    assert [j.conc for j in jobs] == [3, 6, 12, 24, 48, 50]


def test_corpus_conc_list_single_node_agentic_is_verbatim(corpus_jobs: list[Job]) -> None:
    jobs = jobs_of(corpus_jobs, "qwen3.5-fp8-mi325x-sglang-agentic-mtp")
    assert [(j.get("tp"), j.get("ep"), j.conc) for j in jobs[:9]] == [
        (2, 2, 1), (2, 2, 4), (2, 2, 6), (4, 1, 1), (4, 1, 8), (4, 1, 16), (4, 1, 32), (4, 1, 40), (4, 1, 48)]


def test_corpus_conc_list_multinode_keeps_order_in_one_job(corpus_jobs: list[Job]) -> None:
    jobs = jobs_of(corpus_jobs, "dsr1-fp8-mi355x-sglang-disagg")
    assert [j.get("conc-list") for j in jobs] == [[1024, 2048], [256, 128, 64, 32, 16, 8, 4], [64, 32, 16, 8, 4, 2, 1]]


# -- single-node fields and defaults ---------------------------------------------------------


def test_single_node_fixed_job_exact_fields_with_defaults(corpus_jobs: list[Job]) -> None:
    job = jobs_of(corpus_jobs, "dsr1-fp4-mi355x-sglang")[0]
    assert job.scenario == FIXED
    assert dict(job.fields) == {
        "image": "lmsysorg/sglang:v0.5.12-rocm700-mi35x",
        "model": "amd/DeepSeek-R1-0528-MXFP4-Preview",
        "model-prefix": "dsr1",
        "precision": "fp4",
        "framework": "sglang",
        "runner": "mi355x",
        "isl": 8192,
        "osl": 1024,
        "max-model-len": 8192 + 1024 + 256,
        "exp-name": "dsr1_8k1k",
        "spec-decoding": "none",
        "disagg": False,
        "multinode": False,
        "tp": 4, "pp": 1, "dcp-size": 1, "pcp-size": 1, "ep": 1, "dp-attn": False,
        "conc": 4,
    }
    assert (job.row.path, job.row.line) == (MASTER, 14)


def test_explicit_row_values_override_defaults(corpus_jobs: list[Job]) -> None:
    # dsv4-fp4-mi355x-sglang: { tp: 8, dp-attn: true, conc-start: 64, conc-end: 2048 }
    job = next(j for j in jobs_of(corpus_jobs, "dsv4-fp4-mi355x-sglang") if j.get("dp-attn") is True)
    assert (job.get("tp"), job.get("ep"), job.get("dp-attn"), job.conc) == (8, 1, True, 64)
    mtp = jobs_of(corpus_jobs, "dsr1-fp4-mi355x-sglang-mtp")[0]
    assert mtp.get("spec-decoding") == "mtp"


def test_pp_dcp_pcp_come_from_the_row(tmp_path: Path) -> None:
    root = _corpus_copy(tmp_path)
    master = root / MASTER
    master.write_text(master.read_text().replace(
        "- { tp: 4, conc-start: 4, conc-end: 64 }", "- { tp: 4, pp: 2, dcp-size: 2, pcp-size: 2, conc-start: 4, conc-end: 4 }", 1))
    job = jobs_of(expand(load(root)), "dsr1-fp4-mi355x-sglang")[0]
    assert (job.get("pp"), job.get("dcp-size"), job.get("pcp-size"), job.conc) == (2, 2, 2, 4)


def test_exp_name_for_other_sequence_lengths(tmp_path: Path) -> None:
    root = _corpus_copy(tmp_path)
    master = root / MASTER
    text = master.read_text()
    head, sep, tail = text.partition("    - isl: 8192\n      osl: 1024\n")
    master.write_text(head + "    - isl: 2048\n      osl: 512\n" + tail)
    job = jobs_of(expand(load(root)), "dsr1-fp4-mi355x-sglang")[0]
    assert (job.get("exp-name"), job.get("max-model-len")) == ("dsr1_2048_512", 2048 + 512 + 256)


# -- agentic ---------------------------------------------------------------------------------


def _dram(available_mib: int, utilization: float, gpus: int, per_node: int) -> int:
    """FORMATS.md: floor(min(available, 2,861,022) x 2^20 x utilization x gpus / gpus-per-node / 10^9)."""
    return math.floor(min(available_mib, 2_861_022) * 2**20 * utilization * gpus / per_node / 10**9)


def test_runner_hardware_numbers_used_below_are_the_corpus_ones() -> None:
    repo = load(corpus_dir())
    assert repo.hardware["cluster:mi355x-amds"] == {"available-cpu-dram-mib": 3_095_781, "gpus-per-node": 8}
    assert repo.hardware["cluster:mi300x-amds"] == {"available-cpu-dram-mib": 2_321_924, "gpus-per-node": 8}
    assert repo.hardware["cluster:mi325x-amds"] == {"available-cpu-dram-mib": 3_091_589, "gpus-per-node": 8}


def test_agentic_job_exact_fields_and_dram_budget_capped(corpus_jobs: list[Job]) -> None:
    # kimik3-fp4-mi355x-atom-agentic-mtp, dram-utilization 0.086 on cluster:mi355x-amds (3,095,781 MiB, capped).
    # Its config comment says this budget is 257 GB (and 0.085 would floor to 254).
    jobs = jobs_of(corpus_jobs, "kimik3-fp4-mi355x-atom-agentic-mtp")
    assert [j.conc for j in jobs] == [1, 4, 8, 10]
    assert _dram(3_095_781, 0.086, 8, 8) == 257 and _dram(3_095_781, 0.085, 8, 8) == 254
    dram_job = jobs[2]
    assert dram_job.scenario == AGENTIC
    assert dict(dram_job.fields) == {
        "image": "rocm/atom-dev:ubuntu24.04_py3.12_pytorch_release_2.10.0_kimi_k3_agentic_0820",
        "model": "moonshotai/Kimi-K3",
        "model-prefix": "kimik3",
        "precision": "fp4",
        "framework": "atom",
        "runner": "cluster:mi355x-amds",
        "spec-decoding": "mtp",
        "disagg": False,
        "multinode": False,
        "kv-offloading": "dram",
        "kv-offload-backend": {"name": "lmcache", "version": "0.4.5"},
        "duration": 3600,
        "tp": 8, "pp": 1, "dcp-size": 1, "pcp-size": 1, "ep": 1, "dp-attn": False,
        "total-cpu-dram-gb": 257,
        "conc": 8,
        "exp-name": "kimik3_tp8_conc8_kvdram-lmcache_spec-mtp",
    }
    none_job = jobs[0]
    assert (none_job.get("kv-offloading"), none_job.get("kv-offload-backend"), none_job.get("exp-name")) == (
        "none", None, "kimik3_tp8_conc1_spec-mtp")
    assert "isl" not in none_job.fields and "max-model-len" not in none_job.fields


def test_agentic_dram_budget_uncapped_and_per_gpu_share(corpus_jobs: list[Job]) -> None:
    # cluster:mi300x-amds has 2,321,924 MiB, under the cap: the budget uses it as is.
    mi300 = jobs_of(corpus_jobs, "minimaxm3-fp8-mi300x-vllm-agentic-mtp")
    assert {j.get("total-cpu-dram-gb") for j in mi300} == {_dram(2_321_924, 0.80, 8, 8)} == {1947}
    # TP2 on an 8-GPU node gets a quarter of the capped budget.
    tp2 = jobs_of(corpus_jobs, "qwen3.5-fp8-mi325x-sglang-agentic-mtp")[0]
    assert (tp2.get("tp"), tp2.get("total-cpu-dram-gb")) == (2, _dram(3_091_589, 0.80, 2, 8)) == (2, 599)


def test_agentic_budget_counts_pp_and_pcp_but_not_dcp(tmp_path: Path) -> None:
    root = _corpus_copy(tmp_path)
    master = root / MASTER
    master.write_text(master.read_text().replace(
        "- { tp: 2, ep: 2, spec-decoding: mtp, kv-offloading: none, conc-list: [1, 4, 6] }",
        "- { tp: 2, ep: 2, spec-decoding: mtp, kv-offloading: none, conc-list: [1] }\n"
        "      - { tp: 2, pp: 2, spec-decoding: mtp, kv-offloading: none, conc-list: [1] }\n"
        "      - { tp: 2, pcp-size: 2, spec-decoding: mtp, kv-offloading: none, conc-list: [1] }\n"
        "      - { tp: 2, dcp-size: 2, spec-decoding: mtp, kv-offloading: none, conc-list: [1] }", 1))
    jobs = jobs_of(expand(load(root)), "qwen3.5-fp8-mi325x-sglang-agentic-mtp")[:4]
    assert [j.get("total-cpu-dram-gb") for j in jobs] == [599, 1199, 1199, 599]


# -- multinode -------------------------------------------------------------------------------


def test_multinode_fixed_job_exact_fields(corpus_jobs: list[Job]) -> None:
    [job] = jobs_of(corpus_jobs, "qwen3.5-fp8-mi355x-sglang-disagg")
    assert job.multinode and job.conc is None and job.concs == [8, 16, 32, 64, 128]
    assert dict(job.fields) == {
        "image": "lmsysorg/sglang:v0.5.16-rocm720-mi35x",
        "model": "Qwen/Qwen3.5-397B-A17B-FP8",
        "model-prefix": "qwen3.5",
        "precision": "fp8",
        "framework": "sglang-disagg",
        "runner": "mi355x-disagg",
        "isl": 8192,
        "osl": 1024,
        "max-model-len": 9472,
        "exp-name": "qwen3.5_8k1k",
        "spec-decoding": "none",
        "disagg": True,
        "multinode": True,
        "router": {"name": "sglang-router", "version": "0.3.2"},
        "kv-p2p-transfer": "mori",
        "prefill": {"num-worker": 1, "tp": 4, "ep": 1, "dp-attn": False, "pp": 1, "dcp-size": 1, "pcp-size": 1,
                    "hardware": None, "additional-settings": ["PREFILL_NODES=1"]},
        "decode": {"num-worker": 1, "tp": 8, "ep": 1, "dp-attn": False, "pp": 1, "dcp-size": 1, "pcp-size": 1,
                   "hardware": None, "additional-settings": ["DECODE_NODES=1", "DECODE_MTP_SIZE=0"]},
        "conc-list": [8, 16, 32, 64, 128],
    }


def test_multinode_agentic_gives_one_job_per_concurrency(corpus_jobs: list[Job]) -> None:
    jobs = jobs_of(corpus_jobs, "dsv4-fp4-mi355x-sglang-disagg-agentic-hicache-mtp")
    assert [j.get("conc-list") for j in jobs] == [[c] for c in (1, 2, 4, 8, 16, 32, 48, 64, 64, 96, 128, 192)]
    first, dep = jobs[0], jobs[8]
    assert first.get("exp-name") == "dsv4_p1x8_d1x8_conc1_kvdram-hicache_spec-mtp"
    assert dep.get("exp-name") == "dsv4_p1x8ep8_d1x8ep8_conc64_kvdram-hicache_spec-mtp"
    # The prefill workers (8 of the node's 8 GPUs) offload: the whole capped budget at 0.80.
    assert {j.get("total-cpu-dram-gb") for j in jobs} == {_dram(3_095_781, 0.80, 8, 8)} == {2399}
    assert first.get("prefill")["additional-settings"] == [
        "PREFILL_NODES=1", "CLIENT_IMAGE=lmsysorg/sglang-rocm:v0.5.15.post1-rocm720-mi35x-20260719"]
    assert (first.get("kv-offloading"), first.get("kv-offload-backend"), first.get("duration")) == ("dram", {"name": "hicache"}, 3600)
    # Same row, different concurrency: different jobs; the two conc-64 points come from different rows.
    assert len({j.id for j in jobs}) == len(jobs)


# -- the full sweep --------------------------------------------------------------------------


def test_full_corpus_sweep_is_complete_and_ids_unique(corpus_jobs: list[Job]) -> None:
    assert len(corpus_jobs) == 465
    assert len({j.id for j in corpus_jobs}) == 465
    keys = {j.config_key for j in corpus_jobs}
    assert len(keys) == 56
    by_kind = {(j.scenario, j.multinode) for j in corpus_jobs}
    assert by_kind == {(FIXED, False), (FIXED, True), (AGENTIC, False), (AGENTIC, True)}
    assert all(re.fullmatch(r"[0-9a-f]{16}", j.id) for j in corpus_jobs)


def test_full_sweep_is_reproducible_run_to_run(corpus_jobs: list[Job]) -> None:
    again = expand(load(corpus_dir()))
    assert [j.id for j in again] == [j.id for j in corpus_jobs]
    assert [j.to_json() for j in again] == [j.to_json() for j in corpus_jobs]


def test_ids_change_exactly_when_recipe_inputs_change(tmp_path: Path, corpus_jobs: list[Job]) -> None:
    root = _corpus_copy(tmp_path)
    master = root / MASTER
    text = master.read_text()
    # A changed image for one config, and comments that move every line below.
    text = text.replace("image: lmsysorg/sglang:v0.5.12-rocm700-mi35x\n  model: amd/DeepSeek-R1-0528-MXFP4-Preview",
                        "image: lmsysorg/sglang:v0.5.13-rocm700-mi35x\n  model: amd/DeepSeek-R1-0528-MXFP4-Preview", 1)
    master.write_text("# moved\n# down\n" + text)
    changed = expand(load(root))
    before = {(j.config_key, j.label()): j.id for j in corpus_jobs}
    after = {(j.config_key, j.label()): j.id for j in changed}
    assert before.keys() == after.keys()
    differing = {k[0] for k in before if before[k] != after[k]}
    assert differing == {"dsr1-fp4-mi355x-sglang"}
    assert next(j for j in changed if j.config_key == "dsr1-fp4-mi355x-sglang").row.line == 16


def test_malformed_rows_are_skipped_not_fatal(tmp_path: Path) -> None:
    root = _corpus_copy(tmp_path)
    master = root / MASTER
    master.write_text(master.read_text().replace(
        "- { tp: 4, conc-start: 4, conc-end: 64 }", "- { tp: 4, conc-start: 64, conc-end: 4 }\n      - 17", 1))
    jobs = jobs_of(expand(load(root)), "dsr1-fp4-mi355x-sglang")
    assert [(j.get("tp"), j.conc) for j in jobs] == [(8, c) for c in (4, 8, 16, 32, 64)]


def test_expand_restricted_to_keys(corpus_jobs: list[Job]) -> None:
    repo = load(corpus_dir())
    assert expand(repo, ["dsr1-fp4-mi355x-sglang"]) == jobs_of(corpus_jobs, "dsr1-fp4-mi355x-sglang")


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
    ("dsr1-fp?-mi355x-sglang", "dsr1-fp4-mi355x-sglang", False),  # only * is a wildcard
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


def _corpus_copy(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "configs").mkdir(parents=True)
    for name in ("amd-master.yaml", "runners.yaml"):
        (root / "configs" / name).write_bytes((corpus_dir() / "configs" / name).read_bytes())
    return root


def test_json_text_is_the_entry_as_compact_json(corpus_jobs: list[Job]) -> None:
    import json

    for job in corpus_jobs[::25]:
        text = job.json_text()
        assert json.loads(text) == job.to_json()
        assert text.startswith(f'{{"id":"{job.id}","config-key":')
        assert " " not in text.replace(job.get("image") or "", "")


# -- robustness: whatever the schema rules will report, expansion does not crash -----------------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_scalars = st.one_of(st.none(), st.booleans(), st.integers(-3, 300), st.sampled_from(["8", "mtp", "none", "dram", ""]))
_values = st.recursive(_scalars, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                          st.dictionaries(st.sampled_from(["name", "version", "tp", "ep", "num-worker", "additional-settings", "dp-attn"]), inner, max_size=4)),
                       max_leaves=6)
_row_keys = ["tp", "ep", "dp-attn", "pp", "dcp-size", "pcp-size", "spec-decoding", "conc-start", "conc-end", "conc-list",
             "kv-offloading", "kv-offload-backend", "router", "kv-p2p-transfer", "prefill", "decode"]
_concs = st.one_of(st.fixed_dictionaries({"conc-list": st.lists(st.integers(1, 64), min_size=1, max_size=3)}),
                   st.fixed_dictionaries({"conc-start": st.integers(1, 8), "conc-end": st.integers(8, 40)}))
_rows = st.builds(lambda extra, conc: {**extra, **conc},
                  st.dictionaries(st.sampled_from(_row_keys[:7] + _row_keys[10:]), _values, max_size=6), _concs)
_blocks = st.fixed_dictionaries({"search-space": st.one_of(st.lists(_rows, max_size=3), _values)},
                                optional={"isl": _values, "osl": _values, "dram-utilization": _values})
_configs = st.fixed_dictionaries({
    "model-prefix": _scalars, "runner": st.sampled_from(["mi355x", "cluster:mi355x-amds", 7]),
    "multinode": st.one_of(st.booleans(), _scalars),
    "scenarios": st.one_of(_values, st.dictionaries(st.sampled_from(["fixed-seq-len", "agentic-coding", "other"]),
                                                    st.one_of(st.lists(_blocks, max_size=2), _values), max_size=2)),
})


@settings(max_examples=150, deadline=None)
@given(_configs)
def test_expansion_of_arbitrary_config_shapes_never_raises(data: dict[str, Any]) -> None:
    import yaml

    from ci_tools.contract import job_env
    from ci_tools.model.repository import ConfigEntry, LoadedFile
    from ci_tools.yamlpos import load_yaml

    text = yaml.safe_dump({"k": data})
    loaded = load_yaml(text, MASTER)
    file = LoadedFile(MASTER, text.encode(), loaded)
    from ci_tools.matrix import expand_config

    for job in expand_config(ConfigEntry("k", file, loaded.value["k"], (1, 1, 1, 2)), _corpus_repo()):
        assert job.concs
        job.json_text()
        job_env(job)
        GENERATED.append(job.id)


GENERATED: list[str] = []


@functools.cache
def _corpus_repo() -> RepoData:
    return load(corpus_dir())


def test_the_property_path_generates_jobs_for_a_valid_shape() -> None:
    # The property test's body must not be vacuous: a valid shape through the same path yields jobs.
    GENERATED.clear()
    test_expansion_of_arbitrary_config_shapes_never_raises.hypothesis.inner_test(  # type: ignore[attr-defined]
        {"model-prefix": "m", "runner": "mi355x", "multinode": False,
         "scenarios": {"fixed-seq-len": [{"isl": 1024, "osl": 1024,
                                           "search-space": [{"tp": 8, "conc-start": 1, "conc-end": 64}]}]}})
    assert len(GENERATED) == 7


def test_malformed_worker_blocks_expand_with_what_is_usable(tmp_path: Path) -> None:
    root = _corpus_copy(tmp_path)
    master = root / MASTER
    master.write_text(master.read_text().replace('          additional-settings:\n          - "PREFILL_NODES=1"\n',
                                                 "          additional-settings: 5\n", 1))
    [job] = jobs_of(expand(load(root)), "qwen3.5-fp8-mi355x-sglang-disagg")
    assert job.get("prefill")["additional-settings"] == []
