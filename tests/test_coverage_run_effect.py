"""Coverage asks whether a change alters what a config's jobs run, not whether a file they read changed.

- A real commit, InferenceX ed5867f9e998 (#1317), extracted under tests/data/check_real: 89 recipes only
  guard ``hf download "$MODEL"`` behind a local-path check.  No server line or environment changes, so no
  config is uncovered (before: one ``coverage-uncovered-key`` error per config those recipes serve).
- Changes of the real tree at 843c6254f that do alter a run stay uncovered without an entry: a server flag,
  an exported variable before the server, a benchmark-client option after it (evaluation does not model the
  client, so a change after the server counts wherever the jobs reach it); a comment, and the ``hf download``
  guard undone, count for nothing.
- A launcher's change counts for the jobs its branch conditions are not false for: a new ``elif`` for a
  model no config has changes nothing; a change in the single-node branch changes every single-node job of
  the fleet and no multinode one.
- A shared library's function counts for the jobs that call it (a synthetic repository, small enough to
  show each case), and after the server only where the jobs reach it: a call their evaluation makes on a
  branch they can take (not the eval steps of a throughput job), or a name code they run spells (a trap; a
  real agentic recipe's `trap cleanup_agentic_services EXIT`, whose change had counted for nothing), at the
  base as at the head (a head that turns a step off before the server still changed what the base's jobs
  ran). Such a finding names what runs after the server and points at it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import CLIENT_EDITS, TRAP_RECIPE
from test_changelog_support import Repo, clear_github_env, git, run
from test_claims_real import replay

DATA = Path(__file__).parent / "data" / "check_real"
SN = "benchmarks/single_node/fixed_seq_len"


def uncovered_findings(path: Path, base: str, capsys: pytest.CaptureFixture[str]) -> dict[str, dict[str, Any]]:
    """Each uncovered config key -> its ``coverage-uncovered-key`` finding (JSON)."""
    code, out, err = run(["check", "--repo", str(path), "--base", base, "--format", "json",
                          "--select", "coverage-uncovered-key"], capsys)
    assert code in (0, 1), err
    return {key: f for f in json.loads(out)["findings"] for key in f["data"].get("keys", [f["data"]["key"]])}


def uncovered(path: Path, base: str, capsys: pytest.CaptureFixture[str]) -> dict[str, str]:
    """Each uncovered config key -> the path of the first cause."""
    return {key: f["path"] for key, f in uncovered_findings(path, base, capsys).items()}


def uncovered_at(path: Path, base: str, capsys: pytest.CaptureFixture[str]) -> dict[str, tuple[int, str]]:
    """Each uncovered config key -> the line and message of its finding."""
    return {key: (f["line"], f["message"]) for key, f in uncovered_findings(path, base, capsys).items()}


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, (path, old)
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def commit(repo: Path, message: str) -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)


def test_a_guarded_download_changes_no_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    repo, base = replay("ed5867f9e998", tmp_path, monkeypatch, data=DATA)
    changed = git(repo.path, "diff", "--name-only", base, "HEAD").split()
    recipes = {p for p in changed if p.startswith("benchmarks/single_node/")}
    # The jobs run the changed recipes (kept directly under single_node/ then, on three fleets' rules) ...
    from ci_tools.config import load_config
    from ci_tools.jobs.contract import resolve_recipe
    from ci_tools.jobs.matrix import expand
    from ci_tools.model.repository import load_repo
    from ci_tools.revision.snapshot import GitSnapshot

    config, snapshot = load_config(repo.path), GitSnapshot(repo.path, "HEAD")
    jobs = expand(load_repo(snapshot, config, with_changelog=False))
    assert len(recipes) == 3 and {resolve_recipe(j, config, snapshot).path for j in jobs} == recipes
    # ... and none of them runs anything else.
    assert uncovered(repo.path, base, capsys) == {}


def test_changes_of_real_recipes_count_when_they_alter_the_run(real_repo: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    edit(real_repo / SN / "dsr1_fp8_mi325x.sh", "--mem-fraction-static=0.8 ", "--mem-fraction-static=0.85 ")
    edit(real_repo / SN / "dsr1_fp4_mi355x.sh", "export ROCM_QUICK_REDUCE_QUANTIZATION=INT4",
         "export ROCM_QUICK_REDUCE_QUANTIZATION=INT8")
    edit(real_repo / SN / "dsr1_fp4_b200.sh", "run_benchmark_serving \\\n",
         "run_benchmark_serving \\\n    --use-chat-template \\\n")
    edit(real_repo / SN / "qwen3.5_fp8_mi355x.sh", 'if [[ "$MODEL" != /* ]]; then hf download "$MODEL"; fi',
         'hf download "$MODEL"')
    edit(real_repo / SN / "dsr1_fp8_b200.sh", "\nnvidia-smi", "\n# the GPUs, for the log\nnvidia-smi")
    commit(real_repo, "five recipes")
    found = uncovered_at(real_repo, "origin/main", capsys)
    assert {k: m.split(" (", 1)[1].split(")", 1)[0].rsplit(" at ", 1)[1] for k, (_, m) in found.items()} == {
        "dsr1-fp8-mi325x-sglang": f"{SN}/dsr1_fp8_mi325x.sh:{found['dsr1-fp8-mi325x-sglang'][0]}",  # a server flag
        "dsr1-fp4-mi355x-sglang": f"{SN}/dsr1_fp4_mi355x.sh:{found['dsr1-fp4-mi355x-sglang'][0]}",  # exported before it
        "dsr1-fp4-b200-sglang": f"{SN}/dsr1_fp4_b200.sh:{found['dsr1-fp4-b200-sglang'][0]}",  # a client option after it
    }
    # After the server, the message says so, at the line that changed (the client's new option).
    line, message = found["dsr1-fp4-b200-sglang"]
    lines = (real_repo / SN / "dsr1_fp4_b200.sh").read_text(encoding="utf-8").splitlines()
    assert lines[line - 1].strip() == "--use-chat-template \\"
    assert "(a statement of the recipe, which the jobs run after the server, changed at " in message
    assert "after the server" not in found["dsr1-fp8-mi325x-sglang"][1]


def test_a_launcher_change_counts_for_the_jobs_its_branch_runs_for(real_repo: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    edit(real_repo / "runners/launch_b300-nv.sh",
         'elif [[ $MODEL_PREFIX == "minimaxm2.5" && $PRECISION == "fp4" && $FRAMEWORK == "dynamo-vllm" ]]; then',
         'elif [[ $MODEL_PREFIX == "glm9" && $PRECISION == "fp4" && $FRAMEWORK == "dynamo-vllm" ]]; then\n'
         '    export MODEL_PATH="/data/models/GLM-9"\n'
         'elif [[ $MODEL_PREFIX == "minimaxm2.5" && $PRECISION == "fp4" && $FRAMEWORK == "dynamo-vllm" ]]; then')
    edit(real_repo / "runners/launch_mi355x-amds.sh", "--cpus-per-task=128 --time=500 --no-shell",
         "--cpus-per-task=96 --time=500 --no-shell")
    # The multinode branch of the script launch_b200-dgxc-slurm.sh links to: a variable exported to what it starts
    # (flipping the default of EVAL_ONLY would change nothing: the workflow sets EVAL_ONLY for every job).
    edit(real_repo / "runners/launch_b200-dgxc.sh", 'export EVAL_ONLY="${EVAL_ONLY:-false}"',
         'export EVAL_ONLY="${EVAL_ONLY:-false}"\n    export NCCL_DEBUG=INFO')
    commit(real_repo, "three launchers")
    found = uncovered(real_repo, "origin/main", capsys)
    # Nothing on b300: no config is glm9.
    assert set(found.values()) == {"runners/launch_mi355x-amds.sh", "runners/launch_b200-dgxc.sh"}
    from ci_tools.config import load_config
    from ci_tools.jobs.resolution import fleets_of
    from ci_tools.model.repository import load_repo
    from ci_tools.revision.snapshot import WorkTreeSnapshot

    repo = load_repo(WorkTreeSnapshot(real_repo), load_config(real_repo), with_changelog=False)

    def on(fleet: str, multinode: bool) -> set[str]:
        return {k for k, e in repo.configs.items() if bool(e.data.get("multinode")) == multinode
                and fleet in fleets_of(str(e.data.get("runner")), repo.runner_labels)}

    assert on("mi355x-amds", True)  # the salloc line is in the single-node branch: not theirs
    assert {k for k, p in found.items() if p.endswith("mi355x-amds.sh")} == on("mi355x-amds", False)
    # The multinode jobs of b200-dgxc nodes and, through the link, of b200-dgxc-slurm ones; no single-node job,
    # and no tilert job: their branch hands the launcher over to their own script (`exec bash`) before the line.
    linked = {k for k, p in found.items() if p.endswith("b200-dgxc.sh")}
    assert on("b200-dgxc-slurm", True) - on("b200-dgxc", True) and on("b200-dgxc", False)
    tilert = {k for k, e in repo.configs.items() if e.data.get("framework") == "tilert"}
    assert tilert and linked == (on("b200-dgxc-slurm", True) | on("b200-dgxc", True)) - tilert


def two_model_master(runner: str, image: str) -> str:
    """A master config of two vLLM keys, ma-fp8-<runner>-vllm and mb-fp8-<runner>-vllm, one job row each."""
    return "".join(f"""\
{prefix}-fp8-{runner}-vllm:
  image: {image}
  model: org/{prefix}
  model-prefix: {prefix}
  runner: {runner}
  precision: fp8
  framework: vllm
  multinode: false
  scenarios:
    fixed-seq-len:
    - isl: 1024
      osl: 1024
      search-space:
      - {{ tp: 8, conc-start: 4, conc-end: 8 }}
""" for prefix in ("ma", "mb"))


def adding_log(key: str) -> bytes:
    """A changelog of the one entry that added ``key``."""
    return f"""\
- config-keys:
    - {key}
  description:
    - "Add the configs"
  pr-link: https://github.com/acme/bench/pull/1
""".encode()


MASTER = two_model_master("mi355x", "vllm/vllm-openai-rocm:v0.1")
LOG = adding_log("ma-fp8-mi355x-vllm")
LIB = """\
#!/usr/bin/env bash
client_options() { echo "--num-prompts 10"; }
warmup() { echo "--warmup 600"; }
run_client() { python3 bench.py $(client_options) "$@"; }
run_agentic() { python3 replay.py $(warmup) "$@"; }
server_args() { echo "--max-num-seqs 64"; }
"""
RECIPE = """\
#!/usr/bin/env bash
source "$(dirname "$0")/../../benchmark_lib.sh"
vllm serve "$MODEL" --tensor-parallel-size "$TP" $(server_args) &
{client} --max-concurrency "$CONC"
"""


def test_a_library_function_counts_for_the_jobs_that_call_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    clear_github_env(monkeypatch)
    repo = Repo(tmp_path / "repo")
    files: dict[str, bytes | None] = {
        ".ci-tools.yaml": b"repository: acme/bench\n",
        "configs/amd-master.yaml": MASTER.encode(),
        "configs/runners.yaml": b"labels:\n  mi355x:\n    - mi355x-amds_01\nhardware: {}\n",
        "benchmarks/benchmark_lib.sh": LIB.encode(),
        f"{SN}/ma_fp8_mi355x_vllm.sh": RECIPE.format(client="run_client").encode(),
        f"{SN}/mb_fp8_mi355x_vllm.sh": RECIPE.format(client="run_agentic").encode(),
        "perf-changelog.yaml": LOG,
    }
    base = repo.commit(files, "base")

    def changed_lib(old: str, new: str) -> dict[str, str]:
        repo.commit({"benchmarks/benchmark_lib.sh": LIB.replace(old, new).encode()}, f"{old} -> {new}")
        found = uncovered(repo.path, base, capsys)
        repo.commit({"benchmarks/benchmark_lib.sh": LIB.encode()}, "back")
        return found

    lib = "benchmarks/benchmark_lib.sh"
    # Called through run_client, after the server: only the config whose recipe calls it.
    assert changed_lib("--num-prompts 10", "--num-prompts 20") == {"ma-fp8-mi355x-vllm": lib}
    assert changed_lib("--warmup 600", "--warmup 1800") == {"mb-fp8-mi355x-vllm": lib}
    # Called before the server: what it changes there decides; a server flag is a change for both.
    assert changed_lib("--max-num-seqs 64", "--max-num-seqs 128") == {"ma-fp8-mi355x-vllm": lib,
                                                                       "mb-fp8-mi355x-vllm": lib}
    assert changed_lib('server_args() { echo "--max-num-seqs 64"; }',
                       'server_args() {\n    # the batch limit\n    echo "--max-num-seqs 64"\n}') == {}
    # A function nobody calls.
    assert changed_lib("#!/usr/bin/env bash\n", "#!/usr/bin/env bash\nunused() { echo 1; }\n") == {}


EVAL_LIB = LIB + """\
eval_summary() { echo "summary v1"; }
run_eval() { python3 lm_eval.py; eval_summary; }
cleanup() { echo "cleanup: stop the server"; }
report() { echo "report: eval_summary is written by run_eval"; }
"""
EVAL_RECIPE = """\
#!/usr/bin/env bash
source "$(dirname "$0")/../../benchmark_lib.sh"
trap cleanup EXIT
vllm serve "$MODEL" --tensor-parallel-size "$TP" &
run_client --max-concurrency "$CONC"
if [ "${RUN_EVAL}" = "true" ]; then
    run_eval
fi
"""


def eval_repo(tmp_path: Path, ma_recipe: str, mb_recipe: str) -> tuple[Repo, str]:
    """A repository of the two keys on :data:`EVAL_LIB`, with these recipes; its first commit."""
    repo = Repo(tmp_path / "repo")
    return repo, repo.commit({
        ".ci-tools.yaml": b"repository: acme/bench\n",
        "configs/amd-master.yaml": MASTER.encode(),
        "configs/runners.yaml": b"labels:\n  mi355x:\n    - mi355x-amds_01\nhardware: {}\n",
        "benchmarks/benchmark_lib.sh": EVAL_LIB.encode(),
        f"{SN}/ma_fp8_mi355x_vllm.sh": ma_recipe.encode(),
        f"{SN}/mb_fp8_mi355x_vllm.sh": mb_recipe.encode(),
        "perf-changelog.yaml": LOG,
    }, "base")


def test_a_function_counts_only_where_the_jobs_reach_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """After the server, a changed function counts where a branch the jobs can take calls it, or code they run
    spells its name (a trap); the eval steps of throughput jobs, and a name in an uncalled function's message,
    do not."""
    clear_github_env(monkeypatch)
    repo, base = eval_repo(tmp_path, EVAL_RECIPE, EVAL_RECIPE.replace("trap cleanup EXIT\n", ""))

    def changed_lib(old: str, new: str) -> dict[str, str]:
        assert old in EVAL_LIB
        repo.commit({"benchmarks/benchmark_lib.sh": EVAL_LIB.replace(old, new).encode()}, f"{old} -> {new}")
        found = uncovered(repo.path, base, capsys)
        repo.commit({"benchmarks/benchmark_lib.sh": EVAL_LIB.encode()}, "back")
        return found

    lib = "benchmarks/benchmark_lib.sh"
    repo.commit({"benchmarks/benchmark_lib.sh": EVAL_LIB.replace("--num-prompts 10", "--num-prompts 20").encode()},
                "more prompts")
    # The message names the function the jobs run after the server, where it is defined.
    assert uncovered_at(repo.path, base, capsys)["ma-fp8-mi355x-vllm"] == (2, (
        "config `ma-fp8-mi355x-vllm` is affected by this change (client_options of benchmark_lib.sh, which the jobs "
        "run after the server, changed at benchmarks/benchmark_lib.sh:2) but no entry appended to perf-changelog.yaml "
        "covers it; expected an appended entry whose config-keys match `ma-fp8-mi355x-vllm`"))
    repo.commit({"benchmarks/benchmark_lib.sh": EVAL_LIB.encode()}, "back")
    assert changed_lib("summary v1", "summary v2") == {}  # only `RUN_EVAL=true` runs it: no job here does
    assert changed_lib("python3 lm_eval.py;", "python3 lm_eval.py --limit 10;") == {}
    assert changed_lib("stop the server", "stop the server now") == {"ma-fp8-mi355x-vllm": lib}  # its trap
    assert changed_lib("--num-prompts 10", "--num-prompts 20") == {"ma-fp8-mi355x-vllm": lib,
                                                                   "mb-fp8-mi355x-vllm": lib}


@CLIENT_EDITS
def test_a_real_trap_handler_counts_for_the_configs_whose_recipe_sets_it(
        real_client_edits: tuple[Path, dict[str, Any]]) -> None:
    """A real agentic recipe stops its server in a function only `trap cleanup_agentic_services EXIT` names:
    a change to it changes how every job of the recipe ends (it had counted for nothing: no command calls
    it).  (The same commit gives `build_replay_cmd` a default-keeping override, which counts for no
    single-node config: tests/test_coverage_unset_reads.py.)"""
    from ci_tools.config import load_config
    from ci_tools.jobs.contract import resolve_recipe
    from ci_tools.jobs.matrix import expand
    from ci_tools.model.repository import load_repo
    from ci_tools.revision.snapshot import WorkTreeSnapshot

    repo, found = real_client_edits
    config, snapshot = load_config(repo), WorkTreeSnapshot(repo)
    runs = {j.config_key for j in expand(load_repo(snapshot, config, with_changelog=False))
            if resolve_recipe(j, config, snapshot).path == TRAP_RECIPE}
    assert runs and {key: found[key]["path"] for key in runs if key in found} == dict.fromkeys(runs, TRAP_RECIPE)
    assert {f["path"] for key, f in found.items() if key not in runs} == {"benchmarks/benchmark_lib.sh"}


GATED_RECIPE = """\
#!/usr/bin/env bash
source "$(dirname "$0")/../../benchmark_lib.sh"
WITH_EVAL=1
vllm serve "$MODEL" --tensor-parallel-size "$TP" &
run_client --max-concurrency "$CONC"
if [ "$WITH_EVAL" = 1 ]; then
    run_eval
fi
"""


def test_a_function_the_base_reaches_counts_though_the_head_does_not(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """The head turns the eval step off before the server (alone, it changes what runs after the server, though
    not the server line), and edits it: the base's jobs ran the edited function, so the run changed; the base
    is evaluated for it."""
    clear_github_env(monkeypatch)
    repo, base = eval_repo(tmp_path, GATED_RECIPE, EVAL_RECIPE)
    lib, recipe = "benchmarks/benchmark_lib.sh", f"{SN}/ma_fp8_mi355x_vllm.sh"
    # Turning the step off alone changes what runs after the server (the server line stays).
    repo.commit({recipe: GATED_RECIPE.replace("WITH_EVAL=1", "WITH_EVAL=0").encode()}, "no eval step")
    assert uncovered(repo.path, base, capsys) == {"ma-fp8-mi355x-vllm": recipe}
    repo.commit({recipe: GATED_RECIPE.encode()}, "the eval step again")
    repo.commit({"benchmarks/benchmark_lib.sh": EVAL_LIB.replace("summary v1", "summary v2").encode()}, "summary")
    assert uncovered(repo.path, base, capsys) == {"ma-fp8-mi355x-vllm": lib}  # WITH_EVAL=1: run_eval runs
    repo.commit({f"{SN}/ma_fp8_mi355x_vllm.sh": GATED_RECIPE.replace("WITH_EVAL=1", "WITH_EVAL=0").encode()},
                "no eval step")
    # The head reaches eval_summary from no job; the base's ma jobs did.
    assert uncovered(repo.path, base, capsys) == {"ma-fp8-mi355x-vllm": lib}


VALUED_RECIPE = """\
#!/usr/bin/env bash
source "$(dirname "$0")/../../benchmark_lib.sh"
NUM_PROMPTS=$((CONC * 10))
BANNER="serving $MODEL"
echo "$BANNER"
vllm serve "$MODEL" --tensor-parallel-size "$TP" &
run_client --max-concurrency "$CONC" --num-prompts "$NUM_PROMPTS"
"""


def test_a_value_set_before_the_server_and_read_after_it_counts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    """A change before the server that changes only what the client is given (the server line and its
    environment stay) changed the run; one that changes a value only the steps before the server read did not."""
    clear_github_env(monkeypatch)
    repo, base = eval_repo(tmp_path, VALUED_RECIPE, EVAL_RECIPE)
    recipe = f"{SN}/ma_fp8_mi355x_vllm.sh"
    repo.commit({recipe: VALUED_RECIPE.replace("CONC * 10", "CONC * 20").encode()}, "more prompts")
    assert uncovered(repo.path, base, capsys) == {"ma-fp8-mi355x-vllm": recipe}
    repo.commit({recipe: VALUED_RECIPE.replace("serving $MODEL", "now serving $MODEL").encode()}, "banner")
    assert uncovered(repo.path, base, capsys) == {}
