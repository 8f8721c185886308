"""A setting written another way with the same value is no change (claims/verdict/undocumented.py): InferenceX pull
request 2203 rewrote kimik2.5_fp4_mi355x.sh's server line, `--gpu-memory-utilization 0.90` becoming `0.9`, and was
told "--gpu-memory-utilization changed from 0.90 to 0.9" among its real undocumented changes.

On a clone of the real tree whose dsr1_fp8_mi355x.sh (config dsr1-fp8-mi355x-sglang) is edited, with an entry
that names none of its settings.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from undocumented_changes import undocumented_after

KEY = "dsr1-fp8-mi355x-sglang"
RECIPE = Path("benchmarks/single_node/fixed_seq_len/dsr1_fp8_mi355x.sh")


def undocumented(repo: Path, edits: dict[str, str]) -> list[str]:
    recipe = repo / RECIPE
    text = recipe.read_text(encoding="utf-8")
    for old, new in edits.items():
        assert text.count(old) == 1
        text = text.replace(old, new)
    recipe.write_text(text, encoding="utf-8")
    return [m.split(" for ")[0] for m in undocumented_after(repo, KEY, "Rerun the sweep")]


def test_a_decimal_written_with_another_trailing_zero_is_no_change(real_repo: Path) -> None:
    assert undocumented(real_repo, {"--mem-fraction-static 0.8 ": "--mem-fraction-static 0.80 ",
                                    "--num-continuous-decode-steps 8": "--num-continuous-decode-steps 16"}) == [
        "--num-continuous-decode-steps changed from 8 to 16"]


@pytest.mark.parametrize(("old", "new", "said"), [
    ("--mem-fraction-static 0.8 ", "--mem-fraction-static 0.85 ", "--mem-fraction-static changed from 0.8 to 0.85"),
    # an integer option refuses `8.0`: another value for the program, not another spelling
    ("--num-continuous-decode-steps 8", "--num-continuous-decode-steps 8.0",
     "--num-continuous-decode-steps changed from 8 to 8.0"),
])
def test_another_number_or_another_kind_of_number_is_a_change(real_repo: Path, old: str, new: str, said: str) -> None:
    assert undocumented(real_repo, {old: new}) == [said]


@pytest.mark.parametrize(("description", "said"), [
    ("Rerun the sweep", ["--tensor-parallel-size changed from 8 to 4"]),
    # InferenceX 16000d81219b: the vLLM disaggregated workers' --tensor-parallel-size now follows their TP4 rows,
    # "Retune the P/D search space to TP4 across all workers"
    ("Run every point at TP4", []),
])
def test_a_parallelism_flag_is_documented_by_the_dimension_it_carries(real_repo: Path, description: str,
                                                                       said: list[str]) -> None:
    recipe = real_repo / RECIPE
    text = recipe.read_text(encoding="utf-8")
    recipe.write_text(text.replace("--tensor-parallel-size $TP \\", "--tensor-parallel-size 4 \\"), encoding="utf-8")
    found = [m.split(" for ")[0] for m in undocumented_after(real_repo, KEY, description)]
    assert found == said
