"""Bash recipes as data: parsing and per-job partial evaluation.

Public API (imported lazily, so ``ci_tools.shell.model`` stays cheap to import):

- ``evaluate_job(job, config, snapshot) -> RecipeEval | None``
- ``evaluate_recipe(path, env, config, snapshot, env_location=None) -> RecipeEval``
"""

from __future__ import annotations

from typing import Any

__all__ = ["evaluate_job", "evaluate_recipe"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from . import evaluate

        return getattr(evaluate, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
