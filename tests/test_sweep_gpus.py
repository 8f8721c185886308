"""The runner's GPUs as nvidia-smi, amd-smi and rocm-smi list them, and a job refused on GPUs that do not fit."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "fixtures" / "sweep"))

from sweeplib import make_repo, run_job_here  # noqa: E402

from ci_tools.results.record import load as load_record  # noqa: E402
from ci_tools.sweep.gpus import Inventory, inventory, label_gpu, mismatch  # noqa: E402

NVIDIA_Q = """
==============NVSMI LOG==============

Timestamp                                 : Fri Dec  4 15:00:00 2026
Driver Version                            : 580.65.06
CUDA Version                              : 13.0

Attached GPUs                             : 2
GPU 00000000:18:00.0
    Product Name                          : NVIDIA H200
    Product Brand                         : NVIDIA
GPU 00000000:2A:00.0
    Product Name                          : NVIDIA H200
    Product Brand                         : NVIDIA
"""
AMD_LIST = json.dumps([{"gpu": i, "asic": {"market_name": "AMD Instinct MI355X"}, "driver": {"version": "6.14.14"}}
                       for i in range(8)])
AMD_WRAPPED = json.dumps({"gpu_data": [{"gpu": i, "asic": {"market_name": "AMD Instinct MI300X"}} for i in range(4)]})
ROCM = """============================ ROCm System Management Interface ============================
=========================================== Product Info ===========================================
GPU[0]		: Card Series: 		AMD Instinct MI325X
GPU[0]		: Card Model: 		0x74a5
GPU[1]		: Card Series: 		AMD Instinct MI325X
GPU[1]		: Card Model: 		0x74a5
====================================================================================================
"""


def _tools(tmp_path: Path, **outputs: str | None) -> dict[str, str]:
    """A PATH of stand-in GPU tools: each prints its text, or fails (None) as nvidia-smi does without a driver."""
    bin_dir = tmp_path / "gpu-bin"
    bin_dir.mkdir(exist_ok=True)
    for tool in ("nvidia-smi", "amd-smi", "rocm-smi"):
        text = outputs.get(tool.replace("-", "_"))
        data = bin_dir / f"{tool}.out"
        script = bin_dir / tool
        if text is None:
            script.write_text("#!/bin/sh\necho 'NVIDIA-SMI has failed because it could not communicate' >&2\nexit 9\n")
        else:
            data.write_text(text)
            script.write_text(f"#!/bin/sh\ncat '{data}'\n")
        script.chmod(0o755)
    return {"PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}


@pytest.mark.parametrize("outputs, expected", [
    ({"nvidia_smi": NVIDIA_Q}, ("nvidia", "NVIDIA H200", 2, "580.65.06", "nvidia-smi -q")),
    ({"amd_smi": AMD_LIST}, ("amd", "AMD Instinct MI355X", 8, "6.14.14", "amd-smi static --json")),
    ({"amd_smi": AMD_WRAPPED}, ("amd", "AMD Instinct MI300X", 4, "", "amd-smi static --json")),
    ({"rocm_smi": ROCM}, ("amd", "AMD Instinct MI325X", 2, "", "rocm-smi --showproductname")),
])
def test_each_vendor_tool_is_read(tmp_path: Path, outputs: dict[str, str], expected: tuple[object, ...]) -> None:
    found = inventory(_tools(tmp_path, **outputs))
    assert found is not None
    assert (found.vendor, found.model, found.count, found.driver, found.tool) == expected


def test_no_tool_answering_means_the_gpus_are_not_known(tmp_path: Path) -> None:
    assert inventory(_tools(tmp_path)) is None
    assert mismatch(None, "mi355x", 8) == ""


def _inv(model: str, count: int = 8) -> Inventory:
    return Inventory("nvidia", model, count, "", "nvidia-smi -q", "", (model,) * count)


@pytest.mark.parametrize("label, model, count, needed, problem", [
    ("mi355x", "AMD Instinct MI355X", 8, 4, ""),
    ("cluster:mi355x-amds", "AMD Instinct MI355X", 8, 8, ""),
    ("h100-multinode", "NVIDIA H100 80GB HBM3", 8, 8, ""),
    ("rtx6000pro", "NVIDIA RTX PRO 6000 Blackwell Server Edition", 8, 1, ""),
    ("b200", "NVIDIA GB200", 4, 4, "runner label `b200` wants B200 GPUs, the runner has NVIDIA GB200"),
    ("mi325x", "AMD Instinct MI300X", 8, 8, "runner label `mi325x` wants MI325X GPUs, the runner has AMD Instinct MI300X"),
    ("mi355x", "AMD Instinct MI355X", 4, 8, "the job needs 8 GPUs, the runner has 4"),
    ("lab-pool", "NVIDIA A10", 1, 1, ""),  # a pool name, not a GPU model: not checked
])
def test_a_runner_fits_a_job_by_count_and_model(label: str, model: str, count: int, needed: int, problem: str) -> None:
    assert mismatch(_inv(model, count), label, needed) == problem


def test_label_gpu() -> None:
    assert [label_gpu(x) for x in ("cluster:mi355x-amds", "h100-multinode", "b200", "mi355x-disagg")] == \
        ["mi355x", "h100", "b200", "mi355x"]


def test_a_job_on_gpus_that_do_not_fit_is_not_run_and_its_record_lists_them(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    env = {**{k: v for k, v in os.environ.items() if k != "RUNNER_NAME"}, **_tools(tmp_path, amd_smi=AMD_WRAPPED)}
    status = run_job_here(repo, "ok-fp8-mi355x-vllm", 8, base_env=env)
    assert status["status"] == "not-run"
    assert status["message"] == ("the runner's GPUs do not fit the job: the job needs 8 GPUs, the runner has 4; "
                                 "runner label `mi355x` wants MI355X GPUs, the runner has AMD Instinct MI300X")
    job_dir = repo / "out" / status["job-id"]
    record = load_record(job_dir / "record.json")
    assert (record.status.state, record.gpus.vendor, record.gpus.model, record.gpus.count) == \
        ("not-run", "amd", "AMD Instinct MI300X", 4)
    assert record.results == ()
    assert (job_dir / "gpu-inventory.txt").read_text() == f"$ amd-smi static --json\n{AMD_WRAPPED}"
