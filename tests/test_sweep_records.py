"""record.json of a multinode job: one point per result file the launcher copied, processed as the
multinode template's step processes each (IS_MULTINODE, the GPU counts its file name states)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from ci_tools.jobs.env.contract import contract_for
from ci_tools.results import metrics
from ci_tools.results.record import load
from ci_tools.sweep.records import raw_results, write_record
from ci_tools.sweep.status import StatusRecord

RAW = Path(__file__).resolve().parent / "data" / "results" / "raw" / "qwen3.5-fp8-mi355x-sglang-disagg-c8"
NAME = "qwen3.5_8k1k_fp8_sglang-disagg_disagg-true_spec-none_concurrency_8_req_rate_inf_gpus_12_ctx_4_gen_8.json"


def test_a_multinode_job_s_points_are_processed_as_the_multinode_step_does(
        full_corpus_repo, full_corpus_jobs, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    job = next(j for j in full_corpus_jobs
               if j.config_key == "qwen3.5-fp8-mi355x-sglang-disagg" and j.concs == [8, 16, 32, 64, 128])
    contract = contract_for(full_corpus_repo.config, full_corpus_repo.snapshot)
    env = {k: v.value for k, v in contract.workflow_env(job, {"name": "mi355x-amds_06"}).items()
           if v.value is not None}
    name = env["RESULT_FILENAME"]
    assert name.endswith("_conc8x16x32x64x128_mi355x-amds_06")
    results = tmp_path / "job" / "results"
    results.mkdir(parents=True)
    # What launch_mi355x-amds.sh copies to the workspace for each concurrency: ${RESULT_FILENAME}_<file> (the
    # file's name shortened to what the step reads from it, the GPU counts: the whole would pass 255 bytes).
    copied = f"{name}_gpus_12_ctx_4_gen_8.json"
    shutil.copy(RAW / NAME, results / copied)
    (results / f"agg_{name}_old.json").write_text("{}")  # an aggregate is not a raw result
    assert raw_results(results, env, multinode=True) == [results / copied]
    status = StatusRecord(job_id=job.id, label=job.label(), config_key=job.config_key, scenario_type=job.scenario,
                          runner="mi355x-disagg", launcher="repository", recipe=None, argv=(), status="success",
                          exit_code=0, node="mi355x-amds_06")
    write_record(job, status, env, tmp_path / "job", sha="a" * 40, runner="runner-7", gpus=None)
    record = load(tmp_path / "job" / "record.json")
    assert record.job.concurrency == (8, 16, 32, 64, 128) and set(record.job.parallelism) == {"prefill", "decode"}
    [point] = record.results
    # The same numbers InferenceX gets from this file with the environment its step gives process_result.py.
    case_env = json.loads((RAW / "env.json").read_text())
    raw = json.loads((RAW / NAME).read_text())
    expected, _ = metrics.aggregate(raw, case_env)
    assert point.concurrency == 8
    assert point.metrics == metrics.canonical(expected)
    ours = json.loads((results / f"agg_{copied}").read_text())
    # Equal but for what the case's environment leaves out or fakes (the job's router, KV transfer, fingerprint).
    metadata = {"router", "kv_p2p_transfer", "recipe_fingerprint"}
    assert {k: v for k, v in ours.items() if k not in metadata} == \
        {k: v for k, v in expected.items() if k not in metadata}
    assert ours["power_valid"] == 0 and point.validity.power_valid is None  # no power bundle: not measured
