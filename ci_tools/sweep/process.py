"""Run one command as a job: its own process group, a marker in its environment, a deadline, a clean stop.

The command gets a new session (``start_new_session``), so what it starts
shares its process group, and every process it starts inherits a marker
variable (``CI_TOOLS_SWEEP_JOB=<token>``) in its environment.  A process that
leaves the group (``setsid``, a daemon that double-forks) keeps the marker,
so the job's processes are its group plus every process whose
``/proc/<pid>/environ`` holds the token.  Only a process started with a
cleared environment (``env -i``) or by another service (the docker daemon,
slurmd) escapes both; the launchers' own cleanup (``docker rm``, ``scancel``)
covers those.

Stopping means SIGTERM to every process of the job, a grace period, then
SIGKILL to whatever is left; the same sweep runs when the leader exits by
itself, so a recipe which leaves a server running does not leave it on the
runner.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, Mapping, Sequence

_POLL_SECONDS = 0.05
MARKER = "CI_TOOLS_SWEEP_JOB"
_COMMAND_CHARS = 200


@dataclass(frozen=True)
class Leftover:
    """A process of the job still alive after its leader exited."""

    pid: int
    command: str
    detached: bool  # outside the job's process group: found by the marker only (setsid)

    def describe(self) -> str:
        return f"{self.pid} {self.command}" + (" (detached)" if self.detached else "")


@dataclass(frozen=True)
class ProcessOutcome:
    exit_code: int | None  # None when the leader died of a signal
    signal: str | None  # name of the signal that ended the leader
    timed_out: bool
    stopped: bool  # stopped because the caller asked (SIGTERM to ci-tools)
    killed: bool  # SIGKILL was needed after the grace period
    leftovers: tuple[Leftover, ...]  # processes still running after the leader exited
    duration: float
    survivors: tuple[int, ...] = field(default=())  # processes even SIGKILL did not end


def _stat_fields(pid: str) -> list[str] | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read().decode(errors="replace")
    except OSError:
        return None
    # The command name may contain spaces and parentheses: fields start after the last ')'.
    return stat[stat.rfind(")") + 2:].split()


def _has_marker(pid: str, entry: bytes) -> bool:
    """Whether the process's environment holds ``entry`` (``NAME=value``) as one whole variable."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as fh:
            data = fh.read()
    except OSError:  # gone, or another user's process: not ours to end
        return False
    return data.startswith(entry + b"\0") or b"\0" + entry + b"\0" in data


def job_members(pgid: int, token: str | None) -> dict[int, bool]:
    """Live (non-zombie) processes of the job: pid -> whether it left the process group.

    The environ of a process is read only when it is not in the group: it is
    the expensive part, and a group member belongs to the job anyway.
    """
    entry = f"{MARKER}={token}".encode() if token else None
    members: dict[int, bool] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return {pgid: False} if _probe_group(pgid) else {}
    me = os.getpid()
    for name in entries:
        if not name.isdigit() or int(name) == me:
            continue
        fields = _stat_fields(name)
        if fields is None or len(fields) < 3 or fields[0] in ("Z", "X"):
            continue
        if int(fields[2]) == pgid:
            members[int(name)] = False
        elif entry is not None and _has_marker(name, entry):
            members[int(name)] = True
    return members


def _probe_group(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def _command(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            text = fh.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return "?"
    return text if len(text) <= _COMMAND_CHARS else text[:_COMMAND_CHARS - 3] + "..."


def _signal_job(pgid: int, members: Mapping[int, bool], sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass
    for pid, detached in members.items():
        if detached:
            try:
                os.kill(pid, sig)
            except (ProcessLookupError, PermissionError):
                pass


def _wait_gone(proc: subprocess.Popen[bytes] | None, pgid: int, token: str | None, deadline: float) -> bool:
    """Wait until the leader (if given) has exited and no process of the job is left; False at the deadline."""
    while True:
        leader_done = proc is None or proc.poll() is not None
        if leader_done and not job_members(pgid, token):
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(_POLL_SECONDS)


def _end(proc: subprocess.Popen[bytes] | None, pgid: int, token: str | None, grace: float) -> tuple[bool, tuple[int, ...]]:
    """SIGTERM every process of the job, SIGKILL after ``grace``; (SIGKILL was needed, pids still alive)."""
    _signal_job(pgid, job_members(pgid, token), signal.SIGTERM)
    if _wait_gone(proc, pgid, token, time.monotonic() + grace):
        return False, ()
    _signal_job(pgid, job_members(pgid, token), signal.SIGKILL)
    if proc is not None:
        proc.wait()
    _wait_gone(None, pgid, token, time.monotonic() + 5)
    return True, tuple(sorted(job_members(pgid, token)))


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
                 echo: BinaryIO | None = None, token: str | None = None) -> ProcessOutcome:
    """Run ``argv``; its output (stdout and stderr merged) goes to ``log_path`` and ``echo``.

    With ``token``, ``CI_TOOLS_SWEEP_JOB=<token>`` is put in the environment and
    every process carrying it counts as the job's.
    """
    started = time.monotonic()
    stop = stop or threading.Event()
    log_path.parent.mkdir(parents=True, exist_ok=True)
    full_env = dict(env)
    if token:
        full_env[MARKER] = token
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(list(argv), env=full_env, cwd=cwd, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
        pgid = proc.pid
        assert proc.stdout is not None
        sinks: list[BinaryIO] = [log] + ([echo] if echo is not None else [])
        pump = threading.Thread(target=_pump, args=(proc.stdout, sinks), daemon=True)
        pump.start()
        deadline = None if timeout is None else started + timeout
        timed_out = stopped = False
        while proc.poll() is None:
            if stop.is_set():
                stopped = True
                break
            if deadline is not None and time.monotonic() >= deadline:
                timed_out = True
                break
            stop.wait(_POLL_SECONDS)
        leftovers: tuple[Leftover, ...] = ()
        if timed_out or stopped:
            killed, survivors = _end(proc, pgid, token, grace)
        else:
            # The leader is gone; anything of the job still running was left behind by the recipe.
            members = job_members(pgid, token)
            leftovers = tuple(Leftover(pid, _command(pid), detached) for pid, detached in sorted(members.items()))
            killed, survivors = _end(None, pgid, token, grace) if members else (False, ())
        proc.wait()
        # A detached process holding the pipe keeps the pump reading; it has been ended above.
        pump.join(timeout=5)
        proc.stdout.close()
    code = proc.returncode
    sig = signal.Signals(-code).name if code < 0 else None
    return ProcessOutcome(exit_code=code if code >= 0 else None, signal=sig, timed_out=timed_out, stopped=stopped,
                          killed=killed, leftovers=leftovers, duration=time.monotonic() - started,
                          survivors=survivors)
