"""Frontier figures: what each shows (data, not pixels), the same bytes twice, commit-pinned links, the CLI."""

from __future__ import annotations

import random
import subprocess
from pathlib import Path

from click.testing import CliRunner

from ci_tools.cli.main import cli
from ci_tools.jobs.job import Job
from ci_tools.results import pareto, plots
from ci_tools.results.pareto import FrontierPoint
from tests import results_support as support

G1 = ("dsr1-fp4-mi355x-sglang", "fixed-seq-len", 8192, 1024)
G2 = ("dsr1-fp4-mi355x-atom", "fixed-seq-len", 8192, 1024)
G3 = ("dsr1-fp4-mi355x-sglang", "fixed-seq-len", 1024, 1024)


def _cmp(group: tuple[str, str, int, int], scale: float) -> pareto.FrontierComparison:
    pts = [FrontierPoint(100 / (1 + i), 200 * (1 + i), 2 ** i, "tp8") for i in range(5)]
    pts.append(FrontierPoint(20, 100, 64, "tp4"))  # dominated: drawn as a point, not on the frontier
    pr = [FrontierPoint(p.x, p.y * scale, p.concurrency, p.parallelism) for p in pts]
    return pareto.compare(group, pts, pr)


def test_one_figure_per_model_hardware_and_sequence() -> None:
    figs = plots.figures([_cmp(G1, 0.9), _cmp(G2, 1.0), _cmp(G3, 1.1)])
    assert [(f.title, f.filename, f.groups) for f in figs] == [
        ("dsr1 on mi355x, 1024/1024", "dsr1_mi355x_1024x1024.png", (G3,)),
        ("dsr1 on mi355x, 8192/1024", "dsr1_mi355x_8192x1024.png", (G2, G1))]
    series = {s.label: s for s in figs[1].series}
    assert set(series) == {"dsr1-fp4-mi355x-atom (base)", "dsr1-fp4-mi355x-atom (PR)",
                           "dsr1-fp4-mi355x-sglang (base)", "dsr1-fp4-mi355x-sglang (PR)"}
    sglang_pr = series["dsr1-fp4-mi355x-sglang (PR)"]
    assert len(sglang_pr.points) == 6 and [p.concurrency for p in sglang_pr.frontier] == [16, 8, 4, 2, 1]
    assert sglang_pr.frontier[0].y == 200 * 5 * 0.9


def test_render_is_a_deterministic_png_and_links_pin_the_commit() -> None:
    fig = plots.figures([_cmp(G1, 0.9)])[0]
    first, second = plots.render(fig), plots.render(fig)
    assert first[:8] == b"\x89PNG\r\n\x1a\n" and first == second
    assert b"Software" not in first and b"Creation" not in first
    urls = plots.urls([fig], "c" * 40, repository="o/r", commit="d" * 40)
    assert urls == {G1: f"https://github.com/o/r/blob/{'d' * 40}/plots/{'c' * 40}/dsr1_mi355x_8192x1024.png?raw=true"}


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


def test_plot_and_comment_commands_with_the_store(tmp_path: Path, full_corpus_jobs: list[Job]) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@x", "commit", "-q", "--allow-empty", "-m", "main")
    main_sha = _git(repo, "rev-parse", "HEAD").strip()
    jobs = [j for j in full_corpus_jobs if j.config_key == "dsr1-fp4-mi355x-sglang"]
    rng = random.Random(5)
    for day in (1, 2, 3):
        d = tmp_path / f"main{day}"
        support.write(d, support.records(jobs, sha=main_sha, date=f"2026-08-0{day}T00:00:00+00:00", rng=rng))
        result = CliRunner().invoke(cli, ["results", "store", "append", str(d), "--repo", str(repo), "--sweep",
                                          f"run-{day}", "--sha", main_sha, "--default-ref", "main"])
        assert result.exit_code == 0, result.output
    refused = CliRunner().invoke(cli, ["results", "store", "append", str(tmp_path / "main1"), "--repo", str(repo),
                                       "--sweep", "x", "--sha", "e" * 40, "--default-ref", "main"])
    assert refused.exit_code == 2 and "not on the default branch" in refused.output
    lines = CliRunner().invoke(cli, ["results", "store", "read", "--repo", str(repo)]).output.splitlines()
    assert len(lines) == 3 * sum(len(j.concs) for j in jobs)

    pr_sha = "f" * 40
    support.write(tmp_path / "pr", support.records(jobs, sha=pr_sha, date="2026-08-05T00:00:00+00:00", rng=rng))
    plotted = CliRunner().invoke(cli, ["results", "plot", "--records", str(tmp_path / "pr"), "--repo", str(repo),
                                       "--store-ref", "refs/heads/ci-tools-results", "--out", str(tmp_path / "png"),
                                       "--commit-to-store"])
    assert plotted.exit_code == 0, plotted.output
    commit = plotted.stdout.strip()
    names = sorted(p.name for p in (tmp_path / "png").iterdir())
    assert names == sorted({f"dsr1_mi355x_{j.get('isl')}x{j.get('osl')}.png" for j in jobs}) != []
    assert _git(repo, "ls-tree", "--name-only", f"{commit}:plots/{pr_sha}").split() == names

    out = tmp_path / "comment.md"
    result = CliRunner().invoke(cli, ["results", "comment", "--records", str(tmp_path / "pr"), "--key", "comment-9",
                                      "--repo", str(repo), "--store-ref", "refs/heads/ci-tools-results",
                                      "--repository", "o/r", "--plots-commit", commit, "--output", str(out),
                                      "--json-output", str(tmp_path / "c.json"), "--jobs-total", "20"])
    assert result.exit_code == 0, result.output
    body = out.read_text()
    assert body.startswith("<!-- ci-tools-results:comment-9 -->")
    assert f"results store ci-tools-results at {commit[:12]}, 3 sweeps, last 2026-08-03 on mi355x-amds\\_03" in body, (commit, body[:700])
    assert f"commit `{main_sha[:12]}`" in body and "3 sweeps" in body
    assert f"(https://github.com/o/r/blob/{commit}/plots/{pr_sha}/dsr1_mi355x_8192x1024.png?raw=true)" in body
    assert f"Jobs reported: {len(jobs)} of 20" in body
