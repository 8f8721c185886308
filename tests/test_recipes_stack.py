"""with_room: a sweep runs unchanged, from a frame that reserves a large stack chunk."""

from __future__ import annotations

import sys

import pytest

from ci_tools.shell.stack import with_room


def test_the_function_runs_with_its_result_and_its_exceptions() -> None:
    assert with_room(lambda: [1, 2, 3]) == [1, 2, 3]
    with pytest.raises(KeyError, match="missing"):
        with_room(lambda: {}["missing"])


def test_the_calling_frame_reserves_more_than_half_of_a_256_kib_chunk() -> None:
    def caller_slots() -> int:
        caller = sys._getframe(1)
        return caller.f_code.co_nlocals

    # 8-byte slots: more than 128 KiB makes CPython size the chunk at 256 KiB.
    assert with_room(caller_slots) * 8 > 128 * 1024


def test_deep_recursion_inside_is_unaffected() -> None:
    def depth(n: int) -> int:
        return 0 if n == 0 else 1 + depth(n - 1)

    assert with_room(lambda: depth(600)) == 600
