"""An image change is documented when the appended entry names the new image by its tag ("vLLM 0.25.1" for
``...:v0.25.1``), as a flag's change is when the entry names its new value (claims/verdict/undocumented.py):
InferenceX pull request 2139 moved dsv4-fp4-gb200-dynamo-vllm from ``vllm/vllm-openai:v0.20.0-ubuntu2404`` to
``vllm/vllm-openai:v0.25.1`` with an entry saying "... Dynamo 1.3.0.dev1, vLLM 0.25.1, and the MXFP4 checkpoint",
and was told the change was not mentioned.

On a clone of the real tree whose dsr1-fp8-mi355x-sglang moves from ``lmsysorg/sglang:v0.5.12-rocm700-mi35x``
to ``v0.5.13-rocm700-mi35x``, with one appended entry.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from undocumented_changes import undocumented_after

KEY = "dsr1-fp8-mi355x-sglang"
OLD, NEW = "lmsysorg/sglang:v0.5.12-rocm700-mi35x", "lmsysorg/sglang:v0.5.13-rocm700-mi35x"


def undocumented(repo: Path, description: str) -> list[str]:
    master = repo / "configs" / "amd-master.yaml"
    text = master.read_text(encoding="utf-8")
    assert text.count(f"{KEY}:\n  image: {OLD}\n") == 1
    master.write_text(text.replace(f"{KEY}:\n  image: {OLD}\n", f"{KEY}:\n  image: {NEW}\n"), encoding="utf-8")
    return undocumented_after(repo, KEY, description)


@pytest.mark.parametrize("description", [
    "Move to SGLang 0.5.13 for the faster MLA kernels",
    "Bump SGLang to v0.5.13",
    "Refresh on the v0.5.13-rocm700-mi35x build",
])
def test_an_image_named_by_its_tag_is_documented(real_repo: Path, description: str) -> None:
    assert undocumented(real_repo, description) == []


@pytest.mark.parametrize("description", [
    "Rerun the sweep for fresh numbers",
    "Rerun the sweep, as on SGLang 0.5.12",  # the old tag is what the change left, not what it brought
])
def test_an_entry_that_names_not_the_new_image_leaves_it_undocumented(real_repo: Path, description: str) -> None:
    assert undocumented(real_repo, description) == [
        f"image changed from {OLD} to {NEW} for 7 jobs of {KEY}; the changelog entry does not mention it"]
