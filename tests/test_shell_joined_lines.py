"""Lines tree-sitter-bash reads as one command are the commands bash runs (ci_tools/shell/parse.py, _read_past).

tree-sitter-bash 0.25 at times reads a command on past the end of its line, with no syntax error: in 93 versions
of InferenceX's AMD disaggregated `job.slurm` the `sed` of a model check took the next 30 lines for its arguments,
`RUN_FILE="server.sh"` among them, so every AMD multinode job of those revisions reached no server and its
changelog claims went unchecked (pull request 2038's head).  The scripts (tests/data/joined_lines, each cut from
a real file, see its README) are run by real bash and by the evaluator, which must agree on every variable.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from ci_tools.config import ProjectConfig
from ci_tools.evaluation.evaluate import evaluate_recipe
from ci_tools.revision.snapshot import WorkTreeSnapshot
from ci_tools.shell.parse import parse_script

SHAPES = Path(__file__).parent / "data" / "joined_lines"
# Each script, the variables it sets after the line tree-sitter reads on, and its environment.
CASES = {
    "amd.sh": (("RUN_FILE", "EXTRA_DOCKER_MOUNTS"),
               {"MODEL_NAME": "M", "_MORI_PATCH_FILE": "/p", "_MORI_PATCH_TARGET": "/t"}),
    "cpus.sh": (("PORT",), {}),
    "power.sh": (("first_iter", "DONE"), {}),
    "probe.sh": (("SEEN",), {"T": "/nonexistent"}),
}


def bash_values(script: Path, names: tuple[str, ...], env: dict[str, str], tmp_path: Path) -> dict[str, str]:
    """What real bash leaves in ``names`` after running ``script`` (commands a node has are stubbed to succeed)."""
    models = tmp_path / "models.yaml"
    models.write_text("M:\n  x: 1\n")
    stubs = "".join(f"{name}() {{ :; }}; " for name in ("amd-smi", "nproc", "python3"))
    setup = "".join(f"{k}='{v}'; " for k, v in {**env, "MODELS_YAML": str(models)}.items())
    shown = "".join(f"printf '%s\\0' \"${{{name}}}\"; " for name in names)
    done = subprocess.run(["bash", "-c", f"{stubs}{setup}source {script} >/dev/null 2>&1; {shown}"],
                          capture_output=True, check=True, cwd=tmp_path)
    return dict(zip(names, done.stdout.decode().split("\0")))


def our_values(script: Path, names: tuple[str, ...], env: dict[str, str], tmp_path: Path) -> dict[str, str | None]:
    (tmp_path / "repo").mkdir()
    (tmp_path / "repo" / "recipe.sh").write_bytes(script.read_bytes())
    result = evaluate_recipe("recipe.sh", {**env, "MODELS_YAML": "/models.yaml"}, ProjectConfig(root=tmp_path / "repo"),
                             WorkTreeSnapshot(tmp_path / "repo"))
    assert not result.errors
    return {name: (v.text if (v := result.variables.get(name)) is not None else None) for name in names}


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_evaluator_sets_what_bash_sets_after_a_line_the_grammar_reads_on(tmp_path: Path, name: str) -> None:
    names, env = CASES[name]
    expected = bash_values(SHAPES / name, names, env, tmp_path)
    assert all(expected.values())  # bash did run the lines
    assert our_values(SHAPES / name, names, env, tmp_path) == expected


def bash_statement_lines(script: Path, tmp_path: Path) -> list[int]:
    """The lines of the commands real bash runs in its own process (a DEBUG trap before each), in order, once each."""
    traced = tmp_path / "traced.sh"
    trap = "trap '[[ $BASH_SUBSHELL -eq 0 ]] && echo \"L$((LINENO - 1))\" >&2' DEBUG"
    traced.write_text(f"{trap}\n{script.read_text()}")
    stubs = "".join(f"{name}() {{ :; }}; " for name in ("amd-smi", "nproc", "python3"))
    done = subprocess.run(["bash", "-c", f"{stubs}T=/nonexistent; source {traced} >/dev/null"], capture_output=True,
                          check=True, cwd=tmp_path)
    lines = [int(x[1:]) for x in done.stderr.decode().split() if x.startswith("L")]
    return list(dict.fromkeys(n for n in lines if n > 0))


@pytest.mark.parametrize("name", ["cpus.sh", "power.sh", "probe.sh"])
def test_each_statement_starts_where_bash_runs_one(tmp_path: Path, name: str) -> None:
    source = (SHAPES / name).read_bytes()
    script = parse_script(name, source)
    children = script.root.children
    # a statement sent to the background runs in a process of its own, where the trap is not set
    ours = [c.line for i, c in enumerate(children) if c.named and c.type != "comment"
            and not (i + 1 < len(children) and children[i + 1].type == "&")]
    assert ours == bash_statement_lines(SHAPES / name, tmp_path)
    assert not script.problems


def test_a_continued_line_stays_one_command() -> None:
    source = b"cat /proc/cpuinfo | grep processor | wc -l \\\n  -c\nPORT=1\n"
    [pipeline, assignment] = [c for c in parse_script("c.sh", source).root.children if c.named]
    assert pipeline.text.endswith("wc -l \\\n  -c") and assignment.text == "PORT=1"


def test_a_script_with_a_syntax_error_keeps_its_problem() -> None:
    source = (SHAPES / "amd.sh").read_bytes() + b"if true; then\n"
    assert parse_script("broken.sh", source).problems
