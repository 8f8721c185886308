"""Run one job on this machine as the fleet's workflow runs it, and record what happened.

Layout of a job's directory (``<result-root>/<job-id>/``)::

    status.json   the status record (always written, even when nothing ran)
    record.json   what the job ran and measured (ci_tools.results.record): identity, commit, runner and node,
                  GPUs, outcome, per-concurrency validity and metrics as InferenceX's process_result.py computes them
    job.log       everything the launcher and the recipe printed, stdout and stderr merged
    results/      what the job wrote where the fleet keeps it (the workspace's ``$RESULT_FILENAME.json``,
                  ``server.log``, ``gpu_metrics.csv``, ... at their relative paths) and, with ci-tools'
                  own launchers, the recipe's RESULT_DIR; kept whatever the outcome
    github/       the job's GITHUB_ENV, GITHUB_OUTPUT, GITHUB_PATH and step summary files

A job is refused before anything starts (``not-run``, with the reason) when
no node name is known for it, when its launcher or recipe does not exist,
or when the recipe requires a variable nothing supplies.
"""

from __future__ import annotations

import datetime as _dt
import threading
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from ..errors import UsageError
from ..jobs.contract import resolve_recipe
from ..jobs.job import Job
from ..jobs.resolution import RecipeResolution
from .context import SweepContext
from .environment import LAUNCHER, JobEnvironment, job_environment, prepare_github_files, unsupplied
from .gpus import mismatch
from .launchers import LAUNCHERS, REPOSITORY, LaunchPlan, LaunchRequest
from .outputs import collect, files_under, list_workspace
from .process import ProcessOutcome, run_in_group
from .records import raw_results, write_record
from .slots import Slot
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


# Files left in the checkout that a status record names (a launcher may clone a whole repository there).
_UNCOLLECTED_SHOWN = 50


@dataclass(frozen=True)
class Prepared:
    job: Job
    job_dir: Path
    resolution: RecipeResolution
    choice: str | None  # the launcher asked for (--launcher, sweep.launchers); None: the repository's if any
    timeout: float

    @property
    def recipe(self) -> str | None:
        return self.resolution.script

    @property
    def candidates(self) -> tuple[str, ...]:
        return self.resolution.candidates


@dataclass(frozen=True)
class Planned:
    """A job made concrete for a slot: what runs, with what, or why it cannot."""

    slot: Slot | None
    env: JobEnvironment | None
    plan: LaunchPlan | None
    recipe: str | None
    refusal: str = ""
    missing: tuple[str, ...] = ()


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def prepare(job: Job, ctx: SweepContext, *, launcher: str | None = None, timeout: float | None = None) -> Prepared:
    """What is decided once per job, before a slot is known: the recipe, the launcher asked for, the limit."""
    choice = launcher or ctx.settings.launcher_for(str(job.get("runner") or ""))
    if choice is not None and choice not in LAUNCHERS:
        raise UsageError(f"unknown launcher {choice!r}, expected one of {', '.join(LAUNCHERS)}")
    limit = timeout if timeout is not None else ctx.settings.timeout_for(job.config_key)
    return Prepared(job, ctx.result_root / job.id, resolve_recipe(job, ctx.config, ctx.snapshot), choice, limit)


def _for_fleet(resolution: RecipeResolution, node: str) -> RecipeResolution:
    fleet = node.split("_", 1)[0]
    return next((r for r in resolution.every_fleet if fleet in r.fleets), resolution)


def plan_job(prepared: Prepared, ctx: SweepContext, slot: Slot | None) -> Planned:
    """The launcher, argv and environment of a job in ``slot``, or the reason it cannot run."""
    job = prepared.job
    if slot is None:
        return Planned(None, None, None, prepared.recipe,
                       f"no node to run as: runner label `{job.get('runner')}` has no nodes in "
                       f"{ctx.config.runners} and RUNNER_NAME is not set")
    contract = ctx.contract
    script = contract.node_launcher(slot.node)
    kind = prepared.choice or (REPOSITORY if script else "direct")
    resolution = _for_fleet(prepared.resolution, slot.node)
    if kind == REPOSITORY and script is None:
        where = "the trusted checkout" if ctx.trusted else "the repository"
        pattern = contract.launcher_pattern or "runners/launch_<fleet>.sh"
        return Planned(slot, None, None, resolution.script,
                       f"{where} has no launcher for node {slot.node} "
                       f"({pattern.format(fleet=slot.node.split('_', 1)[0], node=slot.node)})")
    if resolution.missing or (kind != REPOSITORY and resolution.script is None):
        looked = ", ".join(resolution.candidates) or resolution.reason
        return Planned(slot, None, None, None, f"no recipe script found; looked for: {looked}")
    env = job_environment(job, contract, slot, prepared.job_dir, run_eval=ctx.run_eval)
    gpus_needed = env.values().get("GPU_COUNT", "")
    unfit = "" if job.multinode else mismatch(ctx.gpus(), str(job.get("runner") or ""),
                                              int(gpus_needed) if gpus_needed.isdigit() else None)
    request = LaunchRequest(job=job, recipe=resolution.script, workspace=slot.workspace,
                            result_dir=prepared.job_dir / RESULTS_DIR, env=env.values(), node=slot.node,
                            model_cache=ctx.settings.model_cache, extra_args=_extra_args(ctx, kind),
                            launcher_script=ctx.launcher_argv_path(script) if script else None)
    plan = LAUNCHERS[kind](request)
    if plan.own:
        env = env.with_values(LAUNCHER, plan.own)
    missing: tuple[str, ...] = ()
    if resolution.script is not None:
        launcher_names = contract.launcher_names(script) if kind == REPOSITORY and script else ()
        missing = tuple(unsupplied(resolution.script, job, contract, plan.env, ctx.base_env, launcher_names,
                                   ctx.config, ctx.snapshot))
    refusal = f"the runner's GPUs do not fit the job: {unfit}" if unfit else ""
    if missing:
        refusal = ("the recipe requires " + ", ".join(missing) + ", which neither the workflow, the runner, "
                   "the launcher nor this environment supplies")
    return Planned(slot, env, plan, resolution.script, refusal, missing)


def _extra_args(ctx: SweepContext, kind: str) -> tuple[str, ...]:
    return ctx.settings.docker_args if kind == "docker" else ctx.settings.srun_args if kind == "slurm" else ()


def _status_word(outcome: ProcessOutcome) -> str:
    if outcome.stopped:
        return STOPPED
    if outcome.timed_out:
        return TIMED_OUT
    return SUCCESS if outcome.exit_code == 0 else FAILED


def _record(prepared: Prepared, planned: Planned | None, launcher: str, **kwargs: Any) -> StatusRecord:
    job = prepared.job
    slot = planned.slot if planned is not None else None
    env = planned.env.values() if planned is not None and planned.env is not None else {}
    return StatusRecord(job_id=job.id, label=job.label(), config_key=job.config_key, scenario_type=job.scenario,
                        runner=str(job.get("runner") or ""), launcher=launcher,
                        recipe=planned.recipe if planned is not None else prepared.recipe, conc=job.conc,
                        node=slot.node if slot else "", port=slot.port if slot else None,
                        timeout_seconds=prepared.timeout, result_filename=env.get("RESULT_FILENAME"), **kwargs)


def _finish(prepared: Prepared, ctx: SweepContext, planned: Planned, record: StatusRecord) -> StatusRecord:
    """Write the status record, then ``record.json`` with the metrics of what the job left."""
    write_status(prepared.job_dir, record)
    env = planned.plan.env if planned.plan is not None else planned.env.values() if planned.env else {}
    write_record(prepared.job, record, env, prepared.job_dir, sha=ctx.sha, runner=ctx.runner_name, gpus=ctx.gpus())
    return record


def _refuse(prepared: Prepared, ctx: SweepContext, planned: Planned) -> StatusRecord:
    (prepared.job_dir / LOG_FILE).write_text("", encoding="utf-8")
    launcher = planned.plan.launcher if planned.plan is not None else "none"
    record = _record(prepared, planned, launcher, argv=planned.plan.argv if planned.plan else (), status=NOT_RUN,
                     started_at=_now(), finished_at=_now(), message=planned.refusal, missing_env=planned.missing)
    return _finish(prepared, ctx, planned, record)


def _messages(outcome: ProcessOutcome, cleanup: tuple[str, ...]) -> str:
    parts = []
    if (outcome.timed_out or outcome.stopped) and cleanup:
        parts.append("ran cleanup: " + " ".join(cleanup))
    if outcome.leftovers:
        detached = sum(1 for p in outcome.leftovers if p.detached)
        parts.append(f"the recipe left {len(outcome.leftovers)} process(es) running after it exited"
                     + (f" ({detached} detached from its process group)" if detached else "")
                     + "; they were terminated" + (" with SIGKILL" if outcome.killed else ""))
    if outcome.survivors:
        parts.append(f"{len(outcome.survivors)} process(es) survived SIGKILL: "
                     + ", ".join(map(str, outcome.survivors)))
    return "; ".join(parts)


def execute(prepared: Prepared, ctx: SweepContext, slot_index: int = 0, *, stop: threading.Event | None = None,
            echo: BinaryIO | None = None) -> StatusRecord:
    """Run a prepared job in slot ``slot_index`` and write its status record; returns the record."""
    prepared.job_dir.mkdir(parents=True, exist_ok=True)
    results_dir = prepared.job_dir / RESULTS_DIR
    results_dir.mkdir(exist_ok=True)
    slot = ctx.slot(prepared.job, slot_index)
    try:
        planned = plan_job(prepared, ctx, slot)
        if planned.refusal or planned.plan is None:
            return _refuse(prepared, ctx, planned)
        return _launch(prepared, ctx, planned, planned.plan, stop, echo)
    finally:
        if slot is not None:
            ctx.release(slot)


def _launch(prepared: Prepared, ctx: SweepContext, planned: Planned, plan: LaunchPlan,
            stop: threading.Event | None, echo: BinaryIO | None) -> StatusRecord:
    assert planned.slot is not None and ctx.workspaces is not None
    started = _now()
    env = {**ctx.base_env, **plan.env}
    prepare_github_files(prepared.job_dir)
    excluded = ctx.workspaces.excluded()
    before = list_workspace(planned.slot.workspace, excluded)
    try:
        outcome = run_in_group(plan.argv, env=env, cwd=plan.cwd, log_path=prepared.job_dir / LOG_FILE,
                               timeout=prepared.timeout, grace=ctx.settings.grace_seconds, stop=stop, echo=echo,
                               token=f"{prepared.job.id}-{uuid.uuid4().hex[:12]}")
    except OSError as exc:  # the launcher itself is missing or not executable
        record = _record(prepared, planned, plan.launcher, argv=plan.argv, status=NOT_RUN, started_at=started,
                         finished_at=_now(), message=f"cannot start `{plan.argv[0]}`: {exc.strerror or exc}")
        return _finish(prepared, ctx, planned, record)
    if (outcome.timed_out or outcome.stopped) and plan.cleanup:
        # The launcher client is gone, but a container or Slurm allocation may not be.
        run_in_group(plan.cleanup, env=env, cwd=plan.cwd, log_path=prepared.job_dir / "cleanup.log",
                     timeout=60, grace=5)
    results_dir = prepared.job_dir / RESULTS_DIR
    patterns = ctx.contract.upload_patterns(prepared.job, plan.env, {"name": planned.slot.node})
    _, left = collect(before, results_dir, patterns, excluded, move=True)
    status, message = _status_word(outcome), _messages(outcome, plan.cleanup)
    result_name = plan.env.get("RESULT_FILENAME")
    raws = raw_results(results_dir, plan.env, prepared.job.multinode)
    found = raws[0] if raws else None
    if status == SUCCESS and result_name and found is None and plan.env.get("EVAL_ONLY") != "true":
        # The launch step's own check: a run without its result file failed.
        wanted = f"{result_name}_*.json" if prepared.job.multinode else f"{result_name}.json"
        status = FAILED
        message = "; ".join(filter(None, [f"the benchmark result {wanted} was not written", message]))
    record = _record(prepared, planned, plan.launcher, argv=plan.argv, status=status,
                     exit_code=outcome.exit_code, signal=outcome.signal, timed_out=outcome.timed_out,
                     stopped=outcome.stopped, killed=outcome.killed,
                     leftover_processes=len(outcome.leftovers),
                     leftovers=tuple(p.describe() for p in outcome.leftovers),
                     detached_processes=sum(1 for p in outcome.leftovers if p.detached),
                     survivors=len(outcome.survivors), duration_seconds=round(outcome.duration, 3),
                     started_at=started, finished_at=_now(), message=message, results=files_under(results_dir),
                     result_file=found.relative_to(results_dir).as_posix() if found else None,
                     uncollected=tuple(left[:_UNCOLLECTED_SHOWN]) if planned.slot.shared_checkout else ())
    return _finish(prepared, ctx, planned, record)
