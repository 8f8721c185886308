"""The seeded fuzzer (tests/fuzzing.py) over the real tree, a fixed seed and a few cases of each kind.

Each case is a mutation of the real InferenceX tree (its master files cut to their
first configs, so a run takes a fraction of a second), run by the commands that
read what it changed, each as its own process under CPU and memory limits. The
longer run is ``bench/bench_fuzz.py``; its figures are in the README.
"""

from __future__ import annotations

from pathlib import Path

from fuzzing import MUTATIONS, clone, fuzz
from test_unreadable_inputs import trimmed_origin  # noqa: F401 - the session's cut tree

SEED = 20260822
CASES = len(MUTATIONS)  # one of each kind


def test_every_command_keeps_the_promise_on_mutated_real_trees(trimmed_origin: Path, tmp_path: Path) -> None:
    """One case of each kind, each run by one of the commands that must report it (drawn by the seed)."""
    repo = clone(trimmed_origin, tmp_path / "ix")
    report = fuzz(repo, SEED, CASES, commands_per_case=1)
    assert report.cases == CASES and report.runs == CASES
    assert [f"{b.case} / {b.command}: {b.promise}: {b.detail}" for b in report.broken] == []
