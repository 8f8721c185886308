"""Which jobs also run evals: InferenceX's eval selection, over a set of jobs.

The policy of the generator's ``mark_eval_entries`` (default mode, agentic
evals off), decided over the jobs being generated together, so a selection
gets the marks InferenceX's ``test-config`` gives the same selection:

- single-node jobs at 8k1k with a concurrency of at least 16, grouped by
  (model, runner, framework, precision, isl, osl, spec-decoding, dp-attn):
  every job at the group's highest and at its median concurrency runs evals;
- multinode jobs at 8k1k, grouped by everything but their concurrencies and
  name: the job holding the group's highest eligible concurrency runs evals,
  at that concurrency (``eval-conc``);
- every job gets ``run-eval`` (true or false); agentic jobs never run evals.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from typing import Any, Mapping, Sequence

from .job import EVAL_FIELDS, Job

MIN_EVAL_CONC = 16
EVAL_SEQ_LENS = (8192, 1024)
# What single-node jobs are grouped by (malformed values included: the schema rules report them).
_GROUP_FIELDS = ("model", "runner", "framework", "precision", "isl", "osl", "spec-decoding", "dp-attn")


def _freeze(value: Any) -> Any:
    """A hashable stand-in with the generator's equality (dicts by sorted items, lists as tuples)."""
    if isinstance(value, dict):
        # Keys of any type (a malformed config may mix them) in one deterministic order.
        items = ((k, _freeze(v)) for k, v in value.items())
        return tuple(sorted(items, key=lambda kv: (type(kv[0]).__name__, str(kv[0]))))
    if isinstance(value, list):
        return tuple(_freeze(v) for v in value)
    return value


def _eligible(conc: Any) -> list[int]:
    values = conc if isinstance(conc, list) else [conc]
    return sorted(c for c in values if isinstance(c, int) and c >= MIN_EVAL_CONC)


def _topology_key(fields: Mapping[str, Any]) -> Any:
    return tuple(sorted((k, _freeze(v)) for k, v in fields.items() if k not in EVAL_FIELDS
                        and k not in ("conc", "exp-name")))


def eval_marks(entries: Sequence[Mapping[str, Any]]) -> dict[int, int | None]:
    """Index of each entry that runs evals -> its ``eval-conc`` (None for single-node entries)."""
    single: dict[Any, list[int]] = defaultdict(list)
    multi: dict[Any, list[tuple[int, int]]] = defaultdict(list)
    for i, f in enumerate(entries):
        if (f.get("isl"), f.get("osl")) != EVAL_SEQ_LENS:
            continue
        eligible = _eligible(f.get("conc"))
        if not eligible:
            continue
        if "tp" in f:
            key = tuple(_freeze(f.get(name)) for name in _GROUP_FIELDS)
            single[key].append(i)
        elif "prefill" in f:
            multi[_topology_key(f)].append((i, eligible[-1]))
    marks: dict[int, int | None] = {}
    for members in single.values():
        concs = sorted({entries[i]["conc"] for i in members})
        targets = {concs[-1], concs[len(concs) // 2]}
        marks.update((i, None) for i in members if entries[i]["conc"] in targets)
    for candidates in multi.values():
        best, conc = max(candidates, key=lambda item: item[1])  # the first of equal maxima, as max() picks
        marks[best] = conc
    return marks


def mark_evals(jobs: Sequence[Job]) -> list[Job]:
    """The jobs with ``run-eval`` (and ``eval-conc``) set as InferenceX sets them for this set of jobs.

    A job whose marks are already right is returned as is.
    """
    marks = eval_marks([j.fields for j in jobs])
    out: list[Job] = []
    for i, job in enumerate(jobs):
        run_eval = i in marks
        eval_conc = marks.get(i)
        f = job.fields
        if f.get("run-eval") is run_eval and "run-eval" in f and f.get("eval-conc") == eval_conc \
                and ("eval-conc" in f) == (eval_conc is not None):
            out.append(job)
            continue
        fields = {k: v for k, v in f.items() if k != "eval-conc"}
        fields["run-eval"] = run_eval
        if eval_conc is not None:
            fields["eval-conc"] = eval_conc
        out.append(dataclasses.replace(job, fields=fields))
    return out
