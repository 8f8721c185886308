"""The prose of a PR description: code blocks and HTML comments blanked, every position kept."""

from __future__ import annotations

from ci_tools.claims.text.markdown import prose_of

TEXT = """Use `--flag 1` here.
```bash
run --flag 2
```
<!-- e.g. --flag 3 -->
~~~
--flag 4
~~~
Then --flag 5.
```
--flag 6 (never closed)
"""


def test_code_blocks_and_comments_are_blanked_and_positions_kept() -> None:
    out = prose_of(TEXT)
    assert len(out) == len(TEXT) and out.count("\n") == TEXT.count("\n")
    assert [n for n in range(1, 7) if f"--flag {n}" in out] == [1, 5]  # inline code and prose stay
    assert out.index("Then --flag 5.") == TEXT.index("Then --flag 5.")


def test_a_fence_inside_a_line_opens_no_block() -> None:
    text = "Not a fence: a ``` in prose, then --flag 7.\n"
    assert prose_of(text) == text
