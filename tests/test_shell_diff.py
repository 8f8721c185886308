"""What a change did to a shell file, statement by statement (ci_tools.changelog.shell_diff)."""

from __future__ import annotations

from ci_tools.changelog.shell_diff import called_names, read_side, shell_diff
from ci_tools.jobs.launcher_copies import holds

BASE = b"""\
#!/bin/bash
set -x
f() { echo one; }
if [[ $MODEL_PREFIX == "a" ]]; then
    export P=/data/a
elif [[ $MODEL_PREFIX == "b" ]]; then
    export P=/data/b
else
    echo "unsupported"; exit 1
fi
run --port 1
"""


def diff(head: bytes) -> list[tuple[str, int, int, list[tuple[str, bool]]]]:
    found = shell_diff("launch.sh", BASE, head)
    assert found.parsed
    return [(c.side, c.line, c.top, [(" ".join(n.text for n in g[0]), g[1]) for g in c.guards])
            for c in found.changes]


def test_comments_and_layout_change_nothing() -> None:
    head = BASE.replace(b"set -x\n", b"# trace\nset  -x   # every command\n").replace(b"run --port 1", b"run \\\n  --port 1")
    assert diff(head) == [] and shell_diff("launch.sh", BASE, head).functions == frozenset()


def test_a_new_elif_is_a_change_under_its_own_condition_and_the_earlier_ones_false() -> None:
    head = BASE.replace(b'else\n', b'elif [[ $MODEL_PREFIX == "c" ]]; then\n    export P=/data/c\nelse\n')
    (change,) = diff(head)
    assert change[:3] == ("head", 8, 1)
    assert change[3] == [('[[ $MODEL_PREFIX == "a" ]] ;', False), ('[[ $MODEL_PREFIX == "b" ]] ;', False),
                         ('[[ $MODEL_PREFIX == "c" ]] ;', True)]
    (c,) = shell_diff("launch.sh", BASE, head).changes
    assert [all(holds(g, {"MODEL_PREFIX": p}) is not False for g in c.guards) for p in "abcd"] == [
        False, False, True, False]


def test_an_edited_branch_body_is_guarded_by_its_condition_and_a_removed_statement_is_on_the_base_side() -> None:
    head = BASE.replace(b"export P=/data/b", b"export P=/scratch/b").replace(b"set -x\n", b"")
    assert sorted(diff(head)) == [
        ("base", 2, 0, []),
        ("base", 7, 1, [('[[ $MODEL_PREFIX == "a" ]] ;', False), ('[[ $MODEL_PREFIX == "b" ]] ;', True)]),
        ("head", 6, 0, [('[[ $MODEL_PREFIX == "a" ]] ;', False), ('[[ $MODEL_PREFIX == "b" ]] ;', True)]),
    ]


def test_functions_are_compared_by_name_and_calls_are_read() -> None:
    head = BASE.replace(b"f() { echo one; }", b"f() { echo two; }\ng() { f; }")
    found = shell_diff("launch.sh", BASE, head)
    assert found.changes == () and found.functions == frozenset({"f", "g"})
    side = read_side("launch.sh", head)
    assert called_names([side.functions["g"]]) == (frozenset({"f"}), False)
    assert called_names(side.statements[-1:]) == (frozenset({"run"}), False)
    assert called_names(read_side("x.sh", b'"$RUNNER" --port 1\n').statements)[1] is True


def test_a_side_that_does_not_parse_is_reported() -> None:
    assert not shell_diff("launch.sh", BASE, BASE + b"if then fi (\n").parsed


def test_a_condition_rewritten_over_the_same_body_changes_only_the_jobs_it_now_decides_otherwise() -> None:
    # InferenceX ecc908710216 narrowed `$MODEL_PREFIX == "minimaxm2.5"` to its fp4 jobs, giving fp8 a branch of
    # its own: the fp4 jobs run what they ran before.
    head = BASE.replace(b'elif [[ $MODEL_PREFIX == "b" ]]; then',
                        b'elif [[ $MODEL_PREFIX == "b" && $PRECISION == "fp4" ]]; then')
    changes = shell_diff("launch.sh", BASE, head).changes
    assert sorted((c.side, c.line) for c in changes) == [("base", 6), ("head", 6)]

    def affected(prefix: str, precision: str) -> bool:
        values = {"MODEL_PREFIX": prefix, "PRECISION": precision}
        return any(all(holds(g, values) is not False for g in c.guards) for c in changes)

    assert [affected("b", "fp4"), affected("b", "fp8"), affected("a", "fp8"), affected("c", "fp4")] == [
        False, True, False, False]
