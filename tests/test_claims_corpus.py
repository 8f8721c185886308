"""Config-field claims of the real changelog against the real AMD master config.

For each AMD config key, the most recent changelog entry naming it (directly
or by glob) is read, and its image, TP/EP/DPA and concurrency claims are
checked against that key's jobs.  The recipes of that repository are not in
the corpus, so recipe claims stay unverified.  Every finding below was read
against the data by hand; each is a real disagreement.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ci_tools.claims.check import check_entries, entry_inputs
from ci_tools.config import load_config
from ci_tools.matrix import match_key_glob
from ci_tools.model.repository import RepoData, load_repo
from ci_tools.snapshot import WorkTreeSnapshot

from conftest import corpus_dir


@pytest.fixture(scope="module")
def corpus() -> tuple[Path, RepoData]:
    root = corpus_dir()
    config = load_config(root)
    return root, load_repo(WorkTreeSnapshot(root), config)


@pytest.fixture(scope="module")
def checked(corpus: tuple[Path, RepoData]) -> tuple[list[tuple[str, str, int, str]], dict[str, int]]:
    return _findings(*corpus)


def _findings(root: Path, repo: RepoData) -> tuple[list[tuple[str, str, int, str]], dict[str, int]]:
    config = repo.config
    assert repo.changelog is not None and repo.changelog.yaml is not None
    raw = repo.changelog.value
    entries = entry_inputs(config.changelog, repo.changelog.yaml.text, raw)
    out: list[tuple[str, str, int, str]] = []
    kinds: dict[str, int] = {}
    for key in repo.configs:
        last = max(i for i, e in enumerate(raw) if any(match_key_glob(p, key) for p in e["config-keys"]))
        entry = entries[last]
        entry.patterns = [key]
        report = check_entries(config, repo, repo.snapshot, [entry], with_recipes=False)
        assert all(c.kind in ("image", "topology", "concurrency") for c in report.claims)
        out.extend((key, f.rule, f.location.line, f.message) for f in report.findings)
        for claim in report.claims:
            kinds[claim.kind] = kinds.get(claim.kind, 0) + 1
    return out, kinds


def test_every_config_field_finding_on_the_corpus_is_a_real_disagreement(
        checked: tuple[list[tuple[str, str, int, str]], dict[str, int]]) -> None:
    assert checked[0] == [
        # "TP8 conc 4-512": the config's own comment says conc512 timed out and caps the range at 256.
        ("dsv4-fp8-mi300x-vllm", "claim-contradicted", 4820,
         "changelog says concurrency 4-512 is run (perf-changelog.yaml:4820), but the config generates concurrency "
         "4/8/16/32/64/128/256 (configs/amd-master.yaml:118) for dsv4-fp8-mi300x-vllm (no job runs concurrency 512)"),
        # "conc-list [4, 8, 10, 12, 14, 16]": the config now sweeps [1, 4, 8] resident and [10] with offload.
        ("kimik3-fp4-mi355x-vllm-agentic-mtp", "claim-contradicted", 5437,
         "changelog says concurrency 4, 8, 10, 12, 14, 16 is run (perf-changelog.yaml:5437), but the config generates "
         "concurrency 1/4/8/10 (configs/amd-master.yaml:637) for kimik3-fp4-mi355x-vllm-agentic-mtp "
         "(no jobs run concurrency 12, 14, 16)"),
        # Same cap as the MI300X sibling: "TP8 conc 4-512" against conc-end 256.
        ("dsv4-fp8-mi325x-vllm", "claim-contradicted", 4872,
         "changelog says concurrency 4-512 is run (perf-changelog.yaml:4872), but the config generates concurrency "
         "4/8/16/32/64/128/256 (configs/amd-master.yaml:1640) for dsv4-fp8-mi325x-vllm (no job runs concurrency 512)"),
    ]


def test_corpus_claims_that_hold_are_read(checked: tuple[list[tuple[str, str, int, str]], dict[str, int]]) -> None:
    """The checker is not silent by accident: true claims of the same entries are extracted and pass."""
    kinds = checked[1]
    assert kinds["image"] >= 20 and kinds["topology"] >= 30 and kinds["concurrency"] >= 30
