"""Reading the env contract out of the repository's workflow files.

The sweep workflow (InferenceX: ``run-sweep.yml``) has one job per bucket of
matrix entries, each calling a reusable template with a ``with:`` mapping of
the entry's fields::

    sweep-single-node-8k1k:
      uses: ./.github/workflows/benchmark-tmpl.yml
      strategy: { matrix: { config: ${{ fromJson(...).single_node['8k1k'] }} } }
      with: { tp: ${{ matrix.config.tp }}, ... }

The template turns its inputs (with their defaults) into the environment:
its ``env:`` blocks (workflow, then job, then the launch step's) and the
launch step's script, which exports more (``RESULT_FILENAME``,
``GPU_COUNT``, a multinode worker's ``additional-settings``) before it
starts the fleet's launcher (``bash ./runners/launch_${RUNNER_NAME%%_*}.sh``).

Everything here is parsed once per snapshot; expressions are compiled to
closures.  Problems (a file that does not parse, an expression that does
not) are collected, not raised: the value concerned is unknown and the
caller reports the problem.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from importlib import resources
from typing import Any, Callable, Mapping

from ...findings import Location
from ...revision.snapshot import Snapshot
from ...revision.yamlpos import PosMap, YamlLoadError, load_yaml
from .expr import UNKNOWN, Compiled, Context, ExprError, compile_text, compile_value

BUILTIN = "built-in contract"
# What an expression the script cannot know becomes: a variable bound to an unknown value.
UNKNOWN_WORD = "${__ci_tools_unknown__}"
UNKNOWN_VAR = "__ci_tools_unknown__"
# `bash ./runners/launch_${RUNNER_NAME%%_*}.sh`: the call of the fleet's launcher.
_LAUNCHER_CALL = re.compile(r"(?m)^[ \t]*(?:bash|sh|source|\.)[ \t]+(?:\./)?(?P<path>[^\s;&|]*launch_[^\s;&|]*\.sh)")
_BUCKET = re.compile(r"\)(?P<chain>(?:\s*\.\s*[A-Za-z_][\w-]*|\s*\[\s*'[^']*'\s*\])+)\s*$")
_CHAIN_PART = re.compile(r"\.\s*([A-Za-z_][\w-]*)|\[\s*'([^']*)'\s*\]")
_EXPR = re.compile(r"^\s*\$\{\{(.*)\}\}\s*$", re.S)


@dataclass(frozen=True)
class EnvItem:
    name: str
    value: Compiled
    origin: Location


@dataclass(frozen=True)
class InputSpec:
    type: str  # string | boolean | number
    default: Any
    has_default: bool


@dataclass(frozen=True)
class LaunchStep:
    env: tuple[EnvItem, ...]
    # The script up to the launcher's call, its expressions substituted.
    script: Callable[[Context], str]
    origin: Location
    # Repository path of the launcher with `{fleet}` for ${RUNNER_NAME%%_*} and `{node}` for
    # $RUNNER_NAME; None when the step names no launcher.
    launcher: str | None


@dataclass(frozen=True)
class Upload:
    """An ``actions/upload-artifact`` step of the launch job: the files the fleet keeps of a job.

    ``paths`` renders the step's ``with.path`` (one pattern a line, ``!`` to
    exclude, relative to the workspace) for a context; an expression whose
    value is unknown there renders as :data:`UNKNOWN_WORD`.
    """

    paths: Callable[[Context], str]
    origin: Location


@dataclass(frozen=True)
class Template:
    path: str
    inputs: Mapping[str, InputSpec]
    env: tuple[EnvItem, ...]  # the workflow's env:, then the launch job's
    launch: LaunchStep | None
    uploads: tuple[Upload, ...] = ()


@dataclass(frozen=True)
class Caller:
    """A job of the sweep workflow: the bucket of entries it runs and the template it calls with them."""

    job: str
    bucket: tuple[str, ...]
    template: Template
    with_: tuple[tuple[str, Compiled], ...]
    origin: Location


@dataclass(frozen=True)
class Workflows:
    source: str  # the sweep workflow's path, or BUILTIN
    callers: Mapping[tuple[str, ...], Caller]
    problems: tuple[str, ...] = field(default=())


class _Reader:
    """Files of the repository, or of the built-in contract (where ``uses:`` paths resolve by name)."""

    def __init__(self, snapshot: Snapshot | None) -> None:
        self.snapshot = snapshot
        self.problems: list[str] = []
        self.reads: list[tuple[str, bytes | None]] = []  # every file read, for reusing the result

    def shown(self, path: str) -> str:
        return path if self.snapshot is not None else f"{BUILTIN} {path.rsplit('/', 1)[-1]}"

    def read(self, path: str) -> bytes | None:
        data = self._read(path)
        self.reads.append((path, data))
        return data

    def _read(self, path: str) -> bytes | None:
        if self.snapshot is not None:
            return self.snapshot.read(path)
        try:
            return (resources.files(__package__) / "builtin" / path.rsplit("/", 1)[-1]).read_bytes()
        except OSError:
            return None

    def load(self, path: str) -> PosMap | None:
        raw = self.read(path)
        if raw is None:
            self.problems.append(f"{self.shown(path)}: the workflow does not exist")
            return None
        try:
            data = load_yaml(raw, path).value
        except YamlLoadError as exc:
            self.problems.append(f"{self.shown(path)}:{exc.line}: {exc.message}")
            return None
        if not isinstance(data, PosMap):
            self.problems.append(f"{self.shown(path)}:1: expected a workflow (a mapping), found {type(data).__name__}")
            return None
        return data

    def compile(self, raw: Any, where: Location) -> Compiled:
        try:
            return compile_value(raw)
        except ExprError as exc:
            self.problems.append(f"{self.shown(where.path)}:{where.line}: {exc}; the value is taken as unknown")
            return lambda ctx: UNKNOWN


def _loc(path: str, holder: Any, key: Any) -> Location:
    if isinstance(holder, PosMap) and key in holder:
        line, col, end_line, end_col = holder.key_span(key)
        return Location(path, line, col, end_line, end_col)
    return Location(path)


def _env_items(reader: _Reader, path: str, block: Any) -> tuple[EnvItem, ...]:
    if not isinstance(block, Mapping):
        return ()
    return tuple(EnvItem(str(k), reader.compile(v, _loc(path, block, k)), _loc(path, block, k))
                 for k, v in block.items())


def _inputs(data: Mapping[Any, Any]) -> dict[str, InputSpec]:
    on = data.get("on", data.get(True))  # YAML 1.1 reads a bare `on` key as true
    call = on.get("workflow_call") if isinstance(on, Mapping) else None
    inputs = call.get("inputs") if isinstance(call, Mapping) else None
    out: dict[str, InputSpec] = {}
    if isinstance(inputs, Mapping):
        for name, spec in inputs.items():
            spec = spec if isinstance(spec, Mapping) else {}
            kind = spec.get("type", "string")
            out[str(name)] = InputSpec(kind if kind in ("string", "boolean", "number") else "string",
                                       spec.get("default"), "default" in spec)
    return out


def _launcher_pattern(path: str) -> str:
    pattern = path.removeprefix("./")
    pattern = re.sub(r"\$\{RUNNER_NAME%%_\*\}", "{fleet}", pattern)
    pattern = re.sub(r"\$\{RUNNER_NAME\}|\$RUNNER_NAME\b", "{node}", pattern)
    return re.sub(r"\$\{[^}]*\}|\$[A-Za-z_][A-Za-z0-9_]*", "*", pattern)


def _uploads(reader: _Reader, path: str, steps: list[Any]) -> tuple[Upload, ...]:
    out: list[Upload] = []
    for step in steps:
        uses = step.get("uses") if isinstance(step, Mapping) else None
        with_ = step.get("with") if isinstance(step, Mapping) else None
        if not (isinstance(uses, str) and uses.startswith("actions/upload-artifact@") and isinstance(with_, Mapping)):
            continue
        text = with_.get("path")
        if not isinstance(text, str):
            continue
        origin = _loc(path, with_, "path")
        try:
            out.append(Upload(compile_text(text, UNKNOWN_WORD), origin))
        except ExprError as exc:
            reader.problems.append(f"{reader.shown(path)}:{origin.line}: {exc}; the step's files are not collected")
    return tuple(out)


def _launch_step(reader: _Reader, path: str, data: Mapping[str, Any]
                 ) -> tuple[tuple[EnvItem, ...], LaunchStep, tuple[Upload, ...]] | None:
    """The job env, the step that starts the fleet's launcher (the first step that calls one) and the
    job's upload steps."""
    jobs = data.get("jobs")
    if not isinstance(jobs, Mapping):
        return None
    for job in jobs.values():
        steps = job.get("steps") if isinstance(job, Mapping) else None
        if not isinstance(steps, list):
            continue
        for step in steps:
            run = step.get("run") if isinstance(step, Mapping) else None
            if not isinstance(run, str):
                continue
            call = _LAUNCHER_CALL.search(run)
            if call is None:
                continue
            origin = _loc(path, step, "run")
            try:
                script = compile_text(run[:call.start()], UNKNOWN_WORD)
            except ExprError as exc:
                reader.problems.append(f"{reader.shown(path)}:{origin.line}: {exc}; the step's exports are unknown")
                script = _no_script
            launch = LaunchStep(_env_items(reader, path, step.get("env")), script, origin,
                                _launcher_pattern(call.group("path")))
            return _env_items(reader, path, job.get("env")), launch, _uploads(reader, path, steps)
    return None


def _no_script(ctx: Context) -> str:
    return ""


def load_template(reader: _Reader, path: str) -> Template | None:
    data = reader.load(path)
    if data is None:
        return None
    found = _launch_step(reader, path, data)
    job_env, launch, uploads = found if found is not None else ((), None, ())
    if launch is None:
        reader.problems.append(f"{reader.shown(path)}: no step calls a runner launcher "
                               "(`bash ./runners/launch_....sh`); "
                               "only the template's env: blocks are known")
    return Template(path, _inputs(data), _env_items(reader, path, data.get("env")) + job_env, launch, uploads)


def bucket_of_expression(text: str) -> tuple[str, ...] | None:
    """``${{ fromJson(...).single_node['8k1k'] }}`` -> ("single_node", "8k1k"); None without such a path."""
    m = _EXPR.match(text)
    chain = _BUCKET.search(m.group(1).strip()) if m else None
    if chain is None:
        return None
    return tuple(a or b for a, b in _CHAIN_PART.findall(chain.group("chain")))


# What load_workflows made, with the files it read: (sweep path, from the repository, reads, result).
_LOADED: list[tuple[str, bool, tuple[tuple[str, bytes | None], ...], Workflows]] = []


def load_workflows(snapshot: Snapshot | None, sweep_path: str) -> Workflows:
    """The callers of the sweep workflow at ``sweep_path`` (``snapshot`` None: the built-in files).

    The result depends only on the files read: another snapshot holding the
    same bytes (the base and the head of a change that leaves the workflows
    alone) gets the same, already compiled, result.
    """
    probe = _Reader(snapshot)
    for path, in_repository, reads, workflows in _LOADED:
        if (path == sweep_path and in_repository == (snapshot is not None)
                and all(probe.read(name) == data for name, data in reads)):
            return workflows
    reader = _Reader(snapshot)
    workflows = _load_workflows(reader, snapshot, sweep_path)
    if len(_LOADED) >= 8:
        del _LOADED[0]
    _LOADED.append((sweep_path, snapshot is not None, tuple(reader.reads), workflows))
    return workflows


def _load_workflows(reader: _Reader, snapshot: Snapshot | None, sweep_path: str) -> Workflows:
    data = reader.load(sweep_path)
    callers: dict[tuple[str, ...], Caller] = {}
    templates: dict[str, Template | None] = {}
    jobs = data.get("jobs") if data is not None else None
    for job_id, job in (jobs.items() if isinstance(jobs, Mapping) else ()):
        uses = job.get("uses") if isinstance(job, Mapping) else None
        strategy = job.get("strategy") if isinstance(job, Mapping) else None
        matrix = strategy.get("matrix") if isinstance(strategy, Mapping) else None
        config = matrix.get("config") if isinstance(matrix, Mapping) else None
        if not (isinstance(uses, str) and uses.startswith("./") and isinstance(config, str)):
            continue
        bucket = bucket_of_expression(config)
        if bucket is None or bucket in callers:
            continue  # a job fed from elsewhere (a canary pick), or a second job for the same bucket
        template_path = uses.removeprefix("./").split("@", 1)[0]
        if template_path not in templates:
            templates[template_path] = load_template(reader, template_path)
        template = templates[template_path]
        if template is None:
            continue
        with_block = job.get("with")
        pairs = tuple((str(k), reader.compile(v, _loc(sweep_path, with_block, k)))
                      for k, v in (with_block.items() if isinstance(with_block, Mapping) else ()))
        callers[bucket] = Caller(str(job_id), bucket, template, pairs, _loc(sweep_path, jobs, job_id))
    if data is not None and not callers:
        reader.problems.append(f"{reader.shown(sweep_path)}: no job calls a template for a bucket of the matrix "
                               "(`uses: ./...` with `strategy.matrix.config: ${{ fromJson(...).<bucket> }}`)")
    source = sweep_path if snapshot is not None else BUILTIN
    return Workflows(source, callers, tuple(reader.problems))
