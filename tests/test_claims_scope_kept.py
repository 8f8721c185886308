"""A claim is judged on the jobs its words are about.

Each case against the real tree's dsr1-fp4-b200-sglang (TP4 at concurrency 1-32; TP4/EP4 with DP attention at
64-256; its recipe, benchmarks/single_node/fixed_seq_len/dsr1_fp4_b200.sh, passes --schedule-conservativeness
3.33 with --enable-prefill-delayer only with DP attention): a sentence of a shape real changelogs write that holds
stays silent, and its lie is still reported.

- a flag the recipe passes under its own condition, which the sentence names ("... allowing DP to batch more
  requests"): not missing from the jobs the condition leaves out.
"""

from __future__ import annotations

from typing import Any

import pytest

from ci_tools.claims.text.sentences import plain_source
from ci_tools.claims.verdict.check import EntryInput, EvalCache, check_entries
from ci_tools.findings import Finding, Location
from paraphrase.drive import Tree, load_tree

from conftest import full_corpus_dir

KEY = "dsr1-fp4-b200-sglang"


@pytest.fixture(scope="module")
def tree() -> Tree:
    return load_tree(full_corpus_dir())


def findings(tree: Tree, *bullets: str) -> list[tuple[str, Any, Any]]:
    """(rule, subject, claimed) of each claim finding of one entry of ``bullets`` for KEY on the real tree."""
    entry = EntryInput([KEY], (), [plain_source(f"entry{i}.md", b) for i, b in enumerate(bullets)],
                       Location("entry0.md", 1, 1))
    report = check_entries(tree.config, tree.repo, tree.snapshot, [entry], cache=EvalCache(tree.config))
    found: list[Finding] = [f for f in report.findings if f.rule.startswith("claim-") and f.rule != "claim-not-checked"]
    return [(f.rule, f.data.get("subject"), f.data.get("claimed")) for f in found]


def test_a_flag_passed_under_the_recipes_own_condition_is_not_missing_where_the_condition_fails(tree: Tree) -> None:
    # c49aff102280: "Set --prefill-delayer-max-delay-ms 5000 to define a concrete prefill delay, allowing DP to
    # batch more requests together per execution" (the recipe passes it where DP attention is on)
    assert findings(tree, "Set --schedule-conservativeness 3.33 so DP can batch more requests.") == []
    # A sentence that names no such condition speaks of every job: the jobs without the flag contradict it.
    assert findings(tree, "Set --schedule-conservativeness 3.33.") == [
        ("claim-partly-contradicted", "--schedule-conservativeness", "3.33")]
    assert findings(tree, "Set --schedule-conservativeness 4 so DP can batch more requests.") == [
        ("claim-contradicted", "--schedule-conservativeness", "4")]
