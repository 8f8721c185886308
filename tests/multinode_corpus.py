"""The real InferenceX tree's multinode jobs, loaded and evaluated once per test session."""

from __future__ import annotations

import functools
from dataclasses import dataclass

from ci_tools.config import ProjectConfig, load_config
from ci_tools.jobs.contract import job_env
from ci_tools.jobs.matrix import expand
from ci_tools.jobs.job import Job
from ci_tools.model.repository import load_repo
from ci_tools.shell.model import RecipeEval, ServerFlag, Value
from ci_tools.revision.snapshot import Snapshot, WorkTreeSnapshot

from conftest import full_corpus_dir


@dataclass(frozen=True)
class Corpus:
    config: ProjectConfig
    snapshot: Snapshot
    jobs: tuple[Job, ...]


@functools.cache
def _corpus() -> Corpus:
    root = full_corpus_dir()
    config = load_config(root)
    snapshot = WorkTreeSnapshot(root)
    repo = load_repo(snapshot, config)
    return Corpus(config, snapshot, tuple(j for j in expand(repo) if j.multinode))


def corpus() -> Corpus:
    """The tree's multinode jobs (skips, naming the path, when the shared tree is absent)."""
    full_corpus_dir()
    return _corpus()


@functools.cache
def _evaluations() -> tuple[tuple[Job, RecipeEval], ...]:
    from ci_tools.evaluation.evaluate import evaluate_job

    c = _corpus()
    out = []
    for job in c.jobs:
        result = evaluate_job(job, c.config, c.snapshot)
        assert result is not None, f"{job.label()}: a multinode job always gets a result"
        out.append((job, result))
    return tuple(out)


def evaluations() -> tuple[tuple[Job, RecipeEval], ...]:
    """Every multinode job with its evaluation, computed once and shared by the tests."""
    full_corpus_dir()
    return _evaluations()


def find_job(config_key: str, config_file: str | None = None, concs: list[int] | None = None) -> Job:
    """The one multinode job of ``config_key`` whose CONFIG_FILE and concurrencies match."""
    found = [j for j in corpus().jobs if j.config_key == config_key
             and (config_file is None or job_env(j).get("CONFIG_FILE") == config_file)
             and (concs is None or j.concs == concs)]
    assert len(found) == 1, f"{len(found)} jobs of {config_key} match {config_file} {concs}"
    return found[0]


def evaluation(job: Job) -> RecipeEval:
    return next(r for j, r in evaluations() if j is job)


def role_flags(result: RecipeEval, role: str) -> list[ServerFlag]:
    indexes = [i for i in range(len(result.servers)) if result.role_of(i) == role]
    assert len(indexes) == 1, f"{len(indexes)} servers for role {role}: {result.roles} {result.errors}"
    return result.servers[indexes[0]]


def role_env(result: RecipeEval, role: str) -> dict[str, Value]:
    return result.env_of(result.roles.index(role))


def flag(flags: list[ServerFlag], name: str) -> ServerFlag:
    found = [f for f in flags if f.name == name]
    assert len(found) == 1, f"{name} appears {len(found)} times"
    return found[0]


def values(flags: list[ServerFlag]) -> dict[str, str | None]:
    """Flag name -> value text (None for a bare flag); a flag given twice keeps both, joined by ' | '.

    The keys of a structured value are listed as ``--flag.key.path`` (how ``RecipeEval.flag_values``
    addresses them).
    """
    out: dict[str, str | None] = {}
    for f in flags:
        entries = [(f.name, f.value.text if f.value is not None else None)]
        entries += [(f"{f.name}.{k.path}", k.value.text) for k in f.keys]
        for name, text in entries:
            out[name] = text if name not in out else f"{out[name]} | {text}"
    return out


def key_value(flags: list[ServerFlag], address: str) -> Value:
    """The value of ``--flag.key.path``: the key of the one flag that has it."""
    flag_name, _, path = address.partition(".")
    found = [k.value for f in flags if f.name == flag_name for k in f.keys if k.path == path]
    assert len(found) == 1, f"{address} appears {len(found)} times"
    return found[0]
