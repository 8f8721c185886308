"""What the Python stand-ins share: the installation they belong to and the node it pretends to be.

They are run by the shims in ``<root>/bin`` as ``python3 -S -E
<root>/lib/main.py <root> PROGRAM ARGS...`` after the shim has recorded the
call.  They use the standard library only: the same programs run on the host,
in the sandbox and inside an emulated container.
"""

from __future__ import annotations

import json
import os
import socket
import time

# Where the shim recorded this call (``<root>/log/<stamp>-<pid>-<name>``), set by main.py.
CALL: str | None = None


class Node:
    """The node an installation pretends to be (``<root>/state/node.env``, which the bash shims source)."""

    def __init__(self, root: str) -> None:
        self.root = root
        values = {}
        with open(os.path.join(root, "state", "node.env")) as f:
            lines = f.read().splitlines()
        for line in lines:
            name, _, value = line.partition("=")
            values[name] = value.strip("'")
        self.vendor = values["VENDOR"]
        self.gpus = int(values["GPUS"])
        self.gpu_name = values["GPU_NAME"]

    @property
    def state(self) -> str:
        return os.path.join(self.root, "state")


def machine_name() -> str:
    """This machine's own name (the sandbox's host name): the first node of every allocation."""
    return os.uname().nodename


def node_names(count: int) -> list[str]:
    """The nodes of an allocation of ``count`` nodes: this machine, then ``<host>-1``, ``<host>-2`` ... (as
    shims/slurm-lib.sh names them)."""
    host = machine_name()
    return [host] + [f"{host}-{k}" for k in range(1, count)]


def node_address(name: str) -> str:
    """A node's own address: node k of an allocation (``<host>-k``; the machine is node 0) has 127.0.0.k+1
    (as shims/slurm-lib.sh's ``_slurm_node_addr`` gives it)."""
    host = machine_name()
    suffix = name[len(host) + 1:] if name.startswith(host + "-") else ""
    return f"127.0.0.{int(suffix) + 1 if suffix.isdigit() else 1}"


def this_node() -> tuple[str, str | None]:
    """The node this process runs on and its own address: a task of a multi-node step has them in
    ``STANDIN_NODE`` and ``STANDIN_NODE_ADDR`` (shims/srun.sh); elsewhere the machine, with no address of
    its own (None: the loopback network as it is)."""
    return os.environ.get("STANDIN_NODE") or machine_name(), os.environ.get("STANDIN_NODE_ADDR") or None


# Addresses that mean "this machine".
_THIS_MACHINE = frozenset({"0.0.0.0", "::", "", "localhost", "127.0.0.1"})


def on_this_node(host: str) -> str:
    """Where ``host`` is for a server binding it or a client reaching it: on a node of a multi-node job, an
    address that means "this machine" is the node's own (each node is a machine of its own, so servers of two
    nodes may take the same port); elsewhere ``host`` as it is."""
    address = this_node()[1]
    return address if address is not None and host in _THIS_MACHINE else host


def option_value(args: list[str], *names: str) -> str | None:
    """The value of the last ``--name VALUE`` / ``--name=VALUE`` among ``args``."""
    found = None
    for i, word in enumerate(args):
        for name in names:
            if word == name and i + 1 < len(args):
                found = args[i + 1]
            elif word.startswith(name + "="):
                found = word[len(name) + 1:]
    return found


def _exchange(url: str, method: str, headers: str = "", body: bytes = b"") -> tuple[str, list[str], bytes, str | None]:
    """One real request over HTTP/1.1 (``Connection: close``): the status, the answer's header lines, its body,
    and an error when the server could not be reached or did not answer 200."""
    hostport, _, path = url.split("://", 1)[-1].partition("/")
    host, _, port = hostport.rpartition(":") if ":" in hostport else (hostport, "", "80")
    request = (f"{method} /{path} HTTP/1.1\r\nHost: {hostport}\r\n{headers}Connection: close\r\n\r\n").encode() + body
    try:
        with socket.create_connection((on_this_node(host), int(port)), timeout=10) as conn:
            conn.sendall(request)
            chunks = []
            while chunk := conn.recv(65536):
                chunks.append(chunk)
    except (OSError, ValueError) as exc:
        return "?", [], b"", f"{type(exc).__name__}: {exc}"
    head, _, answer = b"".join(chunks).partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = lines[0].split()[1] if len(lines[0].split()) > 1 else "?"
    return status, lines[1:], answer, None if status == "200" else f"HTTP {status} from {url}"


def post_json(url: str, body: dict) -> tuple[float, str | None, str | None]:
    """One real POST of ``body`` as JSON: (seconds, the server's identity, an error)."""
    start = time.perf_counter()
    data = json.dumps(body).encode()
    _, headers, _, error = _exchange(url, "POST", f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\n",
                                     data)
    identity = next((line.split(":", 1)[1].strip() for line in headers
                     if line.lower().startswith("x-standin-server:")), None)
    return time.perf_counter() - start, identity, error


def get_text(url: str) -> tuple[str | None, str | None]:
    """One real GET: (the body when the answer is 200, an error otherwise)."""
    _, _, answer, error = _exchange(url, "GET")
    return (None, error) if error else (answer.decode("utf-8", errors="replace"), None)
