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
    """Which lines of a file the head revision wrote anew against the base (added or replaced), and the text of
    those lines and of the lines it removed."""

    def __init__(self, head: Snapshot, base: Snapshot | None) -> None:
        self.head = head
        self.base = base
        self._diffs: dict[str, tuple[frozenset[int], str]] = {}

    def written(self, where: Location | None) -> bool:
        """The line ``where`` points at was written by the change (a file the base lacks is written whole)."""
        if where is None or not where.path:
            return False
        return where.line in self._diff(where.path)[0]

    def touched(self, path: str) -> bool:
        """The change wrote or removed some line of ``path``."""
        return bool(self._diff(path)[1])

    def wrote_about(self, path: str, name: str) -> bool:
        """A line the change wrote into ``path`` or removed from it names the setting ``name`` (``--moe-a2a-backend``
        as moe-a2a-backend or moe_a2a_backend; a key by the last part of its address)."""
        bare = name.lstrip("-").rpartition(".")[2].lower()
        text = self._diff(path)[1]
        return bool(bare) and (bare in text or bare.replace("-", "_") in text or bare.replace("_", "-") in text)

    def _diff(self, path: str) -> tuple[frozenset[int], str]:
        found = self._diffs.get(path)
        if found is None:
            found = self._diffs[path] = self._changed(path)
        return found

    def _changed(self, path: str) -> tuple[frozenset[int], str]:
        head = self.head.read(path)
        new = head.decode("utf-8", "replace").splitlines() if head is not None else []
        old_bytes = self.base.read(path) if self.base is not None else None
        old = old_bytes.decode("utf-8", "replace").splitlines() if old_bytes is not None else []
        # The lines both versions begin and end with are left out of the matcher: on a master config of thousands
        # of alike lines, where a change writes a few, its search for the longest match is what took the time.
        start = 0
        while start < len(old) and start < len(new) and old[start] == new[start]:
            start += 1
        end = 0
        while end < len(old) - start and end < len(new) - start and old[-1 - end] == new[-1 - end]:
            end += 1
        old_mid, new_mid = old[start:len(old) - end], new[start:len(new) - end]
        lines: set[int] = set()
        texts: list[str] = []
        for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old_mid, new_mid, autojunk=False).get_opcodes():
            if tag != "equal":
                lines.update(range(start + j1 + 1, start + j2 + 1))
                texts += old_mid[i1:i2] + new_mid[j1:j2]
        return frozenset(lines), "\n".join(texts).lower()
