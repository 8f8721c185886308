"""Every multinode job of the real tree: a server command line per role, or the reason there is none."""

from __future__ import annotations

from ci_tools.multinode.locate import EXTERNAL, locate_recipe
from ci_tools.contract import job_env
from multinode_corpus import corpus, evaluations


def test_at_least_90_percent_of_jobs_with_in_repository_recipes_reach_flagged_server_lines() -> None:
    c = corpus()
    results = evaluations()
    assert len(results) == 648
    in_repo = [(j, r) for j, r in results
               if locate_recipe(j, job_env(j), c.config, c.snapshot).kind != EXTERNAL]
    reached = [(j, r) for j, r in in_repo if r.servers and all(len(flags) > 3 for flags in r.servers)]
    assert len(in_repo) == 440  # 387 srt-slurm, 48 AMD, 3 llm-d, 2 TileRT
    assert len(reached) / len(in_repo) >= 0.9, [r.errors[:1] for j, r in in_repo if (j, r) not in reached][:5]
    for job, result in reached:
        assert result.roles and all(result.roles), job.label()
        assert len(result.server_env) == len(result.servers)
        assert set(result.roles) <= {"prefill", "decode", "aggregated"}
        if job.get("decode", {}).get("num-worker", 0) > 0 and job.get("prefill", {}).get("num-worker", 0) > 0:
            assert "prefill" in result.roles, job.label()


def test_every_job_without_a_server_line_says_why() -> None:
    for job, result in evaluations():
        if not result.servers:
            assert result.errors and result.errors[0].strip(), job.label()
    reasons = [r.errors[0] for _, r in evaluations() if not r.servers]
    assert sum("external recipe" in e for e in reasons) == 208
    assert sum(e == "llm-d recipes are not evaluated" for e in reasons) == 3
