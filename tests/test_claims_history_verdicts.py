"""Verdicts that the InferenceX history before the hand-labelled window showed false: worker counts that count
nodes, a benchmark client's flag, a variable named by the last words of its name and assigned in a branch."""

from __future__ import annotations

from pathlib import Path

from ci_tools.claims.text.arms import Arm, node_counts
from ci_tools.claims.text.subjects import Subject
from ci_tools.claims.text.values import Present, Word
from ci_tools.claims.verdict.compare import judge
from ci_tools.claims.verdict.reads import file_reads
from ci_tools.findings import Location
from ci_tools.jobs.job import FIXED, Job
from ci_tools.shell.model import RecipeEval
from test_claims_actual import RECIPE, claim, flag, job, repo


def wide_ep(prefill_workers: int, decode_tp: int) -> Job:
    """A GB300 wide-EP job of 8876745e3449: N prefill workers of DEP4 and one decode worker of DEP<decode_tp>."""
    return Job("dsv4-fp4-gb300-dynamo-sglang", FIXED, {
        "conc": [12000], "image": "img:1",
        "prefill": {"num-worker": prefill_workers, "tp": 4, "ep": 4, "dp-attn": True},
        "decode": {"num-worker": 1, "tp": decode_tp, "ep": decode_tp, "dp-attn": True}},
        Location(".github/configs/nvidia-master.yaml", 8799))


def test_worker_counts_may_count_nodes() -> None:
    # "EP=12 15P+3D conc=12000": 15 prefill workers of TP4 on 15 four-GPU nodes, one TP12 decode worker on 3
    job_15p = wide_ep(15, 12)
    assert node_counts(job_15p.fields) == {(15, 3)}
    assert Arm(workers=(15, 3)).admits(job_15p)  # the nodes
    assert Arm(workers=(15, 1)).admits(job_15p)  # the workers
    assert not Arm(workers=(14, 4)).admits(job_15p)
    # eight-GPU nodes: 8 workers of TP8 and a TP16 decode worker fill 8 and 2 nodes (or 16 and 4 of four GPUs)
    eight = Job("k", FIXED, {"conc": [64], "prefill": {"num-worker": 8, "tp": 8}, "decode": {"num-worker": 1, "tp": 16}},
                Location("c.yaml", 1))
    assert node_counts(eight.fields) == {(16, 4), (8, 2)}
    # a worker whose size is not known counts no nodes
    assert node_counts({"prefill": {"num-worker": 2}, "decode": {"num-worker": 1, "tp": 8}}) == set()


BENCH_SCRIPT = b"""#!/bin/bash
vllm serve "$MODEL" --max-num-seqs 8 &
run_benchmark_serving \\
    --model "$MODEL" \\
    --max-concurrency "$CONC" \\
    --use-chat-template
"""


def test_a_flag_the_recipe_passes_to_the_benchmark_client_is_not_missing_from_the_server(tmp_path: Path) -> None:
    # ee4d8aa59dd5: "Pass --use-chat-template for MTP acceptance"
    jobs = [job()]
    evals = {jobs[0].id: RecipeEval(RECIPE, servers=[[flag("--max-num-seqs", "8", 2)]])}
    reads = file_reads(RECIPE, BENCH_SCRIPT)
    assert reads.client_flags == {"--max-concurrency", "--use-chat-template"}  # (the server's --max-num-seqs is not)
    chat = claim(Subject("flag", "--use-chat-template"), Present("--use-chat-template"))
    found = judge(chat, jobs, evals, repo(tmp_path), reads={jobs[0].id: reads})
    assert found is not None and found.outcome == "unknown"
    # A server flag that no command passes is still missing.
    eager = claim(Subject("flag", "--enforce-eager"), Present("--enforce-eager"))
    found = judge(eager, jobs, evals, repo(tmp_path), reads={jobs[0].id: reads})
    assert found is not None and found.outcome == "false"


BRANCHES = b"""#!/bin/bash
export SGLANG_JIT_DEEPGEMM_FAST_WARMUP=1
if [ "${DP_ATTENTION}" = "true" ]; then
    export SGLANG_OPT_DEEPGEMM_MEGA_MOE_NUM_MAX_TOKENS_PER_RANK=8192
fi
sglang serve --max-running-requests 64
"""


def test_a_variable_named_by_its_last_words_and_assigned_in_a_branch_is_not_never_set(tmp_path: Path) -> None:
    # d6023eea7fa5: "NUM_MAX_TOKENS_PER_RANK=8192", exported on the DP-attention path only
    jobs = [job()]
    evals = {jobs[0].id: RecipeEval(RECIPE, servers=[[flag("--max-running-requests", "64", 6)]])}
    reads = {jobs[0].id: file_reads(RECIPE, BRANCHES)}
    short = claim(Subject("env", "NUM_MAX_TOKENS_PER_RANK"), Word("8192", "8192"))
    found = judge(short, jobs, evals, repo(tmp_path), reads=reads)
    assert found is not None and found.outcome == "unknown"
    # A name no file assigns in any form is never set.
    other = claim(Subject("env", "NUM_MAX_BATCHES"), Word("8192", "8192"))
    found = judge(other, jobs, evals, repo(tmp_path), reads=reads)
    assert found is not None and found.outcome == "false"
    assert found.false[0][1].text == "the recipe never sets NUM_MAX_BATCHES"

