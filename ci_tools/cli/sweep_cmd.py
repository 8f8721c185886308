"""``ci-tools sweep``: run jobs on this machine (``run``, ``local``), fit them to GitHub (``plan``), report (``report``)."""

from __future__ import annotations

import dataclasses
import json
import os
import shlex
import signal
import sys
import threading
from pathlib import Path
from types import FrameType
from typing import Any, Iterator

import click

from ..config import ProjectConfig
from ..errors import UsageError
from ..jobs.job import Job
from ..jobs.matrix import expand
from ..model.keys import keys_matching
from ..model.repository import load_repo
from ..validation.validate import require_readable
from ..revision.snapshot import WorkTreeSnapshot
from ..sweep.context import SweepContext, checkout_sha
from ..sweep.environment import describe
from ..sweep.jobs import job_from_entry, load_matrix, parse_job_json, read_matrix
from ..sweep.launchers import LAUNCHERS
from ..sweep.local import run_local
from ..sweep.plan import GITHUB_MAX_MATRIX, plan_entries, plan_from_selection
from ..sweep.report import DEFAULT_REPORT_METRICS, collect, outcome_text, render_markdown
from ..sweep.run import Prepared, execute, plan_job, prepare
from ..sweep.settings import SweepSettings, load_sweep_settings
from ..sweep.status import STOPPED, SUCCESS, StatusRecord
from .common import get_config, handle_errors, repo_options, writable_output, write_output

EXIT_STOPPED = 128 + signal.SIGTERM


@click.group("sweep")
def sweep_group() -> None:
    """Run benchmark jobs on this machine and report their outcome."""


def _run_options(func: Any) -> Any:
    func = click.option("--settings-from", "settings_from", type=click.Path(file_okay=False, exists=True),
                        default=None, metavar="DIR",
                        help="Read the `sweep:` settings (launchers, docker/srun arguments, model cache, limits) from "
                             "DIR/.ci-tools.yaml, and the launch step and the fleet's launchers "
                             "(runners/launch_*.sh) from DIR, instead of from the repository being run; no file "
                             "there means the defaults. The sweep workflow points it at the default branch.")(func)
    func = click.option("--run-eval", is_flag=True,
                        help="Set RUN_EVAL=true for the recipe (also implied by `\"run-eval\": true` in a --matrix file).")(func)
    func = click.option("--dry-run", is_flag=True,
                        help="Print each job's node, launcher command and full environment instead of running.")(func)
    func = click.option("--launcher", type=click.Choice(sorted(LAUNCHERS)), default=None,
                        help="Override the launcher chosen from the runner label (`repository`: the repository's "
                             "runners/launch_<fleet>.sh, as its workflow's launch step runs it).")(func)
    func = click.option("--grace", type=click.FloatRange(min=0), default=None,
                        help="Seconds between SIGTERM and SIGKILL when stopping (default: sweep.grace-seconds).")(func)
    func = click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=None,
                        help="Seconds a job may run (default: sweep.timeouts for its config key, else "
                             "sweep.timeout-minutes).")(func)
    func = click.option("--result-dir", type=click.Path(file_okay=False), default="sweep-results", show_default=True,
                        help="Each job writes into DIR/<job-id>/.")(func)
    return func


class _StopOnSignal:
    """SIGTERM and SIGINT set an event instead of killing ci-tools, so the recipe's group is stopped first."""

    def __init__(self) -> None:
        self.event = threading.Event()
        self.received: str | None = None
        self._previous: dict[int, Any] = {}

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        self.received = signal.Signals(signum).name
        self.event.set()

    def __enter__(self) -> _StopOnSignal:
        for sig in (signal.SIGTERM, signal.SIGINT):
            self._previous[sig] = signal.signal(sig, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)


def _settings(config: ProjectConfig, settings_from: str | None = None) -> SweepSettings:
    """The sweep settings: the repository's own, or those of a trusted checkout when ``settings_from`` is given."""
    return load_sweep_settings(get_config(settings_from, None) if settings_from else config)


def _context(config: ProjectConfig, settings_from: str | None, result_dir: str, grace: float | None, *,
             parallel: int = 1, run_eval: bool = False, planned_sha: str = "") -> SweepContext:
    trusted = get_config(settings_from, None) if settings_from else None
    settings = load_sweep_settings(trusted or config)
    if grace is not None:
        settings = dataclasses.replace(settings, grace_seconds=grace)
    # Records name the commit that ran: the checkout's (verified to be the pinned one on the fleet), else the
    # one the matrix file was planned at.
    sha = checkout_sha(config.root) or planned_sha
    return SweepContext(config, WorkTreeSnapshot(config.root), settings, Path(result_dir), dict(os.environ),
                        parallel=parallel, run_eval=run_eval, sha=sha,
                        launch_root=trusted.root.resolve() if trusted is not None else None, launch_config=trusted)


def _print_dry_run(prepared: Prepared, ctx: SweepContext, slot_index: int) -> None:
    label = prepared.job.label()
    planned = plan_job(prepared, ctx, ctx.slot(prepared.job, slot_index, hold=False))
    plan, slot = planned.plan, planned.slot
    if plan is None or planned.env is None:
        click.echo(f"# {label}: not run: {planned.refusal}")
        return
    click.echo(f"# {label} (job {prepared.job.id}, launcher {plan.launcher})")
    if slot is not None:
        click.echo(f"# node {slot.node}, port {slot.port}, timeout {prepared.timeout:g} s")
    gpus = ctx.gpus()
    click.echo(f"# GPUs: {gpus.describe() if gpus is not None else 'none listed (no nvidia-smi, amd-smi or rocm-smi)'}")
    lines = [f"# working directory: {plan.cwd}"]
    if planned.refusal:
        lines.append(f"# not run: {planned.refusal}")
    lines += describe(planned.env, ctx.base_env)
    lines += ["# command:", shlex.join(plan.argv)]
    click.echo("\n".join(lines))  # one write per job: a full sweep prints ~180,000 lines


def _summary_line(record: StatusRecord, job_dir: Path) -> str:
    detail = record.message if record.status == "not-run" else outcome_text(record)
    return (f"ci-tools: {record.label}: {record.status} ({detail}) after {record.duration_seconds:.1f}s; "
            f"status record {job_dir / 'status.json'}")


@sweep_group.command("run")
@repo_options
@_run_options
@click.option("--job", "job_json", default=None, metavar="JSON", help="The job as a matrix entry (JSON).")
@click.option("--matrix", "matrix_file", type=click.Path(dir_okay=False), default=None,
              help="A matrix file written by `ci-tools matrix`; use with --index.")
@click.option("--index", type=click.IntRange(min=0), default=None, help="Which job of --matrix to run (0-based).")
@click.option("--quiet", is_flag=True, help="Write the recipe's output only to the log file.")
@handle_errors
def run_command(repo_dir: str | None, config_file: str | None, result_dir: str, timeout: float | None, grace: float | None,
                launcher: str | None, dry_run: bool, run_eval: bool, settings_from: str | None, job_json: str | None,
                matrix_file: str | None, index: int | None, quiet: bool) -> None:
    """Run one job: resolve its recipe, launch it in its own process group, write a status record.

    Exit code: 0 when the recipe succeeded, 1 when it failed, timed out or has no recipe,
    143 when ci-tools was stopped by SIGTERM or SIGINT.
    """
    if (job_json is None) == (matrix_file is None):
        raise UsageError("give exactly one of --job JSON or --matrix FILE --index N")
    if matrix_file is not None:
        if index is None:
            raise UsageError("--matrix needs --index N (which job of the file to run)")
        matrix = read_matrix(matrix_file)
        entries, run_eval, planned_sha = matrix.entries, run_eval or matrix.run_eval, matrix.sha
        if not index < len(entries):
            raise UsageError(f"--index {index} is out of range: the matrix has {len(entries)} jobs", path=matrix_file)
        job = job_from_entry(entries[index], f"{matrix_file}[{index}]")
    else:
        assert job_json is not None
        job, planned_sha = parse_job_json(job_json), ""
    config = get_config(repo_dir, config_file)
    ctx = _context(config, settings_from, result_dir, grace, run_eval=run_eval, planned_sha=planned_sha)
    prepared = prepare(job, ctx, launcher=launcher, timeout=timeout)
    if dry_run:
        _print_dry_run(prepared, ctx, 0)
        return
    echo = None if quiet else sys.stdout.buffer
    with _StopOnSignal() as stopper:
        record = execute(prepared, ctx, 0, stop=stopper.event, echo=echo)
    click.echo(_summary_line(record, prepared.job_dir), err=True)
    if record.status == STOPPED:
        raise SystemExit(EXIT_STOPPED)
    raise SystemExit(0 if record.status == SUCCESS else 1)


def _parse_indices(text: str) -> list[int]:
    out: list[int] = []
    for part in text.replace(",", " ").split():
        if not part.isdigit():
            raise UsageError(f"--indices must be a list of job numbers such as `0,5,9`, found {part!r}")
        out.append(int(part))
    return out


def _select_jobs(config: ProjectConfig, matrix_file: str | None, indices: str | None, keys: tuple[str, ...],
                 scenario: str | None, concs: tuple[int, ...]) -> tuple[list[Job], bool, str]:
    """The jobs to run, whether the matrix file asks for evals, and the commit it was planned at."""
    jobs: list[Job]
    run_eval, planned_sha = False, ""
    if matrix_file is not None:
        matrix = read_matrix(matrix_file)
        entries, run_eval, planned_sha = matrix.entries, matrix.run_eval, matrix.sha
        chosen = _parse_indices(indices) if indices is not None else list(range(len(entries)))
        for i in chosen:
            if i >= len(entries):
                raise UsageError(f"job number {i} is out of range: the matrix has {len(entries)} jobs", path=matrix_file)
        jobs = [job_from_entry(entries[i], f"{matrix_file}[{i}]") for i in chosen]
    else:
        if indices is not None:
            raise UsageError("--indices selects jobs of a --matrix file")
        repo = load_repo(WorkTreeSnapshot(config.root), config, with_changelog=False)
        require_readable(repo)
        wanted = keys_matching(keys, repo.configs) if keys else None
        if keys and not wanted:
            raise UsageError(f"no config key matches {', '.join(keys)}")
        jobs = expand(repo, wanted)
    if scenario:
        jobs = [j for j in jobs if j.scenario == scenario]
    if concs:
        jobs = [j for j in jobs if any(c in concs for c in j.concs)]
    if not jobs:
        raise UsageError("the selection leaves no job to run")
    return jobs, run_eval, planned_sha


@sweep_group.command("local")
@repo_options
@_run_options
@click.option("--matrix", "matrix_file", type=click.Path(dir_okay=False), default=None,
              help="Run jobs of this matrix file instead of expanding the repository's configs.")
@click.option("--indices", default=None, metavar="LIST", help="With --matrix: job numbers to run, e.g. `0,5,9`.")
@click.option("--key", "keys", multiple=True, metavar="GLOB", help="Config keys to run (repeatable; `*` wildcard).")
@click.option("--scenario", type=click.Choice(["fixed-seq-len", "agentic-coding"]), default=None)
@click.option("--conc", "concs", multiple=True, type=int, help="Only jobs at this concurrency (repeatable).")
@click.option("-j", "--jobs", "parallel", type=click.IntRange(min=1), default=1, show_default=True,
              help="How many jobs run at the same time.")
@click.option("--no-progress", is_flag=True, help="Print one line per job instead of a progress bar.")
@handle_errors
def local_command(repo_dir: str | None, config_file: str | None, result_dir: str, timeout: float | None, grace: float | None,
                  launcher: str | None, dry_run: bool, run_eval: bool, settings_from: str | None,
                  matrix_file: str | None, indices: str | None, keys: tuple[str, ...], scenario: str | None,
                  concs: tuple[int, ...], parallel: int, no_progress: bool) -> None:
    """Run a selection of the matrix on this machine, one after another or -j N at once."""
    config = get_config(repo_dir, config_file)
    jobs, matrix_eval, planned_sha = _select_jobs(config, matrix_file, indices, keys, scenario, concs)
    ctx = _context(config, settings_from, result_dir, grace, parallel=parallel, run_eval=run_eval or matrix_eval,
                   planned_sha=planned_sha)
    prepared = [prepare(j, ctx, launcher=launcher, timeout=timeout) for j in jobs]
    if dry_run:
        for i, p in enumerate(prepared):
            _print_dry_run(p, ctx, i % parallel)
        return
    with _StopOnSignal() as stopper, _progress(len(prepared), enabled=not no_progress) as progress:
        result = run_local(prepared, ctx, stop=stopper.event, on_start=progress.start, on_done=progress.done)
    ok = sum(1 for r in result.records if r.status == SUCCESS)
    click.echo(f"ci-tools: {len(result.records)} job(s) ran: {ok} succeeded, {result.failed} did not"
               + (f"; {result.skipped} not started (stopped)" if result.skipped else "")
               + f"; records under {Path(result_dir).resolve()}", err=True)
    if stopper.received:
        raise SystemExit(EXIT_STOPPED)
    raise SystemExit(0 if result.failed == 0 and not result.skipped else 1)


class _Progress:
    """A rich progress bar on stderr, or plain lines when it is off or stderr is not a terminal."""

    def __init__(self, total: int, enabled: bool) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
        )

        self.console = Console(stderr=True)
        self.bar: Progress | None = None
        if enabled:
            self.bar = Progress(TextColumn("[bold]sweep"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                                TextColumn("{task.description}"), console=self.console, transient=False)
            self.task = self.bar.add_task("", total=total)

    def start(self, prepared: Prepared) -> None:
        if self.bar is not None:
            self.bar.update(self.task, description=prepared.job.label())

    def done(self, record: StatusRecord) -> None:
        line = f"{record.status:>9}  {record.label}  ({record.duration_seconds:.1f}s)"
        if self.bar is not None:
            self.bar.console.print(line, markup=False, highlight=False)
            self.bar.advance(self.task)
        else:
            click.echo(line, err=True)


class _progress:
    def __init__(self, total: int, enabled: bool) -> None:
        self.inner = _Progress(total, enabled)

    def __enter__(self) -> _Progress:
        if self.inner.bar is not None:
            self.inner.bar.start()
        return self.inner

    def __exit__(self, *exc: object) -> None:
        if self.inner.bar is not None:
            self.inner.bar.stop()


def _write_github_output(values: dict[str, str]) -> None:
    path = os.environ.get("GITHUB_OUTPUT")
    if not path:
        raise UsageError("--github-output needs $GITHUB_OUTPUT (it is set inside GitHub Actions)")
    with open(path, "a", encoding="utf-8") as fh:
        for name, value in values.items():
            if "\n" in value:
                raise UsageError(f"output {name} must be a single line")
            fh.write(f"{name}={value}\n")


@sweep_group.command("plan")
@repo_options
@click.option("--matrix", "matrix_file", type=click.Path(dir_okay=False), default=None,
              help="Plan the jobs of this matrix file (as `ci-tools matrix` writes it).")
@click.option("--selection", default=None, metavar="JSON",
              help="Plan a dispatched selection (the `selection` input of the sweep workflow); needs --rev.")
@click.option("--rev", default=None, metavar="SHA", help="With --selection: the pinned commit whose configs are read.")
@click.option("--write-matrix", type=click.Path(dir_okay=False), default=None,
              help="With --selection: write the planned jobs here, for `sweep local --matrix`.")
@click.option("--write-baseline", type=click.Path(dir_okay=False), default=None,
              help="With a selection that asks for a same-node baseline: write the merge-base's jobs here.")
@click.option("--max-entries", type=click.IntRange(min=1, max=GITHUB_MAX_MATRIX), default=GITHUB_MAX_MATRIX,
              show_default=True, help="Most entries the GitHub matrix may have.")
@click.option("--github-output", is_flag=True, help="Write `matrix` and `jobs` to $GITHUB_OUTPUT instead of stdout.")
@handle_errors
def plan_command(repo_dir: str | None, config_file: str | None, matrix_file: str | None, selection: str | None,
                 rev: str | None, write_matrix: str | None, write_baseline: str | None, max_entries: int,
                 github_output: bool) -> None:
    """Group jobs into at most 256 GitHub matrix entries (a runner label and job numbers each).

    The jobs stay in the matrix file; the GitHub matrix only says which entry runs which of them, so a
    sweep of any size fits GitHub's matrix and output limits.
    """
    if (matrix_file is None) == (selection is None):
        raise UsageError("give exactly one of --matrix FILE or --selection JSON --rev SHA")
    if selection is not None:
        if rev is None or write_matrix is None:
            raise UsageError("--selection needs --rev SHA (the pinned commit) and --write-matrix FILE")
        planned = plan_from_selection(get_config(repo_dir, config_file), rev, selection)
        data = planned.matrix_file()
        Path(write_matrix).write_text(json.dumps(data, separators=(",", ":")) + "\n", encoding="utf-8")
        entries, source, pairs = data["jobs"], write_matrix, planned.pairs
        if planned.baseline_sha:
            if write_baseline is None:
                raise UsageError("the selection asks for a same-node baseline: give --write-baseline FILE")
            Path(write_baseline).write_text(json.dumps(planned.baseline_file(), separators=(",", ":")) + "\n",
                                            encoding="utf-8")
        baseline_sha, baseline_jobs = planned.baseline_sha, len(planned.baseline_jobs)
    else:
        assert matrix_file is not None
        entries, source, pairs, baseline_sha, baseline_jobs = load_matrix(matrix_file), matrix_file, None, "", 0
    planned_entries = plan_entries(entries, source, max_entries, pairs)
    matrix = json.dumps({"include": [e.to_json() for e in planned_entries]}, separators=(",", ":"))
    if github_output:
        _write_github_output({"matrix": matrix, "jobs": str(len(entries) + baseline_jobs),
                              **({"baseline-sha": baseline_sha} if baseline_sha else {})})
    else:
        click.echo(matrix)


def _iter_dirs(dirs: tuple[str, ...]) -> Iterator[Path]:
    for d in dirs:
        path = Path(d)
        if not path.is_dir():
            raise UsageError(f"{d} is not a directory of sweep results")
        yield path


@sweep_group.command("report")
@click.argument("dirs", nargs=-1, required=True, type=click.Path())
@repo_options
@click.option("--metric", "metrics", multiple=True, metavar="NAME",
              help="A metric to show as a column: a canonical name of record.json (throughput_per_gpu, "
                   "interactivity, ttft_median, ...) or a dotted path in each job's result file "
                   "($RESULT_FILENAME.json); repeatable; default: sweep.report-metrics, else "
                   + ", ".join(DEFAULT_REPORT_METRICS) + ".")
@click.option("--title", default="Benchmark sweep", show_default=True)
@click.option("--output", "-o", type=click.Path(), default=None, callback=writable_output,
              help="Write the Markdown to this file.")
@click.option("--step-summary", is_flag=True, help="Also append the Markdown to $GITHUB_STEP_SUMMARY.")
@handle_errors
def report_command(dirs: tuple[str, ...], repo_dir: str | None, config_file: str | None, metrics: tuple[str, ...],
                   title: str, output: str | None, step_summary: bool) -> None:
    """Turn status records (and result JSON) under DIRS into a Markdown table."""
    if not metrics:
        metrics = _settings(get_config(repo_dir, config_file)).report_metrics or DEFAULT_REPORT_METRICS
    reports, problems = collect(_iter_dirs(dirs))
    for problem in problems:
        click.echo(f"ci-tools: warning: skipped {problem}", err=True)
    text = render_markdown(reports, metrics=metrics, title=title)
    if output:
        write_output(output, text)
    else:
        click.echo(text, nl=False)
    if step_summary:
        path = os.environ.get("GITHUB_STEP_SUMMARY")
        if not path:
            raise UsageError("--step-summary needs $GITHUB_STEP_SUMMARY (it is set inside GitHub Actions)")
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(text)
