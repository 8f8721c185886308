"""The real-pull-requests bench of `check` (bench/bench_check_prs.py) picks every K-th head from a number on, by
number (not by the refs' text order, where 10 sorts before 9), heads only; it runs a baseline build beside this one
and names the findings only one of them gives."""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
import bench_check_prs  # noqa: E402
from test_bench_claims_prs import commit, git  # noqa: E402


def test_every_kth_head_from_a_number_on(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q", "-b", "main")
    sha = commit(tmp_path, "")
    for n in range(1, 31):
        git(tmp_path, "update-ref", f"refs/pull/{n}/head", sha)
    git(tmp_path, "update-ref", "refs/pull/12/merge", sha)  # a merge ref is no head
    assert [n for n, _ in bench_check_prs.heads(tmp_path, 5, 3, 4)] == [7, 10, 13, 16]
    assert [n for n, _ in bench_check_prs.heads(tmp_path, 25, 2, 10)] == [26, 28, 30]
    assert [n for n, _ in bench_check_prs.heads(tmp_path, 25, 2, 10, frozenset({3, 12, 9}))] == [3, 9, 12]
    assert bench_check_prs.pull_numbers("3, 12,9") == frozenset({3, 9, 12})
    with pytest.raises(argparse.ArgumentTypeError, match="found #12, x"):
        bench_check_prs.pull_numbers("3,#12,x")
    with pytest.raises(SystemExit, match=r"no head for pull request\(s\) 31, 40"):
        bench_check_prs.heads(tmp_path, 1, 1, 1, frozenset({3, 31, 40}))


def test_a_clone_without_heads_says_how_to_get_them(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q", "-b", "main")
    commit(tmp_path, "")
    with pytest.raises(SystemExit, match="fetch origin '\\+refs/pull/\\*/head:refs/pull/\\*/head'"):
        bench_check_prs.heads(tmp_path, 1, 1, 1)


def test_a_run_keeps_each_report_and_says_which_pull_requests_a_new_error_fails(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """On a throwaway history whose pull request 1 is the seed change (two false claims) over main."""
    import json

    from test_claims_history import history_repo

    repo, shas = history_repo(tmp_path)
    git(repo, "update-ref", "refs/pull/1/head", shas[2])
    # Pull request 2's head holds a blob the clone lacks (a mirror keeps some large files absent): said, skipped.
    (repo / "gpu_metrics.csv").write_text("gpu,util\n0,99\n", encoding="utf-8")
    git(repo, "add", "gpu_metrics.csv")
    git(repo, "commit", "-qm", "metrics")
    lost = git(repo, "rev-parse", "HEAD")
    blob = git(repo, "rev-parse", f"{lost}:gpu_metrics.csv")
    (repo / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    git(repo, "update-ref", "refs/pull/2/head", lost)
    git(repo, "checkout", "-q", "-f", shas[1])
    kept = tmp_path / "kept"
    monkeypatch.setattr(sys, "argv", ["bench_check_prs.py", "--ix", str(repo), "--main", shas[1], "--from", "1",
                                      "--every", "1", "--keep", str(kept), "--no-baseline"])
    assert bench_check_prs.main() == 0
    assert not (kept / "2.json").exists()
    report = json.loads((kept / "1.json").read_text(encoding="utf-8"))
    contradicted = [f for f in report["findings"] if f["rule"] == "claim-contradicted"]
    assert len(contradicted) == 2 and all(f["baseline"] == "new" for f in contradicted)
    out = capsys.readouterr().out
    assert "pull requests checked: 1 " in out and "failed by a new error: 1" in out
    assert re.search(r"skipped, their head not checked out: 1: #2 \(.*gpu_metrics\.csv", out)
    assert "ci-tools at" not in out  # --no-baseline: this build alone
    times = re.search(r"CPU per run ([\d.]+)-([\d.]+) s, median ([\d.]+) s", out)
    assert times is not None
    low, high, median = (float(x) for x in times.groups())
    assert 0 < low == median == high  # one run: its CPU time is each of them
    rules = next(line for line in out.splitlines() if line.startswith("    #1: ")).split(": ", 1)[1].split(", ")
    assert "claim-contradicted" in rules and "changelog-pr-link" in rules
    assert "claim-contradicted errors 2" in out
    # checked as pull request 1, as the PR job's event says: the fixture's entries link other pull requests
    links = [f["message"] for f in report["findings"] if f["rule"] == "changelog-pr-link"]
    assert links and all("not this PR (#1)" in m for m in links)


def test_a_baseline_runs_beside_this_build_on_each_head(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """The baseline is ci-tools at a committed revision of this repository (its HEAD: the same findings)."""
    from test_claims_history import history_repo

    repo, shas = history_repo(tmp_path)
    git(repo, "update-ref", "refs/pull/1/head", shas[2])
    monkeypatch.setattr(sys, "argv", ["bench_check_prs.py", "--ix", str(repo), "--main", shas[1], "--from", "1",
                                      "--every", "1", "--baseline-rev", "HEAD"])
    assert bench_check_prs.main() == 0
    out = capsys.readouterr().out
    summaries = [line for line in out.splitlines() if "heads against their merge bases" in line]
    assert [line.split(":")[0] for line in summaries] == ["this build", "ci-tools at HEAD"]
    assert out.count("claim-contradicted errors 2") == 2
    assert "pull requests whose new findings differ (- ci-tools at HEAD only, + this build only): 0" in out
    assert re.search(r"CPU in all: this build [\d.]+ s, ci-tools at HEAD [\d.]+ s \([\d.]+x\)", out)


def test_differences_name_the_findings_only_one_build_gives() -> None:
    kept = ("coverage", "error", "configs/a.yaml", 3, "2 configs are affected")
    ours = bench_check_prs.BuildRuns("this build", [], new={7: [kept], 9: [kept]})
    baseline = bench_check_prs.BuildRuns("baseline", [], new={
        7: [kept, ("coverage", "error", "configs/a.yaml", 9, "5 configs are affected")], 9: [kept]})
    assert bench_check_prs.differences([ours, baseline]) == [
        "  #7:", "    - coverage error configs/a.yaml:9: 5 configs are affected"]
    ours.new[9] = [kept, kept]  # one finding given twice is a difference too
    assert bench_check_prs.differences([ours, baseline])[-2:] == [
        "  #9:", "    + coverage error configs/a.yaml:3: 2 configs are affected"]
