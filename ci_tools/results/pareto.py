"""Per configuration and sequence length: the Pareto frontier of interactivity vs throughput per GPU.

A point that slides along the frontier (more throughput for less
interactivity) is a trade-off, not a regression; what matters is whether
the frontier itself moved.  Both frontiers are compared along their common
interactivity range: throughput per GPU interpolated linearly between
frontier points at ``SAMPLES`` evenly spaced interactivities (the worst and
best relative change), and the area under each frontier over that range.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

from .point import Observation, PointKey

X, Y = "interactivity", "throughput_per_gpu"
SAMPLES = 33
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


def compare(group: tuple[str, str, int, int], base_pts: Sequence[FrontierPoint], pr_pts: Sequence[FrontierPoint],
            floor: float = 0.04) -> FrontierComparison:
    base, pr = frontier(base_pts), frontier(pr_pts)
    args = (group, base, pr, tuple(base_pts), tuple(pr_pts))
    if not base or not pr:
        return FrontierComparison(*args, None, None, None, None, NO_OVERLAP)
    lo, hi = max(base[0].x, pr[0].x), min(base[-1].x, pr[-1].x)
    if lo > hi:
        return FrontierComparison(*args, None, None, None, None, NO_OVERLAP)
    xs = [lo] if hi == lo else [lo + (hi - lo) * i / (SAMPLES - 1) for i in range(SAMPLES)]
    changes = [(interpolate(pr, x) - interpolate(base, x)) / interpolate(base, x) for x in xs if interpolate(base, x)]
    if hi > lo:
        a_base, a_pr = area(base, lo, hi), area(pr, lo, hi)
        area_change = (a_pr - a_base) / a_base if a_base else None
    else:
        area_change = changes[0] if changes else None
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
                *, latest_base: int = 1, floor: float = 0.04) -> list[FrontierComparison]:
    """One comparison per group the PR measured; the base side uses each point's latest ``latest_base`` values."""
    groups: dict[tuple[str, str, int, int], tuple[list[Observation], list[Observation]]] = {}
    for key, obs in pr.items():
        base_obs, pr_obs = groups.setdefault(key.group, ([], []))
        pr_obs.extend(obs)
        base_obs.extend(sorted((o for o in base.get(key, ()) if o.valid), key=lambda o: o.date)[-latest_base:])
    return [compare(g, _points(b), _points(p), floor) for g, (b, p) in sorted(groups.items())]
