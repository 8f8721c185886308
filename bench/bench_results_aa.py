"""The verdicts' calibration: A/A false alarms and the detection of a 10 % throughput drop over 1,000 sweeps.

Each simulated sweep judges every point's new measurement against its
history with the defaults of ``ci_tools.results.verdict.Settings`` (noise
model: ``ci_tools.results.simulation``); one random point per sweep drops by
``--drop``.  Beside the defaults, the same sweeps with the noise band off
(``k`` 0, floor 0) and with a plain 5 % threshold are the baselines the
defaults are compared against.  Not a timing benchmark: it prints rates.

    .venv/bin/python bench/bench_results_aa.py [--sweeps 1000] [--points 200] [--seed 1]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ci_tools.results.simulation import simulate  # noqa: E402
from ci_tools.results.verdict import Settings  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sweeps", type=int, default=1000)
    parser.add_argument("--points", type=int, default=200)
    parser.add_argument("--drop", type=float, default=0.10)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rows = [("defaults", Settings()), ("plain 5 % threshold (k 0)", Settings(k=0.0, floor=0.05)),
            ("no noise band (k 0, floor 0)", Settings(k=0.0, floor=0.0))]
    d = Settings()
    print(f"{args.sweeps} sweeps x {args.points} points, one point per sweep -{args.drop:.0%}; "
          f"defaults: floor {d.floor:.0%}, k {d.k}, history {d.history}")
    print(f"{'settings':<32} {'false alarms':>22} {'detected':>16} {'CPU s':>7}")
    for name, settings in rows:
        start = time.process_time()
        o = simulate(random.Random(args.seed), sweeps=args.sweeps, points=args.points, drop=args.drop,
                     settings=settings)
        cpu = time.process_time() - start
        print(f"{name:<32} {o.false_alarms:>7,}/{o.unchanged:,} {o.false_alarm_rate:6.2%} "
              f"{o.detected:>5}/{o.sweeps} {o.detection_rate:6.1%} {cpu:7.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
