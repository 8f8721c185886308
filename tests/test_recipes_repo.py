"""This repository's own recipes: every job evaluates, with every server flag known but the run-time port."""

from __future__ import annotations

from pathlib import Path

from ci_tools.config import load_config
from ci_tools.jobs.matrix import expand
from ci_tools.model.repository import load_repo
from ci_tools.evaluation.env_values import set_at_run_time
from ci_tools.evaluation.evaluate import evaluate_job, unknown_flags
from ci_tools.evaluation.rules import recipe_findings
from ci_tools.revision.snapshot import WorkTreeSnapshot

ROOT = Path(__file__).resolve().parent.parent


def test_every_job_of_the_repository_evaluates_without_unknown_server_flags() -> None:
    config = load_config(ROOT)
    repo = load_repo(WorkTreeSnapshot(ROOT), config)
    jobs = expand(repo)
    assert jobs, "the repository generates no jobs"
    problems: list[str] = []
    for job in jobs:
        result = evaluate_job(job, config, repo.snapshot)
        if result is None:
            problems.append(f"{job.label()}: no recipe resolves")
            continue
        if not result.servers:
            problems.append(f"{job.label()}: {result.recipe} reaches no server command line")
        # The server's port is the launcher's choice on the node: known to exist, unknown beforehand.
        for flag in (f for f in unknown_flags(result) if not set_at_run_time(f.value)):
            shown = flag.value.expression if flag.value is not None else flag.name
            problems.append(f"{job.label()}: {flag.name} is unknown ({shown} at {flag.location.as_text()})")
        problems += [f"{job.label()}: {err}" for err in result.errors]
    assert problems == []
    assert [f.message for f in recipe_findings(repo)] == []
