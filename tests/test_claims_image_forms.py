"""The image a config runs, as changelogs write it: whole, by its tag, where the words say a tag stands.

On the real tree: dsv4-fp4-mi355x-sglang runs lmsysorg/sglang-rocm:v0.5.14-rocm720-mi35x-20260706 (16 jobs),
dsr1-fp8-mi355x-atom rocm/atom:rocm7.2.3_ubuntu24.04_py3.12_pytorch_release_2.10.0_atom20260511, and
dsr1-fp8-h200-trt nvcr.io#nvidia/tensorrt-llm/release:1.3.0rc14 (enroot's spelling of the registry).  Each
sentence that holds is silent; its lie is an error naming the image.
"""

from __future__ import annotations

import pytest

from ci_tools.claims.text.sentences import plain_source
from ci_tools.claims.text.values import normalise_image, parse_image, value_words
from ci_tools.claims.verdict.check import EntryInput, EvalCache, check_entries
from ci_tools.findings import Location
from paraphrase.drive import Tree, load_tree

from conftest import full_corpus_dir

SGLANG = "dsv4-fp4-mi355x-sglang"
ATOM = "dsr1-fp8-mi355x-atom"
TRT = "dsr1-fp8-h200-trt"


@pytest.fixture(scope="module")
def tree() -> Tree:
    return load_tree(full_corpus_dir())


def findings(tree: Tree, key: str, text: str) -> list[tuple[str, object]]:
    entry = EntryInput([key], (), [plain_source("e.md", text)], Location("e.md", 1, 1))
    report = check_entries(tree.config, tree.repo, tree.snapshot, [entry], cache=EvalCache(tree.config))
    return [(f.rule, f.data.get("claimed")) for f in report.findings if f.rule.startswith("claim-")
            and f.rule != "claim-not-checked"]


@pytest.mark.parametrize("template", [
    "Image: {}",                                  # a58dedd5a106: "Image: vllm/vllm-openai:v0.17.0"
    "Update the benchmark to the {} image.",      # 9d59b9ef94b1
    "Use the {} image.",                          # 4b7193163e80
    "Update the SGLang image to upstream {}.",    # 5f22f77c9c61: "... SGLang Image to upstream v0.5.6.post2"
    "Switch image from v0.5.12 to stable {}.",    # 96f1598815fb: "Switch image from nightly_... to stable atom0.1.3"
])
@pytest.mark.parametrize("true, false", [("v0.5.14", "v0.5.16"), ("v0.5.14-rocm720-mi35x-20260706",
                                                                   "v0.5.16-rocm720-mi35x-20260706")])
def test_a_tag_is_read_where_the_words_say_a_tag_stands(tree: Tree, template: str, true: str, false: str) -> None:
    assert findings(tree, SGLANG, template.format(true)) == []
    assert findings(tree, SGLANG, template.format(false)) == [("claim-contradicted", false)]


def test_a_tag_of_any_build_shape_is_read_after_image_to(tree: Tree) -> None:
    # a tag that starts with letters ("rocm7.2.3_...") is a tag where "image to" says one stands
    tag = "rocm7.2.3_ubuntu24.04_py3.12_pytorch_release_2.10.0_atom20260511"
    assert findings(tree, ATOM, f"Change the ATOM image to {tag}.") == []
    assert findings(tree, ATOM, f"Change the ATOM image to {tag.replace('7.2.3', '7.2.5')}.") == [
        ("claim-contradicted", tag.replace("7.2.3", "7.2.5"))]


def test_a_tag_with_its_middle_left_out_is_that_tag(tree: Tree) -> None:
    # 735a05dd03b7: "Update Atom ROCm image (...) to rocm7.2.3_..._atom20260511" holds of the atom20260511 build
    assert value_words("rocm7.2.3_..._atom20260511") == ("rocm7.2.3", "atom20260511")
    assert findings(tree, ATOM, "Update Atom ROCm image to rocm7.2.3_..._atom20260511") == []
    assert findings(tree, ATOM, "Update Atom ROCm image to rocm7.2.3_..._atom20260512") == [
        ("claim-contradicted", "rocm7.2.3_..._atom20260512")]


def test_an_image_with_enroots_registry_spelling_is_an_image(tree: Tree) -> None:
    image = parse_image("nvcr.io#nvidia/tensorrt-llm/release:1.3.1rc14")
    assert image is not None and image.ref == "nvcr.io/nvidia/tensorrt-llm/release:1.3.1rc14"
    assert normalise_image("nvcr.io#nvidia/tensorrt-llm/release:1.3.1rc14") == image.ref
    assert findings(tree, TRT, "Image: nvcr.io#nvidia/tensorrt-llm/release:1.3.0rc14") == []
    assert findings(tree, TRT, "Bump the image to nvcr.io/nvidia/tensorrt-llm/release:1.3.0rc14.") == []
    assert findings(tree, TRT, "Update the image to nvcr.io#nvidia/tensorrt-llm/release:1.3.2rc14.") == [
        ("claim-contradicted", "nvcr.io#nvidia/tensorrt-llm/release:1.3.2rc14")]
    # a pull request's number after "#" is no registry
    assert parse_image("#622") is None


@pytest.mark.parametrize("text", [
    "Switch the dsv4-fp4-mi355x-sglang image from the old nightly.",   # a config key names the image, is no tag
    "Add the arms using the bedf79e image.",                           # the commit an image was built from
    "Update the image to nvfp4.",                                      # a dtype
    "Verified the attention path on the v0.5.16 image.",               # where something was seen, not what is used
    "The image resolves its MoE backend to FLASHINFER_TRTLLM_MXFP4_MXFP8.",  # what the image picks, far from "image"
])
def test_a_word_where_no_tag_stands_is_no_image_claim(tree: Tree, text: str) -> None:
    assert findings(tree, SGLANG, text) == []


def test_an_image_whose_tag_is_cut_after_its_version_is_that_image(tree: Tree) -> None:
    # 18f85edb0060: "Base image rocm/atom:rocm7.2.2 (MI355X ROCm 7.2.2, ...)" names the rocm7.2.2_ubuntu24.04_...
    # build by its tag's first word; a cut at a version's own next part is another release
    assert findings(tree, ATOM, "Base image rocm/atom:rocm7.2.3 (MI355X ROCm 7.2.3)") == []
    assert findings(tree, ATOM, "Base image rocm/atom:rocm7.2.4 (MI355X ROCm 7.2.4)") == [
        ("claim-contradicted", "rocm/atom:rocm7.2.4")]
    assert findings(tree, ATOM, "Base image rocm/atom:rocm7.2") == [("claim-contradicted", "rocm/atom:rocm7.2")]
    # a tag cut at a "-" is a variant's own published image (f342df18e715: vllm/vllm-openai:v0.17.0 is not the
    # v0.17.0-cu130 the config runs)
    assert findings(tree, SGLANG, "Image: lmsysorg/sglang-rocm:v0.5.14") == [
        ("claim-contradicted", "lmsysorg/sglang-rocm:v0.5.14")]
