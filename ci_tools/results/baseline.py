"""Where the measurements come from: record files under directories, or the results store; and the baseline's age.

A baseline always says where it came from and how old it is: the store's
branch and commit and the sweep it holds last, or the workflow run whose
artifacts were read when the store had nothing, or the merge-base's
measurements taken in the same sweep (a same-node baseline).
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Mapping, Sequence

from .point import Observation, PointKey, observations
from .record import RECORD_FILE, RecordError, load

Points = dict[PointKey, list[Observation]]


@dataclass(frozen=True)
class Baseline:
    points: Points
    source: str  # one line, for people: where the numbers come from
    sha: str = ""
    date: str = ""  # ISO 8601 of the newest measurement
    url: str = ""
    problems: tuple[str, ...] = field(default=())

    def age(self, now: _dt.datetime | None = None) -> _dt.timedelta | None:
        if not self.date:
            return None
        when = parse_date(self.date)
        return None if when is None else (now or _dt.datetime.now(_dt.timezone.utc)) - when


def parse_date(text: str) -> _dt.datetime | None:
    try:
        when = _dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return when if when.tzinfo else when.replace(tzinfo=_dt.timezone.utc)


def age_text(age: _dt.timedelta | None) -> str:
    if age is None:
        return "age unknown"
    hours = age.total_seconds() / 3600
    if hours < 1:
        return f"{max(int(age.total_seconds() // 60), 0)} min old"
    if hours < 48:
        return f"{hours:.0f} h old"
    return f"{hours / 24:.0f} days old"


def collect(directories: Iterable[Path], *, sweep: str = "") -> tuple[Points, list[str]]:
    """Every record.json under the directories as observations; the list names the records that could not be read."""
    points: Points = {}
    problems: list[str] = []
    seen: set[Path] = set()
    for directory in directories:
        for path in sorted(Path(directory).rglob(RECORD_FILE)):
            if path.resolve() in seen:
                continue
            seen.add(path.resolve())
            try:
                record = load(path)
            except RecordError as exc:
                problems.extend(str(exc).splitlines())
                continue
            for o in observations(record, sweep=sweep or record.sha[:12]):
                points.setdefault(o.key, []).append(o)
    for obs in points.values():
        obs.sort(key=lambda o: o.date)
    return points, problems


def newest(points: Mapping[PointKey, Sequence[Observation]]) -> Observation | None:
    every = [o for obs in points.values() for o in obs]
    return max(every, key=lambda o: o.date) if every else None


def from_points(points: Points, source: str, *, url: str = "", problems: Sequence[str] = ()) -> Baseline:
    last = newest(points)
    return Baseline(points, source, sha=last.sha if last else "", date=last.date if last else "", url=url,
                    problems=tuple(problems))


def same_node(points: Points, base_sha: str) -> tuple[Points, Baseline]:
    """A sweep that ran the merge-base ``base_sha``'s recipes beside the pull request's, split in two: the pull
    request's measurements, and the merge-base's as the baseline (same runners, same day, same image build)."""
    pr: Points = {}
    base: Points = {}
    for key, obs in points.items():
        for o in obs:
            (base if o.sha == base_sha else pr).setdefault(key, []).append(o)
    # What "same node" holds for: the points whose two sides share a node (a runner label may span several).
    shared = sum(1 for k, obs in pr.items() if {o.node for o in obs} & {o.node for o in base.get(k, ())})
    source = (f"same-node baseline: the merge-base's recipes, run in this sweep interleaved with the pull "
              f"request's; {shared:,} of {len(pr):,} points measured on the same node on both sides")
    last = newest(base)
    return pr, Baseline(base, source, sha=base_sha, date=last.date if last else "")
