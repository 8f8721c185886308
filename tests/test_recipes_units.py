"""Smaller contracts of recipe evaluation: the parse cache, flag parsing, undecided exits, resolution."""

from __future__ import annotations

from pathlib import Path

import pytest

from ci_tools.config import ProjectConfig
from ci_tools.findings import Location
from ci_tools.shell import parse
from ci_tools.evaluation.evaluate import evaluate_recipe, unknown_flags
from ci_tools.shell.model import RecipeEval, Value
from ci_tools.shell.server import UNKNOWN_FLAG, find_pattern, parse_flags, split_patterns
from ci_tools.revision.snapshot import WorkTreeSnapshot


def test_trees_are_cached_by_content() -> None:
    source = b"X=1\nif [ \"$X\" = 1 ]; then Y=2; fi\n"
    first = parse.parse_script("a.sh", source)
    assert parse.parse_script("a.sh", bytes(source)) is first
    before = parse.cache_size()
    other = parse.parse_script("b.sh", bytes(source))
    assert parse.cache_size() == before  # same content: not parsed again
    assert other.path == "b.sh" and other.root.children[0].location().path == "b.sh"
    assert first.root.children[0].location().path == "a.sh"


def test_syntax_problems_have_positions() -> None:
    script = parse.parse_script("bad.sh", b"if true; then\n  X=1\n")
    assert [(p.line, p.text) for p in script.problems] == [(3, "missing `fi`")]


def test_a_read_write_redirection_parses_and_keeps_its_text() -> None:
    # tree-sitter-bash has no `N<>FILE`; TileRT's run_node.sh polls a port with it
    source = b'until (exec 3<>"/dev/tcp/$HOST/$PORT") 2>/dev/null; do sleep 5; done\nX=1\n'
    script = parse.parse_script("poll.sh", source)
    assert script.problems == []
    loop = script.root.children[0]
    assert loop.type == "while_statement" and '3<>"/dev/tcp/$HOST/$PORT"' in loop.text
    assert script.root.children[-1].text == "X=1" and script.root.children[-1].line == 2


def _values(*texts: str | None) -> list[Value]:
    return [Value(t, Location("r.sh", i + 1)) for i, t in enumerate(texts)]


def test_flag_parsing() -> None:
    from ci_tools.shell.expand import Field, Piece

    values = _values("--a", "1", "--b", "--c=3", "-x", "-5", "positional", None, "--d")
    flags = parse_flags([Field([Piece(v.text)]) for v in values], values)
    got = [(f.name, f.value.text if f.value else "(on)") for f in flags]
    assert got == [("--a", "1"), ("--b", "(on)"), ("--c", "3"), ("-x", "-5"), (UNKNOWN_FLAG, None), ("--d", "(on)")]
    assert flags[0].value is values[1] and flags[0].location == values[0].location


def test_patterns_match_consecutive_words_anywhere() -> None:
    patterns = split_patterns(("vllm serve", "python3 -m sglang.launch_server"))
    assert find_pattern(["numactl", "--interleave=all", "vllm", "serve", "m"], patterns) == 4
    assert find_pattern(["/usr/bin/python3", "-m", "sglang.launch_server", "--tp", "8"], patterns) == 3
    assert find_pattern(["echo", "vllm", "--serve"], patterns) is None


def test_pattern_words_are_globs_and_the_program_may_be_unknown() -> None:
    patterns = split_patterns(("python* -m sglang.launch_server", "trtllm-serve"))
    assert find_pattern(["/opt/venv/bin/python3.12", "-u", "-m", "sglang.launch_server", "--tp", "8"], patterns) == 4
    # "$SGLANG_PYTHON" -m sglang.launch_server: the interpreter is known only at run time.
    assert find_pattern([None, "-m", "sglang.launch_server"], patterns) == 3
    assert find_pattern([None, "-m", "sglang_router.launch_router"], patterns) is None
    assert find_pattern(["ruby", "-m", "sglang.launch_server"], patterns) is None
    # A pattern that is a program only needs the program to be known.
    assert find_pattern(["mpirun", "-n", "1", "trtllm-serve", "m"], patterns) == 4
    assert find_pattern([None, "m"], patterns) is None


def _eval(tmp_path: Path, text: str, env: dict[str, str]) -> RecipeEval:
    (tmp_path / "r.sh").write_text(text)
    config = ProjectConfig(root=tmp_path)
    return evaluate_recipe("r.sh", env, config, WorkTreeSnapshot(tmp_path))


def test_exit_on_an_undecided_branch_is_conditional(tmp_path: Path) -> None:
    result = _eval(tmp_path, "if [ -f /etc/marker ]; then\n  exit 1\nfi\nvllm serve m --tp \"$TP\"\n", {"TP": "8"})
    assert [(e.location.line, e.code, e.conditional) for e in result.early_exits] == [(1, "1", True)]
    assert [f.value.text for f in result.servers[0] if f.value] == ["8"]


def test_unknown_flag_names_are_reported(tmp_path: Path) -> None:
    result = _eval(tmp_path, "EXTRA=$(cat extra_args)\nvllm serve m $EXTRA --tp 8\n", {})
    names = [f.name for f in unknown_flags(result)]
    assert names == [UNKNOWN_FLAG]


def test_the_first_word_after_vllm_serve_is_the_positional_model_even_when_unknown(tmp_path: Path) -> None:
    # MODEL_PATH is set by the runner's launcher: present, value unknown (None).
    env: dict[str, str | None] = {"MODEL_PATH": None, "PORT": None}
    for launch in ('vllm serve "$MODEL_PATH"', "sglang serve $MODEL_PATH", 'trtllm-serve "$MODEL_PATH"'):
        result = _eval(tmp_path, f'{launch} --tp 8 --port "$PORT"\n', env)  # type: ignore[arg-type]
        assert [f.name for f in result.servers[0]] == ["--tp", "--port"], launch
        assert unknown_flags(result) == [result.servers[0][1]]  # only the port's value is unknown
    # A first word spelling a flag is still a flag, and servers without a positional model keep the
    # unknown word (it may be flags).
    result = _eval(tmp_path, 'vllm serve --model="$MODEL_PATH" --tp 8\n', env)  # type: ignore[arg-type]
    assert [f.name for f in result.servers[0]] == ["--model", "--tp"]
    result = _eval(tmp_path, 'python3 -m sglang.launch_server "$MODEL_PATH" --tp 8\n', env)  # type: ignore[arg-type]
    assert [f.name for f in result.servers[0]] == [UNKNOWN_FLAG, "--tp"]
    # Only the first word: a second unknown word is still one that may be a flag.
    result = _eval(tmp_path, 'vllm serve "$MODEL_PATH" "$MODEL_PATH" --tp 8\n', env)  # type: ignore[arg-type]
    assert [f.name for f in result.servers[0]] == [UNKNOWN_FLAG, "--tp"]


def test_a_default_over_a_run_time_variable_is_known_when_the_job_runs(tmp_path: Path) -> None:
    from ci_tools.evaluation.stats import COMMAND_OUTPUT, RUN_TIME, unknown_values

    env: dict[str, str | None] = {"PORT": None, "TP": "8"}
    result = _eval(tmp_path, 'PORT="${PORT:-8888}"\nBASE=$(cat /etc/base)\n'
                             'vllm serve m --port "$PORT" --tp "$TP" --x "${BASE:-1}"\n', env)  # type: ignore[arg-type]
    reasons = dict(unknown_values(result))
    assert reasons["--port"].category == RUN_TIME and reasons["--port"].text == "known only when the job runs: $PORT"
    # a default over a command's output stays a command's output
    assert (reasons["--x"].category, reasons["--x"].text) == (
        COMMAND_OUTPUT, "output of a command that is not evaluated: $(cat /etc/base)")
    assert result.unknown_inputs == frozenset({"PORT"})


def test_a_reused_call_reads_the_files_the_recipe_wrote_before_it(tmp_path: Path) -> None:
    # `extend` appends to a file whose content depends on CONC: a call recorded for one job must not be
    # replayed for another whose file differs (the call reads the file, not only variables).
    text = ('extend() {\n  cat << EOF >> cfg.yml\nstream_interval: 10\nEOF\n}\n'
            'cat > cfg.yml << EOF\nmax_batch_size: $CONC\nEOF\nextend\nextend_again=1\n'
            'trtllm-serve m --config cfg.yml\n')
    sizes = []
    for conc in ("4", "64", "4"):
        result = _eval(tmp_path, text, {"CONC": conc})
        keys = result.flag_keys("--config")
        sizes.append((keys["max_batch_size"].text, keys["stream_interval"].text))
    assert sizes == [("4", "10"), ("64", "10"), ("4", "10")]


def test_missing_recipe_is_an_error_not_an_exception(tmp_path: Path) -> None:
    result = evaluate_recipe("nope.sh", {}, ProjectConfig(root=tmp_path), WorkTreeSnapshot(tmp_path))
    assert result.errors == ["nope.sh: recipe not found in work tree"] and result.servers == []


def test_unresolvable_source_is_reported(tmp_path: Path) -> None:
    result = _eval(tmp_path, 'source "$(find / -name lib.sh)"\nvllm serve m\n', {})
    assert result.errors == ['r.sh:1: cannot resolve `source "$(find / -name lib.sh)"`; what it defines is unknown']


def test_recorded_calls_are_reused_only_when_their_reads_agree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ci_tools.shell import interp

    runs: list[str] = []
    real_run = interp.Interpreter._run_call

    def counting(self: interp.Interpreter, body: object, name: str, args: list[Value]) -> object:
        runs.append(name)
        return real_run(self, body, name, args)  # type: ignore[arg-type]

    monkeypatch.setattr(interp.Interpreter, "_run_call", counting)
    text = (
        "client() {\n    check_env_vars ISL\n    if [ \"$MODE\" = fast ]; then export CLIENT_MODE=fast; fi\n"
        "    RESULT=\"run-$1\"\n}\nclient once\nvllm serve m --max-num-seqs \"$CONC\" &\n"
    )
    (tmp_path / "r.sh").write_text(text)
    config, snapshot = ProjectConfig(root=tmp_path), WorkTreeSnapshot(tmp_path)

    def run(**env: str) -> RecipeEval:
        return evaluate_recipe("r.sh", env, config, snapshot)

    first = run(ISL="1024", MODE="fast", CONC="4")
    again = run(ISL="2048", MODE="fast", CONC="8")  # only emptiness of ISL is read: reused
    assert runs == ["client"]
    assert [m.name for m in first.missing_env + again.missing_env] == []
    assert first.variables["RESULT"].text == again.variables["RESULT"].text == "run-once"
    assert again.variables["CLIENT_MODE"].text == "fast" and "CLIENT_MODE" in again.variables
    empty = run(ISL="", MODE="fast", CONC="8")
    assert [(m.name, m.location.line) for m in empty.missing_env] == [("ISL", 2)]
    slow = run(ISL="1024", MODE="slow", CONC="8")
    assert "CLIENT_MODE" not in slow.variables
    assert [f.value.text for f in slow.servers[0] if f.value] == ["8"]
    assert runs == ["client", "client", "client"]
