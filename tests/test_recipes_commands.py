"""What the modelled commands print, and the keys of structured flag values."""

from __future__ import annotations

import pytest

from ci_tools.findings import Location
from ci_tools.shell import commands
from ci_tools.shell.model import Value
from ci_tools.shell.structured import document_keys


@pytest.mark.parametrize("name, args, stdin, output", [
    ("echo", ["a", "b"], None, "a b\n"),
    ("echo", ["-n", "x"], None, "x"),
    ("echo", ["-e", "a\\tb"], None, "a\tb\n"),
    ("printf", ["%s, ", "1", "2", "3"], None, "1, 2, 3, "),
    ("printf", ['{"n":%d,"r":%.2f}', "3", "2.5"], None, '{"n":3,"r":2.50}'),
    ("printf", ["%s\\n", "b", "a"], None, "b\na\n"),
    ("printf", ["%05.1f|%-3s|%x", "3.14159", "ab", "255"], None, "003.1|ab |ff"),
    ("seq", ["3"], None, "1\n2\n3\n"),
    ("seq", ["2", "2", "8"], None, "2\n4\n6\n8\n"),
    ("seq", ["-s,", "1", "4"], None, "1,2,3,4\n"),
    ("seq", ["5", "1"], None, ""),
    ("sort", ["-n", "-u"], "10\n2\n10\n1\n", "1\n2\n10\n"),
    ("sort", [], "b\na\n", "a\nb\n"),
    ("paste", ["-sd,", "-"], "1\n2\n3\n", "1,2,3\n"),
    ("head", ["-n", "1"], "a\nb\n", "a\n"),
    ("tail", ["-1"], "a\nb\n", "b\n"),
    ("dirname", ["/a/b/c.sh"], None, "/a/b\n"),
    ("dirname", ["c.sh"], None, ".\n"),
    ("basename", ["/a/b/c.sh", ".sh"], None, "c\n"),
    ("awk", ["BEGIN{print (2.99-1)/3}"], None, "0.663333\n"),
    ("awk", ["-v", "n=4", "BEGIN { print n * 2, n / 8 }"], None, "8 0.5\n"),
    ("awk", ['BEGIN {printf "%.2f", 1 + (3 / 4)}'], None, "1.75"),
    ("python3", ["-c", "print(3 * 4)"], None, "12\n"),
    ("python3", ["-c", "print(7 / 2)"], None, "3.5\n"),
])
def test_modelled_output(name: str, args: list[str], stdin: str | None, output: str) -> None:
    result = commands.run(name, args, stdin)
    assert result is not None and result.output == output


@pytest.mark.parametrize("name, args, stdin", [
    ("echo", ["a", None], None),  # an unknown argument
    ("printf", ["%d", "abc"], None),  # not a number
    ("sort", ["-k2"], "a\n"),  # an option not modelled
    ("sort", ["-n"], None),  # unknown input
    ("awk", ["{print $1}", "file"], None),  # reads input
    ("awk", ["BEGIN{print x}"], None),  # prints a variable no -v gave: fine in awk, but 0 is not known here
    ("python3", ["-c", "import os; print(os.getpid())"], None),
    ("python3", ["-c", "print(n)"], None),
])
def test_not_modelled_is_unknown(name: str, args: list[str | None], stdin: str | None) -> None:
    result = commands.run(name, args, stdin)
    if name == "awk" and args == ["BEGIN{print x}"]:
        # awk's unset variable is 0: that is what awk prints, so it is known.
        assert result is not None and result.output == "0\n"
        return
    assert result is not None and result.output is None


def test_awk_exit_status() -> None:
    assert commands.run("awk", ["-v", "s=5", "-v", "cap=4", "BEGIN { exit !(s > cap) }"], None) == commands.Result("", True)
    assert commands.run("awk", ["-v", "s=3", "-v", "cap=4", "BEGIN { exit !(s > cap) }"], None) == commands.Result("", False)


def test_other_commands_are_not_modelled() -> None:
    assert commands.run("hostname", [], None) is None
    assert commands.run("nvidia-smi", ["-L"], None) is None


def _where(line: int) -> Location:
    return Location("r.sh", line)


def test_document_keys_of_a_heredoc_keep_their_lines() -> None:
    text = "cuda_graph_config:\n    max_batch_size: 512\nmoe_config:\n    backend: TRTLLM\nlist: [1, 2]\n"
    value = Value(text, _where(10), lines=tuple(_where(11 + i) for i in range(6)))
    keys = {k.path: (k.value.text, k.value.location.line) for k in document_keys(value)}
    assert keys == {"cuda_graph_config.max_batch_size": ("512", 12), "moe_config.backend": ("TRTLLM", 14),
                    "list": ("[1,2]", 15)}


def test_document_keys_with_an_unknown_part() -> None:
    model = Value(None, _where(3), expression="$DRAFT_MODEL_PATH")
    value = Value(None, _where(7), parts=(Value('{"method": "eagle3", "model": "', _where(7)), model,
                                          Value('", "num_speculative_tokens": 3, "path": "/m/', _where(7)), model,
                                          Value('/x"}', _where(7))))
    keys = {k.path: k.value for k in document_keys(value)}
    assert list(keys) == ["method", "model", "num_speculative_tokens", "path"]
    assert keys["method"].text == "eagle3" and keys["num_speculative_tokens"].text == "3"
    assert keys["model"].text is None and keys["model"].expression == "$DRAFT_MODEL_PATH"
    assert keys["path"].text is None and keys["path"].expression == "/m/$DRAFT_MODEL_PATH/x"


def test_values_that_are_not_mappings_have_no_keys() -> None:
    assert document_keys(Value("[1, 2, 4]", _where(1))) == ()
    assert document_keys(Value('{"broken": ', _where(1))) == ()
    assert document_keys(Value(None, _where(1))) == ()
