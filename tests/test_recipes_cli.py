"""``ci-tools recipe show`` (text, json, --diff against a real git base) and ``recipe lint``."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from ci_tools.cli.main import main
from fixture_trees import copy_tree

SEED = Path(__file__).parent / "fixtures" / "recipes" / "seed"
KEY = "dsv4-fp4-mi355x-atom-agentic-mtp"
RECIPE = "benchmarks/single_node/agentic/dsv4_fp4_mi355x_atom_mtp.sh"
GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test", "GIT_AUTHOR_EMAIL": "test@example.invalid",
    "GIT_COMMITTER_NAME": "Test", "GIT_COMMITTER_EMAIL": "test@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
}


@pytest.fixture(scope="module")
def seed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The seed repository with the files it inherits (tests/fixture_trees.py), written once for the module."""
    root = tmp_path_factory.mktemp("seed")
    copy_tree(SEED, root)
    return root


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_show_text_lists_flags_and_env_with_their_lines(seed: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "recipe", "show", KEY, "--conc", "48", "--repo", str(seed))
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == f"{KEY} agentic-coding TP8/EP8/DPA c48"
    assert lines[1] == f"  recipe: {RECIPE}"
    assert lines[2] == f"  server ({RECIPE}:31:1):"
    assert f"    {'--max-num-seqs 96  = $((2 * CONC))':<56} {RECIPE}:9:1" in lines
    assert f"    {'--state-checkpoint-interval-tokens 8192':<56} {RECIPE}:15:1" in lines
    assert f"    {'--tensor-parallel-size 8':<56} configs/amd-master.yaml:13:9 (job environment)" in lines
    assert f"    {'--enable-dp-attention':<56} {RECIPE}:24:19" in lines
    env_at = lines.index("  env:")
    assert lines[env_at + 1:] == [
        f"    {'AIPERF_HTTP_X_DYNAMO_SESSION_ID_FROM_CORRELATION_ID=true':<56} {RECIPE}:23:12",
        f"    {'ATOM_DP_LB_REQ_EQUIV=512':<56} {RECIPE}:22:12",
    ]


def test_show_json_per_job(seed: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "recipe", "show", KEY, "--conc", "4", "--conc", "48", "--format", "json",
                        "--repo", str(seed))
    assert code == 0
    data = json.loads(out)
    assert [d["label"] for d in data] == [f"{KEY} agentic-coding TP8/EP1 c4", f"{KEY} agentic-coding TP8/EP8/DPA c48"]
    tp, dep = data
    flags = {f["name"]: f for f in tp["servers"][0]["flags"]}
    assert flags["--synthetic-acceptance-length"]["value"]["text"] == "2.49"
    assert flags["--max-num-seqs"]["value"] == {
        "text": "8", "conditional": False, "expression": "$((2 * CONC))",
        "location": {"path": RECIPE, "line": 9, "column": 1, "end_line": 9, "end_column": 27},
    }
    assert flags["--enable-prefix-caching"]["value"] is None
    assert "ATOM_DP_LB_REQ_EQUIV" not in tp["env"]
    assert dep["env"]["ATOM_DP_LB_REQ_EQUIV"]["text"] == "512"
    assert dep["job"]["conc"] == 48 and dep["early_exits"] == [] and dep["missing_env"] == []


def test_show_json_is_one_compact_document_per_job_and_keeps_non_ascii_text(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    copy_tree(SEED, tmp_path)
    recipe = tmp_path / RECIPE
    lines = recipe.read_text().splitlines(keepends=True)
    recipe.write_text("".join([*lines[:3], 'export RUN_NOTE="café ≥ 2 µs"\n', *lines[3:]]))
    code, out, _ = _run(capsys, "recipe", "show", KEY, "--conc", "4", "--conc", "48", "--format", "json",
                        "--repo", str(tmp_path))
    assert code == 0
    rows = out.splitlines()
    # An array with one job a line: a consumer can stream it line by line.
    assert rows[0] == "[" and rows[-1] == "]" and len(rows) == 4
    assert rows[1].endswith(",") and not rows[2].endswith(",")
    assert [json.loads(r.rstrip(","))["label"] for r in rows[1:3]] == [
        f"{KEY} agentic-coding TP8/EP1 c4", f"{KEY} agentic-coding TP8/EP8/DPA c48"]
    assert "café ≥ 2 µs" in rows[1]  # written as UTF-8, not escaped
    [tp, _] = json.loads(out)
    assert tp["env"]["RUN_NOTE"]["text"] == "café ≥ 2 µs"
    assert tp["env"]["RUN_NOTE"]["location"]["line"] == 4


def test_unknown_key_is_a_usage_error(seed: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, "recipe", "show", "dsv4-fp4-mi355x-atom-agentic", "--repo", str(seed))
    assert code == 2 and out == ""
    assert "no config key matches 'dsv4-fp4-mi355x-atom-agentic'" in err
    assert f"did you mean {KEY}?" in err


def test_lint_is_clean_on_the_seed_repository(seed: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(capsys, "recipe", "lint", "--repo", str(seed), "--format", "text") == (0, "", "")


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main", *args], cwd=repo,
                          env={**os.environ, **GIT_ENV}, check=True, capture_output=True, text=True)
    return done.stdout.strip()


def test_diff_against_a_base_revision(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = tmp_path / "repo"
    copy_tree(SEED, repo)
    recipe = repo / RECIPE
    head_text = recipe.read_text()
    # The base: DPA with TBO, zero request equivalence, CONC sequences.
    base_text = (head_text.replace("ATOM_DP_LB_REQ_EQUIV=512", "ATOM_DP_LB_REQ_EQUIV=0")
                 .replace("MAX_NUM_SEQS=$((2 * CONC))", "MAX_NUM_SEQS=$CONC")
                 .replace("(--enable-dp-attention --dp-session-affinity)", "(--enable-dp-attention --enable-tbo)"))
    assert base_text != head_text
    recipe.write_text(base_text)
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "base")
    base = _git(repo, "rev-parse", "HEAD")
    recipe.write_text(head_text)
    code, out, _ = _run(capsys, "recipe", "show", KEY, "--diff", "--base", base, "--conc", "4", "--conc", "48",
                        "--repo", str(repo))
    assert code == 0
    assert out == (
        f"recipe changes per job, {base[:12]} -> work tree\n"
        f"{KEY} agentic-coding TP8/EP1 c4:\n"
        f"  --max-num-seqs: 4 -> 8  ({RECIPE}:9:1)\n"
        f"{KEY} agentic-coding TP8/EP8/DPA c48:\n"
        f"  --max-num-seqs: 48 -> 96  ({RECIPE}:9:1)\n"
        f"  --enable-tbo: removed (was (on))  ({RECIPE}:24:41)\n"
        f"  --dp-session-affinity: added (on)  ({RECIPE}:24:41)\n"
        f"  env ATOM_DP_LB_REQ_EQUIV: 0 -> 512  ({RECIPE}:22:12)\n"
    )
    code, out, _ = _run(capsys, "recipe", "show", KEY, "--diff", "--base", base, "--format", "json",
                        "--conc", "48", "--repo", str(repo))
    [job] = json.loads(out)
    assert [(c["kind"], c["name"], c["before"], c["after"]) for c in job["changes"]] == [
        ("flag", "--max-num-seqs", "48", "96"), ("flag", "--enable-tbo", "(on)", None),
        ("flag", "--dp-session-affinity", None, "(on)"), ("env", "ATOM_DP_LB_REQ_EQUIV", "0", "512"),
    ]


def test_diff_needs_a_base(seed: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(capsys, "recipe", "show", KEY, "--diff", "--repo", str(seed))
    assert code == 2 and "--diff and --base REV go together" in err


# A TRT-style engine file written from a here-document, and an inline JSON flag.
STRUCTURED = '''
cat > engine.yml << EOF
max_batch_size: $MAX_NUM_SEQS
moe_config:
    backend: TRTLLM
EOF
COMPILATION='{"cudagraph_mode":"FULL_DECODE_ONLY","cudagraph_capture_sizes":[1,2,4]}'
'''


def _structured_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    copy_tree(SEED, repo)
    recipe = repo / RECIPE
    text = recipe.read_text().replace('SERVER_LOG="$RESULT_DIR/server.log"\n',
                                      STRUCTURED + 'SERVER_LOG="$RESULT_DIR/server.log"\n')
    text = text.replace('    --enable-prefix-caching \\\n',
                        '    --enable-prefix-caching \\\n    --config engine.yml \\\n'
                        '    --compilation-config "$COMPILATION" \\\n')
    recipe.write_text(text)
    return repo


def test_show_lists_the_keys_of_structured_values(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = _structured_repo(tmp_path)
    code, out, _ = _run(capsys, "recipe", "show", KEY, "--conc", "4", "--repo", str(repo))
    assert code == 0
    lines = out.splitlines()
    assert f"    {'  --config.max_batch_size 8':<56} {RECIPE}:32" in lines
    assert f"    {'  --config.moe_config.backend TRTLLM':<56} {RECIPE}:34" in lines
    assert f"    {'  --compilation-config.cudagraph_mode FULL_DECODE_ONLY':<56} {RECIPE}:36:1" in lines
    assert f"    {'  --compilation-config.cudagraph_capture_sizes [1,2,4]':<56} {RECIPE}:36:1" in lines
    code, out, _ = _run(capsys, "recipe", "show", KEY, "--conc", "4", "--format", "json", "--repo", str(repo))
    [job] = json.loads(out)
    flags = {f["name"]: f for f in job["servers"][0]["flags"]}
    assert flags["--config"]["keys_file"] == "engine.yml"
    assert [(k["path"], k["value"]["text"], k["value"]["location"]["line"]) for k in flags["--config"]["keys"]] == [
        ("max_batch_size", "8", 32), ("moe_config.backend", "TRTLLM", 34)]
    assert "keys_file" not in flags["--compilation-config"]
    assert job["not_reached"] is None


def test_diff_compares_structured_values_key_by_key(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = _structured_repo(tmp_path)
    recipe = repo / RECIPE
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "base")
    base = _git(repo, "rev-parse", "HEAD")
    recipe.write_text(recipe.read_text().replace("backend: TRTLLM", "backend: CUTLASS")
                      .replace("FULL_DECODE_ONLY", "FULL_AND_PIECEWISE"))
    code, out, _ = _run(capsys, "recipe", "show", KEY, "--diff", "--base", base, "--conc", "4", "--repo", str(repo))
    assert code == 0
    assert out == (
        f"recipe changes per job, {base[:12]} -> work tree\n"
        f"{KEY} agentic-coding TP8/EP1 c4:\n"
        f"  --config.moe_config.backend: TRTLLM -> CUTLASS  ({RECIPE}:34)\n"
        f"  --compilation-config.cudagraph_mode: FULL_DECODE_ONLY -> FULL_AND_PIECEWISE  ({RECIPE}:36:1)\n"
    )


def test_lint_stats_reports_reached_jobs_and_why_others_are_not(seed: Path, tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "recipe", "lint", "--stats", "--repo", str(seed))
    assert code == 0
    assert out.splitlines()[:6] == [
        "recipe evaluation coverage (work tree)",
        "  jobs                                   10  (10 single-node, 0 multinode)",
        "  a recipe resolves                      10",
        "  server command line reached            10  (100.0 % of jobs; single-node 10 of 10, 100.0 %)",
        "  ... with every flag value known         0",
        "  ... or known when the job runs         10",  # --server-port "$PORT": the runner's port
    ]
    assert out.splitlines()[-1] == "findings of the recipe rules: none"
    repo = tmp_path / "repo"
    copy_tree(SEED, repo)
    recipe = repo / RECIPE
    # The DEP band now requires a variable its jobs do not get, and the TP band's port comes from the runner.
    recipe.write_text(recipe.read_text().replace('    export ATOM_DP_LB_REQ_EQUIV=512\n',
                                                 '    export ATOM_DP_LB_REQ_EQUIV=512\n    check_env_vars DEP_POOL\n')
                      .replace('--server-port "$PORT"', '--server-port "$(cat /etc/port)"'))
    code, out, _ = _run(capsys, "recipe", "lint", "--stats", "--format", "json", "--repo", str(repo))
    assert code == 0
    stats = json.loads(out)
    assert (stats["jobs"], stats["reached"], stats["all_known"]) == (10, 5, 0)
    assert stats["not_reached"] == [{
        "category": "missing-env", "jobs": 5, "configs": [KEY],
        "reason": f"requires DEP_POOL (unset or empty) at {RECIPE}:23:20"}]
    assert stats["unknown"] == [{
        "category": "command-output", "jobs": 5, "configs": [KEY],
        "reason": "output of a command that is not evaluated: $(cat /etc/port)"}]
    assert stats["unknown_flags"] == {"--server-port": 5}
    assert stats["findings"] == {"recipe-missing-env": 1}
    code, out, _ = _run(capsys, "recipe", "show", KEY, "--conc", "48", "--repo", str(repo))
    assert f"  server: not reached: requires DEP_POOL (unset or empty) at {RECIPE}:23:20" in out.splitlines()
