"""The runner's GPUs, as its vendor's tools list them, and whether they fit a job.

The first tool present answers: ``nvidia-smi -q`` (driver, ``Attached GPUs``,
each ``Product Name``), ``amd-smi static --json`` (each ``asic.market_name``;
``{"gpu_data": [...]}`` or a bare list, by version), ``rocm-smi
--showproductname`` (``GPU[i] : Card Series: ...``).  None answering means
the GPUs are not known here (a Slurm login node, a laptop): nothing is
checked.  What the tool printed is kept beside the job's record.

A single-node job fits when the runner has at least ``GPU_COUNT`` GPUs and
their product name carries the GPU of the job's runner label (``mi355x`` in
``AMD Instinct MI355X``, ``h100`` in ``NVIDIA H100 80GB HBM3``, not ``b200``
in ``NVIDIA GB200``): each letter run and digit run of the label's GPU is a
run of the product name.  A multinode job's GPUs are on the nodes its
launcher allocates, not on the runner: it is not checked.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from dataclasses import dataclass
from typing import Any, Mapping

_TIMEOUT = 60


@dataclass(frozen=True)
class Inventory:
    vendor: str  # nvidia | amd
    model: str  # the product name (the first GPU's, when they differ: `models` has all)
    count: int
    driver: str
    tool: str  # the command that answered
    output: str  # what it printed
    models: tuple[str, ...] = ()

    def describe(self) -> str:
        return f"{self.count} x {self.model} ({self.tool})"


def _run(argv: list[str], path: str | None) -> str | None:
    program = shutil.which(argv[0], path=path)
    if program is None:
        return None
    try:
        proc = subprocess.run([program, *argv[1:]], capture_output=True, text=True, timeout=_TIMEOUT,
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return proc.stdout if proc.returncode == 0 else None


def _nvidia(text: str) -> tuple[list[str], str]:
    names = re.findall(r"^\s*Product Name\s*:\s*(.+?)\s*$", text, re.M)
    driver = re.search(r"^\s*Driver Version\s*:\s*(\S+)", text, re.M)
    attached = re.search(r"^\s*Attached GPUs\s*:\s*(\d+)", text, re.M)
    if attached and not names:
        names = ["NVIDIA GPU"] * int(attached.group(1))
    return names, driver.group(1) if driver else ""


def _amd_json(text: str) -> tuple[list[str], str]:
    try:
        data: Any = json.loads(text)
    except ValueError:
        return [], ""
    gpus = data.get("gpu_data") if isinstance(data, dict) else data
    names: list[str] = []
    driver = ""
    for gpu in gpus if isinstance(gpus, list) else ():
        if not isinstance(gpu, dict):
            continue
        asic = gpu.get("asic")
        names.append(str((asic.get("market_name") if isinstance(asic, dict) else None) or "AMD GPU"))
        found = gpu.get("driver")
        if not driver and isinstance(found, dict):
            driver = str(found.get("version") or "")
    return names, driver


def _rocm(text: str) -> tuple[list[str], str]:
    found: dict[str, str] = {}
    for index, name in re.findall(r"^GPU\[(\d+)\]\s*:\s*Card Series:\s*(.+?)\s*$", text, re.M):
        found.setdefault(index, name)
    return list(found.values()), ""


_TOOLS: tuple[tuple[str, list[str], Any], ...] = (
    ("nvidia", ["nvidia-smi", "-q"], _nvidia),
    ("amd", ["amd-smi", "static", "--json"], _amd_json),
    ("amd", ["rocm-smi", "--showproductname"], _rocm),
)


def inventory(env: Mapping[str, str]) -> Inventory | None:
    """The GPUs the first tool on the job's PATH lists; None when no tool answers with a GPU."""
    for vendor, argv, parse in _TOOLS:
        output = _run(argv, env.get("PATH"))
        if output is None:
            continue
        names, driver = parse(output)
        if names:
            return Inventory(vendor, names[0], len(names), driver, " ".join(argv), output, tuple(names))
    return None


def _runs(text: str) -> list[str]:
    return re.findall(r"[a-z]+|[0-9]+", text.lower())


def label_gpu(runner_label: str) -> str:
    """The GPU a runner label names: ``cluster:mi355x-amds`` -> ``mi355x``, ``h100-multinode`` -> ``h100``."""
    return runner_label.removeprefix("cluster:").split("-", 1)[0].lower()


def mismatch(found: Inventory | None, runner_label: str, gpus_needed: int | None) -> str:
    """Why the runner's GPUs cannot run the job ("" when they can, or are not known)."""
    if found is None:
        return ""
    problems = []
    if gpus_needed is not None and found.count < gpus_needed:
        problems.append(f"the job needs {gpus_needed} GPUs, the runner has {found.count}")
    gpu = label_gpu(runner_label)
    if re.search(r"\d", gpu):  # a label naming a GPU model (not a free-form pool name)
        wanted = set(_runs(gpu))
        other = sorted({m for m in found.models or (found.model,) if not wanted <= set(_runs(m))})
        if other:
            problems.append(f"runner label `{runner_label}` wants {gpu.upper()} GPUs, the runner has "
                            + ", ".join(other))
    return "; ".join(problems)
