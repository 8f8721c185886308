"""`recipe-syntax` points at the first real error, not at the start of the region tree-sitter gave up on."""

from __future__ import annotations

import pytest

from ci_tools.shell.parse import parse_script
from conftest import full_corpus_dir

RECIPE = "benchmarks/single_node/fixed_seq_len/dsr1_fp4_b200.sh"


def _mutated(line: int, text: str) -> bytes:
    lines = (full_corpus_dir() / RECIPE).read_bytes().split(b"\n")
    lines[line - 1] = text.encode()
    return b"\n".join(lines)


@pytest.mark.parametrize(("line", "text", "expected"), [
    # tree-sitter wraps lines 3..109 in one ERROR node; the `if` without `then` is the error.
    (34, "if [[ $CONC -ge 16 ]]", [(34, 1, "unexpected `if [[ $CONC -ge 16 ]]`")]),
    # A `case` never closed: one error where it starts, not a second one inside its ERROR region.
    (29, "case $X in a) echo 1;;", [(29, 1, "unexpected `case $X in a) echo 1;;`")]),
    (29, ")", [(29, 1, "unexpected `)`")]),
    (61, "", [(110, 1, "missing `fi`")]),  # the `fi` of line 47's `if` removed: missing at the end
    (63, 'echo "TP: ${TP"', [(63, 15, "missing `}`")]),
])
def test_the_first_real_error_of_a_real_recipe(line: int, text: str, expected: list[tuple[int, int, str]]) -> None:
    script = parse_script(f"mutated-{line}-{text}.sh", _mutated(line, text))
    assert [(p.line, p.column, p.text) for p in script.problems] == expected


def test_the_real_recipe_has_no_problem() -> None:
    assert parse_script(RECIPE, (full_corpus_dir() / RECIPE).read_bytes()).problems == []


def test_an_error_inside_a_function_body_is_reported_there_not_at_the_function() -> None:
    # The whole file is one ERROR node: `foo() {` opened a body, and `echo (` inside it is what breaks (bash -n: line 4).
    script = parse_script("body.sh", b"#!/bin/bash\nexport A=1\nfoo() {\n  echo (\n}\necho ok\n")
    assert [(p.line, p.column, p.text) for p in script.problems] == [(4, 3, "unexpected `echo (`")]
