"""What the launch step's script exports before it starts the fleet's launcher.

The script is bash (``export RESULT_FILENAME=...``, ``export
GPU_COUNT=$((TP * PP_SIZE * PCP_SIZE))``, ``export ${{ join(...) }}`` of a
worker's ``additional-settings``), so it is run by the recipe interpreter
with the step's environment; what it exports afterwards joins the
environment.  Many jobs give the same script and the same values of the
variables it mentions, so results are cached on exactly that.
"""

from __future__ import annotations

import re
from typing import Mapping

from ...bounded import BoundedDict
from ...config import ProjectConfig
from ...findings import Location
from ...revision.snapshot import Snapshot
from ...shell.interp import Interpreter
from ...shell.model import Value
from ...shell.parse import parse_script
from ...shell.state import ArrayVal
from .workflow import UNKNOWN_VAR

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_CACHE: BoundedDict[tuple[str, str, tuple[tuple[str, str | None], ...]], dict[str, str | None]] = BoundedDict(10_000)


def script_exports(script: str, env: Mapping[str, str | None], origin: Location, config: ProjectConfig,
                   snapshot: Snapshot) -> dict[str, str | None]:
    """Variables the script exports or changes, with their values (None: not known)."""
    mentioned = tuple(sorted((n, env[n]) for n in set(_WORD.findall(script)) if n in env))
    key = (origin.path, script, mentioned)
    found = _CACHE.get(key)
    if found is not None:
        return found
    interp = Interpreter(origin.path, config, snapshot)
    state = interp.state
    for name, text in mentioned:
        state.vars[name] = Value(text, origin)
        state.exported.add(name)
    state.vars[UNKNOWN_VAR] = Value(None, origin)
    interp.run(parse_script(origin.path, script.encode()))
    out: dict[str, str | None] = {}
    for name in sorted(state.exported):  # a set: in name order, so that every run prints the same JSON
        binding = state.vars.get(name)
        if binding is None or name == UNKNOWN_VAR:
            continue
        value = binding.joined() if isinstance(binding, ArrayVal) else binding
        text = value.text if not value.conditional else None
        if name not in env or env[name] != text:
            out[name] = text
    return _CACHE.put(key, out)
