"""A real launcher that copies recipes under another name: InferenceX ecc908710216 (#1663).

``runners/launch_b300-nv.sh`` there copies ``srt-slurm-recipes/vllm/minimax-m2.5-b300`` to
``recipes/vllm/minimax-m2.5`` (and ``...-b300-fp8`` to ``...-fp8``) in its srt-slurm checkout, so the
B300 rows' ``CONFIG_FILE=recipes/vllm/minimax-m2.5/...`` are the ``-b300`` files.  Read without the copy,
3 of the 15 FP4 rows and all 15 FP8 rows were ``recipe-missing`` (the repository's ``minimax-m2.5/``
and ``minimax-m2.5-fp8/`` are GB300's recipes), and the other 12 FP4 rows were evaluated with GB300's
recipe of the same name.  The extract (tests/data/check_real/ecc908710216, README there) keeps the two
configs, the launcher, the B300 recipes they name and one GB300 recipe of each directory.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ci_tools.config import load_config
from ci_tools.jobs.contract import resolve_recipe
from ci_tools.jobs.matrix import expand
from ci_tools.model.repository import load_repo
from ci_tools.revision.snapshot import GitSnapshot
from test_changelog_support import Repo, run
from test_claims_real import replay

DATA = Path(__file__).parent / "data" / "check_real"
CASE = "ecc908710216"
RECIPES = "benchmarks/multi_node/srt-slurm-recipes/vllm"
FP4, FP8 = "minimaxm2.5-fp4-b300-dynamo-vllm", "minimaxm2.5-fp8-b300-dynamo-vllm"


@pytest.fixture
def case(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Repo, str]:
    return replay(CASE, tmp_path, monkeypatch, data=DATA)


def findings(repo: Repo, base: str, capsys: pytest.CaptureFixture[str]) -> list[dict[str, object]]:
    code, out, err = run(["check", "--repo", str(repo.path), "--base", base, "--format", "json"], capsys)
    assert code in (0, 1), err
    found: list[dict[str, object]] = json.loads(out)["findings"]
    return found


def test_the_rows_name_the_recipes_the_launcher_copied(case: tuple[Repo, str],
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    repo, base = case
    assert [f for f in findings(repo, base, capsys) if f["rule"] == "recipe-missing"] == []


def test_each_job_resolves_to_the_b300_recipe_not_the_directory_of_the_same_name(case: tuple[Repo, str]) -> None:
    repo, _ = case
    config = load_config(repo.path)
    snapshot = GitSnapshot(repo.path, "HEAD")
    data = load_repo(snapshot, config, with_changelog=False)
    jobs = [j for j in expand(data) if j.config_key in (FP4, FP8)]
    assert len({j.row.line for j in jobs}) == 30
    for job in jobs:
        resolution = resolve_recipe(job, config, snapshot)
        reference = str(resolution.reference)
        copied = "minimax-m2.5-b300-fp8/" if "minimax-m2.5-fp8/" in reference else "minimax-m2.5-b300/"
        assert resolution.path == f"{RECIPES}/{copied}{reference.split('/', 3)[3]}", reference
        assert resolution.fleets == ("b300-nv",)
        line = 81 if "fp8" in copied else 75
        assert resolution.copied_by == (f"runners/launch_b300-nv.sh:{line} copies {RECIPES}/{copied} to "
                                        f"{reference.rsplit('/', 2)[0]}/ in the srt-slurm checkout")
    # The GB300 recipe of the same name is in the repository, and is not what the B300 row runs.
    same_name = [resolve_recipe(j, config, snapshot) for j in jobs if str(j.fields["prefill"]["additional-settings"])
                 .count("recipes/vllm/minimax-m2.5/1k1k/tp4-1p1d.yaml")]
    assert same_name and {r.path for r in same_name} == {f"{RECIPES}/minimax-m2.5-b300/1k1k/tp4-1p1d.yaml"}
    assert (repo.path / RECIPES / "minimax-m2.5/1k1k/tp4-1p1d.yaml").is_file()
    assert same_name[0].describe() == (
        f"srt-slurm recipe {RECIPES}/minimax-m2.5-b300/1k1k/tp4-1p1d.yaml (runners/launch_b300-nv.sh:75 copies "
        f"{RECIPES}/minimax-m2.5-b300/ to recipes/vllm/minimax-m2.5/ in the srt-slurm checkout)")


def test_a_name_the_copied_directory_lacks_is_missing_there(case: tuple[Repo, str],
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    repo, _ = case
    master = repo.path / ".github/configs/nvidia-master.yaml"
    master.write_text(master.read_text().replace("recipes/vllm/minimax-m2.5/1k1k/tp4-1p1d.yaml",
                                                 "recipes/vllm/minimax-m2.5/1k1k/tp4-1p1e.yaml"))
    base = repo.commit({}, "a name no copied recipe has")
    missing = [f for f in findings(repo, f"{base}~1", capsys) if f["rule"] == "recipe-missing"]
    assert len(missing) == 1
    message = str(missing[0]["message"])
    assert (f"{RECIPES}/minimax-m2.5-b300/1k1k/tp4-1p1e.yaml does not exist, and the recipe is "
            "recipes/vllm/minimax-m2.5/1k1k/tp4-1p1e.yaml only as runners/launch_b300-nv.sh:75 copies "
            f"{RECIPES}/minimax-m2.5-b300/ to recipes/vllm/minimax-m2.5/ in the srt-slurm checkout") in message
    assert message.endswith("; closest: tp4-1p1d.yaml, tp4ep-1p1d.yaml, tp8-1p1d.yaml")  # names in the copied directory
