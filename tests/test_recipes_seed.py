"""Acceptance: a recipe in the shape of the seed PR evaluates per job as the shell would run it."""

from __future__ import annotations

from pathlib import Path

import pytest

from ci_tools.config import load_config
from ci_tools.jobs.matrix import expand
from ci_tools.jobs.job import Job
from ci_tools.model.repository import load_repo
from ci_tools.evaluation.env_values import set_at_run_time
from ci_tools.evaluation.evaluate import evaluate_job
from ci_tools.shell.model import RecipeEval
from ci_tools.revision.snapshot import WorkTreeSnapshot
from fixture_trees import copy_tree

SEED = Path(__file__).parent / "fixtures" / "recipes" / "seed"
RECIPE = "benchmarks/single_node/agentic/dsv4_fp4_mi355x_atom_mtp.sh"


@pytest.fixture(scope="module")
def seed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The seed repository with the files it inherits (tests/fixture_trees.py), written once for the module."""
    root = tmp_path_factory.mktemp("seed")
    copy_tree(SEED, root)
    return root


@pytest.fixture(scope="module")
def jobs(seed: Path) -> list[Job]:
    config = load_config(seed)
    return expand(load_repo(WorkTreeSnapshot(config.root), config))


def _eval(seed: Path, jobs: list[Job], dp_attn: bool, conc: int) -> RecipeEval:
    config = load_config(seed)
    job = next(j for j in jobs if j.fields["dp-attn"] is dp_attn and j.conc == conc)
    result = evaluate_job(job, config, WorkTreeSnapshot(config.root))
    assert result is not None
    assert result.errors == []
    assert len(result.servers) == 1
    return result


def test_dep_job_at_conc_48(seed: Path, jobs: list[Job]) -> None:
    r = _eval(seed, jobs, True, 48)
    assert r.recipe == RECIPE
    equiv = r.env["ATOM_DP_LB_REQ_EQUIV"]
    assert (equiv.text, equiv.location.path, equiv.location.line, equiv.conditional) == ("512", RECIPE, 22, False)
    [interval] = r.flag_values("--state-checkpoint-interval-tokens")
    assert interval is not None
    assert (interval.text, interval.location.path, interval.location.line) == ("8192", RECIPE, 15)
    assert interval.expression == "8192"
    [seqs] = r.flag_values("--max-num-seqs")
    assert seqs is not None
    assert (seqs.text, seqs.location.line, seqs.expression) == ("96", 9, "$((2 * CONC))")
    assert not r.has_flag("--synthetic-acceptance-length")
    assert [f.name for f in r.servers[0]] == [
        "--model", "--server-port", "--tensor-parallel-size", "--max-num-seqs",
        "--state-checkpoint-interval-tokens", "--enable-prefix-caching", "--method",
        "--num-speculative-tokens", "--enable-dp-attention", "--dp-session-affinity",
        "--expert-parallel-size", "--all2all-backend", "--dp-load-balance",
    ]
    [ep] = r.flag_values("--expert-parallel-size")
    assert ep is not None and ep.text == "8"
    # "$EP_SIZE" comes from the job: its location is the search-space row of the config.
    assert (ep.location.path, ep.location.line) == ("configs/amd-master.yaml", 13)
    assert r.early_exits == [] and r.missing_env == []


def test_tp_job_at_conc_4(seed: Path, jobs: list[Job]) -> None:
    r = _eval(seed, jobs, False, 4)
    assert r.flag_values("--synthetic-acceptance-length")[0] is not None
    [accept] = r.flag_values("--synthetic-acceptance-length")
    assert accept is not None
    assert (accept.text, accept.location.line, accept.conditional) == ("2.49", 27, False)
    [seqs] = r.flag_values("--max-num-seqs")
    assert seqs is not None and seqs.text == "8"
    assert "ATOM_DP_LB_REQ_EQUIV" not in r.env
    assert not r.has_flag("--enable-dp-attention")
    [interval] = r.flag_values("--state-checkpoint-interval-tokens")
    assert interval is not None and (interval.text, interval.location.line) == ("8192", 15)


def test_every_job_has_known_flags(seed: Path, jobs: list[Job]) -> None:
    assert len(jobs) == 10
    for dp in (True, False):
        for conc in ([48, 64, 96, 128, 256] if dp else [1, 2, 4, 8, 16]):
            r = _eval(seed, jobs, dp, conc)
            # Every flag is known but the port, which the node's launcher sets at run time.
            assert all(f.value is None or f.value.known or set_at_run_time(f.value) for f in r.servers[0])
            assert r.flag_values("--max-num-seqs")[0] == r.flag_values("--max-num-seqs")[0]
            seqs = r.flag_values("--max-num-seqs")[0]
            assert seqs is not None and seqs.text == str(2 * conc)
