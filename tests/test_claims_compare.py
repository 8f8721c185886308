"""Claims against hand-built recipe evaluations: true, false, mixed, and unknown (silence)."""

from __future__ import annotations

from pathlib import Path

from ci_tools.claims.verdict.compare import judge
from ci_tools.claims.text.extract import Claim
from ci_tools.claims.text.scope import Scope
from ci_tools.claims.text.subjects import Subject
from ci_tools.claims.text.arms import Arm, Parallel
from ci_tools.claims.text.values import ArmName, Bool, Concurrency, Number, PerConc, Present, parse_number
from ci_tools.config import ProjectConfig
from ci_tools.findings import Location
from ci_tools.jobs.job import AGENTIC, Job
from ci_tools.model.repository import RepoData
from ci_tools.shell.model import RecipeEval, ServerFlag, Value
from ci_tools.revision.snapshot import WorkTreeSnapshot

RECIPE = "benchmarks/r.sh"
HERE = Location("perf-changelog.yaml", 3, 5)


def job(conc: int, dp: bool, ep: int = 1) -> Job:
    fields = {"tp": 8, "ep": ep, "dp-attn": dp, "conc": conc, "image": "img:1"}
    return Job("k", AGENTIC, fields, Location("configs/amd-master.yaml", 12 + int(dp)))


def flag(name: str, text: str | None, line: int, *, known: bool = True, conditional: bool = False) -> ServerFlag:
    value = None if text is None else Value(text if known else None, Location(RECIPE, line), conditional=conditional)
    return ServerFlag(name, value, Location(RECIPE, 40))


def ev(*flags: ServerFlag, env: dict[str, str] | None = None) -> RecipeEval:
    return RecipeEval(RECIPE, env={k: Value(v, Location(RECIPE, 7)) for k, v in (env or {}).items()},
                      servers=[list(flags)])


def repo(tmp_path: Path) -> RepoData:
    return RepoData(snapshot=WorkTreeSnapshot(tmp_path), config=ProjectConfig(root=tmp_path))


def claim(subject: Subject | None, value: object, scope: Scope = Scope(), kind: str = "recipe") -> Claim:
    return Claim(kind, value, scope, HERE, "text", subject=subject, phrase="x")  # type: ignore[arg-type]


INTERVAL = Subject("flag", "--state-checkpoint-interval-tokens")
TBO = Subject("flag", "--enable-tbo")
REQ = Subject("env", "ATOM_DP_LB_REQ_EQUIV")
DPA = Scope((Arm(Parallel(dp_attn=True), label="DEP"),))


def test_false_for_every_job_in_scope(tmp_path: Path) -> None:
    jobs = [job(4, False), job(48, True), job(64, True)]
    evals = {j.id: ev(flag(INTERVAL.name, "8192", 19)) for j in jobs}
    n = parse_number("32768")
    assert n is not None
    j = judge(claim(INTERVAL, n, DPA), jobs, evals, repo(tmp_path))
    assert j is not None and j.outcome == "false" and len(j.jobs) == 2
    assert j.false[0][1].location == Location(RECIPE, 19)
    assert j.false[0][1].text == "the recipe passes --state-checkpoint-interval-tokens 8192"


def test_mixed_names_the_jobs_that_differ(tmp_path: Path) -> None:
    jobs = [job(4, False), job(48, True)]
    evals = {jobs[0].id: ev(flag(INTERVAL.name, "8192", 19)), jobs[1].id: ev(flag(INTERVAL.name, "32768", 21))}
    n = parse_number("8192")
    assert n is not None
    j = judge(claim(INTERVAL, n), jobs, evals, repo(tmp_path))
    assert j is not None and j.outcome == "mixed" and [x.conc for x, _ in j.false] == [48]


def test_unknown_values_never_count_against_a_claim(tmp_path: Path) -> None:
    jobs = [job(48, True), job(64, True)]
    evals = {jobs[0].id: ev(flag(INTERVAL.name, "x", 19, known=False)),
             jobs[1].id: ev(flag(INTERVAL.name, "8192", 19, conditional=True))}
    n = parse_number("32768")
    assert n is not None
    j = judge(claim(INTERVAL, n), jobs, evals, repo(tmp_path))
    assert j is not None and j.outcome == "unknown"
    # An env var the recipe never sets is left to the program's default: unknown too.
    j2 = judge(claim(REQ, Number("0", frozenset({0.0}))), jobs, {x.id: ev() for x in jobs}, repo(tmp_path))
    assert j2 is not None and j2.outcome == "unknown"
    # No recipe at all: unknown.
    j3 = judge(claim(REQ, Number("0", frozenset({0.0}))), jobs, {}, repo(tmp_path))
    assert j3 is not None and j3.outcome == "unknown"


def test_boolean_flags_by_presence(tmp_path: Path) -> None:
    jobs = [job(48, True)]
    off = claim(TBO, Bool("off", False))
    with_tbo = {jobs[0].id: ev(flag(TBO.name, None, 27))}
    without = {jobs[0].id: ev()}
    j = judge(off, jobs, with_tbo, repo(tmp_path))
    assert j is not None and j.outcome == "false" and j.false[0][1].text == "the recipe passes --enable-tbo"
    j = judge(off, jobs, without, repo(tmp_path))
    assert j is not None and j.outcome == "true"
    j = judge(claim(TBO, Bool("on", True)), jobs, without, repo(tmp_path))
    assert j is not None and j.outcome == "false" and j.false[0][1].text == "the recipe does not pass --enable-tbo"


def test_env_and_per_concurrency_values(tmp_path: Path) -> None:
    jobs = [job(48, True), job(64, True)]
    evals = {j.id: ev(flag("--max-num-seqs", str(2 * (j.conc or 0)), 30), env={REQ.name: "512"}) for j in jobs}
    j = judge(claim(Subject("flag", "--max-num-seqs"), PerConc("twice the concurrency", 2.0)), jobs, evals, repo(tmp_path))
    assert j is not None and j.outcome == "true"
    j = judge(claim(Subject("flag", "--max-num-seqs"), PerConc("the concurrency", 1.0)), jobs, evals, repo(tmp_path))
    assert j is not None and j.outcome == "false"
    j = judge(claim(REQ, Number("zero", frozenset({0.0}))), jobs, evals, repo(tmp_path))
    assert j is not None and j.outcome == "false" and j.false[0][1].text == "the recipe exports ATOM_DP_LB_REQ_EQUIV=512"


def test_each_arm_named_must_exist(tmp_path: Path) -> None:
    jobs = [job(4, False), job(48, True, ep=8), job(64, True, ep=1)]
    dep8 = Arm(Parallel(tp=8, ep=8, dp_attn=True), label="DEP8")
    tp4 = Arm(Parallel(tp=4, bare_tp=True), label="TP4")
    j = judge(Claim("arm", ArmName("DEP8"), Scope((dep8,)), HERE, "t"), jobs, {}, repo(tmp_path))
    assert j is not None and j.outcome == "true"
    # One of two arms missing: partly (a warning); every arm missing: false (an error).
    j = judge(Claim("arm", ArmName("DEP8 and TP4"), Scope((dep8, tp4)), HERE, "t"), jobs, {}, repo(tmp_path))
    assert j is not None and j.outcome == "mixed" and [a.label for _, a in j.false] == ["TP4"]
    assert "no job is TP4 (the jobs run TP8/EP1, TP8/EP1/DPA, TP8/EP8/DPA)" in j.false[0][1].text
    j = judge(Claim("arm", ArmName("TP4"), Scope((tp4,)), HERE, "t"), jobs, {}, repo(tmp_path))
    assert j is not None and j.outcome == "false"
    # Among the jobs of the concurrencies the sentence names: no DEP8 job runs c64.
    j = judge(Claim("arm", ArmName("DEP8"), Scope((dep8,), frozenset({64})), HERE, "t"), jobs, {}, repo(tmp_path))
    assert j is not None and j.outcome == "false"


def test_concurrency_per_arm_missing_and_extra_points(tmp_path: Path) -> None:
    jobs = [job(c, False) for c in (1, 2, 4)] + [job(c, True, ep=8) for c in (32, 64, 96)]
    dep8 = Arm(Parallel(tp=8, ep=8, dp_attn=True), label="DEP8")
    listed = Concurrency("conc [32,64,128]", (32, 64, 128))
    j = judge(Claim("concurrency", listed, Scope((dep8,)), HERE, "t", exhaustive=True), jobs, {}, repo(tmp_path))
    assert j is not None and j.outcome == "mixed"  # some points run: a warning, not an error
    assert j.false[0][1].text == "the config generates concurrency 32/64/96 (not 128; also 96)"
    none_run = Concurrency("conc [128,256]", (128, 256))
    j = judge(Claim("concurrency", none_run, Scope((dep8,)), HERE, "t", exhaustive=True), jobs, {}, repo(tmp_path))
    assert j is not None and j.outcome == "false"
    # Not a list of every point (a single concurrency, "add c96"): extra points are fine.
    one = Concurrency("c96", (96,))
    j = judge(Claim("concurrency", one, Scope((dep8,)), HERE, "t"), jobs, {}, repo(tmp_path))
    assert j is not None and j.outcome == "true"
    # A range names its ends: 1-4 is run by the TP arm, nothing beyond.
    tp8 = Arm(Parallel(tp=8, bare_tp=True), label="TP8")
    span = Concurrency("c1-c4", (1, 4), is_range=True)
    j = judge(Claim("concurrency", span, Scope((tp8,)), HERE, "t", exhaustive=True), jobs, {}, repo(tmp_path))
    assert j is not None and j.outcome == "true"


def test_scope_outside_the_jobs_is_silent(tmp_path: Path) -> None:
    jobs = [job(4, False)]
    n = parse_number("8192")
    assert n is not None
    assert judge(claim(INTERVAL, n, DPA), jobs, {}, repo(tmp_path)) is None


def test_a_flag_is_absent_only_from_a_server_line_that_was_reached(tmp_path: Path) -> None:
    jobs = [job(48, True)]
    on = Bool("enable", True)
    reached = {jobs[0].id: ev(flag("--max-num-seqs", "96", 20))}
    j = judge(claim(TBO, on), jobs, reached, repo(tmp_path))
    assert j is not None and j.outcome == "false"
    assert j.false[0][1].text == "the recipe does not pass --enable-tbo"
    # The evaluation stopped before any server: nothing is known to be missing.
    not_reached = {jobs[0].id: RecipeEval(RECIPE)}
    j = judge(claim(TBO, on), jobs, not_reached, repo(tmp_path))
    assert j is not None and j.outcome == "unknown"


def test_an_unreadable_word_on_the_server_line_leaves_absence_unknown(tmp_path: Path) -> None:
    from ci_tools.shell.server import UNKNOWN_FLAG

    jobs = [job(48, True)]
    evals = {jobs[0].id: ev(flag("--max-num-seqs", "96", 20), flag(UNKNOWN_FLAG, "x", 21, known=False))}
    j = judge(claim(TBO, Bool("enable", True)), jobs, evals, repo(tmp_path))
    assert j is not None and j.outcome == "unknown"


def test_a_dep_name_is_dp_attention_of_its_width_also_where_the_config_leaves_ep_at_1() -> None:
    # Pull request 2378's own words: "a DEP8 (TP8+dp-attn) prefill budget", its config row tp 8, ep 1, dp-attn true;
    # the recipe's IS_DEP8 is DP_ATTENTION and TP 8.  Where the config gives another EP width, or no DP-attention,
    # or another TP, the job is not that arm; an EP width written out ("TP8/DPA8/EP8") is read as written.
    from ci_tools.claims.text.sentences import plain_source
    from ci_tools.claims.text.subjects import Catalog, ClaimsSettings
    from ci_tools.claims.text.extract import extract

    cat = Catalog(settings=ClaimsSettings())
    cat.add("flag", "--max-num-batched-tokens")

    def arm_of(text: str) -> Arm:
        (c,) = [c for c in extract(plain_source("x.md", text), cat).claims if c.subject is not None]
        (arm,) = c.scope.arms
        return arm

    def row(tp: int, ep: int, dp: bool) -> Job:
        return Job("k", AGENTIC, {"tp": tp, "ep": ep, "dp-attn": dp, "conc": 8}, Location("c.yaml", 1))

    dep8 = arm_of("Give the DEP8 arm --max-num-batched-tokens 65536.")
    assert dep8.admits(row(8, 8, True)) and dep8.admits(row(8, 1, True))
    assert not dep8.admits(row(8, 1, False)) and not dep8.admits(row(4, 1, True)) and not dep8.admits(row(8, 4, True))
    explicit = arm_of("Give the TP8/DPA8/EP8 arm --max-num-batched-tokens 65536.")
    assert explicit.admits(row(8, 8, True)) and not explicit.admits(row(8, 1, True))
    both = arm_of("Give the DEP8/EP8 arm --max-num-batched-tokens 65536.")
    assert both.admits(row(8, 8, True)) and not both.admits(row(8, 1, True))


def test_an_offload_arm_admits_the_backend_under_its_older_config_name() -> None:
    # Pull request 2351's draft: "a vllm-native DRAM-offload arm at conc 32-56" over a config row whose backend is
    # `vllm-native`, the name the configs gave vLLM's own offloading before `native`; SimpleCPU is not that backend.
    from ci_tools.claims.text.sentences import plain_source
    from ci_tools.claims.text.subjects import Catalog, ClaimsSettings
    from ci_tools.claims.text.extract import extract

    def arm_of(text: str) -> Arm:
        (c,) = extract(plain_source("x.md", text), Catalog(settings=ClaimsSettings())).claims
        (arm,) = c.scope.arms
        return arm

    def row(backend: str) -> Job:
        fields = {"tp": 8, "kv-offloading": "dram", "kv-offload-backend": {"name": backend}, "conc": 32}
        return Job("k", AGENTIC, fields, Location("c.yaml", 1))

    native = arm_of("Add a vllm-native DRAM-offload arm at conc 32-56.")
    assert native.admits(row("vllm-native")) and native.admits(row("native"))
    assert not native.admits(row("vllm-simple")) and not native.admits(row("mooncake"))


def test_a_pipeline_parallel_width_admits_only_the_jobs_of_that_many_stages() -> None:
    # Pull request 2196: "aggregated TP8 x PP2" beside a TP8 x PP4 row of the same config.
    two = Parallel(tp=8, pp=2)
    assert two.admits({"tp": 8, "pp": 2, "ep": 8}) and not two.admits({"tp": 8, "pp": 4, "ep": 8})
    assert Parallel(tp=8).admits({"tp": 8, "pp": 4}) and Parallel(pp=1).admits({"tp": 8})
    assert two.describe() == "TP8/PP2" and two.merged(Parallel(pp=4)) is None


def test_a_flag_that_places_ranks_is_not_missing_from_a_multinode_job(tmp_path: Path) -> None:
    # 0decc69fda9a: "(vLLM-native --master-addr/--nnodes/--node-rank serve) for the 2-node TP8xPP2 topology": the
    # launcher of a multinode job derives them from the allocation; a single-node recipe that leaves one out does.
    nnodes = claim(Subject("flag", "--nnodes"), Present("--nnodes"))
    two_nodes = Job("k", AGENTIC, {"conc": [4], "prefill": {"num-worker": 1, "tp": 8, "pp": 2},
                                   "decode": {"num-worker": 0, "tp": 8, "pp": 2}}, Location("c.yaml", 1))
    found = judge(nnodes, [two_nodes], {two_nodes.id: ev(flag("--max-num-seqs", "8", 9))}, repo(tmp_path))
    assert found is not None and found.outcome == "unknown"
    one = job(4, False)
    found = judge(nnodes, [one], {one.id: ev(flag("--max-num-seqs", "8", 9))}, repo(tmp_path))
    assert found is not None and found.outcome == "false"
