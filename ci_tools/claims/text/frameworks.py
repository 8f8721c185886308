"""The serving frameworks a sentence names ("the vLLM agentic lane", "SGLang 4,168 vs vLLM 4,199 tok/s")."""

from __future__ import annotations

import re

# How prose names each framework, and the word of the master configs' ``framework`` field it is
# ("dynamo-sglang" and "sglang-disagg" are SGLang's).  ("ATOM" only in capitals: "atom" is also a word.)
_NAMES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"(?<![\w-])vllm(?![\w-])", re.IGNORECASE), "vllm"),
    (re.compile(r"(?<![\w-])sglang(?![\w-])", re.IGNORECASE), "sglang"),
    (re.compile(r"(?<![\w-])(?:trt-?llm|tensorrt-llm)(?![\w-])", re.IGNORECASE), "trt"),
    (re.compile(r"(?<![\w-])ATOM(?![\w-])"), "atom"),
)


def frameworks_named(sentence: str) -> frozenset[str]:
    """The frameworks a sentence names, as words of the configs' ``framework`` field."""
    return frozenset(word for pattern, word in _NAMES if pattern.search(sentence))
