"""Syntax errors are bash's to judge (ci_tools/shell/bash_syntax.py): what only tree-sitter-bash cannot read is no error.

In InferenceX's history, 102 versions of 22 shell files hold bash that bash accepts and tree-sitter-bash 0.25
does not: an arithmetic default with nested parentheses in 35 versions of the agentic MI355X recipes, a JSON
default with escaped quotes in 21.  Each was a `recipe-syntax` error ("bash refuses the script at run time") and
left its jobs' claims unchecked as a failed evaluation of a wrong script.  Now a default is read on its own and
the variable gets the value bash gives it; any other such value is unknown; the evaluation is used.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from ci_tools.config import ProjectConfig
from ci_tools.evaluation.evaluate import evaluate_recipe
from ci_tools.evaluation.rules import _syntax_location
from ci_tools.revision.snapshot import WorkTreeSnapshot
from ci_tools.shell.bash_syntax import bash_accepts
from ci_tools.shell.parse import parse_script

# Lines of real recipes (SemiAnalysisAI/InferenceX), each with the variable whose value the grammar cannot read:
# benchmarks/single_node/agentic/minimaxm3_fp4_mi355x.sh (blob ea8b05b10a, line 129),
# benchmarks/single_node/agentic/dsv4_agentic_g05.sh (107ce48df1, line 65),
# benchmarks/single_node/kimik2.5_int4_mi300x_mtp.sh (c32ed1ca4a, line 46).
VALID = {
    "TOTAL_CPU_DRAM_PARTITION_GB":
        'TP=4\nTOTAL_CPU_DRAM_GB="${TOTAL_CPU_DRAM_GB:-3000}"\n'
        'TOTAL_CPU_DRAM_PARTITION_GB="${TOTAL_CPU_DRAM_PARTITION_GB:-$((TOTAL_CPU_DRAM_GB / (8 / TP)))}"\n',
    "KV_OFFLOAD_BACKEND_METADATA":
        'KV_OFFLOAD_BACKEND=native\n'
        'KV_OFFLOAD_BACKEND_METADATA="${KV_OFFLOAD_BACKEND_METADATA:-{\\"name\\":\\"$KV_OFFLOAD_BACKEND\\"}}"\n',
    "VLLM_SPEC_CONFIG":
        'export VLLM_SPEC_CONFIG="${VLLM_SPEC_CONFIG:-{\\"model\\": \\"nvidia/Kimi-K2.5-Thinking-Eagle3\\", '
        '\\"method\\": \\"eagle3\\", \\"num_speculative_tokens\\": 3}}"\n',
}
# experimental/CollectiveX/runtime/run_in_container.sh (c230d40213, line 381): a here-document before `|| {`
HEREDOC = "python3 - <<'PY' >/dev/null 2>&1 || {\nimport sys\nPY\n    echo missing\n    exit 1\n}\nZ=1\n"
BROKEN = ['if [ "$TP" -eq 8 ]; then\n    MAX=16\n', 'case "$TP" in\n  8) MAX=16 ;;\n']


def real_bash_reads(text: str) -> bool:
    return subprocess.run(["bash", "-n"], input=text.encode(), capture_output=True).returncode == 0


def evaluated(tmp_path: Path, text: str) -> tuple[list[str], dict[str, str | None]]:
    (tmp_path / "recipe.sh").write_text(text + "vllm serve m --max-num-seqs 4\n")
    result = evaluate_recipe("recipe.sh", {}, ProjectConfig(root=tmp_path), WorkTreeSnapshot(tmp_path))
    return result.errors, {k: v.text for k, v in result.variables.items()}


def bash_value(text: str, name: str) -> str:
    done = subprocess.run(["bash", "-c", f'{text}printf %s "${name}"'], capture_output=True, check=True)
    return done.stdout.decode()


@pytest.mark.parametrize("name", sorted(VALID))
def test_a_default_the_grammar_cannot_read_is_the_value_bash_gives(tmp_path: Path, name: str) -> None:
    text = VALID[name]
    assert real_bash_reads(text)
    script = parse_script("recipe.sh", text.encode())
    assert script.bash_accepts is True and not script.problems and len(script.unread_assignments) == 1
    errors, values = evaluated(tmp_path, text)
    assert errors == []  # no recipe-syntax finding, and the evaluation is used
    assert values[name] == bash_value(text, name)  # the default, read on its own


@pytest.mark.parametrize("name", sorted(VALID))
def test_a_variable_set_before_wins_over_the_default(tmp_path: Path, name: str) -> None:
    """bash ends `${X:-{\\"a\\":1}}` at the first `}`, a bare `{` opening nothing: a set X gives `given}`."""
    text = f"{name}=given\n" + VALID[name]
    assert bash_value(text, name).startswith("given")
    assert evaluated(tmp_path, text)[1][name] == bash_value(text, name)


def test_another_value_the_grammar_cannot_read_is_unknown(tmp_path: Path) -> None:
    text = 'TP=4\nX=3000\nY="gb-${Y:-$((X / (8 / TP)))}"\n'
    assert real_bash_reads(text) and bash_value(text, "Y") == "gb-1500"
    script = parse_script("recipe.sh", text.encode())
    assert script.bash_accepts is True and not script.problems
    errors, values = evaluated(tmp_path, text)
    assert errors == [] and "Y" in values and values["Y"] is None  # known when the job runs, never guessed


@pytest.mark.parametrize("end", ["", "\n"])
def test_a_backslash_that_ends_the_file_is_no_problem(tmp_path: Path, end: str) -> None:
    """benchmarks/single_node/dsr1_fp8_mi355x_atom_mtp.sh (10 versions, e.g. blob dfb8fafdc6) ends so."""
    text = "set -x\nPORT=8888\nrm -rf ./utils/bench_serving\\" + end
    assert real_bash_reads(text)
    script = parse_script("recipe.sh", text.encode())
    assert script.bash_accepts is True and not script.problems
    assert parse_script("broken.sh", b"if true; then\\\n").problems  # an error before it stays one
    (tmp_path / "recipe.sh").write_text(text)
    result = evaluate_recipe("recipe.sh", {}, ProjectConfig(root=tmp_path), WorkTreeSnapshot(tmp_path))
    assert result.errors == [] and result.variables["PORT"].text == "8888"


def test_valid_bash_the_grammar_cannot_read_elsewhere_leaves_the_evaluation_incomplete(tmp_path: Path) -> None:
    assert real_bash_reads(HEREDOC)
    assert parse_script("recipe.sh", HEREDOC.encode()).bash_accepts is True
    errors, _ = evaluated(tmp_path, HEREDOC)
    assert len(errors) == 1 and "tree-sitter-bash cannot read this line, which bash accepts" in errors[0]
    assert _syntax_location(errors[0]) is None  # no recipe-syntax finding


@pytest.mark.parametrize("text", BROKEN)
def test_what_bash_refuses_stays_a_syntax_error(tmp_path: Path, text: str) -> None:
    assert not real_bash_reads(text)
    assert parse_script("recipe.sh", text.encode()).bash_accepts is False
    [error], _ = evaluated(tmp_path, text)
    assert ": bash syntax error: " in error and _syntax_location(error) is not None


def test_without_bash_the_grammar_judges(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no bash on it
    assert bash_accepts(VALID["VLLM_SPEC_CONFIG"].encode()) is None
    assert bash_accepts(BROKEN[0].encode()) is None

