"""bench/replay_check.py pairs the two builds' findings of each commit: a grouped coverage finding whose number of
configs changed is a difference, and the configs all coverage findings count are summed per build.  The findings
are in the shape the bench saves (``--save``), with messages as ``check`` words them."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
import replay_check  # noqa: E402

LIB = "benchmarks/multi_node/amd_utils/bench.sh"


def _grouped(n: int) -> replay_check.Found:
    return ("coverage-uncovered-key", "error", LIB, 79, f"{n} configs are affected by this change (file their multinode "
            f"chain reads changed at {LIB}:79) but no entry appended to perf-changelog.yaml covers them: a, b, c", "new")


def _one(key: str, line: int) -> replay_check.Found:
    return ("coverage-uncovered-key", "error", LIB, line, f"config `{key}` is affected by this change (file their "
            f"multinode chain reads changed at {LIB}:{line}) but no entry appended to perf-changelog.yaml covers it", "new")


def test_a_grouped_finding_that_counts_other_configs_differs_and_configs_are_summed(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(replay_check, "git", lambda ix, *args: "a commit's subject")
    before = replay_check.Replayed(findings={"c1": [_grouped(16)], "c2": [_one("k", 10)]})
    after = replay_check.Replayed(findings={"c1": [_grouped(3)], "c2": [_one("k", 12)]})
    assert replay_check.configs_counted(before) == 17 and replay_check.configs_counted(after) == 4
    replay_check.print_differences(before, after, tmp_path, "coverage-uncovered-key", 5)
    out = capsys.readouterr().out
    # c1: the same cause at the same line, now 3 configs: one finding gone, one come; c2: the same config, its
    # cause's line moved: no difference
    assert "coverage-uncovered-key: 1 commit(s) differ" in out and "c1 (a commit's subject): -1 +1" in out
    assert "- benchmarks/multi_node/amd_utils/bench.sh:79: 16 configs" in out and "+ " + LIB + ":79: 3 configs" in out
    assert "c2" not in out
