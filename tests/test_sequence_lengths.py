"""Sequence lengths written as changelogs and result reports write them (one helper for both)."""

from ci_tools.claims.text.sweep_readers import _seq_words
from ci_tools.jobs.sequence_lengths import kilo_words


def test_whole_blocks_of_1024_are_kilo_words() -> None:
    assert [kilo_words(n) for n in (1024, 8192, 131072)] == ["1k", "8k", "128k"]


def test_other_lengths_keep_their_digits() -> None:
    assert [kilo_words(n) for n in (1000, 1500, 2304, 0)] == ["1000", "1500", "2304", "0"]


def test_a_sweeps_sequence_label_is_written_the_same_way() -> None:
    assert _seq_words((8192, 1024)) == "8k/1k"
    assert _seq_words((1024, None)) == "1k/any"
    assert _seq_words((1000, 2048)) == "1000/2k"
