"""A history replay runs with rarer garbage collections, and gives the process its own thresholds back.

The replay's speed figure (``bench/bench_history.py``) depends on it; a caller (a test, a bench, another command
in the same process) must not be left with the replay's thresholds, even when the replay fails.
"""

from __future__ import annotations

import gc
from typing import Any

import pytest

from ci_tools.claims.verdict import history
from ci_tools.config import ProjectConfig


def test_the_replay_runs_with_rare_collections_and_restores_the_thresholds(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[int, ...]] = []

    def replay(*args: Any, **kwargs: Any) -> tuple[list[Any], int]:
        seen.append(gc.get_threshold())
        return [], 0

    monkeypatch.setattr(history, "_replay", replay)
    before = gc.get_threshold()
    assert before != history.REPLAY_GC_THRESHOLDS
    assert history.replay_pairs(ProjectConfig(root="."), [("a" * 40, None)]) == []
    assert seen == [history.REPLAY_GC_THRESHOLDS]
    assert gc.get_threshold() == before


def test_a_failing_replay_restores_the_thresholds(monkeypatch: pytest.MonkeyPatch) -> None:
    def replay(*args: Any, **kwargs: Any) -> tuple[list[Any], int]:
        raise RuntimeError("a commit the replay cannot read")

    monkeypatch.setattr(history, "_replay", replay)
    before = gc.get_threshold()
    with pytest.raises(RuntimeError):
        history.replay_pairs(ProjectConfig(root="."), [("a" * 40, None)])
    assert gc.get_threshold() == before
