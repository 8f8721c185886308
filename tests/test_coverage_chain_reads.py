"""A file a multinode job's chain reads, beyond what its recipe sources, counts for the configs whose chain reads it.

InferenceX's AMD disaggregated recipes run ``amd_utils/submit.sh``, which
``sbatch``-es ``job.slurm``, whose containers run ``server.sh`` and, by the
engine, ``server_sglang.sh`` or ``server_atom.sh`` with ``models.yaml`` or
``models_atom.yaml``.  No recipe sources them, so a change to them counted for
no config; the chain's evaluation now says which files each job reads
(``RecipeEval.read_files``, through :class:`ci_tools.revision.read_log.ReadLog`).
The configs expected are read from the master file itself (by their
``framework``), not from ci-tools.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from conftest import full_corpus_dir
from test_coverage_run_effect import commit, edit, uncovered, uncovered_findings

AMD_UTILS = "benchmarks/multi_node/amd_utils"


def _model_of(key: str) -> str:
    master = yaml.safe_load((full_corpus_dir() / "configs/amd-master.yaml").read_text(encoding="utf-8"))
    return str(master[key]["model"])


def _keys_of(framework: str) -> set[str]:
    master = yaml.safe_load((full_corpus_dir() / "configs/amd-master.yaml").read_text(encoding="utf-8"))
    return {key for key, entry in master.items() if entry.get("multinode") and entry.get("framework") == framework}


def test_a_changed_server_script_and_model_table_count_for_the_configs_whose_chain_reads_them(
        real_repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sglang, atom = _keys_of("sglang-disagg"), _keys_of("atom-disagg")
    assert len(sglang) >= 10 and atom  # the real tree's AMD disaggregated configs
    # A function the chain runs after its servers start (the barriers): what evaluation does not model counts.
    edit(real_repo / AMD_UTILS / "server_sglang.sh", "        sleep 5\n    done\n    wait \"$cmd\"\n",
         "        sleep 1\n    done\n    wait \"$cmd\"\n")
    edit(real_repo / AMD_UTILS / "models_atom.yaml", '  mtp_flags: "--method mtp --num-speculative-tokens"',
         '  mtp_flags: "--method mtp --num-speculative-tokens"\n  max_num_seqs: "128"')
    # DeepSeek-R1-0528's entry of the SGLang table: its two configs' servers start otherwise through it too.
    models = real_repo / AMD_UTILS / "models.yaml"
    lines = models.read_text(encoding="utf-8").split("\n")
    at = lines.index("DeepSeek-R1-0528:") + 6
    assert lines[at] == "    mem_fraction_static: 0.8"
    lines[at] = "    mem_fraction_static: 0.75"
    models.write_text("\n".join(lines), encoding="utf-8")
    commit(real_repo, "amd_utils: a watch's interval, DeepSeek-V4-Pro's sequences under ATOM, R1's memory")
    found = uncovered_findings(real_repo, "origin/main", capsys)
    assert set(found) == sglang | atom
    # A finding says the first cause of its configs (the other causes of a config are in its own finding's data).
    causes = {key: [(c["path"], c["reason"]) for c in f["data"]["causes"]] for key, f in found.items()}
    r1 = {key for key in sglang if _model_of(key).endswith("/DeepSeek-R1-0528")}
    assert len(r1) == 2
    for key in r1:
        assert causes[key][0][0] == f"{AMD_UTILS}/models.yaml"
    for key in sglang - r1:  # the table's change is no cause of theirs: their servers read another entry
        assert causes[key] == [(f"{AMD_UTILS}/server_sglang.sh", "file their multinode chain reads changed")]
    for key in atom:
        assert causes[key] == [(f"{AMD_UTILS}/models_atom.yaml", "file the multinode chain of "
                                "benchmarks/multi_node/dsv4_fp4_mi355x_atom-disagg.sh reads changed")]


def test_comments_the_same_data_another_model_s_entry_a_function_the_servers_show_and_tested_files_change_nothing(
        real_repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    edit(real_repo / AMD_UTILS / "job.slurm", 'ENGINE="${ENGINE:-sglang-disagg}"\n',
         '# The engine the recipe asks for.\nENGINE="${ENGINE:-sglang-disagg}"\n')
    edit(real_repo / AMD_UTILS / "models_atom.yaml", '  env: "ATOM_MOE_GU_ITLV=1 AITER_BF16_FP8_MOE_BOUND=0"',
         "  env: 'ATOM_MOE_GU_ITLV=1 AITER_BF16_FP8_MOE_BOUND=0'  # quoted otherwise, the same string")
    # No ATOM config of the tree serves MiniMax-M3 (its one ATOM disaggregated config serves DeepSeek-V4-Pro).
    edit(real_repo / AMD_UTILS / "models_atom.yaml", '  max_num_seqs: "256"', '  max_num_seqs: "128"')
    # A message of the decode rank before its server starts: after the prefill server's line in the file, yet in
    # the other branch of the rank test, so not after it (and no server starts otherwise).
    edit(real_repo / AMD_UTILS / "server_sglang.sh", '    echo "Decode node rank: $RANK"\n',
         '    echo "Decode node rank: $RANK (decode)"\n')
    # A function called only before the servers start, changed without changing any server's line.
    edit(real_repo / AMD_UTILS / "server_sglang.sh", '    local mode="$1"\n', '    local mode="$1"\n    local unused=""\n')
    # Files the chain only tests for (`[[ -f ]]`, then another program runs or reads them): a node exclusion, a
    # pre-flight check.  No server starts otherwise.
    edit(real_repo / AMD_UTILS / "node_excludes.yaml", "rules:\n", "rules:\n  - framework: sglang-disagg\n"
         "    models: [DeepSeek-R1-0528]\n    exclude_nodes: [mia1-p01-g09]\n")
    edit(real_repo / AMD_UTILS / "helpers/rdma_check.sh", "#!/bin/bash\n", "#!/bin/bash\necho rdma-check\n")
    commit(real_repo, "amd_utils: a comment, a quoting, MiniMax-M3's sequences under ATOM, a local, node checks")
    assert uncovered(real_repo, "origin/main", capsys) == {}


def test_every_amd_disaggregated_job_reads_its_whole_chain_even_where_a_call_is_replayed() -> None:
    """Jobs of one chain reuse the interpreter's record of a sourced file (``env.sh``): its reads are the later
    jobs' too."""
    from ci_tools.config import load_config
    from ci_tools.evaluation.evaluate import evaluate_job
    from ci_tools.jobs.matrix import expand
    from ci_tools.model.repository import load_repo
    from ci_tools.revision.snapshot import WorkTreeSnapshot

    config = load_config(full_corpus_dir())
    snapshot = WorkTreeSnapshot(config.root)
    sglang = _keys_of("sglang-disagg")
    jobs = [job for job in expand(load_repo(snapshot, config, with_changelog=False)) if job.config_key in sglang]
    chain = {f"{AMD_UTILS}/{name}" for name in
             ("submit.sh", "job.slurm", "server.sh", "env.sh", "server_sglang.sh", "models.yaml")}
    assert len(jobs) > 40
    server = f"{AMD_UTILS}/server_sglang.sh"
    lines = (full_corpus_dir() / server).read_text(encoding="utf-8").split("\n")
    # The `if` choosing the client (EVAL_ONLY, DRY_RUN, the client container, ...): what its conditions read then.
    image = next(n for n, text in enumerate(lines, 1) if text.strip().startswith('elif [[ -n "${CLIENT_IMAGE:-}"'))
    client_if = max(n for n, text in enumerate(lines[:image], 1) if text.strip().startswith('if [[ "${EVAL_ONLY:-'))
    for job in jobs:
        result = evaluate_job(job, config, snapshot)
        assert result is not None and result.servers
        assert chain <= result.read_files, (job.id, sorted(chain - result.read_files))
        assert f"{AMD_UTILS}/server_atom.sh" not in result.read_files
        values = result.branches[(server, client_if)]
        # CLIENT_IMAGE is not set in the container (job.slurm passes it in a string of values known on the node):
        # left out, unknown, not taken for unset.
        assert values["IS_AGENTIC_RUN"] == ("1" if job.scenario == "agentic-coding" else "0")
        assert values["EVAL_ONLY"] == "false" and "CLIENT_IMAGE" not in values


def amd_disaggregated() -> tuple[set[str], set[str]]:
    """The AMD disaggregated configs of the master file: throughput (fixed sequence lengths) and agentic ones."""
    master = yaml.safe_load((full_corpus_dir() / "configs/amd-master.yaml").read_text(encoding="utf-8"))
    keys = {key: set(entry.get("scenarios") or ()) for key, entry in master.items() if entry.get("multinode")
            and str(entry.get("framework", "")).endswith("-disagg") and (entry.get("disagg") or {}) is not None}
    return ({k for k, s in keys.items() if s == {"fixed-seq-len"}}, {k for k, s in keys.items() if s == {"agentic-coding"}})


def test_a_library_function_or_client_script_counts_for_the_multinode_configs_whose_chain_may_run_it(
        real_repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Changed bodies of benchmark_lib.sh functions count for a multinode config only where its chain may call one:
    `wait_for_amd_gpu_clean`, named in a string `job.slurm` hands to `bash -c` inside a container, for every AMD
    disaggregated config (`build_replay_cmd`, which only the agentic client `trace_replay.sh` calls, for the agentic
    one alone: test_coverage_unset_reads).  (Before, any change of the library counted for every multinode config
    whose recipe sources it.)  The client scripts themselves, which the chain names and does not run (`bench.sh`
    through `eval "$BENCH_CMD"`, a string known up to the script; `trace_replay.sh` in the client container's
    command), count for the configs that run them (before: for none)."""
    throughput, agentic = amd_disaggregated()
    assert len(throughput) >= 10 and len(agentic) == 1
    edit(real_repo / "benchmarks/benchmark_lib.sh",
         '        echo "waiting for prior-job GPU memory reclaim: vram%max=$vram_max"\n',
         '        echo "waiting for the prior job\'s GPU memory reclaim: vram%max=$vram_max"\n')
    commit(real_repo, "benchmark_lib: the drain gate's message")
    found = uncovered_findings(real_repo, "origin/main", capsys)
    # (three configs or more with one first cause share a finding, which gives that cause)
    causes = {key: [(c["path"], c["reason"]) for c in f["data"]["causes"]] for key, f in found.items()}
    reason = "wait_for_amd_gpu_clean of benchmark_lib.sh, which their multinode chain may call, changed"
    for key in throughput | agentic:
        assert causes[key] == [("benchmarks/benchmark_lib.sh", reason)]

    # The ATOM branch of the throughput client (`elif [[ "$ENGINE" == "atom-disagg" ]]`): false for the others' ENGINE.
    edit(real_repo / AMD_UTILS / "bench.sh", '        extra_flags="--trust-remote-code --tokenizer $MODEL_PATH"\n'
         '        if [ "$IS_MTP" = "true" ]; then\n', '        extra_flags="--trust-remote-code --tokenizer $MODEL_PATH '
         '--seed 7"\n        if [ "$IS_MTP" = "true" ]; then\n')
    edit(real_repo / AMD_UTILS / "trace_replay.sh", "install_agentic_deps\n", "install_agentic_deps\necho deps-ready\n")
    # A name the client container's environment file no longer forwards (#2395): a line of `server_sglang.sh` after
    # the servers, in the branch `elif [[ -n "${CLIENT_IMAGE:-}" && "$IS_AGENTIC_RUN" == "1" ]]`.  The SGLang
    # throughput jobs' chains reach it with IS_AGENTIC_RUN=0: false whatever their image (before: it counted for
    # them); the agentic job's, with 1 and an image known only on the node: it may run.
    edit(real_repo / AMD_UTILS / "server_sglang.sh", "ENABLE_METRICS IS_AGENTIC CLEAR_CACHE_BETWEEN_CONC",
         "ENABLE_METRICS CLEAR_CACHE_BETWEEN_CONC")
    commit(real_repo, "amd_utils: a seed for the ATOM throughput client, a line of the agentic client's log, the "
                      "client container's environment")
    found = uncovered_findings(real_repo, "HEAD~1", capsys)
    atom = {key for key in throughput if "atom" in key}
    assert atom and {key: {c["path"] for c in f["data"]["causes"]} for key, f in found.items()} == {
        **dict.fromkeys(atom, {f"{AMD_UTILS}/bench.sh"}),
        **dict.fromkeys(agentic, {f"{AMD_UTILS}/trace_replay.sh", f"{AMD_UTILS}/server_sglang.sh"})}


def test_the_branch_a_changed_line_of_a_client_loop_is_in_is_read_from_the_ifs_around_it() -> None:
    """A change of a client script comes as its whole `for` loop; the line that differs says which branch it is in:
    each earlier clause false, its own true (an `else`: every clause false), nested `if`s too."""
    from ci_tools.changelog.chain_reads import _branch_guards
    from ci_tools.changelog.shell_diff import read_side
    from ci_tools.jobs.launcher_copies import holds

    script = (b'for c in 1 2; do\n'                                  # 1
              b'    if [[ "$ENGINE" == "vllm" ]]; then\n'             # 2
              b'        f="--v"\n'                                    # 3
              b'    elif [[ "$ENGINE" == "atom" ]]; then\n'           # 4
              b'        if [[ "$MTP" == "true" ]]; then\n'           # 5
              b'            f="--mtp"\n'                              # 6
              b'        fi\n'                                         # 7
              b'    else\n'                                           # 8
              b'        f=""\n'                                       # 9
              b'    fi\n'                                             # 10
              b'    run --x "$f"\n'                                   # 11
              b'done\n')
    statements = read_side("bench.sh", script).statements

    def runs(line: int, **values: str) -> bool:
        return all(holds(g, values) is not False for g in _branch_guards(statements, line))

    assert runs(3, ENGINE="vllm") and not runs(3, ENGINE="sglang")
    assert runs(6, ENGINE="atom", MTP="true") and not runs(6, ENGINE="atom", MTP="false")
    assert not runs(6, ENGINE="vllm", MTP="true") and runs(6, ENGINE="atom")  # MTP unknown: it may run
    assert runs(9, ENGINE="sglang") and not runs(9, ENGINE="atom") and not runs(9, ENGINE="vllm")
    assert runs(11, ENGINE="vllm") and runs(11, ENGINE="sglang") and runs(11)
    # the `elif` line: evaluated once the `if` is false; a test that is false too changes nothing
    assert runs(4, ENGINE="atom") and not runs(4, ENGINE="sglang") and not runs(4, ENGINE="vllm")
    # `[ "$MTP" = "true" ]` (one bracket, a command: its words as the interpreter reads them) is decided alike
    single = read_side("bench.sh", script.replace(b'[[ "$MTP" == "true" ]]', b'[ "$MTP" = "true" ]')).statements
    assert [holds(g, {"ENGINE": "atom", "MTP": mtp}) for mtp in ("false", "true") for g in _branch_guards(single, 6)] \
        == [True, True, False, True, True, True]
