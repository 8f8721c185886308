"""The inference servers the recipes start: vLLM, SGLang, ATOM, TensorRT-LLM, a router.

Whatever the program, the stand-in listens where the real one would
(``--host``, ``--port`` or ATOM's ``--server-port``, else the program's
default port; a router's ``--prometheus-port``, LMCache's ``--http-port``, llm-d's
EPP's gRPC and health ports and Envoy's listeners too), logs like a server
starting, and answers what recipes and clients poll: ``/health``,
``/health_generate``, ``/healthcheck`` (LMCache), ``/ready`` (Envoy's admin), ``/v1/models``, ``/metrics`` (what it
answered, as Prometheus counters named as its kind names them), ``/get_model_info``,
``/server_info``, ``/version``, ``/flush_cache`` (as SGLang answers it), and ``POST /v1/completions``,
``/v1/chat/completions``, ``/generate`` with a short completion (streamed as
server-sent events when the request asks for ``stream``).  Every answer
carries ``X-Standin-Server: host:port:pid`` so a client can tell which server
it reached.  It runs until it is killed, like a real server.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import socketserver
import sys
import threading
import time

from common import Node, on_this_node, option_value, this_node

# Default ports of the real programs, when the command line names none.
DEFAULT_PORTS = {"vllm": 8000, "sglang": 30000, "atom": 8000, "trtllm": 8000, "router": 30000, "lmcache": 5555,
                 "mooncake": 50051, "sidecar": 8000, "epp": 9002}
# Ports a program opens besides its serving one: a router's metrics, LMCache's HTTP, llm-d's EPP's health and
# metrics (its gRPC port is the serving one; a stand-in answers HTTP on each, which a TCP probe accepts).
_MORE_PORTS = (("--prometheus-port", "--metrics-port"), ("--http-port",), ("--grpc-health-port",))
# Programs only their own node reaches (at 127.0.0.1): llm-d's EPP and Envoy on the coordinator.
_NODE_LOCAL = frozenset({"epp", "envoy"})
# A listener of an Envoy configuration: `socket_address: { address: 0.0.0.0, port_value: 8080 }` (the
# configuration's clusters name the upstreams' addresses, 127.0.0.1 and others, which it does not bind).
_ENVOY_LISTENER = re.compile(r"socket_address:\s*\{\s*address:\s*0\.0\.0\.0\s*,\s*port_value:\s*(\d+)")


# The prefix of the Prometheus metrics a kind of server exposes: SGLang's "sglang:", vLLM's "vllm:", ATOM's
# "atom:" (an agentic recipe requires its framework's metrics of the trace replay's scrape). The others expose
# none a stand-in could name as they do (TensorRT-LLM's /metrics is a JSON list of iteration statistics):
# InferenceX's aggregation refuses metrics of a backend it does not know, and reads no metrics as none.
METRIC_PREFIXES = {"sglang": "sglang:", "vllm": "vllm:", "atom": "atom:"}


class Answered:
    """What one server answered, as its ``/metrics`` counts it: requests, prompt tokens, generated tokens."""

    def __init__(self, prefix: str | None) -> None:
        self.prefix = prefix
        self._lock = threading.Lock()
        self.counts = {"num_requests": 0, "prompt_tokens": 0, "generation_tokens": 0}

    def add(self, prompt_tokens: int, generated_tokens: int) -> None:
        with self._lock:
            self.counts["num_requests"] += 1
            self.counts["prompt_tokens"] += prompt_tokens
            self.counts["generation_tokens"] += generated_tokens

    def exposition(self) -> bytes:
        """The Prometheus text format of the counts (each counter's sample named ``<family>_total``); nothing
        for a program with no prefix."""
        if self.prefix is None:
            return b""
        with self._lock:
            counts = dict(self.counts)
        lines = []
        for family, value in counts.items():
            name = self.prefix + family
            lines += [f"# HELP {name} {family.replace('_', ' ').capitalize()} answered.", f"# TYPE {name} counter",
                      f"{name}_total {value}"]
        return ("\n".join(lines) + "\n").encode()


def _served_model(kind: str, args: list[str]) -> str:
    named = option_value(args, "--served-model-name")
    if named:
        return named.split(",")[0].split()[0] if named.split() else named
    model = option_value(args, "--model-path", "--model")
    if model:
        return model
    positional = [a for a in args if not a.startswith("-")]
    return positional[0] if positional else "standin-model"


def _response(status: int, body: bytes, ctype: str, identity: str) -> bytes:
    reason = {200: "OK", 400: "Bad Request", 404: "Not Found"}.get(status, "OK")
    head = (f"HTTP/1.1 {status} {reason}\r\nContent-Type: {ctype}\r\nContent-Length: {len(body)}\r\n"
            f"X-Standin-Server: {identity}\r\nConnection: close\r\n\r\n")
    return head.encode() + body


def _json(data: object, status: int = 200) -> tuple[int, bytes, str]:
    return status, json.dumps(data).encode(), "application/json"


def _flushed() -> tuple[int, bytes, str]:
    """SGLang's answer to a cache flush begins "Cache flushed."; the agentic trace replay retries until it
    reads those words."""
    return 200, b"Cache flushed.\n", "text/plain"


def answer(method: str, path: str, raw: bytes, model: str, argv: list[str],
           answered: Answered) -> tuple[int, bytes, str]:
    """(status, body, content type) for one request; a completion is counted in ``answered``."""
    path = path.split("?", 1)[0]
    if path == "/flush_cache":  # GET in older SGLang releases, POST now
        return _flushed()
    if method == "GET":
        if path in ("/health", "/health_generate", "/healthcheck", "/ping", "/readiness", "/liveness", "/ready"):
            return 200, b"", "text/plain"
        if path == "/v1/models":
            return _json({"object": "list", "data": [{"id": model, "object": "model", "owned_by": "standin",
                                                      "max_model_len": 131072}]})
        if path == "/metrics":
            if argv[:1] == ["trtllm"]:
                return _json([])  # iteration statistics, none kept
            return 200, answered.exposition(), "text/plain; version=0.0.4"
        if path in ("/get_model_info", "/model_info"):
            return _json({"model_path": model, "is_generation": True})
        if path in ("/server_info", "/get_server_info"):
            return _json({"model_path": model, "standin": True, "argv": argv})
        if path == "/version":
            return _json({"version": "0.0.0+standin"})
        return _json({"error": f"no route {path}"}, 404)
    try:
        request = json.loads(raw or b"{}")
    except ValueError:
        return _json({"error": "request body is not JSON"}, 400)
    if not isinstance(request, dict):
        return _json({"error": "request body is not a JSON object"}, 400)
    served = request.get("model") or model
    tokens = int(request.get("max_tokens") or request.get("max_completion_tokens") or 16)
    text = " ".join(["tok"] * min(tokens, 64))
    usage = {"prompt_tokens": 1, "completion_tokens": tokens, "total_tokens": tokens + 1}
    if path == "/v1/completions":
        body: dict = {"id": "cmpl-standin", "object": "text_completion", "created": int(time.time()),
                      "model": served, "usage": usage,
                      "choices": [{"index": 0, "text": text, "finish_reason": "length", "logprobs": None}]}
    elif path == "/v1/chat/completions":
        body = {"id": "chatcmpl-standin", "object": "chat.completion", "created": int(time.time()), "model": served,
                "usage": usage, "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                                             "finish_reason": "length"}]}
    elif path == "/generate":
        body = {"text": text, "meta_info": {"completion_tokens": tokens, "prompt_tokens": 1}}
    elif path in ("/start_profile", "/stop_profile", "/reset_prefix_cache"):
        return 200, b"", "text/plain"
    else:
        return _json({"error": f"no route {path}"}, 404)
    answered.add(usage["prompt_tokens"], tokens)
    if request.get("stream"):
        return 200, b"data: " + json.dumps(body).encode() + b"\n\ndata: [DONE]\n\n", "text/event-stream"
    return _json(body)


class _Handler(socketserver.StreamRequestHandler):
    def handle(self) -> None:
        line = self.rfile.readline(65536).decode("latin-1").split()
        if len(line) < 2:
            return
        length = 0
        while True:
            header = self.rfile.readline(65536)
            if header in (b"\r\n", b"\n", b""):
                break
            name, _, value = header.decode("latin-1").partition(":")
            if name.strip().lower() == "content-length":
                length = int(value.strip() or 0)
        raw = self.rfile.read(length) if length else b""
        server = self.server
        status, body, ctype = answer(line[0], line[1], raw, server.model, server.argv,  # type: ignore[attr-defined]
                                     server.answered)  # type: ignore[attr-defined]
        print(f"INFO:     {self.client_address[0]} - \"{line[0]} {line[1]}\" {status}", flush=True)
        self.wfile.write(_response(status, body, ctype, server.identity))  # type: ignore[attr-defined]


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


def _listen(host: str, port: int, model: str, argv: list[str], answered: Answered) -> socketserver.TCPServer:
    httpd = _Server((host, port), _Handler)
    httpd.answered = answered  # type: ignore[attr-defined]
    httpd.identity = f"{this_node()[0]}:{port}:{os.getpid()}"  # type: ignore[attr-defined]
    httpd.model = model  # type: ignore[attr-defined]
    httpd.argv = argv  # type: ignore[attr-defined]
    return httpd


def _envoy_ports(args: list[str]) -> list[int] | str:
    """The listeners of ``envoy -c FILE`` (its admin one too), or why there are none."""
    path = option_value(args, "-c", "--config-path")
    if path is None:
        return "envoy: no configuration given (-c FILE)"
    try:
        with open(path) as f:
            ports = [int(p) for p in _ENVOY_LISTENER.findall(f.read())]
    except OSError as exc:
        return f"envoy: cannot read {path}: {exc.strerror}"
    return ports or f"envoy: {path} has no listener on 0.0.0.0"


def serve(node: Node, kind: str, args: list[str]) -> int:
    host = option_value(args, "--host") or "0.0.0.0"
    host = on_this_node(host)
    ports: list[int] = []
    found = _envoy_ports(args) if kind == "envoy" else []
    if isinstance(found, str):
        print(found, file=sys.stderr)
        return 1
    ports.extend(found)
    # The serving port (ATOM names it --server-port; llm-d's EPP --grpc-port), then the others.
    for names in (("--port", "--server-port", "--grpc-port"), *_MORE_PORTS):
        text = option_value(args, *names)
        if text is None and names[0] == "--port" and kind != "envoy":
            text = str(DEFAULT_PORTS.get(kind, 8000))
        if text is None:
            continue
        try:
            ports.append(int(text))
        except ValueError:
            print(f"error: argument {names[0]}: invalid int value: {text!r}", file=sys.stderr)
            return 2
    model = _served_model(kind, args)
    print(f"INFO: standin {kind} server for {model} (pid {os.getpid()})", flush=True)
    servers = []
    answered = Answered(METRIC_PREFIXES.get(kind))  # one count over every port the program serves
    for port in ports:
        try:
            servers.append(_listen(host, port, model, [kind, *args], answered))
        except OSError as exc:
            print(f"ERROR: [Errno {exc.errno}] error while attempting to bind on address ({host!r}, {port}): "
                  f"{exc.strerror}", file=sys.stderr, flush=True)
            return 1
    if kind in _NODE_LOCAL and host != "127.0.0.1" and this_node()[1] is not None:
        # llm-d's coordinator reaches its own EPP and Envoy at 127.0.0.1 (bash's /dev/tcp, which no stand-in
        # can point at the node): they answer on the machine's loopback address too, where no other node's
        # program listens on their ports
        for port in ports:
            try:
                servers.append(_listen("127.0.0.1", port, model, [kind, *args], answered))
            except OSError:
                pass  # taken: the node's own address still serves
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    for extra in servers[1:]:
        threading.Thread(target=extra.serve_forever, daemon=True).start()
    print(f"INFO:     Uvicorn running on http://{host}:{ports[0]} (Press CTRL+C to quit)", flush=True)
    print("INFO:     Application startup complete.", flush=True)
    print("The server is fired up and ready to roll!", flush=True)
    servers[0].serve_forever()
    return 0
