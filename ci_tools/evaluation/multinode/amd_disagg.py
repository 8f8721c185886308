"""Multinode scripts followed from the fleet's launcher down to each role's server command line.

The AMD disaggregated recipes: the chain is followed from the fleet's launcher
(``runners/launch_<fleet>.sh``, which sets MODEL_NAME, MODEL_PATH, IBDEVICES...
and runs the recipe) through the recipe, ``amd_utils/submit.sh`` and the
``sbatch``-ed ``job.slurm`` (:mod:`.chain`).  ``job.slurm`` then starts one
container per node with ``srun bash -lc "... docker run -e NAME=VALUE ...
$RUN_FILE_FULL"``; that step is modelled, not interpreted: the container sees
exactly the ``-e NAME=VALUE`` items of the arrays ``job.slurm`` builds
(expanded in its environment, with ``SLURM_PROCID`` the node rank), the
repository mounted at ``$DOCKER_MOUNT_PATH``, and runs ``$RUN_FILE_FULL``
(``server.sh``).  That script runs once for node rank 0 (the first prefill
node) and once for the last rank (a decode node); each server command line
found is given the role its ``--disaggregation-mode`` (or the ``kv_role`` of
its ``--kv-transfer-config``) names.

llm-d's wrapper takes the same path to its ``job.slurm``, which starts
``server.sh`` in a pyxis container (``srun --container-image``, modelled by
:mod:`.srun_container`).
"""

from __future__ import annotations

import posixpath
import re
from typing import Mapping

from ...bounded import BoundedDict
from ...config import ProjectConfig
from ...findings import Location
from ...jobs.job import Job
from ...jobs.resolution import RecipeResolution, launcher_of, resolver_for
from ...revision.read_log import ReadLog
from ...revision.snapshot import Snapshot
from ...shell.model import RecipeEval, RouterCommand, ServerFlag, Value
from ...shell.parse import parse_script
from ...shell.relocate import relocate_result
from ...shell.state import ArrayVal, Binding
from ..env_values import env_value
from .chain import WORKSPACE, ChainInterpreter, at_run_time_if_checkout
from .docker_mounts import MountedFile, mounted_files
from .roles import ROLES, RoleCommand, role_eval, server_role, unreached
from .srun_container import SrunContainers


class _Containers:
    """The container step of ``job.slurm``: the server script per node rank, with the ``-e`` environment."""

    def __init__(self, config: ProjectConfig, snapshot: Snapshot) -> None:
        self.config = config
        self.snapshot = snapshot
        self.commands: list[RoleCommand] = []
        # The routers a node's server script starts (node rank 0 starts sglang-router in front of the workers).
        self.routers: list[RouterCommand] = []
        self._router_lines: set[Location] = set()
        self.errors: list[str] = []
        self.started = False
        # What the node scripts' commands called (functions by name), and whether one ran a program known only
        # at run time (then any function may have run).
        self.called: set[str] = set()
        self.calls_unknown = False

    def __call__(self, interp: ChainInterpreter, script: str) -> None:
        if self.started:
            return
        vars = interp.state.vars
        run_file, mount = vars.get("RUN_FILE_FULL"), vars.get("DOCKER_MOUNT_PATH")
        if not isinstance(run_file, Value) or not isinstance(mount, Value):
            return  # not the script that starts the containers (checked first: it is cheap)
        pairs = [items for items in (_env_items(b) for b in vars.values()) if items]
        if not pairs:
            return
        self.started = True
        if run_file.text is None or mount.text is None:
            self.errors.append(f"{script}: the container's script or mount point is unknown")
            return
        exported = {k: v for k, v in vars.items() if k in interp.state.exported}
        nnodes = vars.get("NNODES")
        count = nnodes.text if isinstance(nnodes, Value) else None
        ranks = ["0"] + ([str(int(count) - 1)] if count is not None and count.isdigit() and int(count) > 1 else [])
        found: dict[str, RoleCommand] = {}
        # files the container sees at `docker run -v` targets, from what job.slurm wrote at their host paths
        files = mounted_files(interp.container_mounts, interp.state.files)
        for rank in ranks:
            env = self._container_env(interp, script, exported, [p for items in pairs for p in items], rank)
            for command in self._run(env, run_file.text, mount.text, rank, files):
                found.setdefault(command.role, command)
        self.commands = [found[r] for r in ROLES if r in found]
        if count is None or not count.isdigit():
            self.errors.append(f"{script}: NNODES is unknown; only node rank 0 was evaluated")

    def _container_env(self, interp: ChainInterpreter, script: str, exported: Mapping[str, Binding],
                       items: list[tuple[str, str | None, Location]], rank: str) -> dict[str, Value]:
        """``-e NAME=VALUE`` items expanded as the node's shell expands them; ``-e NAME`` passes the node shell's
        exported NAME (docker leaves it out where the shell has none)."""
        items = [(name, rhs if rhs is not None else f'"${{{name}}}"', where) for name, rhs, where in items
                 if rhs is not None or name in exported]
        text = "".join(f"__ci_env_{i}={rhs}\n" for i, (_, rhs, _) in enumerate(items))
        sub = ChainInterpreter(script, self.config, self.snapshot)
        sub.state.vars = dict(exported)
        sub.state.vars["SLURM_PROCID"] = _shared(Value(rank, Location(script, 0, note="node rank")))
        sub.run(parse_script(f"<docker -e of {script}>", text.encode()))
        env: dict[str, Value] = {}
        for i, (name, _, where) in enumerate(items):
            got = sub.state.vars.get(f"__ci_env_{i}")
            value = got if isinstance(got, Value) else Value(None, where)
            if value.location.path.startswith("<"):
                value = _shared(Value(value.text, where, value.conditional, value.expression, value.alternatives))
            env[name] = value
        return env

    def _run(self, env: dict[str, Value], run_file: str, mount: str, rank: str,
             files: dict[str, MountedFile]) -> list[RoleCommand]:
        interp = ChainInterpreter(run_file, self.config, self.snapshot, mounts={mount: ""})
        interp.mounted = files
        path = interp.repo_path(run_file)
        data = self.snapshot.read(path) if path is not None else None
        if path is None or data is None:
            self.errors.append(f"the container runs {run_file}, which is not a file of this repository")
            return []
        interp.recipe_path = interp.invoked_as = path
        for name, value in env.items():
            interp.state.vars[name] = value
            interp.state.exported.add(name)
        interp.run(parse_script(path, data))
        self.errors.extend(e for e in interp.errors if e not in self.errors)
        self.called |= interp.dispatched
        self.calls_unknown = self.calls_unknown or bool(interp.opaque_commands)
        captured = interp.state.captured
        server_env: dict[str, Value] = {}
        if captured is not None:
            for k in sorted(captured.exported):
                b = captured.vars.get(k)
                if isinstance(b, Value):
                    server_env[k] = at_run_time_if_checkout(b)
        out = []
        for server in interp.state.servers:
            if server.router:  # its options take one value each (`--prefill URL` pairs)
                if server.location not in self._router_lines:  # one router line, whichever rank runs it
                    self._router_lines.add(server.location)
                    self.routers.append(RouterCommand(server.flags, dataclass_note(server.location,
                                                                                   f"node rank {rank}")))
                continue
            flags = _nargs_flags(server.flags, server.argv)
            role = server_role(flags, rank)
            out.append(RoleCommand(role, tuple(flags), dataclass_note(server.location, f"node rank {rank}"),
                                   server_env))
        return out


_SHARED: BoundedDict[Value, Value] = BoundedDict(50_000)


def _shared(value: Value) -> Value:
    """One object for equal values of every job (what is computed from it is then reused, see recipes.pure)."""
    found = _SHARED.get(value)
    if found is None:
        found = _SHARED.put(value, value)
    return found


def dataclass_note(loc: Location, note: str) -> Location:
    return Location(loc.path, loc.line, loc.column, loc.end_line, loc.end_column, loc.note or note)


def _env_items(b: Binding) -> list[tuple[str, str | None, Location]]:
    """``NAME=RHS`` words that follow ``-e`` in an array (a ``docker run`` environment); a bare ``NAME`` with
    None (docker passes the caller's own, :meth:`_Containers._container_env`)."""
    if not isinstance(b, ArrayVal):
        return []
    items = b.items
    out: list[tuple[str, str | None, Location]] = []
    for i in range(len(items) - 1):
        word = items[i + 1].text
        if items[i].text != "-e" or word is None:
            continue
        quoted = word.startswith('"') and word.endswith('"') and len(word) > 1
        inner = word[1:-1] if quoted else word
        if "=" in inner:
            name, rhs = inner.split("=", 1)
            out.append((name, f'"{rhs}"' if quoted else rhs, items[i + 1].location))
        elif re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", inner):
            out.append((inner, None, items[i + 1].location))
    return out


def _nargs_flags(flags: tuple[ServerFlag, ...], argv: tuple[Value, ...]) -> list[ServerFlag]:
    """Flags whose value runs to the next flag: the servers these scripts start take no positional
    arguments, so ``--cuda-graph-bs 1 2 3`` is one flag with the value ``1 2 3``."""
    texts = [v.text for v in argv]
    out: list[ServerFlag] = []
    at = 0
    for f in flags:
        # this flag's word in the command line (flags are in command-line order)
        k = next((j for j in range(at, len(texts)) if texts[j] == f.name or (texts[j] or "").startswith(f.name + "=")),
                 None)
        if k is None or f.value is None or "=" in (texts[k] or ""):
            out.append(f)
            at = k + 1 if k is not None else at
            continue
        end = k + 2
        while end < len(texts) and texts[end] is not None and not (texts[end] or "").startswith("-"):
            end += 1
        at = end
        if end - k == 2 or f.value.text is None:
            out.append(f)
            continue
        joined = " ".join(t or "" for t in texts[k + 1:end])
        out.append(ServerFlag(f.name, Value(joined, f.value.location, f.value.conditional, f.value.expression),
                              f.location, f.conditional))
    return out


def linked(snapshot: Snapshot, path: str, data: bytes) -> tuple[str, bytes]:
    """The file a symbolic link names, when ``path`` is one (``launch_b200-dgxc-slurm.sh`` ->
    ``launch_b200-dgxc.sh``): git stores a link as a blob holding its target, which is what a revision
    (and a checkout without symbolic links) gives for it."""
    text = data.decode("utf-8", "replace")
    if "\n" in text or not re.fullmatch(r"[A-Za-z0-9_.+-][A-Za-z0-9_./+-]*", text):
        return path, data
    target = posixpath.normpath(posixpath.join(posixpath.dirname(path), text))
    found = snapshot.read(target) if not target.startswith("..") else None
    return (target, found) if found is not None else (path, data)


def evaluate_script_job(job: Job, resolution: RecipeResolution, env: Mapping[str, str | None], config: ProjectConfig,
                     snapshot: Snapshot) -> RecipeEval:
    """The job's roles, followed from the launcher of the fleet that picks ``resolution``'s script."""
    log = ReadLog(snapshot)
    result = _evaluate_chain(job, resolution, env, config, snapshot, log)
    result.read_files, result.tested_files, result.named_files = log.read_paths(), log.tested_paths(), log.named_paths()
    result.branches = dict(log.branches)
    return result


def _evaluate_chain(job: Job, resolution: RecipeResolution, env: Mapping[str, str | None], config: ProjectConfig,
                    snapshot: Snapshot, log: ReadLog) -> RecipeEval:
    """``evaluate_script_job`` with the chain's reads going through ``log`` (the launcher's and every
    script's; the runners file the node comes from is the job's matrix input, not the chain's)."""
    recipe = resolution.path or ""
    fleet = resolution.fleets[0] if resolution.fleets else ""
    launcher = launcher_of(fleet)
    data = log.read(launcher)
    if data is None:
        return unreached(recipe, f"the launcher of fleet {fleet!r}, {launcher}, does not exist")
    script, data = linked(log, launcher, data)
    node = resolver_for(config, snapshot).node_of(str(job.get("runner") or ""), fleet)
    containers = _Containers(config, log)
    srun = SrunContainers(config, log)
    interp = ChainInterpreter(script, config, log, container=containers, srun=srun)
    row = job.row
    where = Location(row.path, row.line, row.column, row.end_line, row.end_column, "job environment")
    # A label runners.yaml does not define has no node: its name is known only on the runner.
    start: dict[str, str | None] = {**env, "RUNNER_NAME": node, "GITHUB_WORKSPACE": WORKSPACE}
    # Evaluated with the stand-in location of the job's environment, relocated at the end (see recipes.relocate).
    for name, text in start.items():
        interp.state.vars[name] = env_value(name, text)
        interp.state.exported.add(name)
    interp.run(parse_script(script, data))
    errors = list(dict.fromkeys([*containers.errors, *srun.errors, *interp.errors]))
    commands = containers.commands or srun.commands
    if not commands:
        shown = launcher if script == launcher else f"{launcher} (a link to {script})"
        reason = (f"{recipe}: no server command line reached from {shown}"
                  + (f" ({errors[0]})" if errors else ""))
        result = unreached(recipe, reason)
        result.missing_env = list(interp.state.missing)
        return relocate_result(result, where)
    result = role_eval(recipe, commands, errors)
    result.missing_env = list(interp.state.missing)
    result.routers = list(containers.routers)
    result.called = frozenset(interp.dispatched | containers.called)
    result.called_complete = not (interp.opaque_commands or containers.calls_unknown)
    return relocate_result(result, where)
