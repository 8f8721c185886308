"""``sed`` substitutions and ``grep`` matches the evaluator computes, held to the real programs.

Every case runs the real ``sed``/``grep`` on the same input; where the model
gives a value it must be exactly what the program printed (and, for
``grep``, its exit status).  The forms the recipes use must be modelled (a
value, not unknown); forms whose meaning differs between POSIX and Python
(alternation, back-references) and options not modelled must be unknown.
The first cases are InferenceX's own lines (``amd_utils/server_vllm.sh``,
``server_sglang.sh``, ``job.slurm``, ``tilert_utils/submit.sh``).
"""

from __future__ import annotations

import subprocess

import pytest

from ci_tools.shell import commands

SED_MODELLED = [
    (["-E", "s/--tensor-parallel-size[[:space:]]+[0-9]+/--tensor-parallel-size 4/g"],
     "--tensor-parallel-size 8 --block-size 1 --tensor-parallel-size  16\n"),
    (["-E", "s/--disaggregation-transfer-backend[[:space:]]+[^[:space:]]+//g"],
     "--a 1 --disaggregation-transfer-backend mori --b\n"),
    (["s/--ep-dispatch-algorithm fake//g"], "--x --ep-dispatch-algorithm fake --y\n"),
    (["s/ /,/g"], "10.0.0.1 10.0.0.2 10.0.0.3\n"),
    (["s/,$//"], "a,b,\n"),
    (["s/^/  - /"], "DeepSeek-R1\nKimi-K2.5\n"),
    (["s/:.*$//"], "DeepSeek-R1:\n  base_flags: x\n"),
    (["s/[\\/:@#]/_/g"], "rocm/sgl-dev:v0.5@sha256#x\n"),
    (["-e", "s/a/b/", "-e", "s/b/c/g"], "aab\nbab\n"),
    (["s/a/b/;s/b/c/"], "aab\n"),
    (["s/\\(x\\)y/\\1\\1/"], "xyxy\n"),
    (["s/a+b?/[&]/g"], "a+b? ab\n"),
    (["-E", "s/(a+)b/[\\1]/g"], "aab ab b\n"),
    (["-E", "s/x{2,3}/<&>/g"], "x xx xxxx\n"),
    (["s/a*b/X/g"], "aaab b ab\n"),
    (["s|/usr|/opt|"], "/usr/bin /usr\n"),
    (["s/x/&&\\&/g"], "axb\n"),
    (["s/a.c/<&>/"], "abc adc\n"),
    (["-E", "s/[[:digit:]]+/N/g"], "tp8 ep16\n"),
    (["s/a/b/"], "a no newline at the end"),
    (["s/a/\\n/"], "xay\n"),
]

SED_REFUSED = [
    ["-E", "s/a|ab/X/"],  # POSIX takes the longest alternative, Python the first
    ["s/\\(a\\)\\1/X/"],  # a back-reference in the expression
    ["-n", "s/a/b/p"],
    ["s/a/b/", "file.txt"],
    ["s/a/b/2"],
    ["y/ab/ba/"],
    ["s/\\w/X/"],
]

GREP = [
    (["-q", "--", "--tensor-parallel-size"], "--tensor-parallel-size 8 --block-size 1\n"),
    (["-q", "--", "--enable-expert-parallel"], "--tensor-parallel-size 8 --block-size 1\n"),
    (["-E", "^[A-Za-z]"], "DeepSeek-R1:\n  base: x\nKimi:\n"),
    (["-F", "a.b"], "a.b\naxb\n"),
    (["a.b"], "a.b\naxb\n"),
    (["-q", "-E", "x+y"], "xxy\n"),
    (["-qE", "^--"], "tp\n--x\n"),
    (["-e", "-v"], "a -v b\n"),
]


def _real(program: str, args: list[str], stdin: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([program, *args], input=stdin, capture_output=True, text=True, check=False)


@pytest.mark.parametrize("args, stdin", SED_MODELLED)
def test_sed_prints_what_the_real_sed_prints(args: list[str], stdin: str) -> None:
    real = _real("sed", args, stdin)
    assert real.returncode == 0, real.stderr
    result = commands.run("sed", args, stdin)
    assert result is not None and result.output == real.stdout, (args, stdin)


@pytest.mark.parametrize("args", SED_REFUSED)
def test_sed_forms_not_modelled_are_unknown(args: list[str]) -> None:
    result = commands.run("sed", args, "aab xyz\n")
    assert result is not None and result.output is None and result.status is None


@pytest.mark.parametrize("args, stdin", GREP)
def test_grep_prints_and_ends_as_the_real_grep(args: list[str], stdin: str) -> None:
    real = _real("grep", args, stdin)
    result = commands.run("grep", args, stdin)
    assert result is not None and (result.output, result.status) == (real.stdout, real.returncode == 0), args


def test_grep_options_not_modelled_and_unknown_input_are_unknown() -> None:
    assert commands.run("grep", ["-c", "a"], "a\n") == commands.UNKNOWN
    assert commands.run("grep", ["-q", "a", "file"], "a\n") == commands.UNKNOWN
    assert commands.run("grep", ["-q", "a"], None) == commands.UNKNOWN
    assert commands.run("sed", ["s/a/b/"], None) == commands.UNKNOWN


RECIPE = """\
#!/usr/bin/env bash
CONFIG="--tensor-parallel-size 8 --block-size 1"
if echo "$CONFIG" | grep -q -- '--tensor-parallel-size'; then
    CONFIG=$(echo "$CONFIG" | sed -E "s/--tensor-parallel-size[[:space:]]+[0-9]+/--tensor-parallel-size ${TP}/g")
else
    CONFIG+=" --tensor-parallel-size ${TP}"
fi
if [[ "$EP" == "true" ]] && ! echo "$CONFIG" | grep -q -- '--enable-expert-parallel'; then
    CONFIG+=" --enable-expert-parallel"
fi
vllm serve model $CONFIG
"""


@pytest.mark.parametrize("start", ["--tensor-parallel-size 8 --block-size 1", "--block-size 1",
                                   "--block-size 1 --enable-expert-parallel"])
def test_a_condition_on_a_piped_grep_is_decided_as_bash_decides_it(start: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The server line the evaluator states is the one bash builds (bash prints it instead of serving)."""
    from ci_tools.config import load_config
    from ci_tools.revision.snapshot import WorkTreeSnapshot
    from ci_tools.shell.interp import Interpreter
    from ci_tools.shell.parse import parse_script

    recipe = RECIPE.replace('CONFIG="--tensor-parallel-size 8 --block-size 1"', f'CONFIG="{start}"')
    (tmp_path / "r.sh").write_text(recipe, encoding="utf-8")
    shown = recipe.replace("vllm serve model $CONFIG", 'printf "%s\\n" $CONFIG')
    real = subprocess.run(["bash", "-c", shown], env={"TP": "4", "EP": "true", "PATH": "/usr/bin:/bin"},
                          capture_output=True, text=True, check=True).stdout.split()
    interp = Interpreter("r.sh", load_config(tmp_path), WorkTreeSnapshot(tmp_path))
    for name, text in (("TP", "4"), ("EP", "true")):
        interp.state.vars[name] = _value(text)
    interp.run(parse_script("r.sh", recipe.encode()))
    [server] = interp.state.servers
    words = [w for f in server.flags for w in (f.name, f.value.text if f.value is not None else None) if w]
    assert words == real and not any(f.conditional for f in server.flags)


def _value(text: str):  # type: ignore[no-untyped-def]
    from ci_tools.findings import Location
    from ci_tools.shell.model import Value

    return Value(text, Location("job", 1, 1))
