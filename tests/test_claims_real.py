"""``ci-tools check`` on real InferenceX pull requests, each replayed from a minimal extract of its files.

Every case under tests/data/claims_real/<commit>/ holds the files the
entry's jobs read at that commit (``head``) and at its parent (``base``),
with the files both share in ``common`` (see that directory's README for
the source).  A file equal in two extracts is kept in one: the other's
``inherit.txt`` names it, rooted at tests/data/claims_real (``fixture_trees``).  The expected findings are the hand verdicts of
tests/data/ix-judged on the same claims: each case stands for one mechanism
of the checker, and the claims of the same entry that hold must stay silent.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ci_tools.claims.verdict.rules import DISAGREEMENT_RULES

from fixture_trees import copy_tree, tree_files
from test_changelog_support import Repo, clear_github_env, run

DATA = Path(__file__).parent / "data" / "claims_real"
CLAIM_RULES = set(DISAGREEMENT_RULES)

Finding = tuple[str, int, str, str]

# commit -> (what the case shows, the claim findings of the real check: rule, line, subject, claimed)
CASES: dict[str, tuple[str, set[Finding]]] = {
    "c2b58030be3d": (
        "an entry inserted mid-file is still checked; acceptance length; a setting read with a default nothing assigns",
        {("claim-contradicted", 17, "--index-cache-dtype", "FP8"),
         ("claim-contradicted", 17, "--state-checkpoint-interval-tokens", "32K"),
         ("claim-contradicted", 18, "--spec-decode-acceptance-length", "3"),
         ("claim-contradicted", 19, "AGENTIC_WARMUP_GRACE_PERIOD", "3600 seconds")}),
    "38fbc472e5f4": (
        "draft tokens, simulated acceptance length, a config field (dram-utilization)",
        {("claim-partly-contradicted", 16, "--num-speculative-tokens", "2"),
         ("claim-contradicted", 19, "--spec-decode-acceptance-length", "2.54"),
         ("claim-contradicted", 20, "dram-utilization", "0.085")}),
    "c31c9749a32b": (
        "scope by arm: GPU-resident TP4/TP8, DEP8 and DEP4 Mooncake each judged on their own jobs",
        {("claim-partly-contradicted", 11, "--moe-backend", "mega-MoE"),
         ("claim-partly-contradicted", 13, "concurrency/tp/ep/dp-attn/kv-offloading", "conc [1,2,4,6,8,12,16,20,24,28,32]"),
         ("claim-partly-contradicted", 13, "concurrency/ep/dp-attn", "conc [32,64,96,128,160,192,196,224,228]"),
         ("claim-partly-contradicted", 13, "concurrency/ep/dp-attn/kv-offload-backend", "conc [8,16,24,32,40,48,56,64,72]")}),
    "2719ad8cd7af": (
        "the resident recipes of a multinode config, not its HiCache branch",
        {("claim-partly-contradicted", 19, "--mamba-radix-cache-strategy", "extra_buffer_lazy"),
         ("claim-partly-contradicted", 19, "--enable-linear-replayssm-spec", "on")}),
    "1f2beda7828f": (
        "an env var set in neither worker environment, judged through the attention-config key of the same words",
        {("claim-partly-contradicted", 15, "VLLM_MINIMAX_M3_MSA_DECODE_BACKEND", "cutlass")}),
    "6b431f92b1d1": (
        "the AMD disaggregated script chain read to its end: models_atom.yaml's env words exported per job, "
        "so variables the entry claims and nothing sets are contradicted (its claims that hold stay silent); "
        "a models-table key named for the flag it feeds, its value in the clause after the ';'",
        {("claim-setting-missing", 13, "ATOM_DISABLE_MMAP", "on"),
         ("claim-setting-missing", 13, "OMP_NUM_THREADS", "1"),
         ("claim-setting-missing", 14, "--scheduler-delay-factor", "1")}),
    "5ba0b0b0b7eb": (
        "a list setting claimed by its step: capture sizes said to be token-multiples of (1+7)=8, where the recipe "
        "captures multiples of (1+2)=3, as the entry's own earlier bullet says (that claim holds and stays silent); "
        "an entry inserted mid-file",
        {("claim-contradicted", 18, "--compilation-config.cudagraph_capture_sizes", "a list of multiples of 8")}),
    "39324e4417de": (
        "an even-step capture-size list against every integer 1..60, a compilation key said to be left at its "
        "default that the recipe sets, max-num-seqs as 1*CONC against a fixed 20, the acceptance length of the "
        "other curve, the draft's kv_cache_dtype not taken for the server's --kv-cache-dtype, and the concurrency "
        "list of the GPU-resident arm, offload backends said to be off the sweep while SimpleCPU runs at conc 10",
        {("claim-contradicted", 15, "--compilation-config.cudagraph_capture_sizes", "a list of multiples of 2"),
         ("claim-contradicted", 15, "--compilation-config.cudagraph_mode", "left at its default"),
         ("claim-contradicted", 15, "--max-num-seqs", "1 * CONC"),
         ("claim-contradicted", 16, "--speculative-config.synthetic_acceptance_length", "2.45"),
         ("claim-contradicted", 17, "--kv-cache-dtype", "auto"),
         ("claim-partly-contradicted", 18, "concurrency/tp/dp-attn/kv-offloading", "conc-list [4, 8, 10, 12, 14, 16]"),
         ("claim-partly-contradicted", 18, "kv-offload-backend", "no LMCache/vllm-native/SimpleCPUOffload DRAM-offload")}),
    "75908a8715af": (
        "a count of the sweep's points in a clause that drops some (from 18 configs to 13, against 11 rows)",
        {("claim-contradicted", 20, "points", "13 configs")}),
    "37ead2ac060d": (
        "a part said to keep its legacy image is no job of the new image the entry names for the other recipes "
        "(every claim of the entry holds)",
        set()),
    "2b67e81b856f": (
        "a node added to a list setting of the chain's submit script (SLURM_EXCLUDE_NODES) that does not hold it",
        {("claim-contradicted", 13, "SLURM_EXCLUDE_NODES", "includes mia1-p01-g09")}),
    "e97a67ffe4fa": (
        "nodes excluded (mia1-p01-g09,g14: the short name completed) that the submit script's list holds, and a "
        "dropped TP8 no job runs: silent; the vLLM chain is evaluated in full (its models program's `bash_escape`, "
        "the `sed` that sets the TP width), so the entry's settings are checked and hold",
        set()),
    "b38bf415003c": (
        "a setting the entry gates to a tail in another bullet ((isl>=8192 && conc>=64)) is no partial "
        "contradiction where it is set exactly there; the 1k1k arm said to run conc 1-512 is not in the config",
        {("claim-partly-contradicted", 17, "concurrency/tp/dp-attn/isl/osl", "conc 1-512")}),
    "caec3ef982b5": (
        "what a recipe family runs (per-node TP8 low-latency), judged on the jobs whose recipe file names it "
        "(three of the nine lowlat recipes run a DEP16 decode); the count of topologies holds",
        {("claim-partly-contradicted", 13, "tp/ep/dp-attn", "TP8 low-latency")}),
    "ed5e88bf843a": (
        "a parser named by what it parses (qwen3_coder tool-call parsing) on a recipe that passes no "
        "--tool-call-parser, inside a list of serve settings said to be identical to the sibling's (the others hold)",
        {("claim-setting-missing", 20, "--tool-call-parser", "qwen3_coder")}),
    "d7ff17b352a8": (
        "program defaults, measured uplifts and dropped rows are not claims about the new recipe",
        set()),
}


def replay(case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data: Path = DATA) -> tuple[Repo, str]:
    """A repository whose two commits are the case's parent and commit (an extract below ``data``); returns it
    and the base commit."""
    clear_github_env(monkeypatch)
    source = data / case
    # A case whose extract is missing would replay an empty repository and pass on its silence.
    assert tree_files(source / "head", shared=data), f"no extract of {case} under {data}"
    repo = Repo(tmp_path / "repo")
    for part in ("common", "base"):
        if (source / part).is_dir():
            copy_tree(source / part, repo.path, shared=data)
    base = repo.commit({}, "parent")
    head = tree_files(source / "head", shared=data)
    repo.write({rel: None for rel in tree_files(source / "base", shared=data) if rel not in head})
    copy_tree(source / "head", repo.path, shared=data)
    repo.commit({}, f"InferenceX {case}")
    return repo, base


def check(repo: Repo, base: str, capsys: pytest.CaptureFixture[str]) -> list[dict[str, object]]:
    code, out, err = run(["check", "--repo", str(repo.path), "--base", base, "--format", "json"], capsys)
    assert code in (0, 1), err
    findings: list[dict[str, object]] = json.loads(out)["findings"]
    return findings


def claim_findings(findings: list[dict[str, object]]) -> set[Finding]:
    out: set[Finding] = set()
    for f in findings:
        if f["rule"] in CLAIM_RULES:
            data = f["data"]
            assert isinstance(data, dict) and isinstance(f["line"], int)
            out.add((str(f["rule"]), f["line"], str(data["subject"]), str(data["claimed"])))
    return out


@pytest.mark.parametrize("case", sorted(CASES))
def test_real_pull_request_reports_its_judged_disagreements(case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    repo, base = replay(case, tmp_path, monkeypatch)
    findings = check(repo, base, capsys)
    not_checked = [str(f["message"]) for f in findings if f["rule"] == "claim-not-checked"]
    assert not not_checked, "the extract must hold every file the jobs read"
    assert claim_findings(findings) == CASES[case][1], CASES[case][0]


def test_entry_inserted_mid_file_is_checked_and_its_placement_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """The DeepSeek-V4 MI355X ATOM entry of #2698 went in before the last entry, as a squash merge put it."""
    repo, base = replay("c2b58030be3d", tmp_path, monkeypatch)
    head_lines = (repo.path / "perf-changelog.yaml").read_text().splitlines()
    entry_start = head_lines.index("    - dsv4-fp4-mi355x-atom-agentic-mtp") - 1
    assert any(line.startswith("- config-keys:") for line in head_lines[entry_start + 1:]), "the entry is not the last"
    findings = check(repo, base, capsys)
    placement = [f for f in findings if f["rule"] == "changelog-entry-not-at-end"]
    assert [f["line"] for f in placement] == [entry_start + 1]
    grace = next(f for f in findings if f["rule"] == "claim-contradicted" and f["line"] == 19)
    # the evidence is where the default is read, and the scope the concurrencies of the sentence
    lib_line = (repo.path / "benchmarks/benchmark_lib.sh").read_text().splitlines()[2043]
    assert "${AGENTIC_WARMUP_GRACE_PERIOD:-1800}" in lib_line
    assert "at its default 1800 (benchmarks/benchmark_lib.sh:2044) for all 2 c32/48 jobs" in str(grace["message"])
