"""The calls the stand-ins recorded: which program, with which argv, environment and working directory, in order."""

from __future__ import annotations

import fnmatch
import json
from dataclasses import dataclass, field
from pathlib import Path


def _is_option(word: str) -> bool:
    return word.startswith("-") and word != "-m"


@dataclass(frozen=True)
class Call:
    """One recorded run of a stand-in program."""

    name: str  # the shim's name: vllm, python3, srun, ...
    argv: tuple[str, ...]  # as the program received it, argv[0] its path
    env: dict[str, str] = field(hash=False)
    cwd: str
    base: Path  # the record's files without their suffix (programs may add some: ``.client.json``)

    @property
    def args(self) -> tuple[str, ...]:
        return self.argv[1:]

    def extra(self, suffix: str) -> dict | None:
        """A JSON file the program wrote beside its record (the client's ``.client.json``)."""
        path = self.base.with_name(self.base.name + suffix)
        return json.loads(path.read_text()) if path.is_file() else None

    def launched(self, patterns: tuple[str, ...]) -> tuple[str, tuple[str, ...]] | None:
        """(pattern, the words after it) when this call is a server launch of one of ``patterns``.

        Patterns are ci-tools' ``server-patterns`` (``vllm serve``, ``python* -m sglang.launch_server``):
        words read as globs, the first matched on the program's name, interpreter options between the
        pattern's words skipped (``python3 -u -m ...``).
        """
        program, args = self.argv[0].rsplit("/", 1)[-1], self.args
        for pattern in patterns:
            words = pattern.split()
            if not words or not fnmatch.fnmatchcase(program, words[0]):
                continue
            at = 0
            for word in words[1:]:
                while (at < len(args) and _is_option(args[at]) and not _is_option(word)
                       and not fnmatch.fnmatchcase(args[at], word)):
                    at += 1
                if at >= len(args) or not fnmatch.fnmatchcase(args[at], word):
                    break
                at += 1
            else:
                return pattern, args[at:]
        return None

    def is_client(self) -> bool:
        """A run of InferenceX's benchmark client (``python3 .../utils/bench_serving/benchmark_serving.py``)."""
        return self.name in ("python3", "python") and any(a.endswith("benchmark_serving.py") for a in self.args[:3])


def _split(data: bytes) -> list[str]:
    parts = data.split(b"\0")
    if parts and parts[-1] == b"":
        parts.pop()
    return [p.decode("utf-8", "surrogateescape") for p in parts]


def read_calls(log: Path) -> list[Call]:
    """Every call recorded under ``log`` (an installation's ``log/``), in the order they started."""
    calls = []
    for cwd_file in sorted(log.glob("*.cwd"), key=lambda p: (int(p.name.split("-", 1)[0]), p.name)):
        base = cwd_file.with_suffix("")
        try:
            argv = _split(base.with_name(base.name + ".argv").read_bytes())
            env_items = _split(base.with_name(base.name + ".environ").read_bytes())
            cwd = cwd_file.read_text()
        except OSError:
            continue
        env = dict(item.split("=", 1) for item in env_items if "=" in item)
        calls.append(Call(base.name.split("-", 2)[2], tuple(argv), env, cwd, base))
    return calls
