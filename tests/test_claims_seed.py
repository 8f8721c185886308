"""The seed PR replayed: a DPA+TBO band moved to native RCCL DEP, with a changelog that overstates it.

The base has the DP-attention band with TBO; the head moves it to DEP
(TP8/DPA8/EP8) but keeps ATOM_DP_LB_REQ_EQUIV=512 and an 8192-token state
checkpoint interval, while the appended entry says "zero request
equivalence" and "32768 tokens".  Exactly those two claims are errors; every
true claim of the same entry (TP8/DPA8/EP8, TBO and EPLB off, the image pin,
the preserved TP band, real MTP acceptance on DEP) yields nothing.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from fixture_trees import copy_tree

DATA = Path(__file__).parent / "data" / "claims_seed"
RECIPE = "benchmarks/single_node/agentic/dsv4_fp4_mi355x_atom_mtp.sh"
KEY = "dsv4-fp4-mi355x-atom-agentic-mtp"
GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test", "GIT_AUTHOR_EMAIL": "test@example.com",
    "GIT_COMMITTER_NAME": "Test", "GIT_COMMITTER_EMAIL": "test@example.com",
    "GIT_CONFIG_NOSYSTEM": "1", "HOME": "/nonexistent",
}


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, **GIT_ENV}
    return subprocess.run(["git", "-C", str(repo), "-c", "commit.gpgsign=false", *args], check=True,
                          capture_output=True, text=True, env=env).stdout.strip()


def seed_repo(tmp: Path, *, changelog: str | None = None, recipe: str | None = None) -> tuple[Path, str]:
    """A git repo: base commit (DPA+TBO), head commit (the DEP change); returns (repo, base sha)."""
    repo = tmp / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    copy_tree(DATA / "common", repo)
    copy_tree(DATA / "base", repo)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base: DPA+TBO band")
    base = git(repo, "rev-parse", "HEAD")
    copy_tree(DATA / "head", repo)
    if changelog:
        shutil.copyfile(DATA / "variants" / changelog, repo / "perf-changelog.yaml")
    if recipe:
        shutil.copyfile(DATA / "variants" / recipe, repo / RECIPE)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "head: native RCCL DEP")
    return repo, base


def run_claims(repo: Path, *args: str) -> tuple[int, dict[str, Any]]:
    proc = subprocess.run([sys.executable, "-m", "ci_tools", "claims", "--repo", str(repo), "--format", "json", *args],
                          capture_output=True, text=True, cwd=repo)
    assert proc.returncode in (0, 1), proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def errors(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [f for f in report["findings"] if f["severity"] == "error"]


def described(report: dict[str, Any]) -> list[dict[str, Any]]:
    """The claims a PR description's text was found to contradict (warnings: README "Claims")."""
    return [f for f in report["findings"] if f["severity"] == "warning" and f["rule"] == "claim-contradicted"
            and f["data"].get("origin") == "PR description"]


def brief(f: dict[str, Any]) -> tuple[str, str, int, int, str]:
    return (f["rule"], f["path"], f["line"], f["column"], f["data"]["subject"])


def test_seed_pr_gives_exactly_the_two_errors_with_both_locations(tmp_path: Path) -> None:
    repo, base = seed_repo(tmp_path)
    code, report = run_claims(repo, "--base", base, "--head", "HEAD")
    assert code == 1
    errs = errors(report)
    assert [brief(f) for f in errs] == [
        ("claim-contradicted", "perf-changelog.yaml", 17, 110, "ATOM_DP_LB_REQ_EQUIV"),
        ("claim-contradicted", "perf-changelog.yaml", 17, 144, "--state-checkpoint-interval-tokens"),
    ]
    req, interval = errs
    assert req["message"] == (
        "changelog says the request equivalence is 0 (perf-changelog.yaml:17), but the recipe exports "
        f"ATOM_DP_LB_REQ_EQUIV=512 ({RECIPE}:25) for all 5 DEP jobs of {KEY}")
    assert interval["message"] == (
        "changelog says the state checkpoint interval is 32768 tokens (perf-changelog.yaml:17), but the recipe "
        f"passes --state-checkpoint-interval-tokens 8192 ({RECIPE}:19) for all 5 DEP jobs of {KEY}")
    assert [(r["path"], r["line"]) for r in req["related"]] == [(RECIPE, 25)]
    assert [(r["path"], r["line"]) for r in interval["related"]] == [(RECIPE, 19)]
    assert interval["data"]["config_key"] == KEY
    assert interval["data"]["claimed"] == "32768 tokens"
    assert interval["data"]["actual"] == "8192"
    assert len(interval["data"]["jobs"]) == 5
    assert all("TP8/EP8/DPA" in j for j in interval["data"]["jobs"])
    # The spans cover the words of the claim in the file.
    assert (interval["end_line"], interval["end_column"]) == (17, 185)
    line = (repo / "perf-changelog.yaml").read_text().splitlines()[16]
    assert line[interval["column"] - 1:interval["end_column"] - 1] == "state checkpoint interval to 32768 tokens"
    assert line[req["column"] - 1:req["end_column"] - 1] == "zero request equivalence"


def test_seed_pr_true_claims_and_undocumented_changes(tmp_path: Path) -> None:
    repo, base = seed_repo(tmp_path)
    _, report = run_claims(repo, "--base", base, "--head", "HEAD")
    others = [f for f in report["findings"] if f["severity"] == "warning"]
    # Nothing for TP8/DPA8/EP8, TBO/EPLB off, the image pin, the TP band, real MTP acceptance on DEP.
    # The one change the entry does not mention is the MoE backend the DEP branch now passes.
    assert [(f["rule"], f["message"]) for f in others] == [
        ("claim-undocumented-change",
         f"--moe-backend standard was added for 5 jobs of {KEY}; the changelog entry does not mention it"),
    ]


def test_corrected_changelog_gives_no_claim_error(tmp_path: Path) -> None:
    repo, base = seed_repo(tmp_path, changelog="perf-changelog.corrected.yaml")
    code, report = run_claims(repo, "--base", base, "--head", "HEAD", "--select", "claim-contradicted",
                              "--select", "claim-partly-contradicted")
    assert report["findings"] == []
    assert code == 0


def test_dep_branch_still_passing_enable_tbo_gives_the_tbo_error(tmp_path: Path) -> None:
    repo, base = seed_repo(tmp_path, changelog="perf-changelog.corrected.yaml", recipe="recipe_still_tbo.sh")
    code, report = run_claims(repo, "--base", base, "--head", "HEAD")
    assert code == 1
    errs = errors(report)
    assert [brief(f) for f in errs] == [("claim-contradicted", "perf-changelog.yaml", 17, 37, "--enable-tbo")]
    assert errs[0]["message"] == (
        "changelog says TBO is off (perf-changelog.yaml:17), but the recipe passes --enable-tbo "
        f"({RECIPE}:27) for all 5 DEP jobs of {KEY}")


def test_pr_description_english_and_chinese_are_checked(tmp_path: Path) -> None:
    repo, base = seed_repo(tmp_path, changelog="perf-changelog.corrected.yaml")
    body = tmp_path / "pr_body.md"
    shutil.copyfile(DATA / "variants" / "pr_body.md", body)
    code, report = run_claims(repo, "--base", base, "--head", "HEAD", "--pr-body", str(body))
    # A description's contradicted claims warn (README "Claims"): the check passes, each is reported.
    assert code == 0 and errors(report) == []
    errs = described(report)
    assert [(f["line"], f["column"], f["data"]["subject"], f["data"]["claimed"]) for f in errs] == [
        (6, 82, "ATOM_DP_LB_REQ_EQUIV", "0"),
        (6, 107, "--state-checkpoint-interval-tokens", "32K"),
        (11, 53, "ATOM_DP_LB_REQ_EQUIV", "0"),
        (11, 77, "--state-checkpoint-interval-tokens", "32K"),
    ]
    assert errs[2]["message"].startswith(
        f"PR description says ATOM_DP_LB_REQ_EQUIV is 0 ({body}:11), but the recipe exports ATOM_DP_LB_REQ_EQUIV=512")
    assert errs[2]["message"].endswith(f"for the only c48 job of {KEY}")
    lines = body.read_text().splitlines()
    assert [lines[f["line"] - 1][f["column"] - 1:f["end_column"] - 1] for f in errs] == [
        "ATOM_DP_LB_REQ_EQUIV=0", "32K state checkpoints", "ATOM_DP_LB_REQ_EQUIV=0", "32K state checkpoint"]


def test_corrected_pr_description_gives_no_error(tmp_path: Path) -> None:
    repo, base = seed_repo(tmp_path, changelog="perf-changelog.corrected.yaml")
    body = tmp_path / "pr_body.md"
    shutil.copyfile(DATA / "variants" / "pr_body.corrected.md", body)
    code, report = run_claims(repo, "--base", base, "--head", "HEAD", "--pr-body", str(body))
    assert errors(report) == []
    assert code == 0


def test_pr_description_tbo_off_in_both_languages_against_a_tbo_recipe(tmp_path: Path) -> None:
    repo, base = seed_repo(tmp_path, changelog="perf-changelog.corrected.yaml", recipe="recipe_still_tbo.sh")
    body = tmp_path / "pr_body.md"
    shutil.copyfile(DATA / "variants" / "pr_body.corrected.md", body)
    _, report = run_claims(repo, "--base", base, "--head", "HEAD", "--pr-body", str(body))
    tbo = [(f["path"], f["line"], f["severity"]) for f in [*errors(report), *described(report)]
           if f["data"]["subject"] == "--enable-tbo"]
    assert sorted(tbo) == sorted([("perf-changelog.yaml", 17, "error"), (str(body), 3, "warning"),
                                  (str(body), 8, "warning")])


def test_verbose_lists_unverified_phrases(tmp_path: Path) -> None:
    repo, base = seed_repo(tmp_path)
    body = tmp_path / "pr_body.md"
    shutil.copyfile(DATA / "variants" / "pr_body.md", body)
    quiet = subprocess.run([sys.executable, "-m", "ci_tools", "claims", "--repo", str(repo), "--base", base,
                            "--pr-body", str(body), "--format", "text", "--select", "claim-unverified"],
                           capture_output=True, text=True, cwd=repo)
    assert (quiet.returncode, quiet.stdout) == (0, "")
    _, report = run_claims(repo, "--base", base, "--head", "HEAD", "--pr-body", str(body), "--verbose",
                           "--select", "claim-unverified")
    # "session affinity" names --dp-session-affinity, but a list item without a verb asserts no value.
    assert [(f["severity"], f["line"], f["message"]) for f in report["findings"]] == [
        ("note", 6, "not verified: `session affinity`: no value next to the subject"),
        ("note", 11, "not verified: `session affinity`: no value next to the subject"),
    ]


@pytest.mark.parametrize("args, message", [
    (("--since", "HEAD"), "--since only applies with --history"),
    (("--history", "--base", "HEAD"), "--history replays the whole changelog history"),
])
def test_usage_errors(tmp_path: Path, args: tuple[str, ...], message: str) -> None:
    repo, _ = seed_repo(tmp_path)
    proc = subprocess.run([sys.executable, "-m", "ci_tools", "claims", "--repo", str(repo), *args],
                          capture_output=True, text=True, cwd=repo)
    assert proc.returncode == 2
    assert message in proc.stderr


# Each gives a value the recipe does not have, and each was an error: what was, what another change did, or what
# somebody might write.
NOT_CLAIMS = {
    "template comment": "<!-- Template: list every setting you changed, e.g. ATOM_DP_LB_REQ_EQUIV=0 -->\n",
    "fenced repro": "Repro of the old crash:\n\n```bash\nATOM_DP_LB_REQ_EQUIV=0 python3 -m "
                    "atom.entrypoints.openai_server --state-checkpoint-interval-tokens 32768\n```\n",
    "before label": "Before: `ATOM_DP_LB_REQ_EQUIV=0`. After: `ATOM_DP_LB_REQ_EQUIV=512`.\n",
    "bold before label": "- **Before**: `ATOM_DP_LB_REQ_EQUIV=0` / **After**: `ATOM_DP_LB_REQ_EQUIV=512`\n",
    "past relative aside": "Related: #2778 (which set `ATOM_DP_LB_REQ_EQUIV=0`).\n",
}


@pytest.mark.parametrize("name", sorted(NOT_CLAIMS))
def test_pr_description_words_that_claim_nothing(tmp_path: Path, name: str) -> None:
    repo, base = seed_repo(tmp_path, changelog="perf-changelog.corrected.yaml")
    body = tmp_path / "pr_body.md"
    body.write_text((DATA / "variants" / "pr_body.corrected.md").read_text(encoding="utf-8") + "\n" + NOT_CLAIMS[name],
                    encoding="utf-8")
    code, report = run_claims(repo, "--base", base, "--head", "HEAD", "--pr-body", str(body))
    assert (code, errors(report)) == (0, [])


def test_pr_description_prose_after_a_code_block_is_still_checked(tmp_path: Path) -> None:
    repo, base = seed_repo(tmp_path, changelog="perf-changelog.corrected.yaml")
    body = tmp_path / "pr_body.md"
    body.write_text((DATA / "variants" / "pr_body.corrected.md").read_text(encoding="utf-8") + "\n"
                    + NOT_CLAIMS["fenced repro"] + "\nSet ATOM_DP_LB_REQ_EQUIV=0 for the DEP band.\n", encoding="utf-8")
    code, report = run_claims(repo, "--base", base, "--head", "HEAD", "--pr-body", str(body))
    lines = body.read_text(encoding="utf-8").splitlines()
    assert code == 0
    assert [(f["data"]["subject"], lines[f["line"] - 1]) for f in described(report)] == [
        ("ATOM_DP_LB_REQ_EQUIV", "Set ATOM_DP_LB_REQ_EQUIV=0 for the DEP band.")]
