"""A claim is judged on the jobs its words are about, and only on the state its words say is new.

Most cases run against the real tree's dsr1-fp4-b200-sglang (TP4 at concurrency 1-32; TP4/EP4 with DP attention
at 64-256; its recipe, benchmarks/single_node/fixed_seq_len/dsr1_fp4_b200.sh, passes --chunked-prefill-size
16384, or 32768 with DP attention, --scheduler-recv-interval 10 below concurrency 16 and 30 from it,
--mem-fraction-static 0.85, and --schedule-conservativeness 3.33 with --enable-prefill-delayer only with DP
attention), some beside dsr1-fp8-b200-sglang (--mem-fraction-static 0.82 or 0.95, image v0.5.12-cu130 where the
FP4 key has v0.5.16-cu130): a sentence of a shape real changelogs write that holds stays silent, and its lie is
still reported.

- a default that other words make exceptions to ("X is A; for B, X is C", "30 for CONC>=16, 10 otherwise", in
  the same sentence or another bullet, B an arm, concurrencies, a config key or a word of one, C a value, an
  image tag or "disabled"): the default is not checked against the exception's jobs;
- a flag the recipe passes under its own condition, which the sentence names ("... allowing DP to batch more
  requests"): not missing from the jobs the condition leaves out;
- a contrast ("compared to TP8 ...", "instead of TP4, TP8 and TEP8", "more ... than TP8"), what a thing replaces
  and a before-state ("... from TP8", "(from conc 1-64)", "Before this change, ...") are no claim;
- a scope the sentence names (a concurrency band up to a bound, a sequence length, a server role, a model variant
  or config key, an arm heading the bullet) is kept.
"""

from __future__ import annotations

from typing import Any

import pytest

from ci_tools.claims.text.extract import extract
from ci_tools.claims.text.sentences import plain_source
from ci_tools.claims.verdict.check import EntryInput, EvalCache, check_entries
from ci_tools.claims.verdict.exceptions import stated_values
from ci_tools.claims.verdict.siblings import sibling_keys
from ci_tools.findings import Finding, Location
from ci_tools.jobs.job import FIXED, Job
from paraphrase.drive import Tree, load_tree
from test_claims_grammar import grammar_catalog

from conftest import full_corpus_dir

KEY = "dsr1-fp4-b200-sglang"


@pytest.fixture(scope="module")
def tree() -> Tree:
    return load_tree(full_corpus_dir())


def findings(tree: Tree, *bullets: str, keys: tuple[str, ...] = (KEY,)) -> list[tuple[str, Any, Any]]:
    """(rule, subject, claimed) of each claim finding of one entry of ``bullets`` for ``keys`` on the real tree."""
    entry = EntryInput(list(keys), (), [plain_source(f"entry{i}.md", b) for i, b in enumerate(bullets)],
                       Location("entry0.md", 1, 1))
    report = check_entries(tree.config, tree.repo, tree.snapshot, [entry], cache=EvalCache(tree.config))
    found: list[Finding] = [f for f in report.findings if f.rule.startswith("claim-") and f.rule != "claim-not-checked"]
    return [(f.rule, f.data.get("subject"), f.data.get("claimed")) for f in found]


@pytest.mark.parametrize("bullets", [
    ("Set --chunked-prefill-size 16384; DP-attention jobs use 32768.",),
    ("Set --chunked-prefill-size 16384, except DP attention which uses 32768.",),
    ("Set --chunked-prefill-size to 16384 for conc 1-32, 32768 for DP attention.",),
    ("Chunked prefill size is 16384.", "For DP attention, chunked prefill size is 32768."),
])
def test_a_default_is_not_checked_against_the_jobs_of_its_stated_exception(tree: Tree, bullets: tuple[str, ...]) -> None:
    assert findings(tree, *bullets) == []


@pytest.mark.parametrize("bullets", [
    # the exception's value is not what its jobs run
    ("Set --chunked-prefill-size 16384; DP-attention jobs use 65536.",),
    # the default is not what the other jobs run
    ("Set --chunked-prefill-size 8192; DP attention uses 32768.",),
    ("Chunked prefill size is 8192.", "For DP attention, chunked prefill size is 32768."),
])
def test_a_default_or_an_exception_that_does_not_hold_is_still_reported(tree: Tree, bullets: tuple[str, ...]) -> None:
    found = findings(tree, *bullets)
    assert [(rule.startswith("claim-"), subject) for rule, subject, _ in found] == [(True, "--chunked-prefill-size")]


def test_a_flag_passed_under_the_recipes_own_condition_is_not_missing_where_the_condition_fails(tree: Tree) -> None:
    # c49aff102280: "Set --prefill-delayer-max-delay-ms 5000 to define a concrete prefill delay, allowing DP to
    # batch more requests together per execution" (the recipe passes it where DP attention is on)
    assert findings(tree, "Set --schedule-conservativeness 3.33 so DP can batch more requests.") == []
    # A sentence that names no such condition speaks of every job: the jobs without the flag contradict it.
    assert findings(tree, "Set --schedule-conservativeness 3.33.") == [
        ("claim-partly-contradicted", "--schedule-conservativeness", "3.33")]
    assert findings(tree, "Set --schedule-conservativeness 4 so DP can batch more requests.") == [
        ("claim-contradicted", "--schedule-conservativeness", "4")]
    # PR 2701: "Add --prefill-decode-interval 20: +28% output throughput at conc 128 ... Under spec-decoding + DP
    # attention SGLang synchronises decode globally ...": the sentence after the setting says where it applies.
    assert findings(tree, "Set --schedule-conservativeness 3.33: +12% throughput. Under DP attention the ranks "
                          "wait for the slowest one.") == []
    # A sentence after it about something else leaves the claim about every job.
    assert findings(tree, "Set --schedule-conservativeness 3.33: +12% throughput. The image is unchanged.") == [
        ("claim-partly-contradicted", "--schedule-conservativeness", "3.33")]


@pytest.mark.parametrize("text", [
    "Run TP4 conc 1-32 and DEP4 conc 64-256, compared to TP8 conc 4-64 on the fp8 key.",
    "Run TP4 conc 1-32 and DEP4 conc 64-256 as opposed to TP8 conc 4-64.",
    "Move DP attention to TP4 from TP8.",
    "Move the DP-attention rows up from TP2.",
    "TP4 conc 1-32 replaces the TP8 conc 1-64 band.",
    "Move the TP4 band to conc 1-32 (from conc 1-64).",
    "Now TP4 at conc 1-32 (TP8 at conc 1-64 until this change).",
    "TP8 at conc 1-64 becomes TP4 at conc 1-32.",
    "TP8 at conc 1-64 is now TP4 at conc 1-32.",
    "Change the TP8 sweep at conc 1-64 to TP4.",
])
def test_a_contrast_or_a_before_state_is_no_claim_that_its_arm_runs(tree: Tree, text: str) -> None:
    assert findings(tree, text) == []


def test_the_arm_a_sentence_says_runs_is_still_checked(tree: Tree) -> None:
    assert [f[:2] for f in findings(tree, "Move DP attention to TP8 from TP4.")] == [("claim-arm-missing", "tp/dp-attn")]
    assert [f[:2] for f in findings(tree, "Change the TP4 sweep at conc 1-64 to TP8.")] == [
        ("claim-arm-missing", "tp/dp-attn")]


def test_a_concurrency_band_up_to_a_bound_is_the_scope(tree: Tree) -> None:
    assert findings(tree, "Set --scheduler-recv-interval 10 for concurrencies up to 8.") == []
    assert findings(tree, "Set --scheduler-recv-interval 30 for concurrencies up to 8.") == [
        ("claim-contradicted", "--scheduler-recv-interval", "30")]


@pytest.mark.parametrize("text, label, role", [
    ("Set --mem-fraction-static to 0.88 for concurrencies up to 32.", "c1-c32", ""),
    ("Set --mem-fraction-static to 0.88 when conc < 64.", "c1-c63", ""),
    ("Set --mem-fraction-static to 0.88 for c32 and below.", "c1-c32", ""),
    ("Set --mem-fraction-static to 0.88 for ISL 8192.", "ISL 8192", ""),
    ("Set --mem-fraction-static to 0.88 at ISL8192.", "ISL8192", ""),
    ("Set --mem-fraction-static to 0.88 at ISL8K.", "ISL8K", ""),
    ("Decode uses --mem-fraction-static 0.88.", "Decode", "decode"),
    ("Prefill now uses --mem-fraction-static 0.88.", "Prefill", "prefill"),
    ("Set --mem-fraction-static 0.88 in the decode command.", "decode", "decode"),
    ("Decode-only: --mem-fraction-static 0.88.", "Decode-only", "decode"),
    ("Tuned prefill: --mem-fraction-static 0.88.", "prefill", "prefill"),
    ("Set --mem-fraction-static to 0.88 at 8192/1024.", "8192/1024", ""),
    ("Set --mem-fraction-static to 0.88 for TP 8.", "TP 8", ""),
])
def test_the_scope_a_sentence_names_is_read(text: str, label: str, role: str) -> None:
    found = extract(plain_source("x.md", text), grammar_catalog())
    assert [(c.subject.name if c.subject else "", c.scope.label(), c.scope.role) for c in found.claims
            if c.kind == "recipe"] == [
        ("--mem-fraction-static", label, role)]


def test_a_bullet_headed_by_an_arm_speaks_of_it_in_every_sentence() -> None:
    found = extract(plain_source("x.md", "DEP8 arm: set --max-running-requests 256. Also set --mem-fraction-static "
                                         "0.88."), grammar_catalog())
    assert [(c.subject.name, c.scope.label()) for c in found.claims if c.subject] == [
        ("--max-running-requests", "DEP8"), ("--mem-fraction-static", "DEP8")]
    # ... and a bullet without such a heading narrows nothing
    found = extract(plain_source("x.md", "Set --max-running-requests 256. Also set --mem-fraction-static 0.88."),
                    grammar_catalog())
    assert [c.scope.label() for c in found.claims] == ["", ""]


@pytest.mark.parametrize("text", [
    "Before this change, the recipe passed --mem-fraction-static 0.85.",
    "Initially --mem-fraction-static 0.85; now --max-running-requests 64.",
    "In the old recipe, --mem-fraction-static 0.85 was used.",
    "Bump --mem-fraction-static to 0.88 from 0.85.",
])
def test_the_old_state_is_no_claim(text: str) -> None:
    found = extract(plain_source("x.md", text), grammar_catalog())
    assert [c.value for c in found.claims if c.subject and c.subject.name == "--mem-fraction-static"
            and "0.85" in str(c.value)] == []


@pytest.mark.parametrize("text", [
    "Use DEP8 instead of TP4, TP8 and TEP8 at high concurrency.",
    "DEP8 serves 2x more requests than TP8 at conc 64.",
])
def test_what_a_contrast_or_a_comparison_is_against_names_no_arm_of_the_claims(text: str) -> None:
    found = extract(plain_source("x.md", text), grammar_catalog())
    assert all("TP8" not in c.scope.label() for c in found.claims)


@pytest.mark.parametrize("text", [
    "For the FP4 recipe, set --mem-fraction-static 0.85.",
    "The FP4 model uses --mem-fraction-static 0.85.",
    "FP4: --mem-fraction-static 0.85.",
    "For dsr1-fp4-b200-sglang, set --mem-fraction-static 0.85.",
])
def test_a_model_variant_named_before_the_setting_is_its_scope(tree: Tree, text: str) -> None:
    # dsr1-fp4-b200-sglang passes --mem-fraction-static 0.85; dsr1-fp8-b200-sglang 0.82 or 0.95
    both = (KEY, "dsr1-fp8-b200-sglang")
    assert findings(tree, text, keys=both) == []
    assert [f[:2] for f in findings(tree, text.replace("0.85", "0.9"), keys=both)] == [
        ("claim-contradicted", "--mem-fraction-static")]


def test_an_exception_may_name_a_config_by_its_key_word_or_say_the_setting_is_off(tree: Tree) -> None:
    both = (KEY, "dsr1-fp8-b200-sglang")
    assert findings(tree, "Set --mem-fraction-static 0.85.", "The FP8 recipe uses 0.82 at TP8 and 0.95 at TP4.",
                    keys=both) == []
    assert findings(tree, "Set --mem-fraction-static 0.85.", "The FP8 recipe uses 0.82 at TP8 and 0.9 at TP4.",
                    keys=both) == [("claim-partly-contradicted", "--mem-fraction-static", "0.85")]
    assert findings(tree, "Set --mem-fraction-static 0.85.", "dsr1-fp8-b200-sglang keeps its own 0.82 and 0.95.",
                    keys=both) == []
    assert findings(tree, "Enable --enable-prefill-delayer.", "Not for TP-only jobs, where it is disabled.") == []
    assert findings(tree, "Enable --enable-prefill-delayer.") == [
        ("claim-partly-contradicted", "--enable-prefill-delayer", "on")]


def test_an_image_claim_keeps_the_variant_it_names_and_the_exceptions_to_it(tree: Tree) -> None:
    # dsr1-fp4-b200-sglang runs lmsysorg/sglang:v0.5.16-cu130, dsr1-fp8-b200-sglang v0.5.12-cu130
    both = (KEY, "dsr1-fp8-b200-sglang")
    new = "Use image lmsysorg/sglang:v0.5.16-cu130"
    assert findings(tree, f"{new} for the FP4 benchmark.", keys=both) == []
    assert findings(tree, f"{new}.", "The FP8 key stays on v0.5.12-cu130.", keys=both) == []
    assert findings(tree, f"{new}.", "The FP8 key stays on v0.5.9-cu130.", keys=both) == [
        ("claim-partly-contradicted", "image", "lmsysorg/sglang:v0.5.16-cu130")]


def test_the_default_a_claim_gives_the_jobs_outside_its_scope_is_checked_on_them(tree: Tree) -> None:
    # 7fe8c8d0a4ee: "override --mem-fraction-static from 0.85 to 0.8 when ISL=8192, OSL=1024, and CONC>128 (default
    # 0.85 elsewhere)": the default is a claim about the jobs the override leaves out
    assert findings(tree, "Set --chunked-prefill-size 32768 with DP attention (16384 elsewhere).") == []
    assert findings(tree, "Set --chunked-prefill-size 32768 with DP attention (default 8192 elsewhere).") == [
        ("claim-contradicted", "--chunked-prefill-size", "8192")]
    assert findings(tree, "Set --chunked-prefill-size 32768 with DP attention, 8192 otherwise.") == [
        ("claim-contradicted", "--chunked-prefill-size", "8192")]
    # a condition the claim names ("when", "only if") is read into its scope, so the jobs outside it are the
    # default's and a value other than the default there contradicts it
    # (the recipe: --scheduler-recv-interval 1 with DP attention, else 30 from CONC 16 up and 10 below; the TP4 jobs
    # run conc 1-32): the TP4 jobs at conc 16 and 32 contradict the default, those below it hold it
    assert findings(tree, "Set --scheduler-recv-interval 1 when DP attention is on (default 10 elsewhere).") == [
        ("claim-partly-contradicted", "--scheduler-recv-interval", "10")]
    assert findings(tree, "Set --chunked-prefill-size 32768 when DP attention is on (default 16384 elsewhere).") == []
    # a word of prose before "otherwise" is no default ("Serve shape is otherwise identical to ...")
    assert findings(tree, "With DP attention --chunked-prefill-size is 32768; the serve shape is otherwise identical "
                          "to the TP recipe.") == []


def test_a_default_beside_an_exception_is_read_in_each_way_it_is_written(tree: Tree) -> None:
    # the default's number with its thousands separators ("(default 16,384 elsewhere)" is 16384, not 384)
    assert findings(tree, "Set --chunked-prefill-size 32,768 with DP attention (default 16,384 elsewhere).") == []
    assert findings(tree, "Set --chunked-prefill-size 32,768 with DP attention (default 8,192 elsewhere).") == [
        ("claim-contradicted", "--chunked-prefill-size", "8,192")]
    # "by default" beside the value of named jobs is the default of the others, not the engine's own default
    assert findings(tree, "--chunked-prefill-size is 16384 by default and 32768 for DP attention.") == []
    assert findings(tree, "--chunked-prefill-size is 32768 for DP attention and 16384 by default.") == []
    for lie in ("--chunked-prefill-size is 16384 by default and 65536 for DP attention.",
                "--chunked-prefill-size is 32768 for DP attention and 8192 by default."):
        assert [(rule, subject) for rule, subject, _ in findings(tree, lie)] == [
            ("claim-contradicted", "--chunked-prefill-size")], lie
    # ... and an engine's default stays unread ("enabled by default in vLLM v0.14.0")
    assert findings(tree, "--chunked-prefill-size is 8192 by default in SGLang.") == []


MTP = ("dsv4-fp4-mi355x-vllm-agentic-mtp",)  # --moe-backend aiter, --max-num-batched-tokens 8192: 9 TP8 jobs, 1 other


def test_the_value_beside_a_default_is_the_named_jobs_and_the_default_the_others(tree: Tree) -> None:
    # "X is R by default and V on TP8": V is what the TP8 jobs are said to run, and the message says V ...
    assert findings(tree, "The moe backend is aiter by default and deep_gemm_amxf4_mega_moe on TP8.", keys=MTP) == [
        ("claim-contradicted", "--moe-backend", "deep_gemm_amxf4_mega_moe")]
    assert findings(tree, "--max-num-batched-tokens is 8192 by default and 4096 on TP8.", keys=MTP) == [
        ("claim-contradicted", "--max-num-batched-tokens", "4096")]
    # ... R is checked on the jobs outside TP8 (the one job that is not TP8 runs 8192, not 4096)
    assert findings(tree, "--max-num-batched-tokens is 4096 by default and 8192 on TP8.", keys=MTP) == [
        ("claim-contradicted", "--max-num-batched-tokens", "4096")]
    # a default said "elsewhere" is no value of the named jobs, so it excuses nothing there
    assert findings(tree, "--max-num-batched-tokens 4096 for TP8 (8192 elsewhere).", keys=MTP) == [
        ("claim-contradicted", "--max-num-batched-tokens", "4096")]


@pytest.mark.parametrize("lie", [
    "Set --max-num-batched-tokens to 8192, except 4096 on TP8.",
    "Keep --max-num-batched-tokens at 8192 but use 4096 on TP8.",
])
def test_an_exceptions_own_value_is_a_claim_about_its_arm(tree: Tree, lie: str) -> None:
    # the TP8 jobs run 8192: "except 4096 on TP8" says they run 4096
    assert findings(tree, lie, keys=MTP) == [("claim-contradicted", "--max-num-batched-tokens", "4096")]


@pytest.mark.parametrize("truth", [
    "Set --chunked-prefill-size to 16384, except 32768 for DP attention.",
    "Keep --chunked-prefill-size at 16384 but use 32768 for DP attention.",
])
def test_an_exceptions_own_value_that_holds_is_silent(tree: Tree, truth: str) -> None:
    assert findings(tree, truth) == []


def test_a_value_set_against_another_is_read_and_the_other_is_not(tree: Tree) -> None:
    # d536e0eebe86: "MoE backend left at auto (unlike MI355X's --moe-backend aiter)": the value after "left at" is
    # the claim; what the contrast names is another recipe's
    assert findings(tree, "MoE backend left at aiter (unlike the MI300X recipe's --moe-backend auto).", keys=MTP) == []
    assert findings(tree, "MoE backend left at auto (unlike the MI300X recipe's --moe-backend aiter).", keys=MTP) == [
        ("claim-contradicted", "--moe-backend", "auto")]
    # "V rather than A" (5ba0b0b0b7eb: "Level 2 rather than 7"): a word set against another is a value too
    assert findings(tree, "--moe-backend aiter rather than auto.", keys=MTP) == []
    assert findings(tree, "--moe-backend triton rather than aiter.", keys=MTP) == [
        ("claim-contradicted", "--moe-backend", "triton")]
    # ... not how a value is written set against another way (903c555f9449: "lazy_offload is emitted as a JSON
    # boolean rather than the string "false"": "emitted" is no value)
    assert findings(tree, '--moe-backend is emitted as a JSON string rather than the word "aiter".', keys=MTP) == []


def test_a_role_before_a_contrast_keeps_its_scope(tree: Tree) -> None:
    # "X 0 for prefill rather than 1": the prefill workers' value (not every job's, as when "rather" ended the role)
    key = ("qwen3.5-fp4-gb300-dynamo-trt-mtp",)  # PYTHONNOUSERSITE=1 on both roles
    for text in ("PYTHONNOUSERSITE 0 for prefill rather than 1.", "PYTHONNOUSERSITE 0 for prefill vs 1 before."):
        report = check_entries(tree.config, tree.repo, tree.snapshot,
                               [EntryInput(list(key), (), [plain_source("e.md", text)], Location("e.md", 1, 1))],
                               cache=EvalCache(tree.config))
        [finding] = [f for f in report.findings if f.rule == "claim-contradicted"]
        assert "prefill jobs of" in finding.message, (text, finding.message)


def test_a_percentage_written_apart_is_one_stated_value() -> None:
    def job(tp: int) -> Job:
        return Job("k", FIXED, {"isl": 1024, "osl": 1024, "conc": [4], "tp": tp}, Location("c.yaml", 1))

    jobs = [job(8), job(4)]
    stated = stated_values([plain_source("x.md", "Set X to 86 %, except 89 % on TP8.")], jobs)
    on_tp8 = [str(st.value) for st in stated if st.admits(jobs[0]) and not st.admits(jobs[1])]
    assert any("0.89" in v for v in on_tp8), [str(st.value) for st in stated]


def test_a_value_said_of_parts_named_together_is_said_of_the_jobs_of_all_of_them() -> None:
    # 7fe8c8d0a4ee: "override --mem-fraction-static from 0.85 to 0.8 when ISL=8192, OSL=1024, and CONC>128": 0.8 is
    # not what the 1k1k jobs at concurrency 256 are said to run
    def job(isl: int, conc: int) -> Job:
        return Job("k", FIXED, {"isl": isl, "osl": 1024, "conc": [conc], "tp": 4}, Location("c.yaml", 1))

    jobs = [job(8192, 256), job(1024, 256), job(8192, 64), job(1024, 64)]
    stated = [st for st in stated_values([plain_source("x.md", "Use 0.8 when ISL=8192, OSL=1024, and CONC>128.")], jobs)
              if str(st.value).startswith("Number")]
    assert [[st.admits(j) for j in jobs] for st in stated] == [[True, False, False, False]]


def test_an_exception_stated_for_one_setting_excuses_no_other(tree: Tree) -> None:
    # dsr1-fp8-b200-sglang passes --chunked-prefill-size and --max-prefill-tokens 32768 on TP8, 8192 on TP4
    key = ("dsr1-fp8-b200-sglang",)
    # "8192 on TP4" is the chunked prefill size's: the TP4 jobs' 8192 max-prefill-tokens still contradict 4096
    assert findings(tree, "Set --chunked-prefill-size to 32768 on TP8 and 8192 on TP4.",
                    "Set --max-prefill-tokens to 4096 on TP4.", keys=key) == [
        ("claim-contradicted", "--max-prefill-tokens", "4096")]
    # while an exception the sentence gives its own setting still excuses the jobs it names
    assert findings(tree, "Set --max-prefill-tokens to 32768, and 8192 on TP4.", keys=key) == []


def test_a_lead_that_points_back_at_named_jobs_makes_the_clause_after_it_conditional(tree: Tree) -> None:
    # PR 2702: "At these two concurrencies only, the benchmark script switches cudagraphs from FULL_DECODE_ONLY to
    # FULL_AND_PIECEWISE ...": the two concurrencies were named a sentence before; the other jobs keep the old value.
    assert findings(tree, "At these two concurrencies only, the script passes --schedule-conservativeness 3.33.") == []
    assert findings(tree, "For those rows, the script passes --schedule-conservativeness 3.33.") == []
    # A value no job runs is still wrong wherever those jobs are.
    assert findings(tree, "At these two concurrencies only, the script passes --schedule-conservativeness 4.") == [
        ("claim-contradicted", "--schedule-conservativeness", "4")]


SIBLINGS = ("qwen3.5-fp4-gb300-dynamo-sglang-agentic-disagg",)


def test_an_arm_only_the_sibling_key_runs_is_left_to_that_key(tree: Tree) -> None:
    # PR 2623: "Use the coarse WAR barrier only for the TP4 aggregate point" in an entry of the -disagg key; the
    # aggregated point is the -agg key's (here: the -agg key runs TP2 aggregated, the -disagg key TP2 1P1D).
    assert findings(tree, "Add a TP2 aggregated point at conc 1.", keys=SIBLINGS) == []
    # An arm neither key runs is still missing.
    assert [f[0] for f in findings(tree, "Add a TP8 aggregated point at conc 1.", keys=SIBLINGS)] == [
        "claim-arm-missing"]


def test_sibling_keys_differ_only_in_how_they_serve() -> None:
    configs = dict.fromkeys(["m-agentic-agg", "m-agentic-disagg", "m-agentic", "m-agentic-mtp-agg", "n-agentic-agg"])
    assert sibling_keys(["m-agentic-disagg"], configs) == ["m-agentic", "m-agentic-agg"]
    assert sibling_keys(["m-agentic"], configs) == ["m-agentic-agg", "m-agentic-disagg"]
    assert sibling_keys(["m-agentic-mtp-agg"], configs) == []


def test_a_sentence_about_another_frameworks_sweep_is_left_to_it(tree: Tree) -> None:
    # PR 2704, an SGLang key: "This tracks the vLLM agentic lane on the same runner, which sweeps DEP4 with a DRAM
    # tier at 48/64": the vLLM key's arms, which no job of this entry is of.
    assert findings(tree, "This tracks the vLLM lane on the same runner, which sweeps DEP8 at 48/64.") == []
    # The same words without the other framework, or naming this entry's own, are this entry's claim.
    assert [f[0] for f in findings(tree, "This sweeps DEP8 at 48/64.")] == ["claim-arm-missing"]
    assert [f[0] for f in findings(tree, "Like the vLLM lane, SGLang sweeps DEP8 at 48/64.")] == [
        "claim-arm-missing"]
    # A setting in such a sentence is still the recipe's.
    assert findings(tree, "Following the vLLM lane, pass --mem-fraction-static 0.9.") == [
        ("claim-contradicted", "--mem-fraction-static", "0.9")]


def test_what_is_restored_is_restored_where_the_jobs_had_it(tree: Tree) -> None:
    # PR 1526: "Restore ... `deepep` moe-a2a-backend, and previous env vars for all non-MTP disagg configs": the
    # TP-only config never had an a2a backend. (The recipe passes --schedule-conservativeness 3.33 with DP
    # attention only.)
    assert findings(tree, "Restore --schedule-conservativeness 3.33 for all configs.") == []
    assert [f[0] for f in findings(tree, "Pass --schedule-conservativeness 3.33 for all configs.")] == [
        "claim-partly-contradicted"]
    # a value the jobs that have the setting do not pass is still wrong
    assert findings(tree, "Restore --schedule-conservativeness 4 for all configs.") == [
        ("claim-contradicted", "--schedule-conservativeness", "4")]


@pytest.mark.parametrize("share, whole", [
    # The recipe passes --chunked-prefill-size 32768 to its DP-attention (DP4) jobs: SGLang gives each DP scheduler
    # a quarter of it.  A count said per scheduler, rank or GPU is that share, not the flag's value.
    ("Use an 8K per-scheduler chunked prefill for the DP-attention jobs.",
     "Use an 8K chunked prefill for the DP-attention jobs."),
    ("Set --chunked-prefill-size to 8192 per DP rank for DP attention.",
     "Set --chunked-prefill-size to 8192 for DP attention."),
    ("DPA per-scheduler chunked prefill from 4K to 8K.", "DPA chunked prefill from 4K to 8K."),
])
def test_a_count_said_per_rank_is_not_the_whole_jobs_value(tree: Tree, share: str, whole: str) -> None:
    assert findings(tree, share) == []
    assert findings(tree, whole) and {f[0] for f in findings(tree, whole)} == {"claim-contradicted"}


def test_a_fraction_said_per_gpu_is_still_the_settings_value(tree: Tree) -> None:
    # --mem-fraction-static is a fraction of each GPU's memory: "per GPU" names no share of it.
    assert findings(tree, "Keep --mem-fraction-static at 0.80 per GPU.") == \
        [("claim-contradicted", "--mem-fraction-static", "0.80")]
