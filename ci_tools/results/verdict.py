"""Each point of a sweep judged against its baseline, beyond the noise or not.

Per point, in order:

1. validity: a PR side with no valid measurement is ``invalid``; a base side
   with none is ``insufficient data``;
2. per judged metric, the change of the PR's mean against the median of
   the base's last ``history`` valid measurements, relative to that median;
3. the point's noise: the scaled MAD over the median of that history
   (``stats.robust_cv``) when it has ``min_history`` values, else the
   median noise of the metric over the points that have one, else
   ``default_noise``;
4. flagged only when the change exceeds ``max(floor, k x noise)`` and,
   where both sides have two or more values, Welch's t-test agrees
   (p < ``alpha``);
5. a flagged change measured once on the PR side is ``suspicious`` (rerun
   to confirm); measured twice or more it is a ``regression`` or an
   ``improvement`` by the metric's direction.

The defaults come from the A/A simulation in ``bench/bench_results_aa.py``
(README, Results).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Mapping, Sequence

from . import stats
from .metrics import BY_NAME
from .point import Observation, PointKey

REGRESSION, IMPROVEMENT, SUSPICIOUS = "regression", "improvement", "suspicious"
NO_CHANGE, INSUFFICIENT, INVALID = "no change", "insufficient data", "invalid"
LABELS = (REGRESSION, SUSPICIOUS, IMPROVEMENT, INVALID, INSUFFICIENT, NO_CHANGE)  # worst first
FLAGGED = (REGRESSION, SUSPICIOUS, IMPROVEMENT)


@dataclass(frozen=True)
class Settings:
    metrics: tuple[str, ...] = ("throughput_per_gpu", "interactivity")
    floor: float = 0.05
    k: float = 4.0
    history: int = 10
    min_history: int = 3
    default_noise: float = 0.02
    alpha: float = 0.05


@dataclass(frozen=True)
class MetricVerdict:
    metric: str
    label: str
    base: float
    pr: float
    change: float  # relative: (pr - base) / base
    noise: float  # relative
    noise_source: str  # point | pooled | default
    threshold: float
    base_n: int
    pr_n: int
    p_value: float | None = None

    @property
    def worse(self) -> bool:
        better = BY_NAME[self.metric].higher_is_better
        return (self.change < 0) == bool(better)


@dataclass(frozen=True)
class PointVerdict:
    key: PointKey
    label: str
    metrics: tuple[MetricVerdict, ...] = ()
    reasons: tuple[str, ...] = ()
    base: tuple[Observation, ...] = field(default=(), compare=False)
    pr: tuple[Observation, ...] = field(default=(), compare=False)

    @property
    def flagged(self) -> tuple[MetricVerdict, ...]:
        return tuple(m for m in self.metrics if m.label in FLAGGED)


def _valid(obs: Iterable[Observation], metric: str) -> list[float]:
    return [o.metrics[metric] for o in obs if o.valid and metric in o.metrics]


def _history(base: Sequence[Observation], metric: str, n: int) -> list[float]:
    ordered = sorted((o for o in base if o.valid and metric in o.metrics), key=lambda o: o.date)
    return [o.metrics[metric] for o in ordered[-n:]]


def pooled_noise(base: Mapping[PointKey, Sequence[Observation]], settings: Settings) -> dict[str, float]:
    """Per metric, the median relative noise of the points whose history is long enough."""
    out: dict[str, float] = {}
    for metric in settings.metrics:
        noises = [cv for obs in base.values()
                  if (cv := stats.robust_cv(_history(obs, metric, settings.history))) is not None
                  and len(_history(obs, metric, settings.history)) >= settings.min_history]
        if noises:
            out[metric] = stats.median(noises)
    return out


def judge_metric(metric: str, history: Sequence[float], pr: Sequence[float], settings: Settings,
                 pooled: Mapping[str, float]) -> MetricVerdict:
    base = stats.median(history)
    value = sum(pr) / len(pr)
    change = (value - base) / base if base else 0.0
    cv = stats.robust_cv(history) if len(history) >= settings.min_history else None
    noise, source = ((cv, "point") if cv is not None else
                     (pooled[metric], "pooled") if metric in pooled else (settings.default_noise, "default"))
    threshold = max(settings.floor, settings.k * noise)
    p_value = stats.welch(pr, history)[2] if len(history) >= 2 and len(pr) >= 2 else None
    label = NO_CHANGE
    if abs(change) > threshold and (p_value is None or p_value < settings.alpha):
        better = BY_NAME[metric].higher_is_better
        label = SUSPICIOUS if len(pr) < 2 else (IMPROVEMENT if (change > 0) == bool(better) else REGRESSION)
    return MetricVerdict(metric, label, base, value, change, noise, source, threshold, len(history), len(pr), p_value)


def judge_point(key: PointKey, base: Sequence[Observation], pr: Sequence[Observation], settings: Settings,
                pooled: Mapping[str, float]) -> PointVerdict:
    if not any(o.valid for o in pr):
        reasons = tuple(dict.fromkeys(r for o in pr for r in o.reasons)) or ("no measurement",)
        return PointVerdict(key, INVALID, reasons=reasons, base=tuple(base), pr=tuple(pr))
    if not any(o.valid for o in base):
        why = "no valid baseline measurement" if base else "no baseline for this point"
        return PointVerdict(key, INSUFFICIENT, reasons=(why,), base=tuple(base), pr=tuple(pr))
    verdicts = []
    for metric in settings.metrics:
        history, values = _history(base, metric, settings.history), _valid(pr, metric)
        if history and values and metric in BY_NAME and BY_NAME[metric].higher_is_better is not None:
            verdicts.append(judge_metric(metric, history, values, settings, pooled))
    if not verdicts:
        return PointVerdict(key, INSUFFICIENT, reasons=("no judged metric on both sides",), base=tuple(base), pr=tuple(pr))
    label = min((v.label for v in verdicts), key=LABELS.index)
    return PointVerdict(key, label, tuple(verdicts), base=tuple(base), pr=tuple(pr))


def judge(base: Mapping[PointKey, Sequence[Observation]], pr: Mapping[PointKey, Sequence[Observation]],
          settings: Settings = Settings()) -> list[PointVerdict]:
    """Every PR point judged (points only the base has are not the PR's: left out)."""
    pooled = pooled_noise(base, settings)
    return [judge_point(key, base.get(key, ()), pr[key], settings, pooled) for key in sorted(pr)]


def counts(verdicts: Iterable[PointVerdict]) -> dict[str, int]:
    out = {label: 0 for label in LABELS}
    for v in verdicts:
        out[v.label] += 1
    return out
