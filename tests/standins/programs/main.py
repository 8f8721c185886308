"""Entry point of the Python stand-ins: ``main.py ROOT PROGRAM ARGS...`` (the shim has recorded the call).

PROGRAM: ``docker`` (``docker run``), ``srun`` (with ``--container-image``),
``sbatch``, ``server:<kind>`` (vllm, sglang, atom, trtllm, router), ``client`` or ``aiperf`` (``aiperf profile``).
"""

from __future__ import annotations

import sys
import os

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import common  # noqa: E402
from common import Node  # noqa: E402


def main(argv: list[str]) -> int:
    root, name, args = argv[1], argv[2], argv[3:]
    # The shim's record of this call, for the programs that add to it; never passed on to what they start.
    common.CALL = os.environ.pop("STANDIN_CALL", None)
    node = Node(root)
    if name == "docker":
        from docker import docker
        return docker(node, args)
    if name in ("srun", "sbatch"):
        from slurm import PROGRAMS
        return PROGRAMS[name](node, args)
    if name.startswith("server:"):
        from server import serve
        return serve(node, name.split(":", 1)[1], args)
    if name == "client":
        from client import run
        return run(node, args)
    if name == "aiperf":
        from aiperf import run as replay
        return replay(node, args)
    print(f"stand-in: no program named {name}", file=sys.stderr)
    return 127


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except KeyboardInterrupt:
        sys.exit(130)
    except BrokenPipeError:
        sys.exit(141)
