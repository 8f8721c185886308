"""A flag the recipe gives a program other than its server (ci_tools/claims/verdict/other_programs.py), on the real
tree.

dsv4_fp4_mi355x_vllm_mtp.sh (dsv4-fp4-mi355x-vllm-agentic-mtp) starts an LMCache server (``lmcache server ...
--eviction-policy LRU``) next to its vLLM server, whose command line has no such flag."""

from __future__ import annotations

import pytest

from ci_tools.claims.text.sentences import plain_source
from ci_tools.claims.verdict.check import EntryInput, EvalCache, check_entries
from ci_tools.claims.verdict.other_programs import variable_written_at, server_variables
from ci_tools.findings import Location
from paraphrase.drive import Tree, load_tree

from conftest import full_corpus_dir

KEY = "dsv4-fp4-mi355x-vllm-agentic-mtp"
RECIPE = "benchmarks/single_node/agentic/dsv4_fp4_mi355x_vllm_mtp.sh"


@pytest.fixture(scope="module")
def tree() -> Tree:
    return load_tree(full_corpus_dir())


def said(tree: Tree, text: str) -> list[tuple[str, str]]:
    entry = EntryInput([KEY], (), [plain_source("entry.md", text)], Location("entry.md", 1, 1))
    report = check_entries(tree.config, tree.repo, tree.snapshot, [entry], cache=EvalCache(tree.config), verbose=True)
    return [(f.rule, f.message) for f in report.findings if f.rule.startswith("claim-") and f.rule != "claim-not-checked"]


def test_a_flag_of_the_recipe_s_lmcache_server_is_not_one_no_job_sets(tree: Tree) -> None:
    found = said(tree, "Run the LMCache server with --eviction-policy LRU.")
    assert [rule for rule, _ in found] == ["claim-unverified"]
    line = next(n for n, text in enumerate(tree.snapshot.read(RECIPE).decode().splitlines(), 1)  # type: ignore[union-attr]
                if "--eviction-policy" in text)
    assert f"the recipe writes it for another program ({RECIPE}:{line})" in found[0][1]


def test_a_flag_written_nowhere_is_still_one_no_job_sets(tree: Tree) -> None:
    assert [rule for rule, _ in said(tree, "Run the LMCache server with --l1-write-ttl-seconds 7200.")] == [
        "claim-setting-missing"]


SCRIPT = """\
if [[ "$DP_ATTENTION" == "true" ]]; then
    PARALLEL_ARGS=(
        --enable-dp-attention
        --enable-fp4-indexer
    )
else
    PARALLEL_ARGS=(--moe-runner-backend flashinfer)
fi
EXTRA=("${PARALLEL_ARGS[@]}" --disable-radix-cache)
LMCACHE_CMD=(
    env "LD_PRELOAD=$PRELOAD"
    lmcache server
    --shm-name ""
)
"${LMCACHE_CMD[@]}" > lmcache.log 2>&1 &
sglang serve --model-path $MODEL \\
    "${EXTRA[@]}" \\
    --port $PORT &
REPLAY_CMD+=" --allow-empty-content"
"""


def test_what_feeds_the_server_is_read_through_the_variables_its_command_line_expands() -> None:
    lines = SCRIPT.splitlines()
    server = next(n for n, text in enumerate(lines, 1) if text.startswith("sglang serve"))
    assert server_variables(lines, [server]) >= {"EXTRA", "PARALLEL_ARGS", "MODEL", "PORT"}
    assert not server_variables(lines, [server]) & {"LMCACHE_CMD", "REPLAY_CMD"}

    def assigned(flag: str) -> str:
        return variable_written_at(lines, next(k for k, text in enumerate(lines) if flag in text))

    # a branch of the server's arguments, an array another command runs, a client's command string
    assert [assigned(f) for f in ("--enable-fp4-indexer", "--shm-name", "--allow-empty-content", "--port")] == [
        "PARALLEL_ARGS", "LMCACHE_CMD", "REPLAY_CMD", ""]
