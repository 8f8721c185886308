"""Run one command in its own process group, with a deadline and a clean stop.

The command gets a new session (``start_new_session``), so every process it
starts, including background servers, shares its process group.  Stopping
means SIGTERM to the whole group, a grace period, then SIGKILL to whatever
is left; the group is also swept when the leader exits by itself, so that a
recipe which leaves a server running in the background does not leave it
behind on the runner.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Mapping, Sequence

_POLL_SECONDS = 0.05


@dataclass(frozen=True)
class ProcessOutcome:
    exit_code: int | None  # None when the leader died of a signal
    signal: str | None  # name of the signal that ended the leader
    timed_out: bool
    stopped: bool  # stopped because the caller asked (SIGTERM to ci-tools)
    killed: bool  # SIGKILL was needed after the grace period
    leftovers: int  # processes of the group still alive after the leader exited
    duration: float


def _group_members(pgid: int) -> list[int]:
    """Live (non-zombie) processes of a process group, read from /proc."""
    members: list[int] = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return _probe_group(pgid)
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                stat = fh.read().decode(errors="replace")
        except OSError:
            continue
        # The command name may contain spaces and parentheses: fields start after the last ')'.
        rest = stat[stat.rfind(")") + 2:].split()
        if len(rest) >= 3 and rest[0] not in ("Z", "X") and int(rest[2]) == pgid:
            members.append(int(entry))
    return members


def _probe_group(pgid: int) -> list[int]:
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return []
    return [pgid]


def _signal_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _wait_group_gone(pgid: int, deadline: float) -> bool:
    while time.monotonic() < deadline:
        if not _group_members(pgid):
            return True
        time.sleep(_POLL_SECONDS)
    return not _group_members(pgid)


def _pump(source: BinaryIO, sinks: Sequence[BinaryIO]) -> None:
    for chunk in iter(lambda: source.read1(65536), b""):  # type: ignore[attr-defined]
        for sink in sinks:
            try:
                sink.write(chunk)
                sink.flush()
            except (OSError, ValueError):
                pass


def run_in_group(argv: Sequence[str], *, env: Mapping[str, str], cwd: Path, log_path: Path,
                 timeout: float | None, grace: float, stop: threading.Event | None = None,
                 echo: BinaryIO | None = None) -> ProcessOutcome:
    """Run ``argv``; its output (stdout and stderr merged) goes to ``log_path`` and ``echo``."""
    started = time.monotonic()
    stop = stop or threading.Event()
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(list(argv), env=dict(env), cwd=cwd, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
        pgid = proc.pid
        assert proc.stdout is not None
        sinks: list[BinaryIO] = [log] + ([echo] if echo is not None else [])
        pump = threading.Thread(target=_pump, args=(proc.stdout, sinks), daemon=True)
        pump.start()
        deadline = None if timeout is None else started + timeout
        timed_out = stopped = killed = False
        while proc.poll() is None:
            if stop.is_set():
                stopped = True
                break
            if deadline is not None and time.monotonic() >= deadline:
                timed_out = True
                break
            stop.wait(_POLL_SECONDS)
        leftovers = 0
        if timed_out or stopped:
            _signal_group(pgid, signal.SIGTERM)
            if not _wait_for_exit(proc, pgid, time.monotonic() + grace):
                killed = True
                _signal_group(pgid, signal.SIGKILL)
            proc.wait()
        else:
            # The leader is gone; anything still in its group was left running by the recipe.
            leftovers = len(_group_members(pgid))
            if leftovers:
                _signal_group(pgid, signal.SIGTERM)
                if not _wait_group_gone(pgid, time.monotonic() + grace):
                    killed = True
        if _group_members(pgid):
            _signal_group(pgid, signal.SIGKILL)
            _wait_group_gone(pgid, time.monotonic() + 5)
        pump.join(timeout=5)
        proc.stdout.close()
    code = proc.returncode
    sig = signal.Signals(-code).name if code < 0 else None
    return ProcessOutcome(exit_code=code if code >= 0 else None, signal=sig, timed_out=timed_out, stopped=stopped,
                          killed=killed, leftovers=leftovers, duration=time.monotonic() - started)


def _wait_for_exit(proc: subprocess.Popen[bytes], pgid: int, deadline: float) -> bool:
    """Wait until the leader has exited and the group is empty; False when the deadline passed."""
    while time.monotonic() < deadline:
        if proc.poll() is not None and not _group_members(pgid):
            return True
        time.sleep(_POLL_SECONDS)
    return proc.poll() is not None and not _group_members(pgid)
