"""Change coverage through real git histories: which configs a change affects, and why."""

from __future__ import annotations

from pathlib import Path

import pytest

from ci_tools.check import CheckContext, Comparison
from ci_tools.config import load_config
from ci_tools.changelog.coverage import RecipeDeps, affected_keys, first_changed_line
from ci_tools.revision.snapshot import WorkTreeSnapshot
from test_changelog_support import E1, MASTER, Repo, base_files, entry, new_repo, run

GPTOSS = b"""
gptoss-fp4-mi355x-vllm:
  image: vllm/vllm-openai:v0.11.0
  model: openai/gpt-oss-120b
  model-prefix: gptoss
  runner: mi355x
  precision: fp4
  framework: vllm
  multinode: false
  scenarios:
    fixed-seq-len:
    - isl: 1024
      osl: 1024
      search-space:
      - { tp: 1, conc-list: [4, 8] }
"""
ATOM = "benchmarks/single_node/fixed_seq_len/dsr1_fp8_mi355x_atom.sh"
VLLM = "benchmarks/single_node/fixed_seq_len/gptoss_fp4_mi355x_vllm.sh"


def recipe(body: str, sources: str = 'source "$(dirname "$0")/../../benchmark_lib.sh"') -> bytes:
    return f"#!/usr/bin/env bash\nset -euo pipefail\n{sources}\n{body}\n".encode()


def files() -> dict[str, bytes | None]:
    out = base_files(E1, MASTER + GPTOSS)
    out.update({
        "benchmarks/benchmark_lib.sh": b"#!/usr/bin/env bash\nhelper() { :; }\n",
        "benchmarks/atom_env.sh": b"export ATOM_DP_LB_REQ_EQUIV=0\n",
        ATOM: recipe("vllm serve \"$MODEL\"", 'source "$(dirname "$0")/../../benchmark_lib.sh"\n. "${SCRIPT_DIR}/../../atom_env.sh"'),
        VLLM: recipe("vllm serve \"$MODEL\""),
        "README.md": b"# bench\n",
    })
    return out


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Repo, str]:
    return new_repo(tmp_path, monkeypatch, files())


def affected(r: Repo, base: str) -> dict[str, list[tuple[str, int, str]]]:
    ctx = CheckContext(load_config(r.path), Comparison(base))
    return {a.key: [(c.path, c.line, c.reason) for c in a.causes] for a in affected_keys(ctx.change_inputs())}


def test_docs_tests_and_changelog_changes_affect_nothing(repo: tuple[Repo, str]) -> None:
    r, base = repo
    r.write({"README.md": b"# bench\n\nMore docs.\n", "tests/test_x.py": b"assert True\n",
             "perf-changelog.yaml": E1 + b"\n" + entry()})
    assert affected(r, base) == {}


def test_comment_only_master_change_affects_nothing(repo: tuple[Repo, str]) -> None:
    r, base = repo
    r.write({"configs/amd-master.yaml": b"# configs\n" + MASTER + GPTOSS})
    assert affected(r, base) == {}


def test_master_entry_change_points_at_the_changed_line(repo: tuple[Repo, str]) -> None:
    r, base = repo
    r.write({"configs/amd-master.yaml": MASTER + GPTOSS.replace(b"conc-list: [4, 8]", b"conc-list: [4, 8, 16]")})
    assert affected(r, base) == {"gptoss-fp4-mi355x-vllm": [("configs/amd-master.yaml", 29, "master-config entry changed")]}


def test_new_config_is_affected_at_its_key_line(repo: tuple[Repo, str]) -> None:
    r, base = repo
    r.write({"configs/amd-master.yaml": MASTER + GPTOSS + GPTOSS.replace(b"gptoss-fp4-mi355x-vllm:", b"gptoss-fp4-mi355x-vllm-mtp:")})
    assert affected(r, base) == {"gptoss-fp4-mi355x-vllm-mtp": [("configs/amd-master.yaml", 31, "new config")]}


def test_recipe_sourced_file_and_benchmark_lib(repo: tuple[Repo, str]) -> None:
    r, base = repo
    r.write({"benchmarks/atom_env.sh": b"export ATOM_DP_LB_REQ_EQUIV=512\n"})
    assert affected(r, base) == {"dsr1-fp8-mi355x-atom": [("benchmarks/atom_env.sh", 1, f"file sourced by {ATOM} changed")]}
    # A function no recipe calls changes no run; a variable the library exports, when sourced, changes them all.
    r.write({"benchmarks/atom_env.sh": b"export ATOM_DP_LB_REQ_EQUIV=0\n",
             "benchmarks/benchmark_lib.sh": b"#!/usr/bin/env bash\nhelper() { echo; }\n"})
    assert affected(r, base) == {}
    r.write({"benchmarks/benchmark_lib.sh": b"#!/usr/bin/env bash\nhelper() { :; }\nexport VLLM_USE_V1=1\n"})
    assert affected(r, base) == {
        "dsr1-fp8-mi355x-atom": [("benchmarks/benchmark_lib.sh", 3, "benchmark_lib.sh changed")],
        "gptoss-fp4-mi355x-vllm": [("benchmarks/benchmark_lib.sh", 3, "benchmark_lib.sh changed")],
    }


def test_a_new_framework_specific_recipe_changes_what_jobs_run(repo: tuple[Repo, str]) -> None:
    r, base = repo
    # A recipe without the framework suffix existed; a framework-specific one now takes precedence.
    r.commit({VLLM: None, "benchmarks/single_node/fixed_seq_len/gptoss_fp4_mi355x.sh": recipe("vllm serve x")})
    moved = r.commit({VLLM: recipe("vllm serve y")})
    found = affected(r, f"{moved}~1")
    assert found == {"gptoss-fp4-mi355x-vllm": [
        (VLLM, 1, f"jobs now run {VLLM} instead of benchmarks/single_node/fixed_seq_len/gptoss_fp4_mi355x.sh"),
        (VLLM, 1, "recipe changed"),
    ]}


def test_runner_hardware_change_affects_configs_whose_jobs_change(repo: tuple[Repo, str]) -> None:
    r, base = repo
    # Fixed-seq-len jobs carry no DRAM figure, so a hardware change alters none of them.
    r.write({"configs/runners.yaml": base_files()["configs/runners.yaml"].replace(b"3_095_781", b"2_000_000")})  # type: ignore[union-attr]
    assert affected(r, base) == {}


def test_recipe_deps_resolve_script_dir_and_relative_sources(repo: tuple[Repo, str]) -> None:
    r, _ = repo
    deps = RecipeDeps(WorkTreeSnapshot(r.path), load_config(r.path))
    assert deps.closure(ATOM) == {ATOM, "benchmarks/benchmark_lib.sh", "benchmarks/atom_env.sh"}


def test_first_changed_line() -> None:
    assert first_changed_line(b"a\nb\nc\n", b"a\nB\nc\n") == 2
    assert first_changed_line(b"a\n", b"a\nb\n") == 2
    assert first_changed_line(None, b"x\n") == 1
    assert first_changed_line(b"x\n", None) == 0


def test_check_reports_each_uncovered_key_with_file_and_line(repo: tuple[Repo, str], capsys: pytest.CaptureFixture[str]) -> None:
    r, base = repo
    r.write({"benchmarks/benchmark_lib.sh": b"#!/usr/bin/env bash\nhelper() { :; }\nexport VLLM_USE_V1=1\n",
             "perf-changelog.yaml": E1 + b"\n" + entry("dsr1-*")})
    code, out, _ = run(["check", "--repo", str(r.path), "--base", base, "--select", "coverage-"], capsys)
    assert code == 1
    assert out == (
        "benchmarks/benchmark_lib.sh:3:1: error: config `gptoss-fp4-mi355x-vllm` is affected by this change "
        "(benchmark_lib.sh changed at benchmarks/benchmark_lib.sh:3) but no entry appended to perf-changelog.yaml covers it; "
        "expected an appended entry whose config-keys match `gptoss-fp4-mi355x-vllm` [coverage-uncovered-key]\n"
        "1 error(s), 0 warning(s), 0 note(s)\n"
    )


def test_untracked_recipe_in_the_work_tree_counts_as_a_change(repo: tuple[Repo, str]) -> None:
    r, base = repo
    # A new framework-specific recipe, not yet added to git, takes over the vLLM config's jobs.
    r.write({"configs/amd-master.yaml": MASTER + GPTOSS.replace(b"framework: vllm", b"framework: vllm\n  # x")})
    assert affected(r, base) == {}
    r.commit({VLLM: None, "benchmarks/single_node/fixed_seq_len/gptoss_fp4_mi355x.sh": recipe("vllm serve x")})
    second = r.commit({})
    r.write({VLLM: recipe("vllm serve y")})  # untracked
    assert affected(r, second) == {"gptoss-fp4-mi355x-vllm": [
        (VLLM, 1, f"jobs now run {VLLM} instead of benchmarks/single_node/fixed_seq_len/gptoss_fp4_mi355x.sh"),
        (VLLM, 1, "recipe changed"),
    ]}


def test_launcher_of_the_runners_fleet(repo: tuple[Repo, str]) -> None:
    r, _ = repo
    second = r.commit({"runners/launch_mi355x-amds.sh": b"#!/usr/bin/env bash\nbash \"$RECIPE\"\n",
                       "runners/launch_other.sh": b"#!/usr/bin/env bash\n"})
    r.write({"runners/launch_other.sh": b"#!/usr/bin/env bash\nexit 0\n"})
    assert affected(r, second) == {}  # no runner label names a node of that fleet
    r.write({"runners/launch_mi355x-amds.sh": b"#!/usr/bin/env bash\nexport HIP_VISIBLE_DEVICES=0\nbash \"$RECIPE\"\n"})
    cause = ("runners/launch_mi355x-amds.sh", 2, "launcher of runner mi355x changes what the job runs: bash at "
             "runners/launch_mi355x-amds.sh:3 starts with another environment (HIP_VISIBLE_DEVICES)")
    assert affected(r, second) == {"dsr1-fp8-mi355x-atom": [cause], "gptoss-fp4-mi355x-vllm": [cause]}
