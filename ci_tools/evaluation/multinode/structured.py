"""Structured srt-slurm flag values as keys of their flag (:attr:`ServerFlag.keys`), as single-node recipes give them.

A dict-valued backend arg (``speculative-config: {method: mtp}``), a string
holding a JSON object (``compilation-config: '{"level": 3}'``) and trtllm's
engine YAML stay one flag, with its value as srt-slurm writes it; their
keys are :class:`~ci_tools.shell.model.FlagKey` entries addressed as
``--flag.key.path`` (``RecipeEval.flag_values`` / ``key_values``), with the
same paths and texts as :mod:`ci_tools.shell.structured` gives a JSON or
YAML value in a bash recipe: nested mappings joined with ``.``, list
positions as ``[i]``, a list of scalars as one compact JSON key
(``[1,2,4]``), scalars as written (``0.90``, ``true``, ``null``), strings
unquoted.  Each key points at the line that writes it.
"""

from __future__ import annotations

from typing import Any

from ...findings import Location
from ...shell.model import FlagKey, Value
from ...shell.structured import document_keys, plain_text, scalar_list_text
from .located import Located


def located_keys(value: Located) -> tuple[FlagKey, ...]:
    """The keys of a YAML mapping (empty when it is not one), each at its own line."""
    out: list[FlagKey] = []
    if value.is_map:
        _walk(value, "", out)
    return tuple(out)


def json_keys(text: str, location: Location) -> tuple[FlagKey, ...]:
    """The keys of a JSON object written in one string (all at that string's position); empty if it is not one."""
    if not text.lstrip().startswith("{"):
        return ()
    return document_keys(Value(text, location))


def item_keys(item: Located) -> tuple[FlagKey, ...]:
    """The keys of a config value that is a mapping, or a string holding a JSON object."""
    if item.is_map:
        return located_keys(item)
    if isinstance(item.value, str):
        return json_keys(item.value, item.location)
    return ()


def _walk(node: Located, prefix: str, out: list[FlagKey]) -> None:
    children: Any = (node.value.items() if node.is_map
                     else ((f"[{i}]", child) for i, child in enumerate(node.value)))
    for name, child in children:
        path = f"{prefix}{name}" if name.startswith("[") else f"{prefix}.{name}" if prefix else name
        if (child.is_map and child.value) or (child.is_list and any(c.is_map or c.is_list for c in child.value)):
            _walk(child, path, out)
        else:
            out.append(FlagKey(path, Value(_leaf_text(child), child.location)))


def _leaf_text(leaf: Located) -> str:
    value = leaf.value
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return scalar_list_text([x.plain() for x in value])
    if isinstance(value, dict):
        return "{}"
    return leaf.written if leaf.written is not None else plain_text(value)
