"""Master configs of revisions written in an older layout, read as that revision's generator read them.

Until 2026-05-01 (InferenceX b7ae44045, "agentic trace replay benchmark")
a master config listed its sequence-length blocks under ``seq-len-configs:``;
that commit moved them to ``scenarios: fixed-seq-len:`` and added the
agentic blocks beside them.  The blocks themselves did not change shape, so
a config in the older layout is the same config with its blocks under the
newer key.  A replay over history (``claims --history``) meets 283
changelog commits before the move; read in the current layout only, every
entry of them selects no job and none of its claims is checked.

Only replays rewrite: ``validate`` and ``check`` judge a tree by the current
generator, which reads ``scenarios`` only, so a ``seq-len-configs`` config
written today is still an error there.
"""

from __future__ import annotations

from typing import Any

from ..revision.yamlpos import PosMap
from .repository import ConfigEntry, RepoData

OLDER_BLOCKS = "seq-len-configs"
SCENARIOS = "scenarios"
FIXED_SEQ_LEN = "fixed-seq-len"


def in_current_layout(data: Any) -> Any:
    """``data`` with its ``seq-len-configs`` blocks under ``scenarios: fixed-seq-len:``, every key in its
    place and every position kept (the new keys point at the ``seq-len-configs`` key); anything else as
    given.  A config that has both keys is left alone: no generator read it, and the schema says so."""
    if not isinstance(data, PosMap) or OLDER_BLOCKS not in data or SCENARIOS in data:
        return data
    at = data.key_span(OLDER_BLOCKS)
    scenarios = PosMap()
    scenarios.span = data.value_span(OLDER_BLOCKS)
    scenarios[FIXED_SEQ_LEN] = data[OLDER_BLOCKS]
    scenarios.key_spans[FIXED_SEQ_LEN] = at
    scenarios.value_spans[FIXED_SEQ_LEN] = data.value_span(OLDER_BLOCKS)
    rewritten = PosMap()
    rewritten.span = data.span
    for key, value in data.items():
        new_key, new_value = (SCENARIOS, scenarios) if key == OLDER_BLOCKS else (key, value)
        rewritten[new_key] = new_value
        rewritten.key_spans[new_key] = data.key_span(key)
        rewritten.value_spans[new_key] = data.value_span(key)
    return rewritten


def read_older_layout(repo: RepoData) -> RepoData:
    """``repo`` with each config in the older layout rewritten by :func:`in_current_layout` (in place)."""
    for key, entry in repo.configs.items():
        data = in_current_layout(entry.data)
        if data is not entry.data:
            repo.configs[key] = ConfigEntry(entry.key, entry.file, data, entry.key_span)
    return repo
