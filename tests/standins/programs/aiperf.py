"""AIPerf's ``aiperf profile``: the agentic trace replay benchmark_lib.sh's ``build_replay_cmd`` starts.

It reads the options that command passes and reaches the server the recipe
started: a few real chat requests to ``--url`` + ``--endpoint`` naming
``--model``, so a replay that reaches no server, or another job's, is seen.
Into ``--output-artifact-dir`` it writes the two files InferenceX's
aggregation and validation read (``utils/agentic/aggregation/
process_agentic_result.py`` and ``utils/agentic/validation/
validate_agentic_result.py`` at 843c6254f), in the shape they read:

- ``profile_export.jsonl``: a record a request, ``metadata`` (its
  ``benchmark_phase``, warmup or profiling, and its start and end in ns) and
  ``metrics`` (``request_latency``, ``time_to_first_token`` and
  ``inter_token_latency`` in ms, ``input_sequence_length`` and
  ``output_sequence_length`` in tokens, each ``{"value", "unit"}``), and
  ``error``;
- ``profile_export_aiperf.json``: the aggregate, whose ``request_count``,
  ``error_request_count`` and ``completed_request_count`` the validation
  reads (profiling requests only, as AIPerf counts them).

The replay is ``--concurrency`` lanes, each of ``--warmup-requests-per-lane``
warmup requests and then a few profiled turns, one after another; input
lengths are drawn (seeded by ``--random-seed``, at most
``--max-context-length``), timings are synthetic, from the measured round
trips.  When the server did not answer, every request is an error record,
and above ``--failed-request-threshold`` it ends as AIPerf does, with exit 1.
It scrapes the Prometheus ``/metrics`` of ``--url`` and of each
``--server-metrics`` URL before and after its requests and writes what
changed as AIPerf exports it (``server_metrics_export.json``: ``metrics``
by family name, each a ``type`` and ``series`` of ``endpoint_url``,
``labels`` and ``stats``, a counter's ``total`` and ``rate`` over the run;
``server_metrics_export.csv``, a row a statistic), the endpoints that
answered in its ``summary``. What it reached goes to
``$STANDIN_CALL.aiperf.json``.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import random
import re
import sys
import time

import common
from common import Node, get_text, post_json

PROBES = 3  # real requests made to the server
TURNS_PER_LANE = 3  # profiled requests of each lane


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="aiperf profile", allow_abbrev=False)
    p.add_argument("--url", required=True)
    p.add_argument("--endpoint", default="/v1/chat/completions")
    p.add_argument("--model", required=True)
    p.add_argument("--concurrency", type=int, required=True)
    p.add_argument("--random-seed", type=int, default=0)
    p.add_argument("--warmup-requests-per-lane", type=int, default=0)
    p.add_argument("--max-context-length", type=int, default=None)
    p.add_argument("--failed-request-threshold", type=float, default=1.0)
    p.add_argument("--output-artifact-dir", required=True)
    p.add_argument("--server-metrics", nargs="+", default=[])
    return p


# A sample line of the Prometheus text format: name, optional {labels}, value.
_SAMPLE = re.compile(r"^([A-Za-z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)")
_LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')


def _scrape(url: str) -> tuple[dict[tuple[str, str, tuple[tuple[str, str], ...]], float], str | None]:
    """The samples of one /metrics endpoint, by (family, type, labels); counters by their family name."""
    text, error = get_text(url)
    if text is None:
        return {}, error
    types: dict[str, str] = {}
    samples: dict[tuple[str, str, tuple[tuple[str, str], ...]], float] = {}
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            parts = line.split()
            if len(parts) >= 4:
                types[parts[2]] = parts[3]
            continue
        found = _SAMPLE.match(line)
        if not found or line.startswith("#"):
            continue
        name, labels, value = found.groups()
        family = name[:-len("_total")] if name.endswith("_total") and name[:-len("_total")] in types else name
        try:
            samples[(family, types.get(family, "gauge"), tuple(sorted(_LABEL.findall(labels or ""))))] = float(value)
        except ValueError:
            continue
    return samples, None


def _export_server_metrics(directory: str, endpoints: list[str], before: dict, after: dict, seconds: float) -> None:
    """server_metrics_export.json and .csv of what each endpoint's metrics did between the two scrapes."""
    metrics: dict[str, dict] = {}
    rows = []
    for url in endpoints:
        for (family, kind, labels), value in sorted(after.get(url, {}).items()):
            if kind == "counter":
                total = value - before.get(url, {}).get((family, kind, labels), 0.0)
                stats = {"total": total, "rate": total / seconds if seconds > 0 else 0.0}
            else:
                stats = {"avg": value, "min": value, "max": value}
            entry = metrics.setdefault(family, {"type": kind, "series": []})
            entry["series"].append({"endpoint_url": url, "labels": dict(labels), "stats": stats})
            rows += [[url, family, kind, json.dumps(dict(labels)), stat, number] for stat, number in stats.items()]
    export = {"schema_version": "1.0", "summary": {"endpoints_configured": endpoints,
                                                   "endpoints_successful": [u for u in endpoints if u in after]},
              "metrics": metrics}
    with open(os.path.join(directory, "server_metrics_export.json"), "w") as out:
        json.dump(export, out, indent=2)
    with open(os.path.join(directory, "server_metrics_export.csv"), "w", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(["endpoint_url", "metric", "type", "labels", "stat", "value"])
        writer.writerows(rows)


def _metric(value: float, unit: str) -> dict:
    return {"value": value, "unit": unit}


def run(node: Node, argv: list[str]) -> int:
    args, _unknown = _parser().parse_known_args(argv)
    print(f"aiperf profile: {args.url}{args.endpoint} model {args.model}, concurrency {args.concurrency}", flush=True)
    rng = random.Random(args.random_seed)
    url = args.url.rstrip("/") + args.endpoint
    # the frontend's own /metrics, which AIPerf finds from --url, then the ones --server-metrics names
    endpoints = list(dict.fromkeys([args.url.rstrip("/") + "/metrics", *args.server_metrics]))
    before = {u: m for u, (m, e) in ((u, _scrape(u)) for u in endpoints) if e is None}
    began = time.monotonic()
    probes = [post_json(url, {"model": args.model, "max_tokens": 16, "stream": False,
                              "messages": [{"role": "user", "content": "hello"}]}) for _ in range(PROBES)]
    errors = [e for _, _, e in probes if e]
    servers = sorted({s for _, s, _ in probes if s})
    answered = not errors
    base_ms = 1000 * (sum(t for t, _, e in probes if not e) / max(len(probes) - len(errors), 1))
    longest = args.max_context_length or 131072
    records: list[dict] = []
    start_ns = time.time_ns()
    for lane in range(max(args.concurrency, 1)):
        clock = start_ns + lane * 1_000_000
        phases = ["warmup"] * args.warmup_requests_per_lane + ["profiling"] * TURNS_PER_LANE
        for turn, phase in enumerate(phases):
            isl = rng.randint(min(8192, longest // 2), max(min(65536, longest - 1024), 1))
            osl = 1 if phase == "warmup" else rng.randint(64, 1024)
            ttft = max(base_ms, 0.1) * (1.0 + (turn % 7) / 10.0)
            itl = 4.0 * (1.0 + (lane % 5) / 20.0)
            latency = ttft + itl * (osl - 1)
            metadata = {"conversation_id": f"lane-{lane}", "turn_index": turn, "benchmark_phase": phase,
                        "request_start_ns": clock, "request_end_ns": clock + int(latency * 1e6)}
            if answered:
                records.append({"metadata": metadata, "metrics": {
                    "request_latency": _metric(latency, "ms"), "time_to_first_token": _metric(ttft, "ms"),
                    "inter_token_latency": _metric(itl, "ms"), "input_sequence_length": _metric(isl, "tokens"),
                    "output_sequence_length": _metric(osl, "tokens")}, "error": None})
            else:
                records.append({"metadata": metadata, "metrics": {},
                                "error": {"type": "ConnectionError", "message": errors[0]}})
            clock = metadata["request_end_ns"] + 1_000_000
    after = {u: m for u, (m, e) in ((u, _scrape(u)) for u in endpoints) if e is None}
    profiled = [r for r in records if r["metadata"]["benchmark_phase"] == "profiling"]
    failed = sum(1 for r in profiled if r["error"])
    os.makedirs(args.output_artifact_dir, exist_ok=True)
    with open(os.path.join(args.output_artifact_dir, "profile_export.jsonl"), "w") as out:
        for record in records:
            out.write(json.dumps(record) + "\n")
    aggregate = {"request_count": {"unit": "requests", "avg": len(profiled) - failed},
                 "error_request_count": {"unit": "requests", "avg": failed},
                 "completed_request_count": {"unit": "requests", "avg": len(profiled)}}
    with open(os.path.join(args.output_artifact_dir, "profile_export_aiperf.json"), "w") as out:
        json.dump(aggregate, out, indent=2)
    if after:
        _export_server_metrics(args.output_artifact_dir, endpoints, before, after, time.monotonic() - began)
    if common.CALL:
        with open(common.CALL + ".aiperf.json", "w") as f:
            json.dump({"url": url, "servers": servers, "errors": errors, "metrics_endpoints": sorted(after)}, f)
    if profiled and failed / len(profiled) > args.failed_request_threshold:
        print(f"aiperf: {failed} of {len(profiled)} requests failed, over the threshold "
              f"{args.failed_request_threshold:g}: {errors[0]}", file=sys.stderr)
        return 1
    print(f"aiperf: {len(profiled) - failed} of {len(profiled)} requests completed", flush=True)
    return 0
