"""Keys of structured flag values, addressable as ``--flag.key``.

A dict-valued backend arg (``speculative-config: {method: mtp}``), or a
string that holds a JSON object (``compilation-config: '{"level": 3}'``),
is one flag on the command line; each of its leaves is also listed as
``--flag.key`` (nested: ``--flag.a.b``) with the leaf's own value and source
position, so a claim about one key can be checked without parsing the
whole value.  Leaf texts are JSON scalars (``true``, ``3``, ``null``);
strings are given without quotes.
"""

from __future__ import annotations

import json
from typing import Any

from ..findings import Location
from ..recipes.model import ServerFlag, Value
from .located import Located


def scalar_text(value: Any) -> str:
    """A leaf as a JSON scalar, strings unquoted."""
    if isinstance(value, str):
        return value
    if isinstance(value, (bool, int, float)) or value is None:
        return json.dumps(value)
    return json.dumps(value, sort_keys=True, default=str)


def json_object(text: str) -> dict[str, Any] | None:
    """The object a string holds, when it is a JSON object; None otherwise."""
    stripped = text.strip()
    if not stripped.startswith("{"):
        return None
    try:
        loaded = json.loads(stripped)
    except ValueError:
        return None
    return loaded if isinstance(loaded, dict) else None


def located_leaves(flag: str, value: Located) -> list[ServerFlag]:
    """``--flag.key`` entries of a YAML mapping value, each at its own line."""
    out: list[ServerFlag] = []
    for key, child in value.value.items():
        name = f"{flag}.{key}"
        if child.is_map and child.value:
            out.extend(located_leaves(name, child))
        else:
            plain = child.plain()
            out.append(ServerFlag(name, Value(scalar_text(plain), child.location), child.key or child.location))
    return out


def json_leaves(flag: str, data: dict[str, Any], location: Location) -> list[ServerFlag]:
    """``--flag.key`` entries of a JSON object written in one string (all at that string's position)."""
    out: list[ServerFlag] = []
    for key, child in data.items():
        name = f"{flag}.{key}"
        if isinstance(child, dict) and child:
            out.extend(json_leaves(name, child, location))
        else:
            out.append(ServerFlag(name, Value(scalar_text(child), location), location))
    return out
