"""Run one job on this machine: resolve its recipe, launch it, record what happened.

Layout of a job's directory (``<result-root>/<job-id>/``)::

    status.json   the status record (always written, even when nothing ran)
    job.log       everything the recipe printed, stdout and stderr merged
    results/      the recipe's RESULT_DIR; kept whatever the outcome
"""

from __future__ import annotations

import datetime as _dt
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Mapping

from ..config import ProjectConfig
from ..errors import UsageError
from ..jobs.contract import resolve_recipe
from ..jobs.env.contract import contract_for
from ..jobs.job import Job
from ..revision.snapshot import Snapshot
from .launchers import LAUNCHERS, LaunchPlan, LaunchRequest
from .process import ProcessOutcome, run_in_group
from .settings import SweepSettings
from .status import (
    FAILED,
    LOG_FILE,
    NOT_RUN,
    RESULTS_DIR,
    STOPPED,
    SUCCESS,
    TIMED_OUT,
    StatusRecord,
    write_status,
)


@dataclass(frozen=True)
class Prepared:
    job: Job
    job_dir: Path
    recipe: str | None
    candidates: tuple[str, ...]
    plan: LaunchPlan | None


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def prepare(job: Job, config: ProjectConfig, settings: SweepSettings, snapshot: Snapshot, result_root: Path,
            *, runner_name: str = "", launcher: str | None = None, run_eval: bool = False) -> Prepared:
    """Everything decided before anything runs: recipe, launcher, argv, env."""
    kind = launcher or settings.launcher_for(str(job.get("runner") or ""))
    if kind not in LAUNCHERS:
        raise UsageError(f"unknown launcher {kind!r}, expected one of {', '.join(LAUNCHERS)}")
    job_dir = (result_root / job.id).resolve()
    resolution = resolve_recipe(job, config, snapshot)
    if resolution.script is None:  # missing, or not a bash script (srt-slurm, external)
        return Prepared(job, job_dir, None, resolution.candidates, None)
    extra = settings.docker_args if kind == "docker" else settings.srun_args if kind == "slurm" else ()
    request = LaunchRequest(job=job, recipe=resolution.script, repo_root=config.root.resolve(),
                            result_dir=job_dir / RESULTS_DIR, runner_name=runner_name,
                            model_cache=settings.model_cache, extra_args=extra, run_eval=run_eval,
                            contract=contract_for(config, snapshot))
    return Prepared(job, job_dir, resolution.script, resolution.candidates, LAUNCHERS[kind](request))


def _status_word(outcome: ProcessOutcome) -> str:
    if outcome.stopped:
        return STOPPED
    if outcome.timed_out:
        return TIMED_OUT
    return SUCCESS if outcome.exit_code == 0 else FAILED


def _results(results_dir: Path) -> tuple[str, ...]:
    if not results_dir.is_dir():
        return ()
    return tuple(sorted(p.relative_to(results_dir).as_posix() for p in results_dir.rglob("*") if p.is_file()))


def _record(prepared: Prepared, launcher: str, **kwargs: Any) -> StatusRecord:
    job = prepared.job
    return StatusRecord(job_id=job.id, label=job.label(), config_key=job.config_key, scenario_type=job.scenario,
                        runner=str(job.get("runner") or ""), launcher=launcher, recipe=prepared.recipe,
                        conc=job.conc, **kwargs)


def execute(prepared: Prepared, base_env: Mapping[str, str], *, timeout: float | None, grace: float,
            stop: threading.Event | None = None, echo: BinaryIO | None = None) -> StatusRecord:
    """Run a prepared job and write its status record; returns the record."""
    prepared.job_dir.mkdir(parents=True, exist_ok=True)
    results_dir = prepared.job_dir / RESULTS_DIR
    results_dir.mkdir(exist_ok=True)
    plan = prepared.plan
    if plan is None:
        (prepared.job_dir / LOG_FILE).write_text("", encoding="utf-8")
        record = _record(prepared, "none", argv=(), status=NOT_RUN, started_at=_now(), finished_at=_now(),
                         message="no recipe script found; looked for: " + ", ".join(prepared.candidates))
        write_status(prepared.job_dir, record)
        return record
    started = _now()
    env = {**base_env, **plan.env}
    try:
        outcome = run_in_group(plan.argv, env=env, cwd=plan.cwd, log_path=prepared.job_dir / LOG_FILE,
                               timeout=timeout, grace=grace, stop=stop, echo=echo)
    except OSError as exc:  # the launcher itself is missing or not executable
        record = _record(prepared, plan.launcher, argv=plan.argv, status=NOT_RUN, started_at=started,
                         finished_at=_now(), message=f"cannot start `{plan.argv[0]}`: {exc.strerror or exc}")
        write_status(prepared.job_dir, record)
        return record
    message = ""
    if (outcome.timed_out or outcome.stopped) and plan.cleanup:
        # The launcher client is gone, but a container or Slurm step may not be.
        run_in_group(plan.cleanup, env=env, cwd=plan.cwd, log_path=prepared.job_dir / "cleanup.log",
                     timeout=60, grace=5)
        message = "ran cleanup: " + " ".join(plan.cleanup)
    if outcome.leftovers:
        message = (message + "; " if message else "") + \
            f"the recipe left {outcome.leftovers} process(es) running after it exited; they were terminated"
    record = _record(prepared, plan.launcher, argv=plan.argv, status=_status_word(outcome),
                     exit_code=outcome.exit_code, signal=outcome.signal, timed_out=outcome.timed_out,
                     stopped=outcome.stopped, killed=outcome.killed, leftover_processes=outcome.leftovers,
                     duration_seconds=round(outcome.duration, 3), started_at=started, finished_at=_now(),
                     message=message, results=_results(results_dir))
    write_status(prepared.job_dir, record)
    return record
