"""A change that appends several entries tells its story in steps: only its last word about a setting is
checked against the head (claims/verdict/superseded.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from test_claims_history import append, commit
from test_claims_seed import DATA, git, run_claims
from fixture_trees import copy_tree

SUPERSEDED = "a later entry of this change speaks of it again"


def base_repo(tmp_path: Path) -> tuple[Path, str]:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    copy_tree(DATA / "common", repo)
    copy_tree(DATA / "head", repo)
    return repo, commit(repo, "base")


def contradicted(report: dict[str, object]) -> list[tuple[int, str]]:
    return [(f["line"], f["data"]["subject"]) for f in report["findings"]  # type: ignore[attr-defined]
            if f["rule"] == "claim-contradicted"]


def test_a_claim_a_later_entry_of_the_change_speaks_of_again_is_a_step_not_a_lie(tmp_path: Path) -> None:
    repo, base = base_repo(tmp_path)
    append(repo, "Raise the state checkpoint interval to 32768 tokens.", 20)
    append(repo, "Restore the state checkpoint interval of 8192 tokens after 32768 ran out of memory.", 20)
    commit(repo, "two entries")
    code, report = run_claims(repo, "--base", base, "--head", "HEAD", "-v")
    assert (code, contradicted(report)) == (0, [])
    [note] = [f for f in report["findings"] if f["rule"] == "claim-unverified" and SUPERSEDED in f["message"]]
    text = (repo / "perf-changelog.yaml").read_text(encoding="utf-8").splitlines()
    assert "Raise the state checkpoint interval to 32768" in text[note["line"] - 1]
    # The later entry is named where it speaks of the setting.
    line = int(note["message"].rsplit(":", 1)[1].rstrip(")"))
    assert "Restore the state checkpoint interval" in text[line - 1]


def append_and_check(repo: Path, base: str, text: str, pr: int, *flags: str) -> tuple[int, dict[str, Any]]:
    """One more entry appended and committed, and the change since ``base`` checked."""
    append(repo, text, pr)
    commit(repo, f"entry: {text}")
    return run_claims(repo, "--base", base, "--head", "HEAD", *flags)


def test_the_same_claim_alone_or_followed_by_another_setting_is_still_contradicted(tmp_path: Path) -> None:
    repo, base = base_repo(tmp_path)
    for text, pr in (("Raise the state checkpoint interval to 32768 tokens.", 20),
                     ("Keep max-num-seqs at twice the concurrency.", 20),  # the same pull request, another setting
                     ("Keep the state checkpoint interval at 8192 tokens.", 22)):  # another pull request
        code, report = append_and_check(repo, base, text, pr)
        assert (code, [s for _, s in contradicted(report)]) == (1, ["--state-checkpoint-interval-tokens"])


def test_a_later_entry_speaking_of_the_setting_only_supersedes_what_was_appended_before_it(tmp_path: Path) -> None:
    repo, base = base_repo(tmp_path)
    append(repo, "Keep the state checkpoint interval at 8192 tokens.", 20)
    append(repo, "Raise the state checkpoint interval to 32768 tokens.", 20)
    commit(repo, "the true entry first")
    code, report = run_claims(repo, "--base", base, "--head", "HEAD")
    text = (repo / "perf-changelog.yaml").read_text(encoding="utf-8").splitlines()
    [(line, subject)] = contradicted(report)
    assert "32768" in text[line - 1] and code == 1


def test_a_later_entry_that_reshapes_the_sweep_speaks_again_of_its_size(tmp_path: Path) -> None:
    # Pull request 2704: "Restructure the search space from 47 points to 12 ...", then a later entry of it:
    # "TEMP(validation): reduce the agentic sweep to the single conc-512 point".
    repo, base = base_repo(tmp_path)
    code, report = append_and_check(repo, base, "Restructure the search space to 40 points.", 20)
    assert (code, [s for _, s in contradicted(report)]) == (1, ["points"])
    _, report = append_and_check(repo, base, "TEMP(validation): reduce the sweep to the single conc-512 point.", 20,
                                 "-v")
    assert "points" not in [s for _, s in contradicted(report)]
    assert any(SUPERSEDED in f["message"] and "40 points" in f["message"] for f in report["findings"])


def test_an_image_a_later_entry_of_another_pull_request_moves_the_configs_from_was_theirs_until_then(
        tmp_path: Path) -> None:
    # Pull request 2311's draft: "Image: vllm/vllm-openai:cu129-nightly-8e98163..." in pull request 2230's entry,
    # then its own entry: "Refresh the ... recipes from vllm/vllm-openai:cu129-nightly-8e98163... to ...".
    repo, base = base_repo(tmp_path)
    code, report = append_and_check(repo, base, "Image: rocm/atom-dev:nightly_202608011200.", 20)
    assert (code, [s for _, s in contradicted(report)]) == (1, ["image"])
    # another pull request's entry naming another image leaves the claim a lie ...
    code, report = append_and_check(repo, base, "Bump the image from rocm/atom-dev:nightly_202607011200 to "
                                    "rocm/atom-dev:nightly_202609071454.", 21, "-v")
    assert (code, [s for _, s in contradicted(report)]) == (1, ["image"])
    # ... one that moves the configs away from it makes it the state before that entry
    code, report = append_and_check(repo, base, "Refresh the recipes from rocm/atom-dev:nightly_202608011200 to "
                                    "rocm/atom-dev:nightly_202609071454.", 22, "-v")
    assert (code, contradicted(report)) == (0, [])
    assert any(SUPERSEDED in f["message"] and "nightly_202608011200" in f["message"] for f in report["findings"])
