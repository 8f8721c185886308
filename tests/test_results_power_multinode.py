"""Multinode power as InferenceX computes it: the real utils/process_result.py (which runs
aggregate_power_multinode.py for a multinode result) beside ci_tools.results on the same srt-slurm bundles.

The bundles (tests/power_bundles.py) wrap raw results InferenceX's own client
wrote; each case changes one thing InferenceX's consumer checks.  The
aggregate must be equal key for key and float for float, and the verdict and
its reasons the same as the original's validation sidecar.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ci_tools.jobs.env.contract import contract_for
from ci_tools.results import metrics
from ci_tools.results.record import load
from ci_tools.sweep.records import write_record
from ci_tools.sweep.status import StatusRecord
from tests.conftest import FULL_CORPUS
from tests.power_bundles import CASES, DISAGG_C8, PRODUCER_SHA, Bundle, devices

PROCESS_RESULT = FULL_CORPUS / "utils" / "process_result.py"


def _original(bundle: Bundle, workspace: Path) -> tuple[dict[str, object], dict[str, object]]:
    """InferenceX's aggregate and validation sidecar, its step's environment (the pin exported from the stamp)."""
    env = bundle.env
    if bundle.stamp:
        env["POWER_PRODUCER_SHA"] = (workspace / "LOGS" / "power" / "power-producer-sha.txt").read_text().strip()
    proc = subprocess.run([sys.executable, str(PROCESS_RESULT)], cwd=workspace, capture_output=True, text=True,
                          env={"PATH": os.environ.get("PATH", ""), **env}, timeout=60)
    assert proc.returncode == 0, proc.stderr
    name = env["RESULT_FILENAME"]
    return (json.loads((workspace / f"agg_{name}.json").read_text()),
            json.loads((workspace / f"power_validation_{name}.json").read_text()))


@pytest.mark.parametrize("case", sorted(CASES))
def test_aggregate_equals_inferencex_on_a_power_bundle(case: str, tmp_path: Path) -> None:
    bundle, _, valid = CASES[case]
    copy = bundle.write(tmp_path)
    original, sidecar = _original(bundle, tmp_path)
    raw = json.loads(copy.read_text())
    ours, power = metrics.aggregate(raw, bundle.env, power_dir=tmp_path / "LOGS" / "power", source=str(copy))
    assert list(ours) == list(original)
    assert ours == original
    assert power.valid is sidecar["power_valid"] is valid
    assert list(power.reasons) == sidecar["reasons"]
    # What each reason stands for, word for word (the original names paths relative to its working directory).
    assert [f.replace(f"{tmp_path}/", "") for f in power.failures] == sidecar["failures"]
    if valid:
        assert ours["power_valid"] == 1 and ours["decode_gpu_energy_j"] > 0 and ours["prefill_avg_power_w"] > 0
    else:
        assert ours["power_valid"] == 0 and "total_gpu_energy_j" not in ours and power.reasons


def test_each_invalid_case_fails_for_its_own_reason(tmp_path: Path) -> None:
    """Guards the parity above against cases that are all invalid for one shared, uninteresting reason."""
    expected = {"sample-gap": "package_recompute_invalid", "verdict-lies": "producer_verdict_mismatch",
                "evidence-differs": "producer_verdict_mismatch",
                "unexpected-gpu": "package_recompute_invalid",
                "producer-mismatch": "producer_commit_mismatch", "no-pin": "producer_pin_missing",
                "roles-swapped": "topology_env_mismatch", "content-mismatch": "result_content_mismatch",
                "window-running": "window_for_result_missing", "aggregated-roles": "topology_env_mismatch"}
    for case, reason in expected.items():
        bundle = CASES[case][0]
        copy = bundle.write(tmp_path / case)
        _, power = metrics.aggregate(json.loads(copy.read_text()), bundle.env,
                                     power_dir=tmp_path / case / "LOGS" / "power")
        assert reason in power.reasons, (case, power.reasons)
        assert len(power.reasons) <= 3, (case, power.reasons)


def test_the_energy_is_the_integral_of_the_samples(tmp_path: Path) -> None:
    """Constant draw per role: the energies are watts x window x GPUs, whatever the sampling."""
    bundle = Bundle(DISAGG_C8, devices(4, 8), interval=1.0)
    copy = bundle.write(tmp_path)
    power_csv = tmp_path / "LOGS" / "power" / "samples.csv"
    lines = power_csv.read_text().splitlines()
    flat = [lines[0]] + [",".join(row.split(",")[:6] + ["500.0" if "prefill" in row else "250.0"]) for row in lines[1:]]
    power_csv.write_text("\n".join(flat) + "\n")
    raw = json.loads(copy.read_text())
    _, power = metrics.aggregate(raw, bundle.env, power_dir=tmp_path / "LOGS" / "power")
    assert power.valid, power.reasons
    window = raw["benchmark_end_time_unix"] - raw["benchmark_start_time_unix"]
    assert power.metrics["prefill_gpu_energy_j"] == pytest.approx(500.0 * 4 * window)
    assert power.metrics["decode_gpu_energy_j"] == pytest.approx(250.0 * 8 * window)
    assert power.metrics["avg_power_w"] == pytest.approx((500.0 * 4 + 250.0 * 8) / 12)
    assert power.metrics["joules_per_output_token"] == pytest.approx(
        (500.0 * 4 + 250.0 * 8) * window / raw["total_output_tokens"])


def test_a_multinode_job_with_a_bundle_records_its_power(full_corpus_repo, full_corpus_jobs,  # type: ignore[no-untyped-def]
                                                         tmp_path: Path) -> None:
    """Through the sweep's record: the bundle the launcher left beside the copied result gives power metrics and
    power_valid, instead of "not integrated"."""
    job = next(j for j in full_corpus_jobs
               if j.config_key == "qwen3.5-fp8-mi355x-sglang-disagg" and j.concs == [8, 16, 32, 64, 128])
    contract = contract_for(full_corpus_repo.config, full_corpus_repo.snapshot)
    env = {k: v.value for k, v in contract.workflow_env(job, {"name": "mi355x-amds_06"}).items()
           if v.value is not None}
    bundle = Bundle(DISAGG_C8, devices(4, 8), stamp=True, env_sha=None)
    results = tmp_path / "job" / "results"
    results.mkdir(parents=True)
    copy = bundle.write(results, f"{env['RESULT_FILENAME']}_gpus_12_ctx_4_gen_8.json")
    status = StatusRecord(job_id=job.id, label=job.label(), config_key=job.config_key, scenario_type=job.scenario,
                          runner="mi355x-disagg", launcher="repository", recipe=None, argv=(), status="success",
                          exit_code=0, node="mi355x-amds_06")
    write_record(job, status, env, tmp_path / "job", sha="a" * 40, runner="runner-7", gpus=None)
    [point] = load(tmp_path / "job" / "record.json").results
    assert point.validity.power_valid is True and point.validity.valid
    assert point.metrics["energy_per_output_token"] > 0 and point.metrics["avg_power_per_gpu"] > 400
    agg = json.loads((results / f"agg_{copy.stem}.json").read_text())
    assert agg["power_valid"] == 1 and agg["prefill_gpu_energy_j"] > 0

    # The same job whose bundle comes from another producer commit: measured, and invalid (not "not measured").
    (results / "LOGS" / "power" / "power-producer-sha.txt").write_text("f" * 40 + "\n")
    write_record(job, status, env, tmp_path / "job", sha="a" * 40, runner="runner-7", gpus=None)
    [point] = load(tmp_path / "job" / "record.json").results
    assert point.validity.power_valid is False and "energy_per_output_token" not in point.metrics
    assert PRODUCER_SHA not in (results / "LOGS" / "power" / "power-producer-sha.txt").read_text()
