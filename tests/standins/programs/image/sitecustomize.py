"""The server image's Python packages, for the image's python3 (shims/python3.sh puts this directory first on
its path): recipes check that the packages their server needs import (``python3 -c 'from mooncake.store
import MooncakeDistributedStore'``, ``import cupy; import lmcache...``) and stop when they do not.  Here they
import, every submodule too, and what is taken from them is inert: calling it gives an empty string.

Its ``time.sleep`` waits at most 0.05 s, as the stand-in ``sleep`` does (shims/sleep.sh): what a script polls for
is there at once.  A node of a multi-node job polls another's port (the AMD chain's sync.py, every 5 s) while
that node's stand-in router serves a benchmark of a second or two: with real waits it would miss it.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
import time
import types

PACKAGES = frozenset({"aiter", "cupy", "deep_gemm", "flashinfer", "lmcache", "mooncake", "opentelemetry", "quark",
                      "rixl", "sglang", "sglang_router", "tilert", "torch", "triton", "vllm", "atom",
                      "tensorrt_llm"})


class _Inert(str):
    def __call__(self, *args: object, **kwargs: object) -> "_Inert":
        return _Inert("")

    def __getattr__(self, name: str) -> "_Inert":
        return _Inert("")


class _Module(types.ModuleType):
    def __getattr__(self, name: str) -> object:
        if name.startswith("__"):
            raise AttributeError(name)
        return _Inert("")


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname, path=None, target=None):  # type: ignore[no-untyped-def]
        if fullname.split(".", 1)[0] in PACKAGES:
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec):  # type: ignore[no-untyped-def]
        module = _Module(spec.name)
        module.__path__ = []
        return module

    def exec_module(self, module) -> None:  # type: ignore[no-untyped-def]
        return None


sys.meta_path.insert(0, _Finder())


_real_sleep = time.sleep


def _short_sleep(seconds: float) -> None:
    _real_sleep(min(seconds, 0.05))


time.sleep = _short_sleep
