"""A multinode recipe that loops over its own concurrencies runs them all from one job: a sentence about the
points it sweeps is judged against the loop, not against the config row's placeholder (claims/verdict/recipe_loops.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ci_tools.claims.verdict.recipe_loops import looped_concurrencies, loops_over_unread_concurrencies
from test_changelog_support import git
from test_claims_seed import run_claims
from test_claims_wordings import ENTRY

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


# As SemiAnalysisAI/InferenceX#2631's shared recipe writes it: the loop's points come from an override section the
# job's CONFIG_FILE selects (CONCURRENCY_LIST: "1024 2048"), which is not read.
LOOP_OVER_VARIABLE = """
benchmark_script: |
    for concurrency in ${CONCURRENCY_LIST}; do
      python3 bench.py --max-concurrency "${concurrency}"
    done
"""


def test_a_loop_over_concurrencies_given_elsewhere_leaves_the_claim_unverified(real_repo: Path) -> None:
    # Both recipes of the jobs the words "1P4D" select (the c4 row and the c388 one) sweep a list given elsewhere.
    for recipe in (RECIPE, RECIPE.replace("1p4d-dep4-tep8-c4-b1", "1p1d-dep8-dep32-c388-b4")):
        with (real_repo / recipe).open("a", encoding="utf-8") as fh:
            fh.write(LOOP_OVER_VARIABLE)
    git(real_repo, "commit", "-q", "-am", "the recipes sweep a list given elsewhere")
    with (real_repo / "perf-changelog.yaml").open("a", encoding="utf-8") as fh:
        fh.write(ENTRY.format(key=KEY, text="The 1P4D DEP4/TEP8 MTP c4 row runs concurrency 4, 8 and 16.", n=9304))
    git(real_repo, "commit", "-q", "-am", "entry")
    _, report = run_claims(real_repo, "--base", "HEAD~1", "--head", "HEAD", "-v")
    assert concurrency_findings(report) == []
    notes = [f["message"] for f in report["findings"] if "loop over concurrencies given elsewhere" in f["message"]]
    assert notes, [f["message"] for f in report["findings"]]


def test_a_loop_over_a_variable_is_told_from_other_loops() -> None:
    assert loops_over_unread_concurrencies("for concurrency in ${CONCURRENCY_LIST}; do")
    assert loops_over_unread_concurrencies("for conc in $CONCS; do")
    assert not loops_over_unread_concurrencies("for concurrency in 1 2 4; do")
    assert not loops_over_unread_concurrencies("for node in ${NODES}; do")
