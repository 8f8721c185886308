"""What a change does to each job: effective server flags and env, base against head.

A flag with a JSON or YAML value is compared key by key
(``--compilation-config.cudagraph_mode``, ``--config.moe_config.backend``).

Jobs are paired by their *point* (scenario, sequence lengths, parallelism,
speculative decoding, offloading, concurrency) rather than by id, since the
id hashes every field and changes with the image, which is exactly the kind
of change to show.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..findings import Location
from ..jobs.job import Job
from ..shell.model import RecipeEval, Value

ON = "(on)"

_POINT_FIELDS = ("isl", "osl", "tp", "ep", "dp-attn", "pp", "dcp-size", "pcp-size", "spec-decoding",
                 "kv-offloading", "conc", "prefill", "decode")


def job_point(job: Job) -> tuple[Any, ...]:
    return (job.config_key, job.scenario) + tuple(repr(job.fields.get(f)) for f in _POINT_FIELDS)


@dataclass(frozen=True)
class Change:
    kind: str  # "flag" | "env" | "recipe"
    name: str
    before: str | None  # None: absent on that side
    after: str | None
    location: Location | None  # where the head sets it (or the base, for a removal)


@dataclass
class JobDiff:
    label: str
    base: Job | None
    head: Job | None
    changes: list[Change] = field(default_factory=list)


def shown(v: Value | None) -> str:
    """A value as compared and shown: its text, `(on)` for a boolean flag, else how it was written."""
    if v is None:
        return ON
    return v.text if v.text is not None else f"<unknown: {v.expression}>"


def flag_map(result: RecipeEval | None) -> dict[str, tuple[str, Location]]:
    out: dict[str, tuple[str, Location]] = {}
    if result is None:
        return out
    for server in result.servers:
        for f in server:
            entries = [(f"{f.name}.{k.path}", shown(k.value), k.value.location) for k in f.keys]
            if not f.keys or f.keys_file:
                # An inline JSON value is compared key by key; a file's name still counts itself.
                entries.insert(0, (f.name, shown(f.value), f.value.location if f.value is not None else f.location))
            for name, text, loc in entries:
                out[name] = (out[name][0] + " " + text, out[name][1]) if name in out else (text, loc)
    return out


def env_map(result: RecipeEval | None) -> dict[str, tuple[str, Location]]:
    if result is None:
        return {}
    return {k: (shown(v), v.location) for k, v in result.env.items()}


def _compare(kind: str, before: dict[str, tuple[str, Location]], after: dict[str, tuple[str, Location]]) -> list[Change]:
    out = []
    for name in list(before) + [n for n in after if n not in before]:
        b, a = before.get(name), after.get(name)
        if b is not None and a is not None and b[0] == a[0]:
            continue
        present = a if a is not None else b
        out.append(Change(kind, name, b[0] if b else None, a[0] if a else None, present[1] if present else None))
    return out


def diff_results(base: RecipeEval | None, head: RecipeEval | None) -> list[Change]:
    changes: list[Change] = []
    if (base.recipe if base else None) != (head.recipe if head else None):
        changes.append(Change("recipe", "recipe", base.recipe if base else None, head.recipe if head else None, None))
    changes += _compare("flag", flag_map(base), flag_map(head))
    changes += _compare("env", env_map(base), env_map(head))
    return changes
