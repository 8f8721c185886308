"""Run one command inside a sandbox of its own (Linux namespaces); the standard library only.

Usage: python3 -S -E enter.py SPEC_JSON

The command sees the machine's files, but every write lands in memory or in
a directory the caller chose: the root is a tmpfs holding each top-level
directory of ``/`` as an overlay (the host's directory below, a tmpfs above),
``/tmp`` is the caller's scratch directory (a tmpfs when ``spec["tmp"]`` is
null), ``spec["binds"]`` / ``spec["overlays"]`` put the caller's directories at the paths the command
expects (``/home/runner/work/X/X``, ``/standins``), and ``spec["dirs"]`` are
made empty (what the machine the command expects has: a model cache, a
squash-file directory).  It has a network of its own
(loopback only, up), a PID namespace whose init ends every process left
behind when the command ends, and the host name the spec gives.

Run as root it needs no user namespace; otherwise it maps the caller to root
in a user namespace (the kernel must allow unprivileged user namespaces).
This file is run as a script by ``sandbox.py``; it imports nothing from the
tests.
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import json
import os
import signal
import socket
import struct
import sys

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
MS_RDONLY = 1
MS_NOSUID = 2
MS_NODEV = 4
MS_REMOUNT = 32
MS_BIND = 4096
MS_REC = 16384
MS_PRIVATE = 1 << 18
PR_SET_PDEATHSIG = 1
SIOCSIFFLAGS = 0x8914
IFF_UP, IFF_LOOPBACK, IFF_RUNNING = 0x1, 0x8, 0x40

_libc = ctypes.CDLL(None, use_errno=True)
_libc.mount.argtypes = (ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p)


class SetupError(Exception):
    pass


def _check(rc: int, what: str) -> None:
    if rc != 0:
        err = ctypes.get_errno()
        raise SetupError(f"{what}: {os.strerror(err)} (errno {err})")


def _mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    enc = (lambda s: s.encode() if s is not None else None)
    _check(_libc.mount(enc(source), enc(target), enc(fstype), flags, enc(data)), f"mount {fstype or 'bind'} {source} on {target}")


def _write(path: str, text: str) -> None:
    with open(path, "w") as f:
        f.write(text)


def _enter_namespaces() -> None:
    flags = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWUTS | CLONE_NEWIPC
    uid, gid = os.getuid(), os.getgid()
    if uid != 0:
        flags |= CLONE_NEWUSER
    _check(_libc.unshare(flags), "unshare")
    if uid != 0:
        _write("/proc/self/setgroups", "deny")
        _write("/proc/self/uid_map", f"0 {uid} 1")
        _write("/proc/self/gid_map", f"0 {gid} 1")
    _mount(None, "/", None, MS_REC | MS_PRIVATE)


def _overlay(lower: str, target: str, upper_root: str, name: str, userns: bool) -> bool:
    upper, work = f"{upper_root}/u/{name}", f"{upper_root}/w/{name}"
    os.makedirs(upper, exist_ok=True)
    os.makedirs(work, exist_ok=True)
    options = f"lowerdir={lower},upperdir={upper},workdir={work}" + (",userxattr" if userns else "")
    try:
        _mount("overlay", target, "overlay", 0, options)
        return True
    except SetupError:
        return False


def _build_root(spec: dict, userns: bool) -> str:
    root = spec["root"]  # an empty host directory: the tmpfs goes on it
    _mount("sandbox", root, "tmpfs", MS_NOSUID, "mode=755,size=" + str(spec.get("tmpfs_size", "2g")))
    layers = f"{root}/.layers"
    os.makedirs(layers)
    _mount("layers", layers, "tmpfs", MS_NOSUID, "mode=700,size=" + str(spec.get("tmpfs_size", "2g")))
    for name in sorted(os.listdir("/")):
        host, target = "/" + name, f"{root}/{name}"
        if name == ".layers" or os.path.islink(host):
            if os.path.islink(host):
                os.symlink(os.readlink(host), target)
            continue
        if not os.path.isdir(host):
            continue
        os.mkdir(target)
        if name in ("proc", "tmp"):
            continue  # a new proc below (this PID namespace's); /tmp is the caller's scratch
        if name in ("dev", "sys"):
            _mount(host, target, None, MS_BIND | MS_REC)
            continue
        if not _overlay(host, target, layers, name, userns):
            # No overlay here: the host directory read-only (writes into it fail, none reach the host).
            _mount(host, target, None, MS_BIND | MS_REC)
            _mount(None, target, None, MS_REMOUNT | MS_BIND | MS_RDONLY)
    open(f"{root}/.standin-sandbox", "w").close()  # stand-ins that emulate containers bind mounts only here
    _mount("proc", f"{root}/proc", "proc", MS_NOSUID | MS_NODEV)
    if spec["tmp"] is None:  # the caller keeps nothing of /tmp: a tmpfs, gone with the sandbox
        size = str(spec.get("tmpfs_size", "2g"))
        _mount("tmp", f"{root}/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777,size=" + size)
    else:
        _mount(spec["tmp"], f"{root}/tmp", None, MS_BIND | MS_REC)
    for path in spec.get("kept", ()):
        # The caller's own environment or checkout under /tmp: seen where it is, read-only.
        os.makedirs(root + path, exist_ok=True)
        _mount(path, root + path, None, MS_BIND | MS_REC)
        _mount(None, root + path, None, MS_REMOUNT | MS_BIND | MS_RDONLY)
    os.makedirs(f"{root}/dev/shm", exist_ok=True)
    try:
        # A GPU node's /dev/shm is large (recipes check it fits their CPU-side KV cache); tmpfs takes memory
        # only for what is written.
        _mount("shm", f"{root}/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "size=" + str(spec.get("shm_size", "2t")))
    except SetupError:
        pass
    for target, host in spec.get("binds", {}).items():
        path = root + target
        os.makedirs(path, exist_ok=True)
        _mount(host, path, None, MS_BIND | MS_REC)
    for target, (lower, upper) in spec.get("overlays", {}).items():
        path = root + target
        os.makedirs(path, exist_ok=True)
        work = upper.rstrip("/") + ".work"
        os.makedirs(upper, exist_ok=True)
        os.makedirs(work, exist_ok=True)
        options = f"lowerdir={lower},upperdir={upper},workdir={work}" + (",userxattr" if userns else "")
        _mount("overlay", path, "overlay", 0, options)
    for path in spec.get("dirs", ()):
        os.makedirs(root + path, exist_ok=True)
    return root


def _loopback_up() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        fcntl.ioctl(s, SIOCSIFFLAGS, struct.pack("16sH14x", b"lo", IFF_UP | IFF_LOOPBACK | IFF_RUNNING))


def _init(spec: dict, userns: bool) -> int:
    """PID 1 of the sandbox: build the file system, start the command, reap until it ends."""
    root = _build_root(spec, userns)
    _loopback_up()
    if spec.get("hostname"):
        socket.sethostname(spec["hostname"])
    os.chroot(root)
    os.chdir(spec.get("cwd", "/"))
    pid = os.fork()
    if pid == 0:
        # Python ignores SIGPIPE and SIGXFSZ; a command must not inherit that (a writer to a closed pipe
        # would loop forever instead of ending, as `amd-smi -w | awk` relies on).
        for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGPIPE, signal.SIGXFSZ):
            signal.signal(signum, signal.SIG_DFL)
        try:
            os.execvpe(spec["argv"][0], spec["argv"], spec["env"])
        except OSError as exc:
            print(f"sandbox: cannot run {spec['argv'][0]}: {exc}", file=sys.stderr)
            os._exit(127)
    status = 0
    while True:
        try:
            done, wstatus = os.waitpid(-1, 0)
        except ChildProcessError:
            break
        if done == pid:
            status = os.waitstatus_to_exitcode(wstatus)
            break
    # Returning ends PID 1, and with it every process the command left behind (a server in the background).
    return status if status >= 0 else 128 - status


def main() -> int:
    spec = json.loads(sys.argv[1])
    userns = os.getuid() != 0
    try:
        _enter_namespaces()
    except (SetupError, OSError) as exc:
        print(f"sandbox: cannot create namespaces: {exc}", file=sys.stderr)
        return 125
    child = os.fork()  # the first child is PID 1 of the new PID namespace
    if child == 0:
        try:
            _check(_libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "prctl")
            os._exit(_init(spec, userns))
        except (SetupError, OSError) as exc:
            print(f"sandbox: setup failed: {exc}", file=sys.stderr)
            os._exit(125)

    def forward(signum: int, _frame: object) -> None:
        os.kill(child, signal.SIGKILL)

    signal.signal(signal.SIGTERM, forward)
    signal.signal(signal.SIGINT, forward)
    while True:
        try:
            _, wstatus = os.waitpid(child, 0)
            break
        except InterruptedError:
            continue
        except OSError as exc:
            if exc.errno == errno.EINTR:
                continue
            raise
    code = os.waitstatus_to_exitcode(wstatus)
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    sys.exit(main())
