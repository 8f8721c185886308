"""Run a command where it can touch nothing of the machine: the Python side of ``enter.py``.

A recipe run for real ``cd``s, writes ``/workspace/server.log``, ``mkdir -p``s
cache directories and leaves servers running.  ``run_sandboxed`` starts it in
namespaces of its own (see enter.py): the machine's files visible, every write
kept in memory unless it lands in a directory the caller binds or overlays,
a private loopback network (every job can listen on 8888), and every process
ended with it.  Nothing is rewritten in the recipes: the paths they use
exist inside.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

ENTER = Path(__file__).resolve().parent / "enter.py"
INTERPRETER = os.path.realpath(getattr(sys, "_base_executable", sys.executable))
# What a sandboxed command runs of this machine's Python side: the virtual environment (its ci-tools entry
# point) and the checkout an editable install imports from.
_PROJECT = Path(__file__).resolve().parents[2]


def _kept_under_tmp() -> list[str]:
    """The environment and the checkout when they lie under /tmp, which the sandbox replaces by its scratch.

    A clean clone made under /tmp (as CI may make it) would otherwise lose its own ``.venv/bin/python``
    inside the sandbox; these paths are bound read-only at the same place.
    """
    kept = []
    for path in (os.path.realpath(sys.prefix), str(_PROJECT)):
        if (path == "/tmp" or path.startswith("/tmp/")) and path not in kept:
            kept.append(path)
    return kept


@dataclass
class Sandbox:
    """Where a sandboxed command's writes go, and which of the caller's directories it sees where."""

    scratch: Path  # an empty directory of the caller's: the root's mount point and /tmp live here
    binds: dict[str, Path] = field(default_factory=dict)  # path inside -> caller's directory (read-write)
    overlays: dict[str, tuple[Path, Path]] = field(default_factory=dict)  # path inside -> (read-only lower, upper)
    hostname: str = "standin-node"
    dirs: tuple[str, ...] = ()  # directories the command expects the machine to have, created empty inside
    # /tmp in memory instead of in ``scratch``, for a caller that reads nothing of it afterwards: a launcher that
    # unpacks the checkout there (launch_mi300x-amds.sh, 800 files) writes no disk, and nothing is left to delete.
    tmp_in_memory: bool = False

    def spec(self, argv: list[str], env: dict[str, str], cwd: str) -> dict:
        root, tmp = self.scratch / "root", self.scratch / "tmp"
        root.mkdir(parents=True, exist_ok=True)
        if not self.tmp_in_memory:
            tmp.mkdir(parents=True, exist_ok=True)
            tmp.chmod(0o1777)
        return {"root": str(root), "tmp": None if self.tmp_in_memory else str(tmp), "hostname": self.hostname,
                "cwd": cwd, "argv": argv, "env": env, "dirs": list(self.dirs), "kept": _kept_under_tmp(),
                "binds": {k: str(v) for k, v in self.binds.items()},
                "overlays": {k: [str(lower), str(upper)] for k, (lower, upper) in self.overlays.items()}}


def run_sandboxed(sandbox: Sandbox, argv: list[str], env: dict[str, str], cwd: str, *, timeout: float,
                  output: Path | None = None) -> int:
    """Run ``argv`` in the sandbox; its exit status (124 when ``timeout`` seconds passed and it was ended).

    stdout and stderr go to ``output`` (one file, interleaved as a terminal shows them), else are discarded.
    """
    spec = json.dumps(sandbox.spec(argv, env, cwd))
    sink = open(output, "wb") if output else subprocess.DEVNULL
    try:
        proc = subprocess.Popen([INTERPRETER, "-S", "-E", str(ENTER), spec], stdin=subprocess.DEVNULL,
                                stdout=sink, stderr=subprocess.STDOUT)
        try:
            return proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()  # enter.py's PID 1 dies with it (PDEATHSIG), and every process of the sandbox with that
            proc.wait()
            return 124
    finally:
        if output:
            sink.close()  # type: ignore[union-attr]


@lru_cache(maxsize=1)
def unavailable() -> str | None:
    """Why sandboxes cannot be made on this machine (no user namespaces for this user, ...), or None."""
    with tempfile.TemporaryDirectory(prefix="standin-probe-") as scratch:
        log = Path(scratch) / "out"
        code = run_sandboxed(Sandbox(Path(scratch)), ["/bin/sh", "-c", "test -e /.standin-sandbox"],
                             {"PATH": "/usr/bin:/bin"}, "/", timeout=30, output=log)
        if code == 0:
            return None
        return f"a sandbox cannot be created here (exit {code}): {log.read_text(errors='replace').strip()}"
