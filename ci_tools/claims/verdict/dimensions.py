"""Settings that are a dimension of the matrix: ``--enable-dp-attention`` is what a ``dp-attn: true`` point runs.

"Disagg flag set (nixl transfer backend, enable-dp-attention + moe-a2a-backend
deepep)" says the DP-attention workers pass the flag; a recipe of a point the
config runs with ``dp-attn: false`` does not pass it by design, and the config
says so itself.  A claim turning such a setting on, true wherever the matrix
runs the dimension, is no partial contradiction where the matrix does not.
So is a value of the KV-offload backend's own settings ("--hicache-ratio 8"),
where only the ``kv-offloading: dram`` points pass them.  The other direction
is left alone: a point of the dimension without the flag, or with another
value, is a real disagreement.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Mapping

from ...jobs.job import Job
from ..text.arms import ROLES
from ..text.values import Bool, Present
from .compare import Judgement

def _dp_attention(fields: Mapping[str, Any]) -> bool:
    return fields.get("dp-attn") is True


def _expert_parallel(fields: Mapping[str, Any]) -> bool:
    ep = fields.get("ep")
    return isinstance(ep, int) and ep > 1


def _kv_offload(fields: Mapping[str, Any]) -> bool:
    return fields.get("kv-offloading") == "dram"


# A setting's name (flag, variable, key, as the catalog spells it) -> whether a point's fields run its dimension.
_DIMENSIONS: tuple[tuple[re.Pattern[str], Callable[[Mapping[str, Any]], bool]], ...] = (
    (re.compile(r"(?:^|[-_.])(?:enable[-_])?dp[-_]?attn?(?:ention)?$", re.I), _dp_attention),
    (re.compile(r"(?:^|[-_.])enable[-_](?:expert[-_]parallel(?:ism)?|ep[-_]moe)$", re.I), _expert_parallel),
    # the KV-offload backend's own settings ("--hicache-ratio 8"): what a `kv-offloading: dram` point runs with
    (re.compile(r"(?:^|[-_.])(?:hicache|lmcache|mooncake)(?:[-_.]|$)", re.I), _kv_offload),
)


def _runs(job: Job, runs_dimension: Callable[[Mapping[str, Any]], bool], role: str) -> bool:
    """The point runs the dimension (a multinode point: in the role named, else in either role)."""
    if not job.multinode:
        return runs_dimension(job.fields)
    roles = (role,) if role in ROLES else ROLES
    return any(isinstance(fields := job.fields.get(r), Mapping) and runs_dimension(fields) for r in roles)


def explained_by_the_matrix(judgement: Judgement) -> bool:
    """The claim turns on a dimension's setting, holds on some jobs, and every job it fails on is a point the
    config runs without that dimension."""
    claim = judgement.claim
    on = isinstance(claim.value, Present) or (isinstance(claim.value, Bool) and claim.value.on)
    off = isinstance(claim.value, Bool) and not claim.value.on
    if claim.kind != "recipe" or claim.subject is None or off:
        return False
    runs_dimension = next((test for pattern, test in _DIMENSIONS if pattern.search(claim.subject.name)), None)
    if runs_dimension is None:
        return False
    known = judgement.known
    failing = [(job, actual) for job, actual in known if actual.verdict is False]
    holding = [job for job, actual in known if actual.verdict]
    role = claim.scope.role
    # a value ("--hicache-ratio 8"): only where the setting is not passed at all, not where it has another value
    absent = on or all(actual.value == "absent" for _, actual in failing)
    return bool(failing) and bool(holding) and absent and not any(_runs(job, runs_dimension, role)
                                                                  for job, _ in failing)
