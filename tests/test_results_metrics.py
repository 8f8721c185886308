"""Metrics as InferenceX computes them: the real utils/process_result.py run on the same raw results.

The raw results under tests/data/results/raw are what InferenceX's own
benchmark client (benchmark_serving.py --save-result) wrote against a
simulated server (scripts/make_raw_results.py; MANIFEST.json says what each
case is).  Each fixed-sequence-length case is processed twice: by the
original script in a scratch directory, with the environment the workflow
gives it, and by ci_tools.results.metrics.  The aggregates must be equal key
for key, in the same order, float for float.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ci_tools.results import measure, metrics
from ci_tools.results.record import PointResult
from tests.conftest import FULL_CORPUS

RAW = Path(__file__).resolve().parent / "data" / "results" / "raw"
MANIFEST = json.loads((RAW / "MANIFEST.json").read_text(encoding="utf-8"))
PROCESS_RESULT = FULL_CORPUS / "utils" / "process_result.py"


def _env(case: str) -> dict[str, str]:
    env: dict[str, str] = json.loads((RAW / case / "env.json").read_text(encoding="utf-8"))
    return env


def _fixed_cases() -> list[str]:
    return [c["name"] for c in MANIFEST if "SCENARIO_TYPE" not in _env(c["name"])]


def _agentic_cases() -> list[str]:
    return [c["name"] for c in MANIFEST if "SCENARIO_TYPE" in _env(c["name"])]


def test_the_fixtures_cover_what_the_parity_must_cover() -> None:
    envs = [_env(c["name"]) for c in MANIFEST]
    fixed = [e for e in envs if "SCENARIO_TYPE" not in e]
    assert len(MANIFEST) >= 20
    assert sum(e.get("IS_MULTINODE") == "true" for e in fixed) >= 4
    assert sum(e["SPEC_DECODING"] == "mtp" for e in fixed) >= 2
    assert sum((RAW / c / "gpu_metrics.csv").is_file() for c in _fixed_cases()) >= 6  # power on
    assert sum(not (RAW / c / "gpu_metrics.csv").is_file() for c in _fixed_cases()) >= 6  # power off
    assert len(_agentic_cases()) >= 3


@pytest.mark.parametrize("case", _fixed_cases())
def test_aggregate_equals_process_result(case: str, tmp_path: Path) -> None:
    env = _env(case)
    name = env["RESULT_FILENAME"]
    for f in (RAW / case).iterdir():
        shutil.copy(f, tmp_path / f.name)
    # The same time zone as this process: nvidia-smi timestamps are local time to both readers.
    run_env = {"PATH": os.environ.get("PATH", ""), **{k: os.environ[k] for k in ("TZ",) if k in os.environ}, **env}
    proc = subprocess.run([sys.executable, str(PROCESS_RESULT)], cwd=tmp_path, env=run_env, capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    original = json.loads((tmp_path / f"agg_{name}.json").read_text(encoding="utf-8"))
    sidecar = json.loads((tmp_path / f"power_validation_{name}.json").read_text(encoding="utf-8"))

    raw = json.loads((RAW / case / f"{name}.json").read_text(encoding="utf-8"))
    csv = RAW / case / "gpu_metrics.csv"
    ours, power = metrics.aggregate(raw, env, gpu_metrics=csv if csv.is_file() else None)
    assert list(ours) == list(original)
    assert ours == original
    assert power.valid == sidecar["power_valid"]
    assert list(power.reasons) == sidecar["reasons"]


def test_power_on_and_off_both_reach_the_aggregate() -> None:
    seen = set()
    for case in _fixed_cases():
        env = _env(case)
        raw = json.loads((RAW / case / f"{env['RESULT_FILENAME']}.json").read_text(encoding="utf-8"))
        csv = RAW / case / "gpu_metrics.csv"
        agg, power = metrics.aggregate(raw, env, gpu_metrics=csv if csv.is_file() else None)
        seen.add((csv.is_file(), power.valid, power.reasons[:1]))
        if power.valid:
            assert agg["joules_per_output_token"] > 0 and agg["power_valid"] == 1
        else:
            assert "joules_per_output_token" not in agg and agg["power_valid"] == 0
    assert (True, True, ()) in seen
    assert (False, False, ("telemetry_file_missing",)) in seen
    assert (True, False, ("sampling_gap_exceeded",)) in seen
    assert (True, False, ("expected_gpu_count_mismatch",)) in seen


@pytest.mark.parametrize("case", _agentic_cases())
def test_agentic_canonical_metrics_are_read_where_inferencex_writes_them(case: str) -> None:
    env = _env(case)
    agg = json.loads((RAW / case / f"{env['RESULT_FILENAME']}.json").read_text(encoding="utf-8"))
    got = metrics.canonical(agg)
    rm = agg["request_metrics"]
    assert got["throughput_per_gpu"] == rm["throughput"]["per_gpu"]["total_tput_tps"]
    assert got["interactivity"] == rm["latency"]["intvty"]["p50"]
    assert got["ttft_median"] == rm["latency"]["ttft"]["p50"]
    assert "ttft_p99" not in got  # agentic aggregates stop at p95: absent, never guessed


def test_measure_writes_the_aggregate_and_judges_validity(tmp_path: Path) -> None:
    case = "dsr1-fp4-mi355x-sglang-8k1k-c16-failures"
    env = _env(case)
    shutil.copytree(RAW / case, tmp_path / "job" / "results")
    raw = tmp_path / "job" / "results" / f"{env['RESULT_FILENAME']}.json"
    point = measure.measure(raw, env, tmp_path / "job")
    assert isinstance(point, PointResult)
    assert point.concurrency == 16
    assert point.validity.requested == 160 and point.validity.completed == 146
    assert not point.validity.valid and "over 5%" in point.validity.reasons[0]
    assert point.validity.power_valid is None  # no telemetry: not measured, not invalid
    agg = json.loads((tmp_path / "job" / point.aggregate).read_text(encoding="utf-8"))
    assert point.metrics["throughput_per_gpu"] == agg["tput_per_gpu"]
    assert point.metrics["interactivity"] == agg["median_intvty"]

    ok = "dsr1-fp4-mi355x-sglang-8k1k-c4"
    shutil.copytree(RAW / ok, tmp_path / "ok")
    env_ok = _env(ok)
    point = measure.measure(tmp_path / "ok" / f"{env_ok['RESULT_FILENAME']}.json", env_ok, tmp_path / "ok",
                            gpu_metrics=tmp_path / "ok" / "gpu_metrics.csv")
    assert point.validity.valid and point.validity.power_valid is True
    assert point.metrics["energy_per_output_token"] > 0


def test_an_agentic_replay_s_warmup_requests_are_not_failures(tmp_path: Path) -> None:
    """AIPerf exports each lane's warmup requests beside the profiled ones; process_agentic_result drops them
    and counts them in num_requests_total and request_accounting. The failure rate is of the profiled
    requests: 40 of 40 with 20 warmup records is valid, 40 of 50 (10 errors) is not."""
    case = "qwen3.5-fp8-mi325x-sglang-agentic-mtp-c4"
    env = _env(case)
    name = f"{env['RESULT_FILENAME']}.json"
    real = json.loads((RAW / case / name).read_text(encoding="utf-8"))
    assert (real["num_requests_successful"], real["num_requests_total"]) == (40, 40)

    def measured(errors: int) -> PointResult:
        accounting = {"records_total": 60 + errors, "records_profiled": 40, "records_dropped_total": 20 + errors,
                      "records_warmup_dropped": 20, "records_error_dropped": errors, "error_categories": {}}
        job = tmp_path / f"job{errors}"
        (job / "results").mkdir(parents=True)
        raw = job / "results" / name
        raw.write_text(json.dumps({**real, "num_requests_total": 60 + errors, "request_accounting": accounting}),
                       encoding="utf-8")
        return measure.measure(raw, env, job)

    clean = measured(0)
    assert (clean.validity.completed, clean.validity.requested, clean.validity.valid) == (40, 40, True)
    failing = measured(10)
    assert (failing.validity.completed, failing.validity.requested) == (40, 50)
    assert failing.validity.reasons == ("request failure rate 20.0% over 10% (40/50 completed)",)


def test_a_missing_variable_or_field_names_the_file(tmp_path: Path) -> None:
    case = "dsr1-fp4-mi355x-sglang-8k1k-c8"
    env = _env(case)
    raw = json.loads((RAW / case / f"{env['RESULT_FILENAME']}.json").read_text(encoding="utf-8"))
    with pytest.raises(metrics.MetricsError, match=r"^x\.json: missing required environment variables: TP$"):
        metrics.process_result(raw, {k: v for k, v in env.items() if k != "TP"}, source="x.json")
    with pytest.raises(metrics.MetricsError, match=r"x\.json: field `total_token_throughput` is missing"):
        metrics.process_result({k: v for k, v in raw.items() if k != "total_token_throughput"}, env, source="x.json")
    with pytest.raises(metrics.MetricsError, match=r"field `median_tpot_ms` is 0"):
        metrics.process_result({**raw, "median_tpot_ms": 0}, env, source="x.json")
    bad = tmp_path / "r.json"
    bad.write_text('{"completed": 1,\n oops}', encoding="utf-8")
    with pytest.raises(metrics.MetricsError, match=r"r\.json:2:2: not JSON"):
        measure.measure(bad, env, tmp_path)
