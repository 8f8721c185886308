"""Messages put the indefinite article a reader says before the word that follows: "an EAGLE3 ... job", "an MTP",
"an int", "a TP8" (findings.with_article).  The words are those the messages really carry: arm labels of changelog
claims, Python type names of multinode programs, YAML tags."""

from __future__ import annotations

import pytest

from ci_tools.findings import with_article
from paraphrase.drive import Tree, load_tree

from conftest import full_corpus_dir


@pytest.mark.parametrize("phrase, expected", [
    # arm labels of real changelog claims
    ("EAGLE3 speculative 2P1D DPA TP4 1k1k", "an"), ("aggregate TP8", "an"), ("TP8", "a"), ("DEP8", "a"),
    ("1P1D", "a"), ("4P1D", "a"), ("8k1k", "an"), ("11 jobs", "an"), ("SimpleCPU", "a"), ("GPU-only", "a"),
    ("DP-attention", "a"),
    # acronyms said letter by letter take the article of their first letter's name
    ("MTP", "an"), ("FP8", "an"), ("H200", "an"), ("MI355X", "an"), ("SGLang", "an"), ("LMCache", "an"),
    ("RDMA", "an"), ("NVFP4", "an"), ("UCCL", "a"), ("UCX", "a"),
    # acronyms said as words take the article of their sound
    ("SLURM", "a"), ("NIXL", "a"), ("ATOM", "an"), ("EAGLE", "an"),
    # plain words, u-words by their sound, and what leads a flag
    ("int", "an"), ("str", "a"), ("timestamp", "a"), ("unset", "an"), ("upstream", "an"), ("unified", "a"),
    ("user", "a"), ("--speculative-config", "a"), ("`engine`", "an"),
])
def test_the_article_is_the_one_the_word_is_said_with(phrase: str, expected: str) -> None:
    assert with_article(phrase) == f"{expected} {phrase}"


def test_a_claims_message_reads_an_eagle3_job() -> None:
    from ci_tools.claims.text.sentences import plain_source
    from ci_tools.claims.verdict.check import EntryInput, EvalCache, check_entries
    from ci_tools.findings import Location

    tree: Tree = load_tree(full_corpus_dir())
    text = "Add an EAGLE3 speculative TP8 arm."
    entry = EntryInput(["dsr1-fp8-mi355x-sglang"], (), [plain_source("e.md", text)], Location("e.md", 1, 1))
    report = check_entries(tree.config, tree.repo, tree.snapshot, [entry], cache=EvalCache(tree.config))
    messages = [f.message for f in report.findings if f.rule.startswith("claim-")]
    assert any("says an EAGLE3 speculative TP8 job runs" in m for m in messages), messages
    assert not any(" a EAGLE" in m for m in messages)
