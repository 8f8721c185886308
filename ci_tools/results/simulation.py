"""A/A and injected-drop simulation of the verdicts, the calibration of their defaults.

Noise model (stated in the README with the rates it gives): each point has
its own relative noise, lognormal around 1 % (sigma 0.4 in log space, at most
3 %), and each measurement's error is Student-t with 5 degrees of freedom
scaled to that standard deviation, so outliers come more often than a
normal distribution would give them.  Each simulated sweep judges every
point's one new measurement against its ``history`` earlier ones; one
random point of the sweep drops by ``drop``.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

from .verdict import FLAGGED, Settings, judge_metric

MEDIAN_CV, CV_SPREAD, MAX_CV, TAIL_DOF = 0.01, 0.4, 0.03, 5


@dataclass(frozen=True)
class Outcome:
    sweeps: int
    unchanged: int
    false_alarms: int
    detected: int

    @property
    def false_alarm_rate(self) -> float:
        return self.false_alarms / self.unchanged if self.unchanged else 0.0

    @property
    def detection_rate(self) -> float:
        return self.detected / self.sweeps if self.sweeps else 0.0


def _measurement(rng: random.Random, cv: float) -> float:
    t = rng.gauss(0, 1) / math.sqrt(rng.gammavariate(TAIL_DOF / 2, 2 / TAIL_DOF))
    return 1000.0 * (1 + cv * math.sqrt((TAIL_DOF - 2) / TAIL_DOF) * t)


def simulate(rng: random.Random, *, sweeps: int, points: int, drop: float, settings: Settings) -> Outcome:
    false_alarms = detected = 0
    for _ in range(sweeps):
        target = rng.randrange(points)
        for p in range(points):
            cv = min(MAX_CV, MEDIAN_CV * rng.lognormvariate(0, CV_SPREAD))
            history = [_measurement(rng, cv) for _ in range(settings.history)]
            value = _measurement(rng, cv) * (1 - drop if p == target else 1)
            flagged = judge_metric("throughput_per_gpu", history, [value], settings, {}).label in FLAGGED
            if p == target:
                detected += flagged
            else:
                false_alarms += flagged
    return Outcome(sweeps, sweeps * (points - 1), false_alarms, detected)
