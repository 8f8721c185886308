"""Step outputs for ``$GITHUB_OUTPUT``, each in a heredoc with a random delimiter.

A fixed delimiter could be ended early by a value containing it; a random
one, checked against the value, cannot.  Values here are validated data
(JSON, SHAs, numbers), never comment text, but the format does not rely on it.
"""

from __future__ import annotations

import re
import secrets
from pathlib import Path
from typing import Mapping

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*\Z")


def format_outputs(values: Mapping[str, str]) -> str:
    out: list[str] = []
    for name, value in values.items():
        if not _NAME.match(name):
            raise ValueError(f"invalid output name {name!r}")
        while True:
            delimiter = f"ghadelimiter_{secrets.token_hex(16)}"
            if delimiter not in value:
                break
        out.append(f"{name}<<{delimiter}\n{value}\n{delimiter}\n")
    return "".join(out)


def write_outputs(path: str | Path, values: Mapping[str, str]) -> None:
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(format_outputs(values))
