"""Renderers: pure functions from findings to text.

``RENDERERS`` is the single source of the ``--format`` choices.
"""

from __future__ import annotations

from typing import Callable

from ..findings import Finding
from . import text, json_format

Renderer = Callable[[list[Finding]], str]

RENDERERS: dict[str, Renderer] = {
    "text": text.render,
    "json": json_format.render,
}
