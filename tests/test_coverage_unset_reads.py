"""A changed function that runs as before where the variables its change reads are unset changes no job's run.

Real pull requests of InferenceX add overrides to the benchmark client that keep the old behaviour by default:
#2690 `--url ${AIPERF_SERVER_URL:-http://localhost:$PORT}`, #2171 `${AIPERF_NUM_DATASET_ENTRIES:-393}` and an
`if [[ -n "${AIPERF_TRACE_SOURCE_FLAG:-}" ]]; then ...; return 0; fi` opening a function, #2269 a condition that
gains `&& "${AIPERF_USE_DYNAMO_CONV_AWARE_ROUTING:-1}" != "0"`.  Each counted as a change for every job reaching
the function.  Here:

- the reduction (:mod:`ci_tools.changelog.unset_reads`) on such pairs and on pairs it must keep apart, each
  judged against real bash running both definitions with the variable unset and set;
- which variables are unset: none a file assigns or names other than by reading it, none an environment holds,
  none when a file assigns a computed name;
- coverage on a synthetic repository (a recipe that sets the variable keeps its config counted) and on the real
  tree (no single-node config counts for #2171's default-keeping edit, wherever its server starts; the multinode
  ones still do).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from ci_tools.changelog.shell_diff import read_side
from ci_tools.changelog.unset_reads import named_otherwise, reduced, same_when_unset, unset_names
from ci_tools.shell.parse import Node
from test_changelog_support import Repo, clear_github_env
from test_coverage_chain_reads import amd_disaggregated
from conftest import CLIENT_EDITS, TRAP_RECIPE
from test_coverage_run_effect import LIB, LOG, MASTER, RECIPE, SN, uncovered

BASH = shutil.which("bash")


def function(text: str, name: str = "f") -> Node:
    return read_side("lib.sh", text.encode()).functions[name]


def judged(base: str, head: str) -> bool:
    """Whether the two definitions run the same, the variables they read unset but those a caller sets (MODE,
    FRAMEWORK, PORT) and those they assign."""
    pair = function(base), function(head)
    files = [("lib.sh", base.encode()), ("lib.sh", head.encode())]
    unset = unset_names(pair, files, [{"MODE", "FRAMEWORK", "PORT"}])
    return same_when_unset(*pair, unset)


# (base, head) pairs that run the same with V unset, and differently with V=on (bash says so below).
SAME = [
    ('f() {\n  CMD+=" --url http://localhost:$PORT"\n}\n',
     'f() {\n  CMD+=" --url ${V:-http://localhost:$PORT}"\n}\n'),
    ('f() {\n  CMD+=" --num-dataset-entries 393"\n}\n',
     'f() {\n  # smoke tests may load fewer\n  CMD+=" --num-dataset-entries ${V:-393}"\n}\n'),
    ('f() {\n  CMD="--from-dataset"\n  echo "loading"\n}\n',
     'f() {\n  if [[ -n "${V:-}" ]]; then\n    CMD="$V"\n    echo "via V: $CMD"\n    return 0\n  fi\n\n'
     '  CMD="--from-dataset"\n  echo "loading"\n}\n'),
    ('f() {\n  if [[ "${FRAMEWORK:-}" == dynamo-* ]]; then\n    CMD+=" --routing"\n  fi\n}\n',
     'f() {\n  if [[ "${FRAMEWORK:-}" == dynamo-* && "${V:-1}" != "0" ]]; then\n    CMD+=" --routing"\n  fi\n}\n'),
    ('f() {\n  CMD+=" --a"\n}\n',
     'f() {\n  if [ -z "${V}" ]; then CMD+=" --a"; else CMD+=" --b"; fi\n}\n'),
    ('f() {\n  CMD+=" --a"\n}\n',
     'f() {\n  CMD+=" --a${V:+ --extra $V}"\n}\n'),
    ('f() {\n  if [[ "$MODE" == on ]]; then CMD+=" --a"; fi\n}\n',
     'f() {\n  if [[ "$MODE" == on || "${V-}" == "on" ]]; then CMD+=" --a"; fi\n}\n'),
    # Unquoted, a whole argument that expands to nothing is no argument at all.
    ('f() {\n  probe --a\n  CMD=x\n}\n', 'f() {\n  probe --a $V ${V:+--extra "$V"} ${V:-}\n  CMD=x\n}\n'),
    ('f() {\n  probe --port $PORT\n  CMD=x\n}\n', 'f() {\n  probe --port ${V:-$PORT}\n  CMD=x\n}\n'),
    # Quoted, an empty expansion is still an (empty) argument.
    ('f() {\n  probe ""\n}\n', 'f() {\n  probe "$V"\n}\n'),
]
# Pairs that differ with V unset too, or that the reduction must not decide.
DIFFERENT = [
    ('f() {\n  CMD+=" --num-dataset-entries 393"\n}\n',
     'f() {\n  CMD+=" --num-dataset-entries ${V:-394}"\n}\n'),
    ('f() {\n  CMD+=" --n 393"\n}\n', 'f() {\n  CMD+=" --n ${V:=393}"\n}\n'),  # assigns V: later reads see it
    ('f() {\n  CMD+=" --a"\n}\n', 'f() {\n  CMD+=" --a" $V\n}\n'),  # not an argument: left as written
    ('f() {\n  CMD="a b"\n}\n', 'f() {\n  CMD=${V:-a b}\n}\n'),  # `CMD=a b` would run `b`: left as written
    ('f() {\n  CMD=a\n}\n', 'f() {\n  if [[ "$(probe)" == ok && -n "${V:-}" ]]; then CMD=b; fi\n  CMD=a\n}\n'),
    ('f() {\n  CMD=a\n}\n', 'f() {\n  if [ "${V:-x}" == x* ]; then CMD=a; fi\n}\n'),  # `[ ]` globs file names
    ('f() {\n  CMD+=" ${1:-a}"\n}\n', 'f() {\n  CMD+=" a"\n}\n'),  # a positional parameter is the caller's
    # An `if` that takes no branch ends with status 0: last in the function, it is its status.
    ('f() {\n  grep -q x y\n}\n', 'f() {\n  grep -q x y\n  if [[ -n "${V:-}" ]]; then\n    echo on\n  fi\n}\n'),
    # ... and the next statement reads it.
    ('f() {\n  grep -q x y\n  echo "$?"\n}\n',
     'f() {\n  grep -q x y\n  if [[ -n "${V:-}" ]]; then echo on; fi\n  echo "$?"\n}\n'),
    # The grammar reads `[[ $A = a || $B = b ]]` as `$A = (a || $B) = b`: such a test is not folded.
    ('f() {\n  if [[ "$MODE" = on ]]; then CMD+=" --a"; fi\n}\n',
     'f() {\n  if [[ "$MODE" = on || "${V-}" = "on" ]]; then CMD+=" --a"; fi\n}\n'),
]


@pytest.mark.parametrize("base,head", SAME)
def test_edits_that_keep_the_default_run_the_same(base: str, head: str) -> None:
    assert judged(base, head)


@pytest.mark.parametrize("base,head", DIFFERENT)
def test_edits_that_change_the_run_or_cannot_be_told_are_kept_apart(base: str, head: str) -> None:
    assert not judged(base, head)


def bash_run(definition: str, value: str | None) -> str:
    """What bash prints running the definition's `f` (standing-in `probe`, which prints its arguments), with CMD, MODE and FRAMEWORK set and
    V unset or set to ``value``: f's output, its status, then CMD as it left it."""
    assert BASH is not None
    script = (f"{definition}\nprobe() {{ if [ $# -eq 0 ]; then echo ok; else echo \"ok $#:$*\"; fi; }}\nCMD=start MODE=off FRAMEWORK=dynamo-trt PORT=8000\n"
              + ("unset V\n" if value is None else f"V={value}\n") + 'f x; echo "status=$?"; declare -p CMD\n')
    return subprocess.run([BASH, "-c", script], capture_output=True, text=True, check=False, timeout=10).stdout


@pytest.mark.skipif(BASH is None, reason="bash is the oracle")
def test_bash_runs_the_pairs_judged_the_same_alike_with_the_variable_unset() -> None:
    for base, head in SAME:
        assert bash_run(base, None) == bash_run(head, None), head
        # ... and the variable matters: set, the two differ (the pair is no trivial one).
        assert bash_run(base, "0") != bash_run(head, "0") or bash_run(base, "on") != bash_run(head, "on"), head
    # Another default, and a status left by an `if` that takes no branch, differ in bash with V unset, as judged.
    for base, head in DIFFERENT[:1] + [pair for pair in DIFFERENT if "grep" in pair[0]]:
        assert bash_run(base, None) != bash_run(head, None), head


def test_reduction_drops_comments_and_keeps_what_it_cannot_read() -> None:
    head = function('f() {\n  # a note\n  CMD+=" ${V:-a}" # trailing\n  x="${W%.*}"\n}\n')
    assert reduced(head, frozenset({"V"})) == b'f() { CMD+=" a" x="${W%.*}" }'
    # A default holding quotes is left as written (inside a string, its quotes would pair otherwise).
    assert reduced(function('f() {\n  CMD="${V:-"a b"}"\n}\n'), frozenset({"V"})) == b'f() { CMD="${V:-"a b"}" }'


def test_unset_are_the_names_no_file_assigns_and_no_environment_holds() -> None:
    base = function('f() {\n  CMD+=" --n 393 --m $M"\n}\n')
    head = function('f() {\n  CMD+=" --n ${N:-393} --m ${M:-1} --k ${K:-2} --l ${L:-3} --h ${HOME:-/root}"\n}\n')
    lib = b'# N=5 in a comment, and "L" in a message, assign nothing\necho "set L to pick another"\n'
    recipe = b'K=7\nexport M\nrun_client\n'
    assert unset_names([base, head], [("lib.sh", lib), ("recipe.sh", recipe)], [{"L": "1"}]) == frozenset({"N"})
    # A message spelling `N=` is read as an assignment (`export "N=1"` would be one); a name a declaration or an
    # assigning builtin spells, quoted or not, may be assigned.
    assert unset_names([head], [("lib.sh", b'echo "N=5"\n')], []) == frozenset({"K", "L", "M"})
    for assigning in (b"export 'N'\n", b"local 'N'\n", b"read -r 'N' < f\n", b"eval 'N=1'\n"):
        assert "N" not in unset_names([head], [("lib.sh", assigning)], []), assigning
    # A file that assigns a computed name may set any: nothing is unset.
    for dynamic in (b'eval "$setting"\n', b'declare "$name=1"\n', b'read -r "$var" <<< x\n', b'printf -v "$v" 1\n',
                    b'mapfile -t "$lines" < f\n'):
        assert named_otherwise("x.sh", dynamic) is None, dynamic
        assert unset_names([head], [("x.sh", dynamic)], []) == frozenset()
    # Reading into literal names, a format's computed arguments and a herestring's value assign nothing unseen.
    assert named_otherwise("x.sh", b'read -r -a items <<< "$list"\nprintf "%s" "$x"\n') is not None


def test_a_default_kept_counts_only_for_a_config_whose_recipe_sets_the_variable(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    clear_github_env(monkeypatch)
    repo = Repo(tmp_path / "repo")
    recipe = RECIPE.format(client="run_client")
    base = repo.commit({
        ".ci-tools.yaml": b"repository: acme/bench\n",
        "configs/amd-master.yaml": MASTER.encode(),
        "configs/runners.yaml": b"labels:\n  mi355x:\n    - mi355x-amds_01\nhardware: {}\n",
        "benchmarks/benchmark_lib.sh": LIB.encode(),
        f"{SN}/ma_fp8_mi355x_vllm.sh": recipe.encode(),
        f"{SN}/mb_fp8_mi355x_vllm.sh": recipe.replace("vllm serve", "NUM_PROMPTS=20\nvllm serve").encode(),
        "perf-changelog.yaml": LOG,
    }, "base")
    lib = "benchmarks/benchmark_lib.sh"

    def changed_lib(new: str) -> dict[str, str]:
        repo.commit({lib: LIB.replace('"--num-prompts 10"', new).encode()}, new)
        return uncovered(repo.path, base, capsys)

    # mb's recipe sets NUM_PROMPTS: its jobs now run 20 prompts; ma's jobs run 10 as before.
    assert changed_lib('"--num-prompts ${NUM_PROMPTS:-10}"') == {"mb-fp8-mi355x-vllm": lib}
    assert changed_lib('"--num-prompts ${NUM_PROMPTS:-12}"') == {"ma-fp8-mi355x-vllm": lib, "mb-fp8-mi355x-vllm": lib}


@CLIENT_EDITS
def test_a_real_default_keeping_client_edit_changes_no_single_node_run(
        real_client_edits: tuple[Path, dict[str, Any]]) -> None:
    """#2171's edit of the real `build_replay_cmd`: no single-node job's client changes, whether its recipe runs
    the function after a server it starts itself (before: "build_replay_cmd of benchmark_lib.sh, which the jobs
    run after the server, changed") or starts its server in a function (before: any change of the library
    counted); the multinode configs whose chains may call it (read variables outside their recipe's files) still
    count, the others (before: all of them) do not.
    (The same commit lengthens a real trap handler's grace period: its configs count through their recipe.)"""
    from ci_tools.config import load_config
    from ci_tools.jobs.job import AGENTIC
    from ci_tools.jobs.matrix import expand
    from ci_tools.model.repository import load_repo
    from ci_tools.revision.snapshot import WorkTreeSnapshot

    repo, found = real_client_edits
    jobs = expand(load_repo(WorkTreeSnapshot(repo), load_config(repo), with_changelog=False))
    single = {j.config_key for j in jobs if j.scenario == AGENTIC and not j.multinode}
    multinode = {j.config_key for j in jobs if j.multinode}
    from_lib = {key: f for key, f in found.items() if f["path"] == "benchmarks/benchmark_lib.sh"}
    assert len(single) >= 20 and not single & from_lib.keys()
    assert from_lib and from_lib.keys() <= multinode
    # Of the AMD disaggregated configs, only the agentic one's chain may call it (its client runs trace_replay.sh);
    # the throughput ones' client is bench.sh (see test_coverage_chain_reads).
    throughput, agentic = amd_disaggregated()
    assert agentic <= from_lib.keys() and not throughput & from_lib.keys()
    assert {f["message"].split("(", 1)[1].split(")")[0] for f in from_lib.values()} == {
        "build_replay_cmd of benchmark_lib.sh, which their multinode chain may call, changed at "
        "benchmarks/benchmark_lib.sh:1958"}
    assert {f["path"] for key, f in found.items() if key not in from_lib} == {TRAP_RECIPE}
