"""InferenceX's benchmark client (utils/bench_serving/benchmark_serving.py), as benchmark_lib.sh runs it.

It reads the same options, reaches the server the recipe started (a few real
requests to ``--base-url`` + ``--endpoint``, so a client that reaches no server,
or another job's, is seen), and with ``--save-result`` writes
``--result-dir``/``--result-filename`` with exactly the keys, order and types
the real client writes (``main()`` and ``benchmark()`` of that file at
843c6254f): the setup fields, ``request_rate`` "inf", the benchmark
fields, then mean/median/std and each ``--metric-percentiles`` entry of every
``--percentile-metrics`` metric in milliseconds, with numpy's statistics
(population standard deviation, linear percentiles).  Request lengths are
drawn as the real random dataset draws them (uniform in ``[len * ratio,
len]``, seeded by ``--seed``); timings are synthetic, from the measured
round trips.  More than 5 % failed requests ends it with the real client's
FAIL message.  What it reached goes to ``$STANDIN_CALL.client.json``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import sys
import time
from datetime import datetime

import common
from common import Node, post_json

CHAT_BACKENDS = ("openai-chat",)
PROBES = 3  # real requests made to the server


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="benchmark_serving.py", allow_abbrev=False)
    p.add_argument("--backend", default="vllm")
    p.add_argument("--base-url", default=None)
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--endpoint", default="/v1/completions")
    p.add_argument("--dataset-name", default="sharegpt")
    p.add_argument("--model", required=True)
    p.add_argument("--served-model-name", default=None)
    p.add_argument("--tokenizer", default=None)
    p.add_argument("--tokenizer-mode", default="auto")
    p.add_argument("--best-of", type=int, default=1)
    p.add_argument("--num-prompts", type=int, default=1000)
    p.add_argument("--max-concurrency", type=int, default=None)
    p.add_argument("--request-rate", type=float, default=float("inf"))
    p.add_argument("--burstiness", type=float, default=1.0)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--random-input-len", type=int, default=1024)
    p.add_argument("--random-output-len", type=int, default=128)
    p.add_argument("--random-range-ratio", type=float, default=1.0)
    p.add_argument("--random-prefix-len", type=int, default=0)
    p.add_argument("--random-num-workers", type=int, default=1)
    p.add_argument("--num-warmups", type=int, default=0)
    p.add_argument("--percentile-metrics", default="ttft,tpot,itl,e2el")
    p.add_argument("--metric-percentiles", default="90,99,99.9")
    p.add_argument("--goodput", nargs="+", default=None)
    p.add_argument("--metadata", nargs="*", default=None)
    p.add_argument("--result-dir", default=None)
    p.add_argument("--result-filename", default=None)
    for flag in ("--save-result", "--save-detailed", "--ignore-eos", "--use-chat-template", "--dsv4",
                 "--trust-remote-code", "--profile", "--disable-tqdm"):
        p.add_argument(flag, action="store_true")
    p.add_argument("--logprobs", type=int, default=None)
    p.add_argument("--lora-modules", nargs="+", default=None)
    return p


def _mean(xs: list[float]) -> float:
    return sum(xs) / len(xs) if xs else 0.0


def _std(xs: list[float]) -> float:
    if not xs:
        return 0.0
    m = _mean(xs)
    return math.sqrt(sum((x - m) ** 2 for x in xs) / len(xs))


def _percentile(s: list[float], p: float) -> float:
    """numpy.percentile(xs or 0, p), linear interpolation, of ``s`` sorted."""
    if not s:
        return 0.0
    pos = (len(s) - 1) * p / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def run(node: Node, argv: list[str]) -> int:
    args, _unknown = _parser().parse_known_args(argv)
    print(args, flush=True)
    rng = random.Random(args.seed)
    base_url = args.base_url if args.base_url is not None else f"http://{args.host}:{args.port}"
    api_url = base_url + args.endpoint
    model_name = args.served_model_name or args.model
    tokenizer_id = args.tokenizer if args.tokenizer is not None else args.model

    def lengths(n: int) -> list[int]:
        lower = int(n * args.random_range_ratio)
        return [rng.randint(lower, n) for _ in range(args.num_prompts)]

    input_lens, output_lens = lengths(args.random_input_len), lengths(args.random_output_len)
    chat = args.backend in CHAT_BACKENDS or args.endpoint.endswith("/chat/completions")
    probes = []
    for i in range(min(PROBES, args.num_prompts)):
        body: dict = {"model": model_name, "max_tokens": output_lens[i], "temperature": 0.0, "ignore_eos": args.ignore_eos}
        if chat:
            body["messages"] = [{"role": "user", "content": "hello"}]
        else:
            body["prompt"] = "hello"
        probes.append(post_json(api_url, body))
    errors = [e for _, _, e in probes if e]
    servers = sorted({s for _, s, _ in probes if s})
    start_unix = time.time()
    ok = not errors
    base = _mean([t for t, _, e in probes if not e]) or 0.001
    ttfts, tpots, itls, e2els, done_out = [], [], [], [], []
    completed = 0
    for i in range(args.num_prompts):
        if not ok:
            done_out.append(0)
            continue
        ttft = base * (1.0 + (i % 7) / 10.0)
        itl = 0.004 * (1.0 + (i % 5) / 20.0)
        out = output_lens[i]
        latency = ttft + itl * max(out - 1, 0)
        completed += 1
        done_out.append(out)
        ttfts.append(ttft)
        e2els.append(latency)
        if out > 1:
            tpots.append((latency - ttft) / (out - 1))
        if out > 1:
            itls.append(itl)  # every token of a request has the same gap here: one value stands for them
    concurrency = args.max_concurrency or args.num_prompts
    duration = max(sum(e2els) / max(concurrency, 1), 0.001)
    end_unix = start_unix + duration
    total_input = sum(input_lens[i] for i in range(args.num_prompts) if ok)
    total_output = sum(done_out)
    percentiles = [float(p) for p in args.metric_percentiles.split(",")]
    selected = args.percentile_metrics.split(",")
    result: dict = {
        "duration": duration,
        "benchmark_start_time_unix": start_unix,
        "benchmark_end_time_unix": end_unix,
        "completed": completed,
        "total_input_tokens": total_input,
        "total_output_tokens": total_output,
        "request_throughput": completed / duration,
        "request_goodput:": None,
        "output_throughput": total_output / duration,
        "total_token_throughput": (total_input + total_output) / duration,
        "input_lens": input_lens,
        "output_lens": done_out,
        "ttfts": ttfts,
        "itls": [],
        "generated_texts": [],
        "errors": errors,
    }
    series = {"ttft": ttfts, "tpot": tpots, "itl": itls, "e2el": e2els}
    print("{s:{c}^{n}}".format(s=" Serving Benchmark Result ", n=50, c="="))
    print("{:<40} {:<10}".format("Successful requests:", completed))
    for metric in ("ttft", "tpot", "itl", "e2el"):
        if metric not in selected:
            continue
        xs = sorted(series[metric])
        result[f"mean_{metric}_ms"] = _mean(xs) * 1000
        result[f"median_{metric}_ms"] = _percentile(xs, 50) * 1000
        result[f"std_{metric}_ms"] = _std(xs) * 1000
        for p in percentiles:
            p_word = str(int(p)) if int(p) == p else str(p)
            result[f"p{p_word}_{metric}_ms"] = _percentile(xs, p) * 1000
    if args.save_result:
        saved: dict = {"date": datetime.now().strftime("%Y%m%d-%H%M%S"), "backend": args.backend,
                       "model_id": args.model, "tokenizer_id": tokenizer_id, "best_of": args.best_of,
                       "num_prompts": args.num_prompts}
        for item in args.metadata or []:
            key, _, value = item.partition("=")
            saved[key.strip()] = value.strip()
        saved["request_rate"] = args.request_rate if args.request_rate < float("inf") else "inf"
        saved["burstiness"] = args.burstiness
        saved["max_concurrency"] = args.max_concurrency
        saved = {**saved, **result}
        if not args.save_detailed:
            for field in ("ttfts", "itls", "generated_texts", "errors"):
                saved.pop(field, None)
        name = args.result_filename or (f"{args.backend}-{args.request_rate}qps-{args.model.split('/')[-1]}-"
                                        f"{saved['date']}.json")
        if args.result_dir:
            name = os.path.join(args.result_dir, name)
        with open(name, "w", encoding="utf-8") as out:
            json.dump(saved, out)
    call = common.CALL
    if call:
        with open(call + ".client.json", "w") as f:
            json.dump({"api_url": api_url, "servers": servers, "errors": errors}, f)
    failure_rate = 1 - completed / args.num_prompts if args.num_prompts else 0.0
    if failure_rate > 0.05:
        print(f"FAIL: request failure rate {failure_rate:.1%} exceeds 5% threshold "
              f"({completed}/{args.num_prompts} completed)", file=sys.stderr)
        return 1
    return 0
