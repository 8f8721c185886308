"""Caches whose memory stays bounded over a long run (a replay of hundreds of revisions, a sweep of thousands
of jobs).

Two kinds, by what an entry costs to make again:

- :class:`BoundedDict` empties itself when it is full: for entries that are cheap to rebuild and most useful
  while one revision or one row of jobs is at work (a value object shared by equal values, a parsed tree).
- :class:`LeastRecentlyStored` forgets its oldest entry: for entries that are dear to rebuild and asked for
  again and again across revisions (a parsed master-config piece).
"""

from __future__ import annotations

from collections import OrderedDict
from typing import TypeVar

K = TypeVar("K")
V = TypeVar("V")


class BoundedDict(dict[K, V]):
    """A dict of at most ``limit`` entries: storing a new key into a full one empties it first."""

    def __init__(self, limit: int) -> None:
        super().__init__()
        self.limit = limit

    def put(self, key: K, value: V) -> V:
        """Store ``value`` under ``key`` and return it (``found = cache.put(key, make())`` after a miss)."""
        if len(self) >= self.limit and key not in self:
            self.clear()
        self[key] = value
        return value


class LeastRecentlyStored(OrderedDict[K, V]):
    """A dict of at most ``limit`` entries: storing one more forgets the one stored longest ago."""

    def __init__(self, limit: int) -> None:
        super().__init__()
        self.limit = limit

    def put(self, key: K, value: V) -> V:
        self[key] = value
        if len(self) > self.limit:
            self.popitem(last=False)
        return value
