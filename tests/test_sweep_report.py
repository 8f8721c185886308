"""`ci-tools sweep report`: status records and result JSON to Markdown."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "fixtures" / "sweep"))

from sweeplib import cli, make_repo  # noqa: E402

from ci_tools.report.markdown import md_escape  # noqa: E402
from ci_tools.sweep.report import collect, format_number, html_escape, render_markdown  # noqa: E402
from ci_tools.sweep.status import StatusRecord, read_status, write_status  # noqa: E402


def _record(job_id: str, label: str, status: str, **kw: object) -> StatusRecord:
    base: dict[str, object] = dict(job_id=job_id, label=label, config_key=label.split()[0], scenario_type="fixed-seq-len",
                                   runner="mi355x", launcher="docker", recipe="benchmarks/x.sh", argv=("docker", "run"),
                                   status=status)
    base.update(kw)
    return StatusRecord(**base)  # type: ignore[arg-type]


def _write(root: Path, record: StatusRecord, log: str = "", results: dict[str, str] | None = None) -> None:
    job_dir = root / record.job_id
    (job_dir / "results").mkdir(parents=True)
    (job_dir / "job.log").write_text(log)
    for name, text in (results or {}).items():
        path = job_dir / "results" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    write_status(job_dir, record)


def _sample(root: Path) -> None:
    # The job writes several JSON files; only the one RESULT_FILENAME names is its result.
    _write(root, _record("a1", "dsr1-fp8 fixed-seq-len 1024/1024 TP8/EP1 c4", "success", exit_code=0,
                         duration_seconds=754.4, conc=4, results=("dsr1_c4.json", "results/other.json"),
                         result_filename="dsr1_c4", node="mi355x-amds_03"),
           results={"dsr1_c4.json": json.dumps({"tput_per_gpu": 18960.2, "latency": {"p50": 0.25}}),
                    "results/other.json": json.dumps({"tput_per_gpu": 1, "latency": {"p50": 9}})})
    _write(root, _record("b2", "dsr1-fp8 fixed-seq-len 1024/1024 TP8/EP1 c8", "failed", exit_code=3,
                         duration_seconds=61, conc=8),
           log="".join(f"line {i}\n" for i in range(30)) + "error: ``` engine | failed\n")
    _write(root, _record("c3", "glm5|<b>x</b> fixed-seq-len @team c16", "timed-out", timed_out=True, signal="SIGKILL",
                         killed=True, duration_seconds=3725, timeout_seconds=3600, conc=16,
                         message="ran cleanup: docker rm --force ci-tools-c3", result_filename="glm5_c16",
                         results=("partial.json", "glm5_c16.json")),
           results={"partial.json": json.dumps({"tput_per_gpu": 99}), "glm5_c16.json": '{"tput'})


def test_markdown_is_exact(tmp_path: Path) -> None:
    _sample(tmp_path / "out")
    reports, problems = collect([tmp_path / "out"])
    assert problems == []
    text = render_markdown(reports, metrics=("tput_per_gpu", "latency.p50"), log_tail=2)
    assert text == (
        "### Benchmark sweep\n"
        "\n"
        "**3 jobs**: 1 failed, 1 timed-out, 1 success\n"
        "\n"
        "|  | Job | Runner | Launcher | Outcome | Duration | Results | tput\\_per\\_gpu | latency.p50 |\n"
        "|---|---|---|---|---|---|---|---|---|\n"
        "| ❌ | dsr1-fp8 fixed-seq-len 1024/1024 TP8/EP1 c8 | mi355x | docker | exit 3 | 1m01s | 0 |  |  |\n"
        "| ⏱️ | glm5\\|\\<b\\>x\\</b\\> fixed-seq-len &#64;team c16 | mi355x | docker | timed out after 1h00m00s, "
        "SIGKILL needed after SIGTERM | 1h02m05s | 2 |  |  |\n"
        "| ✅ | dsr1-fp8 fixed-seq-len 1024/1024 TP8/EP1 c4 | mi355x \\(mi355x-amds\\_03\\) | docker | exit 0 | 12m34s "
        "| 2 | 18,960 | 0.25 |\n"
        "\n"
        "<details><summary>dsr1-fp8 fixed-seq-len 1024/1024 TP8/EP1 c8: exit 3</summary>\n"
        "\n"
        "````text\n"
        "line 29\n"
        "error: ``` engine | failed\n"
        "````\n"
        "\n"
        "</details>\n"
        "\n"
        "<details><summary>glm5|&lt;b&gt;x&lt;/b&gt; fixed-seq-len &#64;team c16: timed out after 1h00m00s, "
        "SIGKILL needed after SIGTERM</summary>\n"
        "\n"
        "ran cleanup: docker rm --force ci-tools-c3\n"
        "\n"
        "</details>\n"
    )


def test_numbers_are_written_for_people() -> None:
    assert [format_number(v) for v in (18960.2, 1234.56789, 123.45, 0.25, 0.000012346, 1e-12, 2.5e9, 0.0,
                                       -1500.0, 1234567, 7, float("nan"))] == [
        "18,960", "1,235", "123.5", "0.25", "0.00001235", "0.000000000001", "2,500,000,000", "0", "-1,500",
        "1,234,567", "7", "nan"]


def test_a_success_that_left_processes_behind_is_not_a_plain_success(tmp_path: Path) -> None:
    root = tmp_path / "out"
    _write(root, _record("d4", "k fixed-seq-len c1", "success", exit_code=0, leftover_processes=2, detached_processes=1,
                         killed=True, leftovers=("4242 python3 -m sglang.launch_server --port 8888 (detached)",
                                                 "4250 sleep 300"),
                         message="the recipe left 2 process(es) running after it exited (1 detached from its "
                                 "process group); they were terminated with SIGKILL"))
    text = render_markdown(collect([root])[0], log_tail=0)
    assert "| 🧹 | k fixed-seq-len c1 | mi355x | docker | exit 0, left 2 processes running \\(1 detached\\), " \
           "SIGKILL needed |" in text
    assert ("<details><summary>k fixed-seq-len c1: exit 0, left 2 processes running (1 detached), SIGKILL needed"
            "</summary>") in text
    assert "```text\n4242 python3 -m sglang.launch_server --port 8888 (detached)\n4250 sleep 300\n```" in text


def test_summary_text_is_escaped_as_html_not_markdown() -> None:
    assert html_escape("a (SIGTERM) <b>&</b> @x\n y") == "a (SIGTERM) &lt;b&gt;&amp;&lt;/b&gt; &#64;x y"


def test_escaping_keeps_cells_inert() -> None:
    assert md_escape("a|b\nc <img src=x> @user [x](y) `z`") == \
        "a\\|b c \\<img src=x\\> &#64;user \\[x\\]\\(y\\) \\`z\\`"


def test_a_report_too_long_for_a_comment_keeps_the_failures(tmp_path: Path) -> None:
    root = tmp_path / "out"
    for i in range(150):
        status = "failed" if i % 50 == 0 else "success"
        _write(root, _record(f"j{i:03d}", f"key-{i:03d} fixed-seq-len TP8 c{i}", status, exit_code=0 if status == "success" else 1,
                             conc=i))
    reports, _ = collect([root])
    text = render_markdown(reports, max_chars=3000, log_tail=0)
    assert len(text) <= 3000
    assert "**150 jobs**: 3 failed, 147 success" in text
    assert all(f"key-{i:03d} fixed" in text for i in (0, 50, 100))
    assert "key-001 fixed" not in text
    assert "147 row(s) left out to stay under the size limit" in text


def test_status_record_round_trips(tmp_path: Path) -> None:
    record = _record("z9", "k fixed-seq-len c1", "stopped", stopped=True, signal="SIGTERM", argv=("bash", "x.sh"))
    write_status(tmp_path, record)
    assert read_status(tmp_path / "status.json") == record
    assert json.loads((tmp_path / "status.json").read_text())["schema"] == "ci-tools/sweep-status/1"


def test_cli_report_writes_step_summary_and_skips_foreign_files(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, "sweep:\n  report-metrics: [tput_per_gpu]\n")
    _sample(repo / "a")
    (repo / "b" / "x").mkdir(parents=True)
    (repo / "b" / "x" / "status.json").write_text('{"not": "a record"}')
    summary = tmp_path / "summary.md"
    env = dict(__import__("os").environ, GITHUB_STEP_SUMMARY=str(summary))
    proc = cli(repo, "sweep", "report", "a", "b", "--title", "Sweep of abc", "--step-summary", env=env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("### Sweep of abc\n\n**3 jobs**")
    assert "| tput\\_per\\_gpu |" in proc.stdout.splitlines()[4]
    assert summary.read_text() == proc.stdout
    assert "ci-tools: warning: skipped" in proc.stderr and "not a ci-tools sweep status record" in proc.stderr


def test_cli_report_on_a_missing_directory_is_a_usage_error(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    proc = cli(repo, "sweep", "report", "nope")
    assert proc.returncode == 2 and "nope is not a directory of sweep results" in proc.stderr


def test_canonical_metrics_come_from_record_json_with_their_units(tmp_path: Path) -> None:
    from ci_tools.results import record as rec

    root = tmp_path / "out"
    status = _record("e5", "k-disagg fixed-seq-len c1 c2", "success", exit_code=0, result_filename="k_c1")
    _write(root, status, results={"k_c1.json": json.dumps({"tput_per_gpu": 1})})
    points = tuple(rec.PointResult(concurrency=c, validity=rec.Validity(c * 10, c * 10, 0.0, None, reasons),
                                   metrics={"throughput_per_gpu": value}, raw_result=f"results/k_c{c}.json")
                   for c, value, reasons in ((1, 18960.2, ()), (2, 2500.0, ("no request completed",))))
    identity = rec.JobIdentity("e5", "k-disagg", "fixed-seq-len", 1024, 1024, (1, 2), {}, "none", True, "img",
                               "mi355x", "sglang", "fp8", "m")
    rec.save(rec.Record(identity, "", "runner-1", "mi355x-amds_00", rec.Gpus(), rec.Status("success"), points),
             root / "e5")
    text = render_markdown(collect([root])[0], metrics=("throughput_per_gpu", "tput_per_gpu"), log_tail=0)
    lines = text.splitlines()
    assert lines[4].endswith("| throughput\\_per\\_gpu \\(tok/s/GPU\\) | tput\\_per\\_gpu |")
    assert lines[6] == ("| ✅ | k-disagg fixed-seq-len c1 c2 | mi355x | docker | exit 0, invalid: c2 no request "
                        "completed | 0s | 0 | 18,960 / 2,500 | 1 |")
