"""An arm named as a multinode job's workers run it is that job's arm, even where the config's ``ep`` says otherwise
(claims/verdict/worker_layout.py): InferenceX pull request 2190 re-added "1p1d-dep8-tep8 (conc 1-64)", a recipe
starting its decode worker with ``--tensor-parallel-size 8 --enable-expert-parallel`` under a config row writing
``ep: 1``, and the claim was reported as an arm no job runs.

On a copy of the real tree whose qwen3.5-fp8-gb200-dynamo-sglang-mtp "1P1D TEP8/TEP8" row (conc 32/48/80, recipe
``8k1k_mtp_lowlat_1.yaml``, whose workers pass ``--ep-size 8`` with TP8) has its decode ``ep: 8`` written ``ep: 1``.
"""

from __future__ import annotations

import pytest

from ci_tools.claims.text.sentences import plain_source
from ci_tools.claims.verdict.check import EntryInput, EvalCache, check_entries
from ci_tools.findings import Location
from ci_tools.model.repository import load_repo
from paraphrase.drive import Tree, load_tree
from paraphrase.settings import OverlaySnapshot

from conftest import full_corpus_dir

KEY = "qwen3.5-fp8-gb200-dynamo-sglang-mtp"
MASTER = "configs/nvidia-master.yaml"
TEP_DECODE = ('gb200-fp8/8k1k/disagg/mtp/8k1k_mtp_lowlat_1.yaml"\n        decode:\n          num-worker: 1\n          tp: 8\n'
              '          ep: 8\n')


@pytest.fixture(scope="module")
def tree() -> Tree:
    return load_tree(full_corpus_dir())


def findings(tree: Tree, text: str, *, config_ep: int) -> list[tuple[str, str]]:
    """(rule, claimed) of the claim findings of ``text`` for KEY on a copy of the real tree whose TEP8 decode
    row writes ``ep: config_ep``."""
    data = tree.snapshot.read(MASTER)
    assert data is not None and data.count(TEP_DECODE.encode()) == 1
    edited = data.replace(TEP_DECODE.encode(), TEP_DECODE.replace("ep: 8", f"ep: {config_ep}").encode())
    copy = OverlaySnapshot(tree.snapshot, {MASTER: edited})
    repo = load_repo(copy, tree.config, with_changelog=False)  # type: ignore[arg-type]
    entry = EntryInput([KEY], (), [plain_source("entry.md", text)], Location("entry.md", 1, 1))
    report = check_entries(tree.config, repo, copy, [entry], cache=EvalCache(tree.config))  # type: ignore[arg-type]
    return [(f.rule, str(f.data.get("claimed"))) for f in report.findings
            if f.rule.startswith("claim-") and f.rule != "claim-not-checked"]


def test_an_arm_named_as_the_workers_run_it_holds_where_the_config_writes_ep_1(tree: Tree) -> None:
    text = "1P1D TEP8/TEP8 at conc 32-80."
    assert findings(tree, text, config_ep=8) == []
    assert findings(tree, text, config_ep=1) == []


def test_what_the_workers_do_not_run_is_still_reported(tree: Tree) -> None:
    # a width the recipe does not run, and points the job does not run, on the copy whose config writes ep: 1
    assert findings(tree, "1P1D TEP8/TEP16 at conc 32-80.", config_ep=1) == [("claim-arm-missing", "conc 32-80")]
    assert findings(tree, "1P1D TEP8/TEP8 at conc 64-128.", config_ep=1) == [("claim-contradicted", "conc 64-128")]
    # the workers run no DP attention, whatever the config writes of their EP
    assert findings(tree, "1P1D TEP8/DEP8 at conc 32-80.", config_ep=1) == [("claim-arm-missing", "conc 32-80")]
