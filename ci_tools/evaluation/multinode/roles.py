"""A multinode evaluation as one :class:`RecipeEval`: a server per role, each with its own env.

``RecipeEval.env`` stays the one environment consumers read without knowing
roles: a variable every role gets with the same value keeps it; one whose
value differs by role is unknown there, with each role's value as an
alternative (``server_env`` has the exact value per role).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from ...findings import Location
from ...shell.model import RecipeEval, ServerFlag, Value


# The roles of a disaggregated job, in the order results list them.
ROLES = ("prefill", "decode")
# vLLM reads `--kv-transfer-config` and `--kv_transfer_config` alike; llm-d's server.sh writes the latter.
_KV_TRANSFER_FLAGS = ("--kv-transfer-config", "--kv_transfer_config")


def server_role(flags: list[ServerFlag], rank: str) -> str:
    """The role a server line takes: its ``--disaggregation-mode``, else the ``kv_role`` of its KV-transfer
    config, else the node's place (rank 0 runs prefill)."""
    for f in flags:
        if f.name == "--disaggregation-mode" and f.value is not None and f.value.text in ROLES:
            return f.value.text or ""
    for f in flags:
        if f.name in _KV_TRANSFER_FLAGS and f.value is not None and f.value.text:
            try:
                kv = json.loads(f.value.text)
            except ValueError:
                continue
            role = {"kv_producer": "prefill", "kv_consumer": "decode"}.get(str(kv.get("kv_role")))
            if role:
                return role
    return "prefill" if rank == "0" else "decode"


@dataclass(frozen=True)
class RoleCommand:
    """One role's server command line: its flags, where the command is, and its environment."""

    role: str
    flags: tuple[ServerFlag, ...]
    location: Location
    env: dict[str, Value]


def merged_env(envs: list[tuple[str, dict[str, Value]]]) -> dict[str, Value]:
    out: dict[str, Value] = {}
    names = sorted({name for _, env in envs for name in env})
    for name in names:
        present = [(role, env[name]) for role, env in envs if name in env]
        texts = {v.text for _, v in present}
        first = present[0][1]
        if len(texts) == 1 and len(present) == len(envs):
            out[name] = first
            continue
        shown = ", ".join(f"{role}={v.text if v.text is not None else '?'}" for role, v in present)
        missing = [role for role, env in envs if name not in env]
        if missing:
            shown += ", unset for " + ", ".join(missing)
        out[name] = Value(None, first.location, True, f"differs by role: {shown}", tuple(v for _, v in present))
    return out


def role_eval(recipe: str, commands: list[RoleCommand], errors: list[str] | None = None, *,
              kind: str = "script") -> RecipeEval:
    result = RecipeEval(recipe=recipe, kind=kind)
    result.servers = [list(c.flags) for c in commands]
    result.server_command = [c.location for c in commands]
    result.roles = [c.role for c in commands]
    result.server_env = [c.env for c in commands]
    result.env = merged_env([(c.role, c.env) for c in commands])
    result.variables = dict(result.env)
    result.errors = list(errors or [])
    return result


def unreached(recipe: str, reason: str, kind: str = "script") -> RecipeEval:
    """A job whose server command line is not reached, and why."""
    return RecipeEval(recipe=recipe, kind=kind, errors=[reason])
