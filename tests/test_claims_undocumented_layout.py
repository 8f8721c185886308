"""A change of points' parallelism is documented by an entry that speaks of the search space or the layouts as a
whole (claims/verdict/undocumented.py): InferenceX pull request 1990 reworked minimaxm3-fp4-b300-vllm's rows with an
entry saying "Update search space to cover more configs" and was told "tp changed from 8 to 2 for 1 job ...; the
changelog entry does not mention it", with the same for ep and dp-attn.

On a clone of the real tree whose dsr1-fp8-mi355x-sglang row TP8 (concurrency 4-64) becomes TP2.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from undocumented_changes import undocumented_after

KEY = "dsr1-fp8-mi355x-sglang"
ROW = "      - { tp: 8, conc-start: 4, conc-end: 64 }\n"


def undocumented(repo: Path, description: str) -> list[str]:
    master = repo / "configs" / "amd-master.yaml"
    text = master.read_text(encoding="utf-8")
    at = text.index(f"\n{KEY}:\n")
    assert text.count(ROW, at, at + 600) == 1
    master.write_text(text[:at] + text[at:].replace(ROW, ROW.replace("tp: 8", "tp: 2"), 1), encoding="utf-8")
    return [m.split(";")[0] for m in undocumented_after(repo, KEY, description)]


@pytest.mark.parametrize("description", [
    "Update search space to cover more configs",
    "Rework the search-space for the new image",
    "Change the parallelism of the mid-concurrency points",
    "New TP2 points at concurrency 32-64",
])
def test_an_entry_that_speaks_of_the_layouts_documents_their_change(real_repo: Path, description: str) -> None:
    assert undocumented(real_repo, description) == []


def test_an_entry_that_does_not_leaves_the_width_undocumented(real_repo: Path) -> None:
    # 4, 8, 16 and, where the TP4 row's points stay beside it (32, 64), the one point left on each side
    assert undocumented(real_repo, "Rerun the sweep for fresh numbers") == [
        f"tp changed from 8 to 2 for 5 jobs of {KEY}"]
