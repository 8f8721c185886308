"""Words tree-sitter-bash cuts in two are one word again (ci_tools/shell/split_words.py), as real bash reads them.

tree-sitter-bash ends `--container-mounts=$GITHUB_WORKSPACE:$CONTAINER_MOUNT_DIR,$MODEL_PATH:$MODEL_PATH,...` at
the second `$`: 13 launchers of the real tree mount their directories that way, and InferenceX pull request 2289,
which wrote `$MODEL_MOUNT_SPEC` where `$MODEL_PATH:$MODEL_PATH` stood, was told that srun "is started differently"
for 29 configs whose mounts it left as they were.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from ci_tools.config import ProjectConfig
from ci_tools.evaluation.launcher_run import evaluate_launcher, run_difference
from ci_tools.revision.snapshot import WorkTreeSnapshot
from ci_tools.shell.parse import parse_script
from conftest import full_corpus_dir

VARIABLES = {"A": "/a", "B": "/b b", "C": "/c", "D": "/d", "N": "x"}
WORDS = [
    "--container-mounts=$A:$B,$C:$D,/cache:/cache",
    "x$A,$C.y",
    "--m=$A:$C-y",
    "$A:$C/x",
    "x$A:$C_D,y",
    "--m=$A:${C},y",
    "x$A:$1,y",
    "'$A:$C,y'",
    '"x$A:$C,y"',
]


def bash_words(script: str) -> list[str]:
    """The arguments real bash passes to `printf` at the end of ``script`` (one per line, NUL-separated)."""
    setup = "".join(f"{k}='{v}'; " for k, v in VARIABLES.items())
    done = subprocess.run(["bash", "-c", setup + "set -- one; " + script], capture_output=True, check=True)
    return done.stdout.decode().split("\0")[:-1]


def our_words(tmp_path: Path, script: str) -> list[str | None]:
    data = f"set -- one\n{script}\n".encode()
    run = evaluate_launcher(tuple(VARIABLES.items()), "launch.sh", data, ProjectConfig(root=tmp_path),
                            WorkTreeSnapshot(tmp_path))
    [step] = [s for s in run.steps if s.program == "srun"]
    return [w[0] if len(w) == 1 and isinstance(w[0], str) else None for w in step.words]


@pytest.mark.parametrize("word", WORDS)
def test_a_word_with_expansions_and_separators_is_the_one_argument_bash_passes(tmp_path: Path, word: str) -> None:
    expected = bash_words(f"printf '%s\\0' {word} --next")
    assert our_words(tmp_path, f"srun {word} --next") == expected


def test_an_assignment_of_such_a_word_is_an_assignment_not_a_command(tmp_path: Path) -> None:
    for assign in ("M=$A:$C,y", "export M=$A:$C,y", "local_m=x$A:$C.y"):
        name = assign.split("=")[0].split()[-1]
        expected = bash_words(f"{assign}; printf '%s\\0' \"${name}\"")
        assert our_words(tmp_path, f"{assign}\nsrun \"${name}\"") == expected, assign


def test_the_tree_keeps_every_byte_where_it_stood() -> None:
    source = b"srun --m=$A:$B,$C:$D,/x --next\n"
    [command] = parse_script("s.sh", source).root.children
    words = [c.text for c in command.children if c.type != "command_name"]
    assert words == ["--m=$A:$B,$C:$D,/x", "--next"]
    expansions = [n.text for n in _walk(command) if n.type == "simple_expansion"]
    assert expansions == ["$A", "$B", "$C", "$D"]


def _walk(node):  # type: ignore[no-untyped-def]
    yield node
    for child in node.children:
        yield from _walk(child)


def test_the_real_launchers_mount_lists_are_one_word_each() -> None:
    """Every `--container-mounts=` of the real tree's launchers is one argument with its expansions."""
    found = 0
    for path in sorted((full_corpus_dir() / "runners").glob("launch_*.sh")):
        script = parse_script(str(path), path.read_bytes())
        for node in _walk(script.root):
            if node.type == "command":
                args = [c for c in node.children if c.named and c.type not in ("command_name", "comment")]
                for a, b in zip(args, args[1:]):
                    assert a.end != b.start, f"{path.name}:{a.line}: {a.text!r} and {b.text!r} cut apart"
                found += sum(a.text.startswith("--container-mounts=") and "$" in a.text for a in args)
    assert found >= 10


def test_a_mount_list_written_through_a_variable_of_the_same_value_runs_the_same(tmp_path: Path) -> None:
    """Pull request 2289's edit: `$MODEL_PATH:$MODEL_PATH` became `$MODEL_MOUNT_SPEC`, set to the same."""
    env = (("MODEL_PATH", "/models/m"), ("GITHUB_WORKSPACE", None))
    base = b'srun --container-mounts=$GITHUB_WORKSPACE:/w,$MODEL_PATH:$MODEL_PATH,/c:/c bash x.sh\n'
    head = (b'MODEL_MOUNT_SPEC="$MODEL_PATH:$MODEL_PATH"\n'
            b'srun --container-mounts=$GITHUB_WORKSPACE:/w,$MODEL_MOUNT_SPEC,/c:/c bash x.sh\n')
    config, snapshot = ProjectConfig(root=tmp_path), WorkTreeSnapshot(tmp_path)
    runs = [evaluate_launcher(env, "launch.sh", data, config, snapshot) for data in (base, head)]
    assert run_difference(*runs) is None
    other = head.replace(b'"$MODEL_PATH:$MODEL_PATH"', b'"$MODEL_PATH:/other"')
    changed = evaluate_launcher(env, "launch.sh", other, config, snapshot)
    assert run_difference(runs[0], changed) == "srun at launch.sh:2 is started differently"
