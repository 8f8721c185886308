"""The little statistics the verdicts need, in plain Python: robust spread and Welch's t-test.

Pure Python keeps the PR job's install small (no numpy/scipy); the
t-distribution's tail comes from the regularized incomplete beta function
(continued fraction, Numerical Recipes' ``betacf``), checked against
scipy's values in ``tests/test_results_stats.py``.
"""

from __future__ import annotations

import math
import statistics
from typing import Sequence

MAD_TO_SIGMA = 1.4826  # the MAD of a normal distribution times this is its standard deviation


def median(values: Sequence[float]) -> float:
    return float(statistics.median(values))


def robust_cv(values: Sequence[float]) -> float | None:
    """Scaled MAD over the median: the relative noise of a series, insensitive to one outlier; None below 3 values."""
    if len(values) < 3:
        return None
    mid = median(values)
    if mid == 0:
        return None
    mad = median([abs(v - mid) for v in values])
    return MAD_TO_SIGMA * mad / abs(mid)


def _betacf(a: float, b: float, x: float) -> float:
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 300):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 3e-16:
            break
    return h


def betainc(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def t_two_sided_p(t: float, df: float) -> float:
    """P(|T| >= |t|) for Student's t with ``df`` degrees of freedom."""
    if math.isnan(t):
        return 1.0
    if math.isinf(t):
        return 0.0
    return betainc(df / 2.0, 0.5, df / (df + t * t))


def welch(a: Sequence[float], b: Sequence[float]) -> tuple[float, float, float]:
    """Welch's unequal-variance t-test: (t, degrees of freedom, two-sided p). Needs two or more values a side."""
    if len(a) < 2 or len(b) < 2:
        raise ValueError("Welch's t-test needs at least two values on each side")
    ma, mb = statistics.fmean(a), statistics.fmean(b)
    va, vb = statistics.variance(a), statistics.variance(b)
    sa, sb = va / len(a), vb / len(b)
    if sa + sb == 0:
        return (0.0, math.inf, 1.0) if ma == mb else (math.copysign(math.inf, ma - mb), math.inf, 0.0)
    t = (ma - mb) / math.sqrt(sa + sb)
    df = (sa + sb) ** 2 / ((sa * sa / (len(a) - 1) if sa else 0.0) + (sb * sb / (len(b) - 1) if sb else 0.0))
    return t, df, t_two_sided_p(t, df)
