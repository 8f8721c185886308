"""``ci-tools validate`` end to end: the real corpus, and broken input files."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from ci_tools.cli.main import main
from conftest import full_corpus_dir
from fixture_trees import copy_tree

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "rules"
RECIPE = "benchmarks/single_node/fixed_seq_len/dsv4_fp4_mi355x_atom.sh"


def run_json(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, list[dict[str, Any]], str]:
    capsys.readouterr()
    code = main([*argv, "--format", "json"])
    captured = capsys.readouterr()
    findings = json.loads(captured.out)["findings"] if captured.out else []
    return code, findings, captured.err


@pytest.fixture(autouse=True)
def _outside_actions(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)


# The real InferenceX tree at 843c6254f has exactly these defects within validate's rules:
# - 8 configs run on runner labels runners.yaml does not define;
# - qwen3.5-fp8-h100-sglang-agentic (2 rows) needs a recipe that was deleted;
# - dsv4-fp4-gb300-dynamo-vllm-agentic (3 rows) names srt-slurm recipes that
#   PR #2561 deleted from benchmarks/multi_node/srt-slurm-recipes/vllm/deepseek-v4/agentic/
#   (with the config rows using them) and PR #2601 brought the rows back without
#   them: launch_gb300-nv.sh copies that directory over its NVIDIA/srt-slurm
#   v1.0.36 checkout, which has no such recipe, and stops ("CONFIG_FILE does not
#   exist after srt-slurm setup").
REAL_DEFECTS = [
    ("runner-undefined", "configs/amd-master.yaml", 1629, "dsv4-fp8-mi325x-vllm"),
    ("runner-undefined", "configs/amd-master.yaml", 1651, "dsv4-fp8-mi325x-vllm-mtp"),
    ("runner-undefined", "configs/nvidia-master.yaml", 1668, "dsv4-fp8-h200-sglang"),
    ("runner-undefined", "configs/nvidia-master.yaml", 1687, "dsv4-fp8-h200-sglang-mtp"),
    ("runner-undefined", "configs/nvidia-master.yaml", 3308, "dsr1-fp8-gb300-dynamo-trt"),
    ("runner-undefined", "configs/nvidia-master.yaml", 5186, "dsv4-fp4-gb300-dynamo-vllm"),
    ("runner-undefined", "configs/nvidia-master.yaml", 5469, "dsv4-fp4-gb300-dynamo-trt"),
    ("runner-undefined", "configs/nvidia-master.yaml", 5668, "dsv4-fp4-gb300-dynamo-trt-mtp"),
    ("recipe-missing", "configs/nvidia-master.yaml", 7147, "dsv4-fp4-gb300-dynamo-vllm-agentic"),
    ("recipe-missing", "configs/nvidia-master.yaml", 7163, "dsv4-fp4-gb300-dynamo-vllm-agentic"),
    ("recipe-missing", "configs/nvidia-master.yaml", 7180, "dsv4-fp4-gb300-dynamo-vllm-agentic"),
    ("recipe-missing", "configs/nvidia-master.yaml", 7199, "qwen3.5-fp8-h100-sglang-agentic"),
    ("recipe-missing", "configs/nvidia-master.yaml", 7200, "qwen3.5-fp8-h100-sglang-agentic"),
]


def test_real_tree_reports_exactly_its_real_defects(capsys: pytest.CaptureFixture[str]) -> None:
    tree = full_corpus_dir()
    code, findings, err = run_json(["validate", "--repo", str(tree)], capsys)
    assert (code, err) == (1, "")
    assert [(f["rule"], f["path"], f["line"], f["data"]["config_key"]) for f in findings] == REAL_DEFECTS
    by_line = {f["line"]: f for f in findings}
    assert by_line[1629]["message"] == (
        "runner label `cluster:mi325x-tw` of `dsv4-fp8-mi325x-vllm` is not defined in configs/runners.yaml; "
        "closest defined: cluster:mi300x-tw, cluster:mi325x-amds, cluster:mi355x-amds")
    assert by_line[7199]["message"] == (
        "no recipe script for this agentic-coding row of `qwen3.5-fp8-h100-sglang-agentic`: "
        "runners/launch_h100-dgxc-slurm.sh runs benchmarks/single_node/agentic/qwen3.5_fp8_h100.sh, which does not exist")
    deleted = by_line[7147]
    # At the CONFIG_FILE entry, not at the row: that is the line to fix.
    assert (deleted["column"], deleted["data"]["kind"], deleted["data"]["fleets"]) == (13, "srt-slurm", ["gb300-nv"])
    assert deleted["message"].startswith(
        "`CONFIG_FILE=recipes/vllm/deepseek-v4/agentic/disagg-gb300-1p6d-dep4-tp4-agentic.yaml` of this agentic-coding "
        "row of `dsv4-fp4-gb300-dynamo-vllm-agentic` names no recipe: benchmarks/multi_node/srt-slurm-recipes/vllm/"
        "deepseek-v4/agentic/disagg-gb300-1p6d-dep4-tp4-agentic.yaml does not exist, while the repository holds "
        "benchmarks/multi_node/srt-slurm-recipes/vllm/deepseek-v4/agentic/, which runners/launch_gb300-nv.sh copies over "
        "the srt-slurm checkout; closest: ")
    lines = (tree / "configs" / "nvidia-master.yaml").read_text(encoding="utf-8").splitlines()
    assert lines[7146].strip() == '- "CONFIG_FILE=recipes/vllm/deepseek-v4/agentic/disagg-gb300-1p6d-dep4-tp4-agentic.yaml"'


def _rows_running_a_script(tree: Path) -> int:
    """Search-space rows whose launcher runs a bash script (not an srt-slurm recipe), counted from the YAML alone."""
    import yaml

    script_frameworks = {"sglang-disagg", "vllm-disagg", "atom-disagg", "llmd-vllm", "tilert"}
    count = 0
    for name in ("amd-master.yaml", "nvidia-master.yaml"):
        data = yaml.safe_load((tree / "configs" / name).read_text(encoding="utf-8"))
        for config in data.values():
            if config["multinode"] and config["framework"] not in script_frameworks:
                continue
            count += sum(len(block["search-space"]) for blocks in config["scenarios"].values() for block in blocks)
    return count


def test_real_configs_without_the_benchmarks_tree_miss_every_script_and_no_srt_slurm_recipe(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Without benchmarks/, every row whose launcher runs a bash script misses it;
    # srt-slurm rows do not: their recipes are then the srt-slurm checkout's
    # (external), since the repository no longer holds any recipe directory.
    tree = full_corpus_dir()
    repo = tmp_path / "configs-only"
    shutil.copytree(tree / "configs", repo / "configs")
    code, findings, _ = run_json(["validate", "--repo", str(repo), "--select", "recipe-missing"], capsys)
    assert code == 1
    assert {f["data"]["kind"] for f in findings} == {"script"}
    # One finding per search-space row (not per concurrency), each at its row.
    assert len({(f["path"], f["line"]) for f in findings}) == len(findings) == _rows_running_a_script(tree)


def _repo(tmp_path: Path, files: dict[str, str | bytes | None]) -> Path:
    repo = tmp_path / "repo"
    copy_tree(FIXTURES / "recipe-missing" / "ok" / "framework-recipe", repo)
    for rel, content in files.items():
        path = repo / rel
        if content is None:
            path.unlink()
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    return repo


def test_the_base_repository_of_these_tests_is_clean(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, findings, _ = run_json(["validate", "--repo", str(_repo(tmp_path, {}))], capsys)
    assert (code, findings) == (0, [])


@pytest.mark.parametrize(("files", "rule", "where", "message"), [
    pytest.param({"configs/amd-master.yaml": "a: [1, 2\nb: 3\n"}, "yaml-syntax", ("configs/amd-master.yaml", 2, 2),
                 "invalid YAML: did not find expected ',' or ']' (while parsing a flow sequence)", id="malformed-yaml"),
    pytest.param({"configs/amd-master.yaml": "- one\n- two\n"}, "config-schema", ("configs/amd-master.yaml", 1, 1),
                 "a master config file must be a mapping from config keys to configs, found a list", id="master-root-list"),
    pytest.param({"configs/amd-master.yaml": "just a string\n"}, "config-schema", ("configs/amd-master.yaml", 1, 1),
                 'a master config file must be a mapping from config keys to configs, found the string "just a string"',
                 id="master-root-scalar"),
    pytest.param({"configs/runners.yaml": "42\n"}, "runners-schema", ("configs/runners.yaml", 1, 1),
                 "the runners file must be a mapping with `labels` and `hardware`, found the integer 42", id="runners-root-int"),
    pytest.param({"perf-changelog.yaml": "config-keys: [a]\n"}, "changelog-entry-schema", ("perf-changelog.yaml", 1, 1),
                 "the changelog must be a list of entries, found a mapping", id="changelog-root-mapping"),
    pytest.param({"configs/runners.yaml": b"labels:\n  mi355x:\n  - caf\xc3\n"}, "yaml-syntax", ("configs/runners.yaml", 3, 8),
                 "file is not valid UTF-8: found byte 0xc3, expected UTF-8 text", id="non-utf8"),
    pytest.param({"configs/amd-master.yaml": ""}, "yaml-syntax", ("configs/amd-master.yaml", 1, 1),
                 "file is empty; expected a YAML document", id="empty-master"),
    pytest.param({"perf-changelog.yaml": "# nothing yet\n"}, "yaml-syntax", ("perf-changelog.yaml", 1, 1),
                 "file is empty; expected a YAML document", id="comment-only-changelog"),
    pytest.param({"configs/runners.yaml": None}, "file-missing", ("configs/runners.yaml", 0, 0),
                 "file configs/runners.yaml does not exist in the work tree; expected it because the configuration names it",
                 id="missing-runners"),
])
def test_broken_input_gives_one_clear_finding(tmp_path: Path, capsys: pytest.CaptureFixture[str], files: dict[str, Any],
                                              rule: str, where: tuple[str, int, int], message: str) -> None:
    code, findings, err = run_json(["validate", "--repo", str(_repo(tmp_path, files))], capsys)
    assert code == 1
    assert err == ""
    assert [(f["rule"], (f["path"], f["line"], f["column"]), f["message"]) for f in findings] == [(rule, where, message)]


def test_bad_project_configuration_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = _repo(tmp_path, {".ci-tools.yaml": "runners: [a, b]\n"})
    code = main(["validate", "--repo", str(repo)])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("ci-tools: error: ") and ".ci-tools.yaml:1:" in err and "Traceback" not in err


def test_rev_validates_a_committed_revision(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import subprocess

    repo = _repo(tmp_path, {})
    env = {"GIT_AUTHOR_NAME": "T", "GIT_AUTHOR_EMAIL": "t@example.invalid", "GIT_COMMITTER_NAME": "T",
           "GIT_COMMITTER_EMAIL": "t@example.invalid", "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1",
           "PATH": "/usr/bin:/bin"}
    for cmd in (["init", "-q"], ["add", "-A"], ["-c", "commit.gpgsign=false", "commit", "-q", "-m", "base"]):
        subprocess.run(["git", *cmd], cwd=repo, env=env, check=True)
    # Break the work tree: the committed revision is still clean.
    (repo / "configs" / "runners.yaml").write_text("labels: {}\n", encoding="utf-8")
    code, findings, _ = run_json(["validate", "--repo", str(repo), "--rev", "HEAD"], capsys)
    assert (code, findings) == (0, [])
    code, findings, _ = run_json(["validate", "--repo", str(repo)], capsys)
    assert code == 1 and {f["rule"] for f in findings} == {"runners-schema", "runner-undefined"}


def test_a_clean_run_never_imports_jsonschema(tmp_path: Path) -> None:
    # jsonschema (about 0.1 s to import) is only needed to explain invalid data.
    import subprocess
    import sys

    repo = _repo(tmp_path, {})
    broken = _repo(tmp_path / "broken", {"configs/runners.yaml": "labels: {mi355x: [x_1]}\nhardware: {}\nextra: 1\n"})
    code = ("import sys; from ci_tools.cli.main import main; rc = main(['validate', '--repo', sys.argv[1], "
            "'--output', sys.argv[2]]); print(rc, 'jsonschema' in sys.modules)")
    clean = subprocess.run([sys.executable, "-c", code, str(repo), str(tmp_path / "a.txt")],
                           capture_output=True, text=True, check=True)
    dirty = subprocess.run([sys.executable, "-c", code, str(broken), str(tmp_path / "b.txt")],
                           capture_output=True, text=True, check=True)
    assert (clean.stdout, dirty.stdout) == ("0 False\n", "1 True\n")
