"""Job selection (globs, scenario, concurrency, tp/ep, appended changelog entries) and sharding."""

from __future__ import annotations

import json

import pytest

from ci_tools.changelog.scopes import appended_scopes
from ci_tools.errors import UsageError
from ci_tools.jobs.job import AGENTIC, FIXED, Job
from ci_tools.model.keys import match_key_glob
from ci_tools.jobs.selection import (
    ChangelogScope,
    Selection,
    match_selection_glob,
    scope_of_entry,
    select,
    unmatched_globs,
)
from ci_tools.jobs.shard import MAX_SHARD_BYTES, ShardError, index_of, shard_entries


@pytest.fixture(scope="module")
def jobs(full_corpus_jobs: list[Job]) -> list[Job]:
    """InferenceX's full sweep at 843c625 (shared with the other tests of the session)."""
    return full_corpus_jobs


def keys(jobs: list[Job]) -> list[str]:
    return list(dict.fromkeys(j.config_key for j in jobs))


def test_no_filter_keeps_everything_in_order(jobs: list[Job]) -> None:
    assert select(jobs, Selection()) == jobs


def test_key_globs_are_a_union_in_file_order(jobs: list[Job]) -> None:
    picked = select(jobs, Selection(key_globs=("kimik3-*-mi355x-*", "dsr1-fp4-mi355x-sglang", "kimik3-fp4-b200-*")))
    assert keys(picked) == ["dsr1-fp4-mi355x-sglang", "kimik3-fp4-mi355x-vllm-agentic-mtp",
                            "kimik3-fp4-mi355x-atom-agentic-mtp", "kimik3-fp4-b200-dynamo-vllm-agentic",
                            "kimik3-fp4-b200-dynamo-vllm-agentic-dspark"]


def test_key_globs_are_what_inferencex_test_config_accepts(jobs: list[Job]) -> None:
    # `?` and `[...]` are fnmatch patterns once the pattern holds `*` or `?`, as --config-keys takes them.
    picked = select(jobs, Selection(key_globs=("dsr1-fp[48]-mi3?5x-sglang",)))
    assert keys(picked) == ["dsr1-fp4-mi355x-sglang", "dsr1-fp8-mi325x-sglang", "dsr1-fp8-mi355x-sglang"]
    # Without `*` or `?` a pattern names one key exactly (test-config reports it as not found).
    assert select(jobs, Selection(key_globs=("dsr1-fp[48]-mi355x-sglang",))) == []
    assert match_selection_glob("dsr1-*", "dsr1-fp4-mi355x-sglang")
    assert not match_selection_glob("DSR1-*", "dsr1-fp4-mi355x-sglang")  # case matters
    # Changelog config-keys keep their own rule: `*` is the only wildcard there.
    assert not match_key_glob("dsr1-fp?-mi355x-sglang", "dsr1-fp4-mi355x-sglang")


def test_scenario_filter(jobs: list[Job]) -> None:
    agentic = select(jobs, Selection(scenarios=(AGENTIC,)))
    assert agentic and all(j.scenario == AGENTIC for j in agentic)
    assert len(agentic) + len(select(jobs, Selection(scenarios=(FIXED,)))) == len(jobs)


def test_conc_filter_single_node_and_narrowing_multinode(jobs: list[Job]) -> None:
    single = select(jobs, Selection(key_globs=("dsr1-fp4-mi355x-sglang",), concs=(8, 64)))
    assert [(j.get("tp"), j.conc) for j in single] == [(4, 8), (4, 64), (8, 8), (8, 64)]
    multi = select(jobs, Selection(key_globs=("dsr1-fp8-mi355x-sglang-disagg",), concs=(4, 2048)))
    assert [j.get("conc") for j in multi] == [[2048], [4], [4]]
    full = {j.label(): j.id for j in jobs if j.config_key == "dsr1-fp8-mi355x-sglang-disagg"}
    assert not set(full.values()) & {j.id for j in multi}  # a narrowed job runs fewer points: a new id


def test_evals_are_marked_again_over_what_a_filter_keeps(jobs: list[Job]) -> None:
    """As the generator marks them over what it generates (test-config with --conc)."""
    full = [(j.get("tp"), j.conc) for j in jobs if j.config_key == "dsr1-fp4-mi355x-sglang" and j.get("run-eval")]
    assert full == [(4, 32), (4, 64), (8, 32), (8, 64)]
    # Of 8, 16, 32 the eligible (>= 16) are 16 and 32: 32 is both the highest and the median.
    kept = select(jobs, Selection(key_globs=("dsr1-fp4-mi355x-sglang",), concs=(8, 16, 32)))
    assert [(j.get("tp"), j.conc, j.get("run-eval")) for j in kept] == [
        (4, 8, False), (4, 16, False), (4, 32, True), (8, 8, False), (8, 16, False), (8, 32, True)]
    # A multinode job narrowed below the eligible concurrencies no longer runs evals, nor names an eval-conc.
    multi = select(jobs, Selection(key_globs=("dsr1-fp8-mi355x-sglang-disagg",), concs=(4, 2048)))
    assert [(j.get("run-eval"), j.get("eval-conc")) for j in multi] == [(True, 2048), (False, None), (False, None)]
    assert all("eval-conc" not in j.fields for j in multi[1:])
    # Ids do not depend on the marks.
    ids = {j.id for j in jobs}
    assert all(j.id in ids for j in kept)


def test_tp_and_ep_filters(jobs: list[Job]) -> None:
    tep = select(jobs, Selection(key_globs=("qwen3.5-fp8-mi325x-sglang-agentic-mtp",), tps=(4,), eps=(4,)))
    assert {(j.get("tp"), j.get("ep")) for j in tep} == {(4, 4)}
    # multinode: either role matches (decode ep 8 in the DEP row)
    dep = select(jobs, Selection(key_globs=("dsv4-fp4-mi355x-sglang-disagg-agentic-hicache-mtp",), eps=(8,)))
    assert [j.get("conc") for j in dep] == [[64], [96], [128], [192]]


def test_changelog_scopes_select_keys_and_scenarios(jobs: list[Job]) -> None:
    scopes = (ChangelogScope(("kimik3-*",), ("fixed-seq-len",)), ChangelogScope(("dsr1-fp4-mi355x-sglang",)))
    assert keys(select(jobs, Selection(changelog=scopes))) == ["dsr1-fp4-mi355x-sglang"]
    # Changelog globs are `*`-only: `?` is a literal character there.
    assert select(jobs, Selection(changelog=(ChangelogScope(("dsr1-fp?-mi355x-sglang",)),))) == []
    scopes = (ChangelogScope(("*-agentic-mtp",), ("agentic-coding",)),)
    assert all(j.scenario == AGENTIC for j in select(jobs, Selection(changelog=scopes)))
    assert select(jobs, Selection(changelog=())) == []  # a PR that appends nothing runs nothing


def test_scope_of_entry_shapes() -> None:
    assert scope_of_entry({"config-keys": ["a", "b*"], "scenario-type": ["agentic-coding"]}, 7) == \
        ChangelogScope(("a", "b*"), ("agentic-coding",), 7)
    assert scope_of_entry({"config-keys": "a"}) == ChangelogScope(("a",))
    assert scope_of_entry({"config-keys": []}) is None
    assert scope_of_entry({"description": ["x"]}) is None
    assert scope_of_entry(["config-keys"]) is None


ENTRY = "- config-keys:\n  - {key}\n  description:\n  - x\n  pr-link: https://github.com/o/r/pull/{n}\n"


def test_appended_scopes_take_head_entries_beyond_base_count() -> None:
    base = ENTRY.format(key="a", n=1).encode()
    head = base + b"\n" + ENTRY.format(key="b-*", n=2).encode() + b"  scenario-type:\n  - fixed-seq-len\n"
    assert appended_scopes(base, head, "perf-changelog.yaml") == (ChangelogScope(("b-*",), ("fixed-seq-len",), 7),)
    assert appended_scopes(base, base, "perf-changelog.yaml") == ()
    assert appended_scopes(None, base, "perf-changelog.yaml") == (ChangelogScope(("a",), (), 1),)
    assert appended_scopes(base, None, "perf-changelog.yaml") == ()


def test_appended_scopes_report_a_broken_changelog_with_its_line() -> None:
    with pytest.raises(UsageError) as err:
        appended_scopes(b"- a\n", b"- a\n- [unclosed\n", "perf-changelog.yaml", head_label="work tree")
    assert (err.value.path, err.value.line) == ("perf-changelog.yaml", 3)
    assert str(err.value) == ("perf-changelog.yaml:3: the changelog at work tree cannot be read, so the entries it "
                              "appends are unknown: invalid YAML: did not find expected ',' or ']' "
                              "(while parsing a flow sequence)")
    with pytest.raises(UsageError, match="the changelog is a mapping, not a YAML list of entries"):
        appended_scopes(None, b"a: 1\n", "perf-changelog.yaml")


def test_appended_scopes_ignore_pr_link_corrections_and_read_only_the_new_entries() -> None:
    base = ENTRY.format(key="a", n=1).encode()
    edited = base.replace(b"pull/1", b"pull/11")
    assert appended_scopes(base, edited, "perf-changelog.yaml") == ()
    head = edited + b"\n" + ENTRY.format(key="c", n=3).encode()
    assert appended_scopes(base, head, "perf-changelog.yaml") == (ChangelogScope(("c",), (), 7),)


def test_appended_scopes_include_an_entry_inserted_mid_file() -> None:
    first, last = ENTRY.format(key="a", n=1).encode(), ENTRY.format(key="b", n=2).encode()
    head = first + b"\n" + ENTRY.format(key="c", n=3).encode() + b"\n" + last
    assert appended_scopes(first + b"\n" + last, head, "perf-changelog.yaml") == (ChangelogScope(("c",), (), 7),)


def test_unmatched_globs() -> None:
    assert unmatched_globs(["a*", "zz", "zz", "b", "a?c"], ["abc", "b"]) == ["zz"]
    assert unmatched_globs(["a?c"], ["abc"], match_key_glob) == ["a?c"]


def test_selection_to_json() -> None:
    sel = Selection(key_globs=("a*",), concs=(4,), changelog=(ChangelogScope(("x",), (), 3),))
    assert sel.to_json() == {"key-globs": ["a*"], "concs": [4],
                             "changelog-entries": [{"config-keys": ["x"], "scenario-type": [], "line": 3}]}


# -- sharding --------------------------------------------------------------------------------


def entries(n: int, pad: int = 0) -> list[dict[str, object]]:
    return [{"id": f"{i:016x}", "pad": "x" * pad} for i in range(n)]


def test_shards_respect_the_job_limit_and_are_balanced() -> None:
    shards = shard_entries(entries(600))
    assert [len(s.entries) for s in shards] == [200, 200, 200]
    assert [s.ids[0] for s in shards] == [f"{0:016x}", f"{200:016x}", f"{400:016x}"]
    assert [len(s.entries) for s in shard_entries(entries(256))] == [256]
    assert [len(s.entries) for s in shard_entries(entries(257))] == [129, 128]
    assert [len(s.entries) for s in shard_entries(entries(10), max_jobs=4)] == [4, 3, 3]


def test_shards_respect_the_byte_limit() -> None:
    shards = shard_entries(entries(10, pad=100), max_bytes=500)
    assert all(s.size <= 500 for s in shards)
    assert sum(len(s.entries) for s in shards) == 10 and len(shards) == 4
    for s in shards:
        assert json.loads(s.text) == {"include": list(s.entries)}
        assert s.size == len(s.text.encode())


def test_a_real_size_sweep_splits_under_one_megabyte() -> None:
    big = entries(1000, pad=1500)  # ~1.5 MB of JSON in 1000 jobs
    shards = shard_entries(big)
    assert len(shards) == 4 and all(s.size < MAX_SHARD_BYTES and len(s.entries) <= 256 for s in shards)


def test_sharding_is_deterministic_and_indexed() -> None:
    a, b = shard_entries(entries(300)), shard_entries(entries(300))
    assert [s.text for s in a] == [s.text for s in b]
    index = index_of(a, 256)
    assert index == index_of(b, 256)
    assert (index["total-jobs"], index["shard-count"]) == (300, 2)
    assert index["shards"][1]["file"] == "shard-001.json" and index["shards"][1]["jobs"] == 150


def test_sharding_edge_cases() -> None:
    assert shard_entries([]) == []
    with pytest.raises(ShardError, match="alone is"):
        shard_entries(entries(2, pad=600), max_bytes=500)
    with pytest.raises(ShardError, match="between 1 and 256"):
        shard_entries(entries(2), max_jobs=300)


def test_append_only_scopes_leave_out_the_points_the_base_generated(jobs: list[Job]) -> None:
    sglang = [j for j in jobs if j.config_key == "dsr1-fp4-mi355x-sglang"]
    base_ids = frozenset(j.id for j in sglang[:5])
    scope = ChangelogScope(("dsr1-fp4-mi355x-sglang",), append_only=True)
    picked = select(jobs, Selection(changelog=(scope,), base_ids=base_ids))
    assert picked == sglang[5:]
    # A plain entry for the same key runs every point.
    both = (scope, ChangelogScope(("dsr1-fp4-mi355x-sglang",)))
    assert select(jobs, Selection(changelog=both, base_ids=base_ids)) == sglang
    assert scope_of_entry({"config-keys": ["k"], "append-only": True}) == ChangelogScope(("k",), (), 0, True)
