"""Verdicts that the InferenceX history before the hand-labelled window showed false: worker counts that count
nodes, a benchmark client's flag, a variable named by the last words of its name and assigned in a branch."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from ci_tools.claims.text.arms import Arm, node_counts
from ci_tools.claims.text.subjects import Subject
from ci_tools.claims.text.claim import Claim
from ci_tools.claims.text.scope import Scope
from ci_tools.claims.text.values import Present, Word, parse_image
from ci_tools.claims.verdict.changed import ChangedLines
from ci_tools.claims.verdict.compare import judge
from ci_tools.claims.verdict.reads import file_reads
from ci_tools.findings import Location
from ci_tools.jobs.job import FIXED, Job
from ci_tools.revision.snapshot import WorkTreeSnapshot
from ci_tools.shell.model import RecipeEval, ServerFlag, Value
from test_claims_actual import HERE, RECIPE, SRT_RECIPE, claim, flag, job, number, repo


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
    # one-word flags too (--model); the server's --max-num-seqs is not the client's
    assert reads.client_flags == {"--model", "--max-concurrency", "--use-chat-template"}
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



def test_a_setting_named_in_words_may_be_another_setting_the_change_wrote_whose_name_ends_in_the_words_noun(
        tmp_path: Path) -> None:
    # 6ccc5c7842d5: "Enabled Triton attention backend", the change's SGLANG_HACK_FLASHMLA_BACKEND=triton beside an
    # --attention-backend compressed it left alone
    base, head = tmp_path / "base", tmp_path / "head"
    for root, hack in ((base, "tilelang"), (head, "triton")):
        (root / RECIPE).parent.mkdir(parents=True)
        (root / RECIPE).write_text(f"#!/bin/bash\nset -e\nMODEL=m\nexport SGLANG_HACK_FLASHMLA_BACKEND={hack}\n")
    changed = ChangedLines(WorkTreeSnapshot(head), WorkTreeSnapshot(base))
    assert changed.written(Location(RECIPE, 4)) and not changed.written(Location(RECIPE, 3))
    jobs = [job()]
    ev = RecipeEval(RECIPE, servers=[[flag("--attention-backend", "compressed", 9)]],
                    env={"SGLANG_HACK_FLASHMLA_BACKEND": Value("triton", Location(RECIPE, 4))})
    attention = Subject("flag", "--attention-backend")
    found = judge(claim(attention, Word("Triton", "triton"), explicit=False), jobs, {jobs[0].id: ev}, repo(head),
                  changed=changed)
    assert found is not None and found.outcome == "true"
    assert found.known[0][1].text == "the recipe sets SGLANG_HACK_FLASHMLA_BACKEND=triton"
    # The flag itself named: its value is what is claimed.
    found = judge(claim(attention, Word("triton", "triton")), jobs, {jobs[0].id: ev}, repo(head), changed=changed)
    assert found is not None and found.outcome == "false"
    # A setting the change left alone is not what its sentence reports: "Use the triton attention backend" where
    # the change wrote something else and the recipe keeps SGLANG_HACK_FLASHMLA_BACKEND=triton (line 3, unwritten)
    # is judged by --attention-backend, as without a change to read.
    ev.env["SGLANG_HACK_FLASHMLA_BACKEND"] = Value("triton", Location(RECIPE, 3))
    for given in (changed, None):
        found = judge(claim(attention, Word("Triton", "triton"), explicit=False), jobs, {jobs[0].id: ev}, repo(head),
                      changed=given)
        assert found is not None and found.outcome == "false"
        assert found.false[0][1].text == "the recipe passes --attention-backend compressed"
    # No other setting of the noun has the value: the words name the flag.
    ev.env["SGLANG_HACK_FLASHMLA_BACKEND"] = Value("tilelang", Location(RECIPE, 4))
    found = judge(claim(attention, Word("Triton", "triton"), explicit=False), jobs, {jobs[0].id: ev}, repo(head),
                  changed=changed)
    assert found is not None and found.outcome == "false"


SRT_CONTAINER = """model:
  path: deepseek-v4
  container: lmsysorg/sglang:nightly-dev-20260527-14f81a67
"""


def test_an_image_claim_of_an_srt_slurm_job_holds_for_the_container_its_recipe_runs(tmp_path: Path) -> None:
    # 7aa2b50fbfe4: srtctl runs the recipe's model.container, whatever the config's image field says
    (tmp_path / SRT_RECIPE).parent.mkdir(parents=True)
    (tmp_path / SRT_RECIPE).write_text(SRT_CONTAINER)
    jobs = [job(multinode=True)]
    jobs[0].fields["image"] = "lmsysorg/sglang:nightly-dev-cu13-20260509-9ee83034"
    evals = {jobs[0].id: RecipeEval(SRT_RECIPE, kind="srt-slurm", servers=[[], []], roles=["prefill", "decode"])}
    image = parse_image("lmsysorg/sglang:nightly-dev-20260527-14f81a67")
    said = Claim("image", image, Scope(), HERE, "text")
    found = judge(said, jobs, evals, repo(tmp_path))
    assert found is not None and found.outcome == "true"
    where = found.known[0][1].location
    assert where is not None and (where.path, where.line) == (SRT_RECIPE, 3)
    # Another image than both is still contradicted, against the config's field.
    other = Claim("image", parse_image("lmsysorg/sglang:nightly-dev-20260601-00000000"), Scope(), HERE, "text")
    found = judge(other, jobs, evals, repo(tmp_path))
    assert found is not None and found.outcome == "false"
    assert "the config uses image lmsysorg/sglang:nightly-dev-cu13-20260509-9ee83034" in found.false[0][1].text


def srt_flag(name: str, text: str, line: int) -> ServerFlag:
    return ServerFlag(name, Value(text, Location(SRT_RECIPE, line)), Location(SRT_RECIPE, line))


def test_a_claim_that_holds_on_every_setting_the_change_wrote_speaks_of_those(tmp_path: Path) -> None:
    # 9d59b9ef94b1: "Lower max-num-batched-tokens to 16384 ... on the high-throughput and max-throughput recipes":
    # the change wrote 16384 to the prefill workers; the decode workers keep the 256 it did not touch.
    base, head = tmp_path / "base", tmp_path / "head"
    for root, prefill in ((base, 32768), (head, 16384)):
        (root / SRT_RECIPE).parent.mkdir(parents=True)
        (root / SRT_RECIPE).write_text(f"prefill:\n  max-num-batched-tokens: {prefill}\n"
                                       "decode:\n  max-num-batched-tokens: 256\n")
    changed = ChangedLines(WorkTreeSnapshot(head), WorkTreeSnapshot(base))
    assert [changed.written(Location(SRT_RECIPE, n)) for n in (1, 2, 3, 4)] == [False, True, False, False]
    jobs = [job(multinode=True)]
    mnbt = claim(Subject("flag", "--max-num-batched-tokens"), number("16384"))
    ev = RecipeEval(SRT_RECIPE, kind="srt-slurm", roles=["prefill", "decode"],
                    servers=[[srt_flag("--max-num-batched-tokens", "16384", 2)],
                             [srt_flag("--max-num-batched-tokens", "256", 4)]])
    evals = {jobs[0].id: ev}
    alone = judge(mnbt, jobs, evals, repo(head))
    assert alone is not None and alone.outcome == "false"
    found = judge(mnbt, jobs, evals, repo(head), changed=changed)
    assert found is not None and found.outcome == "true"
    assert [a.location for _, a in found.known] == [Location(SRT_RECIPE, 2)]
    # A job whose recipe the change wrote and which lacks the setting may be the omission the claim is checked
    # for: still contradicted (the message quotes first what the change wrote).
    jobs.append(job(8, multinode=True))
    evals[jobs[1].id] = RecipeEval(SRT_RECIPE, kind="srt-slurm", roles=["prefill", "decode"], servers=[[], []])
    found = judge(mnbt, jobs, evals, repo(head), changed=changed)
    assert found is not None and found.outcome == "false"
    assert [a.text for _, a in found.false] == ["the recipe passes --max-num-batched-tokens 256",
                                                 "the recipe does not pass --max-num-batched-tokens"]
    # 8876745e3449: a recipe the change did not touch at all (the c1 TP4 recipe beside the wide-EP recipes the
    # sentence speaks of) lacking the setting is left alone too.
    untouched = "benchmarks/multi_node/srt-slurm-recipes/c1.yaml"
    for root in (base, head):
        (root / untouched).write_text("prefill:\n  tp: 4\n")
    assert not changed.touched(untouched) and changed.touched(SRT_RECIPE)
    evals[jobs[1].id] = RecipeEval(untouched, kind="srt-slurm", roles=["prefill", "decode"], servers=[[], []])
    found = judge(mnbt, jobs, evals, repo(head), changed=changed)
    assert found is not None and found.outcome == "true"
    # 80c944e34316: a recipe the change touched (a new container) and wrote nothing of the setting in is left
    # alone only where the text says what the setting was switched from ("from `deepep` to `megamoe`").
    (base / untouched).write_text("model:\n  container: sglang:v1\nprefill:\n  tp: 4\n")
    (head / untouched).write_text("model:\n  container: sglang:v2\nprefill:\n  tp: 4\n")
    changed = ChangedLines(WorkTreeSnapshot(head), WorkTreeSnapshot(base))
    assert changed.touched(untouched) and not changed.wrote_about(untouched, "--max-num-batched-tokens")
    assert changed.wrote_about(SRT_RECIPE, "--max-num-batched-tokens")
    found = judge(mnbt, jobs, evals, repo(head), changed=changed)
    assert found is not None and found.outcome == "false"
    switched = replace(mnbt, clause="Switch max-num-batched-tokens from `32768` to `16384` for the wide-EP configs")
    found = judge(switched, jobs, evals, repo(head), changed=changed)
    assert found is not None and found.outcome == "true"
    # ... not where the change removed it from that recipe: its absence is the change's doing.
    (base / untouched).write_text("prefill:\n  tp: 4\n  max-num-batched-tokens: 32768\n")
    (head / untouched).write_text("prefill:\n  tp: 4\n")
    found = judge(switched, jobs, evals, repo(head), changed=ChangedLines(WorkTreeSnapshot(head), WorkTreeSnapshot(base)))
    assert found is not None and found.outcome == "false"
    # A claim of a value the change did not write has no such reading.
    found = judge(claim(Subject("flag", "--max-num-batched-tokens"), number("8192")), jobs, evals, repo(head),
                  changed=changed)
    assert found is not None and found.outcome == "false"


def test_a_flag_spelled_by_its_arguments_name_is_the_flag_passed_with_its_value(tmp_path: Path) -> None:
    # 8e0f6588bb6d: "Add --fp8-gemm-runner-backend cutlass", the recipes pass SGLang's --fp8-gemm-backend cutlass
    jobs = [job()]
    evals = {jobs[0].id: RecipeEval(RECIPE, servers=[[flag("--fp8-gemm-backend", "cutlass", 48),
                                                       flag("--disable-cuda-graph", None, 49)]])}
    runner = Subject("flag", "--fp8-gemm-runner-backend")
    found = judge(claim(runner, Word("cutlass", "cutlass")), jobs, evals, repo(tmp_path))
    assert found is not None and found.outcome == "true"
    assert found.known[0][1].text == "the recipe passes --fp8-gemm-backend cutlass"
    # Another value than the one passed: the flag named is still not passed.
    found = judge(claim(runner, Word("triton", "triton")), jobs, evals, repo(tmp_path))
    assert found is not None and found.outcome == "false"
    assert found.false[0][1].text == "the recipe does not pass --fp8-gemm-runner-backend"
    # A word more at the end names another flag (--disable-cuda-graph-padding is not --disable-cuda-graph).
    padding = Subject("flag", "--disable-cuda-graph-padding")
    found = judge(claim(padding, Present("--disable-cuda-graph-padding")), jobs, evals, repo(tmp_path))
    assert found is not None and found.outcome == "false"


def test_changed_lines_number_the_written_lines_of_the_whole_file_past_a_shared_head_and_tail(tmp_path: Path) -> None:
    base, head = tmp_path / "base", tmp_path / "head"
    base.mkdir()
    head.mkdir()
    alike = ["- { tp: 8, conc-start: 4, conc-end: 64 }"] * 6
    (base / "m.yaml").write_text("\n".join(["a:", *alike, "  image: v1", *alike, "end: 1"]) + "\n")
    (head / "m.yaml").write_text("\n".join(["a:", *alike, "  image: v2", "  extra: 1", *alike, "end: 1"]) + "\n")
    (base / "gone.yaml").write_text("x: 1\ny: 2\n")
    (head / "gone.yaml").write_text("x: 1\n")
    (head / "new.yaml").write_text("n: 1\nm: 2\n")
    changed = ChangedLines(WorkTreeSnapshot(head), WorkTreeSnapshot(base))
    assert [n for n in range(1, 17) if changed.written(Location("m.yaml", n))] == [8, 9]
    assert changed.wrote_about("m.yaml", "image") and changed.wrote_about("m.yaml", "extra")
    assert not changed.wrote_about("m.yaml", "conc-start")
    assert changed.touched("gone.yaml") and not changed.written(Location("gone.yaml", 1))
    assert changed.wrote_about("gone.yaml", "y") and not changed.wrote_about("gone.yaml", "x")
    assert [changed.written(Location("new.yaml", n)) for n in (1, 2)] == [True, True]
