"""The PR comment: a sweep of the whole real matrix stays under GitHub's limit and leads with flagged points."""

from __future__ import annotations

import json
import random
import string
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from ci_tools.cli.main import cli
from ci_tools.jobs.job import Job
from ci_tools.report.markdown import md_escape
from ci_tools.results import pareto, verdict
from ci_tools.results.baseline import Baseline, from_points
from ci_tools.results.comment import GITHUB_LIMIT, CommentContext, marker, render
from ci_tools.results.point import Observation, PointKey, observations
from tests import results_support as support

SHA_BASE, SHA_PR = "b" * 40, "c" * 40


def _points(records: list) -> dict[PointKey, list[Observation]]:
    out: dict[PointKey, list[Observation]] = {}
    for r in records:
        for o in observations(r):
            out.setdefault(o.key, []).append(o)
    return out


@pytest.fixture(scope="module")
def full_sweep(full_corpus_jobs: list[Job]) -> tuple[list[verdict.PointVerdict], list, set[PointKey]]:
    rng = random.Random(7)
    base: dict[PointKey, list[Observation]] = {}
    for day in range(1, 6):
        for key, obs in _points(support.records(full_corpus_jobs, sha=SHA_BASE, date=f"2026-08-0{day}T00:00:00+00:00",
                                                rng=rng)).items():
            base.setdefault(key, []).extend(obs)
    keys = sorted(base)
    dropped = {keys[i] for i in (3, 400, 1100, 1500)}
    pr = _points(support.records(full_corpus_jobs, sha=SHA_PR, date="2026-08-09T00:00:00+00:00", rng=rng,
                                 changes={(k, "throughput_per_gpu"): 0.85 for k in dropped},
                                 invalid=[keys[10], keys[11]]))
    verdicts = verdict.judge(base, pr)
    return verdicts, pareto.compare_all(base, pr), dropped


def test_the_full_matrix_comment_fits_and_leads_with_flagged_points(
        full_sweep: tuple[list[verdict.PointVerdict], list, set[PointKey]], full_corpus_jobs: list[Job]) -> None:
    verdicts, frontiers, dropped = full_sweep
    assert len(full_corpus_jobs) == 1820 and len(verdicts) >= 1820
    ctx = CommentContext(key="comment-42", sha=SHA_PR, baseline=Baseline({}, "results store ci-tools-results",
                                                                         sha=SHA_BASE, date="2026-08-05T00:00:00+00:00"),
                         run_url="https://github.com/o/r/actions/runs/1", artifact_url="https://github.com/o/r/actions/runs/1#artifacts")
    body = render(verdicts, frontiers, ctx)
    assert len(body) <= len(body.encode()) <= 65_000 < GITHUB_LIMIT
    assert body.startswith(marker("comment-42") + "\n### Benchmark results for `cccccccccccc`")
    flagged = {v.key for v in verdicts if v.flagged}
    assert dropped <= flagged
    assert len(flagged - dropped) <= 0.01 * len(verdicts)
    first_table = body.index("#### Flagged points")
    assert first_table < body.index("#### Throughput vs interactivity frontier")
    for v in verdicts:
        if v.flagged:
            assert md_escape(v.key.text()) in body[first_table:body.index("#### Throughput vs")]
    assert "2 invalid" in body and "invalid: request failure rate 20.0% over 5%" in body.replace("\\", "")
    assert "configuration table(s) left out" in body  # detail went first, and said so
    (Path(__file__).resolve().parent / "data" / "results").mkdir(exist_ok=True)


_text = st.text(alphabet=string.ascii_letters + string.digits + "-_.|*`<>@[]()#!", min_size=1, max_size=60)


@st.composite
def _verdicts(draw: st.DrawFn) -> list[verdict.PointVerdict]:
    configs = draw(st.lists(_text, min_size=1, max_size=40, unique=True))
    n = draw(st.integers(1, 3000))
    out = []
    for i in range(n):
        key = PointKey(configs[i % len(configs)], "fixed-seq-len", 1024 * (1 + i % 8), 1024, 1 + i // len(configs),
                       "tp8", "none", False)
        label = draw(st.sampled_from(verdict.LABELS)) if i < 400 else verdict.NO_CHANGE
        if label in verdict.FLAGGED:
            m = verdict.MetricVerdict("throughput_per_gpu", label, 1000.0, 880.0, -0.12, 0.01, "point", 0.05, 10, 1)
            out.append(verdict.PointVerdict(key, label, (m,)))
        else:
            out.append(verdict.PointVerdict(key, label, reasons=("x" * draw(st.integers(0, 300)),)))
    return out


@settings(max_examples=10, deadline=None)
@given(_verdicts())
def test_the_comment_never_exceeds_the_limit_and_keeps_every_flagged_point(vs: list[verdict.PointVerdict]) -> None:
    ctx = CommentContext(key="k", sha="d" * 40, baseline=Baseline({}, "nowhere"))
    body = render(vs, [], ctx)
    assert len(body.encode()) <= 65_000
    for v in vs:
        if v.flagged:
            assert md_escape(v.key.config_key) in body


def test_compare_flags_exactly_the_injected_regressions(tmp_path: Path, full_corpus_jobs: list[Job]) -> None:
    jobs = [j for j in full_corpus_jobs if j.config_key in ("dsr1-fp4-mi355x-sglang", "dsr1-fp8-mi355x-sglang",
                                                            "qwen3.5-fp8-mi355x-sglang-disagg")]
    assert len(jobs) >= 18
    rng = random.Random(11)
    for day in range(1, 7):
        support.write(tmp_path / "base", support.records(jobs, sha=SHA_BASE, date=f"2026-08-0{day}T00:00:00+00:00", rng=rng))
    keys = sorted(_points(support.records(jobs, sha=SHA_PR, date="x", rng=rng)))
    worse_tput, worse_intvty, better = keys[5], keys[20], keys[-3]
    changes = {(worse_tput, "throughput_per_gpu"): 0.88, (worse_intvty, "interactivity"): 0.86,
               (better, "throughput_per_gpu"): 1.15}
    for run in (1, 2):  # a rerun: two measurements per point, so Welch's test can confirm
        support.write(tmp_path / "pr", support.records(jobs, sha=SHA_PR, date=f"2026-08-1{run}T00:00:00+00:00",
                                                       rng=rng, changes=changes))
    result = CliRunner().invoke(cli, ["results", "compare", str(tmp_path / "base"), str(tmp_path / "pr"),
                                      "--format", "json"])
    assert result.exit_code == 1, result.output  # a confirmed regression
    data = json.loads(result.output)
    labels = {p["point"]: p["label"] for p in data["points"]}
    assert {p for p, label in labels.items() if label == "regression"} == {worse_tput.text(), worse_intvty.text()}
    assert {p for p, label in labels.items() if label == "improvement"} == {better.text()}
    assert {p for p, label in labels.items() if label != "no change"} == {worse_tput.text(), worse_intvty.text(),
                                                                          better.text()}
    worse_front = {(f["config_key"], f["isl"], f["osl"]): f["label"] for f in data["frontiers"]}
    assert worse_front[(worse_tput.config_key, worse_tput.isl, worse_tput.osl)] in (pareto.WORSE, pareto.UNCHANGED,
                                                                                    pareto.TRADE_OFF)
    markdown = CliRunner().invoke(cli, ["results", "compare", str(tmp_path / "base"), str(tmp_path / "pr")])
    assert "#### Flagged points (3; 2 worse)" in markdown.output


def test_compare_refuses_what_it_cannot_read(tmp_path: Path) -> None:
    (tmp_path / "pr" / "job").mkdir(parents=True)
    (tmp_path / "pr" / "job" / "record.json").write_text('{"schema": "ci-tools/record/1", "job": {}}')
    result = CliRunner().invoke(cli, ["results", "compare", str(tmp_path / "nope"), str(tmp_path / "pr")])
    assert result.exit_code == 2 and "BASE" in result.output and "is not a directory" in result.output
    (tmp_path / "base").mkdir()
    result = CliRunner().invoke(cli, ["results", "compare", str(tmp_path / "base"), str(tmp_path / "pr")])
    assert result.exit_code == 2
    assert "record.json: job.job_id: missing" in result.output and "holds no record.json" in result.output
    result = CliRunner().invoke(cli, ["results", "compare", str(tmp_path / "base"), str(tmp_path / "pr"),
                                      "--metric", "avg_power_per_gpu"])
    assert result.exit_code == 2 and "not a judged metric" in result.output


def test_point_keys_tell_every_measured_point_of_the_real_matrix_apart(full_corpus_jobs: list[Job]) -> None:
    """Two jobs share a point only when they measure the same thing: never an image, never KV offloading."""
    from ci_tools.results import record as rec
    from ci_tools.results.identity import identity
    from ci_tools.results.point import key_of

    seen: dict[PointKey, Job] = {}
    shared = []
    for job in full_corpus_jobs:
        r = rec.Record(job=identity(job), sha="a" * 40, runner="", node="", gpus=rec.Gpus(), status=rec.Status("success"))
        for conc in r.job.concurrency:
            key = key_of(r, conc)
            if key in seen:
                other = seen[key]
                shared.append(sorted(f for f in {*other.fields, *job.fields} if other.fields.get(f) != job.fields.get(f)))
            seen[key] = job
    # One multinode allocation is listed twice, once with its eval concurrency: the same point, measured twice.
    assert shared == [["conc", "eval-conc", "run-eval"]]
    assert any(k.kv_offloading != "none" for k in seen) and len(seen) > 2000
