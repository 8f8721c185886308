"""Real InferenceX jobs evaluated with the environment the workflow gives them (tests/real_jobs.py).

The expected command lines below were written by reading each recipe for the
job's values (TP, EP, DP attention, concurrency, sequence lengths, KV
offloading), not by running ci-tools: every flag in order, its value, and the
keys of JSON/YAML values with the line that writes them.  ``UNKNOWN`` marks a
value the recipe takes from the runner (``$PORT``, ``$MODEL_PATH``), which no
evaluation before the job runs can know.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from ci_tools.shell.model import RecipeEval, Value
from ci_tools.shell.server import UNKNOWN_FLAG
from ci_tools.evaluation.stats import NO_RECIPE, not_reached

from real_jobs import RealJob, real_evaluations

ON = "(on)"  # a flag without a value
UNKNOWN = "(unknown)"  # a value known only when the job runs


def _sizes(*values: int) -> str:
    return "[" + ",".join(str(v) for v in values) + "]"


@dataclass(frozen=True)
class Case:
    key: str
    recipe: str
    tp: int
    ep: int
    dpa: bool
    conc: int
    flags: list[tuple[str, str]]
    # "<flag>.<key>" -> (text, line that writes it); every key of a structured flag is listed.
    keys: dict[str, tuple[str, int]] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)
    no_env: tuple[str, ...] = ()
    isl: int | None = None
    kv: str | None = None  # kv-offloading for agentic jobs
    # flag -> line of the recipe (or library) that sets its value
    lines: dict[str, int] = field(default_factory=dict)


def _dsv4_trt_flags(batch: int, ep: int) -> list[tuple[str, str]]:
    """dsv4_fp4_b200_trt.sh at TP8, ISL 8192 + OSL 1024: max_seq_len 9472, max_num_tokens 8192 + 256."""
    return [("--host", "0.0.0.0"), ("--port", UNKNOWN), ("--trust_remote_code", ON), ("--backend", "pytorch"),
            ("--max_batch_size", str(batch)), ("--max_seq_len", "9472"), ("--max_num_tokens", "8448"),
            ("--tp_size", "8"), ("--ep_size", str(ep)), ("--custom_tokenizer", "deepseek_v4"),
            ("--config", "dsv4-fp4-trt.yml")]


def _dsv4_trt_keys(batch: int, dpa: bool) -> dict[str, tuple[str, int]]:
    """The YAML written at lines 88-104; DP attention adds the block of lines 83-85 and lowers the KV fraction."""
    keys = {"--config.cuda_graph_config.enable_padding": ("true", 90),
            "--config.cuda_graph_config.max_batch_size": (str(batch), 91),
            "--config.enable_attention_dp": ("true" if dpa else "false", 92),
            "--config.print_iter_log": ("true", 93),
            "--config.kv_cache_config.tokens_per_block": ("128", 95),
            "--config.kv_cache_config.dtype": ("fp8", 96),
            "--config.kv_cache_config.free_gpu_memory_fraction": ("0.7" if dpa else "0.9", 97),
            "--config.kv_cache_config.enable_block_reuse": ("false", 98),
            "--config.stream_interval": ("100", 99),
            "--config.num_postprocess_workers": ("4", 100),
            "--config.moe_config.backend": ("TRTLLM", 102),
            "--config.moe_config.use_low_precision_moe_combine": ("true", 103)}
    if dpa:
        keys.update({"--config.attention_dp_config.batching_wait_iters": ("30", 84),
                     "--config.attention_dp_config.enable_balance": ("true", 85)})
    return keys


def _qwen_b200_mtp_flags(conc: int, recv_interval: int) -> list[tuple[str, str]]:
    """qwen3.5_fp4_b200_mtp.sh at TP2/EP1, ISL 8192 + OSL 1024 (context 8192 + 1024 + 20)."""
    model = "nvidia/Qwen3.5-397B-A17B-NVFP4-V2"
    return [("--model-path", model), ("--host", "0.0.0.0"), ("--port", UNKNOWN), ("--trust-remote-code", ON),
            ("--tensor-parallel-size", "2"), ("--data-parallel-size", "1"), ("--expert-parallel-size", "1"),
            ("--enable-symm-mem", ON), ("--disable-radix-cache", ON), ("--quantization", "modelopt_fp4"),
            ("--kv-cache-dtype", "fp8_e4m3"), ("--mamba-ssm-dtype", "bfloat16"), ("--attention-backend", "trtllm_mha"),
            ("--moe-runner-backend", "flashinfer_trtllm"), ("--cuda-graph-max-bs", str(conc)),
            ("--max-running-requests", str(conc)), ("--max-prefill-tokens", "16384"),
            ("--chunked-prefill-size", "16384"), ("--mem-fraction-static", "0.8"), ("--stream-interval", "50"),
            ("--scheduler-recv-interval", str(recv_interval)), ("--tokenizer-worker-num", "6"),
            ("--tokenizer-path", model), ("--speculative-algorithm", "EAGLE"), ("--speculative-num-steps", "3"),
            ("--speculative-eagle-topk", "1"), ("--speculative-num-draft-tokens", "4"), ("--context-length", "9236")]


FSL = "benchmarks/single_node/fixed_seq_len/"
AG = "benchmarks/single_node/agentic/"
DSV4 = "deepseek-ai/DeepSeek-V4-Pro"
DSV4_CAPTURE = "[1, 2, 4, 8, 16, 32, 48, 64, 128, 256, 512]"

CASES: dict[str, Case] = {
    # DP attention with EP1 at CONC >= 64 takes the TBO branch and caps max-num-seqs at CONC.
    "atom-mi355x-dpa-tbo": Case(
        "dsv4-fp4-mi355x-atom", FSL + "dsv4_fp4_mi355x_atom.sh", tp=4, ep=1, dpa=True, conc=64, isl=8192,
        flags=[("--model", DSV4), ("--server-port", UNKNOWN), ("-tp", "4"), ("--enable-dp-attention", ON),
               ("--enable-tbo", ON), ("--max-num-seqs", "64"), ("--kv_cache_dtype", "fp8"),
               ("--trust-remote-code", ON), ("--gpu-memory-utilization", "0.9"), ("--no-enable_prefix_caching", ON),
               ("--cudagraph-capture-sizes", DSV4_CAPTURE)],
        env={"GPU_MAX_HW_QUEUES": "5", "ATOM_DISABLE_MMAP": "true", "AITER_BF16_FP8_MOE_BOUND": "0",
             "ATOM_MOE_GU_ITLV": "1"},
        lines={"--gpu-memory-utilization": 61}),
    # The TP band at low concurrency: no DP attention, no max-num-seqs cap.
    "atom-mi355x-tp8-c4": Case(
        "dsv4-fp4-mi355x-atom", FSL + "dsv4_fp4_mi355x_atom.sh", tp=8, ep=1, dpa=False, conc=4, isl=8192,
        flags=[("--model", DSV4), ("--server-port", UNKNOWN), ("-tp", "8"), ("--kv_cache_dtype", "fp8"),
               ("--trust-remote-code", ON), ("--gpu-memory-utilization", "0.9"), ("--no-enable_prefix_caching", ON),
               ("--cudagraph-capture-sizes", DSV4_CAPTURE)],
        no_env=("GPU_MAX_HW_QUEUES",)),
    # TRT-LLM with a YAML file from a here-document; DP attention appends a block from a variable.
    "trt-b200-dsv4-dep": Case(
        "dsv4-fp4-b200-trt", FSL + "dsv4_fp4_b200_trt.sh", tp=8, ep=8, dpa=True, conc=256, isl=8192,
        flags=_dsv4_trt_flags(batch=256, ep=8), keys=_dsv4_trt_keys(batch=256, dpa=True),
        env={"TRTLLM_DSV4_USE_MPIRUN": "1", "NCCL_NVLS_ENABLE": "0"},
        lines={"--max_batch_size": 72}),
    "trt-b200-dsv4-tp8-c4": Case(
        "dsv4-fp4-b200-trt", FSL + "dsv4_fp4_b200_trt.sh", tp=8, ep=1, dpa=False, conc=4, isl=8192,
        flags=_dsv4_trt_flags(batch=16, ep=1), keys=_dsv4_trt_keys(batch=16, dpa=False)),
    # `sglang serve` with the DEP arguments array.
    "sglang-b200-dsv4-dep": Case(
        "dsv4-fp4-b200-sglang", FSL + "dsv4_fp4_b200.sh", tp=8, ep=8, dpa=True, conc=512, isl=8192,
        flags=[("--model-path", DSV4), ("--host", "0.0.0.0"), ("--port", UNKNOWN), ("--trust-remote-code", ON),
               ("--tp", "8"), ("--disable-radix-cache", ON), ("--max-running-requests", "4352"),
               ("--mem-fraction-static", "0.835"), ("--swa-full-tokens-ratio", "0.12"), ("--dp-size", "8"),
               ("--enable-dp-attention", ON), ("--moe-a2a-backend", "megamoe"), ("--cuda-graph-max-bs", "544"),
               ("--enable-mixed-chunk", ON), ("--chunked-prefill-size", "16384"),
               ("--max-prefill-tokens", "16384"), ("--tokenizer-worker-num", "8"), ("--stream-interval", "30"),
               ("--enable-prefill-delayer", ON)],
        env={"SGLANG_OPT_SWA_SPLIT_LEAF_ON_INSERT": "1", "SGLANG_CLIP_MAX_NEW_TOKENS_ESTIMATION": "8",
             "NCCL_MNNVL_ENABLE": "1", "SGLANG_MOONCAKE_CUSTOM_MEM_POOL": "True", "PYTHONNOUSERSITE": "1"},
        lines={"--mem-fraction-static": 73, "--swa-full-tokens-ratio": 75}),
    # The interpreter held in a variable ("$SGLANG_PYTHON" -m sglang.launch_server), HiCache over DRAM.
    "sglang-b300-hicache-dep": Case(
        "dsv4-fp4-b300-sglang-agentic-hicache-mtp", AG + "dsv4_fp4_b300_sglang_mtp.sh", tp=4, ep=4, dpa=True,
        conc=32, kv="dram",
        flags=[("--model-path", UNKNOWN), ("--served-model-name", DSV4), ("--host", "0.0.0.0"), ("--port", UNKNOWN),
               ("--trust-remote-code", ON), ("--tp", "4"), ("--dp", "4"), ("--tokenizer-worker-num", "4"),
               ("--enable-dp-attention", ON), ("--enable-dp-attention-local-control-broadcast", ON),
               ("--incremental-streaming-output", ON), ("--stream-interval", "20"), ("--dist-init-addr", UNKNOWN),
               ("--ep-size", "4"), ("--moe-runner-backend", "flashinfer_mxfp4"),
               ("--disable-flashinfer-autotune", ON), ("--mem-fraction-static", "0.95"),
               ("--swa-full-tokens-ratio", "0.1"), ("--max-running-requests", "64"), ("--cuda-graph-max-bs", "32"),
               ("--allow-auto-truncate", ON), ("--chunked-prefill-size", "16384"),
               ("--tool-call-parser", "deepseekv4"), ("--reasoning-parser", "deepseek-v4"),
               ("--chat-template", UNKNOWN), ("--watchdog-timeout", "1800"), ("--speculative-algorithm", "EAGLE"),
               ("--speculative-num-steps", "3"), ("--speculative-eagle-topk", "1"),
               ("--speculative-num-draft-tokens", "4"), ("--attention-backend", "compressed"),
               ("--page-size", "256"), ("--disable-shared-experts-fusion", ON), ("--enable-metrics", ON),
               ("--enable-cache-report", ON), ("--enable-hierarchical-cache", ON), ("--hicache-ratio", "8"),
               ("--hicache-write-policy", "write_back"), ("--hicache-io-backend", "direct"),
               ("--hicache-mem-layout", "page_first_direct"), ("--skip-server-warmup", ON)],
        env={"SGLANG_SIMULATE_ACC_LEN": "2.49", "SGLANG_ENABLE_UNIFIED_RADIX_TREE": "1",
             "AIPERF_HTTP_X_SMG_ROUTING_KEY_FROM_CORRELATION_ID": "true", "TORCH_CUDA_ARCH_LIST": "10.0"}),
    # TRT-LLM options file written in three parts (DP attention appends one).
    "trt-b200-dsr1-dep": Case(
        "dsr1-fp4-b200-trt", FSL + "dsr1_fp4_b200_trt.sh", tp=8, ep=8, dpa=True, conc=128, isl=8192,
        flags=[("--port", UNKNOWN), ("--trust_remote_code", ON), ("--backend", "pytorch"), ("--max_seq_len", "9472"),
               ("--max_num_tokens", "8384"), ("--tp_size", "8"), ("--ep_size", "8"),
               ("--extra_llm_api_options", "dsr1-fp4.yml")],
        keys={"--extra_llm_api_options.cuda_graph_config.enable_padding": ("true", 48),
              "--extra_llm_api_options.cuda_graph_config.max_batch_size": ("32", 49),
              "--extra_llm_api_options.enable_attention_dp": ("true", 50),
              "--extra_llm_api_options.print_iter_log": ("true", 51),
              "--extra_llm_api_options.kv_cache_config.dtype": ("fp8", 53),
              "--extra_llm_api_options.kv_cache_config.free_gpu_memory_fraction": ("0.8", 54),
              "--extra_llm_api_options.kv_cache_config.enable_block_reuse": ("false", 55),
              "--extra_llm_api_options.stream_interval": ("10", 56),
              "--extra_llm_api_options.moe_config.backend": ("CUTLASS", 58),
              "--extra_llm_api_options.attention_dp_config.batching_wait_iters": ("0", 64),
              "--extra_llm_api_options.attention_dp_config.enable_balance": ("true", 65),
              "--extra_llm_api_options.attention_dp_config.timeout_iters": ("60", 66)},
        lines={"--max_num_tokens": 77}),
    # JSON from printf with an unknown draft-model path: the other keys are still known.
    "vllm-b200-minimax-dram": Case(
        "minimaxm3-fp4-b200-vllm-agentic-mtp", AG + "minimaxm3_fp4_b200_mtp.sh", tp=4, ep=1, dpa=False, conc=20,
        kv="dram",
        flags=[("--served-model-name", "nvidia/MiniMax-M3-NVFP4"), ("--host", "0.0.0.0"),
               ("--port", UNKNOWN), ("--tensor-parallel-size", "4"), ("--gpu-memory-utilization", "0.9"),
               ("--block-size", "128"), ("--language-model-only", ON), ("--enable-prefix-caching", ON),
               ("--no-enable-flashinfer-autotune", ON), ("--reasoning-parser", "minimax_m3"),
               ("--tool-call-parser", "minimax_m3"), ("--enable-auto-tool-choice", ON),
               ("--default-chat-template-kwargs", '{"thinking_mode":"enabled"}'),
               ("--attention-config", '{"backend":"FLASHINFER","use_trtllm_attention":true,"indexer_kv_dtype":"fp8"}'),
               ("--kv-cache-dtype", "fp8"), ("--max-cudagraph-capture-size", "512"),
               ("--max-num-batched-tokens", "16384"), ("--stream-interval", "20"), ("--trust-remote-code", ON),
               ("--speculative-config", UNKNOWN),
               ("--kv-transfer-config", '{"kv_connector":"SimpleCPUOffloadConnector","kv_role":"kv_both",'
                                        f'"kv_connector_extra_config":{{"cpu_bytes_to_use":{1499 * 1024 ** 3},'
                                        '"lazy_offload":true}}')],
        keys={"--default-chat-template-kwargs.thinking_mode": ("enabled", 191),
              "--attention-config.backend": ("FLASHINFER", 192),
              "--attention-config.use_trtllm_attention": ("true", 192),
              "--attention-config.indexer_kv_dtype": ("fp8", 192),
              "--speculative-config.method": ("eagle3", 171),
              "--speculative-config.model": (UNKNOWN, 0),
              "--speculative-config.num_speculative_tokens": ("3", 171),
              "--speculative-config.attention_backend": ("FLASH_ATTN", 171),
              "--speculative-config.rejection_sample_method": ("synthetic", 171),
              "--speculative-config.synthetic_acceptance_length": ("2.78", 171),
              "--kv-transfer-config.kv_connector": ("SimpleCPUOffloadConnector", 133),
              "--kv-transfer-config.kv_role": ("kv_both", 133),
              "--kv-transfer-config.kv_connector_extra_config.cpu_bytes_to_use": (str(1499 * 1024 ** 3), 133),
              "--kv-transfer-config.kv_connector_extra_config.lazy_offload": ("true", 133)},
        env={"VLLM_USE_SIMPLE_KV_OFFLOAD": "1", "VLLM_FLASHINFER_ALLREDUCE_BACKEND": "trtllm"}),
    # Capture sizes from a C-style loop through printf | sort -n -u | paste; offload JSON from $(cat <<EOF).
    "vllm-b200-dsv4-dep-dram": Case(
        "dsv4-fp4-b200-vllm-agentic-mtp", AG + "dsv4_fp4_b200_vllm_mtp.sh", tp=8, ep=8, dpa=True, conc=64,
        kv="dram",
        flags=[("--served-model-name", DSV4), ("--host", "0.0.0.0"), ("--port", UNKNOWN),
               ("--trust-remote-code", ON), ("--kv-cache-dtype", "fp8"), ("--block-size", "256"),
               ("--max-model-len", "1048576"), ("--gpu-memory-utilization", "0.90"), ("--numa-bind", ON),
               ("--enable-cumem-allocator", ON), ("--no-enable-flashinfer-autotune", ON),
               ("--tokenizer-mode", "deepseek_v4"), ("--tool-call-parser", "deepseek_v4"),
               ("--enable-auto-tool-choice", ON), ("--reasoning-parser", "deepseek_v4"),
               ("--attention-config", '{"backend":"FLASHINFER_MLA_SPARSE_DSV4","use_prefill_query_quantization":true,'
                                      '"use_fp4_indexer_cache":true}'),
               ("--speculative-config", '{"method": "mtp", "num_speculative_tokens": 3, "rejection_sample_method": '
                                        '"synthetic", "synthetic_acceptance_length": 2.49}'),
               ("--no-disable-hybrid-kv-cache-manager", ON), ("--disable-uvicorn-access-log", ON),
               ("--compilation-config", '{"cudagraph_mode":"FULL_DECODE_ONLY","cudagraph_capture_sizes":'
                                        + _sizes(*range(4, 65, 4)) + ',"mode":0}'),
               ("--max-num-seqs", "16"), ("--tensor-parallel-size", "1"), ("--data-parallel-size", "8"),
               ("--enable-expert-parallel", ON), ("--enable-ep-weight-filter", ON),
               ("--moe-backend", "deep_gemm_amxf4_mega_moe"), ("--prefill-schedule-interval", "8"),
               ("--long-prefill-token-threshold", "512"), ("--max-num-batched-tokens", "8192"),
               ("--kv-transfer-config", "{\n  \"kv_connector\": \"SimpleCPUOffloadConnector\",\n"
                                        "  \"kv_role\": \"kv_both\",\n  \"kv_connector_extra_config\": {\n"
                                        f"    \"cpu_bytes_to_use_per_rank\": {2849 * 10 ** 9 // 8},\n"
                                        "    \"enable_cross_layers_blocks\": \"true\",\n"
                                        "    \"lazy_offload\": false\n  }\n}")],
        keys={"--attention-config.backend": ("FLASHINFER_MLA_SPARSE_DSV4", 302),
              "--attention-config.use_prefill_query_quantization": ("true", 302),
              "--attention-config.use_fp4_indexer_cache": ("true", 302),
              "--speculative-config.method": ("mtp", 258),
              "--speculative-config.num_speculative_tokens": ("3", 258),
              "--speculative-config.rejection_sample_method": ("synthetic", 258),
              "--speculative-config.synthetic_acceptance_length": ("2.49", 258),
              "--compilation-config.cudagraph_mode": ("FULL_DECODE_ONLY", 276),
              "--compilation-config.cudagraph_capture_sizes": (_sizes(*range(4, 65, 4)), 276),
              "--compilation-config.mode": ("0", 276),
              "--kv-transfer-config.kv_connector": ("SimpleCPUOffloadConnector", 130),
              "--kv-transfer-config.kv_role": ("kv_both", 131),
              "--kv-transfer-config.kv_connector_extra_config.cpu_bytes_to_use_per_rank": (str(2849 * 10 ** 9 // 8), 133),
              "--kv-transfer-config.kv_connector_extra_config.enable_cross_layers_blocks": ("true", 134),
              "--kv-transfer-config.kv_connector_extra_config.lazy_offload": ("false", 135)},
        env={"PYTORCH_ALLOC_CONF": "expandable_segments:True", "PYTHONHASHSEED": "42",
             "AIPERF_HTTP_X_SESSION_ID_FROM_CORRELATION_ID": "1", "VLLM_USE_V2_MODEL_RUNNER": "1"},
        lines={"--max-num-seqs": 239}),
    # ATOM with an awk-computed acceptance rate and a CONC case table.
    "atom-mi355x-glm-lmcache": Case(
        "glm5.2-fp4-mi355x-atom-agentic-mtp", AG + "glm5.2_fp4_mi355x_atom_mtp.sh", tp=4, ep=1, dpa=False, conc=8,
        kv="dram",
        flags=[("--model", UNKNOWN), ("--host", "0.0.0.0"), ("--server-port", UNKNOWN),
               ("--tensor-parallel-size", "4"),
               ("--online_quant_config", '{"global_quant_config":"ptpc_fp8","exclude_layer":["lm_head",'
                                         '"model.embed_tokens","*.mlp.gate","*expert*"]}'),
               ("--max-num-seqs", "16"), ("--cudagraph-capture-sizes", "[1,2,4,8,12,16]"),
               ("--max-num-batched-tokens", "16384"), ("--kv_cache_dtype", "fp8"), ("--method", "mtp"),
               ("--num-speculative-tokens", "3"), ("--spec-decode-acceptance-rate", "0.663333"),
               ("--kv-transfer-config", '{"kv_connector":"lmcache_offload","kv_role":"offload"}')],
        keys={"--online_quant_config.global_quant_config": ("ptpc_fp8", 161),
              "--online_quant_config.exclude_layer": ('["lm_head","model.embed_tokens","*.mlp.gate","*expert*"]', 161),
              "--kv-transfer-config.kv_connector": ("lmcache_offload", 89),
              "--kv-transfer-config.kv_role": ("offload", 89)},
        env={"LMCACHE_MAX_LOCAL_CPU_SIZE": "209", "LMCACHE_CHUNK_SIZE": "256", "AITER_QUICK_REDUCE_QUANTIZATION": "INT4"},
        lines={"--spec-decode-acceptance-rate": 140, "--cudagraph-capture-sizes": 112}),
    "vllm-mi355x-dsv4": Case(
        "dsv4-fp4-mi355x-vllm", FSL + "dsv4_fp4_mi355x_vllm.sh", tp=8, ep=1, dpa=False, conc=64, isl=8192,
        flags=[("--port", UNKNOWN), ("--tensor-parallel-size", "8"), ("--data-parallel-size", "1"),
               ("--async-scheduling", ON), ("--no-enable-prefix-caching", ON), ("--distributed-executor-backend", "mp"),
               ("--gpu-memory-utilization", "0.8"), ("--kv-cache-dtype", "fp8"), ("--trust-remote-code", ON),
               ("--moe-backend", "aiter"), ("--tokenizer-mode", "deepseek_v4"), ("--reasoning-parser", "deepseek_v4"),
               ("--compilation-config", '{"mode":3,"cudagraph_mode":"FULL_AND_PIECEWISE"}')],
        keys={"--compilation-config.mode": ("3", 82), "--compilation-config.cudagraph_mode": ("FULL_AND_PIECEWISE", 82)},
        env={"VLLM_ROCM_USE_AITER": "1", "VLLM_ROCM_USE_AITER_MOE": "1"}),
    # An unquoted "--context-length $N" splits into two words.
    "sglang-mi355x-qwen": Case(
        "qwen3.5-fp8-mi355x-sglang", FSL + "qwen3.5_fp8_mi355x.sh", tp=4, ep=1, dpa=False, conc=128, isl=8192,
        flags=[("--attention-backend", "aiter"), ("--model-path", "Qwen/Qwen3.5-397B-A17B-FP8"), ("--host", "0.0.0.0"),
               ("--port", UNKNOWN), ("--tensor-parallel-size", "4"), ("--ep-size", "1"), ("--trust-remote-code", ON),
               ("--tokenizer-worker-num", "6"), ("--enable-aiter-allreduce-fusion", ON),
               ("--max-running-requests", "128"), ("--cuda-graph-max-bs", "128"), ("--disable-radix-cache", ON),
               ("--chunked-prefill-size", "32768"), ("--scheduler-recv-interval", "30"),
               ("--mem-fraction-static", "0.8"), ("--model-loader-extra-config", '{"enable_multithread_load": true}'),
               ("--page-size", "16"), ("--context-length", "9236")],
        keys={"--model-loader-extra-config.enable_multithread_load": ("true", 52)},
        env={"SGLANG_USE_AITER_UNIFIED_ATTN": "1", "SGLANG_USE_AITER": "1"}),
    # `$( [[ $CONC -gt 4 ]] && echo 30 || echo 10 )` on both sides of its condition.
    "sglang-b200-qwen-mtp-c8": Case(
        "qwen3.5-fp4-b200-sglang-mtp", FSL + "qwen3.5_fp4_b200_mtp.sh", tp=2, ep=1, dpa=False, conc=8, isl=8192,
        flags=_qwen_b200_mtp_flags(conc=8, recv_interval=30),
        env={"SGLANG_ENABLE_SPEC_V2": "1", "PYTHONNOUSERSITE": "1"},
        lines={"--scheduler-recv-interval": 51}),
    "sglang-b200-qwen-mtp-c4": Case(
        "qwen3.5-fp4-b200-sglang-mtp", FSL + "qwen3.5_fp4_b200_mtp.sh", tp=2, ep=1, dpa=False, conc=4, isl=8192,
        flags=_qwen_b200_mtp_flags(conc=4, recv_interval=10)),
    # Capture sizes built with "${X:+,}" in a C-style loop, then the powers of two above the dense range.
    "vllm-b300-kimi-mooncake": Case(
        "kimik3-fp4-b300-vllm-agentic-dspark", AG + "kimik3_fp4_b300_vllm_mtp.sh", tp=8, ep=1, dpa=False, conc=16,
        kv="dram",
        flags=[("--served-model-name", "moonshotai/Kimi-K3"), ("--host", "0.0.0.0"),
               ("--port", UNKNOWN), ("--tensor-parallel-size", "8"),
               # The config's dcp-size reaches the recipe as DCP_SIZE=8.
               ("--decode-context-parallel-size", "8"), ("--dcp-comm-backend", "a2a"), ("--max-num-seqs", "32"),
               ("--gpu-memory-utilization", "0.92"), ("--max-num-batched-tokens", "16384"),
               ("--trust-remote-code", ON), ("--language-model-only", ON), ("--load-format", "fastsafetensors"),
               ("--moe-backend", "auto"), ("--no-enable-flashinfer-autotune", ON), ("--enable-cumem-allocator", ON),
               ("--enable-prefix-caching", ON), ("--prefix-match-unit", "128"), ("--kv-cache-dtype", "fp8"),
               ("--stream-interval", "10"), ("--attention-backend", "TOKENSPEED_MLA"),
               ("--attention-config", '{"mla_prefill_backend":"TRTLLM_RAGGED","use_prefill_query_quantization":true}'),
               ("--speculative-config", UNKNOWN),
               ("--compilation-config", '{"cudagraph_mode":"FULL_AND_PIECEWISE","cudagraph_capture_sizes":'
                                        + _sizes(*range(4, 129, 4), 256, 512, 1024, 2048, 4096, 8192) + "}"),
               ("--disable-uvicorn-access-log", ON),
               ("--kv-transfer-config", '{"kv_connector":"MooncakeStoreConnector","kv_role":"kv_both",'
                                        '"kv_load_failure_policy":"recompute","kv_connector_extra_config":'
                                        '{"load_async":true,"lookup_async":true,"enable_offload":false}}')],
        keys={"--attention-config.mla_prefill_backend": ("TRTLLM_RAGGED", 281),
              "--attention-config.use_prefill_query_quantization": ("true", 281),
              "--speculative-config.method": ("dspark", 221),
              "--speculative-config.model": (UNKNOWN, 0),
              "--speculative-config.num_speculative_tokens": ("3", 221),
              "--speculative-config.attention_backend": ("TOKENSPEED_MLA", 221),
              "--speculative-config.draft_sample_method": ("probabilistic", 221),
              "--speculative-config.rejection_sample_method": ("synthetic", 221),
              "--speculative-config.synthetic_acceptance_length": ("3.00", 221),
              "--compilation-config.cudagraph_mode": ("FULL_AND_PIECEWISE", 256),
              "--compilation-config.cudagraph_capture_sizes":
                  (_sizes(*range(4, 129, 4), 256, 512, 1024, 2048, 4096, 8192), 256),
              "--kv-transfer-config.kv_connector": ("MooncakeStoreConnector", 188),
              "--kv-transfer-config.kv_role": ("kv_both", 188),
              "--kv-transfer-config.kv_load_failure_policy": ("recompute", 188),
              "--kv-transfer-config.kv_connector_extra_config.load_async": ("true", 188),
              "--kv-transfer-config.kv_connector_extra_config.lookup_async": ("true", 188),
              "--kv-transfer-config.kv_connector_extra_config.enable_offload": ("false", 188)},
        env={"MC_GID_INDEX": "3", "VLLM_USE_DIRECT_DCP_A2A": "1", "PYTHONHASHSEED": "42"}),
    # A YAML file (`cat << EOF > ser.yaml`) with lists from $(seq) and ${X%, }, passed as --config.
    "trt-b200-minimax-dram": Case(
        "minimaxm3-fp4-b200-trtllm-agentic-mtp", AG + "minimaxm3_fp4_b200_trt_mtp.sh", tp=4, ep=1, dpa=False,
        conc=20, kv="dram",
        flags=[("--tp_size", "4"), ("--host", "0.0.0.0"), ("--port", UNKNOWN),
               ("--chat_template", UNKNOWN), ("--config", "ser.yaml")],
        keys={"--config.max_seq_len": ("1048576", 96), "--config.max_num_tokens": ("16384", 97),
              "--config.max_batch_size": ("20", 98), "--config.cuda_graph_config.enable_padding": ("true", 100),
              "--config.cuda_graph_config.batch_sizes": (_sizes(*range(1, 21)), 101),
              "--config.torch_compile_config.enable_fullgraph": ("true", 103),
              "--config.torch_compile_config.enable_inductor": ("false", 104),
              "--config.torch_compile_config.enable_piecewise_cuda_graph": ("true", 105),
              "--config.torch_compile_config.capture_num_tokens": ("[1,512,1024,2048]", 106),
              "--config.torch_compile_config.enable_userbuffers": ("true", 107),
              "--config.torch_compile_config.max_num_streams": ("3", 108),
              "--config.moe_config.backend": ("TRTLLM", 110),
              "--config.moe_config.use_low_precision_moe_combine": ("true", 111),
              "--config.sparse_attention_config.algorithm": ("minimax_m3", 113),
              "--config.sparse_attention_config.implementation": ("msa", 114),
              "--config.sparse_attention_config.indexer_kv_dtype": ("fp8", 115),
              "--config.sparse_attention_config.sparse_disable_index_value": ("true", 116),
              "--config.sparse_attention_config.fuse_qkv_index_projection": ("true", 117),
              "--config.kv_cache_config.free_gpu_memory_fraction": ("0.94", 119),
              "--config.kv_cache_config.enable_block_reuse": ("true", 120),
              "--config.kv_cache_config.block_reuse_policy": ("per_conversation", 121),
              "--config.kv_cache_config.tokens_per_block": ("128", 122),
              "--config.kv_cache_config.use_kv_cache_manager_v2": ("true", 123),
              "--config.kv_cache_config.dtype": ("fp8", 124),
              "--config.kv_cache_config.event_buffer_max_size": ("0", 125),
              "--config.kv_cache_config.host_cache_size": ("268435456000", 126),
              "--config.speculative_config.decoding_type": ("Eagle3", 128),
              "--config.speculative_config.max_draft_len": ("3", 129),
              "--config.speculative_config.speculative_model": (UNKNOWN, 0),
              "--config.scheduler_config.capacity_scheduler_policy": ("MAX_UTILIZATION", 132),
              "--config.enable_chunked_prefill": ("true", 133), "--config.enable_autotuner": ("true", 134),
              "--config.trust_remote_code": ("true", 135), "--config.reasoning_parser": ("minimax_m3", 136),
              "--config.stream_interval": ("20", 137), "--config.print_iter_log": ("true", 138),
              "--config.num_postprocess_workers": ("8", 139), "--config.enable_attention_dp": ("false", 140)},
        env={"TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS": "1.78", "TRTLLM_ENABLE_PDL": "1"}),
    "atom-mi355x-dsv4-agentic": Case(
        "dsv4-fp4-mi355x-atom-agentic-mtp", AG + "dsv4_fp4_mi355x_atom_mtp.sh", tp=8, ep=1, dpa=False, conc=48,
        kv="none",
        flags=[("--model", UNKNOWN), ("--served-model-name", DSV4), ("--host", "0.0.0.0"), ("--server-port", UNKNOWN),
               ("--tensor-parallel-size", "8"), ("--kv-cache-dtype", "fp8"), ("--index-cache-dtype", "fp4"),
               ("--enable-prefix-caching", ON), ("--gpu-memory-utilization", "0.9"),
               ("--max-num-batched-tokens", "16384"), ("--attn-prefill-chunk-size", "16384"),
               ("--state-checkpoint-interval-tokens", "8192"), ("--level", "3"), ("--cudagraph-mode", "FULL"),
               ("--method", "mtp"), ("--num-speculative-tokens", "3"), ("--spec-decode-acceptance-length", "2.49"),
               ("--max-num-seqs", "96")],
        env={"ATOM_DISABLE_MMAP": "true", "AIPERF_FAILED_REQUEST_THRESHOLD": "0.10", "ATOM_PROFILER_TIMEOUT": "1200"},
        lines={"--max-num-seqs": 83, "--spec-decode-acceptance-length": 89}),
}


def _find(case: Case) -> tuple[RealJob, RecipeEval]:
    found = [(rj, r) for rj, r in real_evaluations()
             if rj.key == case.key and rj.job.get("tp") == case.tp and rj.job.get("ep") == case.ep
             and rj.job.get("dp-attn") is case.dpa and rj.job.conc == case.conc and not rj.job.get("run-eval")
             and (case.isl is None or rj.job.get("isl") == case.isl)
             and (case.kv is None or rj.job.get("kv-offloading") == case.kv)]
    assert len(found) == 1, f"{case.key}: {len(found)} jobs match the case"
    rj, result = found[0]
    assert result is not None
    return rj, result


def _shown(v: Value | None) -> str:
    if v is None:
        return ON
    return UNKNOWN if v.text is None else v.text


@pytest.mark.parametrize("name", list(CASES))
def test_server_command_line_flag_by_flag(name: str) -> None:
    case = CASES[name]
    rj, result = _find(case)
    assert result.recipe == case.recipe
    assert len(result.servers) == 1, [loc.as_text() for loc in result.server_command]
    server = result.servers[0]
    assert [(f.name, _shown(f.value)) for f in server] == case.flags
    assert [e for e in result.early_exits if not e.conditional] == []
    assert result.missing_env == [] and result.errors == []
    for flag, line in case.lines.items():
        [value] = result.flag_values(flag)
        assert value is not None and value.location.line == line, f"{flag} set at {value}"


@pytest.mark.parametrize("name", [n for n, c in CASES.items() if c.keys])
def test_structured_values_key_by_key(name: str) -> None:
    case = CASES[name]
    rj, result = _find(case)
    structured = {f"{f.name}.{k.path}" for server in result.servers for f in server for k in f.keys}
    assert structured == set(case.keys)
    for address, (text, line) in case.keys.items():
        [value] = result.flag_values(address)
        assert value is not None
        assert _shown(value) == text, address
        if text != UNKNOWN:
            assert (value.location.path, value.location.line) == (case.recipe, line), f"{address} at {value.location}"


@pytest.mark.parametrize("name", [n for n, c in CASES.items() if c.env or c.no_env])
def test_exported_environment_at_server_start(name: str) -> None:
    case = CASES[name]
    rj, result = _find(case)
    assert {k: result.env[k].text for k in case.env if k in result.env} == case.env
    assert [k for k in case.no_env if k in result.env] == []


def test_no_real_job_takes_its_positional_model_for_an_unknown_flag() -> None:
    # `vllm serve "$MODEL_PATH"`, `trtllm-serve "$MODEL"`: the runner's model path is the positional
    # model, so "flag X is absent" stays decidable for these jobs (274 carried an <unknown> flag before).
    evaluations = [(rj, r) for rj, r in real_evaluations() if r is not None and r.servers]
    unknown = [rj.job.label() for rj, r in evaluations if any(f.name == UNKNOWN_FLAG for s in r.servers for f in s)]
    assert unknown == []
    serve = [r for rj, r in evaluations if rj.recipe and "minimaxm3_fp4_b200_mtp" in rj.recipe]
    assert serve and all(r.servers[0][0].name == "--served-model-name" for r in serve)


def test_at_least_98_percent_of_single_node_jobs_reach_a_server_command_line() -> None:
    evaluations = real_evaluations()
    reached = [rj for rj, r in evaluations if r is not None and r.servers and any(r.servers)]
    assert len(reached) / len(evaluations) >= 0.98, f"{len(reached)} of {len(evaluations)}"
    unreached = [(rj, not_reached(r)) for rj, r in evaluations if r is None or not r.servers]
    # Every job that is not reached says why; on this tree only a config whose recipe was deleted.
    assert all(reason is not None for _, reason in unreached)
    assert {(rj.key, reason.category) for rj, reason in unreached if reason is not None} == {
        ("qwen3.5-fp8-h100-sglang-agentic", NO_RECIPE)}


def test_routers_are_recorded_beside_the_server_for_the_jobs_that_start_one() -> None:
    # dsv4_fp4_b300_vllm_mtp.sh starts vllm-router (--policy consistent_hash) in front of its server when
    # DP_ATTENTION=true; the TP-only jobs start none.  A router is never taken for the server.
    jobs = [(rj, r) for rj, r in real_evaluations() if rj.key == "dsv4-fp4-b300-vllm-agentic-mtp" and r is not None]
    routed = [(rj, r) for rj, r in jobs if rj.job.get("dp-attn")]
    alone = [(rj, r) for rj, r in jobs if not rj.job.get("dp-attn")]
    assert routed and alone
    for rj, r in routed:
        (router,) = r.routers
        flags = {f.name: _shown(f.value) for f in router.flags}
        assert flags["--policy"] == "consistent_hash" and flags["--intra-node-data-parallel-size"] == str(rj.job.get("tp"))
        assert router.location.path == "benchmarks/single_node/agentic/dsv4_fp4_b300_vllm_mtp.sh"
        assert len(r.servers) == 1 and "--policy" not in {f.name for f in r.servers[0]}
    assert all(r.routers == [] for _, r in alone)
    # a job that starts a router still has its one server
    assert all(len(r.servers) <= 1 for _, r in real_evaluations() if r is not None and r.routers)
