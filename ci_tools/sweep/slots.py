"""What the runner gives a job at run time: a node name, a port and a workspace.

On the fleet each job has a runner of its own: ``RUNNER_NAME`` is that
node (``mi355x-amds_03``), the workflow's checkout is its workspace, and
nothing else runs there.  ``sweep`` runs jobs on one machine, up to ``-j N``
at once; each running job holds a *slot*, and a slot stands for one runner:

- its node is ``RUNNER_NAME`` when jobs run one at a time and the runner
  names itself; otherwise the slot's node of the job's runner label in
  runners.yaml (slot *i* takes the label's *i*-th node), so concurrent jobs
  never share a node name (launchers derive Slurm job names and ports from
  it);
- its port is free on this machine (the kernel's pick) and held by no other running job;
- its workspace is the repository checkout when jobs run one at a time (the
  launch step's working directory on the fleet), else a fresh copy of it
  for each job, under the result directory (on the same file system as the
  checkout, which the fleet's launchers mount into containers on other
  nodes), so that concurrent jobs do not write each other's ``server.log``
  or result files.
"""

from __future__ import annotations

import shutil
import socket
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

WORKSPACES_DIR = ".workspaces"


@dataclass(frozen=True)
class Slot:
    index: int
    node: str
    port: int
    workspace: Path
    shared_checkout: bool  # the workspace is the repository checkout itself, not a copy


def label_nodes(labels: Mapping[str, Any], label: str) -> tuple[str, ...]:
    nodes = labels.get(label)
    return tuple(n for n in nodes if isinstance(n, str)) if isinstance(nodes, list) else ()


def node_for(label: str, labels: Mapping[str, Any], slot: int, parallel: int, runner_name: str) -> str | None:
    """The node a job in ``slot`` runs as; None when neither the runner nor runners.yaml names one."""
    if runner_name and parallel <= 1:
        return runner_name
    nodes = label_nodes(labels, label)
    if nodes:
        return nodes[slot % len(nodes)]
    return runner_name or None


def free_port() -> int:
    """A TCP port nothing listens on now, as the kernel picks one (a random one of its ephemeral range, so two
    sweeps on one machine do not reach for the same port as they would counting up from 8888)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("0.0.0.0", 0))
        port: int = sock.getsockname()[1]
        return port


class Ports:
    """Ports handed to running jobs: free on this machine and held by no other running job of the sweep."""

    def __init__(self) -> None:
        self._held: set[int] = set()
        self._lock = threading.Lock()

    def take(self) -> int:
        with self._lock:
            while True:
                port = free_port()
                if port not in self._held:
                    self._held.add(port)
                    return port

    def peek(self) -> int:
        """A port :meth:`take` could hand out now, holding none (for a dry run)."""
        with self._lock:
            while True:
                port = free_port()
                if port not in self._held:
                    return port

    def give_back(self, port: int) -> None:
        with self._lock:
            self._held.discard(port)


def _copy_ignoring(excluded: Sequence[Path]) -> Any:
    resolved = {p.resolve() for p in excluded}

    def ignore(directory: str, names: list[str]) -> list[str]:
        here = Path(directory)
        return [n for n in names if n == ".git" or (here / n).resolve() in resolved]

    return ignore


class Workspaces:
    """The working directory of each slot (see the module documentation)."""

    def __init__(self, checkout: Path, result_root: Path, parallel: int) -> None:
        self.checkout = checkout.resolve()
        self.result_root = result_root.resolve()
        self.parallel = parallel
        self._made: dict[int, Path] = {}
        self._lock = threading.Lock()

    @property
    def copies(self) -> bool:
        return self.parallel > 1

    def path(self, slot: int) -> Path:
        """Where slot ``slot`` works (made on first use by :meth:`get`)."""
        if not self.copies:
            return self.checkout
        return self.result_root / WORKSPACES_DIR / f"slot-{slot}"

    def get(self, slot: int) -> Path:
        path = self.path(slot)
        if not self.copies:
            return path
        with self._lock:
            if slot not in self._made:
                if path.exists():
                    shutil.rmtree(path)
                path.parent.mkdir(parents=True, exist_ok=True)
                shutil.copytree(self.checkout, path, symlinks=True,
                                ignore=_copy_ignoring([self.result_root]))
                self._made[slot] = path
        return path

    def release(self, slot: int) -> None:
        """After a job: its copy is deleted, so the slot's next job starts from a clean checkout (as
        ``actions/checkout`` with ``clean: true`` gives each job on the fleet)."""
        if not self.copies:
            return
        with self._lock:
            path = self._made.pop(slot, None)
        if path is not None:
            shutil.rmtree(path, ignore_errors=True)

    def excluded(self) -> tuple[Path, ...]:
        """Paths inside a workspace that are not the job's (the results, when they are inside the checkout)."""
        return (self.result_root,)

    def remove(self) -> None:
        """Delete the copies; the checkout stays."""
        if self.copies:
            shutil.rmtree(self.result_root / WORKSPACES_DIR, ignore_errors=True)
