"""Every character of a description bullet maps to its line and column in the YAML file."""

from __future__ import annotations

import pytest

from ci_tools.claims.text.sentences import plain_source, scalar_source, split_clauses, split_sentences
from ci_tools.revision.yamlpos import load_yaml

CHANGELOG = '''- config-keys:
    - k
  description:
    - "Set the state checkpoint interval to 32768 tokens."
    - "A \\"quoted\\" word, then the interval to 8192 tokens."
    - 'It''s single-quoted: interval 16K.'
    - plain scalar with the interval 4096
    - "folded over
      two lines: interval 2048"
    - "unicode \\u00e9 then 1024"
    - >-
      block scalar interval 512
  pr-link: x
'''


def sources() -> list:  # type: ignore[type-arg]
    loaded = load_yaml(CHANGELOG, "perf-changelog.yaml")
    items = loaded.value[0]["description"]
    return [scalar_source("perf-changelog.yaml", loaded.text, *items.item_span(i)[:2], text)
            for i, text in enumerate(items)]


@pytest.mark.parametrize("index, needle, line, column", [
    (0, "32768", 4, 45), (1, "8192", 5, 48), (2, "16K", 6, 38), (3, "4096", 7, 38),
    (4, "2048", 9, 27), (5, "1024", 10, 28),
])
def test_positions_in_the_file(index: int, needle: str, line: int, column: int) -> None:
    src = sources()[index]
    start = src.text.index(needle)
    loc = src.location(start, start + len(needle))
    assert (loc.line, loc.column) == (line, column)
    raw_line = CHANGELOG.splitlines()[line - 1]
    assert raw_line[loc.column - 1:loc.end_column - 1] == needle


def test_block_scalar_falls_back_to_its_first_line() -> None:
    src = sources()[6]
    loc = src.location(src.text.index("512"), src.text.index("512") + 3)
    assert loc.line == 11


def test_plain_source_lines_and_columns() -> None:
    src = plain_source("pr.md", "line one\n对齐 c48 参数：ATOM_DP_LB_REQ_EQUIV=0")
    start = src.text.index("ATOM")
    assert (src.location(start, start + 4).line, src.location(start, start + 4).column) == (2, 11)


def test_sentences_keep_versions_and_abbreviations_whole() -> None:
    src = plain_source("x", "Bump to v0.5.14, e.g. for MI355X. Then set 8192 tokens; done。最后")
    assert [src.text[a:b] for a, b in split_sentences(src)] == [
        "Bump to v0.5.14, e.g. for MI355X", "Then set 8192 tokens", "done", "最后"]


def test_commas_in_number_lists_and_parentheses_do_not_split() -> None:
    src = plain_source("x", "Run concurrency 1, 2, 4, and 8 on a new pure-TP8 (no EP, no DP-attention) arm, then stop")
    assert [c.text for c in split_clauses(src)] == [
        "Run concurrency 1, 2, 4, and 8 on a new pure-TP8 (no EP, no DP-attention) arm", "then stop"]
