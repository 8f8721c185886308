"""An entry that adds a recipe speaks of that recipe: on the real tree, with two of a key's recipes added by the
head commit (f444926334f8 added the GB200 MegaMOE max-throughput and low-middle-curve recipes together)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from conftest import full_corpus_dir
from test_claims_seed import git, run_claims

KEY = "dsv4-fp4-gb200-dynamo-vllm"
RECIPES = Path("benchmarks/multi_node/srt-slurm-recipes/vllm/deepseek-v4/8k1k")
ADDED = ("disagg-gb200-max-tpt-megamoe.yaml", "disagg-gb200-low-middle-curve.yaml")
USES = "Uses deep_gemm_mega_moe on prefill/decode, TORCH_SYMMMEM=NVSHMEM, and no offload"
ENTRIES = {
    "max-tpt": ["Add GB200 Dynamo vLLM MegaMOE max-throughput recipe at conc=4096", USES],
    "low-middle": ["Add GB200 Dynamo vLLM low-middle curve recipe at conc=256/512", USES],
    "no-add": ["Retune GB200 Dynamo vLLM at conc=4096", USES],
}


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[tuple[str, str]]]:
    """(rule, subject) of each entry's errors and warnings, from one commit that adds both recipes and the three
    entries."""
    repo = tmp_path_factory.mktemp("new-recipe") / "ix"
    shutil.copytree(full_corpus_dir(), repo)
    for path in [repo, *repo.rglob("*")]:
        path.chmod(path.stat().st_mode | 0o200)
    kept = {name: (repo / RECIPES / name).read_bytes() for name in ADDED}
    for name in ADDED:
        (repo / RECIPES / name).unlink()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base without the two recipes")
    for name, data in kept.items():
        (repo / RECIPES / name).write_bytes(data)
    changelog = repo / "perf-changelog.yaml"
    text = changelog.read_text(encoding="utf-8")
    first_lines = {}
    for n, (label, bullets) in enumerate(ENTRIES.items()):
        text += f"\n- config-keys:\n    - {KEY}\n  description:\n"
        first_lines[label] = text.count("\n") + 1
        text += "".join(f'    - "{b}"\n' for b in bullets)
        text += f"  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/{9300 + n}\n"
    changelog.write_text(text, encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "add the recipes and the entries")
    _, report = run_claims(repo, "--base", "HEAD~1", "--head", "HEAD")
    out: dict[str, list[tuple[str, str]]] = {label: [] for label in ENTRIES}
    for f in report["findings"]:
        if f["severity"] in ("error", "warning"):
            label = max((lab for lab, line in first_lines.items() if line <= f["line"]), key=first_lines.__getitem__)
            out[label].append((f["rule"], str(f["data"].get("subject"))))
    return out


def test_what_an_entry_says_of_the_recipe_it_adds_is_not_contradicted_by_the_key_s_other_recipes(
        findings: dict[str, list[tuple[str, str]]]) -> None:
    assert findings["max-tpt"] == []


def test_the_entry_s_words_choose_which_added_recipe_it_speaks_of(findings: dict[str, list[tuple[str, str]]]) -> None:
    # the low-middle-curve recipe passes neither: said of it, the claims are partly contradicted
    assert sorted(findings["low-middle"]) == [("claim-partly-contradicted", "--moe-backend"),
                                              ("claim-partly-contradicted", "TORCH_SYMMMEM")]


def test_an_entry_that_adds_no_recipe_speaks_of_every_job(findings: dict[str, list[tuple[str, str]]]) -> None:
    assert sorted(findings["no-add"]) == [("claim-partly-contradicted", "--moe-backend"),
                                          ("claim-partly-contradicted", "TORCH_SYMMMEM")]
