"""The lines a change wrote: what a changelog sentence may be about.

"Lower max-num-batched-tokens to 16384 ... on the high-throughput and
max-throughput recipes" describes what the change did: the prefill workers of
two recipes went from 32768 to 16384, while the decode workers and the
low-latency recipe keep other values.  When the words name a part of the jobs
the checker cannot tell (a recipe family, "the wide-EP recipes", the workers a
feature is for), one reading of a claim is that it speaks of the settings the
change wrote.  A claim that holds on every setting its change wrote (and the
change wrote at least one) is not contradicted under that reading, so the
settings it left alone give no finding.  A claim of a setting the change did
not touch has no such reading.
"""

from __future__ import annotations

import difflib

from ...findings import Location
from ...revision.snapshot import Snapshot


class ChangedLines:
    """Which lines of a file the head revision wrote anew against the base (added or replaced)."""

    def __init__(self, head: Snapshot, base: Snapshot | None) -> None:
        self.head = head
        self.base = base
        self._lines: dict[str, frozenset[int]] = {}

    def written(self, where: Location | None) -> bool:
        """The line ``where`` points at was written by the change (a file the base lacks is written whole)."""
        if where is None or not where.path:
            return False
        found = self._lines.get(where.path)
        if found is None:
            found = self._lines[where.path] = self._changed(where.path)
        return where.line in found

    def touched(self, path: str) -> bool:
        """The change wrote some line of ``path`` (or removed some)."""
        if path not in self._lines:
            self._lines[path] = self._changed(path)
        if self._lines[path]:
            return True
        head = self.head.read(path)
        base = self.base.read(path) if self.base is not None else None
        return head != base

    def _changed(self, path: str) -> frozenset[int]:
        head = self.head.read(path)
        if head is None:
            return frozenset()
        new = head.decode("utf-8", "replace").splitlines()
        old_bytes = self.base.read(path) if self.base is not None else None
        if old_bytes is None:
            return frozenset(range(1, len(new) + 1))
        old = old_bytes.decode("utf-8", "replace").splitlines()
        out: set[int] = set()
        for tag, _, _, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
            if tag in ("replace", "insert"):
                out.update(range(j1 + 1, j2 + 1))
        return frozenset(out)
