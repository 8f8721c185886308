"""Write raw client results by running InferenceX's own benchmark client against a simulated server.

The fixtures under ``tests/data/results/raw/`` are what
``utils/bench_serving/benchmark_serving.py --save-result`` writes: this
script runs that very file (``tests/data/inferencex-843c625``), with the
arguments ``benchmarks/benchmark_lib.sh``'s ``run_benchmark_serving`` passes,
so every field, its name, order and arithmetic (``calculate_metrics``,
``np.percentile``, the 90/99/99.9 percentiles) is InferenceX's.  Only what
needs a GPU is simulated:

- the server: the request function returns each request's TTFT, inter-token
  latencies and output length from a small performance model (latency grows
  with concurrency, lognormal noise, a chosen failure rate);
- the clock: ``time.perf_counter``/``time.time`` follow simulated time (the
  requests of a concurrency slot run one after another), so the duration and
  throughputs are those of the simulated run and the script takes seconds;
- the tokenizer: whitespace-separated token ids (prompt lengths exact);
- ``aiohttp``, ``transformers``, ``huggingface_hub``, ``tqdm``: stand-ins,
  never called for anything but the names imported.

Power telemetry (``gpu_metrics.csv``) is written in the two formats
``benchmark_lib.sh``'s ``start_gpu_monitor`` records (amd-smi watch CSV,
nvidia-smi ``--query-gpu`` CSV) around the benchmark window.  Agentic
results are InferenceX's ``process_agentic_result`` aggregates, written by
running that module over aiperf-format records (``profile_export.jsonl``).

Needs numpy (the client imports it); run with a Python that has it:
``python3 scripts/make_raw_results.py tests/data/results/raw``.
"""

from __future__ import annotations

import asyncio
import heapq
import json
import math
import os
import random
import runpy
import subprocess
import sys
import time
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
IX = ROOT / "tests" / "data" / "inferencex-843c625"
CLIENT_DIR = IX / "utils" / "bench_serving"
EPOCH = 1_785_880_000.0  # simulated wall-clock start (2026-08-04)


class _Tokenizer:
    """Token ids as decimal words: decode/encode round-trip exactly."""

    vocab_size = 32000

    def decode(self, ids: list[int], **_: Any) -> str:
        return " ".join(str(i) for i in ids)

    def encode(self, text: str, add_special_tokens: bool = False) -> list[int]:
        return [int(w) for w in text.split()]


def _stub_modules() -> None:
    class _Tqdm:
        def __init__(self, *a: Any, **k: Any) -> None: ...
        def update(self, n: int = 1) -> None: ...
        def close(self) -> None: ...

    class _Auto:
        @staticmethod
        def from_pretrained(*a: Any, **k: Any) -> _Tokenizer:
            return _Tokenizer()

    tqdm_asyncio = types.ModuleType("tqdm.asyncio")
    tqdm_asyncio.tqdm = _Tqdm  # type: ignore[attr-defined]
    tqdm_mod = types.ModuleType("tqdm")
    tqdm_mod.asyncio = tqdm_asyncio  # type: ignore[attr-defined]
    transformers = types.ModuleType("transformers")
    for name in ("PreTrainedTokenizer", "PreTrainedTokenizerFast", "PreTrainedTokenizerBase"):
        setattr(transformers, name, type(name, (), {}))
    transformers.AutoTokenizer = _Auto  # type: ignore[attr-defined]
    hub = types.ModuleType("huggingface_hub")
    hub_constants = types.ModuleType("huggingface_hub.constants")
    hub_constants.HF_HUB_OFFLINE = True  # type: ignore[attr-defined]
    hub.constants = hub_constants  # type: ignore[attr-defined]
    aiohttp = types.ModuleType("aiohttp")
    aiohttp.ClientTimeout = lambda **_: None  # type: ignore[attr-defined]
    sys.modules.update({"tqdm": tqdm_mod, "tqdm.asyncio": tqdm_asyncio, "transformers": transformers,
                        "aiohttp": aiohttp, "huggingface_hub": hub,
                        "huggingface_hub.constants": hub_constants})


@dataclass
class Server:
    """A simulated inference server: seconds per token and to first token at a concurrency."""

    conc: int
    isl: int
    tpot_s: float  # at concurrency 1
    tpot_growth: float  # relative slow-down per doubling of concurrency
    prefill_s_per_ktok: float
    noise: float = 0.03
    fail_rate: float = 0.0
    seed: int = 0
    rng: random.Random = field(init=False)

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)

    def request(self, prompt_len: int, output_len: int) -> tuple[bool, float, list[float]]:
        scale = (1 + self.tpot_growth) ** math.log2(max(self.conc, 1))
        tpot = self.tpot_s * scale * self.rng.lognormvariate(0, self.noise)
        ttft = (0.02 + self.prefill_s_per_ktok * prompt_len / 1000) * scale * self.rng.lognormvariate(0, self.noise)
        if self.rng.random() < self.fail_rate:
            return False, ttft, []
        itl = [tpot * self.rng.lognormvariate(0, self.noise / 2) for _ in range(max(output_len - 1, 0))]
        return True, ttft, itl


class Clock:
    """Simulated time: requests occupy one of ``slots`` lanes; reading the clock is a barrier."""

    def __init__(self, slots: int) -> None:
        self.lanes = [0.0] * slots
        self.now = 0.0

    def run(self, seconds: float) -> None:
        start = heapq.heappop(self.lanes)
        end = start + seconds
        heapq.heappush(self.lanes, end)
        self.now = max(self.now, end)

    def read(self) -> float:
        self.lanes = [self.now] * len(self.lanes)
        return self.now


def run_client(out_dir: Path, name: str, server: Server, *, model: str, backend: str, osl: int,
               num_prompts: int | None = None) -> dict[str, Any]:
    """Run benchmark_serving.py's main with run_benchmark_serving's arguments; returns the saved JSON."""
    _stub_modules()
    sys.path.insert(0, str(CLIENT_DIR))
    import importlib

    brf: Any = importlib.import_module("backend_request_func")  # InferenceX's module, its network stand-ins above

    clock = Clock(server.conc)

    async def simulated(request_func_input: Any, pbar: Any = None) -> Any:
        out = brf.RequestFuncOutput()
        out.prompt_len = request_func_input.prompt_len
        ok, ttft, itl = server.request(request_func_input.prompt_len, request_func_input.output_len)
        out.ttft = ttft
        if ok:
            out.success, out.itl = True, itl
            out.latency = ttft + sum(itl)
            out.output_tokens = request_func_input.output_len
        else:
            out.error = "simulated server error"
            out.latency = ttft
        clock.run(out.latency)
        if pbar is not None:
            pbar.update(1)
        return out

    brf.ASYNC_REQUEST_FUNCS[backend] = simulated
    real_perf, real_time = time.perf_counter, time.time
    time.perf_counter = clock.read
    time.time = lambda: EPOCH + clock.now
    out_dir.mkdir(parents=True, exist_ok=True)
    argv = [str(CLIENT_DIR / "benchmark_serving.py"), "--model", model, "--backend", backend,
            "--base-url", "http://0.0.0.0:8888", "--dataset-name", "random",
            "--random-input-len", str(server.isl), "--random-output-len", str(osl),
            "--random-range-ratio", "0.8", "--num-prompts", str(num_prompts or server.conc * 10),
            "--max-concurrency", str(server.conc), "--request-rate", "inf", "--ignore-eos",
            "--save-result", "--num-warmups", str(2 * server.conc),
            "--percentile-metrics", "ttft,tpot,itl,e2el", "--result-dir", str(out_dir),
            "--result-filename", f"{name}.json", "--random-num-workers", "1", "--seed", str(server.seed)]
    saved_argv = sys.argv
    sys.argv = argv
    try:
        runpy.run_path(argv[0], run_name="__main__")
    except SystemExit as exc:  # the client's own failure-rate gate fires after the result is saved
        print(f"{name}: client exited: {exc}", file=sys.stderr)
    finally:
        sys.argv = saved_argv
        time.perf_counter, time.time = real_perf, real_time
        sys.path.remove(str(CLIENT_DIR))
    path = out_dir / f"{name}.json"
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    data["date"] = "20260804-120000"  # the client stamps the local time; fixed so that reruns are identical
    path.write_text(json.dumps(data), encoding="utf-8")
    return data


def power_csv(path: Path, raw: dict[str, Any], *, gpus: int, vendor: str, watts: float, seed: int,
              gap_at: float | None = None) -> None:
    """A telemetry stream bracketing the benchmark window, one sample a second per GPU."""
    rng = random.Random(seed)
    start = math.floor(raw["benchmark_start_time_unix"]) - 3
    end = math.ceil(raw["benchmark_end_time_unix"]) + 3
    if vendor == "amd":
        lines = ["timestamp,gpu,socket_power"]
        for t in range(int(start), int(end) + 1):
            if gap_at is not None and gap_at <= t - start < gap_at + 5:
                continue
            lines += [f"{t},{g},{round(watts * rng.uniform(0.9, 1.1))}" for g in range(gpus)]
    else:
        lines = ["timestamp, index, power.draw [W], temperature.gpu, clocks.current.sm [MHz], "
                 "clocks.current.memory [MHz], utilization.gpu [%], utilization.memory [%]"]
        for t in range(int(start), int(end) + 1):
            stamp = time.strftime("%Y/%m/%d %H:%M:%S", time.localtime(t)) + ".123"
            lines += [f"{stamp}, {g}, {watts * rng.uniform(0.9, 1.1):.2f} W, 61, 1980 MHz, 2619 MHz, 97 %, 41 %"
                      for g in range(gpus)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def agentic_result(out_dir: Path, name: str, env: dict[str, str], *, conc: int, seed: int,
                   requests: int = 40) -> None:
    """aiperf-format records run through InferenceX's process_agentic_result; keeps only its aggregate."""
    rng = random.Random(seed)
    work = out_dir / f"_{name}_work"
    artifacts = work / "results" / "aiperf_artifacts"
    artifacts.mkdir(parents=True, exist_ok=True)
    lines = []
    t = 1_785_880_000_000_000_000
    for i in range(requests):
        isl, osl = rng.randint(20_000, 60_000), rng.randint(200, 1200)
        itl_ms = 12.0 * (1.15 ** math.log2(conc)) * rng.lognormvariate(0, 0.05)
        ttft_ms = 400.0 * rng.lognormvariate(0, 0.1)
        latency = ttft_ms + itl_ms * (osl - 1)
        start = t + i * int(latency * 1e6 / conc)
        lines.append(json.dumps({
            "metadata": {"x_request_id": f"r{i}", "conversation_id": f"c{i % 7}", "turn_index": i // 7,
                         "request_start_ns": start, "request_end_ns": start + int(latency * 1e6),
                         "benchmark_phase": "profiling", "was_cancelled": False},
            "metrics": {"time_to_first_token": {"value": ttft_ms, "unit": "ms"},
                        "request_latency": {"value": latency, "unit": "ms"},
                        "inter_token_latency": {"value": itl_ms, "unit": "ms"},
                        "input_sequence_length": {"value": isl, "unit": "tokens"},
                        "output_sequence_length": {"value": osl, "unit": "tokens"},
                        "output_token_count": {"value": osl, "unit": "tokens"}},
            "error": None}))
    (artifacts / "profile_export.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    run_env = {**os.environ, **env, "RESULT_FILENAME": name, "RESULT_DIR": str(work / "results"),
               "AGENTIC_OUTPUT_DIR": str(out_dir), "PYTHONPATH": str(IX)}
    proc = subprocess.run([sys.executable, "-m", "utils.agentic.aggregation.process_agentic_result"],
                   cwd=IX, env=run_env, capture_output=True, text=True)
    if proc.returncode:
        raise SystemExit(f"process_agentic_result failed: {proc.stderr}")
    for p in sorted(work.rglob("*"), reverse=True):
        p.unlink() if p.is_file() else p.rmdir()
    work.rmdir()


def main() -> int:
    from fixture_cases import CASES  # noqa: E402  (beside this script: the cases and their provenance)

    out = Path(sys.argv[1]).resolve()
    out.mkdir(parents=True, exist_ok=True)
    manifest = []
    for case in CASES:
        case_dir = out / case["name"]
        case_dir.mkdir(exist_ok=True)
        env = case["env"]
        if case.get("agentic"):
            agentic_result(case_dir, env["RESULT_FILENAME"], env, conc=case["conc"], seed=case["seed"])
        else:
            server = Server(conc=case["conc"], isl=int(env["ISL"]), seed=case["seed"], **case["server"])
            raw = run_client(case_dir, env["RESULT_FILENAME"], server, model=case["model"],
                             backend=case.get("backend", "vllm"), osl=int(env["OSL"]))
            if case.get("power"):
                power_csv(case_dir / "gpu_metrics.csv", raw, seed=case["seed"], **case["power"])
        (case_dir / "env.json").write_text(json.dumps(env, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        manifest.append({"name": case["name"], "what": case["what"], "from": case["from"]})
    (out / "MANIFEST.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    sys.exit(main())
