"""record.json: a typed round trip, and every bad field named as file: field: found, expected."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ci_tools.results import record as rec


def sample() -> rec.Record:
    return rec.Record(
        job=rec.JobIdentity(
            job_id="0123456789abcdef", config_key="qwen3.5-fp8-mi355x-sglang-disagg", scenario="fixed-seq-len",
            isl=8192, osl=1024, concurrency=(8, 16),
            parallelism={"prefill": rec.Parallelism(tp=4, workers=1), "decode": rec.Parallelism(tp=8, ep=8, dp_attention=True)},
            spec_decoding="none", disagg=True, image="lmsysorg/sglang:v0.5.16-rocm720-mi35x", runner_label="mi355x-disagg",
            framework="sglang-disagg", precision="fp8", model="Qwen/Qwen3.5-397B-A17B-FP8", model_prefix="qwen3.5"),
        sha="a" * 40, runner="mi355x-amds_03", node="mia1-p01-g09",
        gpus=rec.Gpus(vendor="amd", model="MI355X", count=8, driver="6.14.14"),
        status=rec.Status(state="success", exit_code=0, sigkill_needed=False, leftover_processes=0,
                          started_at="2026-08-04T12:00:00+00:00", finished_at="2026-08-04T12:30:00+00:00", duration_s=1800.0),
        results=(rec.PointResult(concurrency=8, validity=rec.Validity(completed=80, requested=80, failure_rate=0.0, power_valid=None),
                                 metrics={"throughput_per_gpu": 600.7, "interactivity": 109.7}, raw_result="results/a.json",
                                 aggregate="results/agg_a.json"),),
        files=rec.Files(log="job.log", server_log="results/server.log"))


def test_round_trip(tmp_path: Path) -> None:
    record = sample()
    path = rec.save(record, tmp_path)
    assert path.name == "record.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["schema"] == rec.SCHEMA and data["job"]["concurrency"] == [8, 16]
    assert rec.load(path) == record
    assert record.job.parallelism["prefill"].gpus + record.job.parallelism["decode"].gpus == 12


def test_every_bad_field_is_named(tmp_path: Path) -> None:
    data = sample().to_json()
    data["job"]["concurrency"] = [8, 0]
    data["job"]["scenario"] = "fixed"
    data["job"]["parallelism"]["middle"] = {"tp": 2}
    data["status"]["state"] = "ok"
    data["results"][0]["metrics"]["interactivity"] = "fast"
    data["results"][0]["validity"]["completed"] = True
    data["sha"] = "abc"
    del data["runner"]
    path = tmp_path / "record.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(rec.RecordError) as err:
        rec.load(path)
    text = str(err.value)
    for expected in (
        "job.concurrency[1]: found 0, expected a positive integer",
        'job.scenario: found "fixed", expected one of fixed-seq-len, agentic-coding',
        "job.parallelism.middle: unknown role, expected one of single, prefill, decode",
        'status.state: found "ok", expected one of success, failed, timed-out, stopped, not-run',
        'results[0].metrics.interactivity: found "fast", expected a number',
        "results[0].validity.completed: found true, expected an integer",
        'sha: found "abc", expected a 40-digit lowercase hex commit id, or "" (not a git checkout)',
        "runner: missing",
    ):
        assert f"{path}: {expected}" in text.splitlines(), text
    assert len(err.value.problems) == 8


@pytest.mark.parametrize(("content", "message"), [
    (b'{"schema": "ci-tools/record/0"}', 'schema: found "ci-tools/record/0", expected "ci-tools/record/1"'),
    (b"[1, 2]", "top level: found list, expected a mapping"),
    (b'{"schema":\n', "line 2 column 1: not JSON"),
    (b"\xff\xfe{}", "not UTF-8 text (byte 0)"),
])
def test_unreadable_records(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "record.json"
    path.write_bytes(content)
    with pytest.raises(rec.RecordError, match="^" + str(path).replace(".", r"\.") + ": " + message.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")):
        rec.load(path)
