"""srt-slurm YAML recipes: override/zip/selector semantics and each role's flags, checked on real recipes.

The expected values below were read off the recipe files by hand (line
numbers included); the upstream recipe with ``override_*`` sections is a
verbatim copy of NVIDIA/srt-slurm ``recipes/b200-fp4/8k1k.yaml`` at
2c183bbb, the file InferenceX's ``dsr1-fp4-b200-dynamo-sglang`` selects
(tests/data/multinode/README.md).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ci_tools.evaluation.multinode.evaluate import evaluate_multinode_job
from ci_tools.evaluation.multinode.located import located
from ci_tools.evaluation.multinode.srt_backend import role_servers
from ci_tools.evaluation.multinode.srt_variants import VariantError, split_config_file, variants
from ci_tools.revision.snapshot import Snapshot
from ci_tools.revision.yamlpos import load_yaml
from multinode_corpus import (corpus, evaluation, find_job, flag, key_value, role_env, role_flags, values)

DATA = Path(__file__).parent / "data" / "multinode"
SRT = "benchmarks/multi_node/srt-slurm-recipes"


def tree(text: str, path: str = "r.yaml"):  # type: ignore[no-untyped-def]
    return located(load_yaml(text, path, last_duplicate_wins=True).value, path)


# -- srt-slurm override semantics on small files ------------------------------------------------

OVERRIDES = """\
base:
  name: job
  backend:
    sglang_config:
      prefill:
        tp-size: 4
        enable-dp-attention: true
        mem-fraction-static: 0.8
      decode:
        tp-size: 8
  benchmark:
    concurrencies: [4, 8]
override_small:
  backend:
    sglang_config:
      prefill:
        enable-dp-attention: null
        mem-fraction-static: 0.75
  benchmark:
    concurrencies: [1]
zip_override_sweep:
  backend:
    sglang_config:
      decode:
        tp-size: [2, 4, 16]
        mem-fraction-static: [0.9]
  benchmark:
    concurrencies: [[4, 8], [16], [32]]
"""


def _prefill(config):  # type: ignore[no-untyped-def]
    return config.get("backend").get("sglang_config").get("prefill")


def test_override_deep_merges_into_base_and_null_deletes_a_key() -> None:
    [v] = variants(tree(OVERRIDES), "override_small")
    prefill = _prefill(v.config)
    assert v.suffix == "small"
    assert prefill.plain() == {"tp-size": 4, "mem-fraction-static": 0.75}
    # the kept value points at base, the replaced one at the override section
    assert prefill.get("tp-size").location.line == 6
    assert prefill.get("mem-fraction-static").location.line == 18
    assert v.config.get("benchmark").plain() == {"concurrencies": [1]}  # lists replace, never append


def test_zip_override_slices_list_leaves_broadcasts_length_one_and_keeps_lists_of_lists() -> None:
    group = variants(tree(OVERRIDES), "zip_override_sweep")
    assert [v.suffix for v in group] == ["sweep_0", "sweep_1", "sweep_2"]
    decode = [v.config.get("backend").get("sglang_config").get("decode") for v in group]
    assert [d.plain() for d in decode] == [{"tp-size": t, "mem-fraction-static": 0.9} for t in (2, 4, 16)]
    assert [v.config.get("benchmark").plain()["concurrencies"] for v in group] == [[4, 8], [16], [32]]
    # each element keeps its own column on line 26: "tp-size: [2, 4, 16]"
    assert [d.get("tp-size").location.column for d in decode] == [19, 22, 25]
    [one] = variants(tree(OVERRIDES), "zip_override_sweep[2]")
    assert one.config.get("backend").get("sglang_config").get("decode").plain()["tp-size"] == 16


def test_selectors_follow_srtctl() -> None:
    root = tree(OVERRIDES)
    assert [v.suffix for v in variants(root, None)] == ["small", "sweep_0", "sweep_1", "sweep_2"]
    assert [v.suffix for v in variants(root, "base")] == ["base"]
    assert [v.suffix for v in variants(root, "*sweep*")] == ["sweep_0", "sweep_1", "sweep_2"]
    plain = tree("backend: {type: vllm}\n")
    assert [v.suffix for v in variants(plain, "override_x")] == [""]  # ignored on a plain file, as srtctl does
    assert split_config_file("recipes/a.yaml:zip_override_x[3]") == ("recipes/a.yaml", "zip_override_x[3]")
    with pytest.raises(VariantError, match=r"index 3 is out of range, zip_override_sweep has 3 variants"):
        variants(root, "zip_override_sweep[3]")
    with pytest.raises(VariantError, match=r"'override_big'.*available: override_small, zip_override_sweep\[i\]"):
        variants(root, "override_big")
    with pytest.raises(VariantError, match="invalid selector 'small'"):
        variants(root, "small")
    bad = tree("base: {a: 1}\nzip_override_z:\n  x: [1, 2]\n  y: [1, 2, 3]\n")
    with pytest.raises(VariantError, match=r"incompatible zip lengths \[2, 3\]"):
        variants(bad, "zip_override_z[0]")


def test_a_key_written_twice_keeps_the_later_value_as_yaml_safe_load_does() -> None:
    root = tree("backend:\n  type: vllm\n  vllm_config:\n    aggregated:\n      max-num-seqs: 8\n"
                "      max-num-seqs: 16\n")
    [server] = role_servers(root)
    assert values(list(server.flags))["--max-num-seqs"] == "16"
    assert flag(list(server.flags), "--max-num-seqs").value.location.line == 6  # type: ignore[union-attr]


def test_bool_list_dict_and_json_values_become_flags_as_srt_slurm_writes_them() -> None:
    root = tree("backend:\n  type: sglang\n  sglang_config:\n    aggregated:\n      trust_remote_code: true\n"
                "      disable-radix-cache: false\n      cuda-graph-bs: [1, 2, 4]\n"
                "      speculative-config: {method: mtp, num_speculative_tokens: 3}\n"
                "      model-loader-extra-config: '{\"enable_multithread_load\": true, \"threads\": {\"n\": 4}}'\n"
                "      watchdog: null\n      nccl-port: 1234\n")
    [server] = role_servers(root)
    got = values(list(server.flags))
    assert server.role == "aggregated" and server.command == "python3 -m dynamo.sglang"
    assert got == {
        "--cuda-graph-bs": "1 2 4",
        "--model-loader-extra-config": '{"enable_multithread_load": true, "threads": {"n": 4}}',
        "--model-loader-extra-config.enable_multithread_load": "true",
        "--model-loader-extra-config.threads.n": "4",
        "--speculative-config": "{'method': 'mtp', 'num_speculative_tokens': 3}",  # str(dict), as srt-slurm
        "--speculative-config.method": "mtp",
        "--speculative-config.num_speculative_tokens": "3",
        "--trust-remote-code": None,
    }
    assert key_value(list(server.flags), "--speculative-config.num_speculative_tokens").location.line == 8
    # one flag per structured value, its keys with it (the model single-node recipes use)
    speculative = flag(list(server.flags), "--speculative-config")
    assert [k.path for k in speculative.keys] == ["method", "num_speculative_tokens"]
    assert not any(f.name.startswith("--speculative-config.") for f in server.flags)


# -- real recipes of the InferenceX tree, flag by flag ---------------------------------------------


def test_zip_override_variant_of_a_real_sglang_recipe_glm52_gb300_agentic() -> None:
    recipe = f"{SRT}/sglang/glm5.2/gb300-fp4/agentic/glm5.2-agentx.yaml"
    job = find_job("glm5.2-fp4-gb300-dynamo-sglang-agentic-disagg",
                   "recipes/sglang/glm5.2/gb300-fp4/agentic/glm5.2-agentx.yaml:zip_override_mtp_agentx_hightpt[1]",
                   concs=[192])
    result = evaluation(job)
    assert result.errors == [] and result.roles == ["prefill", "decode"]
    assert result.recipe == f"{recipe}:zip_override_mtp_agentx_hightpt[1]"
    decode = values(role_flags(result, "decode"))
    # zip section (lines 182-198) over base decode (lines 117-154)
    assert decode["--tensor-parallel-size"] == "16"
    assert decode["--data-parallel-size"] == "16"
    assert decode["--expert-parallel-size"] == "16"
    assert decode["--enable-dp-attention"] is None and "--enable-dp-attention" in decode
    assert decode["--moe-runner-backend"] == "flashinfer_cutedsl"
    assert decode["--mem-fraction-static"] == "0.85"
    assert decode["--max-running-requests"] == "144"
    assert decode["--cuda-graph-max-bs"] == "144"
    assert decode["--deepep-mode"] == "low_latency"
    assert decode["--speculative-num-steps"] == "2"  # base, line 128
    assert decode["--disable-radix-cache"] is None
    # srt-slurm adds --disaggregation-mode and the recipe writes it too: both reach the command line
    assert decode["--disaggregation-mode"] == "decode | decode"
    assert "--served-model-name" in decode and decode["--served-model-name"] == "nvidia/GLM-5.2-NVFP4"
    tp = flag(role_flags(result, "decode"), "--tensor-parallel-size")
    assert (tp.value.location.path, tp.value.location.line) == (recipe, 198)  # type: ignore[union-attr]
    steps = flag(role_flags(result, "decode"), "--speculative-num-steps")
    assert steps.value.location.line == 128  # type: ignore[union-attr]
    prefill = values(role_flags(result, "prefill"))
    assert (prefill["--tensor-parallel-size"], prefill["--data-parallel-size"], prefill["--expert-parallel-size"]) \
        == ("8", "8", "8")
    assert prefill["--max-prefill-tokens"] == "8192" and prefill["--chunked-prefill-size"] == "65536"
    assert prefill["--disable-cuda-graph"] is None
    assert role_env(result, "prefill")["SGLANG_SIMULATE_ACC_LEN"].text == "2.5"
    assert "SGLANG_SIMULATE_ACC_METHOD" not in role_env(result, "prefill")
    assert role_env(result, "decode")["SGLANG_SIMULATE_ACC_METHOD"].text == "match-expected"
    # a variable only one role has is unknown in the merged env, naming each role's value
    merged = result.env["SGLANG_SIMULATE_ACC_METHOD"]
    assert merged.text is None and "decode=match-expected" in merged.expression
    assert result.env["UCX_TLS"].text == "ib,cuda_copy,cuda_ipc,sm,self"


def test_vllm_dep8_prefill_and_tp8_decode_kimik26_b200() -> None:
    recipe = f"{SRT}/vllm/kimi-k2.6/b200-fp4/8k1k/disagg-b200-1p1d-dep8-tp8-c1.yaml"
    job = find_job("kimik2.6-fp4-b200-dynamo-vllm", "recipes/vllm/kimi-k2.6/b200-fp4/8k1k/disagg-b200-1p1d-dep8-tp8-c1.yaml")
    result = evaluation(job)
    assert result.errors == [] and result.roles == ["prefill", "decode"]
    prefill = values(role_flags(result, "prefill"))
    assert prefill["--tensor-parallel-size"] == "1"
    assert prefill["--data-parallel-size"] == "8"
    assert "--enable-expert-parallel" in prefill and prefill["--enable-expert-parallel"] is None
    assert prefill["--max-num-seqs"] == "2048" and prefill["--max-model-len"] == "10240"
    assert prefill["--gpu-memory-utilization"] == "0.9"
    assert prefill["--kv-transfer-config.engine_id"] == "kimi-k26-prefill-dep8"
    assert prefill["--compilation-config.pass_config.fuse_attn_quant"] == "true"
    assert prefill["--attention-config.mla_prefill_backend"] == "TRTLLM_RAGGED"
    assert prefill["--disaggregation-mode"] == "prefill"
    decode = values(role_flags(result, "decode"))
    assert decode["--tensor-parallel-size"] == "8" and "--data-parallel-size" not in decode
    assert "--enable-expert-parallel" not in decode
    assert decode["--compilation-config.cudagraph_mode"] == "FULL_DECODE_ONLY"
    assert decode["--max-cudagraph-capture-size"] == "256"
    assert decode["--stream-interval"] == "50"
    # connector: null (line 25): no --kv-transfer-config from srt-slurm, only the recipe's own (line 84)
    kv = flag(role_flags(result, "decode"), "--kv-transfer-config")
    assert kv.value.location.line == 84  # type: ignore[union-attr]
    assert flag(role_flags(result, "prefill"), "--max-num-seqs").value.location.as_text() == f"{recipe}:71:21"  # type: ignore[union-attr]
    assert role_env(result, "prefill")["NCCL_CUMEM_ENABLE"].text == "1"
    assert role_env(result, "decode")["NCCL_CUMEM_ENABLE"].text == "0"


def test_trtllm_engine_yaml_keys_ctx_dep2_gen_tp16_qwen35_gb300() -> None:
    recipe = f"{SRT}/trtllm/qwen3.5/gb300-fp4/disagg/8k1k/mtp/ctx1dep2_gen4tp16_mtp3_c4.yaml"
    job = find_job("qwen3.5-fp4-gb300-dynamo-trt-mtp",
                   "recipes/trtllm/qwen3.5/gb300-fp4/disagg/8k1k/mtp/ctx1dep2_gen4tp16_mtp3_c4.yaml")
    result = evaluation(job)
    assert result.errors == [] and result.roles == ["prefill", "decode"]
    prefill = values(role_flags(result, "prefill"))
    assert prefill["--extra-engine-args"] == "/logs/trtllm_config_prefill.yaml"
    assert prefill["--disaggregation-mode"] == "prefill"
    assert prefill["--extra-engine-args.tensor_parallel_size"] == "2"
    assert prefill["--extra-engine-args.moe_expert_parallel_size"] == "2"
    assert prefill["--extra-engine-args.enable_attention_dp"] == "true"
    assert prefill["--extra-engine-args.cuda_graph_config"] == "null"  # written to the engine YAML as null
    assert prefill["--extra-engine-args.kv_cache_config.free_gpu_memory_fraction"] == "0.85"
    assert prefill["--extra-engine-args.speculative_config.max_draft_len"] == "3"
    decode = values(role_flags(result, "decode"))
    assert decode["--extra-engine-args.tensor_parallel_size"] == "16"
    assert decode["--extra-engine-args.enable_attention_dp"] == "false"
    assert decode["--extra-engine-args.max_batch_size"] == "1"
    assert decode["--extra-engine-args.cuda_graph_config.batch_sizes"] == "[1]"
    assert decode["--extra-engine-args.cache_transceiver_config.kv_transfer_timeout_ms"] == "600000"
    tp = key_value(role_flags(result, "decode"), "--extra-engine-args.tensor_parallel_size")
    assert tp.location.as_text() == f"{recipe}:91:29"
    assert result.flag_values("--extra-engine-args.tensor_parallel_size") == [
        key_value(role_flags(result, "prefill"), "--extra-engine-args.tensor_parallel_size"), tp]
    assert role_env(result, "prefill")["TLLM_USE_FLASHINFER_GDN_PREFILL"].text == "1"
    assert role_env(result, "decode")["TLLM_USE_FLASHINFER_GDN_PREFILL"].text == "0"


class _Overlay:
    """The real tree plus files laid over it (what the launcher's checkout would hold)."""

    def __init__(self, base: Snapshot, files: dict[str, bytes]) -> None:
        self.base, self.extra, self.label = base, files, "real tree with an upstream recipe"

    def read(self, path: str) -> bytes | None:
        return self.extra[path] if path in self.extra else self.base.read(path)

    def files(self) -> tuple[str, ...]:
        return tuple(sorted(set(self.base.files()) | set(self.extra)))

    def glob(self, pattern: str) -> list[str]:
        return self.base.glob(pattern)


def test_base_plus_override_of_the_upstream_b200_recipe_deletes_dp_attention_for_tp4_prefill() -> None:
    c = corpus()
    upstream = (DATA / "srt-slurm-b200-fp4-8k1k.yaml").read_bytes()
    overlay = _Overlay(c.snapshot, {f"{SRT}/b200-fp4/8k1k.yaml": upstream})
    tp4 = find_job("dsr1-fp4-b200-dynamo-sglang", "recipes/b200-fp4/8k1k.yaml:override_stp_tp4")
    unresolved = evaluation(tp4)
    assert unresolved.servers == [] and "external srt-slurm recipe recipes/b200-fp4/8k1k.yaml" in unresolved.errors[0]
    result = evaluate_multinode_job(tp4, c.config, overlay)  # type: ignore[arg-type]
    prefill = values(role_flags(result, "prefill"))
    # override_stp_tp4 (lines 166-182): DP 1, EP 1, dp-attention and dp-lm-head deleted by null
    assert prefill["--tensor-parallel-size"] == "4"
    assert prefill["--data-parallel-size"] == "1"
    assert prefill["--expert-parallel-size"] == "1"
    assert "--enable-dp-attention" not in prefill and "--enable-dp-lm-head" not in prefill
    assert prefill["--mem-fraction-static"] == "0.85" and prefill["--disable-cuda-graph"] is None
    decode = values(role_flags(result, "decode"))
    assert decode["--tensor-parallel-size"] == "8" and decode["--expert-parallel-size"] == "1"
    assert flag(role_flags(result, "prefill"), "--data-parallel-size").value.location.line == 173  # type: ignore[union-attr]
    lowlat = find_job("dsr1-fp4-b200-dynamo-sglang", "recipes/b200-fp4/8k1k.yaml:zip_override_stp_lowlat[2]")
    zipped = evaluate_multinode_job(lowlat, c.config, overlay)  # type: ignore[arg-type]
    prefill = values(role_flags(zipped, "prefill"))
    assert prefill["--enable-dp-attention"] is None and prefill["--data-parallel-size"] == "4"
    assert zipped.roles == ["prefill", "decode"]


def test_unreached_srt_jobs_say_why() -> None:
    job = find_job("dsr1-fp4-b200-dynamo-sglang", "recipes/b200-fp4/8k1k.yaml:zip_override_stp_lowlat[0]")
    assert evaluation(job).errors == [
        "external srt-slurm recipe recipes/b200-fp4/8k1k.yaml:zip_override_stp_lowlat[0]: not in the repository "
        f"({SRT}/b200-fp4/8k1k.yaml does not exist); runners/launch_b200-dgxc-slurm.sh takes it from the srt-slurm "
        "checkout; not evaluated"]
    c = corpus()
    bad = _Overlay(c.snapshot, {f"{SRT}/b200-fp4/8k1k.yaml": (DATA / "srt-slurm-b200-fp4-8k1k.yaml").read_bytes()
                                .replace(b"zip_override_stp_lowlat:", b"zip_override_stp_low:")})
    result = evaluate_multinode_job(job, c.config, bad)  # type: ignore[arg-type]
    assert result.servers == []
    assert result.errors == [f"{SRT}/b200-fp4/8k1k.yaml: selector 'zip_override_stp_lowlat[0]': no section "
                             "zip_override_stp_lowlat; available: override_mtp_maxtpt_4p1d, override_mtp_maxtpt_7p2d, "
                             "override_mtp_tp4, override_stp_maxtpt_7p2d, override_stp_tp4, "
                             "zip_override_mtp_lowlat[i], zip_override_stp_low[i]"]
