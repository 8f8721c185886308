"""Per configuration and sequence length: the Pareto frontier of interactivity vs throughput per GPU.

A point that slides along the frontier (more throughput for less
interactivity) is a trade-off, not a regression; what matters is whether
the frontier itself moved.  Along the frontier, each frontier point of one
side is measured against the other side's frontier (a polyline in log-log
space, so both axes count alike): the factor by which it would have to
change on both axes at once to lie on it, a multiplicative epsilon
indicator.  A PR point 6 % short of the base frontier on both axes is -6 %;
a base point under the PR frontier is the PR's gain.  The worst and best of
these over both sides give the label.  Where the frontier is steep, a change
of throughput alone is mostly a slide along it: the per-point verdicts
judge throughput itself.  The area under each frontier over the common
interactivity range (linear axes) is reported beside it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

from .point import Observation, PointKey

X, Y = "interactivity", "throughput_per_gpu"
# Beyond this on the epsilon scale a frontier moved: with 1 % noise per point and axis, the largest of a
# frontier's 10-20 distances passes 5 % in about 5 % of unchanged configurations, 6 % in about 1 %.
FLOOR = 0.06
WORSE, BETTER, TRADE_OFF, UNCHANGED, NO_OVERLAP = "worse", "better", "trade-off", "unchanged", "no overlap"


@dataclass(frozen=True)
class FrontierPoint:
    x: float  # interactivity, tok/s/user
    y: float  # throughput per GPU, tok/s/GPU
    concurrency: int
    parallelism: str = ""


@dataclass(frozen=True)
class FrontierComparison:
    group: tuple[str, str, int, int]  # config key, scenario, ISL, OSL
    base: tuple[FrontierPoint, ...]  # frontier only, by interactivity
    pr: tuple[FrontierPoint, ...]
    base_all: tuple[FrontierPoint, ...]  # every valid point
    pr_all: tuple[FrontierPoint, ...]
    overlap: tuple[float, float] | None
    worst_change: float | None  # relative throughput change along the common range
    best_change: float | None
    area_change: float | None
    label: str


def frontier(points: Iterable[FrontierPoint]) -> tuple[FrontierPoint, ...]:
    """The points no other point beats on both axes, by increasing interactivity."""
    kept: list[FrontierPoint] = []
    best_y = float("-inf")
    for p in sorted(points, key=lambda p: (-p.x, -p.y)):
        if p.y > best_y:
            kept.append(p)
            best_y = p.y
    return tuple(reversed(kept))


def interpolate(front: Sequence[FrontierPoint], x: float) -> float:
    """Throughput on the frontier's polyline at interactivity ``x`` (inside its range)."""
    for a, b in zip(front, front[1:]):
        if a.x <= x <= b.x:
            return a.y if b.x == a.x else a.y + (x - a.x) / (b.x - a.x) * (b.y - a.y)
    return front[0].y if x <= front[0].x else front[-1].y


def area(front: Sequence[FrontierPoint], lo: float, hi: float) -> float:
    xs = [lo] + [p.x for p in front if lo < p.x < hi] + [hi]
    return sum((b - a) * (interpolate(front, a) + interpolate(front, b)) / 2 for a, b in zip(xs, xs[1:]))


def _log(front: Sequence[FrontierPoint]) -> list[tuple[float, float]]:
    return [(math.log(p.x), math.log(p.y)) for p in front if p.x > 0 and p.y > 0]


def _height(front: Sequence[tuple[float, float]], u: float) -> float:
    for (u0, v0), (u1, v1) in zip(front, front[1:]):
        if u0 <= u <= u1:
            return v0 if u1 == u0 else v0 + (u - u0) / (u1 - u0) * (v1 - v0)
    return front[0][1] if u <= front[0][0] else front[-1][1]


def shortfall(point: FrontierPoint, front: Sequence[tuple[float, float]]) -> float | None:
    """The log factor t that puts ``point`` on ``front`` when both its axes are multiplied by e^t.

    Positive: the point is under the frontier (worse); negative: above it.  None when the diagonal
    through the point meets the frontier outside its interactivity range (nothing to compare with).
    """
    if not front or point.x <= 0 or point.y <= 0:
        return None
    a, b = math.log(point.x), math.log(point.y)
    lo, hi = front[0][0] - a, front[-1][0] - a

    def gap(t: float) -> float:  # decreasing in t: the frontier falls (or stays) as the diagonal rises
        return _height(front, a + t) - (b + t)

    if gap(lo) < 0 or gap(hi) > 0:
        return None
    for _ in range(80):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if gap(mid) > 0 else (lo, mid)
    return (lo + hi) / 2


def compare(group: tuple[str, str, int, int], base_pts: Sequence[FrontierPoint], pr_pts: Sequence[FrontierPoint],
            floor: float = FLOOR) -> FrontierComparison:
    base, pr = frontier(base_pts), frontier(pr_pts)
    args = (group, base, pr, tuple(base_pts), tuple(pr_pts))
    if not base or not pr:
        return FrontierComparison(*args, None, None, None, None, NO_OVERLAP)
    lo, hi = max(base[0].x, pr[0].x), min(base[-1].x, pr[-1].x)
    if lo > hi:
        return FrontierComparison(*args, None, None, None, None, NO_OVERLAP)
    base_log, pr_log = _log(base), _log(pr)
    changes = [math.exp(-t) - 1 for p in pr if (t := shortfall(p, base_log)) is not None]
    changes += [math.exp(t) - 1 for p in base if (t := shortfall(p, pr_log)) is not None]
    area_change = None
    if hi > lo:
        a_base, a_pr = area(base, lo, hi), area(pr, lo, hi)
        area_change = (a_pr - a_base) / a_base if a_base else None
    worst, best = (min(changes), max(changes)) if changes else (None, None)
    if worst is None or best is None:
        label = NO_OVERLAP
    elif worst < -floor and best > floor:
        label = TRADE_OFF
    elif worst < -floor:
        label = WORSE
    elif best > floor:
        label = BETTER
    else:
        label = UNCHANGED
    return FrontierComparison(*args, (lo, hi), worst, best, area_change, label)


def _points(observations: Iterable[Observation]) -> list[FrontierPoint]:
    """One point per point key (parallelism x concurrency): the mean of its valid measurements."""
    by_key: dict[PointKey, list[Observation]] = {}
    for o in observations:
        if o.valid and X in o.metrics and Y in o.metrics:
            by_key.setdefault(o.key, []).append(o)
    return [FrontierPoint(sum(o.metrics[X] for o in obs) / len(obs), sum(o.metrics[Y] for o in obs) / len(obs),
                          key.concurrency, key.parallelism) for key, obs in sorted(by_key.items())]


def compare_all(base: Mapping[PointKey, Sequence[Observation]], pr: Mapping[PointKey, Sequence[Observation]],
                *, latest_base: int = 1, floor: float = FLOOR) -> list[FrontierComparison]:
    """One comparison per group the PR measured; the base side uses each point's latest ``latest_base`` values."""
    groups: dict[tuple[str, str, int, int], tuple[list[Observation], list[Observation]]] = {}
    for key, obs in pr.items():
        base_obs, pr_obs = groups.setdefault(key.group, ([], []))
        pr_obs.extend(obs)
        base_obs.extend(sorted((o for o in base.get(key, ()) if o.valid), key=lambda o: o.date)[-latest_base:])
    return [compare(g, _points(b), _points(p), floor) for g, (b, p) in sorted(groups.items())]
