"""The environment a job's launcher starts with: the workflow's part and the runner's.

On the fleet the launch step of the repository's template gets the
template's ``env:`` blocks and the step's own (``RUNNER_NAME``,
``RESULT_FILENAME_BASE``), exports ``RESULT_FILENAME`` and ``GPU_COUNT``, and
inherits what the runner has (``GITHUB_WORKSPACE``, secrets it was given).
Here:

- the workflow's part is what ``matrix --env`` derives from the repository
  (:meth:`ci_tools.jobs.env.contract.JobEnvContract.workflow_env`), with the
  runner context of the job's node, so ``RESULT_FILENAME`` is built as the
  step builds it;
- the runner's part is the node (``RUNNER_NAME``), the workspace
  (``GITHUB_WORKSPACE``), a free ``PORT``, ``RUN_EVAL`` as asked, and
  ``GITHUB_ENV``/``GITHUB_OUTPUT``/``GITHUB_PATH`` as files of the job (a job
  cannot change the environment of the sweep's later steps);
- the rest is inherited from the environment ``sweep`` runs in (a secret the
  template reads from ``secrets.*`` reaches the job only that way).

A variable the recipe requires (``check_env_vars``, ``${X:?}``) that none of
these supply, nor the launcher that will run (what it sets is known by
name), fails the job before it is launched (:func:`unsupplied`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping

from ..config import ProjectConfig
from ..jobs.env.contract import JobEnvContract
from ..jobs.job import Job
from ..revision.snapshot import Snapshot
from .slots import Slot

WORKFLOW, RUNNER, LAUNCHER = "workflow", "runner", "launcher"
GITHUB_FILES = {"GITHUB_ENV": "env", "GITHUB_OUTPUT": "output", "GITHUB_PATH": "path"}
GITHUB_DIR = "github"
# Names whose values a dry run does not print (tokens and passwords in the inherited environment).
_SECRET_NAME = re.compile(r"TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|PRIVATE|API_?KEY|ACCESS_?KEY|AUTH", re.I)


@dataclass(frozen=True)
class Entry:
    value: str
    source: str  # WORKFLOW, RUNNER or LAUNCHER


@dataclass(frozen=True)
class JobEnvironment:
    """What a job's launcher gets on top of the inherited environment, and what the workflow leaves open."""

    entries: dict[str, Entry]
    open_names: tuple[str, ...]  # known to the workflow only at run time (secrets, github.*): inherited or unset

    def values(self) -> dict[str, str]:
        return {name: e.value for name, e in self.entries.items()}

    def with_values(self, source: str, values: Mapping[str, str]) -> JobEnvironment:
        entries = dict(self.entries)
        entries.update({n: Entry(v, source) for n, v in values.items()})
        return JobEnvironment(entries, self.open_names)


def job_environment(job: Job, contract: JobEnvContract, slot: Slot, job_dir: Path, *,
                    run_eval: bool) -> JobEnvironment:
    entries: dict[str, Entry] = {}
    open_names: list[str] = []
    for name, var in contract.workflow_env(job, {"name": slot.node}).items():
        if var.value is None:
            open_names.append(name)
        else:
            entries[name] = Entry(var.value, WORKFLOW)
    runner = {
        "RUNNER_NAME": slot.node,
        "GITHUB_WORKSPACE": str(slot.workspace),
        "PORT": str(slot.port),
        # Throughput jobs run without evals unless asked, as InferenceX's sweeps run them.
        "RUN_EVAL": "true" if run_eval else "false",
        **{name: str(job_dir / GITHUB_DIR / leaf) for name, leaf in GITHUB_FILES.items()},
    }
    if "GITHUB_STEP_SUMMARY" not in entries:
        runner["GITHUB_STEP_SUMMARY"] = str(job_dir / GITHUB_DIR / "step_summary.md")
    for name, value in runner.items():
        entries[name] = Entry(value, RUNNER)
    return JobEnvironment(entries, tuple(n for n in open_names if n not in entries))


def prepare_github_files(job_dir: Path) -> None:
    directory = job_dir / GITHUB_DIR
    directory.mkdir(parents=True, exist_ok=True)
    for leaf in (*GITHUB_FILES.values(), "step_summary.md"):
        (directory / leaf).touch()


def unsupplied(recipe: str, job: Job, contract: JobEnvContract, env: Mapping[str, str], inherited: Mapping[str, str],
               launcher_names: Iterable[str], config: ProjectConfig, snapshot: Snapshot) -> list[str]:
    """Variables the recipe requires that are unset or empty in everything the job will have.

    The recipe is evaluated (:mod:`ci_tools.evaluation`) with every name the
    job will have: the values many jobs share (the workflow's job-derived
    ones, ``RUN_EVAL``/``EVAL_ONLY``, an empty inherited value) as they are, the
    rest (the node, the port, paths, what the launcher sets, inherited
    values) present with values unknown.  Shared values let the evaluator
    reuse its work from job to job, as ``recipe lint`` does over a sweep; an
    unknown value is never taken for a missing one.
    """
    from ..evaluation.evaluate import evaluate_recipe

    full: dict[str, str | None] = {name: "" if value == "" else None for name, value in inherited.items()}
    full.update(dict.fromkeys(env))
    for name, var in contract.workflow_env(job).items():
        if var.value is not None and env.get(name) == var.value:
            full[name] = var.value
    for name in ("RUN_EVAL", "EVAL_ONLY"):
        if name in env:
            full[name] = env[name]
    full.update(dict.fromkeys(launcher_names))
    result = evaluate_recipe(recipe, full, config, snapshot)
    names: list[str] = []
    for missing in result.missing_env:
        if missing.name not in names:
            names.append(missing.name)
    return names


def describe(env: JobEnvironment, inherited: Mapping[str, str]) -> list[str]:
    """The full environment of the launcher, for ``--dry-run``: one ``NAME=value`` line a variable, grouped by
    where it comes from; inherited values whose names look secret are not shown."""
    from shlex import quote

    lines = ["# environment: from the workflow (as the launch step gets it)"]
    for name, e in env.entries.items():
        if e.source == WORKFLOW:
            lines.append(f"{name}={quote(e.value)}")
    lines.append("# from the runner (this machine, this job)")
    lines += [f"{n}={quote(e.value)}" for n, e in env.entries.items() if e.source == RUNNER]
    own = [(n, e) for n, e in env.entries.items() if e.source == LAUNCHER]
    if own:
        lines.append("# set by the launcher")
        lines += [f"{n}={quote(e.value)}" for n, e in own]
    if env.open_names:
        lines.append("# known to the workflow only when it runs (secrets, github.*): "
                     + ", ".join(f"{n} ({'inherited' if n in inherited else 'not set'})" for n in env.open_names))
    rest = sorted(n for n in inherited if n not in env.entries)
    lines.append("# inherited from this environment")
    for name in rest:
        lines.append(f"{name}=<hidden>" if _SECRET_NAME.search(name) else f"{name}={quote(inherited[name])}")
    return lines
