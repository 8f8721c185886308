"""Proof of ``append-only: true``: the change only adds matrix points.

For each appended entry that sets it, the jobs of the entry's configs (and
scenario types) are expanded at the base and at the head.  Every base job
must still be generated at the head with the same fields (the job id hashes
them), resolve to the same recipe path, and that recipe (with what it
sources) must be unchanged; at least one head job must be new.
"""

from __future__ import annotations

from typing import Sequence

from ..findings import Finding, Location, first_few, make_finding
from ..jobs.job import Job
from ..jobs.matrix import expand
from ..model.keys import keys_matching
from ..model.repository import RepoData
from .coverage import ChangeInputs, RecipeDeps, RecipeResolver, first_changed_line
from .entries import NewEntry
from .rules import APPEND_ONLY


def _jobs(repo: RepoData, keys: Sequence[str], scenarios: Sequence[str]) -> list[Job]:
    jobs = expand(repo, keys)
    return [j for j in jobs if not scenarios or j.scenario in scenarios]


def _field_changes(old: Job, new: Job) -> str:
    names = sorted(set(old.fields) | set(new.fields))
    diffs = [f"{n}: {old.fields.get(n)!r} -> {new.fields.get(n)!r}" for n in names if old.fields.get(n) != new.fields.get(n)]
    return first_few(diffs)


def prove_append_only(entries: Sequence[NewEntry], inputs: ChangeInputs) -> list[Finding]:
    marked = [e for e in entries if e.append_only]
    if not marked:
        return []
    head, base = inputs.head_repo(), inputs.base_repo()
    head_recipe, base_recipe = RecipeResolver(inputs.head, inputs.config), RecipeResolver(inputs.base, inputs.config)
    deps = RecipeDeps(inputs.head, inputs.config)
    out: list[Finding] = []
    for entry in marked:
        keys = keys_matching([k for k, _ in entry.config_keys], head.configs)
        if not keys:
            continue  # changelog-key-unmatched reports globs that match nothing
        scenarios = entry.scenario_types
        old_jobs = _jobs(base, keys, scenarios)
        new_jobs = _jobs(head, keys, scenarios)
        by_id = {j.id: j for j in new_jobs}
        by_label = {(j.config_key, j.scenario, j.label()): j for j in new_jobs}
        here = entry.key_loc("append-only")
        recipe_changed: dict[tuple[str, str], list[Job]] = {}
        for old in old_jobs:
            base_row = Location(old.row.path, old.row.line, old.row.column, note=f"the point at the {inputs.base_label}")
            new = by_id.get(old.id)
            if new is None:
                twin = by_label.get((old.config_key, old.scenario, old.label()))
                if twin is not None:
                    out.append(make_finding(
                        APPEND_ONLY, f"append-only entry alters the point {old.label()} ({_field_changes(old, twin)}); "
                        "expected every base point unchanged", twin.row, related=[base_row, here],
                        data={"point": old.label(), "key": old.config_key},
                    ))
                else:
                    where = head.configs[old.config_key].loc() if old.config_key in head.configs else here
                    out.append(make_finding(
                        APPEND_ONLY, f"append-only entry removes the point {old.label()}; expected every base point to be generated at the head",
                        where, related=[base_row, here], data={"point": old.label(), "key": old.config_key},
                    ))
                continue
            new_path, old_path = head_recipe(new), base_recipe(old)
            if new_path != old_path:
                out.append(make_finding(
                    APPEND_ONLY, f"append-only entry changes the recipe of the point {old.label()} from {old_path} to {new_path}; "
                    "expected the same recipe", new.row, related=[base_row, here], data={"point": old.label(), "key": old.config_key},
                ))
                continue
            touched = sorted(d for d in deps.closure(new_path) if d in inputs.changed) if new_path else []
            if touched:
                recipe_changed.setdefault((old.config_key, touched[0]), []).append(new)
        for (key, path), points in recipe_changed.items():
            line = first_changed_line(inputs.base.read(path), inputs.head.read(path))
            out.append(make_finding(
                APPEND_ONLY, f"append-only entry keeps {len(points)} point(s) of {key} (first: {points[0].label()}) but their "
                f"recipe input {path} changed; expected the published points to run unchanged",
                Location(path, line, 1 if line else 0), related=[points[0].row, here],
                data={"key": key, "changed": path, "points": [p.label() for p in points]},
            ))
        old_ids = {j.id for j in old_jobs}
        if not any(j.id not in old_ids for j in new_jobs):
            out.append(make_finding(
                APPEND_ONLY, f"append-only entry adds no matrix point ({len(new_jobs)} point(s) of {', '.join(keys)}, "
                "all generated at the base already); expected at least one new point", here,
                data={"keys": list(keys)},
            ))
    return out
