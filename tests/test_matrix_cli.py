"""``ci-tools matrix`` end to end: JSON output, shard files, GitHub outputs, --base, --explain."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import full_corpus_dir

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test", "GIT_AUTHOR_EMAIL": "test@example.invalid",
    "GIT_COMMITTER_NAME": "Test", "GIT_COMMITTER_EMAIL": "test@example.invalid",
    "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_SYSTEM": "/dev/null", "PATH": "/usr/bin:/bin",
}


def run(root: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full_env = {k: v for k, v in os.environ.items() if k not in ("GITHUB_OUTPUT", "GITHUB_ACTIONS")}
    full_env.update(env or {})
    return subprocess.run([sys.executable, "-m", "ci_tools", "matrix", "--repo", str(root), *args],
                          capture_output=True, text=True, env=full_env)


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), "-c", "commit.gpgsign=false", *args],
                          check=True, capture_output=True, text=True, env=GIT_ENV).stdout.strip()


def committed_copy(source: Path, repo: Path) -> Path:
    """A git repository holding a copy of ``source`` in one commit on branch main."""
    shutil.copytree(source, repo)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "base")
    return repo


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The real tree's configs and changelog as a writable repository."""
    root = tmp_path_factory.mktemp("corpus") / "repo"
    (root / "configs").mkdir(parents=True)
    for name in ("configs/amd-master.yaml", "configs/nvidia-master.yaml", "configs/runners.yaml",
                 "perf-changelog.yaml"):
        shutil.copyfile(full_corpus_dir() / name, root / name)
    (root / ".ci-tools.yaml").write_text("repository: SemiAnalysisAI/InferenceX\n")
    return root


def test_stdout_json_is_the_sharded_full_sweep_and_reproducible(corpus: Path) -> None:
    first, second = run(corpus), run(corpus)
    assert first.returncode == 0, first.stderr
    assert first.stdout == second.stdout
    doc = json.loads(first.stdout)
    index, shards = doc["index"], doc["shards"]
    assert (index["total-jobs"], index["shard-count"]) == (1820, 8)
    assert [len(s["include"]) for s in shards] == [228] * 4 + [227] * 4
    entries = [e for s in shards for e in s["include"]]
    assert len({e["id"] for e in entries}) == 1820
    assert all(len(json.dumps(s, separators=(",", ":"))) < 1_000_000 for s in shards)
    # InferenceX's entries (its generator's output at 843c625), with the id and the config key first.
    expected = json.loads((full_corpus_dir() / "expected" / "full-sweep-keyed.json").read_text())
    assert [{k: v for k, v in e.items() if k != "id"} for e in entries] == expected
    assert list(entries[0])[:4] == ["id", "config-key", "image", "model"]
    # scenario-type only on agentic entries, as the generator writes them (the templates default it).
    assert {e.get("scenario-type") for e in entries} == {None, "agentic-coding"}


def test_output_dir_writes_shards_and_index_and_drops_stale_shards(corpus: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "shard-009.json").write_text("{}")
    proc = run(corpus, "--output-dir", str(out), "--shard-size", "100")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == f"1820 jobs in 19 shard(s) written to {out}\n"
    assert sorted(p.name for p in out.iterdir()) == ["index.json"] + [f"shard-{i:03d}.json" for i in range(19)]
    index = json.loads((out / "index.json").read_text())
    assert [s["jobs"] for s in index["shards"]] == [96] * 15 + [95] * 4
    shard = json.loads((out / "shard-002.json").read_text())
    assert len(shard["include"]) == 96


def test_filters_on_the_command_line(corpus: Path) -> None:
    proc = run(corpus, "dsr1-fp8-*", "--scenario", "fixed-seq-len", "--conc", "4", "--tp", "8")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    picked = [(e["config-key"], e["conc"]) for s in doc["shards"] for e in s["include"]]
    assert picked == [
        ("dsr1-fp8-mi300x-sglang", 4), ("dsr1-fp8-mi325x-sglang", 4), ("dsr1-fp8-mi355x-sglang", 4),
        ("dsr1-fp8-mi355x-sglang-mtp", 4), ("dsr1-fp8-mi355x-atom", 4), ("dsr1-fp8-mi355x-atom-mtp", 4),
        # multinode rows whose prefill or decode uses tp 8, narrowed to conc 4
        ("dsr1-fp8-mi355x-sglang-disagg", [4]), ("dsr1-fp8-mi355x-sglang-disagg", [4]),
        ("dsr1-fp8-mi355x-sglang-disagg-mtp", [4]), ("dsr1-fp8-mi355x-sglang-disagg-mtp", [4]),
        ("dsr1-fp8-mi325x-sglang-mtp", 4),
        ("dsr1-fp8-b200-sglang", 4), ("dsr1-fp8-b300-sglang", 4), ("dsr1-fp8-b200-sglang-mtp", 4),
        ("dsr1-fp8-b300-sglang-mtp", 4), ("dsr1-fp8-b200-trt", 4), ("dsr1-fp8-b200-trt-mtp", 4),
        ("dsr1-fp8-h200-sglang", 4), ("dsr1-fp8-h200-sglang-mtp", 4), ("dsr1-fp8-h200-trt", 4),
        ("dsr1-fp8-h200-trt-mtp", 4), ("dsr1-fp8-h200-dynamo-trt", [4]), ("dsr1-fp8-h200-dynamo-trt", [4]),
        ("dsr1-fp8-gb200-dynamo-sglang", [4]), ("dsr1-fp8-gb300-dynamo-trt", [4]),
    ] + [("dsr1-fp8-h200-dynamo-sglang", [4])] * 5
    assert doc["index"]["selection"] == {"key-globs": ["dsr1-fp8-*"], "scenarios": ["fixed-seq-len"],
                                         "concs": [4], "tps": [8]}


def test_unknown_key_glob_is_a_usage_error(corpus: Path) -> None:
    proc = run(corpus, "no-such-*")
    assert proc.returncode == 2
    assert proc.stderr == ("ci-tools: error: no config key matches `no-such-*`; expected one of the 208 keys "
                           "defined in configs/amd-master.yaml, configs/nvidia-master.yaml\n")
    # `?` and `[...]` as InferenceX's test-config takes them; a pattern without `*` or `?` names one key.
    assert run(corpus, "dsr1-fp[48]-mi355x-sglang").returncode == 2
    proc = run(corpus, "dsr1-fp[48]-mi355x-sglan?")
    assert proc.returncode == 0, proc.stderr
    picked = {e["config-key"] for s in json.loads(proc.stdout)["shards"] for e in s["include"]}
    assert picked == {"dsr1-fp4-mi355x-sglang", "dsr1-fp8-mi355x-sglang"}


def test_github_output(corpus: Path, tmp_path: Path) -> None:
    target = tmp_path / "github_output"
    proc = run(corpus, "kimik3-*-mi355x-*", "--github-output", env={"GITHUB_OUTPUT": str(target)})
    assert proc.returncode == 0, proc.stderr
    lines = target.read_text().splitlines()
    assert lines[:3] == ["shard-count=1", "total-jobs=8", "shards=[0]"]
    assert lines[3].startswith("matrix-0={\"include\":[")
    assert len(json.loads(lines[3].partition("=")[2])["include"]) == 8
    target.unlink()
    proc = run(corpus, "--shard-size", "200", "--shard", "1", env={"GITHUB_OUTPUT": str(target)})
    assert proc.returncode == 2 and "it needs --github-output" in proc.stderr
    proc = run(corpus, "--shard-size", "200", "--github-output", "--shard", "1", env={"GITHUB_OUTPUT": str(target)})
    assert proc.returncode == 0, proc.stderr
    lines = target.read_text().splitlines()
    assert lines[:3] == ["shard-count=10", "total-jobs=1820", "shards=[0,1,2,3,4,5,6,7,8,9]"]
    assert len(json.loads(lines[3].removeprefix("matrix="))["include"]) == 182
    proc = run(corpus, "--github-output", "--shard", "8", env={"GITHUB_OUTPUT": str(target)})
    assert proc.returncode == 2 and "--shard 8 does not exist; the matrix has 8 shard(s)" in proc.stderr
    proc = run(corpus, "--github-output")
    assert proc.returncode == 2 and "needs the GITHUB_OUTPUT environment variable" in proc.stderr


def test_github_output_flag_alone_writes_all_shards_within_the_output_limit(corpus: Path, tmp_path: Path) -> None:
    target = tmp_path / "out"
    proc = run(corpus, "dsr1-*", "--github-output", env={"GITHUB_OUTPUT": str(target)})
    assert proc.returncode == 0, proc.stderr
    names = [line.partition("=")[0] for line in target.read_text().splitlines()]
    assert names == ["shard-count", "total-jobs", "shards", "matrix-0", "matrix-1"]
    # The whole sweep (about 1.1 MB of JSON) is over GitHub's 1 MB for a job's outputs: one shard per job then.
    proc = run(corpus, "--github-output", env={"GITHUB_OUTPUT": str(target)})
    assert proc.returncode == 2 and "over GitHub's 1000000-byte limit for a job's outputs" in proc.stderr


def test_a_broken_master_config_refuses_to_build_a_partial_matrix(tmp_path: Path) -> None:
    (tmp_path / "configs").mkdir()
    shutil.copyfile(full_corpus_dir() / "configs/runners.yaml", tmp_path / "configs/runners.yaml")
    (tmp_path / "configs/amd-master.yaml").write_text("a: [unclosed\n")
    proc = run(tmp_path)
    assert proc.returncode == 1
    assert "configs/amd-master.yaml:2" in proc.stderr
    assert proc.stderr.endswith("ci-tools: error: the matrix cannot be built while 1 input problem(s) remain\n")
    assert proc.stdout == ""


# -- --base: the entries a PR appends --------------------------------------------------------

NEW_ENTRY = """
- config-keys:
  - kimik3-*-mi355x-*
  - no-such-key
  scenario-type:
  - agentic-coding
  description:
  - bump kimi images
  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/XXX
"""


def test_base_selects_what_the_appended_entries_ask_for(corpus: Path, tmp_path: Path) -> None:
    repo = committed_copy(corpus, tmp_path / "pr")
    with open(repo / "perf-changelog.yaml", "a") as fh:
        fh.write(NEW_ENTRY)
    proc = run(repo, "--base", "main")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert sorted({e["config-key"] for s in doc["shards"] for e in s["include"]}) == [
        "kimik3-fp4-mi355x-atom-agentic-mtp", "kimik3-fp4-mi355x-vllm-agentic-mtp"]
    assert doc["index"]["total-jobs"] == 8
    assert doc["index"]["selection"]["changelog-entries"] == [
        {"config-keys": ["kimik3-*-mi355x-*", "no-such-key"], "scenario-type": ["agentic-coding"], "line": 6382}]
    assert proc.stderr == ("ci-tools: warning: perf-changelog.yaml:6382: config key `no-such-key` matches no "
                           "config; it selects nothing\n")
    # Nothing appended since HEAD: nothing to run.
    git(repo, "commit", "-q", "-am", "head")
    empty = json.loads(run(repo, "--base", "HEAD").stdout)
    assert (empty["index"]["total-jobs"], empty["shards"]) == (0, [])
    assert run(repo, "--base", "no-such-rev").returncode == 2


# -- --explain -------------------------------------------------------------------------------


def test_explain_prints_recipe_candidates_and_env_with_where_it_comes_from() -> None:
    proc = run(full_corpus_dir(), "--explain", "kimik3-fp4-mi355x-atom-agentic-mtp", "--conc", "8")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("kimik3-fp4-mi355x-atom-agentic-mtp agentic-coding TP8/EP1 c8  [id ")
    assert lines[1:5] == [
        "  row: configs/amd-master.yaml:667",
        "  recipe: benchmarks/single_node/agentic/kimik3_fp4_mi355x_atom_mtp.sh",
        "    found      benchmarks/single_node/agentic/kimik3_fp4_mi355x_atom_mtp.sh",
        "    not tried  benchmarks/single_node/kimik3_fp4_mi355x_atom_mtp.sh",
    ]
    at = lines.index("  env via sweep-agentic of .github/workflows/run-sweep.yml (? = set at run time, value unknown):")
    env = {}
    for line in lines[at + 1:]:
        if not line.startswith("    "):
            break
        shown, origin = line.strip().rsplit("  ", 1)
        name, _, value = shown.strip().partition("=")
        env[name] = (value, origin.strip())
    assert env["CONC"] == ("8", ".github/workflows/benchmark-tmpl.yml:177")
    assert env["TOTAL_CPU_DRAM_GB"] == ("257", ".github/workflows/benchmark-tmpl.yml:191")
    assert env["RUNNER_NAME"] == ("?", ".github/workflows/benchmark-tmpl.yml:276")
    assert env["PORT"] == ("?", "runners/launch_mi355x-amds.sh:258")
    assert env["KV_OFFLOAD_BACKEND_METADATA"][0] == '{\\n  "name": "lmcache",\\n  "version": "0.4.5"\\n}'


def test_explain_reports_a_missing_recipe() -> None:
    # The recipe this config names was deleted at 843c625.
    proc = run(full_corpus_dir(), "--explain", "qwen3.5-fp8-h100-sglang-agentic", "--conc", "4")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[2:4] == [
        "  recipe: NONE (no candidate exists)",
        "    missing    benchmarks/single_node/agentic/qwen3.5_fp8_h100.sh",  # launch_h100-cw.sh: no framework
    ]


def test_matrix_command_imports_only_its_own_command_module(corpus: Path) -> None:
    code = ("import sys; from ci_tools.cli.main import main; code = main(['matrix', '--repo', sys.argv[1], 'kimik3-*']); "
            "print(sorted(m for m in sys.modules if m.startswith('ci_tools.cli.') and m.endswith('_cmd')))")
    proc = subprocess.run([sys.executable, "-c", code, str(corpus)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-1] == "['ci_tools.cli.matrix_cmd']"


APPEND_ONLY_ENTRY = """
- config-keys:
  - dsr1-fp4-mi355x-sglang
  description:
  - add TP2 points
  append-only: true
  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/XXX
"""


def test_base_with_an_append_only_entry_runs_only_the_new_points(corpus: Path, tmp_path: Path) -> None:
    repo = committed_copy(corpus, tmp_path / "pr")
    master = repo / "configs/amd-master.yaml"
    master.write_text(master.read_text().replace(
        "      - { tp: 8, conc-start: 4, conc-end: 64 }\n",
        "      - { tp: 8, conc-start: 4, conc-end: 64 }\n      - { tp: 2, conc-start: 4, conc-end: 8 }\n", 1))
    with open(repo / "perf-changelog.yaml", "a") as fh:
        fh.write(APPEND_ONLY_ENTRY)
    proc = run(repo, "--base", "main")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert [(e["config-key"], e["tp"], e["conc"]) for s in doc["shards"] for e in s["include"]] == [
        ("dsr1-fp4-mi355x-sglang", 2, 4), ("dsr1-fp4-mi355x-sglang", 2, 8)]
    assert doc["index"]["selection"]["changelog-entries"][0]["append-only"] is True
