"""``has_word``: a config key or flag found in a text only where it stands on its own, as the pattern
``(?<![\\w.-])word(?![\\w.-])`` finds it (ci_tools/words.py)."""

from __future__ import annotations

import re

import pytest

from ci_tools.words import has_word

KEY = "dsr1-fp8-b200-sglang"


@pytest.mark.parametrize("text", [
    f"for {KEY}, raise the concurrency", f"{KEY}: conc 4-64", f"({KEY})", f"`{KEY}`", KEY,
    f"not-{KEY}", f"{KEY}-mtp gets conc 4", f"{KEY}.yaml", f"x{KEY}", f"{KEY}_2",
    f"{KEY}-mtp and {KEY} both", f"dsr1-fp8-b200-sglangé", f"é{KEY} and {KEY}2",
])
def test_it_finds_what_the_pattern_finds(text: str) -> None:
    pattern = r"(?<![\w.-])" + re.escape(KEY) + r"(?![\w.-])"
    assert has_word(text, KEY) == bool(re.search(pattern, text))


def test_the_joiners_are_the_callers() -> None:
    assert not has_word("--max-num-seqs=8", "max-num-seqs")
    assert has_word("--max-num-seqs=8", "max-num-seqs", joiners="")
    assert has_word("set max-num-seqs.", "max-num-seqs", joiners="-")
