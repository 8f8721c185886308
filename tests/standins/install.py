"""Install the stand-ins into a directory: ``bin/`` (put it first on PATH), ``lib/``, ``log/``, ``state/``.

Every program in ``bin/`` is a bash script: a common head that records the
call (files ``log/<microseconds>-<pid>-<name>.argv`` and ``.environ``,
NUL-separated as the kernel gave them, and ``.cwd``, with bash builtins only), then the program's body from ``shims/``.  Bodies that need more than
bash (a container's mounts, an HTTP server, the benchmark client, sbatch)
run ``lib/main.py`` with this machine's Python (``-S -E``: a recipe's
``PYTHONPATH`` cannot change it).  Shims find their installation from their own
path, so it works wherever it is mounted (the sandbox mounts it at
``/standins``) and inside an emulated container, whose environment carries
nothing of the caller's.

The node decides which tools exist: ``vendor="amd"`` installs amd-smi and
rocm-smi and no nvidia-smi (benchmark_lib.sh picks its GPU monitor by which
one is on PATH).
"""

from __future__ import annotations

import os
import py_compile
import shlex
import shutil
import sys
import tempfile
from functools import lru_cache
from pathlib import Path

HERE = Path(__file__).resolve().parent
SHIMS, PROGRAMS = HERE / "shims", HERE / "programs"

# The interpreter of the Python stand-ins: the real executable of this one (a pyenv or venv launcher depends on
# the caller's HOME and PATH), run with -S -E.
INTERPRETER = os.path.realpath(getattr(sys, "_base_executable", sys.executable))
# The "image's" python3 for what is neither a server nor the client (`python3 -c ...` in a recipe): the
# system's, whose start reads no developer site-packages; this interpreter where there is none.
IMAGE_PYTHON = "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) else INTERPRETER

# Program name -> its body in shims/.
_COMMON = {
    "docker": "docker.sh", "srun": "srun.sh", "salloc": "salloc.sh", "squeue": "squeue.sh",
    "scancel": "scancel.sh", "scontrol": "scontrol.sh", "sinfo": "sinfo.sh", "sbatch": "sbatch.sh",
    "hf": "hf.sh", "huggingface-cli": "hf.sh", "vllm": "servers.sh", "sglang": "servers.sh",
    "trtllm-serve": "servers.sh", "vllm-router": "servers.sh", "lmcache": "servers.sh",
    "mooncake_master": "servers.sh", "python3": "python3.sh", "python": "python3.sh", "mpirun": "skip-options.sh",
    "numactl": "skip-options.sh", "sudo": "skip-options.sh", "sleep": "sleep.sh", "git": "git.sh",
    "pip": "nothing.sh", "pip3": "nothing.sh", "uv": "nothing.sh", "lm_eval": "nothing.sh", "aiperf": "aiperf.sh",
    "enroot": "enroot.sh", "unsquashfs": "unsquashfs.sh", "sbcast": "sbcast.sh", "hostname": "hostname.sh",
    "ip": "ip.sh", "ibv_devinfo": "ibv_devinfo.sh", "pd-sidecar": "servers.sh", "epp": "servers.sh",
    "envoy": "servers.sh", "curl": "curl.sh", "ps": "ps.sh",
}
_VENDOR = {"nvidia": {"nvidia-smi": "nvidia-smi.sh"}, "amd": {"amd-smi": "amd-smi.sh", "rocm-smi": "rocm-smi.sh"}}
# The RDMA devices of a node: the names runners/launch_mi355x-amds.sh gives MI355X nodes' NICs, ConnectX ones.
_RDMA = {"amd": ",".join(f"rdma{i}" for i in range(8)), "nvidia": ",".join(f"mlx5_{i}" for i in range(8))}
_LIBRARIES = ("slurm-lib.sh", "venv-lib.sh")  # sourced by shims from lib/

_HEAD = """#!/bin/bash
# Stand-in for {name} (tests/standins of ci-tools): records this call under ../log, then runs shims/{body}.
_standin_path=${{BASH_SOURCE[0]}}
[[ "$_standin_path" == /* ]] || _standin_path=$PWD/$_standin_path
_standin_root=${{_standin_path%/bin/*}}
_standin_call="$_standin_root/log/${{EPOCHREALTIME/./}}-$$-{name}"
# Recorded with builtins only (no process started): argv and environ NUL-separated, then cwd, last (the marker
# that the record is complete).
mapfile -d '' _standin_env < /proc/$$/environ
printf '%s\\0' "$0" "$@" > "$_standin_call.argv"
printf '%s\\0' "${{_standin_env[@]}}" > "$_standin_call.environ"
printf '%s' "$PWD" > "$_standin_call.cwd"
unset _standin_env
_standin_python={python}
_standin_image_python={image_python}
_standin_sleep={sleep}
_standin_git={git}
_standin_hostname={hostname}
_standin_ip={ip}
_standin_curl={curl}
_standin_ps={ps}
"""


@lru_cache(maxsize=1)
def _programs() -> dict[str, tuple[bytes, bytes | None]]:
    """Each Python program's source and its compiled module, made once per process.

    An installation is made per job: without its bytecode, every stand-in server and client would compile
    its modules again (most of the CPU time of a job).  The bytecode is unchecked (hash-based): it never
    depends on the copy's modification time.  main.py runs as a script, so it is never imported.
    """
    out: dict[str, tuple[bytes, bytes | None]] = {}
    with tempfile.TemporaryDirectory(prefix="standin-pyc-") as scratch:
        for source in sorted(PROGRAMS.glob("*.py")):
            compiled = None
            if source.name != "main.py":
                target = Path(scratch) / (source.stem + ".pyc")
                py_compile.compile(str(source), cfile=str(target), doraise=True,
                                   invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
                compiled = target.read_bytes()
            out[source.name] = (source.read_bytes(), compiled)
    return out


def _real(program: str) -> str:
    found = shutil.which(program)
    return os.path.realpath(found) if found else f"/usr/bin/{program}"


def install(dest: Path, *, vendor: str, gpus: int = 8, gpu_name: str | None = None) -> Path:
    """Write the stand-ins of a ``vendor`` ("nvidia" or "amd") node under ``dest`` and return ``dest``."""
    if vendor not in _VENDOR:
        raise ValueError(f"vendor must be one of {sorted(_VENDOR)}, not {vendor!r}")
    for sub in ("bin", "lib", "log", "state"):
        (dest / sub).mkdir(parents=True, exist_ok=True)
    for name, (source, compiled) in _programs().items():
        (dest / "lib" / name).write_bytes(source)
        if compiled is not None:
            cache = dest / "lib" / "__pycache__"
            cache.mkdir(exist_ok=True)
            (cache / f"{Path(name).stem}.{sys.implementation.cache_tag}.pyc").write_bytes(compiled)
    (dest / "lib" / "image").mkdir(exist_ok=True)
    shutil.copyfile(PROGRAMS / "image" / "sitecustomize.py", dest / "lib" / "image" / "sitecustomize.py")
    for library in _LIBRARIES:
        shutil.copyfile(SHIMS / library, dest / "lib" / library)
    head = {"python": shlex.quote(INTERPRETER), "image_python": shlex.quote(IMAGE_PYTHON), "sleep": shlex.quote(_real("sleep")), "git": shlex.quote(_real("git")),
            "hostname": shlex.quote(_real("hostname")), "ip": shlex.quote(_real("ip")),
            "curl": shlex.quote(_real("curl")), "ps": shlex.quote(_real("ps"))}
    for name, body in {**_COMMON, **_VENDOR[vendor]}.items():
        shim = dest / "bin" / name
        shim.write_text(_HEAD.format(name=name, body=body, **head) + (SHIMS / body).read_text())
        shim.chmod(0o755)
    name = gpu_name or ("NVIDIA B200" if vendor == "nvidia" else "AMD Instinct MI355X")
    (dest / "state" / "node.env").write_text(
        f"VENDOR={vendor}\nGPUS={int(gpus)}\nGPU_NAME={shlex.quote(name)}\nRDMA={_RDMA[vendor]}\n")
    return dest
