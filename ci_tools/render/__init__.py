"""Renderers: pure functions from findings to text.

``RENDERERS`` is the single source of the ``--format`` choices.  The
``github`` format also appends the full table to ``$GITHUB_STEP_SUMMARY``
(:mod:`ci_tools.render.summary_file`; the CLI layer calls it, since a
renderer only returns text).
"""

from __future__ import annotations

from typing import Callable

from ..findings import Finding
from . import github, json_format, markdown, sarif, summary_file, text

__all__ = ["RENDERERS", "Renderer", "summary_file"]

Renderer = Callable[[list[Finding]], str]

RENDERERS: dict[str, Renderer] = {
    "text": text.render,
    "json": json_format.render,
    "github": github.render,
    "sarif": sarif.render,
    "markdown": markdown.render,
}
