"""docker: ``run`` starts the command as a container (see container.py); the housekeeping verbs succeed quietly.

``docker run`` reads the options the launchers use (``-v``, ``-e NAME`` /
``-e NAME=VALUE``, ``--env-file``, ``-w``, ``--entrypoint``, ``--name``, ...;
every other option taking a value unless it is one of docker's switches),
then the image, then the command.  ``docker ps``/``images`` list nothing,
``stop``/``rm``/``kill``/``pull``/``network``/``volume``/``system``
succeed, ``info`` and ``version`` answer.
"""

from __future__ import annotations

import os
import sys

from common import Node
from container import ContainerRun, Mount, image_env, run

# Options of `docker run` that take no value (everything else starting with - takes one).
_SWITCHES = {"--rm", "-d", "--detach", "-i", "--interactive", "-t", "--tty", "-it", "-ti", "--privileged",
             "--init", "-P", "--publish-all", "--read-only", "--no-healthcheck", "--oom-kill-disable", "-q",
             "--quiet", "--sig-proxy"}


def _env_file(path: str, env: dict[str, str]) -> None:
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            name, eq, value = line.partition("=")
            if eq:
                env[name] = value
            elif name in os.environ:
                env[name] = os.environ[name]


def parse_run(node: Node, args: list[str]) -> ContainerRun:
    env = image_env(node)
    mounts: list[Mount] = []
    workdir = None
    entrypoint: list[str] | None = None
    i = 0
    while i < len(args) and args[i].startswith("-"):
        word = args[i]
        name, eq, inline = word.partition("=")
        if word in _SWITCHES or (eq and name in _SWITCHES):
            i += 1
            continue
        if eq:
            value = inline
            i += 1
        else:
            value = args[i + 1] if i + 1 < len(args) else ""
            i += 2
        if name in ("-v", "--volume"):
            parts = value.split(":")
            mounts.append(Mount(parts[0], parts[1] if len(parts) > 1 else parts[0],
                                len(parts) > 2 and "ro" in parts[2].split(",")))
        elif name in ("-e", "--env"):
            key, has_value, text = value.partition("=")
            if has_value:
                env[key] = text
            elif key in os.environ:
                env[key] = os.environ[key]
        elif name == "--env-file":
            _env_file(value, env)
        elif name in ("-w", "--workdir"):
            workdir = value
        elif name == "--entrypoint":
            entrypoint = [value] if value else []
        elif name in ("-h", "--hostname"):
            env["HOSTNAME"] = value
    image = args[i] if i < len(args) else ""
    command = args[i + 1:]
    if entrypoint is not None:
        command = entrypoint + command
    return ContainerRun("docker", image, command, mounts, workdir, env)


def docker(node: Node, args: list[str]) -> int:
    verb = args[0] if args else ""
    if verb == "run":
        return run("docker", parse_run(node, args[1:]))
    if verb in ("ps", "images"):
        if "-q" not in args and "-aq" not in args and "--quiet" not in args:
            print("CONTAINER ID   IMAGE     COMMAND   CREATED   STATUS    PORTS     NAMES")
        return 0
    if verb == "info":
        print("Server Version: 27.0.0-standin\nRuntimes: runc nvidia\n")
        return 0
    if verb == "version":
        print("Docker version 27.0.0-standin")
        return 0
    if verb in ("stop", "rm", "kill", "pull", "network", "volume", "system", "container", "image", "login",
                "logout", "inspect", "wait", "logs", "exec", "cp", "tag", "rmi", "buildx", "build"):
        return 0
    print(f"docker: '{verb}' is not a docker command (stand-in)", file=sys.stderr)
    return 1
