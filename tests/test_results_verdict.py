"""Verdicts: Welch's t-test against scipy, the noise gate, the A/A and injected-drop simulations, Pareto frontiers."""

from __future__ import annotations

import random

import pytest

from ci_tools.results import pareto, simulation, stats, verdict
from ci_tools.results.pareto import FrontierPoint
from ci_tools.results.point import Observation, PointKey

# scipy.stats.ttest_ind(a, b, equal_var=False), scipy 1.17.1: (statistic, pvalue)
SCIPY_WELCH = [
    (([1.0, 2.0, 3.0, 4.0], [2.5, 3.5, 4.5, 5.5, 6.5]), (-2.088931871468374, 0.07519774959850842)),
    (([100.2, 99.8, 100.5], [95.1, 94.7]), (18.492501256988778, 0.0006502033875207702)),
    (([10, 10.1, 9.9, 10.05, 9.95, 10.02], [10.3, 10.4]), (-5.994460344124106, 0.03626230079671791)),
    (([1, 1.0001], [5, 9, 13]), (-3.464079963690766, 0.07418072679130783)),
]


@pytest.mark.parametrize(("samples", "expected"), SCIPY_WELCH)
def test_welch_matches_scipy(samples: tuple[list[float], list[float]], expected: tuple[float, float]) -> None:
    t, _, p = stats.welch(*samples)
    assert t == pytest.approx(expected[0], rel=1e-12)
    assert p == pytest.approx(expected[1], rel=1e-9)


def test_incomplete_beta_matches_scipy() -> None:
    assert stats.betainc(2.5, 0.5, 0.3) == pytest.approx(0.018927124071945658, rel=1e-12)  # scipy.stats.beta.cdf


def test_robust_noise_ignores_one_outlier() -> None:
    assert stats.robust_cv([100, 101, 99, 100.5, 99.5]) == pytest.approx(1.4826 * 0.5 / 100)
    assert stats.robust_cv([100, 101, 99, 100.5, 60]) == pytest.approx(1.4826 * 1.0 / 100)
    assert stats.robust_cv([100, 101]) is None


KEY = PointKey("dsr1-fp4-mi355x-sglang", "fixed-seq-len", 8192, 1024, 64, "tp4", "none", False)


def _obs(values: list[float], *, valid: bool = True, day0: int = 1) -> list[Observation]:
    return [Observation(KEY, "a" * 40, f"2026-08-{day0 + i:02d}T00:00:00+00:00", "r", "n", "img", valid,
                        {"throughput_per_gpu": v, "interactivity": 50.0}) for i, v in enumerate(values)]


def test_labels() -> None:
    s = verdict.Settings()
    history = _obs([1000, 1010, 990, 1005, 995, 1002, 998, 1001, 999, 1003])
    judge = lambda pr: verdict.judge_point(KEY, history, pr, s, {})  # noqa: E731
    assert judge(_obs([1004])).label == verdict.NO_CHANGE
    one = judge(_obs([880]))
    assert one.label == verdict.SUSPICIOUS and one.flagged[0].worse
    assert judge(_obs([880, 885])).label == verdict.REGRESSION
    assert judge(_obs([1150, 1140])).label == verdict.IMPROVEMENT
    assert judge(_obs([880], valid=False)).label == verdict.INVALID
    assert verdict.judge_point(KEY, [], _obs([880]), s, {}).label == verdict.INSUFFICIENT
    assert verdict.judge_point(KEY, _obs([1000], valid=False), _obs([880]), s, {}).label == verdict.INSUFFICIENT
    # Beyond the band but the two PR values disagree with each other: Welch's test does not confirm it.
    assert judge(_obs([700, 1250])).label == verdict.NO_CHANGE


def test_noise_sets_the_band() -> None:
    s = verdict.Settings()
    quiet = verdict.judge_metric("throughput_per_gpu", [1000, 1001, 999, 1000.5, 999.5], [940], s, {})
    noisy = verdict.judge_metric("throughput_per_gpu", [1000, 1040, 960, 1030, 970], [940], s, {})
    assert quiet.threshold == s.floor and quiet.label == verdict.SUSPICIOUS  # -6 % beyond the 5 % floor
    assert noisy.threshold > 0.1 and noisy.label == verdict.NO_CHANGE
    short = verdict.judge_metric("throughput_per_gpu", [1000, 1001], [950], s, {"throughput_per_gpu": 0.03})
    assert (short.noise, short.noise_source) == (0.03, "pooled")
    default = verdict.judge_metric("throughput_per_gpu", [1000], [950], s, {})
    assert (default.noise, default.noise_source) == (s.default_noise, "default")


def test_aa_false_alarms_and_detection_within_the_calibrated_rates() -> None:
    # Bounded for CI (60 sweeps x 100 points); bench/bench_results_aa.py runs the 1,000-sweep calibration
    # with the same noise model and these settings.
    outcome = simulation.simulate(random.Random(20), sweeps=60, points=100, drop=0.10, settings=verdict.Settings())
    assert outcome.false_alarm_rate <= 0.01
    assert outcome.detection_rate >= 0.95
    assert outcome.false_alarms > 0  # the noise model does produce outliers: the rate is measured, not assumed
    # The same simulation without the noise band (floor and k at zero) flags most unchanged points.
    loose = simulation.simulate(random.Random(20), sweeps=5, points=100, drop=0.10,
                                settings=verdict.Settings(floor=0.0, k=0.0))
    assert loose.false_alarm_rate > 0.5


def _front(*xy: tuple[float, float]) -> list[FrontierPoint]:
    return [FrontierPoint(x, y, c) for c, (x, y) in enumerate(xy, 1)]


def test_frontier_keeps_only_undominated_points() -> None:
    pts = _front((10, 100), (20, 90), (15, 80), (30, 50), (5, 99))
    assert [(p.x, p.y) for p in pareto.frontier(pts)] == [(10, 100), (20, 90), (30, 50)]


def test_frontier_comparison() -> None:
    base = _front((10, 1000), (20, 800), (40, 400), (60, 100))
    slid = _front((10, 1000), (25, 700), (40, 400), (60, 100))  # another point on the same curve
    group = ("c", "fixed-seq-len", 8192, 1024)
    assert pareto.compare(group, base, slid).label == pareto.UNCHANGED
    # 10 % less of both: every point 10 % short of the base frontier on both axes.
    both = [FrontierPoint(p.x * 0.9, p.y * 0.9, p.concurrency) for p in base]
    shrunk = pareto.compare(group, base, both)
    assert shrunk.label == pareto.WORSE
    assert shrunk.worst_change == pytest.approx(-0.10) and shrunk.best_change == pytest.approx(-0.10)
    # 10 % less throughput alone: partly a slide along the curve, so less than 10 % on both axes.
    lower = pareto.compare(group, base, [FrontierPoint(p.x, p.y * 0.9, p.concurrency) for p in base])
    assert lower.label == pareto.WORSE and -0.10 < lower.worst_change < -pareto.FLOOR  # type: ignore[operator]
    assert lower.area_change == pytest.approx(-0.10)
    mixed = _front((10, 1200), (20, 800), (40, 300), (60, 100))
    assert pareto.compare(group, base, mixed).label == pareto.TRADE_OFF
    assert pareto.compare(group, base, _front((100, 10))).label == pareto.NO_OVERLAP


def test_shortfall_is_symmetric_in_log_space() -> None:
    front = [(0.0, 3.0), (1.0, 2.0), (2.0, 0.0)]
    import math
    assert pareto.shortfall(FrontierPoint(math.exp(0.5), math.exp(2.5), 1), front) == pytest.approx(0.0)
    t = pareto.shortfall(FrontierPoint(math.exp(0.5 - 0.1), math.exp(2.5 - 0.1), 1), front)
    assert t == pytest.approx(0.1)
    assert pareto.shortfall(FrontierPoint(math.exp(5), math.exp(-5), 1), front) is None  # its diagonal misses
