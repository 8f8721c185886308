"""Sequence lengths as people write them: 8192 is "8k", 1000 stays "1000"."""

from __future__ import annotations


def kilo_words(n: int) -> str:
    """``8192`` -> ``8k`` (a whole number of 1024-token blocks), any other length as its digits."""
    return f"{n // 1024}k" if n and n % 1024 == 0 else str(n)
