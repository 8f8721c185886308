"""llm-d jobs followed from the launcher to each role's vLLM command line, checked flag by flag.

Expected values come from reading the real files: ``launch_gb200-nv.sh`` runs
the wrapper with ``LLMD_CONTAINER_ENGINE=pyxis``; the wrapper's ``submit.sh``
``sbatch``-es ``job.slurm``, whose ``srun --container-image`` runs
``server.sh`` on every node; ``server.sh`` (rank < PREFILL_NODES: prefill)
reads the role's block of ``llm-d-recipes/$CONFIG_FILE`` with its Python
program (``tp``, ``enable-expert-parallel``, ``extra-args`` appended as
words, ``env`` exported) and builds ``COMMON_ARGS`` (lines 223-282) in front
of them.  The error paths run on a small tree of the same shape
(tests/fixtures/recipes/llmd).
"""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from ci_tools.claims.text.arms import Arm
from ci_tools.claims.verdict.compare import judge
from ci_tools.claims.text.extract import Claim
from ci_tools.claims.text.scope import Scope
from ci_tools.claims.text.subjects import Subject
from ci_tools.claims.text.values import Word, parse_number
from ci_tools.cli.main import cli
from ci_tools.config import load_config
from ci_tools.evaluation.evaluate import evaluate_job
from ci_tools.findings import Location
from ci_tools.jobs.matrix import expand
from ci_tools.model.repository import RepoData, load_repo
from ci_tools.revision.snapshot import WorkTreeSnapshot
from ci_tools.shell.model import RecipeEval, ServerFlag
from multinode_corpus import corpus, evaluation, find_job, flag, key_value, role_env, role_flags, values

KEY = "dsv4-fp4-gb200-llmd-vllm"
SERVER = "benchmarks/multi_node/llm-d/server.sh"
RECIPES = "benchmarks/multi_node/llm-d-recipes"
LOW = f"{RECIPES}/dsv4-fp4-gb200-low-latency.yaml"
MEGAMOE = f"{RECIPES}/dsv4-fp4-gb200-mid-curve-megamoe.yaml"
MINI = Path(__file__).parent / "fixtures" / "recipes" / "llmd"


def at(f: ServerFlag) -> tuple[str, int]:
    """Where the flag's word is written (file, line)."""
    return f.location.path, f.location.line


def value_at(f: ServerFlag) -> tuple[str, int]:
    assert f.value is not None, f.name
    return f.value.location.path, f.value.location.line


def test_low_latency_prefill_is_dep8_with_every_extra_args_flag_at_its_yaml_line() -> None:
    result = evaluation(find_job(KEY, "dsv4-fp4-gb200-low-latency.yaml"))
    assert result.roles == ["prefill", "decode"] and not result.errors, result.errors
    assert result.kind == "script" and result.server_command[0].path == SERVER
    assert result.server_command[0].line == 286  # `vllm serve "$MODEL" "${COMMON_ARGS[@]}" $ROLE_EXTRA_ARGS`
    prefill = role_flags(result, "prefill")
    extra = {  # prefill.extra-args, one flag a line from line 91
        "--kv-cache-dtype": ("fp8", 91), "--enforce-eager": (None, 92), "--gpu-memory-utilization": ("0.95", 93),
        "--max-model-len": ("9280", 94), "--max-num-seqs": ("16", 95), "--max-num-batched-tokens": ("32768", 96),
        "--enable-cumem-allocator": (None, 97), "--no-enable-prefix-caching": (None, 98),
        "--no-async-scheduling": (None, 99), "--block-size": ("256", 100), "--tokenizer-mode": ("deepseek_v4", 101),
        "--moe-backend": ("deep_gemm_mega_moe", 102), "--enable-ep-weight-filter": (None, 103),
        "--no-disable-hybrid-kv-cache-manager": (None, 104), "--no-enable-flashinfer-autotune": (None, 105),
        "--numa-bind": (None, 106)}
    for name, (text, line) in extra.items():
        f = flag(prefill, name)
        assert at(f) == (LOW, line), name
        assert (f.value.text if f.value is not None else None) == text, name
        if f.value is not None:
            assert f.value.location == Location(LOW, line, 5 + len(name) + 1, line, 5 + len(name) + 1 + len(text))
    # COMMON_ARGS, in server.sh's order; the DEP8 prefill spans two nodes (hybrid LB, one DP leader)
    assert [f.name for f in prefill[:len(prefill) - len(extra)]] == [
        "--port", "--served-model-name", "--trust-remote-code", "--disable-access-log-for-endpoints",
        "--tensor-parallel-size", "--kv_transfer_config", "--api-server-count", "--enable-expert-parallel",
        "--data-parallel-size", "--data-parallel-hybrid-lb", "--data-parallel-size-local", "--data-parallel-address",
        "--data-parallel-rpc-port", "--data-parallel-start-rank"]
    got = values(prefill)
    assert got["--port"] == "8200" and value_at(flag(prefill, "--port")) == (SERVER, 28)
    assert got["--served-model-name"] == "deepseek-ai/DeepSeek-V4-Pro"  # MODEL_NAME from launch_gb200-nv.sh
    assert got["--tensor-parallel-size"] == "1" and value_at(flag(prefill, "--tensor-parallel-size")) == (LOW, 88)
    assert at(flag(prefill, "--tensor-parallel-size")) == (SERVER, 228)
    assert got["--data-parallel-size"] == "8"  # PREFILL_DP_SIZE = PREFILL_NODES 2 / 1 worker * GPUS_PER_NODE 4
    assert got["--data-parallel-size-local"] == "4" and got["--data-parallel-start-rank"] == "0"
    assert got["--api-server-count"] == "4" and at(flag(prefill, "--api-server-count")) == (SERVER, 245)
    assert got["--data-parallel-address"] is None  # a node's IP: known only on the allocation
    assert got["--kv_transfer_config.kv_role"] == "kv_producer"
    assert "--headless" not in got and "--master-addr" not in got


def test_low_latency_decode_is_pure_tp8_led_by_node_rank_2() -> None:
    result = evaluation(find_job(KEY, "dsv4-fp4-gb200-low-latency.yaml"))
    decode = role_flags(result, "decode")
    got = values(decode)
    assert result.server_command[1].note == "node rank 2"  # the first decode node: rank PREFILL_NODES
    assert got["--tensor-parallel-size"] == "8" and value_at(flag(decode, "--tensor-parallel-size")) == (LOW, 152)
    # enable-expert-parallel: false -> no EP/DP flags; a TP engine over 2 nodes: the headless multi-node API,
    # whose leader (worker index 0) has no --headless
    for absent in ("--enable-expert-parallel", "--data-parallel-size", "--api-server-count", "--headless"):
        assert absent not in got, absent
    assert got["--nnodes"] == "2" and got["--node-rank"] == "0" and got["--master-addr"] is None
    assert at(flag(decode, "--nnodes")) == (SERVER, 275)
    assert got["--gpu-memory-utilization"] == "0.9" and at(flag(decode, "--gpu-memory-utilization")) == (LOW, 160)
    assert got["--max-num-seqs"] == "256" and got["--max-model-len"] == "16384"
    assert got["--compilation-config.cudagraph_mode"] == "FULL_DECODE_ONLY"
    assert key_value(decode, "--compilation-config.mode").location.line == 165
    assert got["--kv_transfer_config.kv_role"] == "kv_consumer"


def test_mid_curve_megamoe_decode_is_dep8_with_the_recipe_env_over_server_sh_defaults() -> None:
    result = evaluation(find_job(KEY, "dsv4-fp4-gb200-mid-curve-megamoe.yaml", [256, 512, 1024]))
    assert not result.errors, result.errors
    decode = role_flags(result, "decode")
    got = values(decode)
    assert got["--tensor-parallel-size"] == "1" and value_at(flag(decode, "--tensor-parallel-size")) == (MEGAMOE, 149)
    assert "--enable-expert-parallel" in got and got["--data-parallel-size"] == "8"  # DECODE_DP_SIZE = 2 / 1 * 4
    assert got["--data-parallel-hybrid-lb"] is None and got["--data-parallel-size-local"] == "4"
    expected = {"--kv-cache-dtype": "fp8", "--max-num-seqs": "512", "--max-num-batched-tokens": "512",
                "--max-cudagraph-capture-size": "512", "--gpu-memory-utilization": "0.9", "--max-model-len": "9280",
                "--block-size": "256", "--tokenizer-mode": "deepseek_v4", "--moe-backend": "deep_gemm_mega_moe"}
    assert {k: got[k] for k in expected} == expected
    for line, name in enumerate(["--kv-cache-dtype", "--max-num-seqs", "--max-num-batched-tokens",
                                 "--max-cudagraph-capture-size", "--gpu-memory-utilization", "--max-model-len",
                                 "--enable-cumem-allocator", "--no-enable-prefix-caching",
                                 "--no-enable-flashinfer-autotune", "--block-size", "--compilation-config",
                                 "--tokenizer-mode", "--moe-backend", "--enable-ep-weight-filter",
                                 "--no-disable-hybrid-kv-cache-manager"], start=152):
        assert at(flag(decode, name)) == (MEGAMOE, line), name
    assert "--enforce-eager" not in got and "--numa-bind" not in got  # prefill-only flags
    env = role_env(result, "decode")
    assert env["TORCH_DISTRIBUTED_DEFAULT_TIMEOUT"].text == "1800"
    assert env["TORCH_DISTRIBUTED_DEFAULT_TIMEOUT"].location.as_text() == f"{MEGAMOE}:192:40"
    assert env["NCCL_NET_GDR_C2C"].location.as_text() == f"{MEGAMOE}:172:23"
    # the recipe's env is exported before server.sh's `export X=${X:-default}` (lines 199, 188), which keeps it
    assert env["NVSHMEM_REMOTE_TRANSPORT"].text == "none"
    assert env["NVSHMEM_REMOTE_TRANSPORT"].location.as_text() == f"{SERVER}:199:12"
    assert env["UCX_TLS"].text == "cuda_copy,cuda_ipc,rc,tcp" and env["UCX_TLS"].location.line == 188
    # ... while server.sh's unconditional exports after it win
    assert env["VLLM_SKIP_P2P_CHECK"].location.as_text() == f"{SERVER}:165:8"
    assert env["VLLM_USE_DEEP_GEMM"].location.line == 170 and env["VLLM_USE_DEEP_GEMM"].location.path == SERVER
    prefill = values(role_flags(result, "prefill"))
    assert prefill["--gpu-memory-utilization"] == "0.92" and prefill["--max-num-seqs"] == "16"


def test_max_throughput_job_takes_its_decode_leader_after_six_prefill_nodes() -> None:
    result = evaluation(find_job(KEY, "dsv4-fp4-gb200-mid-curve-megamoe.yaml", [4096]))
    assert [loc.note for loc in result.server_command] == ["node rank 0", "node rank 6"]
    prefill = values(role_flags(result, "prefill"))
    assert prefill["--data-parallel-size"] == "8"  # 6 prefill nodes in 3 engines of 2 nodes: 6 / 3 * 4
    assert prefill["--data-parallel-start-rank"] == "0"
    assert values(role_flags(result, "decode"))["--data-parallel-size"] == "8"


def test_the_claims_checker_reads_each_role_of_an_llm_d_job() -> None:
    c = corpus()
    job = find_job(KEY, "dsv4-fp4-gb200-low-latency.yaml")
    evals: dict[str, RecipeEval | None] = {job.id: evaluation(job)}
    repo = RepoData(snapshot=c.snapshot, config=c.config)
    here = Location("perf-changelog.yaml", 3, 5)
    prefill, decode = Scope((Arm(role="prefill", label="prefill"),)), Scope((Arm(role="decode", label="decode"),))

    def verdict(subject: Subject, claimed: object, scope: Scope) -> tuple[str, str]:
        claim = Claim("recipe", claimed, scope, here, "text", subject=subject, phrase=subject.name)  # type: ignore[arg-type]
        found = judge(claim, [job], evals, repo)
        assert found is not None
        return found.outcome, found.false[0][1].text if found.false else ""

    memory = Subject("flag", "--gpu-memory-utilization")
    number = parse_number("0.95")
    assert verdict(memory, number, prefill) == ("true", "")
    assert verdict(memory, number, decode) == ("false", "the recipe passes --gpu-memory-utilization 0.9")
    graphs = Subject("key", "--compilation-config.cudagraph_mode")
    assert verdict(graphs, Word("FULL_DECODE_ONLY", "full_decode_only"), decode)[0] == "true"
    assert verdict(Subject("env", "NVSHMEM_REMOTE_TRANSPORT"), Word("none", "none"), prefill)[0] == "true"


# -- error paths, on a small tree of the same shape ---------------------------------------------------------------


def _mini() -> dict[int, RecipeEval]:
    config = load_config(MINI)
    snapshot = WorkTreeSnapshot(config.root)
    repo = load_repo(snapshot, config, with_changelog=False)
    out: dict[int, RecipeEval] = {}
    for job in expand(repo):
        result = evaluate_job(job, config, snapshot)
        assert result is not None
        out[job.concs[0]] = result
    return out


def test_a_config_file_naming_a_missing_recipe_says_so_and_shows_server_sh_defaults() -> None:
    result = _mini()[1]
    assert result.errors == [f"{RECIPES}/missing.yaml: not found in work tree; the recipe reads it "
                             "(rule `gb200-nv llm-d wrapper` names it for this job)"]
    # /etc/llmd-recipes is mounted read-only from the repository: `[[ -f ]]` is false, server.sh warns and
    # starts vLLM with its defaults (TP 1, EP on, no extra-args)
    prefill = values(role_flags(result, "prefill"))
    assert prefill["--tensor-parallel-size"] == "1" and "--enable-expert-parallel" in prefill
    assert value_at(flag(role_flags(result, "prefill"), "--tensor-parallel-size")) == (SERVER, 42)
    assert "--max-num-seqs" not in prefill


def test_a_recipe_without_the_role_block_names_the_role_it_lacks() -> None:
    result = _mini()[2]
    assert result.errors == [f"{SERVER}:48: {RECIPES}/no-decode.yaml has no `decode`: the program takes its "
                             "default ({})"]
    assert values(role_flags(result, "prefill"))["--max-num-seqs"] == "16"
    assert "--max-num-seqs" not in values(role_flags(result, "decode"))


def test_malformed_extra_args_give_the_reason_and_the_yaml_line_not_a_traceback() -> None:
    result = _mini()[4]
    assert result.errors == [
        f"{SERVER}:48: the program fails: `(section.get('extra-args') or '').strip()`: a list has no .strip "
        f"(its value at {RECIPES}/bad-extra-args.yaml:5:5); only what it printed before is read",
        f"{SERVER}:48: it prints ROLE_EXTRA_ARGS='--chat-template-content-format \\'string\\' "
        "--override-generation-config {\"temperature\":0}', which the shell does not read back as one plain value "
        f"(from {RECIPES}/bad-extra-args.yaml:9:15); ROLE_EXTRA_ARGS is unknown",
        f"{SERVER}:48: the program fails: `int(tp)`: int() of 'one' (written at {RECIPES}/bad-extra-args.yaml:10:7); "
        "only what it printed before is read"]
    # the prefill program printed nothing: server.sh's defaults
    assert "--max-num-seqs" not in values(role_flags(result, "prefill"))
    # the decode's extra-args is unknown (one unknown word where flags were), its TP stays at the default
    decode = role_flags(result, "decode")
    assert values(decode)["--tensor-parallel-size"] == "1"
    assert decode[-1].value is not None and decode[-1].value.text is None


def test_recipe_show_json_gives_each_role_its_flags_env_and_errors_for_the_small_tree() -> None:
    out = CliRunner().invoke(cli, ["recipe", "show", KEY, "--conc", "8", "--format", "json", "--repo", str(MINI)])
    assert out.exit_code == 0, out.output
    [doc] = json.loads(out.output)
    assert [s["role"] for s in doc["servers"]] == ["prefill", "decode"]
    prefill, decode = ({f["name"]: f for f in s["flags"]} for s in doc["servers"])
    assert prefill["--gpu-memory-utilization"]["value"]["text"] == "0.95"
    assert prefill["--gpu-memory-utilization"]["location"]["line"] == 7  # two flags on one folded line
    assert prefill["--enforce-eager"]["location"] == {"path": f"{RECIPES}/pure-tp-decode.yaml", "line": 7,
                                                       "column": 35, "end_line": 7, "end_column": 50}
    assert decode["--tensor-parallel-size"]["value"]["text"] == "8" and "--enable-expert-parallel" not in decode
    assert decode["--nnodes"]["value"]["text"] == "2" and "--headless" not in decode
    prefill_env, decode_env = (s["env"] for s in doc["servers"])
    # server.sh's `${X:-ibgda}` keeps the recipe's value; its unconditional export overrides the recipe
    assert prefill_env["NVSHMEM_REMOTE_TRANSPORT"]["text"] == "none"
    assert prefill_env["VLLM_SKIP_P2P_CHECK"]["location"]["path"] == SERVER
    assert decode_env["NCCL_CUMEM_ENABLE"]["text"] == "1"  # an unquoted YAML integer, printed as Python's repr
    assert doc["errors"] == []
