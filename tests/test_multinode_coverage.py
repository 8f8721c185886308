"""Every multinode job of the real tree: a server command line per role, or the reason there is none."""

from __future__ import annotations

from collections import Counter

from ci_tools.jobs.contract import resolve_recipe
from ci_tools.shell.model import MISSING
from multinode_corpus import corpus, evaluations


def test_at_least_90_percent_of_jobs_with_in_repository_recipes_reach_flagged_server_lines() -> None:
    c = corpus()
    results = evaluations()
    assert len(results) == 648
    in_repo = [(j, r) for j, r in results if r.kind not in ("external", MISSING)]
    reached = [(j, r) for j, r in in_repo if r.servers and all(len(flags) > 3 for flags in r.servers)]
    # 387 srt-slurm, 48 AMD scripts, 3 llm-d wrapper scripts, 2 TileRT scripts
    assert Counter(r.kind for _, r in in_repo) == {"srt-slurm": 387, "script": 53}
    assert len(reached) / len(in_repo) >= 0.9, [r.errors[:1] for j, r in in_repo if (j, r) not in reached][:5]
    # A server line for every in-repository recipe.
    assert sum(1 for _, r in in_repo if r.servers) == 440, [r.errors[:1] for _, r in in_repo if not r.servers]
    for job, result in reached:
        assert result.roles and all(result.roles), job.label()
        assert len(result.server_env) == len(result.servers)
        assert set(result.roles) <= {"prefill", "decode", "aggregated"}
        if job.get("decode", {}).get("num-worker", 0) > 0 and job.get("prefill", {}).get("num-worker", 0) > 0:
            assert "prefill" in result.roles, job.label()
    # What the evaluation ran is what the launchers pick (one resolution for every job).
    for job, result in results:
        resolution = resolve_recipe(job, c.config, c.snapshot)
        kind = MISSING if resolution.missing else resolution.kind
        assert result.kind == kind, job.label()
        assert result.recipe.startswith(resolution.path or resolution.reference or "?"), job.label()


def test_every_job_without_a_server_line_says_why() -> None:
    for job, result in evaluations():
        if not result.servers:
            assert result.errors and result.errors[0].strip(), job.label()
    unreached = [r for _, r in evaluations() if not r.servers]
    external = [r.errors[0] for r in unreached if r.kind == "external"]
    assert len(external) == 205
    assert all(e.startswith("external srt-slurm recipe recipes/") and e.endswith("from the srt-slurm checkout; not evaluated")
               for e in external), external[0]
    # Three recipes of dsv4-fp4-gb300-dynamo-vllm-agentic were deleted from a directory the repository holds.
    missing = [r.errors[0] for r in unreached if r.kind == MISSING]
    assert len(missing) == 3 and all("does not exist, while the repository holds" in e for e in missing)
    # The llm-d and TileRT scripts are followed to their servers.
    assert not [r for r in unreached if r.kind == "script"]
    assert len(unreached) == 205 + 3


def test_tilert_is_followed_through_its_linked_launcher_and_pyxis_to_the_prefill_server() -> None:
    """launch_b200-dgxc-slurm.sh is a symbolic link to launch_b200-dgxc.sh; tilert_utils/submit.sh runs
    run_node.sh once per role with `srun --ntasks=1 --container-image ... --export=ALL,TILERT_ROLE=...`.
    The decode side starts `python -m tilert.pd_vllm.decode_server`, which is no server pattern."""
    tilert = [r for j, r in evaluations() if j.config_key == "glm5.1-fp8-b200-tilert"]
    assert len(tilert) == 2
    run_node = "benchmarks/multi_node/tilert_utils/run_node.sh"
    for result in tilert:
        assert result.roles == ["prefill"]
        flags = {f.name: f for f in result.servers[0]}
        assert flags["--kv-cache-dtype"].value is not None and flags["--kv-cache-dtype"].value.text == "fp8_ds_mla"
        assert flags["--tensor-parallel-size"].location.as_text() == f"{run_node}:161:9"
        assert flags["--speculative-config"].value is not None
        assert flags["--speculative-config"].value.text == '{"method":"mtp","num_speculative_tokens":1}'
        # a file of the image that the evaluation cannot read: said, so the job's environment is not complete
        assert result.errors == ["benchmarks/multi_node/tilert_utils/setup_deps.sh:22: cannot resolve "
                                 "`. /opt/conda/etc/profile.d/conda.sh`; what it defines is unknown"]


def test_stats_give_every_external_recipe_one_reason_with_its_configs() -> None:
    from ci_tools.evaluation.stats import EXTERNAL_RECIPE, NO_RECIPE, collect, job_coverage

    stats = collect(job_coverage(j, r) for j, r in evaluations())
    external = {r: keys for r, keys in stats.not_reached.items() if r.category == EXTERNAL_RECIPE}
    assert len(external) == 1  # one line in `recipe lint --stats`, not one per file
    [(reason, keys)] = external.items()
    assert len(keys) == 205 and "dsr1-fp4-b200-dynamo-sglang" in keys and "dsr1-fp4-b200-dynamo-trt" in keys
    assert "not evaluated" in reason.text
    missing = [keys for r, keys in stats.not_reached.items() if r.category == NO_RECIPE]
    assert missing == [["dsv4-fp4-gb300-dynamo-vllm-agentic"] * 3]


def test_flags_most_often_unknown_are_ranked_the_same_on_every_run() -> None:
    from ci_tools.evaluation.stats import collect, job_coverage

    stats = collect(job_coverage(j, r) for j, r in evaluations())
    ranked = stats.ranked_unknown_flags()
    assert ranked and dict(ranked) == dict(stats.unknown_flags)
    # By count, then by name: a tie never depends on the order in which a set was iterated.
    assert ranked == sorted(ranked, key=lambda kv: (-kv[1], kv[0]))


def test_tied_unknown_flags_are_ordered_by_name_not_by_arrival() -> None:
    from collections import Counter

    from ci_tools.evaluation.stats import CoverageStats

    stats = CoverageStats(unknown_flags=Counter({"--zeta": 2, "--beta": 5, "--alpha": 2, "--mid": 2}))
    assert stats.ranked_unknown_flags() == [("--beta", 5), ("--alpha", 2), ("--mid", 2), ("--zeta", 2)]
