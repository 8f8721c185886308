"""A job's environment: what its recipe receives, derived from the repository's own files.

Three layers, in the order they apply:

1. the workflows (:mod:`.workflow`): the sweep job that runs the job's
   bucket passes the matrix entry to a template (``with:``), whose inputs,
   input defaults, ``env:`` blocks and launch-step script give most
   variables, with their values;
2. the fleet's launchers (:mod:`.launchers`): what they set exists, with a
   value only known on the node;
3. ``job-env.runtime`` names from ``.ci-tools.yaml``: more variables known to
   exist at run time.

A job's bucket is how InferenceX's sweep splits the matrix:
``single_node``/``multi_node`` by ``8k1k``/``1k1k``/``agentic``, and eval-only
entries into ``evals``, ``agentic_evals``, ``multinode_evals``,
``multinode_agentic_evals``.  A bucket no sweep job runs (a sequence length
the workflow has no job for) takes the template of the same node kind and
scenario.

Without a sweep workflow in the repository, the built-in files in
``ci_tools/jobs/env/builtin/`` stand in (the job-derived part of InferenceX's
templates, without its infrastructure's paths and secrets); there the
executor that runs jobs (``ci-tools sweep``) provides ``PORT``.
"""

from __future__ import annotations

import fnmatch
import weakref
from typing import Any, Iterator, Mapping

from ...config import ProjectConfig
from ...model.repository import runner_labels_of
from ...findings import Location
from ...frozen import record
from ...revision.snapshot import Snapshot
from ...revision.yamlpos import YamlLoadError, load_yaml
from ..job import AGENTIC, Job
from ..matrix import seq_len_name
from .expr import UNKNOWN, to_text, truthy
from .launch import script_exports
from ..launcher_copies import read_launcher
from .launchers import LauncherVars, scan_launcher
from .settings import load_job_env_settings
from .workflow import UNKNOWN_WORD, Caller, InputSpec, Template, Workflows, load_workflows

BUILTIN_SWEEP = "run-sweep.yml"
# What `ci-tools sweep` sets when it runs a recipe of a repository that has no templates.
EXECUTOR_VARIABLES = ("PORT",)
_EXECUTOR = Location("ci-tools sweep executor")
# Contexts a `with:`/`env:` expression may read that are only known while the workflow runs.
_UNKNOWN_CONTEXTS = {name: UNKNOWN for name in ("github", "secrets", "vars", "needs", "steps", "strategy", "job",
                                                 "jobs", "runner", "env")}


@record
class EnvVar:
    """One variable of a job's environment: its value (None: exists, value known only at run time)."""

    value: str | None
    origin: Location


class _NoFiles:
    """The snapshot of the built-in contract alone: no repository file exists."""

    def __init__(self) -> None:
        self.label = "no repository"

    def read(self, path: str) -> bytes | None:
        return None

    def files(self) -> tuple[str, ...]:
        return ()

    def glob(self, pattern: str) -> list[str]:
        return []


def bucket_of(job: Job) -> tuple[str, ...]:
    agentic = job.scenario == AGENTIC
    if job.fields.get("eval-only") is True:
        return (("multinode_" if job.multinode else "") + ("agentic_evals" if agentic else "evals"),)
    scope = "agentic" if agentic else seq_len_name(job.fields.get("isl"), job.fields.get("osl"))
    return ("multi_node" if job.multinode else "single_node", scope)


def _coerce(value: Any, spec: InputSpec | None) -> Any:
    """An input's value as the template sees it, by the input's declared type."""
    kind = spec.type if spec is not None else "string"
    if kind == "string" and type(value) is str:
        return value
    if value is UNKNOWN:
        return UNKNOWN
    if kind == "boolean":
        if isinstance(value, str) and value.lower() in ("true", "false"):
            return value.lower() == "true"
        return bool(truthy(value))
    if kind == "number":
        try:
            return float(value) if value not in (None, "") else 0.0
        except (TypeError, ValueError):
            return UNKNOWN
    return to_text(value)


def _missing(spec: InputSpec) -> Any:
    if spec.has_default:
        return _coerce(spec.default, spec)
    return {"boolean": False, "number": 0.0}.get(spec.type, "")


class JobEnvContract:
    """The env contract of one snapshot of a repository."""

    def __init__(self, workflows: Workflows, launchers: Mapping[str, LauncherVars],
                 fleets: Mapping[str, tuple[str, ...]], runtime: tuple[tuple[str, Location], ...],
                 config: ProjectConfig, snapshot: Snapshot, launcher_pattern: str | None = None) -> None:
        self.workflows = workflows
        self.launcher_pattern = launcher_pattern
        self._input_defaults: dict[str, dict[str, Any]] = {}
        self._run_time: dict[tuple[str, ...], tuple[tuple[str, EnvVar, bool], ...]] = {}
        self.launchers = launchers
        self.fleets = fleets  # runner label -> the launcher paths of its nodes
        self.runtime = runtime
        self.config = config
        self.snapshot = snapshot

    def _defaults(self, template: Template) -> dict[str, Any]:
        """The value of every input a caller does not pass (its default), once per template."""
        found = self._input_defaults.get(template.path)
        if found is None:
            found = self._input_defaults[template.path] = {n: _missing(s) for n, s in template.inputs.items()}
        return found

    @property
    def source(self) -> str:
        return self.workflows.source

    @property
    def problems(self) -> tuple[str, ...]:
        return self.workflows.problems

    def caller_for(self, job: Job) -> Caller | None:
        callers = self.workflows.callers
        bucket = bucket_of(job)
        if bucket in callers:
            return callers[bucket]
        if len(bucket) == 1:  # an eval-only entry without an eval job: its benchmark bucket's template
            return self.caller_for(Job(job.config_key, job.scenario, {**job.fields, "eval-only": False}, job.row))
        agentic = bucket[1] == "agentic"
        return next((c for b, c in callers.items() if len(b) == 2 and b[0] == bucket[0]
                     and (b[1] == "agentic") == agentic), None)

    def _inputs(self, caller: Caller, job: Job) -> dict[str, Any]:
        template = caller.template
        ctx: dict[str, Any] = {**_UNKNOWN_CONTEXTS, "matrix": {"config": job.fields}}
        inputs = dict(self._defaults(template))
        for name, compiled in caller.with_:
            inputs[name] = _coerce(compiled(ctx), template.inputs.get(name))
        return inputs

    def workflow_env(self, job: Job, runner: Mapping[str, Any] | None = None) -> dict[str, EnvVar]:
        """What the workflow passes to the launcher; ``runner`` is the runner context when known
        (``{"name": "mi355x-amds_03"}``), else it is unknown."""
        caller = self.caller_for(job)
        if caller is None:
            return {}
        template = caller.template
        inputs = self._inputs(caller, job)
        env_ctx: dict[str, Any] = {}
        ctx = {**_UNKNOWN_CONTEXTS, "inputs": inputs, "env": env_ctx, "runner": runner if runner else UNKNOWN}
        out: dict[str, EnvVar] = {}
        launch = template.launch
        for item in template.env + (launch.env if launch is not None else ()):
            text = to_text(item.value(ctx))
            env_ctx[item.name] = UNKNOWN if text is None else text
            out[item.name] = EnvVar(text, item.origin)
        if launch is not None:
            script = launch.script(ctx)
            values = {n: v.value for n, v in out.items()}
            for name, text in script_exports(script, values, launch.origin, self.config, self.snapshot).items():
                out[name] = EnvVar(text, launch.origin)
        return out

    def upload_patterns(self, job: Job, env: Mapping[str, str], runner: Mapping[str, Any] | None = None
                        ) -> tuple[str, ...] | None:
        """The workspace files the template's upload steps keep of the job: one glob a line, ``!`` to
        exclude; a line with an expression unknown here is left out.  None when the template has
        no upload step (nothing says which files the fleet keeps)."""
        caller = self.caller_for(job)
        if caller is None or not caller.template.uploads:
            return None
        ctx = {**_UNKNOWN_CONTEXTS, "inputs": self._inputs(caller, job), "env": dict(env),
               "runner": runner if runner else UNKNOWN}
        lines: list[str] = []
        for upload in caller.template.uploads:
            for line in upload.paths(ctx).splitlines():
                line = line.strip()
                if line and UNKNOWN_WORD not in line and line not in lines:
                    lines.append(line)
        return tuple(lines)

    def launcher_paths(self, job: Job) -> tuple[str, ...]:
        """The launchers the job's nodes start.

        For a label runners.yaml does not define: the launcher of the fleet the
        label names (``cluster:gb300-nv`` -> ``launch_gb300-nv.sh``) when there
        is one, else every launcher (the job could land anywhere).
        """
        label = job.fields.get("runner")
        found = self.fleets.get(label) if isinstance(label, str) else None
        if found is not None:
            return found
        if isinstance(label, str) and self.launcher_pattern is not None:
            named = self.launcher_pattern.format(fleet=label.removeprefix("cluster:"), node=label)
            if named in self.launchers:
                return (named,)
        return tuple(self.launchers)

    def node_launcher(self, node: str) -> str | None:
        """The launcher the launch step starts on ``node`` (``runners/launch_${RUNNER_NAME%%_*}.sh``), when
        the repository has it."""
        if self.launcher_pattern is None:
            return None
        path = self.launcher_pattern.format(fleet=node.split("_", 1)[0], node=node)
        return path if path in self.launchers else None

    def launcher_names(self, path: str) -> tuple[str, ...]:
        """What the launcher at ``path`` sets or fills in for the recipe (values known only on the node)."""
        found = self.launchers.get(path)
        return () if found is None else tuple(n for n, _ in found.sets + found.fills)

    def recipe_env(self, job: Job, as_run: bool = False) -> dict[str, EnvVar]:
        """Everything the job's recipe receives: the workflow's variables, then what exists only at
        run time (the fleet's launchers, configured runtime names), with unknown values.

        ``as_run``: as the recipe is started, where the fleet's launchers start it in a `docker run`
        container: only what they pass it (``LauncherVars.passes``; the runtime names stay).
        """
        env = self.workflow_env(job)
        paths = self.launcher_paths(job)
        passes = self._passes(paths) if as_run else None
        for name, var, wins in self._run_time_vars(paths):
            if wins:
                env[name] = var
            else:
                env.setdefault(name, var)
        if passes is not None:
            runtime = {name for name, _ in self.runtime}
            env = {name: var for name, var in env.items() if name in passes or name in runtime}
        return env

    def _passes(self, paths: tuple[str, ...]) -> frozenset[str] | None:
        """What reaches a recipe through the launchers ``paths`` when each passes a list (their union)."""
        found: set[str] = set()
        for path in paths:
            launcher = self.launchers.get(path)
            if launcher is None or launcher.passes is None:
                return None
            found |= launcher.passes
        return frozenset(found) if paths else None

    def _run_time_vars(self, paths: tuple[str, ...]) -> tuple[tuple[str, EnvVar, bool], ...]:
        """In order, what the launchers ``paths`` set (True: it wins) or only fill in, then the runtime
        names; built once per set of launchers (the same for every job of a fleet)."""
        found = self._run_time.get(paths)
        if found is None:
            steps: list[tuple[str, EnvVar, bool]] = []
            for path in paths:
                launcher = self.launchers.get(path)
                if launcher is None:
                    continue
                steps.extend((name, EnvVar(None, where), True) for name, where in launcher.sets)
                steps.extend((name, EnvVar(None, where), False) for name, where in launcher.fills)
            steps.extend((name, EnvVar(None, where), False) for name, where in self.runtime)
            found = self._run_time[paths] = tuple(steps)
        return found


def _fleets(pattern: str | None, labels: Mapping[str, Any], files: tuple[str, ...]) -> dict[str, tuple[str, ...]]:
    """Runner label -> launcher paths of its nodes (``launch_${RUNNER_NAME%%_*}.sh``: node name up to `_`)."""
    if pattern is None:
        return {}
    present = set(files)
    out: dict[str, tuple[str, ...]] = {}
    for label, nodes in labels.items():
        paths: list[str] = []
        for node in nodes if isinstance(nodes, list) else ():
            if not isinstance(node, str):
                continue
            path = pattern.format(fleet=node.split("_", 1)[0], node=node)
            matches = fnmatch.filter(files, path) if "*" in path else ([path] if path in present else [])
            paths.extend(p for p in matches if p not in paths)
        out[str(label)] = tuple(paths)
    return out


class _Launchers(Mapping[str, LauncherVars]):
    """A snapshot's launchers by path, each scanned when first asked for.

    Scanning parses the launcher's bash; a check of a few jobs needs the
    launchers of one or two fleets, not of all of them.
    """

    def __init__(self, snapshot: Snapshot, paths: list[str]) -> None:
        self._sources: dict[str, tuple[str, bytes]] = {}
        for path in paths:
            source, data = read_launcher(snapshot, path)
            if data is not None:
                self._sources[path] = (source, data)
        self._scanned: dict[str, LauncherVars] = {}

    def __getitem__(self, path: str) -> LauncherVars:
        found = self._scanned.get(path)
        if found is None:
            source, data = self._sources[path]
            found = self._scanned[path] = scan_launcher(source, data)
        return found

    def __contains__(self, path: object) -> bool:
        return path in self._sources

    def __iter__(self) -> Iterator[str]:
        return iter(self._sources)

    def __len__(self) -> int:
        return len(self._sources)


def load_contract(config: ProjectConfig, snapshot: Snapshot | None) -> JobEnvContract:
    """The contract of ``snapshot`` (None: the built-in contract alone, no launchers)."""
    settings = load_job_env_settings(config)
    files: Snapshot = snapshot if snapshot is not None else _NoFiles()
    if snapshot is not None and snapshot.read(settings.workflow) is not None:
        workflows = load_workflows(snapshot, settings.workflow)
        executor: tuple[tuple[str, Location], ...] = ()
    else:
        workflows = load_workflows(None, BUILTIN_SWEEP)
        executor = tuple((name, _EXECUTOR) for name in EXECUTOR_VARIABLES)
    where = Location(config.source or ".ci-tools.yaml")
    runtime = executor + tuple((name, where) for name in settings.runtime)
    pattern = next((c.template.launch.launcher for c in workflows.callers.values()
                    if c.template.launch is not None and c.template.launch.launcher), None)
    fleets: dict[str, tuple[str, ...]] = {}
    launchers: Mapping[str, LauncherVars] = {}
    if snapshot is not None and pattern is not None:
        all_files = snapshot.files()
        fleets = _fleets(pattern, runner_labels(config, snapshot), all_files)
        every = fnmatch.filter(all_files, pattern.format(fleet="*", node="*"))
        launchers = _Launchers(snapshot, sorted({p for paths in fleets.values() for p in paths} | set(every)))
    return JobEnvContract(workflows, launchers, fleets, runtime, config, files, pattern)


def runner_labels(config: ProjectConfig, snapshot: Snapshot) -> Mapping[str, Any]:
    """runners.yaml's labels (label -> node names); empty when the file is missing or unreadable."""
    raw = snapshot.read(config.runners)
    try:
        data = load_yaml(raw, config.runners).value if raw is not None else None
    except YamlLoadError:
        return {}  # validation reports the file; its labels are unknown here
    return runner_labels_of(dict(data) if isinstance(data, Mapping) else None)


_BY_SNAPSHOT: weakref.WeakKeyDictionary[Any, dict[int, JobEnvContract]] = weakref.WeakKeyDictionary()
_BUILTIN: dict[int, JobEnvContract] = {}


def contract_for(config: ProjectConfig, snapshot: Snapshot | None) -> JobEnvContract:
    """The contract of a snapshot, built once per snapshot and configuration."""
    if snapshot is None:
        found = _BUILTIN.get(id(config))
        if found is None or found.config is not config:
            found = _BUILTIN[id(config)] = load_contract(config, None)
        return found
    try:
        per = _BY_SNAPSHOT.setdefault(snapshot, {})
    except TypeError:  # a snapshot that cannot be weakly referenced: no cache
        return load_contract(config, snapshot)
    found = per.get(id(config))
    if found is None or found.config is not config:
        found = per[id(config)] = load_contract(config, snapshot)
    return found
