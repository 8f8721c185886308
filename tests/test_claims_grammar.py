"""How changelog sentences state a setting: every form of the grammar (claims/text/valueread.py), read.

Sentence by sentence, each a way real changelogs (and the paraphrases of tests/paraphrase) state one
setting's value; then the same forms judged against a copy of the real tree with the recipe edited, so that
a false one is an error and the message says what the text said.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ci_tools.claims.text.extract import extract
from ci_tools.claims.text.sentences import plain_source
from ci_tools.claims.text.subjects import Catalog
from ci_tools.claims.text.values import Bool
from ci_tools.claims.verdict.check import EntryInput, EvalCache, check_entries
from ci_tools.findings import Finding, Location
from paraphrase.drive import Tree, load_tree
from paraphrase.settings import OverlaySnapshot
from test_claims_sentences import catalog, normalise

from conftest import full_corpus_dir


def grammar_catalog() -> Catalog:
    cat = catalog()
    for name in ("--extra-engine-args.moe_config.backend", "--speculative-config.max_draft_len",
                 "--extra-engine-args.kv_cache_config.dtype"):
        cat.add("key", name)
    cat.add("env", "PYTHONHASHSEED")
    cat.add("env", "VLLM_HTTP_TIMEOUT_KEEP_ALIVE")
    cat.add("flag", "--block-size")
    cat.add("flag", "--cuda-graph-bs")
    cat.add("flag", "--mamba-ssm-dtype")
    cat.add("flag", "--trust-remote-code-level")
    cat.add("flag", "--enable-cache-report", boolean=True)
    cat.add("flag", "--enable-metrics", boolean=True)
    cat.add("flag", "--enable-symm-mem", boolean=True)
    cat.add("flag", "--async-scheduling", boolean=True)
    cat.add("env", "NVSHMEM_REMOTE_TRANSPORT")
    cat.add("flag", "--fp4-gemm-backend")
    cat.add("flag", "--moe-runner-backend")
    cat.values["--moe-runner-backend"] = {"flashinfer_trtllm"}
    cat.add("key", "--attention-config.minimax_m3_msa_decode_backend")
    cat.add("key", "--kv-transfer-config.kv_load_failure_policy")
    return cat


def claims_of(text: str) -> list[list[Any]]:
    found = extract(plain_source("x.md", text), grammar_catalog())
    return [normalise(c)[1:3] for c in found.claims if c.kind == "recipe"]


@pytest.mark.parametrize("text, expected", [
    # a verb, the setting, "to" the value: the verb's object is the setting, not its old value
    ("Raise --mem-fraction-static to 0.88.", [["--mem-fraction-static", "0.88"]]),
    ("Increase --mem-fraction-static to 0.88.", [["--mem-fraction-static", "0.88"]]),
    ("Lower --mem-fraction-static to 0.88.", [["--mem-fraction-static", "0.88"]]),
    ("Change --mem-fraction-static to 0.88.", [["--mem-fraction-static", "0.88"]]),
    ("Raised --mem-fraction-static to 0.88.", [["--mem-fraction-static", "0.88"]]),
    ("--mem-fraction-static raised to 0.88", [["--mem-fraction-static", "0.88"]]),
    ("Drop mem-fraction-static to 0.8.", [["--mem-fraction-static", "0.8"]]),
    # a colon after the setting gives its value, as in YAML; an arrow gives the new one
    ("--mem-fraction-static: 0.85 -> 0.88", [["--mem-fraction-static", "0.88"]]),
    ("kv-cache-dtype: fp8", [["--kv-cache-dtype", "fp8"]]),
    ("--max-num-seqs 16 → 32 on the new image", [["--max-num-seqs", "32"]]),
    ("--mem-fraction-static is now 0.88.", [["--mem-fraction-static", "0.88"]]),
    # natural names, units and written-apart multiples
    ("Use a chunked prefill size of 16K tokens.", [["--chunked-prefill-size", "16000,16384"]]),
    ("Set the chunked prefill size to 8 K tokens.", [["--chunked-prefill-size", "8000,8192"]]),
    ("Use 64K batching.", [["--max-num-batched-tokens", "64000,65536"]]),
    ("Keep the indexer cache in FP4.", [["--index-cache-dtype", "fp4"]]),
    ("Set --mem-fraction-static to 88%.", [["--mem-fraction-static", "0.88,88"]]),
    ("Set --mem-fraction-static to 88 %.", [["--mem-fraction-static", "0.88,88"]]),
    ("VLLM_HTTP_TIMEOUT_KEEP_ALIVE=1,800", [["VLLM_HTTP_TIMEOUT_KEEP_ALIVE", "1800"]]),
    ("Set --max-num-seqs to 1,800.", [["--max-num-seqs", "1800"]]),
    # "from A to" with names, dtypes and booleans; quotes and backticks are not words
    ("Switch --attention-backend from FLASHINFER to FLASH_ATTN.", [["--attention-backend", "flash_attn"]]),
    ("Change --kv-cache-dtype from 'auto' to 'fp8'.", [["--kv-cache-dtype", "fp8"]]),
    ("Set `--moe-backend` to `cutlass`.", [["--moe-backend", "cutlass"]]),
    ("Switch --enable-tbo from true to false.", [["--enable-tbo", "off"]]),
    ("Set --mamba-ssm-dtype to float16.", [["--mamba-ssm-dtype", "float16"]]),
    ("Set --trust-remote-code-level to True.", [["--trust-remote-code-level", "on"]]),
    # list values
    ("Set --cuda-graph-bs to [1, 2, 4, 8].", [["--cuda-graph-bs", "[1,2,4,8]"]]),
    ("--cuda-graph-bs 1,2,4,8", [["--cuda-graph-bs", "[1,2,4,8]"]]),
    # a bracketed list after "=" is the value, not a flag given with "[1" glued to it
    ("--cuda-graph-bs=[1, 2, 4, 8]", [["--cuda-graph-bs", "[1,2,4,8]"]]),
    ("--cuda-graph-bs=[1,2,4,8]", [["--cuda-graph-bs", "[1,2,4,8]"]]),
    # partial dotted paths of structured flags
    ("Set moe_config.backend to CUTLASS.", [["--extra-engine-args.moe_config.backend", "cutlass"]]),
    ("speculative_config.max_draft_len: 3", [["--speculative-config.max_draft_len", "3"]]),
    ("Change kv_cache_config.dtype from 'auto' to 'fp8'.", [["--extra-engine-args.kv_cache_config.dtype", "fp8"]]),
    # parentheses, two claims, a name written as the value
    ("Retune memory for the new image (--mem-fraction-static 0.88).", [["--mem-fraction-static", "0.88"]]),
    ("Set --max-num-seqs to 32 and --block-size to 128.", [["--max-num-seqs", "32"], ["--block-size", "128"]]),
    ("Set the reasoning parser to deepseek_v4.", [["--reasoning-parser", "deepseek_v4"]]),
    ("Use PYTHONHASHSEED 168.", [["PYTHONHASHSEED", "168"]]),
    # a noun the setting's name qualifies, a number written before the name with its unit, a quoted value
    # with its multiple, a one-word variable before a colon, "none" as a name
    ("Move the batched-token budget to 128 K tokens.", [["--max-num-batched-tokens", "128000,131072"]]),
    ("Use 65536 tokens chunked prefill size.", [["--chunked-prefill-size", "65536"]]),
    ("Change --chunked-prefill-size from '131072' to '512 K tokens'.", [["--chunked-prefill-size", "512000,524288"]]),
    ("PYTHONHASHSEED: 168", [["PYTHONHASHSEED", "168"]]),
    ("Set NVSHMEM_REMOTE_TRANSPORT to none.", [["NVSHMEM_REMOTE_TRANSPORT", "none"]]),
    # the value of a setting the sentence names is that setting's, though it is another setting's value too
    ("Set --fp4-gemm-backend to flashinfer_trtllm.", [["--fp4-gemm-backend", "flashinfer_trtllm"]]),
    # a model name whose parts are words of a key gives that key no value
    ("Add MiniMax-M3-MXFP8 GB300 8k1k disaggregated Dynamo-vLLM EAGLE3 MTP Pareto.", []),
    # a word of the setting's own name is no report of a failure
    ("Set the kv load failure policy to recompute.", [["--kv-transfer-config.kv_load_failure_policy", "recompute"]]),
    # on/off said of a flag's one own word, or of its words abbreviated as the flag spells them
    ("Disable the metrics.", [["--enable-metrics", "off"]]),
    ("Turn the metrics off.", [["--enable-metrics", "off"]]),
    ("The metrics improved by 5%.", []),
    ("Enable the symm mem.", [["--enable-symm-mem", "on"]]),
    # on/off, and dropping a setting
    ("Remove async-scheduling for decode.", [["--async-scheduling", "not passed"]]),
    ("Remove prefill --enable-cache-report.", [["--enable-cache-report", "not passed"]]),
    ("Enable the cache report.", [["--enable-cache-report", "on"]]),
    ("Disable ATOM_DP_LB_REQ_EQUIV.", [["ATOM_DP_LB_REQ_EQUIV", "off"]]),
    ("Drop --enable-tbo and --max-num-seqs 32.", [["--enable-tbo", "not passed"], ["--max-num-seqs", "not passed"]]),
    ("Remove the deprecated --disable-radix-cache flag (now enabled by default).",
     [["--disable-radix-cache", "not passed"]]),
    # code around a setting removed is no setting removed: the recipe may still export it (InferenceX pull
    # request 2000: "remove redundant SPEC_DECODING gating in favor of MODEL_MTP_FLAGS + DECODE_MTP_SIZE > 0")
    ("Remove redundant ATOM_DP_LB_REQ_EQUIV gating in favor of --enable-tbo.", []),
    ("Drop the --enable-tbo check.", []),
    ("Remove the ATOM_DP_LB_REQ_EQUIV override.", [["ATOM_DP_LB_REQ_EQUIV", "not passed"]]),
])
def test_a_form_of_the_grammar_is_read(text: str, expected: list[list[Any]]) -> None:
    assert claims_of(text) == expected


def test_a_role_written_before_the_setting_scopes_it_and_not_the_next_clause() -> None:
    found = extract(plain_source("x.md", "Increase prefill mem_fraction_static to 0.85 and reduce HICACHE_RATIO to 3."),
                    grammar_catalog())
    assert [(c.subject.name if c.subject else "", c.scope.role) for c in found.claims] == [
        ("--mem-fraction-static", "prefill"), ("HICACHE_RATIO", "")]


@pytest.mark.parametrize("text, phrase", [
    ("We used to run --max-num-seqs 64 with it.", "--max-num-seqs"),
    ("The kv load failure policy failed at 4 nodes.", "kv load failure policy"),
])
def test_a_clause_naming_a_setting_and_a_value_is_never_silent(text: str, phrase: str) -> None:
    """A setting named beside a value gives a claim or says why not (here: the old state, a failure)."""
    found = extract(plain_source("x.md", text), grammar_catalog())
    assert found.claims == []
    assert [(u.phrase, u.reason) for u in found.unverified] == [
        (phrase, "the clause speaks of the past, a failure, a condition or another's words")]


# ---------------------------------------------------------------- against a copy of the real tree


@pytest.fixture(scope="module")
def tree() -> Tree:
    return load_tree(full_corpus_dir())


def judged(tree: Tree, key: str, path: str, old: str, new: str, text: str, *, body: bool = False,
           verbose: bool = False) -> list[Finding]:
    """The claim findings of ``text`` (a changelog bullet, or a PR body) for config ``key``, on a copy of the real
    tree whose ``path`` has ``old`` replaced by ``new`` (once)."""
    data = tree.snapshot.read(path)
    assert data is not None and data.count(old.encode()) == 1, f"{path} must hold {old!r} once"
    copy = OverlaySnapshot(tree.snapshot, {path: data.replace(old.encode(), new.encode())})
    bullet = "Retune the recipe." if body else text
    entry = EntryInput([key], (), [plain_source("entry.md", bullet)], Location("entry.md", 1, 1))
    report = check_entries(tree.config, tree.repo, copy, [entry], cache=EvalCache(tree.config),  # type: ignore[arg-type]
                           pr_body=plain_source("body.md", text) if body else None, verbose=verbose)
    return [f for f in report.findings if f.rule.startswith("claim-") and f.rule != "claim-not-checked"]


_SGLANG = ("dsr1-fp8-mi355x-sglang", "benchmarks/single_node/fixed_seq_len/dsr1_fp8_mi355x.sh")


@pytest.mark.parametrize("text", [
    "Raise --mem-fraction-static to 0.88.", "Increase --mem-fraction-static to 0.88.",
    "Lower --mem-fraction-static to 0.88.", "Change --mem-fraction-static to 0.88.",
    "Raised --mem-fraction-static to 0.88.", "--mem-fraction-static raised to 0.88",
])
def test_a_changed_value_said_with_any_verb_is_an_error_when_false(tree: Tree, text: str) -> None:
    found = judged(tree, *_SGLANG, "--mem-fraction-static 0.8 ", "--mem-fraction-static 0.85 ", text)
    assert [(f.rule, f.data["subject"], f.data["claimed"], f.data["actual"]) for f in found] == [
        ("claim-contradicted", "--mem-fraction-static", "0.88", "0.85")]
    truth = judged(tree, *_SGLANG, "--mem-fraction-static 0.8 ", "--mem-fraction-static 0.85 ",
                   text.replace("0.88", "0.85"))
    assert truth == []


def test_the_new_value_of_from_a_to_b_is_judged(tree: Tree) -> None:
    found = judged(tree, "dsv4-fp8-mi325x-vllm", "benchmarks/single_node/fixed_seq_len/dsv4_fp8_mi325x.sh",
                   "--gpu-memory-utilization 0.9 ", "--gpu-memory-utilization 0.85 ",
                   "Reduce --gpu-memory-utilization from 0.9 to 0.8")
    assert [(f.rule, f.data["claimed"], f.data["actual"]) for f in found] == [("claim-contradicted", "0.8", "0.85")]


def test_a_dtype_kept_in_words_is_judged(tree: Tree) -> None:
    found = judged(tree, "dsv4-fp4-mi355x-atom-agentic-mtp", "benchmarks/single_node/agentic/dsv4_fp4_mi355x_atom_mtp.sh",
                   "--index-cache-dtype fp4", "--index-cache-dtype fp8", "Keep the indexer cache in FP4.")
    assert [(f.rule, f.data["subject"], f.data["claimed"], f.data["actual"]) for f in found] == [
        ("claim-contradicted", "--index-cache-dtype", "FP4", "fp8")]


def test_a_budget_named_by_what_it_budgets_is_judged(tree: Tree) -> None:
    found = judged(tree, "minimaxm3-fp4-b300-vllm-agentic-mtp", "benchmarks/single_node/agentic/minimaxm3_fp4_b300_mtp.sh",
                   "--max-num-batched-tokens 16384", "--max-num-batched-tokens 32768", "Use 64K batching.")
    assert [(f.rule, f.data["subject"], f.data["actual"]) for f in found] == [
        ("claim-contradicted", "--max-num-batched-tokens", "32768")]


@pytest.mark.parametrize("text, says", [
    ("Enable the radix cache.", "PR description says the radix cache is on"),
    ("Keep the radix cache enabled.", "PR description says the radix cache is on"),
    ("Drop --disable-radix-cache.", "PR description says --disable-radix-cache is not passed"),
])
def test_a_feature_said_on_against_a_flag_that_turns_it_off_says_so(tree: Tree, text: str, says: str) -> None:
    found = judged(tree, *_SGLANG, "--mem-fraction-static 0.8 ", "--mem-fraction-static 0.8 ", text, body=True)
    assert [f.rule for f in found] == ["claim-contradicted"]
    assert found[0].message.startswith(says + " (body.md:1)")
    assert "but the recipe passes --disable-radix-cache" in found[0].message
    # ... and said the other way round, it holds.
    opposite = text.replace("Enable", "Disable").replace("enabled", "disabled").replace("Drop", "Pass")
    assert judged(tree, *_SGLANG, "--mem-fraction-static 0.8 ", "--mem-fraction-static 0.8 ", opposite, body=True) == []


# ---------------------------------------------------------------- no setting beside a value read in silence


@pytest.mark.parametrize("text, expected", [
    ("Set -tp to 16.", [["-tp", "16"]]),
    ("Sync the serve flags: -tp 16, max-num-seqs 32.", [["-tp", "16"], ["--max-num-seqs", "32"]]),
    # a dash between words, or a flag no recipe passes with one dash, is no flag
    ("Run the pre-tp 16 sweep.", []),
    ("Set -ep to 16.", []),
])
def test_a_flag_the_recipes_spell_with_one_dash_is_read(text: str, expected: list[list[Any]]) -> None:
    cat = grammar_catalog()
    cat.add("flag", "-tp")
    found = extract(plain_source("x.md", text), cat)
    assert [normalise(c)[1:3] for c in found.claims if c.kind == "recipe"] == expected


def test_a_structured_key_spelled_whole_in_words_is_that_key() -> None:
    """"the enable attention dp" is enable_attention_dp, not the end of DYN_TRTLLM_ENABLE_ATTENTION_DP."""
    cat = grammar_catalog()
    cat.add("env", "DYN_TRTLLM_ENABLE_ATTENTION_DP")
    cat.add("key", "--extra-engine-args.enable_attention_dp")
    found = extract(plain_source("x.md", "Change the enable attention dp to False."), cat)
    assert [normalise(c)[1:3] for c in found.claims] == [["--extra-engine-args.enable_attention_dp", "off"]]
    found = extract(plain_source("x.md", "Set the trtllm enable attention dp to 1."), cat)
    assert [normalise(c)[1:3] for c in found.claims] == [["DYN_TRTLLM_ENABLE_ATTENTION_DP", "1"]]


@pytest.mark.parametrize("text", [
    "Enable --enable-metrics for decode via the server flags.",
    "Enable --enable-metrics for decode on TP8.",
    "Enable --enable-metrics for decode for the new image.",
    "Retune decode: --enable-metrics on.",
    # or before the verb of its sentence
    "Enabling --enable-metrics for decode keeps the dashboards fed.",
    "Enabling --enable-metrics for decode selects the slower path.",
    "Enabling --enable-metrics for decode is what upstream does.",
])
def test_a_role_before_how_the_setting_is_passed_scopes_it(text: str) -> None:
    found = extract(plain_source("x.md", text), grammar_catalog())
    assert [(c.subject.name if c.subject else "", c.scope.role) for c in found.claims] == [("--enable-metrics", "decode")]


def test_a_role_before_a_noun_is_a_word_of_what_it_names() -> None:
    """"decode tokens" names tokens, not the decode workers: the setting is every server's."""
    found = extract(plain_source("x.md", "Enable --enable-metrics for decode tokens."), grammar_catalog())
    assert [(c.subject.name if c.subject else "", c.scope.role) for c in found.claims] == [("--enable-metrics", "")]


@pytest.mark.parametrize("text, on", [
    ("Turn SGLANG_LOG_MS on for prefill.", True),
    ("Turn SGLANG_LOG_MS on for the decode workers.", True),
    ("Turn SGLANG_LOG_MS on for every job.", True),
    ("Turn SGLANG_LOG_MS off for prefill.", False),
    ("Keep SGLANG_LOG_MS on and --enable-metrics off.", True),
])
def test_on_before_a_preposition_is_the_value(text: str, on: bool) -> None:
    cat = grammar_catalog()
    cat.add("env", "SGLANG_LOG_MS")
    found = extract(plain_source("x.md", text), cat)
    assert [(c.value.on if isinstance(c.value, Bool) else c.value) for c in found.claims
            if c.subject is not None and c.subject.name == "SGLANG_LOG_MS"] == [on]


@pytest.mark.parametrize("text", ["Turn SGLANG_LOG_MS on the DEP band.",
                                  # a purpose after it, not a part of the sweep: the setting's value is unread
                                  "SGLANG_LOG_MS on for trajectory reuse"])
def test_on_before_what_it_names_is_a_preposition(text: str) -> None:
    cat = grammar_catalog()
    cat.add("env", "SGLANG_LOG_MS")
    found = extract(plain_source("x.md", text), cat)
    assert found.claims == [] and [u.reason for u in found.unverified] == ["no value next to the subject"]


def test_the_setting_a_failure_happened_with_is_its_condition() -> None:
    """A story: "with X=A, the engine fell back ..." is what failed; the later sentence says the new state, for the
    workers it names."""
    text = ("Fixes the startup hang: with --enable-metrics on, the engine fell back to an emulated kernel. "
            "Forcing --enable-metrics off for prefill selects the native one.")
    found = extract(plain_source("x.md", text), grammar_catalog())
    assert [(c.subject.name if c.subject else "", c.value.text, c.scope.role) for c in found.claims] == [
        ("--enable-metrics", "off", "prefill")]
    assert [u.phrase for u in found.unverified] == ["--enable-metrics"]


@pytest.mark.parametrize("text, role", [
    ("attention-backend triton for decode", "decode"),
    ("attention-backend triton for the decode workers", "decode"),
    ("attention-backend triton on all workers", ""),
    ("attention-backend triton", ""),
])
def test_a_setting_and_its_word_begin_an_item_up_to_the_part_of_the_sweep_it_is_for(text: str, role: str) -> None:
    cat = grammar_catalog()
    cat.add("flag", "--attention-backend")
    found = extract(plain_source("x.md", text), cat)
    assert [(c.subject.name if c.subject else "", c.value.text, c.scope.role) for c in found.claims] == [
        ("--attention-backend", "triton", role)]


def test_a_role_that_is_a_word_of_a_setting_is_no_heading() -> None:
    found = extract(plain_source("x.md", "Disable chunked prefill: --enable-metrics on."), grammar_catalog())
    assert [(c.subject.name if c.subject else "", c.scope.role) for c in found.claims] == [("--enable-metrics", "")]


_ATOM_MTP = ("dsr1-fp8-mi355x-atom-mtp", "benchmarks/single_node/fixed_seq_len/dsr1_fp8_mi355x_atom_mtp.sh")
_SGLANG_2P2D = ("glm5.2-fp8-h200-dynamo-sglang-agentic-mtp-2p2d",
                "benchmarks/multi_node/srt-slurm-recipes/sglang/glm5.2/agentic/disagg-h200-2p2d-pcp8-tp8-dp8-mtp.yaml")


def test_a_one_dash_flag_beside_another_setting_is_judged(tree: Tree) -> None:
    found = judged(tree, *_ATOM_MTP, 'PARALLEL_ARGS=(-tp "$TP") #TP', 'PARALLEL_ARGS=(-tp "$TP") #TP',
                   "Set the num speculative tokens to 3 and -tp to 16.")
    assert [(f.rule, f.data["subject"], f.data["claimed"], f.data["actual"]) for f in found] == [
        ("claim-contradicted", "-tp", "16", "8")]


@pytest.mark.parametrize("text", ["Disable the dp attention for decode.", "Turn the dp attention off for decode."])
def test_a_setting_whose_words_name_an_arm_no_job_is_of_is_judged_on_its_own(tree: Tree, text: str) -> None:
    """The decode workers pass --enable-dp-attention, but the config's dp-attn field (what the arm "dp
    attention" selects) is false: the words name the setting, not a part of the sweep."""
    found = judged(tree, *_SGLANG_2P2D, "      enable-dp-attention: true", "      enable-dp-attention: true", text)
    assert [(f.rule, f.data["subject"], f.data["claimed"]) for f in found] == [
        ("claim-contradicted", "--enable-dp-attention", "off")]
    assert "for all 3 decode jobs" in found[0].message


# The TP4 jobs of the config get 0.7, the TP8 jobs keep 0.8.
_BY_TP = '--mem-fraction-static "$([ "$TP" = 8 ] && echo 0.8 || echo 0.7)" '


@pytest.mark.parametrize("text, jobs", [
    ("Non-TP8 jobs use --mem-fraction-static 0.7.", ""),
    ("non-TP8: --mem-fraction-static 0.7", ""),
    ("Non-TP8 jobs use --mem-fraction-static 0.8.", "for all 2 Non-TP8 jobs"),
    ("non-TP4: --mem-fraction-static 0.7", "for all 5 non-TP4 jobs"),
])
def test_the_jobs_of_every_parallelism_but_one_are_the_arm(tree: Tree, text: str, jobs: str) -> None:
    found = judged(tree, *_SGLANG, "--mem-fraction-static 0.8 ", _BY_TP, text)
    assert [f.rule for f in found] == (["claim-contradicted"] if jobs else [])
    assert all(jobs in f.message for f in found)


def test_a_setting_claimed_for_a_part_of_the_sweep_no_job_is_of_says_so(tree: Tree) -> None:
    found = judged(tree, *_SGLANG, "--mem-fraction-static 0.8 ", "--mem-fraction-static 0.85 ",
                   "Set --mem-fraction-static to 0.88 on TP16 DP-attention.", verbose=True)
    assert [(f.rule, f.data.get("phrase"), f.data.get("reason")) for f in found if f.rule == "claim-unverified"] == [
        ("claim-unverified", "--mem-fraction-static", "no job of the entry is of the part of the sweep the text names")]


_ATOM_K3 = ("kimik3-fp4-mi355x-atom-agentic-mtp", "benchmarks/single_node/agentic/kimik3_fp4_mi355x_atom_mtp.sh")


@pytest.mark.parametrize("text, claimed", [
    ("Disable the prefix caching.", "off"), ("Turn the prefix caching off.", "off"), ("Enable the prefix caching.", None)])
def test_a_feature_whose_flag_the_recipe_spells_with_underscores_is_that_flag(tree: Tree, text: str,
                                                                              claimed: str | None) -> None:
    """The recipe passes --enable_prefix_caching, the server's parser's other spelling of the term's
    --enable-prefix-caching: "prefix caching" names that flag, passed, and not the dashed one, absent."""
    found = judged(tree, *_ATOM_K3, "    --enable_prefix_caching\n", "    --enable_prefix_caching\n", text)
    assert [(f.rule, f.data["subject"], f.data["claimed"]) for f in found] == (
        [("claim-contradicted", "--enable_prefix_caching", claimed)] if claimed else [])
    if found:
        assert "but the recipe passes --enable_prefix_caching (benchmarks/single_node/agentic/" in found[0].message


def test_a_list_assigned_with_an_equals_sign_is_judged(tree: Tree) -> None:
    found = judged(tree, "dsv4-fp4-gb200-dynamo-vllm-agentic-mtp2-agg",
                   "benchmarks/multi_node/srt-slurm-recipes/vllm/deepseek-v4/agentic/agg-gb200-tp8-c4-mtp2-agentic.yaml",
                   "block-size: 256", "block-size: 256",
                   "--compilation-config.cudagraph_capture_sizes=[4, 8, 12, 16, 20, 24, 28, 32, 36, 40, 44, 48, 52, 56, 60]")
    assert [(f.rule, f.data["subject"], f.data["claimed"]) for f in found] == [
        ("claim-contradicted", "--compilation-config.cudagraph_capture_sizes",
         "[4, 8, 12, 16, 20, 24, 28, 32, 36, 40, 44, 48, 52, 56, 60]")]
