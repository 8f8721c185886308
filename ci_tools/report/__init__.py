"""Renderers: pure functions from findings to text.

``RENDERERS`` is the single source of the ``--format`` choices; each
renderer's module is imported when that format is used (a run prints one).
The ``github`` format also appends the full table to
``$GITHUB_STEP_SUMMARY`` (:mod:`ci_tools.report.summary_file`; the CLI layer
calls it, since a renderer only returns text).
"""

from __future__ import annotations

import importlib
from typing import Iterator, Mapping, Protocol

from ..findings import Finding
from .context import PLAIN, ReportContext

__all__ = ["RENDERERS", "Renderer", "ReportContext"]


class Renderer(Protocol):
    def __call__(self, findings: list[Finding], context: ReportContext = PLAIN) -> str: ...


# --format name -> the module under ci_tools.report whose `render` it is.
_MODULES = {"text": "text", "json": "json_format", "github": "github", "sarif": "sarif", "markdown": "markdown"}


class _Renderers(Mapping[str, Renderer]):
    def __getitem__(self, name: str) -> Renderer:
        render: Renderer = importlib.import_module(f"{__name__}.{_MODULES[name]}").render
        return render

    def __iter__(self) -> Iterator[str]:
        return iter(_MODULES)

    def __len__(self) -> int:
        return len(_MODULES)


RENDERERS: Mapping[str, Renderer] = _Renderers()
