"""Public entry points: evaluate a recipe for an environment, or for a job."""

from __future__ import annotations

from typing import Mapping

from ..bounded import BoundedDict
from ..config import ProjectConfig
from ..findings import Location
from ..jobs.contract import recipe_env, resolve_recipe
from ..jobs.job import Job
from ..revision.snapshot import Snapshot
from ..shell.interp import Interpreter
from ..shell.model import RecipeEval, RouterCommand, ServerFlag, Value
from ..shell.parse import parse_script
from ..shell.relocate import relocate_result
from ..shell.state import ArrayVal, inference_servers
from .env_values import ENV_NOTE, env_value

# A job's search-space row as the location of its environment, one object per row.
_ROW_LOCATIONS: BoundedDict[Location, Location] = BoundedDict(100_000)


def evaluate_recipe(path: str, env: Mapping[str, str | Value | None], config: ProjectConfig, snapshot: Snapshot,
                    env_location: Location | None = None) -> RecipeEval:
    """Evaluate the recipe at ``path`` (repo-relative) started with ``env``.

    Plain strings in ``env`` are attributed to ``env_location`` (for a job:
    its search-space row), so a flag passed as ``"$TP"`` points at the config.
    None is a variable that exists with a value known only at run time (set
    by the runner's launcher, or built from the node's name): a recipe that
    requires it goes on, and what is derived from it is unknown.
    """
    result = RecipeEval(recipe=path)
    data = snapshot.read(path)
    if data is None:
        result.errors.append(f"{path}: recipe not found in {snapshot.label}")
        return result
    script = parse_script(path, data)
    interp = Interpreter(path, config, snapshot)
    # Every job is evaluated with the same stand-in location for its environment (see .relocate).
    vars = interp.state.vars
    for name, value in env.items():
        vars[name] = value if isinstance(value, Value) else env_value(name, value)
    interp.state.exported.update(env)
    interp.run(script)
    state = interp.state
    captured = state.captured
    variables = captured.vars if captured is not None else state.vars
    exported = captured.exported if captured is not None else frozenset(state.exported)
    result.variables = {k: v.joined() if isinstance(v, ArrayVal) else v for k, v in variables.items()}
    result.env = {k: result.variables[k] for k in sorted(exported) if k in result.variables}
    servers = inference_servers(state.servers)
    result.servers = [list(s.flags) for s in servers]
    result.server_command = [s.location for s in servers]
    result.routers = [RouterCommand(tuple(s.flags), s.location) for s in state.servers if s.router]
    result.early_exits = list(state.early_exits)
    result.missing_env = list(state.missing)
    result.errors.extend(interp.errors)
    result.opaque_commands = list(interp.opaque_commands)
    result.called = frozenset(interp.dispatched)
    result.called_late = frozenset(interp.dispatched_late)
    # Variables present with a value only the node knows (None, or an unknown Value): what derives from
    # them (`${PORT:-8888}`) is known when the job runs.
    result.unknown_inputs = frozenset(k for k, v in env.items() if v is None or (isinstance(v, Value) and v.text is None))
    return relocate_result(result, env_location or Location(path, 0, note=ENV_NOTE))


def _resolve(job: Job, config: ProjectConfig, snapshot: Snapshot) -> str | None:
    """The bash script the job runs (None for an srt-slurm, external or missing recipe)."""
    return resolve_recipe(job, config, snapshot).script


def evaluate_job(job: Job, config: ProjectConfig, snapshot: Snapshot) -> RecipeEval | None:
    """The job's recipe evaluated for its environment; None when no recipe resolves.

    Multinode jobs are evaluated per role (``RecipeEval.roles``) and always
    give a result: when no server is reached, its ``errors`` say why.
    """
    if job.multinode:
        from .multinode.evaluate import evaluate_multinode_job

        return evaluate_multinode_job(job, config, snapshot)
    path = _resolve(job, config, snapshot)
    if path is None:
        return None
    return evaluate_recipe(path, recipe_env(job, config, snapshot, as_run=True), config, snapshot, env_location(job))


def env_location(job: Job) -> Location:
    """Where a job's environment values come from: its search-space row (one object per row)."""
    row = job.row
    where = _ROW_LOCATIONS.get(row)
    if where is None:
        where = _ROW_LOCATIONS.put(row, Location(row.path, row.line, row.column, row.end_line, row.end_column, ENV_NOTE))
    return where


def unknown_flags(result: RecipeEval) -> list[ServerFlag]:
    """Server flags whose name or value is not known."""
    from ..shell.server import UNKNOWN_FLAG

    return [f for server in result.servers for f in server
            if f.name == UNKNOWN_FLAG or (f.value is not None and f.value.text is None)]
