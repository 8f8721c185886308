"""A bare TP width ("TP4") says "without DP attention" only by a naming convention (DEPn for the DP-attention
layout); where the jobs it names run DP attention and everything else the words state holds, the claim is a
partial contradiction (a warning), not an arm no job runs (claims/verdict/compare.py ``_by_width_alone``).

On the real tree's glm5.2-fp4-gb300-dynamo-sglang-agentic-disagg (InferenceX pull request 2608): its 1P2D, 1P4D
and 1P6D rows run a TP4 prefill with ``ep: 4`` and ``dp-attn: true`` and TP4 decode workers, at concurrency 48,
48 and 45; the changelog and the config's own comments call them "TP4-prefill/TP4-decode".
"""

from __future__ import annotations

import pytest

from paraphrase.drive import Tree, load_tree
from test_claims_scope_kept import findings

from conftest import full_corpus_dir

DISAGG = ("glm5.2-fp4-gb300-dynamo-sglang-agentic-disagg",)
SUBJECT = "concurrency/prefill.tp/prefill.dp-attn/decode.tp/decode.dp-attn/prefill.num-worker/decode.num-worker"


@pytest.fixture(scope="module")
def tree() -> Tree:
    return load_tree(full_corpus_dir())


def test_a_bare_tp_width_whose_jobs_run_dp_attention_warns_without_failing(tree: Tree) -> None:
    assert findings(tree, "Disaggregated TP4-prefill/TP4-decode 1P4D (conc 48).", keys=DISAGG) == \
        [("claim-partly-contradicted", SUBJECT, "conc 48")]
    # The name the convention gives that layout holds outright.
    assert findings(tree, "Disaggregated DEP4-prefill/TP4-decode 1P4D (conc 48).", keys=DISAGG) == []


def test_what_the_words_state_is_still_checked_on_those_jobs(tree: Tree) -> None:
    # points the 1P4D jobs do not run: a contradiction of the concurrency, not a note on DP attention
    assert findings(tree, "Disaggregated TP4-prefill/TP4-decode 1P4D (conc 64).", keys=DISAGG) == \
        [("claim-contradicted", SUBJECT, "conc 64")]
    # a worker count or a width no job has is an arm no job runs, as before
    assert findings(tree, "Disaggregated TP4-prefill/TP4-decode 1P3D (conc 48).", keys=DISAGG) == \
        [("claim-arm-missing", SUBJECT, "conc 48")]
    assert findings(tree, "Disaggregated TP8-prefill/TP4-decode 1P4D (conc 48).", keys=DISAGG) == \
        [("claim-arm-missing", SUBJECT, "conc 48")]


def test_the_message_says_which_layout_the_jobs_run(tree: Tree) -> None:
    from ci_tools.claims.text.sentences import plain_source
    from ci_tools.claims.verdict.check import EntryInput, EvalCache, check_entries
    from ci_tools.findings import Location

    entry = EntryInput(list(DISAGG), (), [plain_source("e.md", "Disaggregated TP4-prefill/TP4-decode 1P4D (conc 48).")],
                       Location("e.md", 1, 1))
    report = check_entries(tree.config, tree.repo, tree.snapshot, [entry], cache=EvalCache(tree.config))
    [message] = [f.message for f in report.findings if f.rule == "claim-partly-contradicted"]
    assert "its jobs run 1P4D prefill TP4/EP4/DPA decode TP4/EP1, with the DP attention a bare TP width does not name" \
        in message
