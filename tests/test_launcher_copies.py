"""Recipe directories a launcher copies into its srt-slurm checkout: read from the launcher, decided per job.

The launcher texts below have the shapes of InferenceX's launchers (``if``/``elif`` chains on the job's
variables, ``mkdir -p`` then ``cp -rT "$GITHUB_WORKSPACE/..." recipes/...``, copies through variables);
``test_launcher_copies_real.py`` runs the real ones.
"""

from __future__ import annotations

from typing import Any

import pytest

from ci_tools.findings import Location
from ci_tools.jobs.job import Job
from ci_tools.jobs.launcher_copies import copy_for, holds, launcher_inputs, scan_copies
from ci_tools.jobs.resolution import job_settings

ROOT = "benchmarks/multi_node/srt-slurm-recipes"
LAUNCHER = f"""\
#!/usr/bin/bash
set -x
SRT_REPO_DIR="srt-slurm"
if [[ "$IS_MULTINODE" == "true" ]]; then
if [[ "$IS_AGENTIC" == "1" ]]; then
    mkdir -p recipes/vllm/agentic
    cp -rT "$GITHUB_WORKSPACE/{ROOT}/vllm/agentic" recipes/vllm/agentic || exit 1
elif [[ $FRAMEWORK == "dynamo-vllm" && $MODEL_PREFIX == "minimaxm2.5" && $PRECISION == "fp4" ]]; then
    git clone https://github.com/NVIDIA/srt-slurm.git "$SRT_REPO_DIR"
    cd "$SRT_REPO_DIR" || exit 1
    mkdir -p recipes/vllm/minimax-m2.5
    cp -rT "$GITHUB_WORKSPACE/{ROOT}/vllm/minimax-m2.5-b300" recipes/vllm/minimax-m2.5
elif [[ $FRAMEWORK == "dynamo-vllm" && $MODEL_PREFIX == "minimaxm3" && "$CONFIG_FILE" == recipes/vllm/minimax-m3/mtp/*.yaml ]]; then
    RECIPES_DIR="recipes/vllm/minimax-m3"
    SOURCE="${{GITHUB_WORKSPACE}}/{ROOT}/vllm/minimax-m3-mtp"
    mkdir -p "$RECIPES_DIR"
    cp -rT \\
        "$SOURCE" \\
        "$RECIPES_DIR"
elif [[ -d /data/models/$MODEL_PREFIX ]]; then
    cp -r "$GITHUB_WORKSPACE/{ROOT}/vllm/local" recipes/vllm/local
else
    mkdir -p recipes/sglang
    cp -r "$GITHUB_WORKSPACE/{ROOT}/sglang/glm5" recipes/sglang
    cp "$GITHUB_WORKSPACE/{ROOT}/configs/setup.sh" configs/setup.sh
    cp -rT "$(pwd)/elsewhere" recipes/elsewhere
fi
fi
"""


def job(prefix: str, precision: str, framework: str, config_file: str, *, scenario: str = "fixed-seq-len") -> Job:
    worker: dict[str, Any] = {"num-worker": 1, "tp": 8, "additional-settings": [f"CONFIG_FILE={config_file}"]}
    fields: dict[str, Any] = {"model-prefix": prefix, "precision": precision, "framework": framework,
                              "runner": "b300", "spec-decoding": "none",
                              "prefill": worker, "decode": dict(worker)}
    return Job(f"{prefix}-{precision}-b300-{framework}", scenario, fields, Location("configs/nvidia-master.yaml", 1))


def values(j: Job) -> dict[str, str]:
    return launcher_inputs(j, job_settings(j))


COPIES = scan_copies("runners/launch_b300-nv.sh", LAUNCHER.encode())


def test_every_spellable_recursive_copy_is_read_with_its_line() -> None:
    assert [(c.source.removeprefix(ROOT + "/"), c.destination, c.line) for c in COPIES] == [
        ("vllm/agentic", "recipes/vllm/agentic", 7),
        ("vllm/minimax-m2.5-b300", "recipes/vllm/minimax-m2.5", 12),
        ("vllm/minimax-m3-mtp", "recipes/vllm/minimax-m3", 17),  # through variables, over continued lines
        ("vllm/local", "recipes/vllm/local", 21),  # without -T into a directory not made first: the copy
        ("sglang/glm5", "recipes/sglang/glm5", 24),  # without -T into a directory made first: inside it
    ]  # a single file (no -r) and a source outside the repository ($(pwd)) are no copies of recipes
    assert COPIES[1].describe() == (f"runners/launch_b300-nv.sh:12 copies {ROOT}/vllm/minimax-m2.5-b300/ to "
                                    "recipes/vllm/minimax-m2.5/ in the srt-slurm checkout")


def test_the_branch_conditions_decide_which_copies_a_job_gets() -> None:
    fp4 = values(job("minimaxm2.5", "fp4", "dynamo-vllm", "recipes/vllm/minimax-m2.5/1k1k/a.yaml"))
    fp8 = values(job("minimaxm2.5", "fp8", "dynamo-vllm", "recipes/vllm/minimax-m2.5/1k1k/a.yaml"))
    agentic = values(job("minimaxm2.5", "fp4", "dynamo-vllm", "x.yaml", scenario="agentic-coding"))

    def decided(v: dict[str, str]) -> list[bool | None]:
        """Whether each copy is made: every branch condition around it as its branch needs it."""
        out: list[bool | None] = []
        for c in COPIES:
            found = [holds(g, v) for g in c.guards]
            out.append(False if False in found else None if None in found else True)
        return out

    assert decided(fp4) == [False, True, False, False, False]
    # fp8 takes none of the named branches: the one on a node's directory is undecided, and so is the else.
    assert decided(fp8) == [False, False, False, None, None]
    assert decided(agentic) == [True, False, False, False, False]
    mtp = values(job("minimaxm3", "fp4", "dynamo-vllm", "recipes/vllm/minimax-m3/mtp/x.yaml"))
    other = values(job("minimaxm3", "fp4", "dynamo-vllm", "recipes/vllm/minimax-m3/stp/x.yaml"))
    assert decided(mtp)[2] is True and decided(other)[2] is False  # the CONFIG_FILE glob of the condition


def test_a_reference_under_a_copy_is_the_copied_repository_file() -> None:
    fp4 = values(job("minimaxm2.5", "fp4", "dynamo-vllm", "recipes/vllm/minimax-m2.5/1k1k/a.yaml"))
    files = {f"{ROOT}/vllm/minimax-m2.5-b300/1k1k/a.yaml", f"{ROOT}/vllm/minimax-m2.5/1k1k/a.yaml"}
    copy, path = copy_for(COPIES, "recipes/vllm/minimax-m2.5/1k1k/a.yaml", fp4, files)
    assert copy is COPIES[1] and path == f"{ROOT}/vllm/minimax-m2.5-b300/1k1k/a.yaml"
    # The same reference of a job the branch is not for: no copy; the resolution's default applies.
    fp8 = values(job("minimaxm2.5", "fp8", "dynamo-vllm", "recipes/vllm/minimax-m2.5/1k1k/a.yaml"))
    assert copy_for(COPIES, "recipes/vllm/minimax-m2.5/1k1k/a.yaml", fp8, files) == (None, None)
    # A file the copied directory lacks is named as missing there (the copy replaces the checkout's directory).
    copy, path = copy_for(COPIES, "recipes/vllm/minimax-m2.5/1k1k/gone.yaml", fp4, files)
    assert copy is COPIES[1] and path == f"{ROOT}/vllm/minimax-m2.5-b300/1k1k/gone.yaml"
    # Paths are matched by whole directory names.
    assert copy_for(COPIES, "recipes/vllm/minimax-m2.5-fp8/a.yaml", fp4, files) == (None, None)


@pytest.mark.parametrize("text", [
    b"#!/bin/bash\ncp -rT \"$SRC\" recipes/x\n",  # a source that cannot be spelled
    b"#!/bin/bash\necho no copies here\n",
    b"#!/bin/bash\nfor d in a b; do cp -rT \"$GITHUB_WORKSPACE/r/$d\" \"recipes/$d\"; done\n",
])
def test_copies_that_cannot_be_spelled_are_left_out(text: bytes) -> None:
    assert scan_copies("runners/launch_x.sh", text) == ()


def test_a_copy_in_a_loop_or_case_is_undecided() -> None:
    text = (b"#!/bin/bash\ncase \"$FRAMEWORK\" in\n  vllm) cp -rT \"$GITHUB_WORKSPACE/r/a\" recipes/a ;;\nesac\n")
    (copy,) = scan_copies("runners/launch_x.sh", text)
    assert copy.source == "r/a" and [holds(g, {"FRAMEWORK": "vllm"}) for g in copy.guards] == [None]


def test_launcher_inputs_are_what_the_workflow_gives_the_launcher(full_corpus_repo: Any,
                                                                  full_corpus_jobs: Any) -> None:
    """The variables guards are read with agree with the repository's env contract on every real job."""
    from ci_tools.jobs.env.contract import contract_for

    repo = full_corpus_repo
    contract = contract_for(repo.config, repo.snapshot)
    checked = 0
    for j in full_corpus_jobs:
        workflow = contract.workflow_env(j)
        for name, value in launcher_inputs(j, job_settings(j)).items():
            if name == "IS_MULTINODE" and not j.multinode:
                assert name not in workflow and value == ""  # unset for single-node jobs: empty, as bash reads it
            else:
                assert workflow[name].value == value, (j.config_key, name)
            checked += 1
    assert checked > 5 * len(full_corpus_jobs)
