"""A clause's segments: the stretches of it that speak of one set of arms, and how arms named together merge."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from .arms import Arm, Group, Parallel, attributes
from .concs import ConcSpec
from .scope import Scope


# Words that make an arm a part of the sweep the sentence asserts.
PART_NOUNS = {"arm", "arms", "band", "bands", "row", "rows", "point", "points", "sweep", "sweeps", "lane", "lanes",
               "scenario", "scenarios", "config", "configs", "configuration", "configurations", "search", "matrix",
               "grid", "ladder", "topology", "topologies", "tier", "worker", "workers", "mode", "layout", "only"}


@dataclass
class Segment:
    start: int  # token range [start, end)
    end: int
    arms: list[Arm] = field(default_factory=list)
    loose: list[Arm] = field(default_factory=list)  # the other reading (see Group.loose)
    groups: list[Group] = field(default_factory=list)
    concs: list[ConcSpec] = field(default_factory=list)
    scope: Scope = Scope()


def competes(current: list[Arm], new: tuple[Arm, ...]) -> bool:
    """``new`` names another thing of a kind the current arms name (another parallelism, another backend)."""
    if any(_role_only(a) and _role_only(b) and a.role != b.role for a in current for b in new):
        return True  # "decode workers use X and prefill workers Y"
    if any(_named_whole(a) and _named_whole(b) and _rival_parallelisms(a.parallel, b.parallel)
           for a in current for b in new):
        return True  # "64 on TP4 and 128 on DEP8"
    mine = {a for arm in current for a in attributes(arm)}
    if not any(mine & attributes(arm) for arm in new):
        return False
    return not all(any(a.merged(b) is not None for a in current) for b in new)


_WHOLE_NAME = re.compile(r"(?:pure-|plain-)?(?:TP|TEP|DEP)\d+(?:/\S*)?", re.IGNORECASE)


def _named_whole(arm: Arm) -> bool:
    """The arm is named as a whole parallelism (``TP4``, ``DEP8``, ``TP8/EP8``), not by parts of one
    ("node-local TP8 ... cross-node DP2/EP16" is one topology told in parts)."""
    return bool(_WHOLE_NAME.fullmatch(arm.label))


def _rival_parallelisms(a: Parallel, b: Parallel) -> bool:
    """Two parallelisms that differ where both say something (TP4 and DEP8; not TP4 and TEP4)."""
    a, b = a.finished(), b.finished()
    return any(x is not None and y is not None and x != y
               for x, y in ((a.tp, b.tp), (a.ep, b.ep), (a.dp_attn, b.dp_attn), (a.dcp, b.dcp)))


def _role_only(arm: Arm) -> bool:
    """The arm names a server role and nothing else ("decode workers", "the prefill side")."""
    return bool(arm.role) and replace(arm, role="", label="").empty


def merge_where_compatible(current: list[Arm], new: tuple[Arm, ...], *, keep: bool) -> list[Arm]:
    """Each current arm with each new one where they agree; ``keep``: an arm no new one fits stays as it is."""
    out: list[Arm] = []
    for a in current:
        fits = [m for b in new if (m := a.merged(b)) is not None]
        if fits:
            out.extend(m for m in fits if m not in out)
        elif keep and a not in out:
            out.append(a)
    if not out:
        return list(new)
    return out
