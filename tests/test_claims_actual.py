"""What a job really has for a claim: env vars nothing sets, keys with the same words, defaults read by the
recipe, server roles, and several readings of one sentence (a finding only when every reading fails)."""

from __future__ import annotations

from pathlib import Path

from ci_tools.claims.text.arms import Arm, Parallel
from ci_tools.claims.verdict.compare import judge
from ci_tools.claims.text.extract import Claim
from ci_tools.claims.verdict.reads import file_reads, merged
from ci_tools.claims.text.scope import Scope
from ci_tools.claims.text.subjects import Subject
from ci_tools.claims.text.values import Bool, Count, Member, Multiples, NoArm, Number, Word, parse_number
from ci_tools.config import ProjectConfig
from ci_tools.findings import Location
from ci_tools.jobs.job import AGENTIC, Job
from ci_tools.model.repository import RepoData
from ci_tools.shell.model import FlagKey, RecipeEval, ServerFlag, Value
from ci_tools.revision.snapshot import WorkTreeSnapshot

RECIPE = "benchmarks/r.sh"
SRT_RECIPE = "benchmarks/multi_node/srt-slurm-recipes/r.yaml"  # lists every argument of each worker
HERE = Location("perf-changelog.yaml", 3, 5)
MSA = Subject("env", "VLLM_MINIMAX_M3_MSA_DECODE_BACKEND")
GRACE = Subject("env", "AGENTIC_WARMUP_GRACE_PERIOD")
MEM = Subject("flag", "--mem-fraction-static")
CUDAGRAPH = Subject("key", "--compilation-config.cudagraph_mode")


def job(conc: int = 4, *, multinode: bool = False, tp: int = 8) -> Job:
    fields: dict[str, object] = {"tp": tp, "ep": 1, "dp-attn": False, "conc": conc, "image": "img:1"}
    if multinode:
        fields = {"conc": [conc], "image": "img:1", "prefill": {"tp": 4, "num-worker": 1},
                  "decode": {"tp": 8, "num-worker": 1}}
    return Job("k", AGENTIC, fields, Location("configs/nvidia-master.yaml", 12))


def value(text: str, line: int) -> Value:
    return Value(text, Location(RECIPE, line))


def flag(name: str, text: str | None, line: int, keys: dict[str, str] | None = None) -> ServerFlag:
    return ServerFlag(name, None if text is None else value(text, line), Location(RECIPE, line),
                      keys=tuple(FlagKey(k, value(v, line)) for k, v in (keys or {}).items()))


def repo(tmp_path: Path) -> RepoData:
    return RepoData(snapshot=WorkTreeSnapshot(tmp_path), config=ProjectConfig(root=tmp_path))


def claim(subject: Subject, claimed: object, scope: Scope = Scope(), *, explicit: bool = True) -> Claim:
    return Claim("recipe", claimed, scope, HERE, "text", subject=subject, phrase=subject.name,  # type: ignore[arg-type]
                 explicit=explicit)


def number(text: str) -> Number:
    n = parse_number(text)
    assert n is not None
    return n


def test_an_env_var_named_by_its_identifier_that_nothing_sets_contradicts_the_text(tmp_path: Path) -> None:
    jobs = [job()]
    complete = {jobs[0].id: RecipeEval(RECIPE, servers=[[flag("--max-num-seqs", "8", 20)]])}
    j = judge(claim(MSA, Word("cutlass", "cutlass")), jobs, complete, repo(tmp_path))
    assert j is not None and j.outcome == "false"
    assert j.false[0][1].text == "the recipe never sets VLLM_MINIMAX_M3_MSA_DECODE_BACKEND"
    # Named in words only ("the MSA decode backend"): the program's default may be what the text means.
    j = judge(claim(MSA, Word("cutlass", "cutlass"), explicit=False), jobs, complete, repo(tmp_path))
    assert j is not None and j.outcome == "unknown"
    # A command whose program is known only at run time may export it: nothing is known to be missing.
    opaque = {jobs[0].id: RecipeEval(RECIPE, servers=[[flag("--max-num-seqs", "8", 20)]],
                                      opaque_commands=[Location(RECIPE, 5)])}
    j = judge(claim(MSA, Word("cutlass", "cutlass")), jobs, opaque, repo(tmp_path))
    assert j is not None and j.outcome == "unknown"


def test_a_switch_claimed_on_that_nothing_sets_contradicts_only_when_the_chain_was_read_in_full(
        tmp_path: Path) -> None:
    mmap = Subject("env", "ATOM_DISABLE_MMAP")
    jobs = [job(multinode=True)]
    chain = "benchmarks/multi_node/r.sh"  # an AMD disaggregated script chain, both roles reached
    complete = {jobs[0].id: RecipeEval(chain, servers=[[flag("-tp", "4", 20)], [flag("-tp", "8", 30)]],
                                       roles=["prefill", "decode"])}
    j = judge(claim(mmap, Bool("true", True)), jobs, complete, repo(tmp_path))
    assert j is not None and j.outcome == "false"
    assert j.false[0][1].text == "the recipe never sets ATOM_DISABLE_MMAP"
    # Claimed off: an unset switch may well be off, so nothing contradicts it.
    j = judge(claim(mmap, Bool("false", False)), jobs, complete, repo(tmp_path))
    assert j is not None and j.outcome == "unknown"
    # A models-table program or an `export "$pair"` the evaluation could not follow is an error: unknown.
    partial = {jobs[0].id: RecipeEval(chain, servers=complete[jobs[0].id].servers, roles=["prefill", "decode"],
                                      errors=["benchmarks/multi_node/r.sh:9: the Python program is not modelled"])}
    j = judge(claim(mmap, Bool("true", True)), jobs, partial, repo(tmp_path))
    assert j is not None and j.outcome == "unknown"


def test_an_env_var_given_as_the_key_of_the_same_words_is_judged_by_the_key(tmp_path: Path) -> None:
    jobs = [job(multinode=True)]
    attention = {"minimax_m3_msa_decode_backend": "cutlass"}
    both = RecipeEval(SRT_RECIPE, servers=[[flag("--attention-config", "{...}", 30, attention)],
                                       [flag("--attention-config", "{...}", 31, attention)]],
                      roles=["prefill", "decode"])
    j = judge(claim(MSA, Word("cutlass", "cutlass")), jobs, {jobs[0].id: both}, repo(tmp_path))
    assert j is not None and j.outcome == "true"
    # On the decode server only: partly right, never an error.
    decode_only = RecipeEval(SRT_RECIPE, servers=[[flag("--max-num-seqs", "8", 30)],
                                              [flag("--attention-config", "{...}", 31, attention)]],
                             roles=["prefill", "decode"])
    j = judge(claim(MSA, Word("cutlass", "cutlass")), jobs, {jobs[0].id: decode_only}, repo(tmp_path))
    assert j is not None and j.outcome == "mixed"
    assert "sets neither VLLM_MINIMAX_M3_MSA_DECODE_BACKEND nor any --attention-config key for it to the prefill " \
           "server" in j.false[0][1].text


def test_a_value_is_read_from_the_servers_of_the_role_the_claim_names(tmp_path: Path) -> None:
    jobs = [job(multinode=True)]
    ev = RecipeEval(SRT_RECIPE, servers=[[flag("--mem-fraction-static", "0.7", 30)],
                                     [flag("--mem-fraction-static", "0.85", 31)]],
                    roles=["prefill", "decode"])
    evals = {jobs[0].id: ev}
    decode = Scope((Arm(role="decode", label="decode"),))
    prefill = Scope((Arm(role="prefill", label="prefill"),))
    assert (j := judge(claim(MEM, number("0.85"), decode), jobs, evals, repo(tmp_path))) and j.outcome == "true"
    j = judge(claim(MEM, number("0.85"), prefill), jobs, evals, repo(tmp_path))
    assert j is not None and j.outcome == "false"
    assert j.false[0][1].text == "the recipe passes --mem-fraction-static 0.7"
    assert j.false[0][1].location == Location(RECIPE, 30)


def test_a_key_of_a_structured_flag_value(tmp_path: Path) -> None:
    jobs = [job()]
    ev = RecipeEval(RECIPE, servers=[[flag("--compilation-config", "{...}", 40, {"cudagraph_mode": "FULL_AND_PIECEWISE"})]])
    j = judge(claim(CUDAGRAPH, Word("FULL_DECODE_ONLY", "full_decode_only")), jobs, {jobs[0].id: ev}, repo(tmp_path))
    assert j is not None and j.outcome == "false"
    assert j.false[0][1].text == "the recipe passes --compilation-config.cudagraph_mode FULL_AND_PIECEWISE"
    # The flag given with every key known, none of them this one: the key is not set.
    other = RecipeEval(RECIPE, servers=[[flag("--compilation-config", "{...}", 40, {"mode": "3"})]])
    j = judge(claim(CUDAGRAPH, Word("FULL_DECODE_ONLY", "full_decode_only")), jobs, {jobs[0].id: other},
              repo(tmp_path))
    assert j is not None and j.outcome == "false"
    assert j.false[0][1].text == "the recipe sets no --compilation-config.cudagraph_mode"


def test_a_variable_read_with_a_default_and_assigned_nowhere_keeps_it(tmp_path: Path) -> None:
    lib = b'run_agentic() {\n  REPLAY+=" --warmup-grace-period ${AGENTIC_WARMUP_GRACE_PERIOD:-1800}"\n}\n'
    reads = file_reads("benchmarks/benchmark_lib.sh", lib)
    default = reads.default_of("AGENTIC_WARMUP_GRACE_PERIOD")
    assert default is not None and default.default == "1800"
    assert default.location == Location("benchmarks/benchmark_lib.sh", 2, 35)
    jobs = [job(32)]
    evals = {jobs[0].id: RecipeEval(RECIPE, servers=[[flag("--max-num-seqs", "8", 20)]])}
    j = judge(claim(GRACE, number("3600")), jobs, evals, repo(tmp_path), reads={jobs[0].id: reads})
    assert j is not None and j.outcome == "false"
    assert j.false[0][1].text == "the recipe leaves AGENTIC_WARMUP_GRACE_PERIOD at its default 1800"
    # Assigned anywhere in the recipe's files (even where the evaluation does not follow): not known.
    recipe = file_reads(RECIPE, b'if [ "$CONC" -ge 32 ]; then export AGENTIC_WARMUP_GRACE_PERIOD=3600; fi\n')
    both = merged([reads, recipe])
    assert both.default_of("AGENTIC_WARMUP_GRACE_PERIOD") is None
    j = judge(claim(GRACE, number("3600")), jobs, evals, repo(tmp_path), reads={jobs[0].id: both})
    assert j is not None and j.outcome == "unknown"


def test_a_finding_only_when_every_reading_of_the_words_fails(tmp_path: Path) -> None:
    jobs = [job(4, tp=4), job(64, tp=8)]
    evals = {jobs[0].id: RecipeEval(RECIPE, servers=[[flag("--mem-fraction-static", "0.85", 20)]]),
             jobs[1].id: RecipeEval(RECIPE, servers=[[flag("--mem-fraction-static", "0.7", 20)]])}
    tp4 = Arm(Parallel(tp=4, bare_tp=True), label="TP4")
    tp8 = Arm(Parallel(tp=8, bare_tp=True), label="TP8")
    # Read as about both arms, 0.85 is false on TP8; read as about TP4 alone (the clause's own arm), it holds.
    ambiguous = Scope((tp4, tp8), readings=(Scope((tp4,)),))
    j = judge(claim(MEM, number("0.85"), ambiguous), jobs, evals, repo(tmp_path))
    assert j is not None and j.outcome == "true"
    j = judge(claim(MEM, number("0.85"), Scope((tp4, tp8))), jobs, evals, repo(tmp_path))
    assert j is not None and j.outcome == "mixed"


CAPTURE = Subject("key", "--compilation-config.cudagraph_capture_sizes")


def test_a_list_setting_keeps_the_step_the_text_gives_or_contradicts_it(tmp_path: Path) -> None:
    jobs = [job(4)]

    def judged(sizes: str, step: int) -> tuple[str, str]:
        ev = RecipeEval(RECIPE, servers=[[flag("--compilation-config", "{...}", 40, {"cudagraph_capture_sizes": sizes})]])
        j = judge(claim(CAPTURE, Multiples(f"multiples of {step}", step)), jobs, {jobs[0].id: ev}, repo(tmp_path))
        assert j is not None
        return j.outcome, (j.false[0][1].text if j.false else "")

    assert judged("[3,6,9,12]", 3) == ("true", "")
    assert judged("[3,6,9,12]", 8) == ("false", "the recipe passes --compilation-config.cudagraph_capture_sizes [3,6,9,12]")
    # A long list is shown by its ends and its length.
    every = "[" + ",".join(str(n) for n in range(1, 61)) + "]"
    assert judged(every, 2) == (
        "false", "the recipe passes --compilation-config.cudagraph_capture_sizes [1,2,3,...,60] (60 sizes)")
    # Not a list of sizes: nothing to say about its step.
    assert judged("FULL", 2)[0] == "unknown"


def test_a_flag_named_by_a_table_key_that_no_job_passes_contradicts_its_value(tmp_path: Path) -> None:
    """``scheduler_delay_factor ... set to 1``: the server command line, read in full, has no such flag."""
    jobs = [job()]
    ev = RecipeEval(RECIPE, servers=[[flag("--max-num-seqs", "256", 20)]])
    j = judge(claim(Subject("flag", "--scheduler-delay-factor"), number("1")), jobs, {jobs[0].id: ev}, repo(tmp_path))
    assert j is not None and j.outcome == "false"
    assert j.false[0][1].text == "the recipe does not pass --scheduler-delay-factor"


def test_the_flags_of_the_server_scripts_not_of_the_library_can_be_named(tmp_path: Path) -> None:
    from ci_tools.claims.verdict.reads import ReadsCache

    (tmp_path / "benchmarks").mkdir()
    (tmp_path / RECIPE).write_text('if [ -n "$D" ]; then ARGS="$ARGS --scheduler-delay-factor $D"; fi\n'
                                   'serve --max-num-seqs 8 $ARGS\n')
    (tmp_path / "benchmarks/benchmark_lib.sh").write_text('run_eval() { lm_eval --top-p "$1"; }\n')
    ev = RecipeEval(RECIPE, servers=[[flag("--max-num-seqs", "8", 2)]], server_command=[Location(RECIPE, 2)])
    flags = ReadsCache().server_flags(ev, "benchmarks/benchmark_lib.sh", WorkTreeSnapshot(tmp_path))
    assert flags == {"--scheduler-delay-factor", "--max-num-seqs"}


def test_a_count_is_of_search_space_rows_or_of_concurrency_points(tmp_path: Path) -> None:
    """``6 topologies`` / ``9 configs``: multinode jobs (one row each, whatever it runs); ``12 concurrency points``:
    every concurrency of every row."""
    rows = [Job("k", AGENTIC, {"conc": concs, "image": "img:1", "prefill": {"tp": 4, "num-worker": 1},
                               "decode": {"tp": 8, "num-worker": n}}, Location("configs/nvidia-master.yaml", 12))
            for n, concs in ((1, [4, 8]), (2, [16]))]

    def counted(n: int, noun: str) -> tuple[str, str]:
        c = Claim("count", Count(f"{n} {noun}", n, noun), Scope(), HERE, "text")
        j = judge(c, rows, {}, repo(tmp_path))
        assert j is not None
        return j.outcome, j.actuals[0].text

    assert counted(2, "configs") == ("true", "the config generates 2 jobs")
    assert counted(3, "points") == ("true", "the config generates 3 concurrency points")
    assert counted(13, "configs") == ("false", "the config generates 2 jobs")


def test_an_arm_said_not_to_run_is_contradicted_by_the_jobs_that_run_it(tmp_path: Path) -> None:
    from ci_tools.claims.verdict.compare import judge_arms

    jobs = [job(4, tp=8), job(8, tp=4)]
    tp8, tp2 = Arm(Parallel(tp=8), label="TP8"), Arm(Parallel(tp=2), label="TP2")
    j = judge_arms(Claim("arm", NoArm("TP8 and TP2"), Scope((tp8, tp2)), HERE, "text"), jobs)
    assert j is not None and j.outcome == "mixed"
    assert [a.text for _, a in j.false] == ["the config runs TP8 (TP8/EP1) at concurrency 4"]
    j = judge_arms(Claim("arm", NoArm("TP2"), Scope((tp2,)), HERE, "text"), jobs)
    assert j is not None and j.outcome == "true"


def test_list_settings_of_a_script_and_the_items_a_claim_says_they_hold(tmp_path: Path) -> None:
    submit = (b'SLURM_EXCLUDE_NODES="${SLURM_EXCLUDE_NODES:-mia1-p01-g11,mia1-p01-g12}"\n'
              b'GPUS="0,1,2,3"\nHOSTS=a1-b01,a1-b02\nHOSTS=a1-b01\n')
    reads = file_reads("benchmarks/multi_node/amd_utils/submit.sh", submit)
    listed = reads.lists["SLURM_EXCLUDE_NODES"]
    assert listed is not None and listed.items == ("mia1-p01-g11", "mia1-p01-g12")
    assert listed.location == Location("benchmarks/multi_node/amd_utils/submit.sh", 1, 45)
    assert "GPUS" not in reads.lists  # numbers alone name no hosts
    assert reads.lists["HOSTS"] is None  # written twice, differently: which one a job has is not known
    subject = Subject("list", "SLURM_EXCLUDE_NODES")
    jobs = [job(multinode=True)]

    def judged(*items: str) -> str:
        c = claim(subject, Member(",".join(items), items))
        j = judge(c, jobs, {jobs[0].id: RecipeEval(RECIPE)}, repo(tmp_path), reads={jobs[0].id: reads})
        assert j is not None
        return j.outcome

    assert judged("mia1-p01-g11") == "true"
    assert judged("mia1-p01-g09") == "false"


def test_a_recipe_family_is_the_jobs_whose_recipe_file_names_it(tmp_path: Path) -> None:
    """``per-node TP8 low-latency``: the ``lowlat`` recipes must run TP8; a name no recipe file has is no family."""
    from ci_tools.claims.verdict.compare import judge_arms
    from ci_tools.claims.text.values import FamilyArm

    def row(name: str, decode_tp: int) -> Job:
        return Job("k", AGENTIC, {"conc": [4], "image": "img:1",
                                  "prefill": {"tp": 8, "ep": 1, "dp-attn": True, "num-worker": 1},
                                  "decode": {"tp": decode_tp, "ep": decode_tp if decode_tp > 8 else 1,
                                             "dp-attn": decode_tp > 8, "num-worker": 1,
                                             "additional-settings": [f"CONFIG_FILE=recipes/1k1k/{name}.yaml"]}},
                   Location("configs/nvidia-master.yaml", 12))

    jobs = [row("1k1k_stp_lowlat_0", 16), row("1k1k_stp_lowlat_3", 8), row("1k1k_stp_hightpt_0", 32)]
    tp8 = Arm(Parallel(tp=8, dp_attn=False), label="TP8")
    j = judge_arms(Claim("arm", FamilyArm("TP8 low-latency", "low-latency"), Scope((tp8,)), HERE, "text"), jobs)
    assert j is not None and j.outcome == "mixed" and len(j.jobs) == 2
    assert j.false[0][1].text.startswith("the low-latency recipe 1k1k_stp_lowlat_0.yaml runs 1P1D")
    none = judge_arms(Claim("arm", FamilyArm("TP8 long-context", "long-context"), Scope((tp8,)), HERE, "text"), jobs)
    assert none is None


def test_reads_kept_across_revisions_follow_each_revision_s_bytes(tmp_path: Path) -> None:
    """One ReadsCache over two commits of a real git repository: the recipe's bytes differ, so do its reads,
    though its path and the other file are the same (the cache is keyed by blob id, then by the set of files)."""
    import subprocess

    from ci_tools.claims.verdict.reads import ReadsCache
    from ci_tools.revision.snapshot import GitSnapshot

    def commit(recipe: str) -> str:
        (tmp_path / RECIPE).write_text(recipe)
        subprocess.run(["git", "-C", str(tmp_path), "add", "-A"], check=True)
        subprocess.run(["git", "-C", str(tmp_path), "-c", "user.email=a@b", "-c", "user.name=t", "commit", "-qm", "x"],
                       check=True)
        return subprocess.run(["git", "-C", str(tmp_path), "rev-parse", "HEAD"], capture_output=True, text=True,
                              check=True).stdout.strip()

    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "benchmarks").mkdir()
    (tmp_path / "benchmarks/benchmark_lib.sh").write_text('run_eval() { lm_eval --top-p "$1"; }\n')
    first = commit('MAX=${MAX_NUM_SEQS:-256}\nserve --max-num-seqs "$MAX"\n')
    second = commit('MAX=${MAX_NUM_SEQS:-512}\nserve --max-num-seqs "$MAX" --enforce-eager\n')
    ev = RecipeEval(RECIPE, servers=[[flag("--max-num-seqs", "256", 2)]], server_command=[Location(RECIPE, 2)])
    cache = ReadsCache()
    lib = "benchmarks/benchmark_lib.sh"
    at_first, at_second = (cache.of(ev, lib, GitSnapshot(tmp_path, sha, listed=True)) for sha in (first, second))
    assert at_first.defaults["MAX_NUM_SEQS"].default == "256" and at_second.defaults["MAX_NUM_SEQS"].default == "512"
    assert cache.server_flags(ev, lib, GitSnapshot(tmp_path, first, listed=True)) == {"--max-num-seqs"}
    assert cache.server_flags(ev, lib, GitSnapshot(tmp_path, second, listed=True)) == {"--max-num-seqs",
                                                                                       "--enforce-eager"}
    assert cache.of(ev, lib, GitSnapshot(tmp_path, first, listed=True)) is at_first  # the same bytes: kept
