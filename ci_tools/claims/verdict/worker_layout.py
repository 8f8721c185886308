"""The expert parallelism a multinode job's workers run, as their recipe starts them, where the config says otherwise.

A config's ``ep`` of a role is what the matrix and the results name the point by; what the worker runs is what its
recipe passes.  The two do not always agree: a "1p1d-dep8-tep8" recipe starts its decode worker with
``--tensor-parallel-size 8 --enable-expert-parallel`` (experts spread over its eight GPUs, the TEP8 its file name
says) while the config row writes ``ep: 1``.  A text that names the arm as the worker runs it ("1p1d-dep8-tep8
(conc 1-64)") names that job: the arm is not missing.  The layouts are consulted only where no job is the arm as the
config writes it, so a config that agrees with its text is judged as before.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from ...jobs.job import Job
from ...shell.model import RecipeEval, ServerFlag

_SIZES = {"tp": ("--tensor-parallel-size", "--tp-size", "--tp"),
          "dp": ("--data-parallel-size", "--dp-size", "--dp"),
          "ep": ("--expert-parallel-size", "--ep-size", "--ep")}
# vLLM's switch: experts spread over every rank of the worker, tensor- and data-parallel (EP = TP x DP).
_EP_SWITCH = "--enable-expert-parallel"


def _size(server: Sequence[ServerFlag], names: tuple[str, ...]) -> int | None:
    """The flag's literal size (the last one given); None when no literal one is."""
    found: int | None = None
    for flag in server:
        if flag.name in names and flag.value is not None and not flag.conditional:
            text = (flag.value.text or "").strip()  # an unknown value (None) is no literal size
            found = int(text) if text.isdigit() else None
    return found


def expert_parallel_size(server: Sequence[ServerFlag]) -> int | None:
    """The expert-parallel size a worker's command line states: SGLang's ``--ep-size N``, vLLM's
    ``--enable-expert-parallel`` over its TP x DP ranks; None when it states none (or not as a literal)."""
    ep = _size(server, _SIZES["ep"])
    if ep is not None:
        return ep
    switch = [f for f in server if f.name == _EP_SWITCH and not f.conditional]
    if not switch:
        return None
    value = switch[-1].value
    if value is not None and (value.text or "").strip().lower() in ("false", "0", "no"):
        return 1
    tp = _size(server, _SIZES["tp"])
    return tp * (_size(server, _SIZES["dp"]) or 1) if tp is not None else None


def as_recipes_run(jobs: Sequence[Job], evals: Mapping[str, RecipeEval | None]) -> list[tuple[Job, Job]]:
    """Each multinode job whose recipe starts a role's workers with another expert parallelism than the config's
    ``ep`` says, with the job as its workers run (its role's ``ep`` replaced)."""
    out: list[tuple[Job, Job]] = []
    for job in jobs:
        ev = evals.get(job.id)
        if not job.multinode or ev is None:
            continue
        fields = dict(job.fields)
        for i, server in enumerate(ev.servers):
            role = ev.role_of(i)
            worker = fields.get(role)
            ep = expert_parallel_size(server)
            if role in ("prefill", "decode") and isinstance(worker, Mapping) and ep is not None \
                    and (worker.get("ep") or 1) != ep:
                fields[role] = {**worker, "ep": ep}
        if fields != job.fields:
            out.append((job, replace(job, fields=fields)))
    return out
