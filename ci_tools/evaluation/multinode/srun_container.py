"""``srun --container-image=IMAGE [options] COMMAND``: what each node runs in its container, modelled.

llm-d's ``job.slurm`` starts its per-node ``server.sh`` this way on the
fleets that use pyxis (``LLMD_CONTAINER_ENGINE=pyxis``, set by
``launch_gb200-nv.sh``)::

    srun --container-image="$LLMD_SQUASH_FILE" --container-mounts="$PYXIS_MOUNTS" \\
         --container-env="$PYXIS_ENV_LIST" ... bash -lc '
    export NODE_RANK="$SLURM_PROCID" ...
    /workspace/benchmarks/multi_node/llm-d/server.sh 2>&1 | tee ...'

The step is modelled, never run:

- environment: every variable the calling shell exports (pyxis sets the
  host's environment in the container; ``--container-env`` only decides
  which of them win over variables the image defines, which the repository
  does not hold), as ``--export`` filters and adds to it, plus
  ``SLURM_PROCID``, the task's rank (one task a node);
- files: each ``--container-mounts`` item ``SRC:DST[:FLAGS]`` whose SRC is
  in the repository makes it visible at DST (``ro``: nothing creates a file
  there, so one the repository lacks is absent); other mounts are outside
  the repository; the command starts in ``--container-workdir``;
- the command runs in a new shell once per evaluated node rank.

Which ranks: 0 alone for one task (``--ntasks=1``, ``--nodes=1``); else 0,
and the rank ``PREFILL_NODES`` names when the environment gives it: the
first node of each role in llm-d's layout (``job.slurm``:
prefill leader rank 0, decode leader rank ``PREFILL_NODES``; ``server.sh``
takes the prefill role when ``NODE_RANK < PREFILL_NODES``).  The leader
stands for its role: ``server.sh`` gives the other nodes of a role the same
command line but for ``--headless``, ``--node-rank`` and
``--data-parallel-start-rank``.  Each server found takes the role its
``--kv-transfer-config`` (``kv_role``) or ``--disaggregation-mode`` names.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Callable

from ...config import ProjectConfig
from ...findings import Location
from ...revision.snapshot import Snapshot
from ...shell.conditions import Tri
from ...shell.expand import Field
from ...shell.model import Value
from ...shell.parse import Node
from ...shell.state import inference_servers
from .chain import ChainInterpreter, at_run_time_if_checkout
from .roles import ROLES, RoleCommand, server_role

# srun options written with their value as the next word (the rest are flags, or take `--opt=value`).
_WITH_VALUE = frozenset({
    "-A", "-c", "-D", "-d", "-e", "-G", "-J", "-m", "-N", "-n", "-o", "-p", "-t", "-w", "-x",
    "--account", "--chdir", "--cpus-per-task", "--dependency", "--distribution", "--error", "--export",
    "--gpus", "--gpus-per-node", "--gres", "--job-name", "--mem", "--mpi", "--nodelist", "--nodes", "--ntasks",
    "--ntasks-per-node", "--output", "--partition", "--signal", "--time", "--exclude", "--cpu-bind",
    "--container-image", "--container-mounts", "--container-name", "--container-env", "--container-workdir",
})


def srun_options(argv: list[Value]) -> tuple[dict[str, Value], list[Value]]:
    """srun's options by name (``--opt=value`` split) and the command after them."""
    options: dict[str, Value] = {}
    i = 1
    while i < len(argv):
        word = argv[i]
        text = word.text if word.text is not None else word.known_prefix
        if not text.startswith("-") or (word.text is None and "=" not in text):
            break
        name, sep, value = text.partition("=")
        if sep:
            # `--container-image="$LLMD_SQUASH_FILE"`: the option is known when its value is not
            options[name] = Value(value if word.text is not None else None, word.location, word.conditional,
                                  word.expression, known_prefix="" if word.text is not None else value,
                                  parts=_after(word.parts, len(name) + 1) if word.text is None else ())
        elif name in _WITH_VALUE and i + 1 < len(argv):
            i += 1
            options[name] = argv[i]
        else:
            options[name] = Value("", argv[i].location)
        i += 1
    return options, argv[i:]


def _after(parts: tuple[Value, ...], size: int) -> tuple[Value, ...]:
    """The parts of a word past its first ``size`` characters (``--export=``), which are known."""
    out: list[Value] = []
    for part in parts:
        text = part.text
        if size and text is not None:
            cut = min(size, len(text))
            size -= cut
            if cut < len(text):
                out.append(Value(text[cut:], part.location, part.conditional, part.expression))
            continue
        out.append(part)
    return tuple(out)


def comma_items(value: Value) -> list[Value] | None:
    """The items of a comma-separated list (``ALL,ROLE="$role",PORT=8888``), an item with an unknown part
    unknown but for its known start; None when the list's parts are not known either."""
    if value.text is not None:
        return [Value(item, value.location, value.conditional, value.expression) for item in value.text.split(",")]
    if not value.parts:
        return None
    items: list[tuple[str, bool]] = [("", True)]  # (known start, the whole item known)
    for part in value.parts:
        if part.text is None:
            items[-1] = (items[-1][0], False)
            continue
        pieces = part.text.split(",")
        for i, piece in enumerate(pieces):
            if i:
                items.append(("", True))
            start, whole = items[-1]
            items[-1] = (start + piece, whole) if whole else (start, whole)
    return [Value(text if whole else None, value.location, value.conditional, value.expression,
                  known_prefix="" if whole else text) for text, whole in items]


def single_task(options: dict[str, Value]) -> bool:
    tasks = options.get("--ntasks") or options.get("-n")
    nodes = options.get("--nodes") or options.get("-N")
    return (tasks is not None and tasks.text == "1") or (tasks is None and nodes is not None and nodes.text == "1")


def srun_environment(given: Value | None, exported: dict[str, Value], where: str, errors: list[str]) -> dict[str, Value]:
    """The environment ``--export`` gives the task: ``ALL`` (the default) every exported variable, plus
    ``NAME=VALUE`` items; without ``ALL`` only the items named."""
    if given is None:
        return exported
    items = comma_items(given)
    if items is None:
        errors.append(f"{where}: srun's --export list is not known; the task's environment is taken as ALL")
        return exported
    texts = [item.text for item in items]
    out = dict(exported) if "ALL" in texts else {}
    for item in items:
        name, sep, text = (item.text if item.text is not None else item.known_prefix).partition("=")
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) or (item.text is None and not sep):
            if item.text is None:
                errors.append(f"{where}: an item of srun's --export list is not known; "
                              "what it sets is unknown")
            continue
        if sep:
            out[name] = dataclasses.replace(item, text=text if item.text is not None else None, known_prefix="")
        elif name not in ("ALL", "NONE") and name in exported:
            out[name] = exported[name]
    return out


class _ServerStarted(Exception):
    """A node's server has started on every path: what the script does next cannot change its command line."""


class _NodeShell(ChainInterpreter):
    """One node's shell, which stops once its server has started outside any undecided branch: the rest of
    ``server.sh`` (the sidecar, the router, the benchmark client) cannot change that command line or the
    environment it started with."""

    def __init__(self, recipe_path: str, config: ProjectConfig, snapshot: Snapshot, *,
                 mounts: dict[str, str], read_only: frozenset[str]) -> None:
        super().__init__(recipe_path, config, snapshot, mounts=mounts, read_only=read_only)
        self.undecided = 0

    def fork(self, a: Callable[[], Tri], b: Callable[[], Tri]) -> Tri:
        self.undecided += 1
        try:
            return super().fork(a, b)
        finally:
            self.undecided -= 1

    def _maybe_server(self, n: Node, argv: list[tuple[Field, Value]], prefix: list[Node]) -> Tri:
        before = len(self.state.servers)
        status = super()._maybe_server(n, argv, prefix)
        if self.undecided == 0 and len(self.state.servers) > before and not self.state.servers[-1].router:
            raise _ServerStarted()
        return status


class SrunContainers:
    """The container step of ``srun --container-image``: each node's server, found per role."""

    def __init__(self, config: ProjectConfig, snapshot: Snapshot) -> None:
        self.config = config
        self.snapshot = snapshot
        self.commands: list[RoleCommand] = []
        self.errors: list[str] = []

    def __call__(self, interp: ChainInterpreter, n: Node, argv: list[Value]) -> bool:
        options, command = srun_options(argv)
        if "--container-image" not in options:
            return False  # a command on the nodes of the allocation, outside any container: not followed
        interp.external_effects += 1  # acts outside the state: a call doing this is not reused
        where = f"{n.script.path}:{n.line}"
        if not command:
            self.errors.append(f"{where}: srun names no command to run in the container")
            return True
        mounts, read_only = self._mounts(interp, options.get("--container-mounts"), where)
        exported = {k: v for k, v in interp.state.vars.items() if k in interp.state.exported and isinstance(v, Value)}
        exported = srun_environment(options.get("--export"), exported, where, self.errors)
        workdir = options.get("--container-workdir")
        ranks = ["0"]
        leaders = exported.get("PREFILL_NODES")
        if single_task(options):
            pass  # `srun --ntasks=1 --nodelist=HOST`: one node, one task
        elif leaders is not None and leaders.text is not None and leaders.text.isdigit() and int(leaders.text) > 0:
            ranks.append(leaders.text)
        else:
            self.errors.append(f"{where}: PREFILL_NODES is not a known number; only node rank 0 was evaluated")
        found: dict[str, RoleCommand] = {c.role: c for c in self.commands}
        for rank in ranks:
            for role_command in self._node(interp, n, command, exported, (mounts, read_only, workdir), rank):
                found.setdefault(role_command.role, role_command)
        self.commands = [found[r] for r in ROLES if r in found]
        return True

    def _mounts(self, interp: ChainInterpreter, given: Value | None,
                where: str) -> tuple[dict[str, str], frozenset[str]]:
        """Container paths that are repository paths, and which of them are read-only."""
        mounts: dict[str, str] = {}
        read_only: set[str] = set()
        if given is None:
            return mounts, frozenset()
        items = given.text.split(",") if given.text is not None else given.known_prefix.split(",")[:-1]
        if not items:
            self.errors.append(f"{where}: the container's mounts are not known; its files are not followed")
            return mounts, frozenset()
        # a list known only in part (items appended on an undecided branch): the items known in full
        for item in items:
            source, _, rest = item.partition(":")
            target, _, flags = rest.partition(":")
            inside = interp.directory(source)
            if not target or inside is None:
                continue  # a host path outside the repository (the model weights, the logs)
            mounts[target] = inside
            if "ro" in flags.split("+"):
                read_only.add(target)
        return mounts, frozenset(read_only)

    def _node(self, interp: ChainInterpreter, n: Node, command: list[Value], exported: dict[str, Value],
              files: tuple[dict[str, str], frozenset[str], Value | None], rank: str) -> list[RoleCommand]:
        """The command run on node ``rank``: the servers it starts, each with the environment it starts with."""
        mounts, read_only, workdir = files
        node = _NodeShell(interp.recipe_path, self.config, self.snapshot, mounts=mounts, read_only=read_only)
        # `--container-workdir`, else the image's working directory (not known)
        node.cwd = node.directory(workdir.text) if workdir is not None and workdir.text else None
        node.invoked_as = interp.invoked_as
        for name, value in exported.items():
            node.state.vars[name] = value
            node.state.exported.add(name)
        node.state.vars["SLURM_PROCID"] = Value(rank, Location(n.script.path, n.line, note="node rank"))
        node.state.exported.add("SLURM_PROCID")
        try:
            node.run_command(n, command)
        except _ServerStarted:
            pass
        self.errors.extend(e for e in node.errors if e not in self.errors)
        captured = node.state.captured
        env = ({k: at_run_time_if_checkout(v) for k, v in captured.vars.items()
                if k in captured.exported and isinstance(v, Value)} if captured is not None else {})
        out = []
        for server in inference_servers(node.state.servers):
            loc = server.location
            out.append(RoleCommand(server_role(list(server.flags), rank), server.flags,
                                   Location(loc.path, loc.line, loc.column, loc.end_line, loc.end_column,
                                            loc.note or f"node rank {rank}"), dict(sorted(env.items()))))
        return out
