r"""Whether a word stands in a text on its own, without a regular expression per word.

Config keys, flags and command words are looked for in many texts, hundreds of distinct ones in a replay: a
pattern per word (``(?<![\w.-])word(?![\w.-])``) would be compiled again and again (Python's regex cache holds
512), or kept in a cache of its own.
"""

from __future__ import annotations


def has_word(text: str, word: str, joiners: str = ".-") -> bool:
    r"""``word`` stands in ``text`` on its own: no letter, digit, ``_`` or one of ``joiners`` right before or after
    it, as ``(?<![\w.-])word(?![\w.-])`` says for the default joiners."""
    start = text.find(word)
    while start >= 0:
        end = start + len(word)
        if not (start and _joins(text[start - 1], joiners)) and not (end < len(text) and _joins(text[end], joiners)):
            return True
        start = text.find(word, start + 1)
    return False


def _joins(char: str, joiners: str) -> bool:
    return char.isalnum() or char == "_" or char in joiners
