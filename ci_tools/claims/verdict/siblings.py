"""The sibling config a part of the sweep is of, when the entry's own configs run no job of it.

A model's aggregated and disaggregated sweeps are often two keys that differ only in their last word
(``...-agentic-agg`` and ``...-agentic-disagg``), and an entry that lists one of them may speak of the other's
arms: "Use the coarse WAR barrier only for the TP4 aggregate point" in an entry of the ``-disagg`` key, whose
TP4 aggregate point is the ``-agg`` key's.  "No job is TP4 aggregate" would be said of the wrong key; the claim
is left unverified naming the key that runs the arm.
"""

from __future__ import annotations

import re
from typing import Mapping, Sequence

from ...jobs.job import Job
from ...jobs.matrix import expand
from ...model.repository import RepoData
from ..text.claim import Claim

# The last word of a key that names how its sweep serves (aggregated or disaggregated): keys that differ only in
# it are one model's two sweeps.
_MODE_TAIL = re.compile(r"-(?:agg|disagg)$")


def _stem(key: str) -> str:
    return _MODE_TAIL.sub("", key)


def sibling_keys(own: Sequence[str], configs: Mapping[str, object]) -> list[str]:
    """The keys of the master configs that differ from one of ``own`` only in that last word."""
    stems = {_stem(k) for k in own}
    return sorted(k for k in configs if k not in own and _stem(k) in stems)


def sibling_running(claim: Claim, jobs: Sequence[Job], repo: RepoData) -> str | None:
    """The sibling key of the entry's configs (those of ``jobs``) whose jobs include the part of the sweep the claim
    names, or None."""
    if not claim.scope.arms:
        return None
    siblings = sibling_keys(sorted({j.config_key for j in jobs}), repo.configs)
    if not siblings:
        return None
    arm = claim.scope.without_concs()
    for key in siblings:
        if arm.jobs(expand(repo, [key])):
            return key
    return None
