"""AMD disaggregated recipes followed from the launcher to server_sglang.sh, checked flag by flag.

Expected values come from reading the real scripts: the recipe exports
PREFILL_ENABLE_EP/DP from PREFILL_EP/PREFILL_DP_ATTN, submit.sh computes
PREFILL_TP_SIZE = PREFILL_NODES * PREFILL_TP / PREFILL_WORKERS, job.slurm
passes its ``-e`` list into the container, and server_sglang.sh builds each
role's flags from ``amd_utils/models.yaml`` (entry ``DeepSeek-R1-0528``,
lines 139-169) through its ``eval "$(python3 -c ...)"`` program.
"""

from __future__ import annotations

from ci_tools.config import load_config
from ci_tools.findings import Location
from ci_tools.shell.model import Value
from ci_tools.shell.state import ArrayVal
from ci_tools.evaluation.multinode.chain import ChainInterpreter
from ci_tools.evaluation.multinode.py_snippet import SnippetError, model_snippet
from ci_tools.shell.parse import parse_script
from ci_tools.revision.snapshot import WorkTreeSnapshot
from multinode_corpus import evaluation, find_job, flag, role_env, role_flags, values

import pytest

MODELS = "benchmarks/multi_node/amd_utils/models.yaml"
SERVER = "benchmarks/multi_node/amd_utils/server_sglang.sh"
BASE_FLAGS = {
    "--decode-log-interval": "1000", "--log-level": "warning", "--watchdog-timeout": "3600",
    "--load-balance-method": "round_robin", "--kv-cache-dtype": "fp8_e4m3", "--attention-backend": "aiter",
    # KV_P2P_TRANSFER=mori is never passed into the container (not in job.slurm's -e list),
    # so models.yaml's backend stays
    "--disaggregation-transfer-backend": "mori",
}


def test_dep8_prefill_and_decode_dsr1_fp8_read_models_yaml_through_the_python_program() -> None:
    job = find_job("dsr1-fp8-mi355x-sglang-disagg", concs=[1024, 2048])
    result = evaluation(job)
    assert result.roles == ["prefill", "decode"], result.errors
    prefill = values(role_flags(result, "prefill"))
    decode = values(role_flags(result, "decode"))
    for role in (prefill, decode):
        assert {k: role[k] for k in BASE_FLAGS} == BASE_FLAGS
        # PREFILL_EP=8 -> EP on, dp-attn true -> DP on: ep_flags and dp_flags of models.yaml
        assert (role["--tp-size"], role["--ep-size"], role["--dp-size"]) == ("8", "8", "8")
        assert role["--ep-dispatch-algorithm"] == "fake" and role["--moe-a2a-backend"] == "mori"
        assert "--enable-dp-attention" in role and role["--moe-dense-tp-size"] == "1"
        assert role["--model-path"] == "/models/DeepSeek-R1-0528"
        # DP+EP: max-running-requests is the largest concurrency of CONC_LIST
        assert role["--max-running-requests"] == "2048"
        assert "--speculative-algorithm" not in role  # DECODE_MTP_SIZE=0
    assert prefill["--disaggregation-mode"] == "prefill" and decode["--disaggregation-mode"] == "decode"
    assert prefill["--mem-fraction-static"] == "0.8" and decode["--mem-fraction-static"] == "0.85"
    # eval_formula("MORI_MAX_DISPATCH_TOKENS_PREFILL * PREFILL_TP_SIZE") = 8192 * 8 (env.sh sets 8192)
    assert prefill["--chunked-prefill-size"] == "65536"
    assert prefill["--cuda-graph-bs"] == "1 2 3"
    assert decode["--cuda-graph-bs"] == " ".join(str(i) for i in range(1, 161))  # decode.dp range 1-160
    assert "--disable-radix-cache" in prefill and "--prefill-round-robin-balance" in decode
    assert "--context-length" not in prefill  # no context_length in this entry
    assert flag(role_flags(result, "prefill"), "--disaggregation-ib-device").value.text is None  # type: ignore[union-attr]
    # the decode's dispatch tokens: BENCH_MAX_CONC_VALUE / DECODE_TP_SIZE = 2048 / 8
    assert role_env(result, "decode")["SGLANG_MORI_NUM_MAX_DISPATCH_TOKENS_PER_RANK"].text == "256"
    assert role_env(result, "prefill")["SGLANG_MORI_NUM_MAX_DISPATCH_TOKENS_PER_RANK"].text == "8192"
    assert result.server_command[0].path == SERVER


def test_tp8_without_dp_or_ep_and_mtp_on_both_roles_dsr1_fp8() -> None:
    job = find_job("dsr1-fp8-mi355x-sglang-disagg-mtp", concs=[256, 128, 64, 32, 16, 8, 4, 2])
    result = evaluation(job)
    prefill = values(role_flags(result, "prefill"))
    decode = values(role_flags(result, "decode"))
    for role in (prefill, decode):
        assert role["--tp-size"] == "8" and "--ep-size" not in role and "--dp-size" not in role
        assert "--enable-dp-attention" not in role and "--ep-dispatch-algorithm" not in role
        # DECODE_MTP_SIZE=2: mtp_flags + --speculative-num-steps 2 --speculative-num-draft-tokens 3, both roles
        assert role["--speculative-algorithm"] == "NEXTN" and role["--speculative-eagle-topk"] == "1"
        assert role["--speculative-num-steps"] == "2" and role["--speculative-num-draft-tokens"] == "3"
    assert prefill["--max-running-requests"] == "128" and prefill["--chunked-prefill-size"] == "262144"
    assert prefill["--cuda-graph-bs"] == " ".join(str(i) for i in range(1, 129))
    assert decode["--max-running-requests"] == "128"
    assert decode["--cuda-graph-bs"] == " ".join(str(i) for i in range(1, 129))


def test_the_models_yaml_program_keeps_yaml_lines_and_refuses_other_shapes() -> None:
    from conftest import full_corpus_dir

    root = full_corpus_dir()
    snapshot = WorkTreeSnapshot(root)
    interp = ChainInterpreter("x.sh", load_config(root), snapshot)
    data = snapshot.read(SERVER)
    assert data is not None
    text = data.decode()
    start = text.index('eval "$(python3 -c "') + len('eval "$(python3 -c "')
    program = text[start:text.index('\n")"', start)].replace('\\"', '"')
    program = program.replace("${MODELS_YAML}", MODELS).replace("${MODEL_NAME}", "DeepSeek-R1-0528")
    program = program.replace("${IS_AGENTIC:-0}", "0")
    env = {"MORI_MAX_DISPATCH_TOKENS_PREFILL": "8192", "PREFILL_TP_SIZE": "4"}
    got = {a.name: a.value for a in model_snippet(program, interp.repo_file, env, Location(SERVER, 79))}
    assert got["PREFILL_MEM_FRACTION_STATIC"].text == "0.8"
    assert got["PREFILL_MEM_FRACTION_STATIC"].location.as_text() == f"{MODELS}:145:26"
    assert got["PREFILL_CHUNKED_PREFILL_SIZE_DP"].text == "32768"  # 8192 * 4
    assert got["DECODE_CUDA_GRAPH_BS_DP_END"].text == "160"
    assert got["PREFILL_DISABLE_RADIX_CACHE"].text == "True"  # Python's str of the YAML boolean
    assert got["PREFILL_CONTEXT_LENGTH_DP"].text == "" and got["PREFILL_CONTEXT_LENGTH_DP"].location.path == SERVER
    # a range models.yaml writes ("1-512", not the program's default 1-160) is split where it is written
    v2 = {a.name: a.value for a in model_snippet(program.replace("DeepSeek-R1-0528", "DeepSeek-R1-0528-MXFP4-v2"),
                                                   interp.repo_file, env, Location(SERVER, 79))}
    assert (v2["DECODE_CUDA_GRAPH_BS_DP_START"].text, v2["DECODE_CUDA_GRAPH_BS_DP_END"].text) == ("1", "512")
    assert v2["DECODE_CUDA_GRAPH_BS_DP_END"].location.as_text().startswith(f"{MODELS}:356:")
    with pytest.raises(SnippetError, match="does not print values read with yaml.safe_load"):
        model_snippet("import json\nprint(1)\n", interp.repo_file, env, Location(SERVER, 1))


def _chain_run(source: bytes) -> ChainInterpreter:
    """``source`` run as t.sh by the chain interpreter over the real tree."""
    from conftest import full_corpus_dir

    root = full_corpus_dir()
    interp = ChainInterpreter("t.sh", load_config(root), WorkTreeSnapshot(root))
    interp.run(parse_script("t.sh", source))
    return interp


def test_command_substitutions_run_functions_pipelines_and_strings() -> None:
    interp = _chain_run(b'B="1024x64x2048"\nV=$(echo "$B" | tr \'x\' \'\\n\' | sort -n | tail -1)\n'
                        b'build() { local tp="$1"; echo --tp-size "$tp" --x $(seq 1 3); }\n'
                        b'CFG=$(build 8)\nP=$(printf \'%s --y %s\' "a b" c)\n'
                        b'CMD="python3 -m sglang.launch_server ${CFG} --host $(hostname)"\n'
                        b'setsid bash -c "$CMD" &\n')
    vars = interp.state.vars
    assert vars["V"].text == "2048"  # type: ignore[union-attr]
    assert vars["CFG"].text == "--tp-size 8 --x 1 2 3"  # type: ignore[union-attr]
    assert vars["P"].text == "a b --y c"  # type: ignore[union-attr]
    [server] = interp.state.servers
    got = {f.name: (f.value.text if f.value is not None else None) for f in server.flags}
    assert got["--tp-size"] == "8" and got["--x"] == "1" and got["--host"] is None  # $(hostname) stays unknown
    assert server.location.path == "t.sh" and server.location.line == 6  # where the string was built


def test_an_unknown_config_spliced_into_a_command_string_is_an_unknown_flag_not_nothing() -> None:
    """server_vllm.sh of July 2026: `PREFILL_CMD="vllm serve ... --kv-transfer-config '{...${NODE0_ADDR}...}'
    ${PREFILL_SERVER_CONFIG}"` run by `eval`.  A config the evaluation cannot read (here one `awk` rewrote from a
    file) could hold any flags: the server line has an unknown flag there, so no flag is taken as absent."""
    from ci_tools.claims.verdict.actual import absence_known
    from ci_tools.shell.model import RecipeEval
    from ci_tools.shell.server import UNKNOWN_FLAG

    interp = _chain_run(b'CFG=$(awk \'{print}\' /etc/vllm.conf)\n'
                        b'CMD="vllm serve /models/m --port 2584 --kv-transfer-config \'{\\"ip\\": \\"${NODE0_ADDR}\\"}\' ${CFG}"\n'
                        b'eval "$CMD" &\n')
    [server] = interp.state.servers
    names = [f.name for f in server.flags]
    assert names[:2] == ["--port", "--kv-transfer-config"] and names[2:] == [UNKNOWN_FLAG]
    assert not absence_known(RecipeEval("t.sh", servers=[list(server.flags)]))


def test_a_bare_docker_env_item_passes_the_node_shell_s_exported_value() -> None:
    """`-e EVAL_CONC` (job.slurm of June 2026) passes what the node's shell exports, as docker does (the stand-in
    docker of tests/standins does the same); `-e "EVAL_CONC=$EVAL_CONC"` (e7915589a788) is then no change."""
    from conftest import full_corpus_dir

    from ci_tools.evaluation.multinode.amd_disagg import _Containers, _env_items
    from ci_tools.findings import Location
    from ci_tools.shell.model import Value
    from ci_tools.shell.state import ArrayVal

    here = Location("job.slurm", 370)
    words = ["-e", "EVAL_CONC", "-e", '"RUN_EVAL=$RUN_EVAL"', "-e", "UNSET_ONE"]
    items = _env_items(ArrayVal(tuple(Value(w, here) for w in words), here))
    assert [(name, rhs) for name, rhs, _ in items] == [("EVAL_CONC", None), ("RUN_EVAL", '"$RUN_EVAL"'),
                                                        ("UNSET_ONE", None)]
    root = full_corpus_dir()
    containers = _Containers(load_config(root), WorkTreeSnapshot(root))
    interp = ChainInterpreter("job.slurm", load_config(root), WorkTreeSnapshot(root))
    exported = {"EVAL_CONC": Value("8", here), "RUN_EVAL": Value("true", here)}
    env = containers._container_env(interp, "job.slurm", exported, items, "0")
    assert {name: value.text for name, value in env.items()} == {"EVAL_CONC": "8", "RUN_EVAL": "true"}


def test_items_read_from_an_unknown_list_stay_unknown_in_the_command_they_build() -> None:
    """server_sglang.sh splits the nodes' addresses with `IFS=',' read -ra IP_ARRAY <<< "$IPADDRS"` and
    builds the router's `--prefill http://${IP_ARRAY[$i]}:8000` in a loop: the addresses are known only on
    the nodes, so each URL is unknown, but the flags are there, each where the line wrote it."""
    interp = _chain_run(b'read -r IPADDRS\nIFS="," read -ra IP_ARRAY <<< "$IPADDRS"\n'
                        b'read -rp "name: " -a NAMES\nread -rt 5 ONE TWO\nA=""\n'
                        b'for i in $(seq 0 1); do\n  A="$A --prefill http://${IP_ARRAY[$i]}:8000"\ndone\n'
                        b'CMD="python -m sglang_router.launch_router --port 30000 ${A} --decode x"\n'
                        b'bash -c "exec $CMD" &\n')
    vars = interp.state.vars
    assert isinstance(vars["IP_ARRAY"], ArrayVal) and isinstance(vars["NAMES"], ArrayVal)
    assert isinstance(vars["ONE"], Value) and isinstance(vars["TWO"], Value)  # `-t 5`: 5 is not a name
    assert "5" not in vars
    [router] = interp.state.servers
    got = [(f.name, f.value.text if f.value is not None else "", f.location.line) for f in router.flags]
    assert got == [("--port", "30000", 9), ("--prefill", None, 7), ("--prefill", None, 7), ("--decode", "x", 9)]


ATOM_MODELS = "benchmarks/multi_node/amd_utils/models_atom.yaml"


def test_atom_jobs_read_models_atom_yaml_through_the_heredoc_program() -> None:
    # server_atom.sh: `python3 << PYEOF > "$_yaml_tmp"` reads models_atom.yaml (entry DeepSeek-V4-Pro,
    # lines 29-38) and prints NAME='value' lines that `source "$_yaml_tmp"` reads back.
    job = find_job("dsv4-fp4-mi355x-atom-disagg", concs=[256, 512, 768, 1024, 2048])
    result = evaluation(job)
    assert result.roles == ["prefill", "decode"]
    assert not any("_yaml_tmp" in e or "not modelled" in e for e in result.errors), result.errors
    prefill, decode = role_flags(result, "prefill"), role_flags(result, "decode")
    assert values(decode)["-tp"] == "8"
    # prefill_tp_dp_flags (line 34), split into the parallel args of a DP-attention prefill
    for name in ("--enable-dp-attention", "--enable-tbo"):
        assert flag(prefill, name).value is None and flag(prefill, name).location.as_text() == f"{ATOM_MODELS}:34:24"
    kv = flag(prefill, "--kv_cache_dtype")
    assert kv.value is not None and kv.value.text == "fp8" and kv.value.location.as_text() == f"{ATOM_MODELS}:32:19"


# The two ATOM disaggregated jobs of the real tree, role by role, as server_atom.sh builds them from
# models_atom.yaml's DeepSeek-V4-Pro entry (lines 30-39): env (31), kv_cache_flags (32),
# prefill_tp_dp_flags (34), decode_tp_dp_flags (35), tp_dp_env (36, exported in TP+DPA mode only).
# No mem_frac_static / max_num_seqs / max_model_len there: those come from job.slurm's -e list
# (0.85, 256, ISL+OSL+256 = 9472), and the decode's --max-num-seqs from its largest concurrency.
_ATOM_COMMON = {"--model": "/models/DeepSeek-V4-Pro", "--host": "0.0.0.0", "--trust-remote-code": None,
                "-tp": "8", "--kv_cache_dtype": "fp8", "--block-size": "16", "--gpu-memory-utilization": "0.85",
                "--max-model-len": "9472", "--no-enable_prefix_caching": None}
_CAPTURE = "[" + ",".join(["1", "2", "4"] + [str(i) for i in range(8, 257, 8)]) + "]"
_ATOM_ENV = {"ATOM_MOE_GU_ITLV": ("1", 31), "AITER_BF16_FP8_MOE_BOUND": ("0", 31)}
_ATOM_DPA_ENV = {"GPU_MAX_HW_QUEUES": ("5", 36), "ATOM_CPU_AFFINITY": ("1", 36)}


@pytest.mark.parametrize("concs, dpa, decode_seqs", [([256, 512, 768, 1024, 2048], True, "2048"),
                                                     ([4, 8, 16, 32, 64, 128], False, "128")],
                         ids=["2P1D-dpa", "1P1D-tp8"])
def test_both_atom_jobs_have_every_flag_and_variable_of_their_models_atom_entry(
        concs: list[int], dpa: bool, decode_seqs: str) -> None:
    result = evaluation(find_job("dsv4-fp4-mi355x-atom-disagg", concs=concs))
    assert result.roles == ["prefill", "decode"] and result.errors == [], result.errors
    dpa_flags = {"--enable-dp-attention": None, "--enable-tbo": None} if dpa else {}
    expected = {
        "prefill": {**_ATOM_COMMON, "--server-port": "8010", **dpa_flags, "--max-num-seqs": "256"},
        "decode": {**_ATOM_COMMON, "--server-port": "8020", **dpa_flags, "--max-num-seqs": decode_seqs,
                   "--cudagraph-capture-sizes": _CAPTURE},
    }
    for role, dpa_line in (("prefill", 34), ("decode", 35)):
        flags = role_flags(result, role)
        got = values(flags)
        # its JSON names the host's address, known only on the node: an unknown value, not a bare flag
        kv_transfer = flag(flags, "--kv-transfer-config").value
        assert kv_transfer is not None and kv_transfer.text is None
        del got["--kv-transfer-config"]
        assert got == expected[role]
        assert flag(flags, "--kv_cache_dtype").value.location.as_text() == f"{ATOM_MODELS}:32:19"  # type: ignore[union-attr]
        for name in dpa_flags:
            assert flag(flags, name).location.as_text() == f"{ATOM_MODELS}:{dpa_line}:{24 if role == 'prefill' else 23}"
        env = role_env(result, role)
        for name, (text, line) in {**_ATOM_ENV, **(_ATOM_DPA_ENV if dpa else {})}.items():
            assert env[name].text == text and (env[name].location.path, env[name].location.line) == (ATOM_MODELS, line)
        if not dpa:
            assert not set(_ATOM_DPA_ENV) & set(env)


def test_export_of_an_unknown_pair_is_an_error_not_a_silent_gap() -> None:
    from conftest import full_corpus_dir

    root = full_corpus_dir()
    interp = ChainInterpreter("t.sh", load_config(root), WorkTreeSnapshot(root))
    interp.run(parse_script("t.sh", b'for p in $(some_tool --pairs); do\n    export "$p"\ndone\n'))
    assert interp.errors == ['t.sh:2: `"$p"` declares a variable whose name is not known; what it sets is unknown']


def test_flags_built_in_a_command_string_point_at_the_models_yaml_line() -> None:
    # server_sglang.sh builds PREFILL_CMD (line 735) from build_server_config's echo of models.yaml values.
    job = find_job("dsr1-fp4-mi355x-sglang-disagg", concs=[1, 2, 4, 8])
    prefill = role_flags(evaluation(job), "prefill")
    where = {f.name: (f.value.location if f.value is not None else f.location).as_text() for f in prefill}
    assert where["--mem-fraction-static"] == f"{MODELS}:337:26"  # prefill.mem_fraction_static
    assert where["--chunked-prefill-size"] == f"{MODELS}:348:29"  # prefill.no_dp.chunked_prefill_size
    assert where["--decode-log-interval"] == f"{MODELS}:332:15"  # base_flags, one string for several flags
    assert where["--attention-backend"] == f"{MODELS}:332:15"
    # written in the command string itself: the line that built it
    assert where["--host"] == f"{SERVER}:735:5"
    assert flag(prefill, "--host").location.note == "in the command string built here"


def test_a_models_program_of_another_shape_leaves_what_it_prints_unknown_not_empty() -> None:
    from conftest import full_corpus_dir

    root = full_corpus_dir()
    interp = ChainInterpreter("t.sh", load_config(root), WorkTreeSnapshot(root))
    # FLAGS: an expression the model does not follow; BAD: the program opens a file the repository lacks.
    program = (f"import yaml\nwith open('{ATOM_MODELS}') as f:\n    m = yaml.safe_load(f)\n"
               "k = sorted(m)[0]\nprint(f\"FLAGS='{m[k]['tp_dp_flags']}'\")\n")
    missing = "import yaml\nwith open('nope.yaml') as f:\n    m = yaml.safe_load(f)\nprint(f'BAD=\\\"{m.get(1)}\\\"')\n"
    interp.run(parse_script("t.sh", f'T=$(mktemp)\npython3 << EOF > "$T"\n{program}EOF\nsource "$T"\n'
                                    f'eval "$(python3 -c "{missing}")"\n'.encode()))
    flags, bad = interp.state.vars["FLAGS"], interp.state.vars["BAD"]
    assert isinstance(flags, Value) and flags.text is None and "is not a modelled expression" in flags.expression
    assert isinstance(bad, Value) and bad.text is None
    assert bad.expression.startswith("printed by the Python program at t.sh:10: nope.yaml is not a file")
    assert interp.errors == ["t.sh:10: the Python program is not modelled (nope.yaml is not a file of this "
                             "repository); the variables it prints are unknown"]


def test_a_run_strings_layout_finds_the_same_places_as_a_scan_of_its_spans() -> None:
    from ci_tools.evaluation.multinode.provenance import Layout, written_at

    yaml_line = Location("models.yaml", 12, 5)
    built = Location("server.sh", 40, 1)
    # "--tp 8 " written at the script line, "--ep 4" copied from a value whose parts come from two places
    inner = Value("--ep 4", yaml_line, spans=((5, yaml_line), (1, Location("server.sh", 7, 3))))
    spans = ((7, built), (6, inner), (3, Location("server.sh", 41, 1)))
    layout = Layout(spans)
    for start in range(0, 18):
        for end in range(start, 18):
            assert layout.written_at(start, end) == written_at(spans, start, end), (start, end)
    assert layout.written_at(7, 11) == yaml_line  # "--ep" lies in the models.yaml part
    assert layout.written_at(5, 9) is None  # across two places


def test_the_router_node_rank_0_starts_is_a_router_with_its_policy_flags_not_a_second_prefill() -> None:
    # server_sglang.sh builds ROUTER_CMD for agentic runs with ROUTER_POLICY_FLAGS' default (--policy
    # ${PREFILL_ROUTER_POLICY} --dp-aware ...) and the resilience flags, and runs it with `setsid bash -c "exec
    # $ROUTER_CMD"` after the prefill server: it had been read as another prefill server line.
    job = find_job("dsv4-fp4-mi355x-sglang-disagg-agentic-hicache-mtp", concs=[1])
    result = evaluation(job)
    assert result.roles == ["prefill", "decode"], result.errors
    (router,) = result.routers
    flags = values(list(router.flags))
    assert flags["--policy"] == "consistent_hashing"  # the recipe exports PREFILL_ROUTER_POLICY=consistent_hashing
    assert "--dp-aware" in flags and "--pd-disaggregation" in flags and flags["--port"] == "30000"
    assert flags["--health-check-interval-secs"] == "30" and "--disable-circuit-breaker" in flags
    assert router.location.path == SERVER
    assert "--dp-aware" not in values(role_flags(result, "prefill"))


def test_a_non_agentic_job_s_router_takes_the_random_policies() -> None:
    job = find_job("dsr1-fp8-mi355x-sglang-disagg", concs=[1024, 2048])
    (router,) = evaluation(job).routers
    flags = values(list(router.flags))
    assert (flags["--policy"], flags["--prefill-policy"], flags["--decode-policy"]) == ("random", "random", "random")
    assert flags["--cb-timeout-duration-secs"] == "15" and "--dp-aware" not in flags


def test_a_script_a_partly_known_string_or_another_program_runs_is_named_and_an_unknown_one_is_opaque() -> None:
    """`eval "$BENCH_CMD"` of a string known up to `bash .../bench.sh 2 1` names the client script; a script in the
    string handed to `docker run` is named too (relative to the running script's directory); an `eval` of a string
    whose program is unknown is a command whose program is known only at run time."""
    from conftest import full_corpus_dir
    from ci_tools.revision.read_log import ReadLog

    root = full_corpus_dir()
    log = ReadLog(WorkTreeSnapshot(root))
    interp = ChainInterpreter("benchmarks/multi_node/amd_utils/server_sglang.sh", load_config(root), log)
    interp.mounts["/workspace"] = ""
    interp.run(parse_script("t.sh", b'BENCH_CMD="bash /workspace/benchmarks/multi_node/amd_utils/bench.sh 2 1 '
                                    b'/run_logs/slurm_job-${SLURM_JOB_ID}"\neval "$BENCH_CMD"\n'
                                    b'docker run --rm img bash -lc "cd /x && bash trace_replay.sh /models"\n'))
    assert log.named_paths() == {"benchmarks/multi_node/amd_utils/bench.sh",
                                 "benchmarks/multi_node/amd_utils/trace_replay.sh"}
    assert not interp.opaque_commands and not log.read_paths()
    interp.run(parse_script("u.sh", b'eval "$(hostname) --serve"\nCMD=$(cat /etc/cmd)\neval "$CMD"\neval "$UNSET"\n'
                                    b'eval echo "$CMD"\n'))
    # an unset variable is empty: nothing runs; `echo` is known, whatever it is given
    assert [loc.line for loc in interp.opaque_commands] == [1, 3]
