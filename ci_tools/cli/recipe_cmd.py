"""``ci-tools recipe``: what each job's recipe really runs (``show``) and recipe rules (``lint``)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

import click

from ..bounded import BoundedDict
from .common import finish, get_config, handle_errors, refuse_unreadable, repo_options, report_options, write_output

if TYPE_CHECKING:
    from ..config import ProjectConfig
    from ..evaluation.diff import JobDiff
    from ..evaluation.stats import CoverageStats, Reason
    from ..findings import Location
    from ..jobs.contract import RecipeResolution
    from ..jobs.job import Job
    from ..revision.snapshot import Snapshot
    from ..shell.model import RecipeEval, ServerFlag, Value


@click.group("recipe")
def recipe_group() -> None:
    """Per-job evaluation of the bash recipes."""


def _jobs(config: ProjectConfig, snapshot: Snapshot, key: str, concs: tuple[int, ...]) -> list[Job]:
    from ..errors import UsageError
    from ..jobs.matrix import expand
    from ..model.keys import keys_matching
    from ..model.repository import load_repo

    repo = load_repo(snapshot, config, with_changelog=False)  # jobs come from the master configs alone
    keys = keys_matching([key], repo.configs)
    if not keys:
        refuse_unreadable(repo, doing=f"no config key matches {key!r}")
        import difflib

        close = difflib.get_close_matches(key, list(repo.configs), n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise UsageError(f"no config key matches {key!r} in {snapshot.label}{hint}")
    refuse_unreadable(repo, keys, doing="the jobs of these configs cannot be built")
    jobs = expand(repo, keys)
    if concs:
        every = jobs
        jobs = [j for j in jobs if any(c in concs for c in j.concs)]
        if not jobs and every:
            from ..jobs.selection import nothing_left

            asked = " ".join(f"--conc {c}" for c in concs)
            at = "" if snapshot.label == "work tree" else f" at {snapshot.label}"
            raise UsageError(nothing_left(asked, every, f"{key}{at}"))
    return jobs


def _loc(loc: Location | None) -> str:
    if loc is None:
        return ""
    return loc.as_text() + (f" ({loc.note})" if loc.note else "")


def _location_json(loc: Location) -> dict[str, Any]:
    """``loc.to_json()``, built once per location object (a sweep's values share a few thousand)."""
    found = _LOCATION_JSON.get(id(loc))
    if found is None or found[0] is not loc:
        found = _LOCATION_JSON.put(id(loc), (loc, loc.to_json()))
    return found[1]


_LOCATION_JSON: BoundedDict[int, tuple[Location, dict[str, Any]]] = BoundedDict(200_000)


def _value_json(v: Value | None) -> dict[str, Any] | None:
    if v is None:
        return None
    out: dict[str, Any] = {"text": v.text, "location": _location_json(v.location), "conditional": v.conditional,
                           "expression": v.expression}
    if v.alternatives:
        out["alternatives"] = [_value_json(a) for a in v.alternatives]
    return out


def _flag_json(f: ServerFlag) -> dict[str, Any]:
    out: dict[str, Any] = {"name": f.name, "value": _value_json(f.value), "location": _location_json(f.location),
                           "conditional": f.conditional}
    if f.keys:
        out["keys"] = [{"path": k.path, "value": _value_json(k.value)} for k in f.keys]
        if f.keys_file:
            out["keys_file"] = f.keys_file
    return out


def _reason_json(reason: Reason | None) -> dict[str, str] | None:
    return None if reason is None else {"category": reason.category, "reason": reason.text}


def _result_json(job: Job, result: RecipeEval | None, all_env: bool) -> dict[str, Any]:
    from ..evaluation.env_values import ENV_NOTE
    from ..evaluation.stats import not_reached

    if result is None:
        return {"job": job.to_json(), "label": job.label(), "recipe": None, "not_reached": _reason_json(not_reached(None))}
    env = {k: v for k, v in result.env.items() if all_env or v.location.note != ENV_NOTE}
    return {
        "job": job.to_json(),
        "label": job.label(),
        "recipe": result.recipe,
        "servers": [
            {"location": loc.to_json(), "role": result.role_of(i), "flags": [_flag_json(f) for f in flags],
             **({"env": {k: _value_json(v) for k, v in result.server_env[i].items()}}
                if i < len(result.server_env) else {})}
            for i, (flags, loc) in enumerate(zip(result.servers, result.server_command))
        ],
        "routers": [{"location": r.location.to_json(), "flags": [_flag_json(f) for f in r.flags]}
                    for r in result.routers],
        "not_reached": _reason_json(not_reached(result)),
        "env": {k: _value_json(v) for k, v in env.items()},
        "early_exits": [{"location": e.location.to_json(), "condition": e.condition, "code": e.code,
                         "conditional": e.conditional} for e in result.early_exits],
        "missing_env": [{"name": m.name, "location": m.location.to_json()} for m in result.missing_env],
        "errors": list(result.errors),
    }


def _shown(v: Value | None) -> str:
    if v is None:
        return ""
    if v.text is None:
        alts = " | ".join(a.text if a.text is not None else "?" for a in v.alternatives)
        return f"<unknown{': ' + alts if alts else ''}>"
    text = v.text if v.text and not any(c.isspace() for c in v.text) else json.dumps(v.text)
    if "$" in v.expression and v.location.note == "":
        text += f"  = {v.expression}"
    return text


def _env_lines(title: str, env: dict[str, Value], all_env: bool) -> list[str]:
    from ..evaluation.env_values import ENV_NOTE

    shown = {k: v for k, v in env.items() if all_env or v.location.note != ENV_NOTE}
    if not shown:
        return []
    lines = [title]
    for k, v in shown.items():
        cond = "  [conditional]" if v.conditional else ""
        lines.append(f"    {k + '=' + _shown(v):<56} {_loc(v.location)}{cond}")
    return lines


def _flag_lines(flags: Sequence[ServerFlag]) -> list[str]:
    lines = []
    for f in flags:
        where = f.value.location if f.value is not None else f.location
        cond = "  [conditional]" if f.conditional or (f.value is not None and f.value.conditional) else ""
        lines.append(f"    {(f.name + ' ' + _shown(f.value)).rstrip():<56} {_loc(where)}{cond}")
        for key in f.keys:
            text = f"  {f.name}.{key.path} {_shown(key.value)}"
            lines.append(f"    {text:<56} {_loc(key.value.location)}")
    return lines


def _result_text(job: Job, result: RecipeEval | None, all_env: bool) -> list[str]:
    from ..evaluation.stats import not_reached

    lines = [job.label()]
    if result is None:
        lines.append("  recipe: none resolves")
        return lines
    lines.append(f"  recipe: {result.recipe}")
    for i, (flags, loc) in enumerate(zip(result.servers, result.server_command)):
        role = result.role_of(i)
        lines.append(f"  {role + ' ' if role else ''}server ({_loc(loc)}):")
        lines.extend(_flag_lines(flags))
        if role and i < len(result.server_env):
            lines.extend(_env_lines(f"  {role} env:", result.server_env[i], all_env))
    for router in result.routers:
        lines.append(f"  router ({_loc(router.location)}):")
        lines.extend(_flag_lines(router.flags))
    reason = not_reached(result)
    if reason is not None:
        lines.append(f"  server: not reached: {reason.text}")
    if not result.roles:
        lines.extend(_env_lines("  env:", result.env, all_env))
    for e in result.early_exits:
        cond = " (on one side of an undecided branch)" if e.conditional else ""
        lines.append(f"  exits with status {e.code or '?'} at {_loc(e.location)}: {e.condition}{cond}")
    for m in result.missing_env:
        lines.append(f"  requires {m.name} (unset or empty) at {_loc(m.location)}")
    for err in result.errors:
        lines.append(f"  error: {err}")
    return lines


def _resolution_json(resolution: RecipeResolution) -> dict[str, Any]:
    return {"kind": resolution.kind, "path": resolution.path, "selector": resolution.selector,
            "reference": resolution.reference, "inputs": list(resolution.inputs), "fleets": list(resolution.fleets),
            "missing": resolution.missing, "reason": resolution.reason, "rule": resolution.rule,
            "alternatives": [_resolution_json(a) for a in resolution.alternatives]}


def _shown_json(job: Job, result: RecipeEval | None, resolution: RecipeResolution, all_env: bool) -> dict[str, Any]:
    return {**_result_json(job, result, all_env), "resolution": _resolution_json(resolution)}


def _shown_text(job: Job, result: RecipeEval | None, resolution: RecipeResolution, all_env: bool) -> list[str]:
    """The evaluation, and what the launchers pick: the kind of recipe, its inputs, other fleets' picks."""
    if result is None:  # not a bash script: srt-slurm, external or missing
        lines = [job.label(), f"  recipe: {resolution.describe(with_fleets=bool(resolution.alternatives))}"]
        if resolution.kind == "srt-slurm" and resolution.path:
            lines.append("  (an srt-slurm recipe: not evaluated as bash)")
    else:
        lines = _result_text(job, result, all_env)
    # Fleets are named when the label's fleets pick different recipes.
    lines[2:2] = [*(f"    also read: {path}" for path in resolution.inputs),
                  *(f"    or: {other.describe(with_fleets=True)}" for other in resolution.alternatives)]
    return lines


@recipe_group.command("show")
@repo_options
@click.argument("key")
@click.option("--conc", "concs", multiple=True, type=click.IntRange(min=1), metavar="N",
              help="Only jobs at this concurrency (repeatable).")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--rev", default=None, metavar="REV", help="Evaluate the files of this revision instead of the work tree.")
@click.option("--diff", "show_diff", is_flag=True, help="Show what changed per job against --base.")
@click.option("--base", "base_rev", default=None, metavar="REV", help="The base revision for --diff.")
@click.option("--all-env", is_flag=True, help="Also list the variables the job itself provides.")
@handle_errors
def show_command(repo_dir: str | None, config_file: str | None, key: str, concs: tuple[int, ...], fmt: str,
                 rev: str | None, show_diff: bool, base_rev: str | None, all_env: bool) -> None:
    """Effective env and server flags, with source lines, per job of KEY (a config key or glob)."""
    from ..errors import UsageError
    from ..evaluation.evaluate import evaluate_job
    from ..jobs.contract import resolve_recipe
    from ..revision.snapshot import GitSnapshot, open_snapshot
    from ..shell.collector import collection_paused
    from ..shell.stack import with_room

    config = get_config(repo_dir, config_file)
    head = open_snapshot(config.root, rev)
    if show_diff or base_rev:
        if not (show_diff and base_rev):
            raise UsageError("--diff and --base REV go together: `recipe show KEY --diff --base main`")
        base = GitSnapshot(config.root, base_rev)
        diffs = _diffs(config, base, head, key, concs)
        click.echo(_diff_json(diffs) if fmt == "json" else _diff_text(diffs, base.label, head.label), nl=False)
        return
    jobs = _jobs(config, head, key, concs)
    # Each job is written as soon as it is evaluated: a full sweep's results are never all in memory.
    # JSON: an array with one compact job per line.
    if not jobs:
        click.echo("[]" if fmt == "json" else "no jobs")
        return

    def show_all() -> None:
        for i, job in enumerate(jobs):
            result, resolution = evaluate_job(job, config, head), resolve_recipe(job, config, head)
            if fmt == "json":
                # Bytes go to the binary stream as they are: no decoding, and no search for terminal
                # escapes (a JSON string holds none: control characters are written escaped).
                document = _compact_json(_shown_json(job, result, resolution, all_env))
                click.echo((b"[\n" if i == 0 else b",\n") + document, nl=False)
            else:
                click.echo(("" if i == 0 else "\n") + "\n".join(_shown_text(job, result, resolution, all_env)))

    with collection_paused():
        with_room(show_all)
    if fmt == "json":
        click.echo("\n]")


def _compact_json(document: dict[str, Any]) -> bytes:
    """One job's document as compact UTF-8 JSON (no spaces after separators, non-ASCII unescaped).

    orjson: the 33 MB of a full sweep in ~0.06 s of CPU against ~0.25 s for json's C encoder.
    Keys that are not strings (a YAML mapping in a job's fields) become strings, as json writes them.
    """
    import orjson

    return orjson.dumps(document, option=orjson.OPT_NON_STR_KEYS)


def _diffs(config: ProjectConfig, base: Snapshot, head: Snapshot, key: str, concs: tuple[int, ...]) -> list[JobDiff]:
    from ..errors import UsageError
    from ..evaluation.diff import JobDiff, diff_results, job_point
    from ..evaluation.evaluate import evaluate_job

    def jobs_or_empty(snapshot: Snapshot) -> list[Job]:
        try:
            return _jobs(config, snapshot, key, concs)
        except UsageError:
            return []

    from ..shell.collector import collection_paused
    from ..shell.stack import with_room

    base_jobs, head_jobs = jobs_or_empty(base), jobs_or_empty(head)
    if not base_jobs and not head_jobs:
        _jobs(config, head, key, concs)  # says why when it is the head's: no such key, or no job at --conc
        raise UsageError(f"no config key matches {key!r} in {base.label} or {head.label}")
    by_point = {job_point(j): j for j in base_jobs}
    out: list[JobDiff] = []
    seen = set()

    def diff_all() -> None:
        for j in head_jobs:
            point = job_point(j)
            seen.add(point)
            b = by_point.get(point)
            d = JobDiff(j.label(), b, j)
            d.changes = diff_results(evaluate_job(b, config, base) if b else None, evaluate_job(j, config, head))
            out.append(d)

    with collection_paused():
        with_room(diff_all)
    for point, b in by_point.items():
        if point not in seen:
            out.append(JobDiff(b.label(), b, None))
    return out


def _diff_text(diffs: list[JobDiff], base_label: str, head_label: str) -> str:
    lines = [f"recipe changes per job, {base_label} -> {head_label}"]
    for d in diffs:
        if d.base is None:
            lines.append(f"{d.label}: new job")
        elif d.head is None:
            lines.append(f"{d.label}: removed")
            continue
        elif not d.changes:
            lines.append(f"{d.label}: unchanged")
            continue
        else:
            lines.append(f"{d.label}:")
        for c in d.changes:
            if d.base is None and c.kind != "recipe":
                continue
            name = c.name if c.kind != "env" else f"env {c.name}"
            if c.before is None:
                what = f"added {c.after}"
            elif c.after is None:
                what = f"removed (was {c.before})"
            else:
                what = f"{c.before} -> {c.after}"
            lines.append(f"  {name}: {what}" + (f"  ({_loc(c.location)})" if c.location else ""))
    return "\n".join(lines) + "\n"


def _diff_json(diffs: list[JobDiff]) -> str:
    return json.dumps([
        {"label": d.label, "base_job": d.base.id if d.base else None, "head_job": d.head.id if d.head else None,
         "changes": [{"kind": c.kind, "name": c.name, "before": c.before, "after": c.after,
                      "location": c.location.to_json() if c.location else None} for c in d.changes]}
        for d in diffs
    ], indent=2) + "\n"


@recipe_group.command("lint")
@repo_options
@report_options
@click.option("--rev", default=None, metavar="REV", help="Check the files of this revision instead of the work tree.")
@click.option("--stats", "show_stats", is_flag=True,
              help="Instead of the findings, report what evaluation sees: jobs whose server command line is "
                   "reached, not reached (and why), flags with unknown values (and why). Exit status 0.")
@handle_errors
def lint_command(repo_dir: str | None, config_file: str | None, fmt: str | None, select: tuple[str, ...],
                 ignore: tuple[str, ...], output: str | None, rev: str | None, show_stats: bool) -> None:
    """Run the recipe rules (early exits, missing env, syntax) over every job."""
    from ..evaluation.rules import recipe_findings
    from ..evaluation.stats import CoverageStats, job_coverage
    from ..model.repository import load_repo
    from ..revision.snapshot import open_snapshot
    from ..validation.validate import input_findings

    config = get_config(repo_dir, config_file)
    snapshot = open_snapshot(config.root, rev)
    repo = load_repo(snapshot, config, with_changelog=False)
    # What cannot be read is said: no job is built from a config that fails its schema.
    unreadable = input_findings(repo)
    if not show_stats:
        raise SystemExit(finish(unreadable + recipe_findings(repo), fmt, select, ignore, output, config=config))
    stats = CoverageStats()
    findings = unreadable + recipe_findings(repo, observe=lambda job, result: stats.add(job_coverage(job, result)))
    by_rule = dict(sorted(Counter(f.rule for f in findings).items()))
    rendered = (json.dumps(_stats_json(stats, by_rule), indent=2) + "\n" if fmt == "json"
                else _stats_text(stats, by_rule, snapshot.label))
    if output:
        write_output(output, rendered)
    else:
        click.echo(rendered, nl=False)


_STATS_ROWS = 12


def _percent(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f} %" if whole else "-"


def _stats_text(stats: CoverageStats, by_rule: dict[str, int], label: str) -> str:
    multinode = stats.jobs - stats.single_node
    lines = [
        f"recipe evaluation coverage ({label})",
        f"  jobs                               {stats.jobs:>6}  ({stats.single_node} single-node, {multinode} multinode)",
        f"  a recipe resolves                  {stats.evaluated:>6}",
        f"  server command line reached        {stats.reached:>6}  ({_percent(stats.reached, stats.jobs)} of jobs; "
        f"single-node {stats.reached_single_node} of {stats.single_node}, "
        f"{_percent(stats.reached_single_node, stats.single_node)})",
        f"  ... with every flag value known    {stats.all_known:>6}",
        f"  ... or known when the job runs     {stats.all_known_but_run_time:>6}",
    ]
    for title, table in (("not reached, by reason", stats.not_reached),
                         ("unknown flag values, by reason (jobs)", stats.unknown)):
        if not table:
            continue
        lines.append(f"{title}:")
        rows = sorted(table.items(), key=lambda kv: (-len(kv[1]), kv[0].text))
        for reason, keys in rows[:_STATS_ROWS]:
            configs = list(dict.fromkeys(keys))
            shown = ", ".join(configs[:3]) + (f" and {len(configs) - 3} more" if len(configs) > 3 else "")
            lines.append(f"  {len(keys):>6}  [{reason.category}] {reason.text}")
            lines.append(f"          configs: {shown}")
        if len(rows) > _STATS_ROWS:
            rest = sum(len(keys) for _, keys in rows[_STATS_ROWS:])
            lines.append(f"  {rest:>6}  jobs for {len(rows) - _STATS_ROWS} more reasons (--format json lists them all)")
    if stats.unknown_flags:
        common = ", ".join(f"{name} ({n})" for name, n in stats.ranked_unknown_flags()[:8])
        lines.append(f"flags most often unknown (jobs): {common}")
    rules = ", ".join(f"{rule}: {n}" for rule, n in by_rule.items()) or "none"
    lines.append(f"findings of the recipe rules: {rules}")
    return "\n".join(lines) + "\n"


def _stats_json(stats: CoverageStats, by_rule: dict[str, int]) -> dict[str, Any]:
    def table(rows: dict[Reason, list[str]]) -> list[dict[str, Any]]:
        return [{"category": r.category, "reason": r.text, "jobs": len(keys), "configs": list(dict.fromkeys(keys))}
                for r, keys in sorted(rows.items(), key=lambda kv: (-len(kv[1]), kv[0].text))]

    return {
        "jobs": stats.jobs, "single_node": stats.single_node, "evaluated": stats.evaluated,
        "reached": stats.reached, "reached_single_node": stats.reached_single_node, "all_known": stats.all_known,
        "all_known_but_run_time": stats.all_known_but_run_time,
        "not_reached": table(stats.not_reached), "unknown": table(stats.unknown),
        "unknown_flags": dict(stats.ranked_unknown_flags()), "findings": by_rule,
    }
