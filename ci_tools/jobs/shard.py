"""Splitting a matrix into shards that GitHub accepts.

GitHub Actions limits one job's matrix to 256 entries and a job's outputs to
1 MB, and the full sweep exceeds both, so the matrix is cut into contiguous
shards.  The cut is deterministic (same entries, same shards) and balanced:
the fewest shards that satisfy both limits, with job counts differing by at
most one, so no shard is a small remainder that runs alone.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

MAX_JOBS_PER_SHARD = 256
# GitHub's output limit is 1 MB; stay under the decimal megabyte.
MAX_SHARD_BYTES = 1_000_000
_PREFIX, _SUFFIX = '{"include":[', "]}"


class ShardError(ValueError):
    """An entry that cannot fit any shard, or limits that make no sense."""


def encode(value: Any) -> str:
    """Compact, ASCII-only JSON: its length in characters is its size in bytes."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=True)


@dataclass(frozen=True)
class Shard:
    index: int
    texts: tuple[str, ...]  # each entry's compact JSON
    ids: tuple[str, ...]
    text: str  # {"include": [...]}, compact

    @property
    def size(self) -> int:
        return len(self.text)

    @property
    def entries(self) -> list[Any]:
        return [json.loads(t) for t in self.texts]

    def file_name(self) -> str:
        return f"shard-{self.index:03d}.json"

    def summary(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "file": self.file_name(),
            "jobs": len(self.texts),
            "bytes": self.size,
            "sha256": hashlib.sha256(self.text.encode()).hexdigest(),
        }


def _chunks(count: int, parts: int) -> list[tuple[int, int]]:
    """``parts`` contiguous [start, end) ranges over ``count`` items, sizes differing by at most one."""
    base, extra = divmod(count, parts)
    out, start = [], 0
    for i in range(parts):
        end = start + base + (1 if i < extra else 0)
        out.append((start, end))
        start = end
    return out


def shard_entries(entries: Sequence[Mapping[str, Any]], max_jobs: int = MAX_JOBS_PER_SHARD,
                  max_bytes: int = MAX_SHARD_BYTES) -> list[Shard]:
    """Cut ``entries`` (in order) into the fewest balanced shards within both limits."""
    return shard_texts([encode(e) for e in entries], [str(e.get("id", "")) for e in entries], max_jobs, max_bytes)


def shard_texts(texts: Sequence[str], ids: Sequence[str], max_jobs: int = MAX_JOBS_PER_SHARD,
                max_bytes: int = MAX_SHARD_BYTES) -> list[Shard]:
    """:func:`shard_entries` for entries already encoded as compact ASCII JSON."""
    if not 1 <= max_jobs <= MAX_JOBS_PER_SHARD:
        raise ShardError(f"shard size must be between 1 and {MAX_JOBS_PER_SHARD} jobs, found {max_jobs}")
    if not texts:
        return []
    overhead = len(_PREFIX) + len(_SUFFIX)
    for entry_id, text in zip(ids, texts):
        if len(text) + overhead > max_bytes:
            raise ShardError(f"job {entry_id or '?'} alone is {len(text)} bytes of JSON; "
                             f"expected every job under the shard limit of {max_bytes} bytes")
    total = sum(len(t) + 1 for t in texts) + overhead
    parts = max(math.ceil(len(texts) / max_jobs), math.ceil(total / max_bytes))
    while True:
        ranges = _chunks(len(texts), parts)
        shard_texts = [_PREFIX + ",".join(texts[a:b]) + _SUFFIX for a, b in ranges]
        if all(len(t) <= max_bytes for t in shard_texts):
            break
        parts += 1  # terminates: one entry per shard fits, as checked above
    return [Shard(i, tuple(texts[a:b]), tuple(ids[a:b]), t) for i, ((a, b), t) in enumerate(zip(ranges, shard_texts))]


def index_of(shards: Sequence[Shard], max_jobs: int, max_bytes: int = MAX_SHARD_BYTES,
             extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The index document: shard files, sizes, and a digest of every job id in order."""
    ids = [i for s in shards for i in s.ids]
    return {
        "total-jobs": len(ids),
        "shard-count": len(shards),
        "limits": {"max-jobs": max_jobs, "max-bytes": max_bytes},
        "ids-sha256": hashlib.sha256("\n".join(ids).encode()).hexdigest(),
        "shards": [s.summary() for s in shards],
        **(dict(extra) if extra else {}),
    }
