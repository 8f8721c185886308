"""A point the change leaves as it was is paired with itself, not with a point added beside it at the same
concurrency (claims/verdict/undocumented.py ``_pairs``): InferenceX pull request 2113 added a 4P1D point at
concurrency 2048 with a recipe of its own next to the existing 4P1D point at 2048, and the new point was compared
with the old one: ten changes "the changelog entry does not mention", each a difference of two recipes.

On a clone of the real tree whose dsv4-fp4-gb200-dynamo-vllm gets a second 1P1D DEP8/DEP8 row at the mid-curve
row's concurrencies (256, 512, 1024), running another recipe (``disagg-gb200-low-middle-curve.yaml``).
"""

from __future__ import annotations

from pathlib import Path

from undocumented_changes import undocumented_after

KEY = "dsv4-fp4-gb200-dynamo-vllm"
MID_CURVE = """      - conc-list: [256, 512, 1024]
        prefill:
          num-worker: 1
          tp: 8
          ep: 8
          dp-attn: true
          additional-settings:
          - "CONFIG_FILE=recipes/vllm/deepseek-v4/8k1k/disagg-gb200-mid-curve-megamoe.yaml"
        decode:
          num-worker: 1
          tp: 8
          ep: 8
          dp-attn: true
"""


def undocumented(repo: Path, *, recipe_of_the_old_row: str | None = None,
                 recipe_of_the_new_row: str = "low-middle-curve") -> list[str]:
    master = repo / "configs" / "nvidia-master.yaml"
    text = master.read_text(encoding="utf-8")
    assert text.count(MID_CURVE) == 1
    added = MID_CURVE.replace("disagg-gb200-mid-curve-megamoe.yaml", f"disagg-gb200-{recipe_of_the_new_row}.yaml")
    old = MID_CURVE if recipe_of_the_old_row is None else MID_CURVE.replace("mid-curve-megamoe", recipe_of_the_old_row)
    master.write_text(text.replace(MID_CURVE, old + added), encoding="utf-8")
    return undocumented_after(repo, KEY, "Add a 1P1D DEP8/DEP8 point at conc 256-1024 on the low-middle-curve recipe")


def test_a_point_added_beside_an_unchanged_one_is_not_its_change(real_repo: Path) -> None:
    assert undocumented(real_repo) == []


def test_the_old_point_moved_to_another_recipe_is_still_a_change(real_repo: Path) -> None:
    # the old row now runs the low-middle-curve recipe, the added one the high-throughput recipe: the old row's
    # changes are the old point's (the row where it stood), and nobody wrote them down
    found = undocumented(real_repo, recipe_of_the_old_row="low-middle-curve", recipe_of_the_new_row="high-tpt-megamoe")
    assert f"--gpu-memory-utilization changed from 0.9 to 0.85 for 1 job of {KEY}; the changelog entry does not " \
           "mention it" in found
