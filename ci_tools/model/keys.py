"""Config-key globs as the changelog writes them: ``*`` is the only wildcard, and a glob matches a whole key.

(Job selection on the command line accepts more, as InferenceX's ``test-config``
does: see :func:`ci_tools.jobs.selection.match_selection_glob`.)
"""

from __future__ import annotations

from typing import Iterable


def match_key_glob(pattern: str, key: str) -> bool:
    """Whether ``pattern`` matches the whole of ``key``."""
    parts = pattern.split("*")
    if len(parts) == 1:
        return pattern == key
    if not key.startswith(parts[0]) or not key.endswith(parts[-1]) or len(key) < len(parts[0]) + len(parts[-1]):
        return False
    pos = len(parts[0])
    limit = len(key) - len(parts[-1])
    for middle in parts[1:-1]:
        found = key.find(middle, pos, limit)
        if found < 0:
            return False
        pos = found + len(middle)
    return True


def keys_matching(patterns: Iterable[str], keys: Iterable[str]) -> list[str]:
    """The keys some pattern matches, in the order of ``keys``."""
    pats = list(patterns)
    return [k for k in keys if any(match_key_glob(p, k) for p in pats)]
