"""Readings of how a sentence states, bounds, qualifies or later corrects a setting, on the real tree.

dsv4-fp4-b300-sglang passes ``--max-running-requests "$(( CONC * 3 / 2 > 8 ? CONC * 3 / 2 : 8 ))"`` (8 at conc 1,
48 at conc 32, up to 12288), ``--mem-fraction-static`` 0.90 at conc 1 and 32 and 0.94-0.96 above, and
``--chunked-prefill-size 8192`` only on its TP-only rows; dsv4-fp4-mi355x-vllm passes ``--moe-backend aiter`` on
every job.
"""

from __future__ import annotations

import pytest

from ci_tools.claims.text.markdown import pr_body_source
from ci_tools.claims.text.sentences import plain_source
from ci_tools.claims.verdict.check import EntryInput, EvalCache, check_entries
from ci_tools.claims.verdict.superseded import sentence_number
from ci_tools.findings import Location
from paraphrase.drive import Tree, load_tree

from conftest import full_corpus_dir

SGLANG = "dsv4-fp4-b300-sglang"
VLLM = "dsv4-fp4-mi355x-vllm"


@pytest.fixture(scope="module")
def tree() -> Tree:
    return load_tree(full_corpus_dir())


def check(tree: Tree, key: str, *bullets: str) -> tuple[list[tuple[str, str]], list[str]]:
    """The claim findings (rule, message) and the reasons of the unverified phrases."""
    entry = EntryInput([key], (), [plain_source(f"e{n}.md", b) for n, b in enumerate(bullets)], Location("e.md", 1, 1))
    report = check_entries(tree.config, tree.repo, tree.snapshot, [entry], cache=EvalCache(tree.config), verbose=True)
    found = [(f.rule, f.message) for f in report.findings if f.rule.startswith("claim-")
             and f.rule not in ("claim-not-checked", "claim-unverified")]
    return found, [u.reason for u in report.unverified]


@pytest.mark.parametrize("floor", ["Floor --max-running-requests at {} so low-CONC sweeps keep a queue",
                                   "--max-running-requests floored at {}",
                                   "Keep --max-running-requests at {} or higher"])
def test_a_floor_holds_where_every_job_runs_at_least_it(tree: Tree, floor: str) -> None:
    # 00fe30d47378: "Floor --max-running-requests at 8 ... (CONC * 3 / 2 still applies above CONC=5)"
    assert check(tree, SGLANG, floor.format(8))[0] == []
    found, _ = check(tree, SGLANG, floor.format(64))
    assert [rule for rule, _ in found] == ["claim-partly-contradicted"]
    assert "--max-running-requests is at least 64" in found[0][1] and "passes --max-running-requests 8" in found[0][1]


def test_a_cap_is_worded_as_one(tree: Tree) -> None:
    found, _ = check(tree, SGLANG, "Cap --max-running-requests at 16")
    assert [rule for rule, _ in found] == ["claim-partly-contradicted"]
    assert "--max-running-requests is at most 16" in found[0][1]


def test_a_list_labelled_as_the_default_holds_where_no_other_value_is_said(tree: Tree) -> None:
    # the jobs outside the default (the other bullets' exceptions) are not the label's
    text = "Default path: --mem-fraction-static 0.90, --chunked-prefill-size 8192, flashinfer autotune disabled"
    assert check(tree, SGLANG, text)[0] == []
    assert check(tree, SGLANG, "Defaults: --mem-fraction-static 0.90")[0] == []
    # unlabelled, the same list is said of every job
    assert [rule for rule, _ in check(tree, SGLANG, "--mem-fraction-static 0.90")[0]] == ["claim-partly-contradicted"]
    # a default no job runs is still wrong
    assert [rule for rule, _ in check(tree, SGLANG, "Default path: --mem-fraction-static 0.97")[0]] == [
        "claim-contradicted"]


def test_what_a_clause_adds_alongside_is_not_its_arm(tree: Tree) -> None:
    # "Adds two layouts ... alongside the TP8+TP8 sweep: ...": the sweep beside them is kept, its arm not spoken of
    text = "Adds a DP-attention layout alongside the TP8 conc 1-32 sweep: --chunked-prefill-size 16384 at conc 512"
    assert check(tree, SGLANG, text)[0] == []
    assert [rule for rule, _ in check(tree, SGLANG, text.replace("16384", "4096"))[0]] == ["claim-contradicted"]


def test_a_later_sentence_of_a_bullet_has_the_last_word(tree: Tree) -> None:
    # a bullet told as a story: the cause (the old setting), then what the change forces
    # (not "with moe_backend=auto, EP fell back ...": the setting a failure happened with is no claim at all)
    story = ("Fixes the startup hang on EP configs: moe_backend=auto put EP on the emulation backend. "
             "Forcing --moe-backend aiter selects the AITER kernels.")
    found, reasons = check(tree, VLLM, story)
    assert found == []
    assert any(r.startswith("a later sentence of its bullet states it again") for r in reasons)
    # the last word is still checked
    lie = story.replace("--moe-backend aiter", "--moe-backend triton")
    assert [rule for rule, _ in check(tree, VLLM, lie)[0]] == ["claim-contradicted"]
    # and a later bullet still reads as one
    found, reasons = check(tree, VLLM, "Set --moe-backend auto", "Set --moe-backend aiter")
    assert found == [] and any(r.startswith("a later bullet of this entry states it again") for r in reasons)


def test_a_pr_descriptions_later_sentence_has_the_last_word_too(tree: Tree) -> None:
    body = pr_body_source("PR description", "Fixes the startup hang on EP configs: moe_backend=auto put EP on "
                          "the emulation backend. Forcing --moe-backend aiter selects the AITER kernels.\n")
    entry = EntryInput([VLLM], (), [], Location("e.md", 1, 1))
    report = check_entries(tree.config, tree.repo, tree.snapshot, [entry], pr_body=body, cache=EvalCache(tree.config),
                           verbose=True)
    assert [f.rule for f in report.findings if f.rule.startswith("claim-contra")] == []
    assert any(u.reason.startswith("a later sentence of the PR description states it again") for u in report.unverified)


def test_a_story_s_sentences_end_at_full_stops_and_lines_not_at_semicolons() -> None:
    # "X A on TP8; B on the other jobs": side by side, neither the later word
    text = "Set X to 0.85 on TP8; 0.9 on the other jobs. Forcing X 0.8 fixes it.\nThen Y."
    assert sentence_number(text, "0.9 on the other jobs.") == 0
    assert sentence_number(text, "Forcing X 0.8 fixes it.") == 1
    assert sentence_number(text, "Then Y.") == 2
    assert sentence_number(text, "not in it") == -1


@pytest.mark.parametrize("text", ["--moe-backend is {}", "The --moe-backend is {} now", "--moe-backend is {} for EP"])
def test_a_plain_word_after_is_is_the_spelled_flags_value(tree: Tree, text: str) -> None:
    assert check(tree, VLLM, text.format("aiter"))[0] == []
    found, _ = check(tree, VLLM, text.format("triton"))
    assert [rule for rule, _ in found] == ["claim-contradicted"]
    assert "--moe-backend is triton" in found[0][1] and "passes --moe-backend aiter" in found[0][1]


@pytest.mark.parametrize("judgement", ["required", "important for EP", "fine", "unchanged", "optional"])
def test_a_word_judging_the_flag_is_no_value_of_it(tree: Tree, judgement: str) -> None:
    found, reasons = check(tree, VLLM, f"--moe-backend is {judgement}")
    assert found == []
