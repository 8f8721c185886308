"""A flag the recipe gives a program other than its server (ci_tools/claims/verdict/other_programs.py), on the real
tree.

dsv4_fp4_mi355x_vllm_mtp.sh (dsv4-fp4-mi355x-vllm-agentic-mtp) starts an LMCache server (``lmcache server ...
--eviction-policy LRU``) next to its vLLM server, whose command line has no such flag."""

from __future__ import annotations

import pytest

from ci_tools.claims.text.sentences import plain_source
from ci_tools.claims.verdict.check import EntryInput, EvalCache, check_entries
from ci_tools.findings import Location
from paraphrase.drive import Tree, load_tree

from conftest import full_corpus_dir

KEY = "dsv4-fp4-mi355x-vllm-agentic-mtp"
RECIPE = "benchmarks/single_node/agentic/dsv4_fp4_mi355x_vllm_mtp.sh"


@pytest.fixture(scope="module")
def tree() -> Tree:
    return load_tree(full_corpus_dir())


def said(tree: Tree, text: str) -> list[tuple[str, str]]:
    entry = EntryInput([KEY], (), [plain_source("entry.md", text)], Location("entry.md", 1, 1))
    report = check_entries(tree.config, tree.repo, tree.snapshot, [entry], cache=EvalCache(tree.config), verbose=True)
    return [(f.rule, f.message) for f in report.findings if f.rule.startswith("claim-") and f.rule != "claim-not-checked"]


def test_a_flag_of_the_recipe_s_lmcache_server_is_not_one_no_job_sets(tree: Tree) -> None:
    found = said(tree, "Run the LMCache server with --eviction-policy LRU.")
    assert [rule for rule, _ in found] == ["claim-unverified"]
    line = next(n for n, text in enumerate(tree.snapshot.read(RECIPE).decode().splitlines(), 1)  # type: ignore[union-attr]
                if "--eviction-policy" in text)
    assert f"the recipe writes it for another program or a branch no job takes ({RECIPE}:{line})" in found[0][1]


def test_a_flag_written_nowhere_is_still_one_no_job_sets(tree: Tree) -> None:
    assert [rule for rule, _ in said(tree, "Run the LMCache server with --l1-write-ttl-seconds 7200.")] == [
        "claim-setting-missing"]
