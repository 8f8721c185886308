"""The raw-result fixtures ``make_raw_results.py`` writes: each case's job, environment and simulated server.

Environments are what InferenceX's workflow templates give ``utils/process_result.py``
(``benchmark-tmpl.yml``'s env block and ``RESULT_FILENAME_BASE``,
``benchmark-multinode-tmpl.yml``'s per-file ``PREFILL_GPUS``/``DECODE_GPUS``),
for jobs of ``ci-tools matrix`` on ``tests/data/inferencex-843c625``.
"""

from __future__ import annotations

from typing import Any

FP = "0f3c" * 16  # a recipe fingerprint, as the template exports it


def _single(config: str, *, runner: str, node: str, model_prefix: str, precision: str, framework: str, image: str,
            isl: int, osl: int, tp: int, ep: int = 1, dpa: bool = False, spec: str = "none", conc: int,
            pp: int = 1, dcp: int = 1, pcp: int = 1, exp: str) -> dict[str, str]:
    name = (f"{exp}_{precision}_{framework}_tp{tp}-pp{pp}-dcp{dcp}-pcp{pcp}-ep{ep}-dpa{str(dpa).lower()}"
            f"_disagg-false_spec-{spec}_conc{conc}_{node}")
    return {"RUNNER_TYPE": runner, "FRAMEWORK": framework, "PRECISION": precision, "SPEC_DECODING": spec,
            "RESULT_FILENAME": name, "ISL": str(isl), "OSL": str(osl), "DISAGG": "false",
            "MODEL_PREFIX": model_prefix, "IMAGE": image, "TP": str(tp), "EP_SIZE": str(ep),
            "DP_ATTENTION": str(dpa).lower(), "PP_SIZE": str(pp), "DCP_SIZE": str(dcp), "PCP_SIZE": str(pcp),
            "RECIPE_FINGERPRINT": FP, "CONFIG_KEY": config, "CONC": str(conc)}


def _multi(config: str, *, runner: str, model_prefix: str, precision: str, framework: str, image: str,
           isl: int, osl: int, conc: int, prefill: tuple[int, int, int, bool], decode: tuple[int, int, int, bool],
           spec: str = "none", exp: str, hardware: str = "") -> dict[str, str]:
    pw, ptp, pep, pdpa = prefill
    dw, dtp, dep, ddpa = decode
    pg, dg = pw * ptp, dw * dtp
    base = f"{exp}_{precision}_{framework}_disagg-true_spec-{spec}"
    env = {"RUNNER_TYPE": runner, "FRAMEWORK": framework, "PRECISION": precision, "SPEC_DECODING": spec,
           "RESULT_FILENAME": f"{base}_concurrency_{conc}_req_rate_inf_gpus_{pg + dg}_ctx_{pg}_gen_{dg}",
           "ISL": str(isl), "OSL": str(osl), "DISAGG": "true" if dg else "false", "MODEL_PREFIX": model_prefix,
           "IMAGE": image, "IS_MULTINODE": "true", "PREFILL_GPUS": str(pg), "DECODE_GPUS": str(dg),
           "PREFILL_NUM_WORKERS": str(pw), "PREFILL_TP": str(ptp), "PREFILL_EP": str(pep),
           "PREFILL_DP_ATTN": str(pdpa).lower(), "DECODE_NUM_WORKERS": str(dw), "DECODE_TP": str(dtp),
           "DECODE_EP": str(dep), "DECODE_DP_ATTN": str(ddpa).lower(), "RECIPE_FINGERPRINT": FP,
           "CONFIG_KEY": config, "CONC": str(conc)}
    if hardware:
        env["PREFILL_HARDWARE"] = env["DECODE_HARDWARE"] = hardware
    return env


DSR1_MI355X: dict[str, Any] = dict(runner="mi355x", node="mi355x-amds_03", model_prefix="dsr1", precision="fp4", framework="sglang",
                   image="lmsysorg/sglang:v0.5.12-rocm700-mi35x")
DSR1_MI355X_MTP: dict[str, Any] = dict(DSR1_MI355X, framework="atom", image="rocm/atom:rocm7.2.1-ubuntu24.04-pytorch2.9-atom0.1.2")
B200_TRT: dict[str, Any] = dict(runner="b200-trt", node="b200-nvd_11", model_prefix="dsv4", precision="fp4", framework="trt",
                image="nvcr.io/nvidia/tensorrt-llm/release:1.3.0rc10")
QWEN_DISAGG: dict[str, Any] = dict(runner="mi355x-disagg", model_prefix="qwen3.5", precision="fp8", framework="sglang-disagg",
                   image="lmsysorg/sglang:v0.5.16-rocm720-mi35x")
GB200: dict[str, Any] = dict(runner="gb200", model_prefix="dsr1", precision="fp4", framework="dynamo-trt",
             image="nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:0.8.1")

AMD = "amd"
SIM = "the real benchmark_serving.py against the simulated server (make_raw_results.py)"
SIM_POWER = SIM + ", plus a telemetry CSV as start_gpu_monitor records it"
SERVER: dict[str, Any] = dict(tpot_s=0.006, tpot_growth=0.22, prefill_s_per_ktok=0.03)


def _fixed(name: str, env: dict[str, str], conc: int, seed: int, what: str, *, model: str,
           server: dict[str, Any] | None = None, power: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"name": name, "env": env, "conc": conc, "seed": seed, "what": what, "model": model,
            "server": server or SERVER, "power": power, "from": SIM_POWER if power else SIM}


DSR1 = "amd/DeepSeek-R1-0528-MXFP4-Preview"
CASES: list[dict[str, Any]] = []
for i, conc in enumerate((4, 8, 16, 32, 64)):
    CASES.append(_fixed(f"dsr1-fp4-mi355x-sglang-8k1k-c{conc}",
                        _single("dsr1-fp4-mi355x-sglang", **DSR1_MI355X, isl=8192, osl=1024, tp=4, conc=conc,
                                exp="dsr1_8k1k"),
                        conc, 100 + i, f"single-node 8k1k TP4 conc {conc}" + (", power on (amd-smi)" if i % 2 == 0 else ", power off"),
                        model=DSR1, power={"gpus": 4, "vendor": AMD, "watts": 900.0} if i % 2 == 0 else None))
for i, conc in enumerate((4, 32, 128)):
    CASES.append(_fixed(f"dsr1-fp4-mi355x-sglang-1k1k-tp8-c{conc}",
                        _single("dsr1-fp4-mi355x-sglang", **DSR1_MI355X, isl=1024, osl=1024, tp=8, conc=conc,
                                exp="dsr1_1k1k"),
                        conc, 200 + i, f"single-node 1k1k TP8 conc {conc}, power on", model=DSR1,
                        power={"gpus": 8, "vendor": AMD, "watts": 750.0}))
for i, conc in enumerate((8, 64)):
    CASES.append(_fixed(f"dsr1-fp4-mi355x-atom-mtp-8k1k-c{conc}",
                        _single("dsr1-fp4-mi355x-atom-mtp", **DSR1_MI355X_MTP, isl=8192, osl=1024, tp=8, ep=8,
                                dpa=True, spec="mtp", conc=conc, exp="dsr1_8k1k"),
                        conc, 300 + i, f"single-node MTP, EP8 with DP attention, conc {conc}" + (", power on" if i == 0 else ", power off"),
                        model=DSR1, server=dict(SERVER, tpot_s=0.0045),
                        power={"gpus": 8, "vendor": AMD, "watts": 820.0} if i == 0 else None))
CASES.append(_fixed("dsv4-fp4-b200-trt-8k1k-c32",
                    _single("dsv4-fp4-b200-trt", **B200_TRT, isl=8192, osl=1024, tp=4, pp=2, conc=32, exp="dsv4_8k1k"),
                    32, 400, "single-node TP4 x PP2 (8 GPUs) on NVIDIA, power on (nvidia-smi format)",
                    model="deepseek-ai/DeepSeek-V4", power={"gpus": 8, "vendor": "nvidia", "watts": 650.0}))
CASES.append(_fixed("dsr1-fp4-mi355x-sglang-8k1k-c16-failures",
                    _single("dsr1-fp4-mi355x-sglang", **DSR1_MI355X, isl=8192, osl=1024, tp=4, conc=16, exp="dsr1_8k1k"),
                    16, 500, "8 % of requests fail: the client's own 5 % gate exits 1 after saving", model=DSR1,
                    server=dict(SERVER, fail_rate=0.08)))
CASES.append(_fixed("dsr1-fp4-mi355x-sglang-1k1k-c8-few-failures",
                    _single("dsr1-fp4-mi355x-sglang", **DSR1_MI355X, isl=1024, osl=1024, tp=8, conc=8, exp="dsr1_1k1k"),
                    8, 501, "2 % of requests fail (under the client's gate), power on", model=DSR1,
                    server=dict(SERVER, fail_rate=0.02), power={"gpus": 8, "vendor": AMD, "watts": 700.0}))
CASES.append(_fixed("dsr1-fp4-mi355x-sglang-8k1k-c8-power-gap",
                    _single("dsr1-fp4-mi355x-sglang", **DSR1_MI355X, isl=8192, osl=1024, tp=4, conc=8, exp="dsr1_8k1k"),
                    8, 502, "power telemetry with a 5 s hole inside the window: power_valid 0", model=DSR1,
                    power={"gpus": 4, "vendor": AMD, "watts": 900.0, "gap_at": 20.0}))
CASES.append(_fixed("dsr1-fp4-mi355x-sglang-8k1k-c4-power-gpus",
                    _single("dsr1-fp4-mi355x-sglang", **DSR1_MI355X, isl=8192, osl=1024, tp=4, conc=4, exp="dsr1_8k1k"),
                    4, 503, "telemetry of 8 GPUs for a TP4 job: expected_gpu_count_mismatch", model=DSR1,
                    power={"gpus": 8, "vendor": AMD, "watts": 900.0}))
QWEN = "Qwen/Qwen3.5-397B-A17B-FP8"
for i, conc in enumerate((8, 32, 128)):
    CASES.append({"name": f"qwen3.5-fp8-mi355x-sglang-disagg-c{conc}",
                  "env": _multi("qwen3.5-fp8-mi355x-sglang-disagg", **QWEN_DISAGG, isl=8192, osl=1024, conc=conc,
                                prefill=(1, 4, 1, False), decode=(1, 8, 1, False), exp="qwen3.5_8k1k"),
                  "conc": conc, "seed": 600 + i, "model": QWEN, "server": dict(SERVER, tpot_s=0.005),
                  "what": f"multinode disagg P1xTP4 D1xTP8 conc {conc} (no power bundle)", "from": SIM})
CASES.append({"name": "dsr1-fp4-gb200-dynamo-trt-mtp-c256",
              "env": _multi("dsr1-fp4-gb200-dynamo-trt-mtp", **GB200, isl=1024, osl=1024, conc=256,
                            prefill=(5, 4, 4, True), decode=(1, 8, 8, True), spec="mtp", exp="dsr1_1k1k",
                            hardware="gb200"),
              "conc": 256, "seed": 700, "model": "deepseek-ai/DeepSeek-R1-0528", "server": dict(SERVER, tpot_s=0.003),
              "what": "multinode disagg with MTP, DP attention, prefill/decode hardware named", "from": SIM})
CASES.append({"name": "dsr1-fp4-gb200-dynamo-trt-agg-c64",
              "env": _multi("dsr1-fp4-gb200-dynamo-trt", **GB200, isl=8192, osl=1024, conc=64,
                            prefill=(2, 4, 4, False), decode=(0, 8, 8, False), exp="dsr1_8k1k"),
              "conc": 64, "seed": 701, "model": "deepseek-ai/DeepSeek-R1-0528", "server": SERVER,
              "what": "multinode aggregated (decode GPUs 0: the template's non-disagg path)", "from": SIM})

AGENTIC_FROM = "InferenceX's process_agentic_result over aiperf-format records (make_raw_results.py)"


def _agentic(config: str, conc: int, seed: int, *, tp: int, ep: int, spec: str, runner: str,
             kv: str = "none") -> dict[str, Any]:
    env = {"RUNNER_TYPE": runner, "FRAMEWORK": "sglang", "PRECISION": "fp8", "SPEC_DECODING": spec,
           "RESULT_FILENAME": f"{config}_conc{conc}", "MODEL_PREFIX": "qwen3.5", "MODEL": QWEN,
           "IMAGE": "lmsysorg/sglang:v0.5.16-rocm720-mi30x", "TP": str(tp), "EP_SIZE": str(ep),
           "DP_ATTENTION": "false", "CONC": str(conc), "KV_OFFLOADING": kv, "DISAGG": "false",
           "TOTAL_CPU_DRAM_GB": "0", "RECIPE_FINGERPRINT": FP, "CONFIG_KEY": config, "SCENARIO_TYPE": "agentic-coding"}
    return {"name": f"{config}-c{conc}", "env": env, "conc": conc, "seed": seed, "agentic": True,
            "what": f"agentic-coding TP{tp}/EP{ep} spec {spec} conc {conc}", "from": AGENTIC_FROM}


CASES += [_agentic("qwen3.5-fp8-mi325x-sglang-agentic-mtp", c, 800 + c, tp=2, ep=2, spec="mtp",
                   runner="cluster:mi325x-amds") for c in (1, 4, 16)]
