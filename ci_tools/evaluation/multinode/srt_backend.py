"""A resolved srt-slurm config as the worker command line of each role.

How srt-slurm turns ``backend.<type>_config.<mode>`` into a command line
(NVIDIA/srt-slurm ``src/srtctl/backends/{sglang,vllm,trtllm}.py``, the same
in every tag the InferenceX launchers pin, v1.0.25 to v1.0.53):

- sglang and vllm: every key of the mode's mapping, in sorted key order,
  becomes ``--<key with _ as ->``; ``true`` is a bare flag, ``false`` and
  ``null`` are left out, a list gives its items as separate words, anything
  else is ``str(value)`` (a mapping therefore as Python's repr).  Before
  them srt-slurm adds ``--disaggregation-mode <mode>`` to prefill and decode
  workers, the served model name, and for vllm ``--kv-transfer-config``
  from ``connector`` (default ``nixl``; ``null``/``none`` for none);
  sglang drops ``model-path``, ``served-model-name`` and ``nccl-port`` from
  the mapping (it passes its own).
- trtllm: the mode's mapping is written verbatim as an engine YAML passed
  with ``--extra-engine-args``; its keys are that flag's keys
  (``--extra-engine-args.<key>``, see :mod:`.structured`), as are the keys
  of a mapping or JSON value given to any flag.

Flags that depend on the allocation (ports, addresses, node ranks, device
ids, the model mount) are left out: they are not in the recipe.  Each
role's environment is ``backend.<mode>_environment`` then the top-level
``environment`` (which wins), as srt-slurm's worker stage merges them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Collection

from ...findings import Location, with_article
from ...shell.model import ServerFlag, Value
from .located import Located
from .structured import item_keys, json_keys, located_keys

ROLES = ("prefill", "decode", "aggregated")
_WORKER_COUNTS = {"prefill": "prefill_workers", "decode": "decode_workers", "aggregated": "agg_workers"}
_ENV_SECTIONS = {"prefill": "prefill_environment", "decode": "decode_environment", "aggregated": "aggregated_environment"}
_CONNECTORS = {
    "nixl": {"kv_connector": "NixlConnector", "kv_role": "kv_both"},
    "lmcache": {"kv_connector": "LMCacheConnectorV1", "kv_role": "kv_both"},
    "kvbm": {"kv_connector": "DynamoConnector", "kv_connector_module_path": "kvbm.vllm_integration.connector",
             "kv_role": "kv_both"},
}
_SGLANG_OWN = {"model-path", "model_path", "served-model-name", "served_model_name", "nccl-port", "nccl_port"}
# Flags the direct `vllm serve` frontend derives from the allocation and strips from the recipe.
_VLLM_ORCHESTRATION = {"headless", "host", "port", "master-addr", "nnodes", "node-rank"}
# Of those, the ones that place a worker's ranks on the allocation's nodes: a multinode job's launcher gives them at
# run time, so a recipe that does not spell them does not leave them out.
PLACEMENT_FLAGS = frozenset("--" + name for name in _VLLM_ORCHESTRATION - {"host", "port"})
SRT_NOTE = "added by srt-slurm"


class BackendError(Exception):
    """The config names a backend or frontend this model does not know."""


@dataclass(frozen=True)
class RoleServer:
    role: str
    command: str
    location: Location
    flags: tuple[ServerFlag, ...]
    env: dict[str, Value]


def _int(value: Located | None) -> int | None:
    v = value.value if value is not None else None
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def roles_of(config: Located, modes: Located | None) -> list[str]:
    """Roles the job runs: workers counted in ``resources``, else the modes the backend configures."""
    resources = config.get("resources")
    counted = {role: _int(resources.get(key)) for role, key in _WORKER_COUNTS.items()} if resources else {}
    if any(n is not None for n in counted.values()):
        return [r for r in ROLES if (counted.get(r) or 0) > 0]
    return [r for r in ROLES if modes is not None and modes.get(r) is not None]


def _flag_name(key: str) -> str:
    return "--" + key.replace("_", "-")


def cli_flags(mode: Located | None, skip: Collection[str] = ()) -> list[ServerFlag]:
    """srt-slurm's ``_config_to_cli_args`` over one mode's mapping, with positions and ``--flag.key`` leaves."""
    out: list[ServerFlag] = []
    if mode is None or not mode.is_map:
        return out
    for key in sorted(mode.value):
        if key in skip:
            continue
        item = mode.value[key]
        name = _flag_name(key)
        where = item.key or item.location
        plain = item.plain()
        if isinstance(plain, bool):
            if plain:
                out.append(ServerFlag(name, None, where))
        elif isinstance(plain, list):
            out.append(ServerFlag(name, Value(" ".join(str(v) for v in plain), item.location), where))
        elif plain is not None:
            out.append(ServerFlag(name, Value(str(plain), item.location), where, keys=item_keys(item)))
    return out


def role_env(backend: Located, config: Located, role: str) -> dict[str, Value]:
    env: dict[str, Value] = {}
    for section in (backend.get(_ENV_SECTIONS[role]), config.get("environment")):
        if section is not None and section.is_map:
            for name, value in section.value.items():
                plain = value.plain()
                env[name] = Value(_env_text(plain), value.location)
    return env


def _env_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value) if isinstance(value, (dict, list)) else str(value)


def _srt_value(text: str | None, where: Location, why: str) -> Value:
    return Value(text, where, expression=why)


def _mode_flag(role: str, where: Location) -> list[ServerFlag]:
    if role == "aggregated":
        return []
    return [ServerFlag("--disaggregation-mode", _srt_value(role, where, f"{SRT_NOTE} for {with_article(role)} worker"), where)]


def _served_name(modes: Located | None, where: Location) -> list[ServerFlag]:
    """srt-slurm passes the first served-model-name among prefill, aggregated, decode (else the model's name)."""
    for mode in ("prefill", "aggregated", "decode"):
        section = modes.get(mode) if modes is not None else None
        for key in ("served-model-name", "served_model_name"):
            item = section.get(key) if section is not None else None
            if item is not None and item.value:
                return [ServerFlag("--served-model-name", Value(str(item.value), item.location), where)]
    return []


def _kv_events(backend: Located, role: str, where: Location) -> list[ServerFlag]:
    setting = backend.get("kv_events_config")
    plain = setting.plain() if setting is not None else None
    if isinstance(plain, dict):
        plain = plain.get("aggregated" if role == "aggregated" else role)
    elif plain is True and role == "aggregated":
        plain = None
    if not plain:
        return []
    loc = setting.location if setting is not None else where
    return [ServerFlag("--kv-events-config", _srt_value(None, loc, "JSON with the endpoint port srt-slurm allocates"), loc)]


def _sglang(backend: Located, modes: Located | None, role: str, frontend: str) -> tuple[str, list[ServerFlag]]:
    mode = modes.get(role) if modes is not None else None
    where = _where(mode, modes, backend)
    command = "python3 -m sglang.launch_server" if frontend == "sglang" else "python3 -m dynamo.sglang"
    flags = _served_name(modes, where) + _mode_flag(role, where) + _kv_events(backend, role, where)
    return command, flags + cli_flags(mode, _SGLANG_OWN)


def _vllm(backend: Located, modes: Located | None, role: str, frontend: str) -> tuple[str, list[ServerFlag]]:
    mode = modes.get(role) if modes is not None else None
    where = _where(mode, modes, backend)
    if frontend == "vllm":
        skip = {k for k in (mode.value if mode is not None and mode.is_map else {})
                if k.replace("_", "-") in _VLLM_ORCHESTRATION or k == "connector"}
        return "vllm serve", cli_flags(mode, skip)
    flags = _served_name(modes, where) + _mode_flag(role, where)
    own = mode.get("connector") if mode is not None else None
    connector = own if own is not None else backend.get("connector")
    if connector is None:
        text: Any = "nixl"
        loc = Location(backend.location.path, backend.location.line, note="srt-slurm default connector")
    else:
        text, loc = connector.value, connector.location
    if text is not None and str(text) not in ("null", "none"):
        preset = _CONNECTORS.get(str(text).lower())
        value = json.dumps(preset) if preset is not None else str(text)
        flags.append(ServerFlag("--kv-transfer-config", _srt_value(value, loc, f"connector {text}"), loc,
                                keys=json_keys(value, loc)))
    flags += _kv_events(backend, role, where)
    return "python3 -m dynamo.vllm", flags + cli_flags(mode, {"connector"})


def _trtllm(backend: Located, modes: Located | None, role: str, frontend: str) -> tuple[str, list[ServerFlag]]:
    mode = modes.get(role) if modes is not None else None
    where = _where(mode, modes, backend)
    mode_name = "agg" if role == "aggregated" else role
    engine = _srt_value(f"/logs/trtllm_config_{mode_name}.yaml", where, f"the {role} section written as engine YAML")
    if frontend == "trtllm_serve":
        flags = []
        for key in ("tensor_parallel_size", "moe_expert_parallel_size", "pipeline_parallel_size"):
            item = mode.get(key) if mode is not None else None
            if item is not None and item.value is not None:
                flags.append(ServerFlag(f"--{key}", Value(str(item.value), item.location), item.key or where))
        flags.append(_engine_flag("--config", engine, where, mode))
        return "trtllm-serve", flags
    flags = _mode_flag(role, where) + [_engine_flag("--extra-engine-args", engine, where, mode)]
    publish = backend.get("publish_events_and_metrics")
    if publish is not None and publish.value is True:
        flags.append(ServerFlag("--publish-events-and-metrics", None, publish.key or publish.location))
    return "python3 -m dynamo.trtllm", flags


def _engine_flag(name: str, engine: Value, where: Location, mode: Located | None) -> ServerFlag:
    """The engine YAML flag, every key of the file as a key (``null`` included: trtllm reads it,
    e.g. ``cuda_graph_config: null``)."""
    keys = located_keys(mode) if mode is not None else ()
    return ServerFlag(name, engine, where, keys=keys, keys_file=(engine.text or "") if keys else "")


def _where(mode: Located | None, modes: Located | None, backend: Located) -> Location:
    for node in (mode, modes, backend):
        if node is not None:
            return node.key or node.location
    return backend.location


_BUILDERS = {"sglang": ("sglang_config", _sglang), "vllm": ("vllm_config", _vllm), "trtllm": ("trtllm_config", _trtllm)}


def role_servers(config: Located) -> list[RoleServer]:
    """The worker command line and environment of each role the resolved config runs."""
    backend = config.get("backend")
    if backend is None or not backend.is_map:
        raise BackendError("the config has no backend mapping")
    kind = backend.get("type")
    backend_type = str(kind.value) if kind is not None and kind.value is not None else "sglang"
    if backend_type not in _BUILDERS:
        raise BackendError(f"backend.type {backend_type!r} is not modelled (sglang, vllm and trtllm are)")
    section, build = _BUILDERS[backend_type]
    modes = backend.get(section)
    frontend_node = config.get("frontend")
    frontend_type = frontend_node.get("type") if frontend_node is not None else None
    frontend = str(frontend_type.value) if frontend_type is not None and frontend_type.value else "dynamo"
    out = []
    for role in roles_of(config, modes):
        command, flags = build(backend, modes, role, frontend)
        mode = modes.get(role) if modes is not None else None
        out.append(RoleServer(role, command, _where(mode, modes, backend), tuple(flags), role_env(backend, config, role)))
    return out
