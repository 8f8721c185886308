"""Multinode recipes evaluated per role: srt-slurm YAML recipes and the AMD disaggregated scripts.

Public API:

- ``evaluate_multinode_job(job, config, snapshot) -> RecipeEval``: the
  server command line of each role (``RecipeEval.roles``), with its flags,
  its environment and their source lines; when no command line is reached,
  ``errors`` says why (external recipe, unknown selector, ...).
"""

from __future__ import annotations

from typing import Any

__all__ = ["evaluate_multinode_job"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from . import evaluate

        return getattr(evaluate, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
