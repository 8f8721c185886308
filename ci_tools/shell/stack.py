"""Running a sweep with room on the interpreter's frame stack.

CPython (3.11 and later) keeps Python frames on a stack of 16 KiB chunks,
each mapped and unmapped from the operating system as the call depth
crosses a chunk boundary.  Evaluating a recipe recurses deeply and its
depth swings around such a boundary thousands of times per job: over a
whole sweep that was tens of thousands of mmap/munmap pairs, a tenth to a
fifth of ``recipe show '*'``'s time, all of it in the kernel.

A chunk is sized for the frame that needs it, rounded up to a power of
two.  ``with_room`` calls the sweep from a frame that reserves a little
over half of a large chunk: that chunk stays mapped for the whole sweep
and the frames above it (up to the other half) fit in it, so no chunk is
mapped again.  Nothing else changes: the same function runs with the same
arguments.
"""

from __future__ import annotations

from types import FunctionType
from typing import Callable, TypeVar, cast

T = TypeVar("T")

# Slots of 8 bytes: 17,000 is a little over 128 KiB, so the chunk is 256 KiB
# and leaves about 120 KiB (several hundred frames) above the reserving frame.
_RESERVED_SLOTS = 17_000


def _call(fn: Callable[[], T]) -> T:
    return fn()


def _roomy_call() -> Callable[[Callable[[], T]], T]:
    """``_call`` with its frame widened by unused local slots (built once, under a millisecond).
    The slots share one name: they are never read, and distinct names would cost a megabyte."""
    code = _call.__code__
    extra = ("_unused",) * _RESERVED_SLOTS
    wide = code.replace(co_varnames=code.co_varnames + extra,
                        co_nlocals=code.co_nlocals + len(extra))
    return cast("Callable[[Callable[[], T]], T]", FunctionType(wide, _call.__globals__, "_roomy_call"))


_ROOMY: Callable[[Callable[[], object]], object] | None = None


def with_room(fn: Callable[[], T]) -> T:
    """``fn()``, called from a frame that keeps a large stack chunk mapped while it runs."""
    global _ROOMY
    if _ROOMY is None:
        _ROOMY = _roomy_call()
    result: T = _ROOMY(fn)  # type: ignore[assignment]
    return result
