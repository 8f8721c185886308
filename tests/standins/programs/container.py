"""A container run, as docker and pyxis (``srun --container-image``) make one: mounts, working directory, environment.

There is no image: the command runs on this machine's files with the stand-ins
first on ``PATH`` (the "image" has vllm, sglang, python3 ...).  What a
container changes for a recipe is emulated: each ``-v SRC:DST`` /
``--container-mounts=SRC:DST`` is bound at DST in a mount namespace of the
command's own, the working directory is ``-w`` / ``--container-workdir``, and
the environment is what the runtime passes: for docker only the ``-e`` /
``--env-file`` variables over the image's few (``PATH``, ``HOME``,
``HOSTNAME``); for pyxis what ``--export`` says (``ALL`` and additions by
default).  Binding needs the sandbox (``standins/sandbox.py``, where this
process is root of its namespaces): outside it, the command runs without the
mounts, from the host directory a workdir mount maps, and says so on stderr.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys

from common import Node, this_node

CLONE_NEWNS = 0x00020000
MS_BIND, MS_REC, MS_PRIVATE, MS_REMOUNT, MS_RDONLY = 4096, 16384, 1 << 18, 32, 1
SANDBOX_MARK = "/.standin-sandbox"
IMAGE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


class Mount:
    def __init__(self, source: str, target: str, read_only: bool = False) -> None:
        self.source, self.target, self.read_only = source, target, read_only


class ContainerRun:
    """One container start: what to bind, where to start, with which environment, what to run."""

    def __init__(self, runtime: str, image: str, command: list[str], mounts: list[Mount], workdir: str | None,
                 env: dict[str, str]) -> None:
        self.runtime = runtime  # "docker" or "pyxis"
        self.image = image
        self.command = command
        self.mounts = mounts
        self.workdir = workdir
        self.env = env


def parse_mounts(spec: str) -> list[Mount]:
    """pyxis ``--container-mounts=SRC:DST[:FLAGS],...`` (a bare path mounts at itself)."""
    out = []
    for item in spec.split(","):
        if not item:
            continue
        parts = item.split(":")
        source = parts[0]
        target = parts[1] if len(parts) > 1 and parts[1] else source
        flags = parts[2] if len(parts) > 2 else ""
        out.append(Mount(source, target, "ro" in flags.split("+")))
    return out


def image_env(node: Node) -> dict[str, str]:
    """The environment an image brings: the stand-ins first on PATH, as the real programs are in the image, and
    the host name of the node it runs on.  On a node of a multi-node job, which node it is goes in too
    (``STANDIN_*``: the machine's, not the caller's, as a real container sees the node's name and network)."""
    name, address = this_node()
    env = {"PATH": f"{os.path.join(node.root, 'bin')}:{IMAGE_PATH}", "HOME": "/root", "HOSTNAME": name}
    if address is not None:
        env.update(STANDIN_NODE=name, STANDIN_NODE_ADDR=address)
    return env


def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mount.argtypes = (ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p)
    return libc


# The shell start files of a home: an image's own home has none of this machine's (a login shell in the
# container, `docker run ... bash -lc`, would source the machine's ~/.profile, which may put its own Python
# first on PATH, before the stand-ins).
_START_FILES = (".profile", ".bash_profile", ".bash_login", ".bashrc")


def _bind_all(mounts: list[Mount], home: str) -> None:
    libc = _libc()
    if libc.unshare(CLONE_NEWNS) != 0:
        raise OSError(ctypes.get_errno(), "unshare(CLONE_NEWNS)")
    libc.mount(None, b"/", None, MS_REC | MS_PRIVATE, None)
    for name in _START_FILES:
        start = os.path.join(home, name)
        if os.path.isfile(start) and libc.mount(b"/dev/null", start.encode(), None, MS_BIND, None) != 0:
            raise OSError(ctypes.get_errno(), f"bind /dev/null on {start}")
    for m in mounts:
        source = os.path.realpath(m.source)
        if not os.path.exists(source):
            # The fleet's host directory (a model cache, a share) exists on a real node; here, in the sandbox.
            os.makedirs(source, exist_ok=True)
        if os.path.isdir(source):
            os.makedirs(m.target, exist_ok=True)
        elif not os.path.exists(m.target):
            os.makedirs(os.path.dirname(m.target) or "/", exist_ok=True)
            open(m.target, "a").close()
        if libc.mount(source.encode(), m.target.encode(), None, MS_BIND | MS_REC, None) != 0:
            raise OSError(ctypes.get_errno(), f"bind {source} on {m.target}")
        if m.read_only:
            libc.mount(None, m.target.encode(), None, MS_REMOUNT | MS_BIND | MS_RDONLY, None)


def _host_path(mounts: list[Mount], path: str) -> str:
    """Where ``path`` inside the container is on the host, through the mounts (outside the sandbox)."""
    for m in sorted(mounts, key=lambda m: len(m.target), reverse=True):
        target = m.target.rstrip("/") or "/"
        if path == target or path.startswith(target + "/"):
            return m.source.rstrip("/") + path[len(target):]
    return path


def run(name: str, container: ContainerRun) -> int:
    """Replace this process with the container's command (its exit status is the runtime's)."""
    if not container.command:
        print(f"{name}: no command to run in {container.image}", file=sys.stderr)
        return 125
    workdir = container.workdir or "/"
    if os.path.exists(SANDBOX_MARK):
        try:
            _bind_all(container.mounts, container.env.get("HOME", "/root"))
        except OSError as exc:
            print(f"{name}: cannot mount: {exc}", file=sys.stderr)
            return 125
    else:
        print(f"{name} (stand-in): outside the sandbox, mounts are not made; running in the host directory",
              file=sys.stderr)
        workdir = _host_path(container.mounts, workdir)
    try:
        os.makedirs(workdir, exist_ok=True)
        os.chdir(workdir)
    except OSError as exc:
        print(f"{name}: cannot enter the working directory {workdir}: {exc}", file=sys.stderr)
        return 125
    # This interpreter ignores SIGPIPE and SIGXFSZ; the container's processes must not (see enter.py).
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
    try:
        os.execvpe(container.command[0], container.command, container.env)
    except OSError as exc:
        print(f"{name}: {container.command[0]}: {exc}", file=sys.stderr)
        return 127
