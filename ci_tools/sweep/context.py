"""What every job of one ``sweep run``/``sweep local`` shares: the repository, where launchers come from,
the settings, this machine's slots and the environment ci-tools was started with."""

from __future__ import annotations

import socket
import subprocess
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from ..config import ProjectConfig
from ..jobs.env.contract import JobEnvContract, contract_for, runner_labels
from ..jobs.job import Job
from ..revision.snapshot import Snapshot, WorkTreeSnapshot
from .gpus import Inventory, inventory
from .settings import SweepSettings
from .slots import Ports, Slot, Workspaces, node_for

_NOT_LOOKED = object()


@dataclass
class SweepContext:
    config: ProjectConfig
    snapshot: Snapshot  # the repository being run (its recipes, configs, runners file)
    settings: SweepSettings
    result_root: Path
    base_env: Mapping[str, str]  # what ci-tools was started with: the runner's environment
    parallel: int = 1
    run_eval: bool = False
    # Where the launch step and the fleet's launchers are read from: the repository, or with
    # --settings-from the trusted checkout (the pull request does not choose how it is run).
    launch_root: Path | None = None
    launch_config: ProjectConfig | None = None
    sha: str = ""  # the commit the checkout is (the pinned one on the fleet); "" when it is not a git checkout
    ports: Ports = field(default_factory=Ports)
    workspaces: Workspaces | None = None
    _contract: JobEnvContract | None = None
    _labels: Mapping[str, Any] | None = None
    _gpus: Any = _NOT_LOOKED
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self.result_root = self.result_root.resolve()
        if self.workspaces is None:
            self.workspaces = Workspaces(self.config.root, self.result_root, self.parallel)

    @property
    def trusted(self) -> bool:
        return self.launch_root is not None

    @property
    def contract(self) -> JobEnvContract:
        """The env contract the jobs run with (the trusted checkout's with --settings-from)."""
        with self._lock:
            if self._contract is None:
                if self.launch_root is not None and self.launch_config is not None:
                    self._contract = contract_for(self.launch_config, WorkTreeSnapshot(self.launch_root))
                else:
                    self._contract = contract_for(self.config, self.snapshot)
            return self._contract

    @property
    def runner_name(self) -> str:
        """The machine that runs the jobs, as records name it: the GitHub runner, else this host."""
        return self.base_env.get("RUNNER_NAME") or socket.gethostname()

    def gpus(self) -> Inventory | None:
        """This machine's GPUs (looked up once; they do not change during a sweep)."""
        with self._lock:
            if self._gpus is _NOT_LOOKED:
                self._gpus = inventory(self.base_env)
            found: Inventory | None = self._gpus
            return found

    @property
    def labels(self) -> Mapping[str, Any]:
        with self._lock:
            if self._labels is None:
                self._labels = runner_labels(self.config, self.snapshot)
            return self._labels

    def launcher_argv_path(self, path: str) -> str:
        """The launcher as the launch step names it (``./runners/...``, relative to the workspace), or its
        absolute path in the trusted checkout."""
        if self.launch_root is not None:
            return str((self.launch_root / path).resolve())
        return f"./{path}"

    def node(self, job: Job, slot: int) -> str | None:
        return node_for(str(job.get("runner") or ""), self.labels, slot, self.parallel,
                        self.base_env.get("RUNNER_NAME", ""))

    def slot(self, job: Job, index: int, *, hold: bool = True) -> Slot | None:
        """The slot a job runs in (None: no node name is known for it).  ``hold`` False (a dry run)
        neither takes the port nor makes the workspace."""
        node = self.node(job, index)
        if node is None:
            return None
        assert self.workspaces is not None
        port = self.ports.take() if hold else self.ports.peek()
        workspace = self.workspaces.get(index) if hold else self.workspaces.path(index)
        return Slot(index, node, port, workspace, not self.workspaces.copies)

    def release(self, slot: Slot) -> None:
        assert self.workspaces is not None
        self.ports.give_back(slot.port)
        self.workspaces.release(slot.index)


def checkout_sha(root: Path) -> str:
    """The commit a checkout is at; "" when it is not a git checkout (a copied tree)."""
    if not (root / ".git").exists():
        return ""
    try:
        proc = subprocess.run(["git", "-C", str(root), "rev-parse", "--verify", "HEAD"], capture_output=True,
                              text=True, timeout=30, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    sha = proc.stdout.strip()
    return sha if proc.returncode == 0 and len(sha) == 40 else ""
