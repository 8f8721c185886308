"""A change of shared-library function bodies that no text of a single-node recipe's files may run changes none of
its jobs' runs, and none of them is evaluated to learn it (:mod:`ci_tools.changelog.text_reach`).

InferenceX's throughput recipes never call the agentic replay's `build_replay_cmd`; an edit of it evaluated a job
of every throughput row all the same.  Here: the bound on small scripts (what a command whose name is an expansion
may run, scripts `bash` runs, where it cannot say), on the real tree against evaluation (every function a real
job's evaluation called is within its recipe's bound), and coverage on a synthetic repository, counting the
evaluations.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from ci_tools.changelog.run_effect import _reach
from ci_tools.changelog.shell_diff import SHELL_NAME, called_names, calls_of, read_side
from ci_tools.changelog.text_reach import text_reach
from conftest import full_corpus_dir
from test_changelog_support import Repo, clear_github_env
from test_coverage_run_effect import LIB, LOG, MASTER, RECIPE, SN, uncovered

LIBRARY = """\
run_client() { python3 bench.py "$@"; }
run_agentic() { python3 replay.py "$@"; }
cleanup() { echo done; }
"""


def bound(recipe: str, environment: frozenset[str] = frozenset(), scripts: dict[str, str] | None = None,
          library: str = LIBRARY) -> frozenset[str] | None:
    """The library functions the recipe's text may run (None: it cannot say)."""
    sides = [read_side("recipe.sh", recipe.encode()), read_side("lib.sh", library.encode())]
    code = [node for side in sides for node in side.statements]
    definitions = {name: [node] for side in sides for name, node in side.functions.items()}
    bodies = {name: calls_of(nodes[0]) for name, nodes in definitions.items()}
    texts = scripts or {}

    def words(path: str) -> frozenset[str] | None:
        if "$" in path:
            return None
        return frozenset(SHELL_NAME.findall(texts[path])) if path in texts else frozenset()

    found = text_reach(code, definitions, called_names(code)[0], environment, words,
                       lambda seeds: _reach(seeds, bodies, code, definitions))
    return None if found is None else found & frozenset(definitions)


def test_the_bound_holds_what_names_spell_and_what_expansions_and_scripts_may_run() -> None:
    assert bound("run_client --conc 4\n") == {"run_client"}
    # Spelled other than as a command's name: run later, or by another program.
    assert bound("trap cleanup EXIT\nrun_client\n") == {"run_client", "cleanup"}
    assert bound("timeout 60 bash -c 'run_agentic'\n") == {"run_agentic"}
    # A command name that is an expansion: the first word of each value the files assign.
    assert bound('CMD=(python3 -m bench)\nCMD+=(--conc 4)\n"${CMD[@]}"\n') == frozenset()
    assert bound('CMD=(run_agentic --trace t)\n"${CMD[@]}"\n') == {"run_agentic"}
    assert bound('PY="$VENV/bin/python"\n"$PY" bench.py\n') == frozenset()  # a path: never a function
    assert bound('RUN="$PY -m bench"\nPY=/usr/bin/python3\n$RUN\n') == frozenset()
    assert bound('RUN=run_client\nSTEP=$RUN\n$STEP\n') == {"run_client"}
    # What `+=` appends follows the first word an assignment gives; with none, it may be the first word.
    assert bound('RUN="python3 -m bench"\nfor u in a b; do RUN+=" $u"; done\n$RUN\n') == frozenset()
    assert bound('RUN=""\nRUN+="run_agentic --trace t"\n$RUN\n') == {"run_agentic"}
    # A command prefixed with assignments is read the same; where a program is found is a path (or nothing), or
    # the name itself when a function has it.
    assert bound('CACHE=/tmp UV="$(uv_path)" "$UV" venv\n') is None
    assert bound('UV="$(command -v uv)"\nUV_CACHE_DIR=/tmp "$UV" venv\n') == frozenset()
    assert bound('CLIENT="$(command -v run_client)"\n"$CLIENT" --conc 4\n') == {"run_client"}
    # What it cannot say: a variable the jobs' environment may give, one set otherwise than by an assignment, a
    # name built from parts, a string `eval` expands, a script whose path holds an expansion.
    assert bound('CMD=(python3)\n"${CMD[@]}"\n', environment=frozenset({"CMD"})) is None
    assert bound('"$CLIENT" --conc 4\n') is None
    assert bound('read -r CMD < cmd.txt\n$CMD\n') is None
    assert bound('for CMD in run_client python3; do $CMD; done\n') is None
    assert bound('"${ENGINE}_serve" --port 1\n') is None
    assert bound('eval "$CLIENT_CMD"\n') is None
    assert bound('bash "$SCRIPT"\n') is None
    assert bound('declare -n ref=CMD\nref=(run_client)\n"${CMD[@]}"\n') is None
    assert bound('CMD=(python3 bench.py)\nCMD[0]=$NEXT\n"${CMD[@]}"\n') is None  # an element set by its index
    assert bound('CMD=python3\neval "CMD=$NEXT"\n$CMD\n') is None
    assert bound("CMD=python3\neval 'CMD=next_step'\n$CMD\n") is None  # a string that assigns
    assert bound("source <(cat generated.sh)\n") is None
    # A script `bash` runs: what its text spells; a path the repository does not hold runs none of these.
    assert bound("bash helpers/client.sh --conc 4\n", scripts={"helpers/client.sh": "run_agentic\n"}) == {"run_agentic"}
    assert bound("nohup bash /opt/tool.sh &\n") == frozenset()
    # Functions no command of the text runs, or only an unreached body does, are not reached.
    assert bound("echo ready\n", library=LIBRARY + 'unused() { "$DYNAMIC"; run_agentic; }\n') == frozenset()
    assert bound("unused\n", library=LIBRARY + 'unused() { "$DYNAMIC"; run_agentic; }\n') is None


@pytest.fixture(scope="module")
def real_bounds() -> dict[str, tuple[frozenset[str] | None, frozenset[str]]]:
    """Each real single-node recipe -> its text's bound, and the functions its files define."""
    from ci_tools.changelog.coverage import RecipeDeps
    from ci_tools.changelog.run_effect import RunEffect
    from ci_tools.config import load_config
    from ci_tools.revision.snapshot import WorkTreeSnapshot
    from real_jobs import real_evaluations

    config = load_config(full_corpus_dir())
    snapshot = WorkTreeSnapshot(config.root)
    deps = RecipeDeps(snapshot, config)
    effect = RunEffect(snapshot, snapshot, _unused, _unused, _unused, config, _unused)
    jobs: dict[str, list[Any]] = defaultdict(list)
    for real, _ in real_evaluations():
        if real.recipe is not None:
            jobs[real.recipe].append(real.job)
    out: dict[str, tuple[frozenset[str] | None, frozenset[str]]] = {}
    for recipe, its_jobs in jobs.items():
        closure = tuple(sorted(deps.closure(recipe)))
        out[recipe] = (effect._text_reach(recipe, closure, its_jobs), frozenset(effect._both_sides(closure)[2]))
    return out


def _unused(*args: Any) -> Any:
    raise AssertionError("the bound evaluates nothing")


def test_every_function_a_real_job_s_evaluation_calls_is_within_its_recipe_s_bound(
        real_bounds: dict[str, tuple[frozenset[str] | None, frozenset[str]]]) -> None:
    from ci_tools.changelog.coverage import RecipeDeps
    from ci_tools.changelog.text_reach import _facts
    from ci_tools.config import load_config
    from ci_tools.revision.snapshot import WorkTreeSnapshot
    from real_jobs import real_evaluations

    config = load_config(full_corpus_dir())
    snapshot = WorkTreeSnapshot(config.root)
    deps = RecipeDeps(snapshot, config)
    expansions: dict[str, set[tuple[str, int]]] = {}
    for recipe in real_bounds:
        sides = [read_side(path, snapshot.read(path)) for path in sorted(deps.closure(recipe))]
        nodes = [n for side in sides for n in (*side.statements, *side.functions.values())]
        expansions[recipe] = {(w.script.path, w.line) for n in nodes for w in _facts(n).expanded}

    checked = 0
    for real, result in real_evaluations():
        if real.recipe is None or result is None:
            continue
        reach, defined = real_bounds[real.recipe]
        if reach is not None:
            assert result.called & defined <= reach, (real.job.id, sorted(result.called & defined - reach))
            # A command whose program evaluation knew only at run time is one the text read as an expansion (its
            # name on one of the command's lines: `UV_CACHE_DIR=... \` then `"$AIPERF_UV_BIN" venv`).
            for loc in result.opaque_commands:
                assert any(path == loc.path and loc.line <= line <= loc.end_line
                           for path, line in expansions[real.recipe]), (real.job.id, loc)
            checked += 1
    assert checked > 1000
    bounded = {recipe for recipe, (reach, _) in real_bounds.items() if reach is not None}
    assert len(bounded) >= 100  # every recipe but those the stand-ins do not carry
    # No throughput recipe may run the agentic replay's command builder.
    throughput = {recipe for recipe in real_bounds if "/fixed_seq_len/" in recipe}
    assert len(throughput & bounded) >= 70
    assert not any("build_replay_cmd" in (real_bounds[recipe][0] or ()) for recipe in throughput & bounded)


def test_a_function_no_recipe_text_of_a_config_may_run_counts_without_evaluating_its_jobs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import ci_tools.evaluation.evaluate as evaluate

    clear_github_env(monkeypatch)
    repo = Repo(tmp_path / "repo")
    lib = "benchmarks/benchmark_lib.sh"
    agentic = RECIPE.format(client='CLIENT=(run_agentic --trace t)\n"${CLIENT[@]}"')
    base = repo.commit({
        ".ci-tools.yaml": b"repository: acme/bench\n",
        "configs/amd-master.yaml": MASTER.encode(),
        "configs/runners.yaml": b"labels:\n  mi355x:\n    - mi355x-amds_01\nhardware: {}\n",
        lib: LIB.encode(),
        f"{SN}/ma_fp8_mi355x_vllm.sh": RECIPE.format(client="run_client").encode(),
        f"{SN}/mb_fp8_mi355x_vllm.sh": agentic.encode(),
        "perf-changelog.yaml": LOG,
    }, "base")
    evaluated: list[str] = []
    real_evaluate = evaluate.evaluate_recipe

    def counting(path: str, *args: Any, **kwargs: Any) -> Any:
        evaluated.append(path)
        return real_evaluate(path, *args, **kwargs)

    monkeypatch.setattr(evaluate, "evaluate_recipe", counting)
    # `warmup` runs inside run_agentic, which only mb's recipe runs (through the array it assigns).
    repo.commit({lib: LIB.replace("--warmup 600", "--warmup 1800").encode()}, "a longer warm-up")
    assert uncovered(repo.path, base, capsys) == {"mb-fp8-mi355x-vllm": lib}
    assert evaluated and set(evaluated) == {f"{SN}/mb_fp8_mi355x_vllm.sh"}
    # A command name the text cannot resolve (a default in its expansion): ma's jobs are evaluated, and their
    # evaluation cannot tell either (a program known only at run time may be the function): it counts, as before.
    evaluated.clear()
    repo.commit({f"{SN}/ma_fp8_mi355x_vllm.sh": RECIPE.format(client='"${CLIENT_BIN:-python3}" bench.py').encode()},
                "the client from the environment")
    repo.commit({lib: LIB.replace("--warmup 600", "--warmup 900").encode()}, "another warm-up")
    assert uncovered(repo.path, "HEAD~1", capsys) == {"ma-fp8-mi355x-vllm": lib, "mb-fp8-mi355x-vllm": lib}
    assert f"{SN}/ma_fp8_mi355x_vllm.sh" in evaluated
    # A program found on the node (`$(command -v uv)`): a path, never a function; mb's text runs no client_options,
    # so its config does not count for it (evaluation, which knows no path there, could not tell: it had counted).
    repo.commit({f"{SN}/mb_fp8_mi355x_vllm.sh": agentic.replace('CLIENT=(', 'UV="$(command -v uv)"\n"$UV" venv\nCLIENT=(')
                 .encode(), f"{SN}/ma_fp8_mi355x_vllm.sh": RECIPE.format(client="run_client").encode()},
                "a virtual environment for mb's client")
    repo.commit({lib: LIB.replace("--warmup 600", "--warmup 900").replace('"--num-prompts 10"', '"--num-prompts 20"')
                 .encode()}, "more prompts")
    assert uncovered(repo.path, "HEAD~1", capsys) == {"ma-fp8-mi355x-vllm": lib}
