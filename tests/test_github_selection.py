"""Selections: resolved at a pinned revision, normalised, round-tripped through JSON, re-planned identically."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest

from ci_tools.config import load_config
from ci_tools.github.command import Command, parse_comment
from ci_tools.github.selection import (
    DispatchSelection,
    SelectionError,
    Target,
    appended_entries,
    jobs_digest,
    resolve_selection,
    select_jobs,
    selection_from_json,
)
from ci_tools.model.repository import RepoData, load_repo
from ci_tools.revision.snapshot import GitSnapshot
from conftest import full_corpus_dir
from test_github_dispatch import CHANGELOG_BASE, CHANGELOG_HEAD, Repo, _git, make_repo


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Repo:
    return make_repo(tmp_path_factory.mktemp("selection") / "repo")


def load(root: Path, rev: str) -> RepoData:
    return load_repo(GitSnapshot(root, rev), load_config(root))


def command(text: str) -> Command:
    parsed = parse_comment(text)
    assert isinstance(parsed, Command), parsed
    return parsed


def test_resolution_is_normalised_and_round_trips(repo: Repo) -> None:
    head = load(repo.root, repo.head)
    selection = resolve_selection(command("/run-benchmark cfg-b-* cfg-a-* cfg-a-mi355x-atom conc=16,4"),
                                  repo.head, head)
    assert selection.targets == (Target("cfg-a-mi355x-atom", ("fixed-seq-len",)),
                                 Target("cfg-b-mi355x-sglang", ("fixed-seq-len",)))
    assert selection.conc == (4, 16) and selection.jobs == 2
    text = selection.dumps()
    assert "\n" not in text and text.isascii()
    again = selection_from_json(text)
    assert again == selection
    # The planner's contract: the same jobs at the same revision, proven by the digest.
    jobs = select_jobs(head, again)
    assert [j.label() for j in jobs] == ["cfg-a-mi355x-atom fixed-seq-len 1024/1024 TP8/EP1 c4",
                                         "cfg-a-mi355x-atom fixed-seq-len 1024/1024 TP8/EP1 c16"]
    assert jobs_digest(jobs) == again.jobs_digest


def test_scenario_filter_and_what_remains(repo: Repo) -> None:
    head = load(repo.root, repo.head)
    selection = resolve_selection(command("/run-benchmark cfg-* scenario=agentic-coding"), repo.head, head)
    assert selection.targets == (Target("cfg-c-mi355x-agentic", ("agentic-coding",)),)
    with pytest.raises(SelectionError) as err:
        resolve_selection(command("/run-benchmark cfg-b-* scenario=agentic-coding"), repo.head, head)
    assert err.value.problems == ("`scenario=agentic-coding` leaves no config: the selected configs define "
                                  "fixed-seq-len",)


def test_changelog_needs_an_appended_entry(repo: Repo) -> None:
    base = load(repo.root, repo.base)
    with pytest.raises(SelectionError) as err:
        resolve_selection(command("/run-benchmark changelog"), repo.base, base, base)
    assert err.value.problems == ("this pull request appends no entry to perf-changelog.yaml, so `changelog` "
                                  "selects nothing; name config-key globs instead",)


def test_appended_entries_survive_a_base_that_moved_on(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    # main gains an entry after the pull request branched off.
    moved = CHANGELOG_BASE + "\n- config-keys:\n    - cfg-b-mi355x-sglang\n  description:\n    - \"Other PR.\"\n" \
                             "  pr-link: https://github.com/Codertocat/Hello-World/pull/2\n"
    (repo.root / "perf-changelog.yaml").write_text(moved)
    _git(repo.root, "commit", "-q", "-am", "main moves on")
    new_base = _git(repo.root, "rev-parse", "HEAD")
    entries = appended_entries(load(repo.root, repo.head), load(repo.root, new_base))
    assert [(i, list(e["config-keys"])) for i, e in entries] == [(1, ["cfg-c-*"])]
    assert CHANGELOG_HEAD.count("- config-keys:") == 2


def test_unsafe_config_keys_are_not_forwarded(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    master = repo.root / "configs" / "amd-master.yaml"
    master.write_text(master.read_text().replace("cfg-b-mi355x-sglang:", "'cfg-b-$(id)`x`':"))
    _git(repo.root, "commit", "-q", "-am", "hostile key")
    sha = _git(repo.root, "rev-parse", "HEAD")
    with pytest.raises(SelectionError) as err:
        resolve_selection(command("/run-benchmark cfg-b-*"), sha, load(repo.root, sha))
    assert err.value.problems == ("config key `cfg-b-$(id)\\u0060x\\u0060` contains characters other than letters, "
                                  "digits, `.`, `_` and `-`; it cannot be dispatched",)


def test_configs_that_do_not_load_are_refused(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    (repo.root / "configs" / "amd-master.yaml").write_text("cfg: [unclosed\n")
    _git(repo.root, "commit", "-q", "-am", "broken")
    sha = _git(repo.root, "rev-parse", "HEAD")
    with pytest.raises(SelectionError) as err:
        resolve_selection(command("/run-benchmark cfg"), sha, load(repo.root, sha))
    assert err.value.problems[0] == "the configs at the pinned revision do not load:"
    assert err.value.problems[1].startswith("configs/amd-master.yaml:2: invalid YAML")


@pytest.mark.parametrize(("mutate", "message"), [
    (lambda d: d.update(extra=1), "the selection has unexpected keys ['extra'] or lacks []"),
    (lambda d: d.update(version=2), "selection version 2 is not supported, expected 1"),
    (lambda d: d.update(sha="A" * 40), "`sha` must be 40 lowercase hex digits"),
    (lambda d: d.update(targets=[]), "`targets` must be a non-empty list"),
    (lambda d: d["targets"].reverse(), "`targets` must be sorted by config key, without repeats"),
    (lambda d: d["targets"][0].update({"config-key": "a;b"}), "target config key 'a;b' is not a config key"),
    (lambda d: d["targets"][0].update(scenarios=["x"]),
     "target a: `scenarios` must list distinct names out of fixed-seq-len, agentic-coding"),
    (lambda d: d.update(conc=[8, 4]), "`conc` must be sorted and without repeats"),
    (lambda d: d.update(tp=[True]), "`tp` must be a list of positive integers"),
    (lambda d: d.update(jobs=0), "`jobs` must be a positive integer"),
    (lambda d: d.update({"jobs-digest": "x"}), "`jobs-digest` must be 64 hex digits"),
])
def test_from_json_rejects_anything_not_normalised(mutate: object, message: str) -> None:
    good = DispatchSelection("keys", "a" * 40, (Target("a", ("fixed-seq-len",)), Target("b", ("agentic-coding",))),
                             jobs=3, jobs_digest="0" * 64)
    assert selection_from_json(good.dumps()) == good
    data = json.loads(good.dumps())
    mutate(data)  # type: ignore[operator]
    with pytest.raises(ValueError) as err:
        selection_from_json(json.dumps(data))
    assert str(err.value) == message


@pytest.fixture(scope="module")
def real_tree(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, RepoData]:
    """The real InferenceX configs and changelog as a one-commit repository, loaded at that commit."""
    source, root = full_corpus_dir(), tmp_path_factory.mktemp("ix")
    shutil.copytree(source / "configs", root / "configs")
    shutil.copy(source / "perf-changelog.yaml", root / "perf-changelog.yaml")
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "corpus")
    sha = _git(root, "rev-parse", "HEAD")
    return sha, load(root, sha)


def test_real_corpus_multinode_concurrency_filter(real_tree: tuple[str, RepoData]) -> None:
    sha, head = real_tree
    selection = resolve_selection(command("/run-benchmark dsr1-fp4-mi355x-sglang-disagg conc=64"), sha, head)
    jobs = select_jobs(head, selection)
    assert selection.jobs == len(jobs) > 0
    # A multinode job keeps only the asked-for concurrencies of its list.
    assert all(j.multinode and j.fields["conc"] == [64] for j in jobs)


def test_changelog_entries_naming_other_fleets_do_not_block(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    log = repo.root / "perf-changelog.yaml"
    base_sha = _git(repo.root, "rev-parse", "HEAD")
    other = "\n- config-keys:\n    - dsv4-fp4-b200-vllm\n  description:\n    - \"Another fleet.\"\n  pr-link: XXX\n"
    log.write_text(log.read_text() + other)
    _git(repo.root, "commit", "-q", "-am", "only another fleet")
    only_other = _git(repo.root, "rev-parse", "HEAD")
    with pytest.raises(SelectionError) as err:
        resolve_selection(command("/run-benchmark changelog"), only_other, load(repo.root, only_other),
                          load(repo.root, base_sha))
    assert err.value.problems == ("perf-changelog.yaml:7: config-keys entry `dsv4-fp4-b200-vllm` matches no config key",)
    mine = "\n- config-keys:\n    - cfg-b-*\n  description:\n    - \"Mine.\"\n  pr-link: XXX\n"
    log.write_text(log.read_text() + mine)
    _git(repo.root, "commit", "-q", "-am", "and one of ours")
    both = _git(repo.root, "rev-parse", "HEAD")
    selection = resolve_selection(command("/run-benchmark changelog"), both, load(repo.root, both),
                                  load(repo.root, base_sha))
    assert [t.config_key for t in selection.targets] == ["cfg-b-mi355x-sglang"]


def test_real_corpus_seed_pr_config(real_tree: tuple[str, RepoData]) -> None:
    """The config the seed PR (DSV4 ATOM AgentX on MI355X) changes, as its reviewer would select it."""
    sha, head = real_tree
    selection = resolve_selection(command("/run-benchmark dsv4-fp4-mi355x-atom-agentic-mtp conc=48,64"), sha, head)
    assert selection.targets == (Target("dsv4-fp4-mi355x-atom-agentic-mtp", ("agentic-coding",)),)
    assert [j.label() for j in select_jobs(head, selection)] == [
        "dsv4-fp4-mi355x-atom-agentic-mtp agentic-coding TP8/EP1 c48"]
    # Before the PR the config has no EP8 band, and the reply says what there is instead.
    with pytest.raises(SelectionError) as err:
        resolve_selection(command("/run-benchmark dsv4-fp4-mi355x-atom-agentic-mtp ep=8"), sha, head)
    assert err.value.problems == ("`ep=8` leaves none of the 7 jobs of the selected configs; they offer: scenario "
                                  "agentic-coding; tp 8; ep 1; conc 1,2,4,8,16,32,48",)


def test_real_corpus_every_config_of_both_fleets(real_tree: tuple[str, RepoData]) -> None:
    """`*` over the real tree selects, per config key, the jobs InferenceX's own generator makes (the oracle)."""
    sha, head = real_tree
    selection = resolve_selection(command("/run-benchmark *"), sha, head)
    jobs = select_jobs(head, selection)
    oracle = json.loads((full_corpus_dir() / "expected" / "full-sweep-keyed.json").read_text(encoding="utf-8"))
    assert len(selection.targets) == len(head.configs) == 208
    assert selection.jobs == len(jobs) == len(oracle) == 1820
    assert Counter(j.config_key for j in jobs) == Counter(e["config-key"] for e in oracle)
