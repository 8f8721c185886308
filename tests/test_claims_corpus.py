"""Config-field claims of the real changelog against the real AMD master config.

For each AMD config key, the most recent changelog entry naming it (directly
or by glob) is read, and its image, arm (TP/EP/DPA, sequence lengths,
workers) and concurrency claims are checked against that key's jobs (a list
or range of concurrencies names every point of its arm).  The recipes of that
repository are not in the corpus, so recipe claims stay unverified.  Every finding below was read
against the data by hand; each is a real disagreement.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ci_tools.claims.verdict.check import check_entries, entry_inputs
from ci_tools.config import load_config
from ci_tools.model.keys import match_key_glob
from ci_tools.model.repository import RepoData, load_repo
from ci_tools.revision.snapshot import WorkTreeSnapshot

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
        assert all(c.kind in ("image", "arm", "concurrency") for c in report.claims)
        out.extend((key, f.rule, f.location.line, f.message) for f in report.findings)
        for claim in report.claims:
            kinds[claim.kind] = kinds.get(claim.kind, 0) + 1
    return out, kinds


def test_every_config_field_finding_on_the_corpus_is_a_real_disagreement(
        checked: tuple[list[tuple[str, str, int, str]], dict[str, int]]) -> None:
    assert checked[0] == [
        # "TP8 conc 4-512": 1k1k runs to 512, but the config's own comment caps 8k1k at 256 (conc512 timed out).
        ("dsv4-fp8-mi300x-vllm", "claim-partly-contradicted", 4820,
         "changelog says TP8 8192/1024 runs concurrency 4-512 (perf-changelog.yaml:4820), but the config generates "
         "concurrency 4/8/16/32/64/128/256 (not 512) (configs/amd-master.yaml:118) for the TP8 8192/1024 jobs of "
         "dsv4-fp8-mi300x-vllm"),
        # "TP=2 and TP=4, concurrency 4-256 for 1k1k and 8k1k": the config keeps only the 8k1k scenario.
        ("qwen3.5-fp4-mi355x-atom", "claim-partly-contradicted", 1738,
         "changelog says TP=2 1k1k runs concurrency 4-256 (perf-changelog.yaml:1738), but no job is TP=2 1k1k "
         "(the jobs run TP2/EP1, TP4/EP1) (configs/amd-master.yaml:344) for the jobs of qwen3.5-fp4-mi355x-atom; "
         "1 other arm differs too (1 of 3 holds)"),
        # "one TP8 GPU-resident arm at conc-list [4, 8, 10, 12, 14, 16]": the resident row now sweeps [1, 4, 8].
        ("kimik3-fp4-mi355x-vllm-agentic-mtp", "claim-partly-contradicted", 5437,
         "changelog says TP8 GPU-resident kv-offloading none runs concurrency 4, 8, 10, 12, 14, 16 "
         "(perf-changelog.yaml:5437), but the config generates concurrency 1/4/8 (not 10, 12, 14, 16; also 1) "
         "(configs/amd-master.yaml:637) for the TP8 GPU-resident kv-offloading none jobs of "
         "kimik3-fp4-mi355x-vllm-agentic-mtp"),
        # "the LMCache/vllm-native/SimpleCPUOffload DRAM-offload backends are wired in the recipe but off this
        # sweep's ladder": a vllm-simple (SimpleCPUOffloadConnector) row runs at conc 10.
        ("kimik3-fp4-mi355x-vllm-agentic-mtp", "claim-partly-contradicted", 5437,
         "changelog says no SimpleCPUOffload DRAM-offload job runs (perf-changelog.yaml:5437), but the config runs "
         "SimpleCPUOffload DRAM-offload (TP8/EP1 vllm-simple) at concurrency 10 (configs/amd-master.yaml:638) for "
         "the SimpleCPUOffload DRAM-offload jobs of kimik3-fp4-mi355x-vllm-agentic-mtp (2 of 3 hold)"),
        # "1P1D TP8 (conc 4-256)": the 1P1D row stops at 128.
        ("dsv4-fp4-mi355x-atom-disagg", "claim-partly-contradicted", 3562,
         "changelog says 1P1D TP8 isl=8192/osl=1024 runs concurrency 4-256 (perf-changelog.yaml:3562), but "
         "the config generates concurrency 4/8/16/32/64/128 (not 256) (configs/amd-master.yaml:1499) for the 1P1D TP8 "
         "isl=8192/osl=1024 jobs of dsv4-fp4-mi355x-atom-disagg"),
        # Same cap as the MI300X sibling: "TP8 conc 4-512" against conc-end 256 at 8k1k.
        ("dsv4-fp8-mi325x-vllm", "claim-partly-contradicted", 4872,
         "changelog says TP8 8192/1024 runs concurrency 4-512 (perf-changelog.yaml:4872), but the config generates "
         "concurrency 4/8/16/32/64/128/256 (not 512) (configs/amd-master.yaml:1640) for the TP8 8192/1024 jobs of "
         "dsv4-fp8-mi325x-vllm"),
    ]


def test_corpus_claims_that_hold_are_read(checked: tuple[list[tuple[str, str, int, str]], dict[str, int]]) -> None:
    """The checker is not silent by accident: true claims of the same entries are extracted and pass."""
    kinds = checked[1]
    assert kinds["image"] >= 20 and kinds["arm"] >= 8 and kinds["concurrency"] >= 30
