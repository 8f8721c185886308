"""The recipes a sentence names by the words of their file names (claims/verdict/named_recipes.py), on the file
names of real InferenceX recipes."""

from __future__ import annotations

import pytest

from ci_tools.claims.verdict.named_recipes import _named_by_words, _named_files, file_words
from paraphrase.drive import Tree, load_tree
from test_claims_scope_kept import findings

from conftest import full_corpus_dir

# dsr1-fp4-b200-dynamo-sglang-mtp's split recipes (InferenceX pull request 1688)
SPLIT = [f"sglang/dsr1/b200-fp4/8k1k/disagg/mtp/8k1k_mtp2_throughput_{t}.yaml" for t in ("2p1d", "3p1d", "5p1d")] + \
    [f"sglang/dsr1/b200-fp4/8k1k/disagg/mtp/8k1k_mtp_lowlat_{i}.yaml" for i in range(3)]
# dsv4-fp4-gb300-dynamo-vllm-agentic-mtp-agg's recipes (pull request 2665)
AGG = [f"vllm/deepseek-v4/agentic/agg-gb300-tp{tp}{kind}-mtp-agentic.yaml" for tp in (4, 8) for kind in ("", "-mooncake")]


def named(text: str, paths: list[str]) -> set[str]:
    return _named_by_words(text, {path: file_words(path) for path in paths})


def test_a_word_the_file_names_write_in_full_is_read_as_written_and_as_shortened() -> None:
    # "throughput" is written out in these names, shortened (tpt) in others
    assert named("MTP2 throughput recipes use scheduler-recv-interval=1", SPLIT) == set(SPLIT[:3])
    assert named("Set X on the max-throughput recipes", ["a/disagg-gb200-max-tpt-megamoe.yaml",
                                                          "a/disagg-gb200-low-latency.yaml"]) == \
        {"a/disagg-gb200-max-tpt-megamoe.yaml"}


def test_a_capitalised_product_name_between_the_words_does_not_end_them() -> None:
    assert named("Pin PYTHONHASHSEED=0 in both aggregate Mooncake Store recipes", AGG) == \
        {p for p in AGG if "mooncake" in p}


def test_words_no_file_holds_name_no_recipe() -> None:
    assert named("Update the resident recipes", AGG) == set()
    assert named("Pin it in both Store recipes", AGG) == set()  # a product name alone tells no file from another
    assert named("Bump the image of the shared recipes", SPLIT) == set()


def test_a_list_naming_some_recipes_by_words_no_file_holds_tells_no_jobs_apart() -> None:
    # PR 1697: "3 high-throughput conc=8192 recipes (1p1d-dep8, ...), 4 flat low-latency dep4 recipes (...)": the
    # first recipes' words name no file, so the claims of the list are not narrowed to the low-latency files.
    files = ["r/disagg-1p1d-dep8-conc8192-mtp.yaml", "r/disagg-low-latency-1p1d-dep4-tp4-mtp.yaml",
             "r/disagg-low-latency-1p2d-tp4-tp4-mtp.yaml"]
    assert named("3 high-throughput conc=8192 recipes (1p1d-dep8), 2 flat low-latency recipes (1p1d-dep4-tp4)",
                 files) == set()
    # each "recipes" naming files of its own still narrows
    assert named("the low-latency recipes and the conc8192 recipes", files) == set(files)
    assert named("the low-latency recipes", files) == set(files[1:])


# dsv4-fp4-gb200-sglang's recipes (pull request 1137: "agg-2n-low-latency (EAGLE ...) for conc 1-64, agg-2n-nomtp
# for conc 128-1024")
GB200 = ["recipes/gb200-fp4/1k1k-dsv4/agg-2n-low-latency.yaml", "recipes/gb200-fp4/1k1k-dsv4/agg-2n-nomtp.yaml"]


def test_a_files_whole_name_written_without_its_extension_names_it() -> None:
    files = {path: file_words(path) for path in GB200}
    assert _named_files("Two recipes: agg-2n-low-latency (EAGLE 3/4 spec decoding) for conc 1-64", files) == {GB200[0]}
    assert _named_files("agg-2n-nomtp for conc 128-1024.", files) == {GB200[1]}
    assert _named_files("agg-2n-nomtp.yaml", files) == {GB200[1]}
    # Only the whole name, of three words at least: a longer name, or the words of a family, name none.
    assert _named_files("agg-2n-nomtp-v2 for conc 128", files) == set()
    assert _named_files("the low-latency recipe", files) == set()
    assert _named_files("xagg-2n-nomtp", files) == set()


@pytest.fixture(scope="module")
def tree() -> Tree:
    return load_tree(full_corpus_dir())


def test_a_claim_on_a_recipe_named_without_its_extension_is_judged_on_its_jobs(tree: Tree) -> None:
    # kimik2.6-fp4-b200-dynamo-vllm: only disagg-b200-1p1d-dep8-tp8-c1.yaml gives its decode --max-num-seqs 1024
    # (the key's other files 2048).
    key = ("kimik2.6-fp4-b200-dynamo-vllm",)
    assert findings(tree, "Set decode max-num-seqs to 1024 on disagg-b200-1p1d-dep8-tp8-c1.", keys=key) == []
    assert findings(tree, "Set decode max-num-seqs to 1024 on disagg-b200-1p1d-dep8-dep8-c2048.", keys=key) == \
        [("claim-contradicted", "--max-num-seqs", "1024")]


def test_speculation_said_of_a_named_recipe_is_that_recipes_own(tree: Tree) -> None:
    # PR 1137's shape: the configs of kimik2.6-fp4-b200-dynamo-vllm set no spec-decoding; what a recipe the text
    # names by file runs inside it is the recipe's, and the concurrencies are still checked on its jobs.
    key = ("kimik2.6-fp4-b200-dynamo-vllm",)
    two = "Two recipes: disagg-b200-1p1d-dep8-tp8-c1 (EAGLE spec decoding) for conc 1, disagg-b200-1p4d-dep4-tp4-c512"
    assert findings(tree, f"{two} for conc 512.", keys=key) == []
    assert findings(tree, f"{two} for conc 64.", keys=key) == [("claim-contradicted", "concurrency", "conc 64")]
    # Named by no file, speculative decoding is the configs' to say: no job of the key runs it.
    assert findings(tree, "EAGLE spec decoding for conc 1.", keys=key) == \
        [("claim-arm-missing", "concurrency/spec-decoding", "conc 1")]
