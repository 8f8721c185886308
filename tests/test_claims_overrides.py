"""How the claims of one entry share its jobs: a claim about part of them overrides a general one there,
and key words of the entry's configs ("the non-DSpark configs") narrow a claim to those configs."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from ci_tools.claims.verdict.check import ClaimsReport, _check_texts
from ci_tools.claims.text.sentences import plain_source
from ci_tools.claims.text.subjects import Catalog, ClaimsSettings, Subject
from ci_tools.config import ProjectConfig
from ci_tools.findings import Location
from ci_tools.jobs.job import AGENTIC, Job
from ci_tools.model.repository import RepoData
from ci_tools.shell.model import RecipeEval, ServerFlag, Value
from ci_tools.revision.snapshot import WorkTreeSnapshot

RECIPE = "benchmarks/r.sh"


def job(key: str, conc: int, *, dep: bool = False) -> Job:
    fields = {"tp": 8, "ep": 8 if dep else 1, "dp-attn": dep, "conc": conc, "image": "img:1"}
    return Job(key, AGENTIC, fields, Location("configs/nvidia-master.yaml", 12))


def serving(max_num_seqs: str) -> RecipeEval:
    return RecipeEval(RECIPE, servers=[[ServerFlag("--max-num-seqs", Value(max_num_seqs, Location(RECIPE, 20)),
                                                   Location(RECIPE, 20))]])


def check(text: str, jobs: list[Job], evals: dict[str, RecipeEval], tmp_path: Path) -> list[tuple[str, int, str]]:
    catalog = Catalog(settings=ClaimsSettings())
    catalog.add("flag", "--max-num-seqs")
    report = ClaimsReport()
    repo = RepoData(snapshot=WorkTreeSnapshot(tmp_path), config=ProjectConfig(root=tmp_path))
    _check_texts([plain_source("perf-changelog.yaml", text)], catalog, jobs, evals, repo, report, "changelog", {})
    return [(f.rule, f.location.line, f.message.split(" (")[0]) for f in report.findings]


def test_a_claim_about_part_of_the_jobs_overrides_a_general_one_there(tmp_path: Path) -> None:
    jobs = [job("k", 4), job("k", 64, dep=True)]
    evals = {jobs[0].id: serving("64"), jobs[1].id: serving("128")}
    general = "Use --max-num-seqs 64."
    assert check(general, jobs, evals, tmp_path) == [
        ("claim-partly-contradicted", 1, "changelog says --max-num-seqs is 64")]
    both = general + "\nKeep the DEP8 arm at --max-num-seqs 128."
    assert check(both, jobs, evals, tmp_path) == []
    # The specific claim is still judged on its own jobs.
    wrong = general + "\nKeep the DEP8 arm at --max-num-seqs 256."
    assert check(wrong, jobs, evals, tmp_path) == [("claim-contradicted", 2, "changelog says --max-num-seqs is 256")]


def test_key_words_of_the_configs_narrow_a_claim_to_them(tmp_path: Path) -> None:
    plain, dspark = "kimik3-fp4-b300-vllm-agentic", "kimik3-fp4-b300-vllm-agentic-dspark"
    jobs = [job(plain, 4), job(dspark, 4)]
    evals = {jobs[0].id: serving("64"), jobs[1].id: serving("32")}
    assert check("Set --max-num-seqs 64 on the non-DSpark config.", jobs, evals, tmp_path) == []
    assert check("Set --max-num-seqs 64 on the DSpark config.", jobs, evals, tmp_path) == [
        ("claim-contradicted", 1, "changelog says --max-num-seqs is 64")]
    # Words no config key has leave every job in scope.
    assert check("Set --max-num-seqs 64 on B300.", jobs, evals, tmp_path) == [
        ("claim-partly-contradicted", 1, "changelog says --max-num-seqs is 64")]


def test_both_stp_and_mtp_name_the_keys_with_and_without_speculative_decoding(tmp_path: Path) -> None:
    # PR 2630's entry lists dsv4-fp4-mi355x-sglang-disagg and its -mtp twin: "for both STP and MTP" is said of
    # both; "MTP" alone only of the -mtp key.
    stp, mtp = "dsv4-fp4-mi355x-sglang-disagg", "dsv4-fp4-mi355x-sglang-disagg-mtp"
    jobs = [job(stp, 256, dep=True), job(mtp, 256, dep=True)]
    evals = {jobs[0].id: serving("64"), jobs[1].id: serving("32")}
    assert check("Use --max-num-seqs 32 for both STP and MTP.", jobs, evals, tmp_path) == [
        ("claim-partly-contradicted", 1, "changelog says --max-num-seqs is 32")]
    assert check("Use --max-num-seqs 32 for MTP.", jobs, evals, tmp_path) == []


def test_each_band_of_a_clause_is_said_of_the_configs_its_own_words_name(tmp_path: Path) -> None:
    # PR 2300's entry: dsv4-fp4-gb200-dynamo-vllm-agentic-agg and ...-3p1d-dep8-dep16.  The clause's "DEP8"
    # names the second key, but only for its own band: "aggregate TP8 at conc [16]" was looked for there too.
    agg, disagg = "dsv4-fp4-gb200-dynamo-vllm-agentic-agg", "dsv4-fp4-gb200-dynamo-vllm-agentic-3p1d-dep8-dep16"
    dep = job(disagg, 1536, dep=True)
    jobs = [job(agg, 16), replace(dep, fields={**dep.fields, "disagg": True})]
    evals = {jobs[0].id: serving("64"), jobs[1].id: serving("32")}
    assert check("Add aggregate TP8 at conc [16] and disaggregated 3P/1D DEP8 at conc [1536].", jobs, evals,
                 tmp_path) == []
    assert check("Add aggregate TP8 at conc [32] and disaggregated DEP8 at conc [1536].", jobs, evals,
                 tmp_path) == [("claim-contradicted", 1, "changelog says aggregate TP8 runs concurrency 32")]
    # The band that names a key is still said of that key only.
    assert check("Add TP8 at conc [16] and DEP8 at conc [16].", jobs, evals, tmp_path) == [
        ("claim-contradicted", 1, "changelog says DEP8 runs concurrency 16")]


def test_the_negative_flag_of_a_feature_is_its_first_spelling_and_follows_what_the_catalog_holds() -> None:
    cat = Catalog(settings=ClaimsSettings(), spelled_flags=frozenset({"--no-enable_prefix_caching"}))
    cat.add("flag", "--enable-prefix-caching", boolean=True)
    enable = Subject("flag", "--enable-prefix-caching")
    assert cat.negative_of(enable) == Subject("flag", "--no-enable_prefix_caching")
    cat.add("flag", "--disable-prefix-caching", boolean=True)  # sorts first: "--d" < "--n"
    assert cat.negative_of(enable) == Subject("flag", "--disable-prefix-caching")
    assert cat.negative_of(Subject("flag", "--disable-prefix-caching")) is None  # already a negative
    assert cat.negative_of(Subject("flag", "--enable-metrics")) is None


def test_a_hicache_arm_is_also_one_whose_l3_tier_is_umbp(tmp_path: Path) -> None:
    # PR 2617's config: kv-offload-backend umbp is SGLang's HiCache with UMBP (MoRI) as its L3 tier.
    def offloaded(key: str, conc: int, backend: str) -> Job:
        plain = job(key, conc)
        return replace(plain, fields={**plain.fields, "kv-offloading": "dram", "kv-offload-backend": {"name": backend}})

    key = "dsv4-fp4-mi355x-sglang-agentic-umbp-mtp"
    jobs = [offloaded(key, 16, "umbp"), offloaded(key, 32, "umbp")]
    evals = {j.id: serving("64") for j in jobs}
    assert check("Add a UMBP (MoRI) HiCache L3 arm at conc 16 and 32.", jobs, evals, tmp_path) == []
    assert check("Add a UMBP arm at conc 16 and 32.", jobs, evals, tmp_path) == []
    assert check("Add a HiCache arm at conc 16 and 64.", jobs, evals, tmp_path) == [
        ("claim-partly-contradicted", 1, "changelog says HiCache runs concurrency 16, 64")]
    # A HiCache job without an L3 tier is no UMBP job.
    plain = [offloaded(key, 16, "hicache")]
    assert check("Add a UMBP arm at conc 16.", plain, {plain[0].id: serving("64")}, tmp_path) == [
        ("claim-arm-missing", 1, "changelog says UMBP runs concurrency 16")]
