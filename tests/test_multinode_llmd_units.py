"""The pieces the llm-d evaluation is made of, each on small inputs: server.sh's recipe program modelled without
running it, where each word of a folded YAML string is, srun's options, and the script chain's directory,
file tests and word splitting."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ci_tools.config import ProjectConfig
from ci_tools.evaluation.multinode.chain import ChainInterpreter
from ci_tools.evaluation.multinode.py_snippet import Assignment, model_snippet
from ci_tools.evaluation.multinode.py_values import shell_word
from ci_tools.evaluation.multinode.srun_container import srun_options
from ci_tools.evaluation.multinode.yaml_words import word_spans
from ci_tools.findings import Location
from ci_tools.revision.snapshot import WorkTreeSnapshot
from ci_tools.shell.model import Value
from ci_tools.shell.parse import parse_script
from ci_tools.shell.spans import written_at

MINI = Path(__file__).parent / "fixtures" / "recipes" / "llmd"
SERVER = "benchmarks/multi_node/llm-d/server.sh"
RECIPE = "r.yaml"
WHERE = Location(SERVER, 48)
YAML = """\
prefill:
  tp: 8
  enable-expert-parallel: false
  extra-args: >-
    --kv-cache-dtype fp8
    --gpu-memory-utilization 0.95 --enforce-eager
  env:
    NCCL_CUMEM_ENABLE: 1
    UCX_TLS: "cuda_copy,rc"
    FLAG: true
"""


def program(role: str) -> str:
    """server.sh's recipe program (the fixture's copy of InferenceX's) as the shell hands it to python3."""
    text = (MINI / SERVER).read_text()
    body = re.search(r"python3 - <<PY\n(.*?)\nPY\n", text, re.S)
    assert body is not None
    return body.group(1).replace("${RECIPE_PATH}", f"/etc/llmd-recipes/{RECIPE}").replace("${ROLE}", role)


def run(role: str, yaml_text: str = YAML) -> tuple[dict[str, Assignment], list[str]]:
    data = yaml_text.encode()

    def read_text(path: str) -> tuple[str, bytes] | None:
        return (RECIPE, data) if path == f"/etc/llmd-recipes/{RECIPE}" else None

    notes: list[str] = []
    got = model_snippet(program(role), read_text, {}, WHERE, notes)
    return {a.name: a for a in got}, notes


def test_the_recipe_program_prints_a_role_s_settings_with_their_yaml_lines() -> None:
    got, notes = run("prefill")
    assert notes == []
    assert list(got) == ["ROLE_EXTRA_ARGS", "TP_SIZE", "ROLE_ENABLE_EP", "NCCL_CUMEM_ENABLE", "UCX_TLS", "FLAG"]
    assert got["TP_SIZE"].value.text == "8" and got["TP_SIZE"].value.location == Location(RECIPE, 2, 7, 2, 8)
    # "true" if ep else "false": decided by the YAML value, which is where it points
    assert got["ROLE_ENABLE_EP"].value.text == "false" and got["ROLE_ENABLE_EP"].value.location.line == 3
    assert not got["TP_SIZE"].exported and got["UCX_TLS"].exported
    # export {k}={v!r}: Python's repr, read back by the shell (an int stays 1, a bool is True)
    assert [(n, got[n].value.text) for n in ("NCCL_CUMEM_ENABLE", "UCX_TLS", "FLAG")] == [
        ("NCCL_CUMEM_ENABLE", "1"), ("UCX_TLS", "cuda_copy,rc"), ("FLAG", "True")]
    assert got["UCX_TLS"].value.location.line == 9
    extra = got["ROLE_EXTRA_ARGS"].value
    assert extra.text == "--kv-cache-dtype fp8 --gpu-memory-utilization 0.95 --enforce-eager"
    words = {m.group(): written_at(extra.spans, len(extra.text[:m.start()].encode()), len(extra.text[:m.end()].encode()))
             for m in re.finditer(r"\S+", extra.text or "")}
    assert words["--kv-cache-dtype"] == Location(RECIPE, 5, 5, 5, 21)
    assert words["0.95"] == Location(RECIPE, 6, 30, 6, 34)
    assert words["--enforce-eager"] == Location(RECIPE, 6, 35, 6, 50)


def test_a_missing_role_block_is_noted_and_the_program_s_defaults_are_printed() -> None:
    got, notes = run("decode")
    assert notes == [f"{RECIPE} has no `decode`: the program takes its default ({{}})"]
    assert list(got) == ["ROLE_EXTRA_ARGS"] and got["ROLE_EXTRA_ARGS"].value.text == ""
    assert got["ROLE_EXTRA_ARGS"].value.location == WHERE  # the program's own '' default


def test_a_program_that_would_fail_keeps_what_it_printed_before() -> None:
    got, notes = run("prefill", "prefill:\n  extra-args: --max-num-seqs 8\n  tp: [8]\n")
    assert got["ROLE_EXTRA_ARGS"].value.text == "--max-num-seqs 8" and "TP_SIZE" not in got
    assert notes == [f"the program fails: `int(tp)`: int() of [8] (written at {RECIPE}:3:7); "
                     "only what it printed before is read"]
    got, notes = run("prefill", "prefill:\n  env: [A, B]\n")
    assert "ROLE_EXTRA_ARGS" in got and notes[0].startswith("the program fails: `(section.get('env') or {}).items()`: "
                                                            "a list has no .items")


@pytest.mark.parametrize(("printed", "read"), [
    ("'--max-num-seqs 8 --enforce-eager'", "--max-num-seqs 8 --enforce-eager"),
    ("8", "8"), ("True", "True"), ("cuda_copy,rc", "cuda_copy,rc"),
    ("'{\"mode\":0}'", '{"mode":0}'),
    ('"--template \'x\'"', "--template 'x'"),  # repr of a string holding ' is double-quoted
    ("'a\\\\b'", None),  # a backslash: repr escapes it, the shell's single quotes do not undo that
    ('"$HOME \'x\'"', None),  # the shell would expand $HOME inside double quotes
    ("[1, 2]", None), ("a b", None), ("*", None),
])
def test_what_the_shell_reads_back_from_a_printed_word(printed: str, read: str | None) -> None:
    assert shell_word(printed) == read


def test_word_spans_of_block_plain_and_quoted_scalars() -> None:
    source = b'a: >-\n  --x 1\n  --y\nb: --p 2 --q\nc: "--r\\t3"\n'
    spans = word_spans(Location("f.yaml", 1, 4, 4, 1), source, "--x 1 --y")
    assert [(size, o.line if isinstance(o, Location) else None) for size, o in spans] == [
        (3, 2), (1, 1), (1, 2), (1, 1), (3, 3)]
    plain = word_spans(Location("f.yaml", 4, 4, 4, 13), source, "--p 2 --q")
    assert written_at(plain, 6, 9) == Location("f.yaml", 4, 10, 4, 13)
    # an escape changes the words: the string is left whole
    assert word_spans(Location("f.yaml", 5, 4, 5, 12), source, "--r\t3") == ()


def test_srun_options_end_where_the_command_starts() -> None:
    here = Location("job.slurm", 9)
    argv = [Value(t, here) for t in ("srun", "--kill-on-bad-exit=1", "-N", "2", "--unbuffered")]
    argv.append(Value(None, here, known_prefix="--container-image="))
    argv += [Value(t, here) for t in ("--container-mounts=/a:/b:ro", "bash", "-lc", "server.sh")]
    options, command = srun_options(argv)
    assert [v.text for v in command] == ["bash", "-lc", "server.sh"]
    assert options["-N"].text == "2" and options["--kill-on-bad-exit"].text == "1"
    assert options["--container-image"].text is None  # the option is known, its value is not
    assert options["--container-mounts"].text == "/a:/b:ro" and options["--unbuffered"].text == ""


def _chain(text: str, **kwargs: object) -> ChainInterpreter:
    interp = ChainInterpreter("benchmarks/multi_node/llm-d/submit.sh", ProjectConfig(root=MINI),
                              WorkTreeSnapshot(MINI), **kwargs)  # type: ignore[arg-type]
    interp.cwd, interp.invoked_as = "benchmarks/multi_node/llm-d", "./submit.sh"  # as the wrapper runs it
    interp.run(parse_script("benchmarks/multi_node/llm-d/submit.sh", text.encode()))
    return interp


def test_a_cd_inside_a_command_substitution_leaves_the_script_s_directory() -> None:
    interp = _chain('ROOT="$(cd "$(dirname "$0")/../../.." && pwd)"\nHERE=$(pwd)\n')
    assert interp.state.vars["ROOT"].text == "/github/workspace"  # type: ignore[union-attr]
    assert interp.state.vars["HERE"].text == "/github/workspace/benchmarks/multi_node/llm-d"  # type: ignore[union-attr]
    assert interp.cwd == "benchmarks/multi_node/llm-d"


def test_file_tests_of_repository_paths_are_decided_by_the_revision() -> None:
    interp = _chain(
        'A=no; [[ -f ./server.sh ]] && A=yes\n'
        'B=no; [[ -d /etc/recipes ]] && B=yes\n'
        'C=no; [[ -f /etc/recipes/missing.yaml ]] && C=yes\n'  # read-only mount: absent when the job runs
        'D=no; [[ -f ./missing.yaml ]] && D=yes\n'  # the checkout: something may create it
        'E=no; [[ -f /opt/elsewhere ]] && E=yes\n',
        mounts={"/etc/recipes": "benchmarks/multi_node/llm-d-recipes"}, read_only=frozenset({"/etc/recipes"}))
    texts = {k: interp.state.vars[k].text for k in "ABCDE"}  # type: ignore[union-attr]
    assert texts == {"A": "yes", "B": "yes", "C": "no", "D": None, "E": None}


def test_words_split_off_a_value_point_where_each_was_written() -> None:
    interp = ChainInterpreter(SERVER, ProjectConfig(root=MINI), WorkTreeSnapshot(MINI))
    yaml_word, gap = Location(RECIPE, 5, 5), Location(RECIPE, 4, 3)
    interp.state.vars["ARGS"] = Value("--max-num-seqs 16", Location(SERVER, 48),
                                      spans=((14, yaml_word), (1, gap), (2, Location(RECIPE, 5, 20))))
    interp.run(parse_script(SERVER, b"vllm serve m $ARGS\n"))
    [server] = interp.state.servers
    [f] = server.flags
    assert f.location == yaml_word and f.value is not None and f.value.location == Location(RECIPE, 5, 20)


def test_an_appended_list_keeps_the_start_every_branch_shares() -> None:
    interp = _chain('M="/r:/w"\nif [[ -x /opt/epp ]]; then M+=",/opt/epp:/bin/epp"; fi\nM+=",/logs:/logs"\n')
    mounts = interp.state.vars["M"]
    assert isinstance(mounts, Value) and mounts.text is None and mounts.known_prefix == "/r:/w"


def test_srun_export_filters_and_adds_to_the_environment_and_one_task_is_one_rank() -> None:
    from ci_tools.evaluation.multinode.srun_container import single_task, srun_environment

    here = Location("submit.sh", 4)
    env = {"A": Value("1", here), "B": Value("2", here)}
    errors: list[str] = []
    assert srun_environment(None, env, "submit.sh:4", errors) is env
    got = srun_environment(Value("ALL,ROLE=decode,PORT=8888", here), env, "submit.sh:4", errors)
    assert {k: v.text for k, v in got.items()} == {"A": "1", "B": "2", "ROLE": "decode", "PORT": "8888"}
    got = srun_environment(Value("B,ROLE=prefill", here), env, "submit.sh:4", errors)
    assert {k: v.text for k, v in got.items()} == {"B": "2", "ROLE": "prefill"}  # without ALL: only what it names
    assert errors == []
    assert srun_environment(Value(None, here), env, "submit.sh:4", errors) is env
    assert errors == ["submit.sh:4: srun's --export list is not known; the task's environment is taken as ALL"]
    options = srun_options([Value(t, here) for t in ("srun", "--nodelist=h1", "--ntasks=1", "run.sh")])[0]
    assert single_task(options)
    assert not single_task(srun_options([Value(t, here) for t in ("srun", "--unbuffered", "run.sh")])[0])


def test_a_launcher_stored_as_a_symbolic_link_is_read_from_its_target(tmp_path: Path) -> None:
    from ci_tools.evaluation.multinode.amd_disagg import linked

    runners = tmp_path / "runners"
    runners.mkdir()
    (runners / "launch_b200-dgxc.sh").write_text("#!/usr/bin/bash\nexport MODEL_PATH=/m\n")
    # what git keeps for a link, and a checkout without links writes: the target's name as the whole file
    (runners / "launch_b200-dgxc-slurm.sh").write_text("launch_b200-dgxc.sh")
    snapshot = WorkTreeSnapshot(tmp_path)
    link = "runners/launch_b200-dgxc-slurm.sh"
    assert linked(snapshot, link, b"launch_b200-dgxc.sh") == ("runners/launch_b200-dgxc.sh",
                                                              b"#!/usr/bin/bash\nexport MODEL_PATH=/m\n")
    # a one-word script naming no file, and a real script, are themselves
    assert linked(snapshot, link, b"launch_other.sh") == (link, b"launch_other.sh")
    assert linked(snapshot, link, b"echo hi\n") == (link, b"echo hi\n")


def test_what_a_program_named_by_a_variable_prints_is_unknown() -> None:
    interp = _chain('V="$("$PY" - vllm <<\'EOF\' 2>/dev/null\nprint(1)\nEOF\n)"\nW=$(echo known)\n')
    assert interp.state.vars["V"].text is None  # type: ignore[union-attr]
    assert interp.state.vars["W"].text == "known"  # type: ignore[union-attr]
