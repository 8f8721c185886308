"""The shared benchmark helpers (bench/benchlib.py): medians, ratios, the table, measuring a process, git."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
import benchlib  # noqa: E402
from benchlib import Measurement, Sample, Table, ratio  # noqa: E402


def test_measurement_takes_medians_the_largest_peak_and_the_extremes() -> None:
    got = Measurement.of([Sample(3.0, 0.9, 100), Sample(1.0, 0.5, 300), Sample(2.0, 0.7, None)])
    assert got == Measurement(wall_s=2.0, cpu_s=0.7, peak_rss_kib=300, fastest_s=1.0, slowest_s=3.0, runs=3)
    assert got.peak_rss_mib == 300 / 1024


def test_measurement_of_even_runs_is_the_mean_of_the_middle_two_and_rss_may_be_absent() -> None:
    got = Measurement.of([Sample(1.0, 0.2), Sample(4.0, 0.6)])
    assert (got.wall_s, got.cpu_s, got.peak_rss_kib, got.peak_rss_mib) == (2.5, 0.4, None, None)


def test_measurement_of_no_run_is_refused() -> None:
    with pytest.raises(ValueError, match="at least one run"):
        Measurement.of([])


@pytest.mark.parametrize(("value", "baseline", "shown"),
                         [(0.5, 2.0, "0.25x"), (3.0, 1.5, "2.00x"), (250.0, 1.0, "250x"), (1.0, 0.0, "n/a")])
def test_ratio_is_a_multiple_of_the_baseline(value: float, baseline: float, shown: str) -> None:
    assert ratio(value, baseline) == shown


def test_table_row_shows_the_figures_beside_the_baseline() -> None:
    table = Table(label_width=10)
    current = Measurement.of([Sample(0.2, 0.1, 2048), Sample(0.4, 0.3, 1024)])
    baseline = Measurement.of([Sample(1.0, 0.8, 4096)])
    assert table.row("ours", current, baseline, "target 1 s").split() == [
        "ours", "0.300", "0.200", "0.200", "2.0", "0.25x", "target", "1", "s"]
    assert table.row("theirs", baseline).split() == ["theirs", "1.000", "1.000", "0.800", "4.0"]
    # A sample measured in process has no peak RSS of its own.
    assert table.row("in process", Sample(1.5, 1.25)).split()[-1] == "-"
    # Every row lines up under the header.
    assert len(table.row("ours", current, baseline)) == len(table.header())


needs_gnu_time = pytest.mark.skipif(benchlib.GNU_TIME is None, reason="GNU time (/usr/bin/time) is not installed")


@needs_gnu_time
def test_peak_rss_is_the_measured_process_alone_not_the_larger_parent() -> None:
    ballast = bytearray(200 * 1024 * 1024)  # this process grows by 200 MiB; a child forked now must not count it
    ballast[::4096] = b"x" * len(ballast[::4096])
    small = benchlib.run_once([sys.executable, "-c", "pass"])
    large = benchlib.run_once([sys.executable, "-c", "b = bytearray(120 * 1024 * 1024); b[::4096] = b'x' * len(b[::4096])"])
    del ballast
    assert small.peak_rss_kib is not None and large.peak_rss_kib is not None
    assert small.peak_rss_kib < 60 * 1024
    assert 120 * 1024 <= large.peak_rss_kib < 200 * 1024
    assert large.cpu_s > 0 and large.wall_s >= large.cpu_s * 0.5


def test_an_unexpected_exit_stops_the_benchmark_with_the_commands_stderr() -> None:
    cmd = [sys.executable, "-c", "import sys; sys.stderr.write('x' * 200000 + 'the end'); sys.exit(3)"]
    with pytest.raises(SystemExit, match=r"exited 3: x+the end$"):
        benchlib.run_once(cmd)
    # Exit 1 (findings reported) is a normal outcome unless the caller says otherwise.
    assert benchlib.run_once([sys.executable, "-c", "raise SystemExit(1)"]).wall_s > 0
    with pytest.raises(SystemExit, match="exited 1"):
        benchlib.run_once([sys.executable, "-c", "raise SystemExit(1)"], ok=(0,))


def test_measure_each_runs_every_command_the_same_number_of_times(tmp_path: Path) -> None:
    log = tmp_path / "log"
    cmds = [[sys.executable, "-c", f"open({str(log)!r}, 'a').write('{name}')"] for name in "ab"]
    measured = benchlib.measure_each(cmds, 3, warmup=True)
    assert [m.runs for m in measured] == [3, 3]
    assert log.read_text() == "ab" * 4  # the warm-up round, then three rounds alternating


def test_extract_writes_the_paths_present_at_a_revision(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    benchlib.git(repo, "init", "-q")
    (repo / "ci_tools").mkdir()
    (repo / "ci_tools" / "a.py").write_text("old\n")
    benchlib.git(repo, "add", "-A")
    benchlib.git(repo, "commit", "-q", "-m", "one")
    first = benchlib.git(repo, "rev-parse", "HEAD")
    (repo / "ci_tools" / "a.py").write_text("new\n")
    benchlib.git(repo, "commit", "-q", "-am", "two")
    dest = tmp_path / "out"
    benchlib.extract(repo, first, dest, ("ci_tools", "schemas"))  # no schemas/ at that revision: left out
    assert [p.relative_to(dest).as_posix() for p in sorted(dest.rglob("*"))] == ["ci_tools", "ci_tools/a.py"]
    assert (dest / "ci_tools" / "a.py").read_text() == "old\n"
    assert benchlib.file_at(repo, first, "ci_tools/a.py") == "old\n"
    assert benchlib.file_at(repo, first, "missing.txt") is None


def test_git_failure_names_the_command_and_what_git_said(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match=r"git rev-parse nope in .* failed: .*(not a git repository|nope)"):
        benchlib.git(tmp_path, "rev-parse", "nope")


def test_bench_arguments_share_the_options_and_their_defaults() -> None:
    parser = benchlib.bench_arguments("Benchmark: something.\n\nMore.", runs=7, ci_tools=True, baseline_rev="abc")
    args = parser.parse_args([])
    assert (args.runs, args.ci_tools, args.baseline_rev, args.no_baseline) == (7, benchlib.CI_TOOLS, "abc", False)
    assert parser.description == "Benchmark: something."
    assert parser.parse_args(["--runs", "1", "--no-baseline"]).no_baseline is True
    bare = benchlib.bench_arguments(None).parse_args([])
    assert not hasattr(bare, "runs") and not hasattr(bare, "baseline_rev")


def test_ci_tools_at_runs_the_code_of_that_revision(tmp_path: Path) -> None:
    head = benchlib.git(benchlib.ROOT, "rev-parse", "HEAD")
    build = benchlib.ci_tools_at(head, tmp_path / "build")
    probe = [*build.command[:-2], "-c", "import ci_tools; print(ci_tools.__file__)"]
    found = subprocess.run(probe, capture_output=True, text=True, check=True, cwd=benchlib.ROOT).stdout.strip()
    assert found == str(tmp_path / "build" / "ci_tools" / "__init__.py")
    assert build.label == f"ci-tools@{head[:12]}"


def test_recipe_outputs_compared_without_the_jobs_a_change_evaluates_differently_on_purpose() -> None:
    import json

    import bench_recipes

    def shown(llmd: str, other: str) -> tuple[bytes, bytes]:
        docs = [{"job": {"config-key": "dsv4-fp4-gb200-llmd-vllm"}, "servers": [llmd]},
                {"job": {"config-key": "dsr1-fp8-mi355x-sglang"}, "servers": [other]}]
        text = f"dsv4-fp4-gb200-llmd-vllm fixed-seq-len\n  {llmd}\n\ndsr1-fp8-mi355x-sglang fixed-seq-len\n  {other}\n"
        return json.dumps(docs).encode(), text.encode()

    changed = ("dsv4-*-llmd-vllm",)
    for fmt, index in (("json", 0), ("text", 1)):
        before, after = shown("not reached", "a")[index], shown("prefill server", "a")[index]
        assert bench_recipes._digest(before, fmt, changed) == bench_recipes._digest(after, fmt, changed)
        assert bench_recipes._digest(before, fmt) != bench_recipes._digest(after, fmt)
        other = shown("not reached", "b")[index]  # another job differs: still caught
        assert bench_recipes._digest(before, fmt, changed) != bench_recipes._digest(other, fmt, changed)


def test_a_precision_of_few_findings_is_given_with_its_wilson_interval() -> None:
    import bench_claims_history  # noqa: E402 - bench/ is on the path above

    # reference values of the Wilson score interval at 95 % (z = 1.96)
    low, high = bench_claims_history.wilson(17, 28)
    assert (round(low, 3), round(high, 3)) == (0.424, 0.764)
    assert bench_claims_history.wilson(10, 10)[1] == 1.0 and round(bench_claims_history.wilson(10, 10)[0], 3) == 0.722
    assert bench_claims_history.wilson(0, 5)[0] == 0.0


def test_a_finding_about_sequence_lengths_alone_has_a_key_to_match_its_record_by() -> None:
    import bench_claims_history  # noqa: E402 - bench/ is on the path above
    import bench_claims_judged  # noqa: E402

    def keys(subject: str) -> set[str]:
        return bench_claims_judged.finding_keys({"data": {"subject": subject}})

    assert keys("isl/osl") == {"seq"}  # "no 8k/1k job runs": its record is found by it
    assert keys("concurrency/isl/osl") == {"conc"} and keys("tp/ep/isl/osl") == {"tp", "ep"}
    record = bench_claims_history.Record("tuning", {"commit": "504048f136a1e17b", "line": 2029, "subject": "isl/osl",
                                                    "claimed": "no 8k/1k"})
    finding = {"line": 2029, "data": {"commit": "504048f136a1e17b", "subject": "isl/osl", "claimed": "no 8k/1k"}}
    assert bench_claims_history.match(finding, [record]) is record
