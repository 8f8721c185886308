"""Wordings read as they are meant, each on the real tree, from one check of one commit appending them all.

From the InferenceX changelog before 2026-05-01, which the checker misread: a from-to without "from", a plan,
a concurrency that labels a branch, "add X flag to <fleet>", a value "for <arm> configs", an aggregated row of a
disaggregated config, worker counts before each role, "distinguishes A from B", "with ... variants".  From the
generated paraphrases: a role between an on/off or keeping verb and its subject ("Enable prefill X", "Keep
prefill X on V"), a setting's head noun
before "from A to B" ("the batched-token budget from 8192 to 32K"), a program word that is
a word of the setting's own name ("the moe runner backend" names no runner), a snake-case name that is also a flag's
("attention_backend" of --attention-backend, not of a structured flag's key).  And a setting that is a dimension
of the matrix (--enable-dp-attention) claimed on, missing only where the config runs without that dimension; a flag
of an installer's command line ("pip install --no-deps --pre vllm"); the arms a clause excepts ("for all configs
except ep=8", "everywhere but the ep=8 rows", "Except for ep=8, ..."); "Stop passing X" drops X; a clause that ends
in "before" tells the old state; a word of prose after a setting only ever given numbers is no value of it; a first
clause "If/When ..." is a condition of the clause after it.  From the forms added to the generator and measured
blind: a word of prose glued to its value ends a setting named in words ("the gpu memory utilization=0.8"), and "Turn
on/off X" says on/off before the setting.  From probes of a key with several recipe files: the recipes a sentence
names by their file names or by the words of those names before "recipe(s)" are the jobs it speaks of.  From
probes of a default with exceptions per concurrency: "8192 at conc 1/32 and 16384 at conc 512" (a number another
concurrency follows is no point of the list before), "65536 (8192 for conc<=32, 16384 for conc 512)" (an aside of
values for concurrencies is no scope of the clause), "except at conc 1, 32 and 512"; and of roles: the arms a
contrast names ("unlike decode") are where the claim does not hold, a role before a verb after "recipe" is the
clause's subject, "0.8 / 0.9 for prefill / decode" gives each part its own value (not read as one); a number
"up to", "max" or "or fewer" is a bound, which jobs that do not pass the setting neither keep nor break; "is gone"
and "is replaced" tell the old state, and a verb of change after a setting ("changes from") is no value of it.
From probes of defaults with exceptions per arm and role: "above/below conc N" is a bound of the jobs, not conc N;
a flag in the old part of a change ("from --flag A to B", "moved off --flag A to B") takes the value after "to";
the arm another arm mirrors is no scope; values joined by "or" are alternatives; "prefill's X" is the role's own;
an aside about another config ("(the MTP key keeps ...)") is that config's; "the old ... sweep" is the state before;
"outside X" and "(X excepted)" set arms apart; "non-X rows", "the remaining rows", "TP>4" and "the smaller TP" name
jobs by a condition the reader leaves unresolved; "TP=4 → --flag V" gives the arm's value; "V or higher" is a floor
and "from A to B depending on TP" a range over the jobs, neither a value.  From probes of entries of two keys: a
vendor named for its hardware ("for the AMD key", "NVIDIA: ...") is the configs that run on it, and a setting named by
its value ("B200: trtllm_mla attention") is said of the configs the words before its clause name.  From probes of an
agentic key: a KV-offload backend's own setting ("--hicache-ratio 8") is not missing where the matrix runs without
offload, and a value after ", or" is for other jobs ("8192, or 8192 * TP with DP attention").  From probes of the old
state in other words: "Undoes X", "Switching away from X", "No more X", "had X until this PR", "Last week's run used X",
"... is over", "In #1234 we set X", "Old value X", and a dropped value ("Stop using --flag V") are no claims of X.
From pull requests as they were proposed: a negation before words that only say how a setting would be given ("no
explicit X", "WITHOUT setting X=V") negates it, "NAME=a,b" is one value, and a flag a shell variable holds for another
program (LMCACHE_CMD=(lmcache server ...)) is that program's; a model card's precision ("MXFP4") names the config keys of
that precision (dsr1-fp4-...).  A bullet's heading in key words ("H200: ...; ...") is said of those configs in each
of its sentences; "otherwise" is a condition; "8192*TP" is a value per tensor-parallel rank; "(EP>1)" bounds the jobs;
"the drafter is pinned to X" is the draft model's; a role's setting is said of the jobs with that role's servers; words
that name only a listed key that runs no job speak of no job; a JSON list of one word is that word; an image tag written
short ("nightly-20260624", a shortened commit) is the tag it abbreviates; a count of topologies counts layouts; "Drop
--flag V / --other" drops both; "no tp2 (...)" says no TP2 job runs; an experiment's log ("Run a second diagnostic at
...", "Next isolate ...: raise X", "A/B at ...") reports runs; a lead before a colon that names its jobs by a condition
("For non-TP4 configs: ...") conditions the list after it; a flag in parentheses after another project's change
("#35017 (--flag)") is the feature that change brings; a parallelism glued to its offload ("DEP8+hicache") is the arm
with that offload; "c10::AcceleratorError" and a commit "c924543" are no concurrencies; an arm the entry says no job runs
("No EP8 arm. EP8 only pays off ...") is spoken of hypothetically after; a model's name without its version ("the
MiniMax reasoning parser") or the short name its keys give it ("DSv4") names the parser value spelled minimax_m3 or
deepseek_v4; "TP2 c4/c16 plus TEP2 c8/c32" lists two arms, each with its points; the GPUs named right after a value
("X on H100/H200, Y on B200") are the configs it is said of; the later points of a parallel list leave their noun out
("TP16 at concurrency 1-8, TEP16 at 4-32"); a label right after its points is their arm ("conc [4,8] non-DPA + conc
[16,32] DPA"); lists that each claim all the points of the same jobs are of arms the reading lost; a "+" after a
space is no floor ("conc 4/16 + ..."); "TP4-DEP4" is the DEP4 arm at TP4 ("TP4-DPA" TP4 with DP-attention); the ladders a list "mirrors" are what it is
compared with; "before expanding to ..." is a plan; the points a purpose names ("so concurrency 56 and 70 leave
room") are some of the sweep's; a tag with a wildcard ("v0.5.11-rocm700-mi3*x") is a pattern, not one tag; "widen X recipe points to Y" changes X;
arms "commented out" do not run; "three seq-len configs" counts sequence lengths; "improving ..." reports a gain.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from test_claims_seed import git, run_claims

SINGLE = "dsv4-fp4-mi355x-vllm"  # TP8, 8k1k, conc 4-512; its recipe passes --gpu-memory-utilization 0.8
DEP = "dsv4-fp4-mi355x-atom"  # has DEP (dp-attn) rows
DISAGG = "dsv4-fp4-gb200-dynamo-vllm-mtp2"  # 8k1k; its conc-1 row is 1P0D: prefill TP8, no decode worker; its
# conc 16/32/64 row one DEP8 prefill and four TP8 decode workers
B300 = "dsv4-fp4-b300-sglang"  # its recipe passes --moe-runner-backend flashinfer_mxfp4 on ep=4 only
MINIMAX = "minimaxm3-fp4-gb200-dynamo-vllm-agentic-agg-mtp"  # prefill's msa decode backend: not FLASHINFER
DSPARK = "kimik3-fp4-b300-vllm-agentic-dspark"  # --attention-backend and speculative-config.attention_backend
BUDGET = "dsv4-fp4-b200-vllm"  # its recipe passes --max-num-batched-tokens 2048 (8k1k) or the ISL
SGL_DISAGG = "dsv4-fp4-gb300-dynamo-sglang"  # DEP workers pass --enable-dp-attention; its TP4-only row does not
METRICS = "dsv4-fp4-b200-sglang-agentic-hicache-mtp"  # its recipe passes --enable-metrics; its kv-offloading: dram
# rows pass --hicache-ratio 8 (the others no --hicache-* flag), --chunked-prefill-size 8192 (8192 * TP with DP
# attention)
RECIPES = "dsv4-fp4-gb200-dynamo-vllm"  # five srt-slurm recipes: low-latency, low-middle-curve, three MegaMOE ones
AMD_SGL = "dsr1-fp4-mi355x-sglang"  # conc 4-64; --chunked-prefill-size 196608, 32768 above conc 32 (8k1k)
BY_TP = "dsr1-fp8-b200-sglang"  # TP8 --mem-fraction-static 0.82, TP4 0.95; --attention-backend trtllm_mla
QWEN_ATOM = "qwen3.5-fp8-mi355x-atom"  # TP2, TP4 and TP8 at conc 4-256
TWO_VENDORS = f"{BY_TP}+{AMD_SGL}"  # one entry of both keys: B200 (trtllm_mla attention) and MI355X (aiter)
VARIED = "qwen3.5-fp4-b200-trt"  # TP2, TP4, TP8 rows; dp-attn on some TP4 and TP8 rows, none on TP2

TRT_AGENTX = "dsv4-fp4-gb300-dynamo-trt-agentx"  # srt-slurm recipes: UCX_TLS: cuda_ipc,cuda_copy,sm,self,tcp per role

TWO_PRECISIONS = "dsr1-fp8-mi355x-sglang+dsr1-fp4-mi355x-sglang"  # --num-continuous-decode-steps 8 (fp8), 4 (fp4)
LMCACHE = "minimaxm3-fp8-mi300x-vllm-agentic-mtp"  # its LMCache arm starts `lmcache server` from LMCACHE_CMD=(...)
TWO_GPUS = "dsr1-fp8-b200-sglang+dsr1-fp8-h200-sglang"  # B200: trtllm_mla, --stream-interval 30; H200: flashinfer, 10
PER_TP = "dsv4-fp4-mi355x-sglang-mtp"  # --chunked-prefill-size $((ISL * TP)) with DP attention: 65536 at TP8 8k1k
DRAFTED = "minimaxm3-fp8-h200-vllm-agentic-mtp"  # --attention-backend TRITON_ATTN; its drafter's FLASH_ATTN
GLM_AGENTX = "glm5.2-fp4-gb300-dynamo-sglang-agentic-agg+glm5.2-fp4-gb300-dynamo-sglang-agentic-disagg"  # decode
# workers chunked-prefill-size 64 and speculative-num-steps 2; the aggregated worker 8192 and 4
NOT_YET = "dsr1-fp8-mi355x-sglang+qwen3.5-fp8-mi355x-sglang-srt-disagg"  # TP4 and TP8; the second key is in no master
TOOL_CALLS = "dsv4-fp8-h200-vllm"  # its recipe passes --enable-auto-tool-choice (SINGLE's does not)
PINNED = "dsv4-fp8-mi300x-vllm"  # image vllm/vllm-openai-rocm:nightly-09663abde0f50944a8d5ea30120666024b503faa

# Its DEP recipes set SGLANG_OPT_DEEPGEMM_MEGA_MOE_NUM_MAX_TOKENS_PER_RANK and ..._USE_FP4_ACTS=1; its TP4 c1
# recipe neither.
FP4_ACTS = "SGLANG_OPT_DEEPGEMM_MEGA_MOE_USE_FP4_ACTS"
MEGA_TOKENS = "SGLANG_OPT_DEEPGEMM_MEGA_MOE_NUM_MAX_TOKENS_PER_RANK"
CLIENT_DSV4 = "dsv4-fp4-b200-trt-mtp"  # its recipe passes --dsv4 to run_benchmark_serving, not to the server

# lmsysorg/sglang:v0.5.12-rocm700-mi35x and lmsysorg/sglang-rocm:v0.5.16-rocm720-mi35x-20260726
TWO_IMAGES = f"{AMD_SGL}+qwen3.5-fp8-mi355x-sglang"

# node rank 0 starts sglang-router with --policy consistent_hashing --dp-aware (server_sglang.sh)
ROUTED = "dsv4-fp4-mi355x-sglang-disagg-agentic-hicache-mtp"
VLLM_ROUTED = "dsv4-fp4-b200-vllm-agentic-mtp"  # vllm-router --policy consistent_hash in front of its DP-attention jobs

PER_COMMIT = 90
# The old state in other words, each about dsr1_fp8_b200.sh (trtllm_mla attention, TP8 --mem-fraction-static 0.82):
# each had given an error or a warning on the old value.
OLD_STATES = ["Undoes --attention-backend flashinfer", "Switching away from --attention-backend flashinfer",
              "No more --attention-backend flashinfer", "TP8 had --mem-fraction-static 0.9 until this PR",
              "Up to this PR, TP8 used --mem-fraction-static 0.9", "Last week's run used --attention-backend flashinfer",
              "The --attention-backend flashinfer experiment is over; trtllm_mla stays",
              "In #1234 we set --mem-fraction-static 0.9; this sets 0.82 on TP8",
              "Old value --mem-fraction-static 0.9; new value 0.82 on TP8", "Stop using --attention-backend flashinfer",
              "Dropped --attention-backend flashinfer in favour of trtllm_mla",
              "Prior --mem-fraction-static: 0.9. New: 0.82 (TP8)",
              # from pull requests as they were proposed: a flag's value before "to" and another flag, an
              # "Old <noun>:" label of the parts of a sweep
              "Switch --attention-backend flashinfer to --attention-backend trtllm_mla.",
              "On TP8, switch --attention-backend flashinfer to --moe-runner-backend flashinfer_trtllm.",
              "Old topologies: TP2 (c1-64) and TP16 (c512-1024).", "Previous sweep: TP2 at conc 1-64."]
# A negation before words that only say how a setting would be given ("no explicit X", "WITHOUT setting X=V"), about
# dsr1_fp8_b200.sh (no --enable-torch-compile, SGL_ENABLE_JIT_DEEPGEMM=false, --stream-interval 30): each had been
# read as the setting given (an error).
NEGATED = ["vLLM resolves the quant config itself (no explicit --enable-torch-compile).",
           "Run with CUDA graphs, without setting --enable-torch-compile.",
           "Run with CUDA graphs, WITHOUT setting SGL_ENABLE_JIT_DEEPGEMM=true.",
           "Run without exporting SGL_ENABLE_JIT_DEEPGEMM=true.", "Run without passing --stream-interval 10."]
# (key, sentence), each its own entry; the test names what each must (not) give.
SENTENCES = [
    (SINGLE, "Switch gpu-memory-utilization 0.95 to 0.8"),  # cdcf0df19dce: the to-value is the claim
    (SINGLE, "Switch gpu-memory-utilization 0.8 to 0.95"),
    (SINGLE, "Sweep will expand to conc 4-1024 once ROCm PR3 lands"),  # a1adf12b018d: a plan
    (SINGLE, "Sweep conc 4-1024"),
    (SINGLE, "conc=2048/4096: use the mega_moe deepep backend"),  # e3a85218d645: the branch the settings are for
    (SINGLE, "Add --exclusive flag to MI355X single-node salloc to prevent node sharing"),  # d5a013b70788
    (DEP, "Use MTP=2 for conc smaller than 128 and reduce MTP to 1 for DEP configs"),  # fcd11136cc50
    (DISAGG, "Recipes cover 8k/1k aggregate TP8 low-latency conc=1"),  # ef5dee445aaa: the 1P0D row
    (DISAGG, "Low-latency bridge 1P DEP8 + 4D TP8 no-offload conc=16/32/64"),  # ef5dee445aaa: that row's points
    (DISAGG, "Low-latency bridge 1P DEP8 + 4D TP8 no-offload conc=16/32/64/128"),
    (B300, "ep=8 naming convention in yaml distinguishes mega_moe from existing flashinfer_mxfp4 ep=4 entries"),
    (VARIED, "Expand from tp1 to tp2/tp4/tp8 with expert parallel and dp-attn variants"),  # 79bd988e9286
    (VARIED, "Expand from tp1 to tp2/tp4/tp8 with dp-attn"),
    (DISAGG, "Disable prefill NCCL_MNNVL_ENABLE."),  # every prefill worker's environment sets it to 1
    (DISAGG, "Enable prefill NCCL_MNNVL_ENABLE."),
    (BUDGET, "Change the batched-token budget from 8192 to 123456."),
    (BUDGET, "Change the batched-token budget from 8192 to 2048."),  # 8192 at 8k1k up to conc 128
    (B300, "Keep the moe runner backend on flashinfer_cutedsl."),
    (B300, "Keep the moe runner backend on flashinfer_mxfp4."),
    (B300, "Runner: launch_b300-nv.sh updated; --moe-runner-backend flashinfer_cutedsl added for its path."),
    (MINIMAX, "Keep prefill minimax_m3_msa_decode_backend on FLASHINFER."),
    (DSPARK, "Set attention_backend to FLASHINFER_MLA."),
    (DSPARK, "Set attention_backend to TOKENSPEED_MLA."),
    (SGL_DISAGG, "Disagg flag set (nixl transfer backend, enable-dp-attention + moe-a2a-backend deepep) cross-checked "
                 "against PR 75"),  # 504048f136a1
    (SINGLE, "Reinstall aiter via pip install --no-build-isolation"),
    (SINGLE, "Install with pip install --no-deps --pre vllm"),
    (SINGLE, "Serve with --no-build-isolation"),
    (SINGLE, "The wheel is installed with --no-deps to keep torch"),
    (SINGLE, "Containers start with --privileged and --network host"),
    (SINGLE, "Run hf download with --max-workers 16"),
    (SINGLE, "Use --no-deps"),
    (SINGLE, "Pass --enable-foo-bar"),
    (B300, "--moe-runner-backend flashinfer_mxfp4 for all configs except ep=8"),
    (B300, "--moe-runner-backend flashinfer_mxfp4 everywhere but the ep=8 rows"),
    (B300, "--moe-runner-backend flashinfer_mxfp4, with the exception of ep=8"),
    (B300, "Except for ep=8, use --moe-runner-backend flashinfer_mxfp4"),
    (B300, "Use --moe-runner-backend flashinfer_mxfp4 but not on ep=8"),
    (B300, "--moe-runner-backend flashinfer_cutedsl apart from ep=8"),
    (B300, "--moe-runner-backend flashinfer_mxfp4 for all configs"),
    (B300, "Stop passing --moe-runner-backend flashinfer_mxfp4 on EP8"),
    (B300, "Stop passing --moe-runner-backend on TP4"),
    (B300, "The EP8 rows had --moe-runner-backend flashinfer_mxfp4 before; TP4 rows keep it"),
    (DEP, "--max-num-seqs follows CONC (up to 2048)"),
    (DEP, "--max-num-seqs ranges from 16 to 2048"),
    (DEP, "If DP_ATTENTION=true and CONC>=64, pass --enable-tbo"),
    (DEP, "When CONC>=64, export GPU_MAX_HW_QUEUES=8"),
    (DEP, "Set --max-num-seqs to 4096"),
    (SINGLE, "Keep the gpu memory utilization=0.8."),
    (SINGLE, "Keep the gpu memory utilization=0.7."),
    (SINGLE, "Align the flags with the sibling recipe: GPU memory utilization=70 %."),
    (DEP, "Turn on ATOM_DISABLE_MMAP."),
    (DEP, "Turn off ATOM_DISABLE_MMAP."),
    (METRICS, "Turn off the metrics."),
    (METRICS, "Turn on the metrics."),
    (SINGLE, "First pass: set --gpu-memory-utilization to 0.9. || Final: lower --gpu-memory-utilization to 0.8."),
    (SINGLE, "First pass: set --gpu-memory-utilization to 0.8. || Final: raise --gpu-memory-utilization to 0.9."),
    (SINGLE, "Set --gpu-memory-utilization to 0.9. || --gpu-memory-utilization 0.9 leaves room for the KV cache."),
    (SINGLE, "Sweep TP8 at conc 4-64 first. || Extend the TP8 sweep to conc 4-512."),
    (SINGLE, "Sweep TP8 at conc 4-64. || Add a TP4 arm at conc 4-512."),
    (SINGLE, "--enable-prefix-caching is NOT passed."),
    (SINGLE, "The --no-enable-prefix-caching flag is not passed."),
    (SINGLE, "Keep the TP8 sweep on GPU memory without adding a DRAM offload arm."),
    (VLLM_ROUTED, "Keep the TP8 and DEP8 matrix entirely on SimpleCPU without adding Mooncake or more TP8 points."),
    ("dsr1-fp4-b200-dynamo-trt", "Update the container image to `0.8.1post1`."),  # the config: 0.8.1.post1
    (BUDGET, "Optimize the decode path by batching one-token sparse-attention calls across active requests."),
    (BUDGET, "Set the batched-token budget to one."),
    (SINGLE, "generate_sweep_configs.py: evals now default-on, matching the --evals-only behavior."),
    (SINGLE, "Evals now default-on, as with --evals-only."),
    ("dsr1-fp4-b200-dynamo-trt", "Update the container image to `0.8.2post1`."),
    ("qwen3.5-fp8-mi355x-sglang", "Use lmsysorg/sglang-rocm:v0.5.16-rocm720-mi35x."),  # the config: ...-mi35x-20260726
    (RECIPES, "Set decode gpu-memory-utilization to 0.85 on the low-middle-curve recipe"),
    (RECIPES, "Set decode gpu-memory-utilization to 0.95 on the low-middle-curve recipe"),
    (RECIPES, "MegaMOE recipes: moe-backend deep_gemm_mega_moe, TORCH_SYMMMEM=NVSHMEM"),
    (RECIPES, "Use --moe-backend deep_gemm_mega_moe on the low-latency recipe"),
    (RECIPES, "Set prefill gpu-memory-utilization to 0.95 for the high-throughput and max-throughput recipes"),
    (RECIPES, "In disagg-gb200-low-latency.yaml and disagg-gb200-low-middle-curve.yaml, prefill gpu-memory-utilization "
              "is 0.8"),
    (RECIPES, "In disagg-gb200-low-latency.yaml and disagg-gb200-max-tpt-megamoe.yaml, prefill gpu-memory-utilization "
              "is 0.8"),
    (B300, "chunked-prefill-size 65536 by default; 8192 at conc 1/32 and 16384 at conc 512"),
    (B300, "Use chunked-prefill-size 65536 (8192 for conc<=32, 16384 for conc 512)"),
    (B300, "Set chunked-prefill-size to 65536 except at conc 1, 32 and 512"),
    (B300, "Set chunked-prefill-size to 32768 except at conc 1, 32 and 512"),
    (RECIPES, "On the low-latency recipe prefill uses 0.8 gpu-memory-utilization, unlike decode (0.9)"),
    (RECIPES, "On the low-latency recipe prefill uses gpu-memory-utilization 0.9, unlike decode"),
    (RECIPES, "Low-latency recipe: gpu-memory-utilization 0.8 / 0.9 for prefill / decode"),
    (B300, "--cuda-graph-max-bs 1088 max"),
    (B300, "Up to 1088 --cuda-graph-max-bs"),
    (B300, "--cuda-graph-max-bs of 1088 or fewer"),
    (B300, "Cap --cuda-graph-max-bs at 256"),
    (B300, "--moe-runner-backend flashinfer_cutedsl is gone; TP4 uses flashinfer_mxfp4"),
    (B300, "TP4 --moe-runner-backend changes from flashinfer_cutedsl"),
    (B300, "The flashinfer_cutedsl MoE runner backend that TP4 used is replaced"),
    (B300, "--moe-runner-backend flashinfer_mxfp4 (ep=8 keeps mega_moe)"),
    (B300, "--moe-runner-backend flashinfer_cutedsl (ep=8 keeps mega_moe)"),
    (B300, "Default --moe-runner-backend is flashinfer_mxfp4; the ep=8 configs override it"),
    (B300, "Default --moe-runner-backend is flashinfer_cutedsl; the ep=8 configs override it"),
    (AMD_SGL, "chunked-prefill-size 196608, dropping to 32768 above conc 32"),
    (AMD_SGL, "chunked-prefill-size 196608 below conc 64"),
    (AMD_SGL, "chunked-prefill-size 65536 above conc 32"),
    (AMD_SGL, "Search-space: tp=8 and tp=4 over conc 4-64"),  # 2120 of the changelog: "over" a range is no bound
    (BY_TP, "Moved off --attention-backend flashinfer to trtllm_mla"),
    (BY_TP, "Migrated off --attention-backend trtllm_mla onto flashinfer"),
    (BY_TP, "Switch from --attention-backend trtllm_mla to flashinfer"),
    (BY_TP, "TP4 mirrors TP8 except for --mem-fraction-static 0.95"),
    (BY_TP, "TP4 mirrors TP8 except for --mem-fraction-static 0.9"),
    (DEP, "-tp 4 or 8, never 2"),
    (DEP, "-tp 2 or 4"),
    (RECIPES, "Low-latency recipe: prefill's max-num-seqs is 16"),
    (RECIPES, "Low-latency recipe: decode's max-num-seqs is 16"),
    (QWEN_ATOM, "TP2/TP4/TP8 at conc 4-256 (the MTP key keeps TP8 conc 4-128)"),
    (QWEN_ATOM, "TP2/TP4/TP8 at conc 4-512 (the MTP key keeps TP8 conc 4-128)"),
    (QWEN_ATOM, "The old -tp 8 only sweep now also runs TP2 and TP4"),
    (BY_TP, "--mem-fraction-static 0.82 outside TP4"),
    (BY_TP, "--mem-fraction-static 0.85 outside TP4"),
    (BY_TP, "--mem-fraction-static 0.82 (TP4 excepted)"),
    (BY_TP, "--mem-fraction-static 0.82 on all non-TP4 rows"),
    (BY_TP, "--mem-fraction-static 0.82 on the remaining rows"),
    (BY_TP, "--mem-fraction-static 0.82 for TP>4"),
    (BY_TP, "--mem-fraction-static 0.85 for TP>4"),
    (BY_TP, "--mem-fraction-static 0.95 on the smaller TP"),
    (BY_TP, "TP=4 → --mem-fraction-static 0.95; TP=8 → 0.82"),
    (BY_TP, "TP=4 → --mem-fraction-static 0.9; TP=8 → 0.82"),
    (BY_TP, "--mem-fraction-static 0.82 or higher"),
    (BY_TP, "--chunked-prefill-size from 8192 to 32768 depending on TP"),
    (TWO_VENDORS, "SGLANG_USE_AITER=1 for the AMD key"),
    (TWO_VENDORS, "SGLANG_USE_AITER=1 for the NVIDIA key"),
    (TWO_VENDORS, "AMD: aiter attention; NVIDIA: trtllm_mla attention"),
    (TWO_VENDORS, "B200: trtllm_mla attention"),
    (TWO_VENDORS, "MI355X: --cuda-graph-max-bs=128"),
    (METRICS, "--hicache-ratio 8 for the offload arms; the GPU-resident row has no HiCache"),
    (METRICS, "--hicache-ratio 4 for the offload arms"),
    (METRICS, "--chunked-prefill-size 8192, or 8192 * TP with DP attention"),
    (METRICS, "--chunked-prefill-size 4096, or 8192 * TP with DP attention"),
    (BY_TP, "--max-running-requests 128 (32 for tp=4)"),
    (BY_TP, "--max-running-requests 256 (32 for tp=4)"),
    *[(BY_TP, sentence) for sentence in OLD_STATES],
    *[(BY_TP, sentence) for sentence in NEGATED],
    (BY_TP, "vLLM resolves the quant config itself (no explicit --quantization)."),
    (BY_TP, "Switch --attention-backend trtllm_mla to --attention-backend flashinfer."),
    (BY_TP, "Old topologies: TP8 (c4-64). New topologies: TP2 (c1-64)."),
    (TRT_AGENTX, "Set UCX_TLS=cuda_ipc,cuda_copy,sm,self,tcp in the prefill and decode environments."),
    (TRT_AGENTX, "Set UCX_TLS=cuda_ipc,cuda_copy in the prefill and decode environments."),
    (TWO_PRECISIONS, "For the MXFP4 config, use --num-continuous-decode-steps 4."),
    (TWO_PRECISIONS, "MXFP4 uses --num-continuous-decode-steps 4, MXFP8 uses 8."),
    (TWO_PRECISIONS, "MXFP8 uses --num-continuous-decode-steps 4."),
    (LMCACHE, "Run the LMCache server with --l1-read-ttl-seconds 7200."),
    (LMCACHE, "Add --supported-transfer-mode lmcache_driven to the LMCache server command."),
    (BY_TP, "Drop --enable-flashinfer-allreduce-fusion"),
    (TWO_GPUS, "H200: keep the image; use --attention-backend flashinfer and --stream-interval 10"),
    (TWO_GPUS, "B200: keep the image; --attention-backend trtllm_mla; --stream-interval 30"),
    (TWO_GPUS, "H200: keep the image; use --attention-backend trtllm_mla"),
    (B300, "Three regimes: DP-attention at conc 2048 and above -> MegaMoE; otherwise flashinfer_mxfp4"),
    (PER_TP, "With DP attention, --chunked-prefill-size is 8192 * TP."),
    (PER_TP, "With DP attention, --chunked-prefill-size is 16384 x TP."),
    (SINGLE, "Add --enable-expert-parallel (EP>1)."),
    (SINGLE, "Add --enable-expert-parallel (TP>1)."),
    (DRAFTED, "The drafter is pinned to attention_backend FLASH_ATTN."),
    (DRAFTED, "The drafter is pinned to attention_backend TRITON_ATTN."),
    (GLM_AGENTX, "EAGLE speculative decoding, decode speculative-num-steps 2."),
    (GLM_AGENTX, "Set decode chunked-prefill-size to 8192."),
    (NOT_YET, "Port the production Qwen3.5-397B topology as two TP2 nodes at concurrency 8, with --mem-fraction-static 0.5."),
    (NOT_YET.split("+")[0], "Port the Qwen3.5-397B topology as two TP2 nodes at concurrency 8."),
    (B300, "Update the SGLang image to nightly-20260624."),  # lmsysorg/sglang:nightly-dev-cu13-20260624-b2c8f7a2
    (B300, "Update the SGLang image to nightly-20260625."),
    (PINNED, "Bump image to nightly-09663abde0."),
    (PINNED, "Bump image to nightly-09663abdff."),
    (B300, "The sweep covers 4 topologies."),  # 5 rows: TP8, TP4, TP4 with DP attention, DEP8 at two concurrencies
    (B300, "The sweep covers 3 topologies."),
    (SINGLE, "Drop --tool-call-parser deepseek_v4 / --enable-auto-tool-choice (not in recipe)"),
    (TOOL_CALLS, "Drop --tool-call-parser deepseek_v4 / --enable-auto-tool-choice."),
    (BY_TP, "Latency-end sweep (TP8, TP4) at low concurrency; no tp2 (the draft head leaves too little KV room at TP2)"),
    (BY_TP, "No TP4 (too little KV headroom at TP4)."),
    (BY_TP, "Run a second diagnostic at TP2 c8/c16 before publishing the final frontier."),
    (BY_TP, "Next isolate only the memory budget at TP8: raise --mem-fraction-static from 0.82 to 0.9 while keeping "
            "every other setting fixed."),
    (BY_TP, "Exclusive-node A/B at TP2 conc 8 on the nightly."),
    (BY_TP, "For non-TP4 configs: keep the image, set --mem-fraction-static 0.82 and --attention-backend trtllm_mla."),
    (BY_TP, "For non-TP4 configs: keep the image, set --mem-fraction-static 0.7 and --attention-backend trtllm_mla."),
    ("dsr1-fp8-h200-sglang", "Bump the image, which picks up sgl-project/sglang#35017 "
                             "(--enable-flashinfer-allreduce-fusion)."),
    ("dsr1-fp8-h200-sglang", "Bump the image and pass --enable-flashinfer-allreduce-fusion."),
    (METRICS, "Keep DEP8+hicache at conc 32/64/96."),
    (METRICS, "Cut the TP8 no-offload row to conc 1-5; keep TP8+hicache at conc 8/10/16/32; and add a DEP8+hicache row "
              "at conc 32/64/96."),
    (METRICS, "Keep DEP8+hicache at conc 32/48/64."),
    (SINGLE, "No EP8 arm. EP8 only pays off with the MegaMoE backend."),
    (SINGLE, "No TP8 arm. TP8 only pays off with the MegaMoE backend."),
    (BY_TP, "It page-faults with c10::AcceleratorError at startup."),
    (BY_TP, "Bump the image to one with commit c924543 of the integration branch."),
    ("minimaxm3-fp8-h200-vllm-agentic-mtp", "Use the MiniMax reasoning parser."),
    ("minimaxm3-fp8-h200-vllm-agentic-mtp", "Use the Qwen3 reasoning parser."),
    (VARIED, "Sweep TP2 c4/c16 plus TEP2 c8/c32."),
    (VARIED, "Sweep TP2 c2/c64 plus TEP2 c16/c64."),
    (TWO_GPUS, "All existing flags preserved (--attention-backend flashinfer on H100/H200, --attention-backend "
               "trtllm_mla on B200)"),
    (TWO_GPUS, "All existing flags preserved (--attention-backend trtllm_mla on H100/H200, --attention-backend "
               "flashinfer on B200)"),
    (VARIED, "Sweep TP2 at concurrency 4/16, TEP2 at 8/32, and DEP8 at 256/512/1024."),
    (VARIED, "Sweep TP2 at concurrency 4/16, TEP2 at 8/64, and DEP8 at 256/512/1024."),
    (VARIED, "Sweep TP4 conc [4] non-DPA + conc [1024] DPA."),
    (VARIED, "Sweep TP4 conc [4] non-DPA + conc [2048] DPA."),
    (VARIED, "Sweep concurrency 4/16 for latency, 8/32 for balanced."),
    (VARIED, "Sweep TP-only conc 4/16 + DP-attn/EP8 conc 256/512/1024."),
    (VARIED, "Points mirror the vllm-simple ladders: TP4-DEP4 conc [1024]; TP8-DEP8 conc [256, 512, 1024]."),
    (VARIED, "Points mirror the vllm-simple ladders: TP4-DEP4 conc [1024]; TP8-DEP8 conc [256, 512]."),
    (VARIED, "Start at TP2 conc 4 as a smoke test before expanding to the full TP2, conc 4-2048 sweep."),
    (VARIED, "Keep the image so concurrency 4 and 16 fit the workspace."),
    (AMD_SGL, "Update the SGLang image from v0.5.9-rocm700-mi3*x to v0.5.12-rocm700-mi3*x"),
    (VARIED, "Sweep TP4-DPA conc [1024]; TP8-DPA conc [256, 512, 1024]."),
    (SINGLE, "Use the model alias and widen the TP4 recipe points to TP8."),
    (SINGLE, "Sweep TP8 at conc 4-512; the TP4 and DEP8 arms are commented out."),
    (SINGLE, "Sweep TP8 at conc 4-512; the TP8 arm is commented out."),
    (AMD_SGL, "TP4 and TP8, all three seq-len configs (1k1k, 1k8k, 8k1k)."),
    (AMD_SGL, "Keep the image, improving TP4 throughput at high concurrency (~+2-4% at conc 256/512)."),
    (SGL_DISAGG, f"Enable W4A4 megamoe by appending {FP4_ACTS}=1 wherever {MEGA_TOKENS} is set"),
    (SGL_DISAGG, f"Enable W4A4 megamoe by appending {FP4_ACTS}=0 wherever {MEGA_TOKENS} is set"),
    (SGL_DISAGG, f"Enable W4A4 megamoe by appending {FP4_ACTS}=1"),
    (AMD_SGL, "Concurrency-gate --chunked-prefill-size 32768 for 8k1k: it wins at high concurrency."),
    (CLIENT_DSV4, "Benchmark prompts use the repository DSv4 encoder via --dsv4."),
    (TWO_IMAGES, "Update the SGLang ROCm images from v0.5.9-rocm700-mi35x to v0.5.12-rocm700-mi35x"),
    (TWO_IMAGES, "Update the SGLang ROCm images from v0.5.9-rocm700-mi35x/v0.5.16-rocm720-mi35x-20260726 to "
                 "v0.5.12-rocm700-mi35x"),
    (TWO_IMAGES, "Update the SGLang ROCm images to v0.5.12-rocm700-mi35x"),
    (ROUTED, "Add --dp-aware to the router."),
    (ROUTED, "Route prefills with --policy consistent_hashing."),
    (ROUTED, "Route prefills with --policy round_robin."),
    (VLLM_ROUTED, "Route DP-attention jobs through vllm-router with --policy consistent_hash."),
    (VLLM_ROUTED, "Route DP-attention jobs through vllm-router with --policy round_robin."),
    (VLLM_ROUTED, "Pass --max-num-seqs 3 to the router."),
    (SINGLE, "Recover the low-concurrency curve: 80.24 tok/s/GPU at TP8 conc-4, 452.47 at conc-64, and 767.12 at TP8+EP8 "
             "conc-256."),
    (SINGLE, "Recover the low-concurrency curve at TP8+EP8 conc-256."),
]
ENTRY = """
- config-keys:
    - {key}
  description:
    - "{text}"
  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/{n}
"""
BULLETS = " || "  # "A || B": one entry of two bullets (ENTRY's description, one line per bullet)
# The module's tests share one check of the sentences (``findings``): on one worker, or each worker checks them.
pytestmark = pytest.mark.xdist_group("claims-wordings")


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory, real_origin: Path) -> dict[str, list[dict[str, Any]]]:
    """The errors and warnings of each sentence, by its text, from one check of each commit appending them."""
    repo = tmp_path_factory.mktemp("wordings") / "ix"
    git(repo.parent, "clone", "-q", "--shared", str(real_origin), str(repo))
    changelog = repo / "perf-changelog.yaml"
    out: dict[str, list[dict[str, Any]]] = {sentence: [] for _, sentence in SENTENCES}
    # In commits of at most PER_COMMIT entries: a change that appends more is not read past the limit
    # (limits.max-appended-entries, 100).
    for first in range(0, len(SENTENCES), PER_COMMIT):
        lines = {}
        text = changelog.read_text(encoding="utf-8")
        for n, (key, sentence) in enumerate(SENTENCES[first:first + PER_COMMIT], first):
            bullets = sentence.split(BULLETS)
            at = text.count("\n") + 5  # the first description line
            text += ENTRY.format(key="\n    - ".join(key.split("+")), n=9100 + n,  # "a+b": two keys
                                 text='"\n    - "'.join(bullets))
            at += key.count("+")
            lines.update((at + k, sentence) for k in range(len(bullets)))
        changelog.write_text(text, encoding="utf-8")
        git(repo, "commit", "-q", "-am", "entries")
        _, report = run_claims(repo, "--base", "HEAD~1", "--head", "HEAD")
        for f in report["findings"]:
            if f["severity"] in ("error", "warning"):
                out[lines[f["line"]]].append(f)
    return out


def claimed(found: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    return [(f["rule"], str(f["data"].get("subject")), str(f["data"].get("claimed"))) for f in found]


def test_a_from_to_without_from_claims_the_value_after_to(findings: dict[str, list[dict[str, Any]]]) -> None:
    assert findings["Switch gpu-memory-utilization 0.95 to 0.8"] == []
    assert claimed(findings["Switch gpu-memory-utilization 0.8 to 0.95"]) == [
        ("claim-contradicted", "--gpu-memory-utilization", "0.95")]


def test_a_plan_claims_nothing_about_the_sweep(findings: dict[str, list[dict[str, Any]]]) -> None:
    assert findings["Sweep will expand to conc 4-1024 once ROCm PR3 lands"] == []
    assert [f["data"]["claimed"] for f in findings["Sweep conc 4-1024"]] == ["conc 4-1024"]


def test_a_concurrency_that_labels_settings_is_a_condition(findings: dict[str, list[dict[str, Any]]]) -> None:
    assert findings["conc=2048/4096: use the mega_moe deepep backend"] == []


def test_the_fleet_a_flag_is_added_to_is_no_value_of_it(findings: dict[str, list[dict[str, Any]]]) -> None:
    assert findings["Add --exclusive flag to MI355X single-node salloc to prevent node sharing"] == []


def test_a_value_for_some_configs_is_no_count_of_them(findings: dict[str, list[dict[str, Any]]]) -> None:
    found = findings["Use MTP=2 for conc smaller than 128 and reduce MTP to 1 for DEP configs"]
    assert found == []  # was: "the DEP sweep has 1 configs, but the config generates 10 jobs"


def test_an_aggregated_row_of_a_disaggregated_config_is_the_aggregate_arm(
        findings: dict[str, list[dict[str, Any]]]) -> None:
    assert findings["Recipes cover 8k/1k aggregate TP8 low-latency conc=1"] == []


def test_worker_counts_before_each_role_keep_the_row(findings: dict[str, list[dict[str, Any]]]) -> None:
    assert findings["Low-latency bridge 1P DEP8 + 4D TP8 no-offload conc=16/32/64"] == []
    found = findings["Low-latency bridge 1P DEP8 + 4D TP8 no-offload conc=16/32/64/128"]
    assert len(found) == 1 and "1P DEP8 + 4D TP8" in found[0]["message"] and "(not 128)" in found[0]["message"]


def test_what_a_setting_is_set_apart_from_is_the_other_side(findings: dict[str, list[dict[str, Any]]]) -> None:
    assert findings["ep=8 naming convention in yaml distinguishes mega_moe from existing flashinfer_mxfp4 ep=4 "
                    "entries"] == []


def test_variants_beside_an_arm_do_not_narrow_it(findings: dict[str, list[dict[str, Any]]]) -> None:
    assert findings["Expand from tp1 to tp2/tp4/tp8 with expert parallel and dp-attn variants"] == []
    # without "variants", dp-attn qualifies every TP: TP2 has none
    found = findings["Expand from tp1 to tp2/tp4/tp8 with dp-attn"]
    assert len(found) == 1 and "no job is tp2/tp4/tp8 dp-attn" in found[0]["message"]


def test_a_role_between_an_on_off_verb_and_its_subject_scopes_the_claim(
        findings: dict[str, list[dict[str, Any]]]) -> None:
    assert claimed(findings["Disable prefill NCCL_MNNVL_ENABLE."]) == [
        ("claim-contradicted", "NCCL_MNNVL_ENABLE", "off")]
    assert findings["Enable prefill NCCL_MNNVL_ENABLE."] == []
    # ... and between a verb of keeping and its subject
    assert [(f["data"]["subject"], f["data"]["claimed"]) for f in findings[
        "Keep prefill minimax_m3_msa_decode_backend on FLASHINFER."]] == [
        ("--attention-config.minimax_m3_msa_decode_backend", "FLASHINFER")]


def test_a_head_noun_before_from_a_to_b_keeps_the_value_after_to(findings: dict[str, list[dict[str, Any]]]) -> None:
    assert claimed(findings["Change the batched-token budget from 8192 to 123456."]) == [
        ("claim-contradicted", "--max-num-batched-tokens", "123456")]
    assert claimed(findings["Change the batched-token budget from 8192 to 2048."]) == [
        ("claim-partly-contradicted", "--max-num-batched-tokens", "2048")]


def test_a_snake_case_name_of_a_flag_is_the_flag_not_a_nested_key_that_ends_so(
        findings: dict[str, list[dict[str, Any]]]) -> None:
    assert claimed(findings["Set attention_backend to FLASHINFER_MLA."]) == [
        ("claim-contradicted", "--attention-backend", "FLASHINFER_MLA")]
    assert findings["Set attention_backend to TOKENSPEED_MLA."] == []


def test_a_word_of_the_setting_s_own_name_is_no_other_program(findings: dict[str, list[dict[str, Any]]]) -> None:
    found = findings["Keep the moe runner backend on flashinfer_cutedsl."]
    assert [f["data"]["subject"] for f in found] == ["--moe-runner-backend"]  # was: "speaks of another program"
    # the recipe passes flashinfer_mxfp4 on its ep=4 jobs only: a partial contradiction, now checked
    assert claimed(findings["Keep the moe runner backend on flashinfer_mxfp4."]) == [
        ("claim-partly-contradicted", "--moe-runner-backend", "flashinfer_mxfp4")]
    # a program named by the clause before still makes the settings after it that program's
    assert findings["Runner: launch_b300-nv.sh updated; --moe-runner-backend flashinfer_cutedsl added for its "
                    "path."] == []


def test_a_dimension_s_setting_is_not_missing_where_the_matrix_runs_without_it(
        findings: dict[str, list[dict[str, Any]]]) -> None:
    found = findings["Disagg flag set (nixl transfer backend, enable-dp-attention + moe-a2a-backend deepep) "
                     "cross-checked against PR 75"]
    # the clause is read (its transfer backend is mooncake), but the TP4-only row, dp-attn false in the config,
    # is no job that lacks --enable-dp-attention against the text
    assert claimed(found) == [("claim-contradicted", "--disaggregation-transfer-backend", "nixl")]


def test_a_flag_of_an_installer_s_command_line_is_not_the_server_s(findings: dict[str, list[dict[str, Any]]]) -> None:
    assert findings["Reinstall aiter via pip install --no-build-isolation"] == []
    assert findings["Install with pip install --no-deps --pre vllm"] == []  # was: "--pre is vllm"
    assert claimed(findings["Serve with --no-build-isolation"]) == [
        ("claim-setting-missing", "--no-build-isolation", "on")]
    # a flag no recipe passes, in a clause of installing, downloading or containers, or an installer's or a
    # container runtime's own flag: that tool's (each had been an error: "the recipe does not pass --no-deps")
    for sentence in ("The wheel is installed with --no-deps to keep torch",
                     "Containers start with --privileged and --network host", "Run hf download with --max-workers 16",
                     "Use --no-deps"):
        assert findings[sentence] == [], sentence
    assert claimed(findings["Pass --enable-foo-bar"]) == [("claim-setting-missing", "--enable-foo-bar", "on")]


EXCEPTED = ["--moe-runner-backend flashinfer_mxfp4 for all configs except ep=8",
            "--moe-runner-backend flashinfer_mxfp4 everywhere but the ep=8 rows",
            "--moe-runner-backend flashinfer_mxfp4, with the exception of ep=8",
            "Except for ep=8, use --moe-runner-backend flashinfer_mxfp4",
            "Use --moe-runner-backend flashinfer_mxfp4 but not on ep=8"]


@pytest.mark.parametrize("sentence", EXCEPTED)
def test_the_arms_a_clause_excepts_are_where_its_claim_does_not_hold(
        findings: dict[str, list[dict[str, Any]]], sentence: str) -> None:
    # the ep=8 (mega_moe) jobs pass no --moe-runner-backend; "except ep=8" once read as a claim about them alone
    assert findings[sentence] == []


def test_a_claim_with_an_exception_is_judged_on_the_jobs_outside_it(
        findings: dict[str, list[dict[str, Any]]]) -> None:
    found = findings["--moe-runner-backend flashinfer_cutedsl apart from ep=8"]
    assert claimed(found) == [("claim-contradicted", "--moe-runner-backend", "flashinfer_cutedsl")]
    assert "flashinfer_mxfp4" in found[0]["message"] and "for all 3 jobs" in found[0]["message"]
    # without the exception, the ep=8 jobs are a partial contradiction
    assert claimed(findings["--moe-runner-backend flashinfer_mxfp4 for all configs"]) == [
        ("claim-partly-contradicted", "--moe-runner-backend", "flashinfer_mxfp4")]


def test_stop_passing_drops_the_setting_where_the_clause_says(findings: dict[str, list[dict[str, Any]]]) -> None:
    assert findings["Stop passing --moe-runner-backend flashinfer_mxfp4 on EP8"] == []  # the EP8 jobs pass none
    found = findings["Stop passing --moe-runner-backend on TP4"]
    assert claimed(found) == [("claim-contradicted", "--moe-runner-backend", "not passed")]


def test_a_clause_that_ends_in_before_tells_the_old_state(findings: dict[str, list[dict[str, Any]]]) -> None:
    assert findings["The EP8 rows had --moe-runner-backend flashinfer_mxfp4 before; TP4 rows keep it"] == []


def test_a_word_of_prose_is_no_value_of_a_setting_given_numbers(findings: dict[str, list[dict[str, Any]]]) -> None:
    assert findings["--max-num-seqs follows CONC (up to 2048)"] == []  # was: "--max-num-seqs is follows"
    assert findings["--max-num-seqs ranges from 16 to 2048"] == []  # was: "--max-num-seqs is ranges"
    # where "to" puts a value, it is still read
    assert [f["data"]["claimed"] for f in findings["Set --max-num-seqs to 4096"]] == ["4096"]


def test_a_leading_if_clause_is_the_condition_of_the_clause_after_it(
        findings: dict[str, list[dict[str, Any]]]) -> None:
    # the recipe passes --enable-tbo on its dp-attention jobs at CONC>=64 only
    assert findings["If DP_ATTENTION=true and CONC>=64, pass --enable-tbo"] == []
    assert claimed(findings["When CONC>=64, export GPU_MAX_HW_QUEUES=8"]) == [
        ("claim-partly-contradicted", "GPU_MAX_HW_QUEUES", "8")]


def test_a_message_says_what_each_job_that_disagrees_does(findings: dict[str, list[dict[str, Any]]]) -> None:
    # 12 jobs pass no --max-num-seqs, 12 pass their concurrency: one job's words are not said of all 24
    (found,) = findings["Set --max-num-seqs to 4096"]
    assert "the recipe does not pass --max-num-seqs on 12 of them and the recipe passes --max-num-seqs" in found["message"]
    assert "(other values: " in found["message"] and "on 12 for all 24 jobs" in found["message"]


def test_a_word_glued_to_its_value_ends_a_setting_named_in_words(findings: dict[str, list[dict[str, Any]]]) -> None:
    assert findings["Keep the gpu memory utilization=0.8."] == []
    assert claimed(findings["Keep the gpu memory utilization=0.7."]) == [
        ("claim-contradicted", "--gpu-memory-utilization", "0.7")]
    # ... with a percent written apart from it
    (found,) = findings["Align the flags with the sibling recipe: GPU memory utilization=70 %."]
    assert found["data"]["subject"] == "--gpu-memory-utilization" and "is 70 %" in found["message"]


def test_turn_on_or_off_before_the_setting(findings: dict[str, list[dict[str, Any]]]) -> None:
    assert findings["Turn on ATOM_DISABLE_MMAP."] == []  # the recipe exports ATOM_DISABLE_MMAP=true
    assert claimed(findings["Turn off ATOM_DISABLE_MMAP."]) == [("claim-contradicted", "ATOM_DISABLE_MMAP", "off")]
    assert findings["Turn on the metrics."] == []
    assert claimed(findings["Turn off the metrics."]) == [("claim-contradicted", "--enable-metrics", "off")]


def test_the_recipes_a_sentence_names_are_the_jobs_it_speaks_of(findings: dict[str, list[dict[str, Any]]]) -> None:
    assert findings["Set decode gpu-memory-utilization to 0.85 on the low-middle-curve recipe"] == []
    assert findings["MegaMOE recipes: moe-backend deep_gemm_mega_moe, TORCH_SYMMMEM=NVSHMEM"] == []
    assert findings["Set prefill gpu-memory-utilization to 0.95 for the high-throughput and max-throughput "
                    "recipes"] == []
    assert findings["In disagg-gb200-low-latency.yaml and disagg-gb200-low-middle-curve.yaml, prefill "
                    "gpu-memory-utilization is 0.8"] == []
    # said of one recipe, and false there: an error about its job alone
    (found,) = findings["Set decode gpu-memory-utilization to 0.95 on the low-middle-curve recipe"]
    assert found["rule"] == "claim-contradicted" and "disagg-gb200-low-middle-curve.yaml" in found["message"]
    assert claimed(findings["Use --moe-backend deep_gemm_mega_moe on the low-latency recipe"]) == [
        ("claim-setting-missing", "--moe-backend", "deep_gemm_mega_moe")]
    (found,) = findings["In disagg-gb200-low-latency.yaml and disagg-gb200-max-tpt-megamoe.yaml, prefill "
                        "gpu-memory-utilization is 0.8"]
    assert found["rule"] == "claim-partly-contradicted" and "for 1 of 2 " in found["message"]


def test_a_default_with_exceptions_per_concurrency(findings: dict[str, list[dict[str, Any]]]) -> None:
    # the recipe passes 8192 at conc 1 and 32, 16384 at 512, 65536 above
    assert findings["chunked-prefill-size 65536 by default; 8192 at conc 1/32 and 16384 at conc 512"] == []
    assert findings["Use chunked-prefill-size 65536 (8192 for conc<=32, 16384 for conc 512)"] == []
    assert findings["Set chunked-prefill-size to 65536 except at conc 1, 32 and 512"] == []
    (found,) = findings["Set chunked-prefill-size to 32768 except at conc 1, 32 and 512"]
    assert found["rule"] == "claim-contradicted" and "--chunked-prefill-size 65536" in found["message"]


def test_a_contrast_names_where_the_claim_does_not_hold(findings: dict[str, list[dict[str, Any]]]) -> None:
    # the low-latency recipe's prefill workers pass 0.8, its decode workers 0.9
    assert findings["On the low-latency recipe prefill uses 0.8 gpu-memory-utilization, unlike decode (0.9)"] == []
    assert findings["Low-latency recipe: gpu-memory-utilization 0.8 / 0.9 for prefill / decode"] == []
    (found,) = findings["On the low-latency recipe prefill uses gpu-memory-utilization 0.9, unlike decode"]
    assert found["rule"] == "claim-contradicted" and "--gpu-memory-utilization 0.8" in found["message"]


def test_a_bound_is_no_value_and_is_kept_below_it(findings: dict[str, list[dict[str, Any]]]) -> None:
    # the recipe passes --cuda-graph-max-bs 288, 544 or 1088 on its megamoe branches, none on the others
    for sentence in ("--cuda-graph-max-bs 1088 max", "Up to 1088 --cuda-graph-max-bs",
                     "--cuda-graph-max-bs of 1088 or fewer"):
        assert findings[sentence] == [], sentence
    # a cap the megamoe branches exceed (288, 544); the branches that pass none neither keep nor break it
    (found,) = findings["Cap --cuda-graph-max-bs at 256"]
    assert found["rule"] == "claim-partly-contradicted" and "--cuda-graph-max-bs 288" in found["message"]


def test_the_old_state_in_other_words(findings: dict[str, list[dict[str, Any]]]) -> None:
    assert findings["--moe-runner-backend flashinfer_cutedsl is gone; TP4 uses flashinfer_mxfp4"] == []
    assert findings["TP4 --moe-runner-backend changes from flashinfer_cutedsl"] == []  # was: "is changes"
    assert findings["The flashinfer_cutedsl MoE runner backend that TP4 used is replaced"] == []


def test_a_parenthesis_that_gives_arms_their_own_value_excepts_them(
        findings: dict[str, list[dict[str, Any]]]) -> None:
    assert findings["--moe-runner-backend flashinfer_mxfp4 (ep=8 keeps mega_moe)"] == []  # was: an error on ep=8
    (found,) = findings["--moe-runner-backend flashinfer_cutedsl (ep=8 keeps mega_moe)"]
    assert found["rule"] == "claim-contradicted" and "for all 3 jobs" in found["message"]


def test_a_sentence_of_arms_that_override_excepts_them_from_the_one_before(
        findings: dict[str, list[dict[str, Any]]]) -> None:
    assert findings["Default --moe-runner-backend is flashinfer_mxfp4; the ep=8 configs override it"] == []
    (found,) = findings["Default --moe-runner-backend is flashinfer_cutedsl; the ep=8 configs override it"]
    assert found["rule"] == "claim-contradicted" and "for all 3 jobs" in found["message"]


def test_a_concurrency_above_or_below_a_number_is_a_bound_of_the_jobs(
        findings: dict[str, list[dict[str, Any]]]) -> None:
    # "above conc 32" had been read as conc 32 itself, "below conc 64" as conc 64
    assert findings["chunked-prefill-size 196608, dropping to 32768 above conc 32"] == []
    assert findings["chunked-prefill-size 196608 below conc 64"] == []
    (found,) = findings["chunked-prefill-size 65536 above conc 32"]
    assert found["rule"] == "claim-contradicted" and "--chunked-prefill-size 32768" in found["message"]
    assert "c33+" in found["message"]
    assert findings["Search-space: tp=8 and tp=4 over conc 4-64"] == []


def test_a_setting_named_in_the_old_part_takes_the_value_after_to(
        findings: dict[str, list[dict[str, Any]]]) -> None:
    assert findings["Moved off --attention-backend flashinfer to trtllm_mla"] == []  # was: flashinfer claimed
    for sentence in ("Migrated off --attention-backend trtllm_mla onto flashinfer",
                     "Switch from --attention-backend trtllm_mla to flashinfer"):  # was: unread
        assert claimed(findings[sentence]) == [("claim-contradicted", "--attention-backend", "flashinfer")], sentence


def test_the_arm_an_arm_mirrors_is_no_scope(findings: dict[str, list[dict[str, Any]]]) -> None:
    assert findings["TP4 mirrors TP8 except for --mem-fraction-static 0.95"] == []  # was: an error on TP8
    (found,) = findings["TP4 mirrors TP8 except for --mem-fraction-static 0.9"]
    assert found["rule"] == "claim-contradicted" and "--mem-fraction-static 0.95" in found["message"]
    assert "TP4 jobs" in found["message"]


def test_values_joined_by_or_are_alternatives(findings: dict[str, list[dict[str, Any]]]) -> None:
    assert findings["-tp 4 or 8, never 2"] == []  # was: -tp 4 claimed, a warning on the TP8 jobs
    (found,) = findings["-tp 2 or 4"]
    assert found["rule"] == "claim-partly-contradicted" and "-tp is 2 or 4" in found["message"]
    assert "-tp 8" in found["message"]


def test_a_possessive_role_is_the_role_s_own(findings: dict[str, list[dict[str, Any]]]) -> None:
    # the low-latency recipe: prefill --max-num-seqs 16, decode 256
    assert findings["Low-latency recipe: prefill's max-num-seqs is 16"] == []  # was: an error on decode
    (found,) = findings["Low-latency recipe: decode's max-num-seqs is 16"]
    assert found["rule"] == "claim-contradicted" and "--max-num-seqs 256" in found["message"]
    assert "decode job" in found["message"]


def test_an_aside_about_another_config_is_not_this_one_s(findings: dict[str, list[dict[str, Any]]]) -> None:
    assert findings["TP2/TP4/TP8 at conc 4-256 (the MTP key keeps TP8 conc 4-128)"] == []  # was: 2 warnings
    (found,) = findings["TP2/TP4/TP8 at conc 4-512 (the MTP key keeps TP8 conc 4-128)"]
    assert "4-512" in found["message"] and "not 512" in found["message"]


def test_a_phrase_after_the_old_names_the_state_before(findings: dict[str, list[dict[str, Any]]]) -> None:
    assert findings["The old -tp 8 only sweep now also runs TP2 and TP4"] == []  # was: -tp 8 claimed


def test_arms_set_apart_in_other_words(findings: dict[str, list[dict[str, Any]]]) -> None:
    # TP8 passes --mem-fraction-static 0.82, TP4 0.95: each of these had drawn a finding on the TP4 jobs
    for sentence in ("--mem-fraction-static 0.82 outside TP4", "--mem-fraction-static 0.82 (TP4 excepted)"):
        assert findings[sentence] == [], sentence
    (found,) = findings["--mem-fraction-static 0.85 outside TP4"]
    assert found["rule"] == "claim-contradicted" and "--mem-fraction-static 0.82" in found["message"]
    assert "0.95" not in found["message"]  # the TP4 jobs are outside the claim


def test_jobs_named_by_what_they_are_not_or_a_comparison_are_a_condition(
        findings: dict[str, list[dict[str, Any]]]) -> None:
    # the jobs such words name are not resolved: where the claim holds on some jobs, the others may be outside
    for sentence in ("--mem-fraction-static 0.82 on all non-TP4 rows",
                     "--mem-fraction-static 0.82 on the remaining rows", "--mem-fraction-static 0.82 for TP>4",
                     "--mem-fraction-static 0.95 on the smaller TP"):
        assert findings[sentence] == [], sentence
    (found,) = findings["--mem-fraction-static 0.85 for TP>4"]  # holds nowhere
    assert found["rule"] == "claim-contradicted"


def test_an_arm_before_an_arrow_to_a_setting_is_its_scope(findings: dict[str, list[dict[str, Any]]]) -> None:
    assert findings["TP=4 → --mem-fraction-static 0.95; TP=8 → 0.82"] == []  # was: the arm read as an old state
    (found,) = findings["TP=4 → --mem-fraction-static 0.9; TP=8 → 0.82"]
    assert found["rule"] == "claim-contradicted" and "TP=4 jobs" in found["message"]


def test_a_floor_or_a_range_over_jobs_is_no_value(findings: dict[str, list[dict[str, Any]]]) -> None:
    assert findings["--mem-fraction-static 0.82 or higher"] == []  # was: 0.82 claimed, TP4's 0.95 against it
    assert findings["--chunked-prefill-size from 8192 to 32768 depending on TP"] == []  # was: 32768 claimed


def test_a_vendor_named_for_its_hardware_scopes_the_claim(findings: dict[str, list[dict[str, Any]]]) -> None:
    # an entry of a B200 and an MI355X key: each had drawn a warning on the other vendor's jobs
    assert findings["SGLANG_USE_AITER=1 for the AMD key"] == []
    (found,) = findings["SGLANG_USE_AITER=1 for the NVIDIA key"]
    assert found["rule"] == "claim-setting-missing" and "dsr1-fp8-b200-sglang" in found["message"]
    assert "mi355x" not in found["message"]
    assert findings["AMD: aiter attention; NVIDIA: trtllm_mla attention"] == []
    # a setting named by its value takes the words before its clause as the configs it speaks of, as any other
    assert findings["B200: trtllm_mla attention"] == []
    assert findings["MI355X: --cuda-graph-max-bs=128"] == []  # "cuda" of a flag's name names no vendor


def test_a_kv_offload_backend_s_setting_is_not_missing_where_the_matrix_runs_no_offload(
        findings: dict[str, list[dict[str, Any]]]) -> None:
    # was: "the recipe does not pass --hicache-ratio for 5 of 12 jobs" (the GPU-resident row)
    assert findings["--hicache-ratio 8 for the offload arms; the GPU-resident row has no HiCache"] == []
    (found,) = findings["--hicache-ratio 4 for the offload arms"]
    assert found["rule"] == "claim-contradicted" and "--hicache-ratio 8" in found["message"]


def test_another_value_after_comma_or_is_for_other_jobs(findings: dict[str, list[dict[str, Any]]]) -> None:
    # was: an error on the DP-attention jobs, the scope of the alternative taken for the first value's
    assert findings["--chunked-prefill-size 8192, or 8192 * TP with DP attention"] == []
    (found,) = findings["--chunked-prefill-size 4096, or 8192 * TP with DP attention"]
    assert found["rule"] == "claim-contradicted"


def test_a_parenthesis_of_a_value_for_arms_excepts_them(findings: dict[str, list[dict[str, Any]]]) -> None:
    # TP8 passes --max-running-requests 128, TP4 32: the parenthesis had been read as the claim's scope (TP4) and
    # the exception at once, leaving no job to check, so the false 256 went unreported
    assert findings["--max-running-requests 128 (32 for tp=4)"] == []
    (found,) = findings["--max-running-requests 256 (32 for tp=4)"]
    assert found["rule"] == "claim-contradicted" and "--max-running-requests 128" in found["message"]


@pytest.mark.parametrize("sentence", OLD_STATES)
def test_the_old_state_said_by_undoing_leaving_or_dating_it(findings: dict[str, list[dict[str, Any]]],
                                                             sentence: str) -> None:
    assert findings[sentence] == []


def test_a_dropped_setting_is_still_a_claim(findings: dict[str, list[dict[str, Any]]]) -> None:
    (found,) = findings["Drop --enable-flashinfer-allreduce-fusion"]  # the recipe still passes it
    assert found["rule"] == "claim-contradicted" and "is not passed" in found["message"]


@pytest.mark.parametrize("sentence", NEGATED)
def test_a_negation_before_how_a_setting_is_given_negates_it(findings: dict[str, list[dict[str, Any]]],
                                                             sentence: str) -> None:
    assert findings[sentence] == []


def test_no_explicit_flag_still_says_the_flag_is_not_given(findings: dict[str, list[dict[str, Any]]]) -> None:
    (found,) = findings["vLLM resolves the quant config itself (no explicit --quantization)."]  # the recipe passes --quantization fp8
    assert found["rule"] == "claim-contradicted" and "--quantization fp8" in found["message"]


def test_a_value_written_into_its_token_goes_on_through_commas(findings: dict[str, list[dict[str, Any]]]) -> None:
    # It had been cut at the first comma: "UCX_TLS is cuda_ipc" against the recipes' five transports.
    assert findings["Set UCX_TLS=cuda_ipc,cuda_copy,sm,self,tcp in the prefill and decode environments."] == []
    (found,) = findings["Set UCX_TLS=cuda_ipc,cuda_copy in the prefill and decode environments."]
    assert found["rule"] == "claim-contradicted" and "UCX_TLS is cuda_ipc,cuda_copy (" in found["message"]


def test_a_flag_a_variable_holds_for_another_program_is_that_program_s(
        findings: dict[str, list[dict[str, Any]]]) -> None:
    # The recipe's LMCache arm passes both to `lmcache server` (LMCACHE_CMD), no vLLM server gets them: each had
    # been an error on every job, the jobs without LMCache included.
    assert findings["Run the LMCache server with --l1-read-ttl-seconds 7200."] == []
    assert findings["Add --supported-transfer-mode lmcache_driven to the LMCache server command."] == []


def test_the_new_state_after_an_old_one_is_still_read(findings: dict[str, list[dict[str, Any]]]) -> None:
    (found,) = findings["Switch --attention-backend trtllm_mla to --attention-backend flashinfer."]
    assert found["rule"] == "claim-contradicted" and "--attention-backend is flashinfer" in found["message"]
    (found,) = findings["Old topologies: TP8 (c4-64). New topologies: TP2 (c1-64)."]
    assert "no job is TP2" in found["message"]


def test_a_model_card_s_precision_names_the_keys_of_that_precision(findings: dict[str, list[dict[str, Any]]]) -> None:
    # Each had been judged on both keys, so the fp8 recipe's 8 contradicted the fp4 claim.
    assert findings["For the MXFP4 config, use --num-continuous-decode-steps 4."] == []
    assert findings["MXFP4 uses --num-continuous-decode-steps 4, MXFP8 uses 8."] == []
    (found,) = findings["MXFP8 uses --num-continuous-decode-steps 4."]
    assert found["rule"] == "claim-contradicted" and "dsr1-fp8-mi355x-sglang" in found["message"]


def test_a_heading_of_key_words_scopes_every_sentence_of_its_bullet(findings: dict[str, list[dict[str, Any]]]) -> None:
    # Split at ";", the sentences after the heading had been judged on both keys: each value was "contradicted" by
    # the other GPU's recipe.
    assert findings["H200: keep the image; use --attention-backend flashinfer and --stream-interval 10"] == []
    assert findings["B200: keep the image; --attention-backend trtllm_mla; --stream-interval 30"] == []
    (found,) = findings["H200: keep the image; use --attention-backend trtllm_mla"]
    assert "dsr1-fp8-h200-sglang" in found["message"] and "dsr1-fp8-b200-sglang" not in found["message"]


def test_otherwise_is_a_condition(findings: dict[str, list[dict[str, Any]]]) -> None:
    # flashinfer_mxfp4 names --moe-runner-backend by its value; the megamoe jobs pass none: they are not "otherwise".
    assert findings["Three regimes: DP-attention at conc 2048 and above -> MegaMoE; otherwise flashinfer_mxfp4"] == []


def test_a_value_per_tensor_parallel_rank_is_judged_at_each_job_s_tp(findings: dict[str, list[dict[str, Any]]]) -> None:
    assert findings["With DP attention, --chunked-prefill-size is 8192 * TP."] == []  # was: "is 8192", but 65536
    (found,) = findings["With DP attention, --chunked-prefill-size is 16384 x TP."]
    assert found["rule"] == "claim-contradicted" and "65536" in found["message"]


def test_a_bound_on_the_parallelism_names_the_jobs_meeting_it(findings: dict[str, list[dict[str, Any]]]) -> None:
    assert findings["Add --enable-expert-parallel (EP>1)."] == []  # every job of the key runs EP1
    assert claimed(findings["Add --enable-expert-parallel (TP>1)."]) == [
        ("claim-setting-missing", "--enable-expert-parallel", "on")]


def test_what_the_drafter_is_pinned_to_is_the_draft_model_s(findings: dict[str, list[dict[str, Any]]]) -> None:
    assert findings["The drafter is pinned to attention_backend FLASH_ATTN."] == []  # the server's own: TRITON_ATTN
    (found,) = findings["The drafter is pinned to attention_backend TRITON_ATTN."]
    assert "FLASH_ATTN" in found["message"] and "speculative" in found["message"]


def test_a_role_s_setting_is_said_of_the_jobs_with_that_role(findings: dict[str, list[dict[str, Any]]]) -> None:
    # The aggregated worker (speculative-num-steps 4) is no decode worker of the disaggregated key.
    assert findings["EAGLE speculative decoding, decode speculative-num-steps 2."] == []
    (found,) = findings["Set decode chunked-prefill-size to 8192."]
    assert "64" in found["message"] and "agentic-disagg" in found["message"]


def test_words_naming_only_a_listed_key_that_runs_no_job_speak_of_no_job(
        findings: dict[str, list[dict[str, Any]]]) -> None:
    assert findings["Port the production Qwen3.5-397B topology as two TP2 nodes at concurrency 8, with "
                    "--mem-fraction-static 0.5."] == []
    # Without that key in the entry the words name no config, and the claim is the entry's.
    (found,) = findings["Port the Qwen3.5-397B topology as two TP2 nodes at concurrency 8."]
    assert "no job is TP2" in found["message"]


def test_an_image_tag_written_short_is_the_tag_it_abbreviates(findings: dict[str, list[dict[str, Any]]]) -> None:
    assert findings["Update the SGLang image to nightly-20260624."] == []
    assert findings["Bump image to nightly-09663abde0."] == []
    for lie in ("Update the SGLang image to nightly-20260625.", "Bump image to nightly-09663abdff."):
        (found,) = findings[lie]
        assert found["rule"] == "claim-contradicted" and found["data"]["subject"] == "image"


def test_a_count_of_topologies_counts_layouts(findings: dict[str, list[dict[str, Any]]]) -> None:
    assert findings["The sweep covers 4 topologies."] == []  # was: "has 4 configs, but the config generates 5 jobs"
    (found,) = findings["The sweep covers 3 topologies."]
    assert "3 topologies" in found["message"] and "5 jobs" in found["message"]


def test_a_drop_reaches_past_the_first_flag_s_value(findings: dict[str, list[dict[str, Any]]]) -> None:
    # "--enable-auto-tool-choice is set" had been read: the drop did not reach past deepseek_v4
    assert findings["Drop --tool-call-parser deepseek_v4 / --enable-auto-tool-choice (not in recipe)"] == []
    found = findings["Drop --tool-call-parser deepseek_v4 / --enable-auto-tool-choice."]
    assert [f["data"]["subject"] for f in found] == ["--enable-auto-tool-choice"]
    assert found[0]["rule"] == "claim-contradicted" and "dsv4-fp8-h200-vllm" in found[0]["message"]


def test_no_before_an_arm_says_no_job_of_it_runs(findings: dict[str, list[dict[str, Any]]]) -> None:
    assert findings["Latency-end sweep (TP8, TP4) at low concurrency; no tp2 (the draft head leaves too little KV room "
                    "at TP2)"] == []  # was: "a tp2 TP2 job runs"
    (found,) = findings["No TP4 (too little KV headroom at TP4)."]
    assert found["rule"] == "claim-contradicted" and "no TP4" in found["message"]


def test_an_experiment_s_log_reports_runs(findings: dict[str, list[dict[str, Any]]]) -> None:
    # Each had been read as the sweep's state: "TP2 runs concurrency 8, 16", "--mem-fraction-static is 0.9".
    assert findings["Run a second diagnostic at TP2 c8/c16 before publishing the final frontier."] == []
    assert findings["Next isolate only the memory budget at TP8: raise --mem-fraction-static from 0.82 to 0.9 while "
                    "keeping every other setting fixed."] == []
    assert findings["Exclusive-node A/B at TP2 conc 8 on the nightly."] == []


def test_a_condition_before_a_colon_conditions_the_list_after_it(findings: dict[str, list[dict[str, Any]]]) -> None:
    # TP8 passes 0.82, TP4 0.95: the TP4 jobs are not the "non-TP4 configs"
    assert findings["For non-TP4 configs: keep the image, set --mem-fraction-static 0.82 and --attention-backend "
                    "trtllm_mla."] == []
    assert claimed(findings["For non-TP4 configs: keep the image, set --mem-fraction-static 0.7 and "
                            "--attention-backend trtllm_mla."]) == [
        ("claim-contradicted", "--mem-fraction-static", "0.7")]


def test_a_flag_after_another_project_s_change_is_its_feature(findings: dict[str, list[dict[str, Any]]]) -> None:
    assert findings["Bump the image, which picks up sgl-project/sglang#35017 "
                    "(--enable-flashinfer-allreduce-fusion)."] == []
    assert claimed(findings["Bump the image and pass --enable-flashinfer-allreduce-fusion."]) == [
        ("claim-setting-missing", "--enable-flashinfer-allreduce-fusion", "on")]


def test_a_parallelism_glued_to_its_offload_is_that_arm(findings: dict[str, list[dict[str, Any]]]) -> None:
    # DEP8 with HiCache runs 32/64/96, TP8 with HiCache 8/10/16/32, TP8 without offload 1-5: "DEP8+hicache" had been
    # one word no arm was read from, so the list was compared with every row's points.
    assert findings["Keep DEP8+hicache at conc 32/64/96."] == []
    assert findings["Cut the TP8 no-offload row to conc 1-5; keep TP8+hicache at conc 8/10/16/32; and add a "
                    "DEP8+hicache row at conc 32/64/96."] == []
    (found,) = findings["Keep DEP8+hicache at conc 32/48/64."]
    assert "the DEP8+hicache jobs" in found["message"] and "not 48" in found["message"]


def test_a_namespace_or_a_commit_is_no_concurrency(findings: dict[str, list[dict[str, Any]]]) -> None:
    # Read as "runs concurrency 10" and "runs concurrency 924543"
    assert findings["It page-faults with c10::AcceleratorError at startup."] == []
    assert findings["Bump the image to one with commit c924543 of the integration branch."] == []


def test_an_arm_said_not_to_run_is_spoken_of_hypothetically_after(findings: dict[str, list[dict[str, Any]]]) -> None:
    assert findings["No EP8 arm. EP8 only pays off with the MegaMoE backend."] == []  # was: "a EP8 job runs"
    found = findings["No TP8 arm. TP8 only pays off with the MegaMoE backend."]
    assert [f["rule"] for f in found] == ["claim-contradicted"] and "TP8" in found[0]["message"]


def test_a_model_named_without_its_version_names_the_parser(findings: dict[str, list[dict[str, Any]]]) -> None:
    assert findings["Use the MiniMax reasoning parser."] == []  # the recipe passes --reasoning-parser minimax_m3
    assert claimed(findings["Use the Qwen3 reasoning parser."]) == [
        ("claim-contradicted", "--reasoning-parser", "Qwen3")]


def test_plus_between_arms_with_their_own_points_lists_them(findings: dict[str, list[dict[str, Any]]]) -> None:
    # TP2 runs 4/16, TP2 with EP2 8/32: "plus" had attached TEP2 to TP2 as one arm, so both lists were judged on it
    assert findings["Sweep TP2 c4/c16 plus TEP2 c8/c32."] == []
    found = findings["Sweep TP2 c2/c64 plus TEP2 c16/c64."]
    assert len(found) == 2 and all("TP2 TEP2" not in f["message"] for f in found)


def test_the_gpus_named_after_a_value_are_its_configs(findings: dict[str, list[dict[str, Any]]]) -> None:
    # One clause (the parenthesis): both GPUs' words had named every config, so each value met the other's recipe
    assert findings["All existing flags preserved (--attention-backend flashinfer on H100/H200, --attention-backend "
                    "trtllm_mla on B200)"] == []
    found = findings["All existing flags preserved (--attention-backend trtllm_mla on H100/H200, --attention-backend "
                     "flashinfer on B200)"]
    # (the B200 half is taken for a stated exception of the H100/H200 half: a lie missed, not a truth flagged)
    (lie,) = found
    assert lie["rule"] == "claim-contradicted" and lie["data"]["claimed"] == "trtllm_mla"
    assert "dsr1-fp8-h200-sglang" in lie["message"] and "dsr1-fp8-b200-sglang" not in lie["message"]


def test_the_later_points_of_a_parallel_list_leave_their_noun_out(findings: dict[str, list[dict[str, Any]]]) -> None:
    # "at 8/32" had been no concurrency: TEP2 was read with TP2, as one arm, and judged on TP2's 4/16
    assert findings["Sweep TP2 at concurrency 4/16, TEP2 at 8/32, and DEP8 at 256/512/1024."] == []
    (lie,) = findings["Sweep TP2 at concurrency 4/16, TEP2 at 8/64, and DEP8 at 256/512/1024."]
    assert "TEP2" in lie["message"] and "8, 64" in lie["message"] and "TP2 TEP2" not in lie["message"]


def test_a_label_after_its_points_is_their_arm(findings: dict[str, list[dict[str, Any]]]) -> None:
    # The DPA list had been the non-DPA arm's: it starts where its points do
    assert findings["Sweep TP4 conc [4] non-DPA + conc [1024] DPA."] == []
    (lie,) = findings["Sweep TP4 conc [4] non-DPA + conc [2048] DPA."]
    assert "DPA 8192/1024 runs concurrency 2048" in lie["message"] and "non-DPA" not in lie["message"]


def test_lists_that_each_claim_all_points_of_the_same_jobs_are_left_unverified(
        findings: dict[str, list[dict[str, Any]]]) -> None:
    # "latency" and "balanced" are no arms the reader knows: both lists fell on every job, and each contradicted it
    assert findings["Sweep concurrency 4/16 for latency, 8/32 for balanced."] == []


def test_a_plus_after_a_list_is_no_floor(findings: dict[str, list[dict[str, Any]]]) -> None:
    # "conc 4/16 +" had been read as "and above", and both lists as TP-only's (DP-attn/EP8 is no arm the reader
    # knows): the second contradicted it
    assert findings["Sweep TP-only conc 4/16 + DP-attn/EP8 conc 256/512/1024."] == []


def test_tp_dash_dep_is_the_dep_arm_and_a_mirrored_ladder_is_compared_with(
        findings: dict[str, list[dict[str, Any]]]) -> None:
    # "TP4-DEP4" had been no arm, and "the vllm-simple ladders" the arm of both lists: no job of this key offloads
    assert findings["Points mirror the vllm-simple ladders: TP4-DEP4 conc [1024]; TP8-DEP8 conc [256, 512, 1024]."] == []
    (lie,) = findings["Points mirror the vllm-simple ladders: TP4-DEP4 conc [1024]; TP8-DEP8 conc [256, 512]."]
    assert "TP8-DEP8" in lie["message"] and "vllm-simple" not in lie["message"] and "also 1024" in lie["message"]
    assert findings["Sweep TP4-DPA conc [1024]; TP8-DPA conc [256, 512, 1024]."] == []  # TP4 and TP8 with DP-attention


def test_what_comes_before_expanding_is_a_plan(findings: dict[str, list[dict[str, Any]]]) -> None:
    assert findings["Start at TP2 conc 4 as a smoke test before expanding to the full TP2, conc 4-2048 sweep."] == []


def test_the_points_a_purpose_names_are_some_of_the_sweep_s(findings: dict[str, list[dict[str, Any]]]) -> None:
    assert findings["Keep the image so concurrency 4 and 16 fit the workspace."] == []


def test_a_tag_with_a_wildcard_is_a_pattern(findings: dict[str, list[dict[str, Any]]]) -> None:
    # "mi3*x" had been cut at the "*": "v0.5.12-rocm700-mi3" against the config's v0.5.12-rocm700-mi35x
    assert findings["Update the SGLang image from v0.5.9-rocm700-mi3*x to v0.5.12-rocm700-mi3*x"] == []


def test_the_object_of_widen_before_its_nouns_and_to_is_the_old_state(findings: dict[str, list[dict[str, Any]]]) -> None:
    assert findings["Use the model alias and widen the TP4 recipe points to TP8."] == []


def test_arms_commented_out_do_not_run(findings: dict[str, list[dict[str, Any]]]) -> None:
    assert findings["Sweep TP8 at conc 4-512; the TP4 and DEP8 arms are commented out."] == []
    (lie,) = findings["Sweep TP8 at conc 4-512; the TP8 arm is commented out."]
    assert lie["rule"] == "claim-contradicted" and "TP8" in lie["message"]


def test_a_count_of_sequence_lengths_and_a_measured_gain_claim_no_points(
        findings: dict[str, list[dict[str, Any]]]) -> None:
    assert findings["TP4 and TP8, all three seq-len configs (1k1k, 1k8k, 8k1k)."] == []
    assert findings["Keep the image, improving TP4 throughput at high concurrency (~+2-4% at conc 256/512)."] == []


def test_a_condition_wherever_a_variable_is_set_keeps_the_jobs_that_set_it(
        findings: dict[str, list[dict[str, Any]]]) -> None:
    # the TP4 c1 recipe sets neither: it had made the first a partly-contradicted warning ("1 of 7 jobs")
    assert findings[f"Enable W4A4 megamoe by appending {FP4_ACTS}=1 wherever {MEGA_TOKENS} is set"] == []
    (lie,) = findings[f"Enable W4A4 megamoe by appending {FP4_ACTS}=0 wherever {MEGA_TOKENS} is set"]
    assert lie["rule"] == "claim-contradicted" and lie["severity"] == "error" and "all 6 jobs" in lie["message"]
    (unconditioned,) = findings[f"Enable W4A4 megamoe by appending {FP4_ACTS}=1"]
    assert unconditioned["rule"] == "claim-partly-contradicted" and "1 of 7 jobs" in unconditioned["message"]


def test_a_setting_behind_a_gate_is_conditioned(findings: dict[str, list[dict[str, Any]]]) -> None:
    # 32768 above conc 32 only: the gate is a condition the reader does not resolve
    assert findings["Concurrency-gate --chunked-prefill-size 32768 for 8k1k: it wins at high concurrency."] == []


def test_a_one_word_flag_of_the_benchmark_client_is_that_program_s(findings: dict[str, list[dict[str, Any]]]) -> None:
    # --dsv4 goes to run_benchmark_serving: "the recipe does not pass --dsv4" had been an error
    assert findings["Benchmark prompts use the repository DSv4 encoder via --dsv4."] == []


def test_images_moved_from_a_tag_are_the_configs_that_were_on_it(findings: dict[str, list[dict[str, Any]]]) -> None:
    # the Qwen3.5 config was on neither tag, and the change left its image alone: not one the text moves
    assert findings["Update the SGLang ROCm images from v0.5.9-rocm700-mi35x to v0.5.12-rocm700-mi35x"] == []
    # still on a tag it was to move from: not moved
    (stale,) = findings["Update the SGLang ROCm images from v0.5.9-rocm700-mi35x/v0.5.16-rocm720-mi35x-20260726 to "
                        "v0.5.12-rocm700-mi35x"]
    assert stale["rule"] == "claim-partly-contradicted" and "v0.5.16-rocm720-mi35x-20260726" in stale["message"]
    (unsaid,) = findings["Update the SGLang ROCm images to v0.5.12-rocm700-mi35x"]
    assert unsaid["rule"] == "claim-partly-contradicted" and "qwen3.5-fp8-mi355x-sglang" in unsaid["message"]


def test_a_router_s_flags_are_judged_on_the_router(findings: dict[str, list[dict[str, Any]]]) -> None:
    # "the recipe does not pass --dp-aware" had been an error: the router's command line was not read
    assert findings["Add --dp-aware to the router."] == []
    assert findings["Route prefills with --policy consistent_hashing."] == []
    (lie,) = findings["Route prefills with --policy round_robin."]
    assert lie["rule"] == "claim-contradicted" and "router is given --policy consistent_hashing" in lie["message"]


def test_a_router_named_as_the_program_of_the_clause_is_given_the_router_s_flags(
        findings: dict[str, list[dict[str, Any]]]) -> None:
    # "through vllm-router" names another program than the server: its flags had all been left unverified
    assert findings["Route DP-attention jobs through vllm-router with --policy consistent_hash."] == []
    (lie,) = findings["Route DP-attention jobs through vllm-router with --policy round_robin."]
    assert "router is given --policy consistent_hash" in lie["message"] and "DP-attention jobs" in lie["message"]
    # a flag the server is given stays the router's business, unverified: --max-num-seqs is no router flag
    assert findings["Pass --max-num-seqs 3 to the router."] == []


def test_a_later_bullet_that_states_a_setting_again_is_the_entry_s_last_word(
        findings: dict[str, list[dict[str, Any]]]) -> None:
    # an entry written as a log: the first step's 0.9 had been an error though the last bullet says 0.8
    assert findings["First pass: set --gpu-memory-utilization to 0.9. || Final: lower --gpu-memory-utilization to "
                    "0.8."] == []
    assert findings["Sweep TP8 at conc 4-64 first. || Extend the TP8 sweep to conc 4-512."] == []
    # the last word wrong: that bullet's claim is the error
    (last,) = findings["First pass: set --gpu-memory-utilization to 0.8. || Final: raise --gpu-memory-utilization to "
                       "0.9."]
    assert last["data"]["claimed"] == "0.9" and last["rule"] == "claim-contradicted"
    # the same value said again, or points of another arm after: the first claim still stands
    again = findings["Set --gpu-memory-utilization to 0.9. || --gpu-memory-utilization 0.9 leaves room for the KV "
                     "cache."]
    assert [f["data"]["claimed"] for f in again] == ["0.9", "0.9"] and again[0]["line"] < again[1]["line"]
    other_arm = findings["Sweep TP8 at conc 4-64. || Add a TP4 arm at conc 4-512."]
    assert {f["data"]["claimed"] for f in other_arm} == {"conc 4-64", "conc 4-512"}


def test_a_setting_said_not_to_be_passed_is_absent(findings: dict[str, list[dict[str, Any]]]) -> None:
    # a clause with "not" had been read as a report of what failed: nothing at all, even unverified
    assert findings["--enable-prefix-caching is NOT passed."] == []
    (lie,) = findings["The --no-enable-prefix-caching flag is not passed."]
    assert lie["rule"] == "claim-contradicted" and "left at its default" in lie["message"]
    assert "recipe passes --no-enable-prefix-caching" in lie["message"]


def test_an_arm_not_added_is_no_arm_that_runs(findings: dict[str, list[dict[str, Any]]]) -> None:
    # "without adding a DRAM offload arm" had claimed a TP8 DRAM job, "without adding Mooncake" a Mooncake one
    assert findings["Keep the TP8 sweep on GPU memory without adding a DRAM offload arm."] == []
    assert findings["Keep the TP8 and DEP8 matrix entirely on SimpleCPU without adding Mooncake or more TP8 points."] == []


def test_a_post_release_is_one_version_with_or_without_its_dot(findings: dict[str, list[dict[str, Any]]]) -> None:
    # had been an error: the text spells the release 0.8.1post1, the config's tag 0.8.1.post1
    assert findings["Update the container image to `0.8.1post1`."] == []
    (other_post,) = findings["Update the container image to `0.8.2post1`."]
    assert other_post["rule"] == "claim-contradicted" and "0.8.1.post1" in other_post["message"]
    # a tag without the date stamp of the build the config pins is another tag (a judged true finding: the dated
    # build was pinned to fix a crash of the undated one)
    (undated,) = findings["Use lmsysorg/sglang-rocm:v0.5.16-rocm720-mi35x."]
    assert "v0.5.16-rocm720-mi35x-20260726" in undated["message"]


def test_a_number_word_of_prose_is_no_value_of_a_setting_named_in_words(
        findings: dict[str, list[dict[str, Any]]]) -> None:
    # "batching one-token ... calls" had been --max-num-batched-tokens 1
    assert findings["Optimize the decode path by batching one-token sparse-attention calls across active requests."] \
        == []
    (said,) = findings["Set the batched-token budget to one."]  # after "to", the word is the value
    assert said["data"]["claimed"] == "1" and "recipe passes --max-num-batched-tokens" in said["message"]


def test_a_bullet_headed_by_a_program_file_speaks_of_that_program(findings: dict[str, list[dict[str, Any]]]) -> None:
    # the sweep generator's flag had been an error: "the recipe does not pass --evals-only"
    assert findings["generate_sweep_configs.py: evals now default-on, matching the --evals-only behavior."] == []
    # Without the heading the flag is read as the server's ("behavior" after it is a word of prose, no value).
    (unheaded,) = findings["Evals now default-on, as with --evals-only."]
    assert unheaded["data"]["subject"] == "--evals-only"


def test_a_rate_per_gpu_reports_a_measurement(findings: dict[str, list[dict[str, Any]]]) -> None:
    # "tok/s/GPU" had not been read as a measured rate: "TP8+EP8 runs concurrency 4" (the points of other arms)
    assert findings["Recover the low-concurrency curve: 80.24 tok/s/GPU at TP8 conc-4, 452.47 at conc-64, and 767.12 at "
                    "TP8+EP8 conc-256."] == []
    (claimed,) = findings["Recover the low-concurrency curve at TP8+EP8 conc-256."]
    assert "no job is TP8+EP8" in claimed["message"]


def test_the_old_value_after_from_names_no_setting_whatever_else_the_commit_appends(
        tmp_path: Path, real_origin: Path) -> None:
    # With the GLM AgentX entry in the same commit (its srt-slurm recipes join the catalog), flashinfer_cutedsl named
    # only --moe-runner-backend and was read as its value: "changelog says --moe-runner-backend is flashinfer_cutedsl"
    repo = tmp_path / "ix"
    git(tmp_path, "clone", "-q", "--shared", str(real_origin), str(repo))
    changelog = repo / "perf-changelog.yaml"
    text = changelog.read_text(encoding="utf-8")
    line = text.count("\n") + 5
    text += ENTRY.format(key=B300, text="TP4 --moe-runner-backend changes from flashinfer_cutedsl", n=9901)
    text += ENTRY.format(key=GLM_AGENTX.replace("+", "\n    - "), text="EAGLE speculative decoding.", n=9902)
    changelog.write_text(text, encoding="utf-8")
    git(repo, "commit", "-q", "-am", "entries")
    _, report = run_claims(repo, "--base", "HEAD~1", "--head", "HEAD", "-v")
    assert [f["message"] for f in report["findings"] if f["line"] == line and f["severity"] != "note"] == []
    assert any(f["line"] == line for f in report["findings"])  # the clause is read: its flag gets a note



@pytest.mark.parametrize("sentence, claimed_value", [
    ("Rename the attention backend trtllm to trtllm_mla", None),
    ("Rename the attention backend trtllm_mla to fa3", "fa3"),
    ("Renamed --attention-backend flashinfer to trtllm_mla", None),
])
def test_rename_a_to_b_claims_b(real_repo: Path, sentence: str, claimed_value: str | None) -> None:
    """InferenceX 9bcef10512c7: "Rename a2a backend mori to mori_low_latency" (the recipe passes the new name).
    Each sentence alone in its change: in the shared one, a later entry's word on the same setting is the last."""
    changelog = real_repo / "perf-changelog.yaml"
    changelog.write_text(changelog.read_text(encoding="utf-8") + ENTRY.format(key=BY_TP, n=9999, text=sentence),
                         encoding="utf-8")
    git(real_repo, "commit", "-q", "-am", "rename")
    _, report = run_claims(real_repo, "--base", "HEAD~1", "--head", "HEAD")
    found = [(f["rule"], f["data"].get("subject"), f["data"].get("claimed")) for f in report["findings"]
             if f["severity"] in ("error", "warning")]
    assert found == ([("claim-contradicted", "--attention-backend", claimed_value)] if claimed_value else [])
