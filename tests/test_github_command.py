"""The `/run-benchmark` grammar: what is a command, what is not, and the exact problems reported."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ci_tools.github.command import (
    Command,
    CommandError,
    NotACommand,
    first_line,
    parse_comment,
    shown,
)

SHA = "0123456789abcdef0123456789abcdef01234567"


@pytest.mark.parametrize(("body", "expected"), [
    ("/run-benchmark dsr1-*", Command("run", globs=("dsr1-*",))),
    ("\r\n\r\n   /run-benchmark   dsr1-*\t conc=64,48,64 tp=8 ep=1,8 \r\nmore text",
     Command("run", globs=("dsr1-*",), conc=(48, 64), tp=(8,), ep=(1, 8))),
    ("/run-benchmark a b a scenario=agentic-coding evals dry-run",
     Command("run", globs=("a", "b"), scenario="agentic-coding", evals=True, dry_run=True)),
    (f"/run-benchmark changelog sha={SHA.upper()}", Command("changelog", sha=SHA)),
    ("/run-benchmark help", Command("help")),
    ("\ufeff/run-benchmark help", Command("help")),
    ("/run-benchmark x\rsecond line", Command("run", globs=("x",))),
])
def test_commands(body: str, expected: Command) -> None:
    assert parse_comment(body) == expected


@pytest.mark.parametrize(("body", "reason"), [
    ("", "the comment is empty"),
    (" \n\t\n", "the comment is empty"),
    ("> /run-benchmark x", "the first line is a quotation"),
    ("  >/run-benchmark x", "the first line is a quotation"),
    ("```\n/run-benchmark x\n```", "the comment starts with a fenced code block"),
    ("~~~sh\n/run-benchmark x", "the comment starts with a fenced code block"),
    ("    /run-benchmark x", "the first line is an indented code block"),
    ("\t/run-benchmark x", "the first line is an indented code block"),
    ("please /run-benchmark x", "the first line does not start with /run-benchmark"),
    ("/run-benchmarks x", "the first line does not start with /run-benchmark"),
    ("LGTM\n/run-benchmark x", "the first line does not start with /run-benchmark"),
])
def test_not_commands(body: str, reason: str) -> None:
    assert parse_comment(body) == NotACommand(reason)


@pytest.mark.parametrize(("body", "note"), [
    ("\u2215run-benchmark x", "this comment starts with U+2215 DIVISION SLASH, which only looks like `/`; "
                              "commands start with the ASCII slash: /run-benchmark"),
    ("\uff0frun-benchmark x", "this comment starts with U+FF0F FULLWIDTH SOLIDUS, which only looks like `/`; "
                              "commands start with the ASCII slash: /run-benchmark"),
    ("\u29f8run-benchmark", "this comment starts with U+29F8 BIG SOLIDUS, which only looks like `/`; "
                            "commands start with the ASCII slash: /run-benchmark"),
    ("/run\u200b-benchmark x", "the command word contains U+200B ZERO WIDTH SPACE; write it in plain ASCII: "
                               "/run-benchmark"),
    ("/run\u2010benchmark x", "the command word contains U+2010 HYPHEN; write it in plain ASCII: /run-benchmark"),
    ("/run-benchmark\u00a0x", "the command word is followed by U+00A0 NO-BREAK SPACE; separate words with "
                              "ordinary spaces: /run-benchmark ..."),
    ("/Run-Benchmark x", "`/Run-Benchmark` is not a command; commands are lowercase: /run-benchmark"),
])
def test_lookalikes_are_never_commands(body: str, note: str) -> None:
    result = parse_comment(body)
    assert isinstance(result, NotACommand)
    assert result.note == note


@pytest.mark.parametrize(("body", "problems"), [
    ("/run-benchmark", ["name what to run: one or more config-key globs (e.g. `dsr1-fp4-*`) or `changelog`"]),
    ("/run-benchmark x conc=0", ["`conc=0`: expected `conc=` followed by up to 32 comma-separated positive "
                                 "integers, e.g. `conc=8` or `conc=48,64`"]),
    ("/run-benchmark x tp=8 tp=4", ["`tp` is given more than once"]),
    ("/run-benchmark x evals evals", ["`evals` is given more than once"]),
    ("/run-benchmark x scenario=fixed", ["`scenario=fixed`: unknown scenario, expected one of: `fixed-seq-len`, "
                                         "`agentic-coding`"]),
    ("/run-benchmark x sha=abc", ["`sha=abc`: expected `sha=` followed by the full 40-hex-digit commit id"]),
    ("/run-benchmark x gpu=8", ["`gpu=8`: unknown option `gpu=`, expected `conc=`, `tp=`, `ep=`, `scenario=` or "
                                "`sha=`"]),
    ("/run-benchmark x; ls", ["`x;` is not a word this command accepts: expected a config-key glob (letters, "
                              "digits, `.`, `_`, `-` and `*`), `changelog`, `help` or an option"]),
    ("/run-benchmark help x", ["`help` takes no other words"]),
    ("/run-benchmark changelog dsr1-*", ["`changelog` selects the jobs of the changelog entries this pull request "
                                         "appends, so it cannot be combined with config-key globs; use one or the "
                                         "other"]),
    ("/run-benchmark x conc=" + ",".join(["1"] * 33), ["`conc=1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1...`: expected "
                                                       "`conc=` followed by up to 32 comma-separated positive "
                                                       "integers, e.g. `conc=8` or `conc=48,64`"]),
])
def test_errors_say_what_is_wrong(body: str, problems: list[str]) -> None:
    result = parse_comment(body)
    assert isinstance(result, CommandError)
    assert list(result.problems) == problems


def test_limits() -> None:
    long = parse_comment("/run-benchmark " + "a" * 2000)
    assert long == CommandError(("the command line is 2015 characters long; at most 1000 are accepted",))
    many = parse_comment("/run-benchmark " + " ".join(f"k{n}" for n in range(65)))
    assert many == CommandError(("the command has 65 words; at most 64 are accepted",))


def test_shown_neutralises_markdown_and_invisible_characters() -> None:
    assert shown("`@x`<b>\u202e\U0001f600\\") == "\\u0060@x\\u0060<b>\\u202e\\U0001f600\\u005c"
    assert shown("a" * 50) == "a" * 40 + "..."


def test_first_line_normalises_line_ends() -> None:
    assert first_line("\r\n  \r\nx\r\ny") == "x"
    assert first_line("") is None


_SAFE_GLOB = re.compile(r"^[A-Za-z0-9*][A-Za-z0-9._*-]*$")


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300))
def test_any_text_parses_to_a_safe_value(text: str) -> None:
    result = parse_comment(text)
    if isinstance(result, Command):
        stripped = first_line(text)
        assert stripped is not None and stripped.strip(" \t").startswith("/run-benchmark")
        assert all(_SAFE_GLOB.match(g) for g in result.globs)
        assert result.sha is None or re.fullmatch(r"[0-9a-f]{40}", result.sha)
    elif isinstance(result, CommandError):
        for problem in result.problems:
            # Quoted words are escaped: nothing outside printable ASCII reaches a reply.
            assert all(" " <= ch <= "~" for ch in problem)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(["\u2215", "\uff0f", "\u2044", "\u29f8", "\u2571"]), st.text(max_size=40))
def test_lookalike_slash_never_makes_a_command(slash: str, rest: str) -> None:
    assert isinstance(parse_comment(f"{slash}run-benchmark {rest}"), NotACommand)
