"""A sweep that ran the merge-base's recipes beside the pull request's: its own same-node baseline."""

from __future__ import annotations

import json
import random
import subprocess
from pathlib import Path

from click.testing import CliRunner

from ci_tools.cli.main import cli
from ci_tools.jobs.job import Job
from ci_tools.results.identity import identity
from ci_tools.results.point import key_of
from tests import results_support as support

BASE_SHA, PR_SHA = "b" * 40, "c" * 40


def test_the_merge_base_measured_in_the_sweep_is_the_baseline(tmp_path: Path, full_corpus_jobs: list[Job]) -> None:
    jobs = [j for j in full_corpus_jobs if j.config_key == "dsr1-fp4-mi355x-sglang"][:4]
    rng = random.Random(5)
    first = support.records(jobs[:1], sha=PR_SHA, date="x", rng=rng)[0]
    worse = key_of(first, identity(jobs[0]).concurrency[-1])
    points = sum(len(identity(j).concurrency) for j in jobs)
    # Interleaved as the run job runs them: each PR job, then the merge-base's job of the same points, twice over.
    # The last job's PR side ran on another node of the same runner label.
    for n, day in enumerate(("2026-08-01T01", "2026-08-01T02")):
        for i, job in enumerate(jobs):
            node = "mi355x-amds_07" if i == 3 else "mi355x-amds_03"
            support.write(tmp_path / "sweep" / f"pr{n}", support.records(
                [job], sha=PR_SHA, date=f"{day}:{i}0:00+00:00", rng=rng, node=node,
                changes={(worse, "throughput_per_gpu"): 0.85}))
            support.write(tmp_path / "sweep" / f"base{n}", support.records(
                [job], sha=BASE_SHA, date=f"{day}:{i}5:00+00:00", rng=rng))
    not_a_clone = tmp_path / "nothing"  # the results store is not read: it would refuse this --repo
    not_a_clone.mkdir()
    result = CliRunner().invoke(cli, [
        "results", "comment", "--records", str(tmp_path / "sweep"), "--key", "comment-3", "--sha", PR_SHA,
        "--baseline-sha", BASE_SHA, "--repo", str(not_a_clone), "--json-output", str(tmp_path / "c.json")])
    assert result.exit_code == 1, result.output  # a confirmed regression
    last_job = len(identity(jobs[3]).concurrency)
    assert (f"**Baseline:** same-node baseline: the merge-base's recipes, run in this sweep interleaved with the "
            f"pull request's; {points - last_job} of {points} points measured on the same node on both sides, "
            f"commit `{BASE_SHA[:12]}`, ") in result.stdout
    data = json.loads((tmp_path / "c.json").read_text())
    labels = {p["point"]: p["label"] for p in data["points"]}
    assert len(labels) == points
    assert {p for p, label in labels.items() if label != "no change"} == {worse.text()}
    assert labels[worse.text()] == "regression"


def test_a_baseline_commit_must_be_a_full_commit_id(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["results", "comment", "--records", str(tmp_path), "--key", "k",
                                      "--baseline-sha", "HEAD~1"])
    assert result.exit_code == 2
    assert "--baseline-sha" in result.output and "expected a full commit id (40 lowercase hex digits), found 'HEAD~1'" \
        in result.output


def test_the_plots_of_a_same_node_sweep_are_the_pull_requests(tmp_path: Path, full_corpus_jobs: list[Job]) -> None:
    """The merge-base's records are newer here (each ran after its partner): without --baseline-sha the figures
    would be filed under the merge-base's commit, drawn with the merge-base as the pull request's side."""
    jobs = [j for j in full_corpus_jobs if j.config_key == "dsr1-fp4-mi355x-sglang"][:2]
    rng = random.Random(8)
    support.write(tmp_path / "sweep" / "pr", support.records(jobs, sha=PR_SHA, date="2026-08-01T01:00:00+00:00",
                                                             rng=rng))
    support.write(tmp_path / "sweep" / "base", support.records(jobs, sha=BASE_SHA, date="2026-08-01T02:00:00+00:00",
                                                               rng=rng))
    store = tmp_path / "store"
    subprocess.run(["git", "init", "-q", str(store)], check=True, timeout=30)
    result = CliRunner().invoke(cli, ["results", "plot", "--records", str(tmp_path / "sweep"), "--repo", str(store),
                                      "--commit-to-store", "--baseline-sha", BASE_SHA])
    assert result.exit_code == 0, result.output
    commit = result.stdout.strip()
    listed = subprocess.run(["git", "-C", str(store), "ls-tree", "--name-only", f"{commit}:plots"], check=True,
                            capture_output=True, text=True).stdout.split()
    assert listed == [PR_SHA]
