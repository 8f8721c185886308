"""A layout's worker counts followed by two whole parallelisms ("1P4D DEP4/TEP8") name its prefill and its decode
workers, as the recipe files do (``1p4d-dep4-tep8``); a list of such layouts is one list (claims/text/arms.py
``_role_pair``).

On the real tree's kimik2.6-fp4-b200-dynamo-vllm: 1P1D prefill DEP8 (tp 1, ep 8, DP attention) and decode TP8 at
concurrency 1; 1P8D prefill DEP4 and decode TP4 at 32 and 128; 1P4D DEP4/TP4 at 512.
"""

from __future__ import annotations

import pytest

from ci_tools.claims.text.extract import extract
from ci_tools.claims.text.sentences import plain_source
from paraphrase.drive import Tree, load_tree
from test_claims_grammar import grammar_catalog
from test_claims_scope_kept import findings

from conftest import full_corpus_dir

KEY = ("kimik2.6-fp4-b200-dynamo-vllm",)


@pytest.fixture(scope="module")
def tree() -> Tree:
    return load_tree(full_corpus_dir())


def scopes(text: str) -> list[str]:
    return [c.scope.label() for c in extract(plain_source("e.md", text), grammar_catalog()).claims]


def test_two_layouts_joined_by_and_are_one_list_of_the_concurrencies() -> None:
    # PR 2302's sentence: the points belong to both layouts together
    assert scopes("Append low-latency c4/c12/c24 with 1P4D DEP4/TEP8 and 1P6D DEP4/TEP4 topologies.") == \
        ["1P4D DEP4/TEP8 or 1P6D DEP4/TEP4"]
    assert scopes("Run 1P4D DEP4/TEP8 and 1P6D DEP4/TEP4 at c4/c12/c24.") == ["1P4D DEP4/TEP8 or 1P6D DEP4/TEP4"]


def test_one_parallelism_told_in_parts_is_not_a_pair_of_roles() -> None:
    assert scopes("1P1D TP8/EP8 at conc 64.") == ["1P1D TP8/EP8"]


def test_the_layouts_as_named_hold_on_their_jobs(tree: Tree) -> None:
    assert findings(tree, "Run 1P8D DEP4/TP4 and 1P4D DEP4/TP4 at conc 32/128/512.", keys=KEY) == []
    assert findings(tree, "c1 with 1P1D DEP8/TP8 and c512 with 1P4D DEP4/TP4.", keys=KEY) == []


def test_a_lie_about_their_points_or_their_roles_is_still_reported(tree: Tree) -> None:
    subject = "concurrency/prefill.ep/prefill.dp-attn/decode.tp/decode.dp-attn/prefill.num-worker/decode.num-worker"
    assert findings(tree, "Run 1P1D DEP8/TP8 at conc 2.", keys=KEY) == [("claim-contradicted", subject, "conc 2")]
    # the roles the other way round: no 1P1D job has a TP8 prefill and a DEP8 decode
    assert [rule for rule, _, _ in findings(tree, "Run 1P1D TP8/DEP8 at conc 1.", keys=KEY)] == ["claim-arm-missing"]
