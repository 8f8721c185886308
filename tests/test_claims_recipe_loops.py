"""A multinode recipe that loops over its own concurrencies runs them all from one job: a sentence about the
points it sweeps is judged against the loop, not against the config row's placeholder (claims/verdict/recipe_loops.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ci_tools.claims.verdict.recipe_loops import looped_concurrencies
from real_repo_support import real_origin, real_repo  # noqa: F401 - fixtures
from test_changelog_support import git
from test_claims_seed import run_claims

KEY = "dsv4-fp4-gb300-dynamo-trt-agentx"  # its first row: conc-list [4], this srt-slurm recipe
RECIPE = ("benchmarks/multi_node/srt-slurm-recipes/trtllm/deepseek-v4/agentx-gb300-20260811/"
          "dynamo-disagg-gb300-1p4d-dep4-tep8-c4-b1-mtp.yaml")
# As the recipes of SemiAnalysisAI/InferenceX#2627 write it: the benchmark script of the recipe sweeps itself.
LOOP = """
benchmark_script: |
    for concurrency in 4 8 16; do
      python3 bench.py --max-concurrency "${concurrency}"
    done
"""
ENTRY = """
- config-keys:
    - {key}
  description:
    - "{text}"
  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/{n}
"""


def concurrency_findings(report: dict[str, Any]) -> list[str]:
    return [f["message"] for f in report["findings"] if f["severity"] in ("error", "warning")
            and str(f["data"].get("subject", "")).startswith("concurrency")]


def check(repo: Path, text: str, n: int) -> list[str]:
    with (repo / "perf-changelog.yaml").open("a", encoding="utf-8") as fh:
        fh.write(ENTRY.format(key=KEY, text=text, n=n))
    git(repo, "commit", "-q", "-am", f"entry {n}")
    _, report = run_claims(repo, "--base", "HEAD~1", "--head", "HEAD")
    return concurrency_findings(report)


def test_the_points_a_recipe_s_own_loop_runs_are_the_job_s(real_repo: Path) -> None:
    with (real_repo / RECIPE).open("a", encoding="utf-8") as fh:
        fh.write(LOOP)
    git(real_repo, "commit", "-q", "-am", "the c4 recipe sweeps 4, 8 and 16 itself")
    # (The arm's reading also takes in the conc-388 row, which stays a warning of its own: "also 388".)
    [message] = check(real_repo, "The 1P4D row runs concurrency 4, 8 and 16.", 9301)
    assert "generates concurrency 4/8/16/388 (also 388)" in message  # 8 and 16 are run: none is missing
    [message] = check(real_repo, "The 1P4D row runs concurrency 4, 8, 16 and 32.", 9302)
    assert "(not 32; also 388)" in message


def test_without_the_loop_the_config_row_s_points_stand(real_repo: Path) -> None:
    [message] = check(real_repo, "The 1P4D row runs concurrency 4, 8 and 16.", 9303)
    assert "(not 8, 16; also 388)" in message


def test_only_one_loop_over_literal_concurrencies_names_them() -> None:
    assert looped_concurrencies("for concurrency in 1 2 4 8; do\n") == [1, 2, 4, 8]
    assert looped_concurrencies("for CONC in 256 512\ndo\n") == [256, 512]
    assert looped_concurrencies("for conc in 1 2; do x; done\nfor conc in 4 8; do y; done") is None
    assert looped_concurrencies("for conc in $CONCS; do") is None
    assert looped_concurrencies("for node in 1 2 3; do") is None
