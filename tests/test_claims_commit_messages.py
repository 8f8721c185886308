"""Claim extraction on wordings of the commit messages of SemiAnalysisAI/InferenceX (Apache-2.0), read as PR
descriptions (bench/bench_claims_messages.py): each misreading below was a false finding of that replay's tuning
part, quoted from the commit it was found at (shortened where marked), beside a wording of the same words that
does state a setting and is still read."""

from __future__ import annotations

from typing import Any

import pytest

from ci_tools.claims.text.extract import extract
from ci_tools.claims.text.sentences import plain_source
from test_claims_sentences import catalog, normalise

CATALOG = catalog({
    "flags": ["--hicache-size", "--attention-backend", "--max-num-seqs", "--log-level", "--tokenizer-mode",
              "--tool-call-parser", "--kv-cache-dtype"],
    "env": ["VLLM_ROCM_QUICK_REDUCE_QUANTIZATION", "SGLANG_ROUTER_STDOUT_LOGS"],
})

CASES: list[tuple[str, list[list[Any]]]] = [
    # A word of prose after a setting's name is no value of it (78f72af342, 7bb1730b24, 79bd988e92, 504048f136).
    ("is one host pool per rank and GB-based --hicache-size works (the DSv4 path)", []),
    ("the --attention-backend yields lower TTFT here", []),
    ("Set VLLM_ROCM_QUICK_REDUCE_QUANTIZATION to support data-parallel attention mode.", []),
    ("The --max-num-seqs plumbing is unchanged from upstream.", []),
    ("Set --attention-backend to triton.", [["recipe", "--attention-backend", "triton", ""]]),
    # A role before another noun says whose thing a drop removes, not that the role's jobs go (89696c5ea9,
    # a141bfcb0e, 773a4523e5); the role's own jobs named so are still gone.
    ("remove decode context_length", []),
    ("remove prefill bootstrap-desync patch", []),
    ("Remove the prefill-only VLLM_ROCM_QUICK_REDUCE_QUANTIZATION env from the recipe.", []),
    ("Remove decode workers from the recipe.", [["arm", None, "no decode", "role:decode"]]),
    # Points listed after a drop verb are dropped, whatever separates them (fbb480e5f1, d648c68dc3).
    ("Remove c128, c160 and c196 from the DEP8 sweep.", []),
    ("移除 B200 SGLang AgentX DEP8 HiCache 扫描中的 c128、c160 和 c196 点。", []),
    ("Run c128, c160 and c196 on DEP8.", [["concurrency", None, "128,160,196 (all)", "ep8 dpa"]]),
    # "X=1 branch": a condition the code tests (bba56ea52e).
    ("Also switch the SGLANG_ROUTER_STDOUT_LOGS=1 branch to process substitution so logs stream.", []),
    ("Set SGLANG_ROUTER_STDOUT_LOGS=1 so logs stream.", [["recipe", "SGLANG_ROUTER_STDOUT_LOGS", "1", ""]]),
    # How many config keys, or a run's id, is no count of the sweep's points (f267602ff7, ac0d2a853a).
    ("Update image tags for 4 single-node configs:", []),
    ("The sweep covers three sequence length configurations.", []),
    ("The sweep has 4 configs.", [["count", None, "4 configs", ""]]),
    # Another program named in another clause of the sentence owns a flag no recipe knows (fa1f2e5889,
    # 504048f136: enroot's --arch).
    ("Pass --no-preflight only for Kimi K2.6 FP4 Dynamo-vLLM so srtctl can submit recipes whose model path is "
     "available on Slurm compute nodes.", []),
    ("fix(launch_gb300-cw): use enroot --arch aarch64, not arm64", []),
    # "skip" said of a setting, in either language, and a point "skipped" (a141bfcb0e, cba01a9152).
    ("多节点 HiCache 对 DeepSeek V4 跳过 --hicache-size。", []),
    ("The 4p3d-dep8-dep16 point is skipped.",
     [["arm", None, "no 4p3d-dep8-dep16", "prefill:ep8 prefill:dpa decode:ep16 decode:dpa 4P3D"]]),
    # Points moved "out of" an arm leave it (6b431f92b1).
    ("move conc=32 out of 1P2D", []),
    ("Run conc 32 on 1P2D.", [["concurrency", None, "32", "1P2D"]]),
    # A second round from the tuning part: every key of a kind counts keys (da5515841b, f4eaa39818); a point left
    # out bare or in words (cba01a9152, a141bfcb0e, d648c68dc3); a word that says what was missing before
    # (c1f3d47b17); what "将 X 替换为 Y" replaces (e9597c72b8); a root cause and an assertion report a failure
    # (f064a86f82, cc78fc9634).
    ("Bump vllm/vllm-openai image tag for all 3 NVIDIA GPT-OSS configs", []),
    ("- 4p3d-dep8-dep16 (3 decode workers) skipped", []),
    ("comment out the DP-attn c64/128 sweep block.", []),
    ("Sweep the DP-attn c64/128 block.", [["concurrency", None, "64,128 (all)", "dpa"]]),
    # ... but arms "commented out" in an aside are others (pull request 2378's head, judged true)
    ("switch agentic search-space to a single DEP lmcache arm at conc 76 (prior GPU-resident and dp-off arms "
     "commented out).", [["concurrency", None, "76", "dpa off:lmcache"]]),
    ("* add missing tool call parser for swe eval", []),
    ("将 Kimi K2.6 B200 Dynamo vLLM 扫描切换到 b200-new，并移除 DEP4 到 DEP8、并发 1024 的配置项。", []),
    ("将聚合式 TP8 c4 替换为对齐 B300 参数的 TP4 c4。", [["concurrency", None, "4", "tp4 nodpa"]]),
    ("Root cause: The concurrency-2048 job exhausted the eight-hour CI window.", []),
    ("has no calibrated FP8 KV scales, so --kv-cache-dtype fp8 asserts in the MSA", []),
    # A failed attempt and what the old code did (975194f133, 9e61bece85).
    ("Raising --max-num-seqs to 512 wasn't enough.", []),
    ("The prior mtp_flags used --attention-backend flashinfer.", []),
]


@pytest.mark.parametrize("text, claims", CASES, ids=[text[:60] for text, _ in CASES])
def test_commit_message_wording(text: str, claims: list[list[Any]]) -> None:
    found = extract(plain_source("x.md", text), CATALOG)
    assert [normalise(c) for c in found.claims] == claims


def test_a_word_of_prose_after_a_setting_is_said_to_be_unread() -> None:
    """No silent drop: the setting a prose word follows is still recorded, without a value."""
    found = extract(plain_source("x.md", "the --attention-backend yields lower TTFT here"), CATALOG)
    assert [(u.phrase, u.reason) for u in found.unverified] == [("--attention-backend", "no value next to the subject")]


def test_the_kernel_of_a_backend_is_its_value() -> None:
    from ci_tools.claims.text.values import Word, word_matches

    assert word_matches(Word("Triton", "triton"), "TRITON_ATTN")  # 8dc7ef6f72: "force M3 Triton attention backend"
    assert word_matches(Word("flash", "flash"), "FLASH_ATTN")
    assert not word_matches(Word("triton", "triton"), "FLASHINFER")
    assert not word_matches(Word("aiter", "aiter"), "aiter_fp8")  # a dtype, not a kind of backend


def test_milliseconds_are_no_megaseconds() -> None:
    from ci_tools.claims.text.values import number_matches, parse_number

    # 884cc79c82: "1000000ms" of AIPERF_HTTP_TCP_USER_TIMEOUT=1000000 (milliseconds) had been read as 1e12
    said = parse_number("1000000ms")
    assert said is not None and said.describe() == "1000000ms"
    assert number_matches(said, "1000000") and number_matches(said, "1000")
    assert not number_matches(said, "1000000000000")
    mega = parse_number("2M")
    assert mega is not None and number_matches(mega, "2000000")


def test_a_heading_line_scopes_the_list_under_it() -> None:
    """e3a85218d6: "conc-4096 recipe parameters:" over its items, each said of every job until then; the items
    are said of what the heading names, up to the list's end (a blank line)."""
    text = ("conc-4096 recipe parameters:\n- --max-running-requests: 4608 -> 4352\n\n- --max-num-seqs 256\n\n"
            "Tuning of the TP8 recipe:\n- --max-num-seqs: 128 -> 256\n")
    found = extract(plain_source("x.md", text), CATALOG)
    assert [(c.location.line, normalise(c)) for c in found.claims] == [
        (1, ["concurrency", None, "4096", ""]),
        (2, ["recipe", "--max-running-requests", "4352", "c4096"]),
        (4, ["recipe", "--max-num-seqs", "256", ""]),
        (7, ["recipe", "--max-num-seqs", "256", "tp8 nodpa"]),
    ]


def test_a_heading_line_with_a_full_width_colon_scopes_its_list_too() -> None:
    """A heading typed with a Chinese input method ends in "：", the colon written full-width: its list is said of
    what it names, as under ":"; the item after the blank line is not."""
    text = "TP8 recipe parameters：\n- --max-num-seqs: 128 -> 256\n\n- --max-running-requests 4352\n"
    found = extract(plain_source("x.md", text), CATALOG)
    assert [(c.location.line, normalise(c)) for c in found.claims] == [
        (2, ["recipe", "--max-num-seqs", "256", "tp8 nodpa"]),
        (4, ["recipe", "--max-running-requests", "4352", ""]),
    ]
