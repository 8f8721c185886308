"""Change coverage: which configs a change affects, and whether the changelog covers them.

A config is affected when what it generates or runs changed between the base
and the head: its master-config entry (compared as data, so comments and
formatting do not count), the recipe its jobs resolve to (a different path,
or changed content), ``benchmark_lib.sh``, a file the recipe sources or reads
(an llm-d recipe), a file a multinode job's chain reads beyond those
(:mod:`ci_tools.changelog.chain_reads`: ``amd_utils/server_sglang.sh``), or the
launcher of its runner's fleet (``runners/launch_<fleet>.sh``, which starts
the recipe).  For shell files the
question is whether the change alters what the config's jobs run, not whether
the file changed (:mod:`ci_tools.changelog.run_effect`: a launcher's branch
for another model, a launcher's time limit or squash-file directory, a guarded
``hf download``, a function the job never calls change nothing).  Everything else (docs, tests, this toolkit, the changelog
itself) affects no config.

The analysis starts from the set of changed paths (``git diff --name-only``),
so a change that touches no master config and no shell file costs nothing
beyond that diff.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from typing import Callable, Sequence

from ..config import ProjectConfig
from ..findings import Finding, Location, first_few, make_finding
from ..config.resolution_rules import EXTERNAL
from ..jobs.contract import RecipeResolution, resolve_recipe
from ..jobs.job import SCENARIOS, Job
from ..jobs.matrix import expand, expand_config, row_jobs
from ..jobs.launcher_copies import read_launcher
from ..jobs.resolution import fleet_of, recipe_roots
from ..model.keys import match_key_glob
from ..model.repository import ConfigEntry, RepoData
from ..revision.snapshot import Snapshot
from ..shell.model import RecipeEval
from ..shell.parse import Node
from .chain_reads import CHAIN_REASON, ChainReads
from .coverage_rules import UNCOVERED_KEY
from .run_effect import AfterServer, Evaluate, RunEffect
from .shell_diff import BASE, DIR_PREFIX, HEAD

# `source FILE` / `. FILE` at the start of a command.
_SOURCE = re.compile(rb"""^[ \t]*(?:source|\.)[ \t]+(["']?)([^"'\s;&|)]+)\1""", re.MULTILINE)


@dataclass(frozen=True)
class Cause:
    """One reason a config is affected: the changed file, the first changed line at the head, what it is."""

    path: str
    line: int
    reason: str
    # The scenario types whose jobs the change affects.
    scenarios: tuple[str, ...] = SCENARIOS
    # The reason as it reads for every config it affects (``reason`` may name this config's own way to the
    # change, such as its runner label): configs whose causes share it are one change's consequences.
    shared_reason: str = ""

    @property
    def common(self) -> str:
        return self.shared_reason or self.reason

    def location(self) -> Location:
        return Location(self.path, self.line, 1 if self.line else 0, note=self.reason)

    @property
    def where(self) -> str:
        """``path:line`` as a message shows it (the path alone for a deleted file)."""
        return f"{self.path}:{self.line}" if self.line else self.path


@dataclass(frozen=True)
class AffectedKey:
    key: str
    causes: tuple[Cause, ...]


def first_changed_line(base: bytes | None, head: bytes | None) -> int:
    """1-based head line of the first difference (1 for a new file, 0 for a deleted one)."""
    if head is None:
        return 0
    if base is None:
        return 1
    a, b = base.split(b"\n"), head.split(b"\n")
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i + 1
    return max(min(len(a), len(b)), 1)


class RecipeDeps:
    """Files a recipe depends on at one revision: itself, what it sources (transitively), benchmark_lib."""

    def __init__(self, snapshot: Snapshot, config: ProjectConfig) -> None:
        self.snapshot = snapshot
        self.config = config
        self._cache: dict[str, frozenset[str]] = {}
        self._sourced: dict[str, tuple[str, ...]] = {}
        self._files: frozenset[str] | None = None

    def files(self) -> frozenset[str]:
        if self._files is None:
            self._files = frozenset(self.snapshot.files())
        return self._files

    def _resolve(self, written: str, from_file: str) -> str | None:
        target = DIR_PREFIX.sub(lambda _: posixpath.dirname(from_file) + "/", written)
        if "$" in target:
            return None
        candidates = [posixpath.normpath(posixpath.join(posixpath.dirname(from_file), target)), posixpath.normpath(target)]
        for c in candidates:
            if c in self.files():
                return c
        # Fall back to a unique file of that name next to the shared library.
        base = posixpath.basename(target)
        lib_dir = posixpath.dirname(self.config.benchmark_lib)
        named = sorted(f for f in self.files() if posixpath.basename(f) == base and f.startswith(lib_dir))
        return named[0] if len(named) == 1 else None

    def _sources_of(self, path: str) -> tuple[str, ...]:
        """The files ``path`` itself sources, in order; each file is scanned once (every recipe's closure
        holds benchmark_lib.sh, 90 KB)."""
        found = self._sourced.get(path)
        if found is None:
            data = self.snapshot.read(path) or b""
            deps = (self._resolve(m.group(2).decode("utf-8", "replace"), path) for m in _SOURCE.finditer(data))
            found = self._sourced[path] = tuple(d for d in deps if d)
        return found

    def sourced_by(self, recipe: str, statements: Sequence[Node]) -> dict[str, int]:
        """Each file the recipe's top-level ``statements`` source, directly or through what they source -> the
        index of the first statement that does."""
        out: dict[str, int] = {}
        for index, node in enumerate(statements):
            for m in _SOURCE.finditer(node.script.source[node.start:node.end]):
                first = self._resolve(m.group(2).decode("utf-8", "replace"), recipe)
                todo = [first] if first else []
                while todo:
                    path = todo.pop()
                    if path not in out:
                        out[path] = index
                        todo.extend(self._sources_of(path))
        return out

    def closure(self, recipe: str) -> frozenset[str]:
        if recipe in self._cache:
            return self._cache[recipe]
        if not recipe.endswith(".sh"):  # an srt-slurm recipe YAML sources nothing
            return frozenset({recipe})
        seen: set[str] = set()
        todo = [recipe]
        if self.snapshot.read(self.config.benchmark_lib) is not None:
            todo.append(self.config.benchmark_lib)
        while todo:
            path = todo.pop()
            if path in seen:
                continue
            seen.add(path)
            todo.extend(dep for dep in self._sources_of(path) if dep not in seen)
        result = frozenset(seen)
        self._cache[recipe] = result
        return result


class RecipeResolver:
    """The repository file a job runs at one revision (a script or an srt-slurm recipe), as its launcher picks it."""

    def __init__(self, snapshot: Snapshot, config: ProjectConfig) -> None:
        self.snapshot = snapshot
        self.config = config

    def resolution(self, job: Job) -> RecipeResolution:
        return resolve_recipe(job, self.config, self.snapshot)

    def __call__(self, job: Job) -> str | None:
        return self.resolution(job).path


# The per-fleet launcher that picks and runs a job's recipe (FORMATS.md, "Repository layout").
LAUNCHER = "runners/launch_{fleet}.sh"


def launchers(repo: RepoData, runner: str) -> list[str]:
    """Launcher scripts of the nodes a runner label names (``mi355x-amds_04`` -> ``runners/launch_mi355x-amds.sh``),
    each kept as a symbolic link followed to the script it runs (``launch_b200-dgxc-slurm.sh``)."""
    nodes = repo.runner_labels.get(runner)
    fleets = {fleet_of(n) for n in nodes if isinstance(n, str)} if isinstance(nodes, list) else set()
    return sorted({read_launcher(repo.snapshot, LAUNCHER.format(fleet=f))[0] for f in fleets})


def is_relevant(path: str, config: ProjectConfig) -> bool:
    """Could a change of this file affect a config? (Master configs, shell files and recipe YAML.)"""
    return is_recipe_input(path, config) or _is_master_config(path, config) or path == config.runners


def is_chain_input(path: str, config: ProjectConfig) -> bool:
    """A file a multinode chain may read (:mod:`.chain_reads`): under the shared library's directory, other than
    the master configs, the runners file and the changelog (a library at the repository's root opens none)."""
    root = posixpath.dirname(config.benchmark_lib)
    return (bool(root) and path.startswith(root + "/") and path not in (config.runners, config.changelog)
            and not _is_master_config(path, config))


def _is_master_config(path: str, config: ProjectConfig) -> bool:
    import fnmatch

    return any(fnmatch.fnmatchcase(path, p) for p in config.master_configs)


def is_recipe_input(path: str, config: ProjectConfig) -> bool:
    """A shell file, or a file under a directory recipes are resolved from (srt-slurm, llm-d recipes)."""
    return path == config.benchmark_lib or path.endswith(".sh") or path.startswith(recipe_roots(config))


def _entry_lines(entry: ConfigEntry, repo: RepoData) -> tuple[int, int]:
    """First and last line of a config's text in its master file."""
    starts = sorted(e.key_span[0] for e in repo.configs.values() if e.file is entry.file)
    first = entry.key_span[0]
    later = [s for s in starts if s > first]
    last = later[0] - 1 if later else len(entry.file.raw.split(b"\n"))
    return first, last


def _changed_scenarios(key: str, head: RepoData, base: RepoData) -> tuple[str, ...]:
    """Scenario types whose generated jobs differ between base and head (all of the config's when none do)."""
    new, old = expand(head, [key]), expand(base, [key])
    present = tuple(s for s in SCENARIOS if any(j.scenario == s for j in new + old))
    differing = tuple(s for s in present if {j.id for j in new if j.scenario == s} != {j.id for j in old if j.scenario == s})
    return differing or present or SCENARIOS


def _config_cause(key: str, head: RepoData, base: RepoData) -> Cause | None:
    entry = head.configs[key]
    old = base.configs.get(key)
    if old is None:
        return Cause(entry.path, entry.key_span[0], "new config", _changed_scenarios(key, head, base))
    if old.data == entry.data and old.path == entry.path:
        return None
    h1, h2 = _entry_lines(entry, head)
    b1, b2 = _entry_lines(old, base)
    hl, bl = entry.file.raw.split(b"\n")[h1 - 1: h2], old.file.raw.split(b"\n")[b1 - 1: b2]
    offset = next((i for i, (x, y) in enumerate(zip(hl, bl)) if x != y), min(len(hl), len(bl)) - 1)
    return Cause(entry.path, h1 + max(offset, 0), "master-config entry changed", _changed_scenarios(key, head, base))


@dataclass
class ChangeInputs:
    """Both revisions of a change, their repository data loaded on demand, and the changed paths."""

    config: ProjectConfig
    base: Snapshot
    head: Snapshot
    changed: frozenset[str]
    base_repo: Callable[[], RepoData]
    head_repo: Callable[[], RepoData]
    base_label: str = "base revision"
    # How a head job's recipe is evaluated (check shares its evaluations between stages); None: on its own.
    evaluate: Evaluate | None = None

    def recipe_lookups(self) -> tuple[RecipeResolver, RecipeResolver, RecipeDeps]:
        """What jobs run at the head and at the base, and what the head's recipes depend on."""
        return RecipeResolver(self.head, self.config), RecipeResolver(self.base, self.config), RecipeDeps(self.head, self.config)

    def run_effect(self, head_deps: RecipeDeps) -> RunEffect:
        """What decides whether a changed shell file changes a job's run (see :mod:`.run_effect`)."""
        from ..evaluation.evaluate import evaluate_job

        base_deps = RecipeDeps(self.base, self.config)

        def evaluate(job: Job, snapshot: Snapshot) -> RecipeEval | None:
            return evaluate_job(job, self.config, snapshot)

        def sourced(side: str, recipe: str, statements: Sequence[Node]) -> dict[str, int]:
            return (base_deps if side == BASE else head_deps).sourced_by(recipe, statements)

        resolvers = {BASE: RecipeResolver(self.base, self.config), HEAD: RecipeResolver(self.head, self.config)}

        def resolve(job: Job, side: str) -> str | None:
            found = resolvers[side].resolution(job)
            return found.path or (f"the external recipe {found.reference}" if found.kind == EXTERNAL else None)

        return RunEffect(self.base, self.head, self.evaluate or evaluate, evaluate, sourced, self.config, resolve)


def affected_keys(inputs: ChangeInputs) -> list[AffectedKey]:
    """Every head config key the change affects, with its causes, in master-file order."""
    config, changed = inputs.config, inputs.changed
    if not any(is_relevant(p, config) or is_chain_input(p, config) for p in changed):
        return []
    head, base = inputs.head_repo(), inputs.base_repo()
    head_recipe, base_recipe, deps = inputs.recipe_lookups()
    effect = inputs.run_effect(deps)

    def claimed() -> frozenset[str]:  # every file a recipe of the head sources or reads as data
        found: set[str] = set()
        for entry in head.configs.values():
            for job in row_jobs(entry, head):
                resolution = head_recipe.resolution(job)
                if resolution.path is not None:
                    found |= deps.closure(resolution.path) | set(resolution.inputs)
        return frozenset(found)

    chain = ChainReads(effect, config, inputs.base, inputs.head, changed,
                       (p for p in changed if is_chain_input(p, config)), claimed)
    line_cache: dict[str, int] = {}

    def changed_line(path: str) -> int:
        if path not in line_cache:
            line_cache[path] = first_changed_line(inputs.base.read(path), inputs.head.read(path))
        return line_cache[path]

    masters_changed = any(f.path in changed for f in head.master_files) or any(f.path in changed for f in base.master_files)
    shell_changed = any(is_recipe_input(p, config) for p in changed)
    runners_changed = config.runners in changed

    def cause_jobs(key: str) -> bool:
        return {j.id for j in expand(head, [key])} != {j.id for j in expand(base, [key])}

    def runners_cause(key: str) -> Cause:
        return Cause(config.runners, changed_line(config.runners), "generated jobs changed with the runners file",
                     _changed_scenarios(key, head, base))

    out: list[AffectedKey] = []
    for key in head.configs:
        causes: list[Cause] = []
        if masters_changed:
            cause = _config_cause(key, head, base)
            if cause:
                causes.append(cause)
        if runners_changed and cause_jobs(key):
            causes.append(runners_cause(key))
        entry = head.configs[key]
        data = entry.data
        runner = data.get("runner") if isinstance(data, dict) else None
        rows = row_jobs(entry, head) if shell_changed or masters_changed or chain.candidates else []
        if shell_changed and isinstance(runner, str):
            for launcher in launchers(head, runner):
                # Each row's first point (a row the matrix drops too) and every job, evals too: a launcher may
                # run them differently (jobs that give it the same values share one evaluation).
                found = (effect.launcher_change(launcher, [*rows, *expand(head, [key])]) if launcher in changed
                         else None)
                if found is not None:
                    line = found.change.line if found.change.side != BASE else changed_line(launcher)
                    causes.append(Cause(launcher, line, f"launcher of runner {runner} {found.why}",
                                        _changed_scenarios(key, head, base), f"launcher {found.why}"))
        if rows:
            # A row's recipe is the same at each of its concurrencies: one job per row gives every cause, and
            # the row's jobs are evaluated only when a change can alter their server line or environment.
            causes.extend(_recipe_causes(rows, lambda job: _row_of(entry, head, job), head_recipe, base_recipe,
                                         deps, effect, changed, changed_line, config, chain))
        if causes:
            out.append(AffectedKey(key, tuple(dict.fromkeys(causes))))
    return out


def _row_of(entry: ConfigEntry, repo: RepoData, job: Job) -> list[Job]:
    """Every concurrency of ``job``'s row."""
    return [j for j in expand_config(entry, repo)
            if (j.scenario_index, j.row_index, j.scenario) == (job.scenario_index, job.row_index, job.scenario)]


def _recipe_causes(jobs: Sequence[Job], row_of: Callable[[Job], list[Job]], head_recipe: RecipeResolver,
                   base_recipe: RecipeResolver, deps: RecipeDeps, effect: RunEffect, changed: frozenset[str],
                   changed_line: Callable[[str], int], config: ProjectConfig, chain: ChainReads) -> list[Cause]:
    causes: list[Cause] = []
    for job in jobs:
        resolution = head_recipe.resolution(job)
        path = resolution.path
        if path is None:
            continue
        old = base_recipe(job)
        if old is not None and old != path:
            causes.append(Cause(path, 1, f"jobs now run {path} instead of {old}", (job.scenario,)))
        closure = deps.closure(path)
        touched = sorted((closure | set(resolution.inputs)) & changed)
        scripts = [d for d in touched if d in closure]
        kept: dict[str, AfterServer | None] = {}
        if resolution.script is not None and scripts and old == path:
            # A row the matrix drops (no job of the config's expansion) is judged on its first point.
            kept = effect.script_causes(path, row_of(job) or [job], scripts, closure)
            touched = [d for d in touched if d not in scripts or d in kept]
        for dep in touched:
            if dep == path or dep == config.benchmark_lib:
                reason = shared = "recipe changed" if dep == path else "benchmark_lib.sh changed"
            elif dep in resolution.inputs:
                reason, shared = f"input of {path} changed", "input of their recipes changed"
            else:
                reason, shared = f"file sourced by {path} changed", "file their recipes source changed"
            late = kept.get(dep)
            if late is not None:
                # Said as what of the file runs after the server (or a multinode chain may call), where it changed.
                of = "the recipe" if dep == path else posixpath.basename(dep)
                reason = shared = f"{late.what} of {of}, {late.when}, changed"
            line = late.line if late is not None and late.line else changed_line(dep)
            causes.append(Cause(dep, line, reason, (job.scenario,), shared))
        if old == path:
            for dep in chain.read_changed(job, closure | set(resolution.inputs)):
                causes.append(Cause(dep, changed_line(dep), f"file the multinode chain of {path} reads changed",
                                    (job.scenario,), CHAIN_REASON))
    return causes


def changed_jobs(inputs: ChangeInputs, affected: Sequence[AffectedKey]) -> list[Job]:
    """Head jobs of the affected configs that run something new: a point the base did not generate, a
    different recipe, a recipe whose own text or inputs (sourced files, benchmark_lib.sh, data) changed, or a
    multinode job whose chain reads a changed file.

    These are the jobs whose recipe evaluation can differ from the base's; a
    config affected only through its launcher keeps its jobs' evaluation.
    """
    if not affected:
        return []
    head, base = inputs.head_repo(), inputs.base_repo()
    head_recipe, base_recipe, deps = inputs.recipe_lookups()
    out: list[Job] = []
    for item in affected:
        base_ids = {j.id for j in expand(base, [item.key])}
        # Scenarios whose multinode chain reads a changed file (the chain's files are in no recipe's closure).
        chained = {s for c in item.causes if c.common == CHAIN_REASON for s in c.scenarios}
        for job in expand(head, [item.key]):
            resolution = head_recipe.resolution(job)
            if resolution.path is None:
                continue
            touched = (deps.closure(resolution.path) | set(resolution.inputs)) & inputs.changed
            if (job.id not in base_ids or touched or base_recipe(job) != resolution.path
                    or (job.multinode and job.scenario in chained)):
                out.append(job)
    return out


@dataclass(frozen=True)
class Cover:
    """What one appended entry covers: its config-key globs, limited to its scenario types (empty: all)."""

    globs: tuple[str, ...]
    scenarios: tuple[str, ...] = ()


def covered_scenarios(covers: Sequence[Cover], key: str) -> frozenset[str]:
    """Scenario types of ``key`` that the appended entries cover."""
    out: set[str] = set()
    for cover in covers:
        if any(match_key_glob(g, key) for g in cover.globs):
            out.update(cover.scenarios or SCENARIOS)
    return frozenset(out)


# Uncovered configs one change affects through the same line: from this many on, one finding lists them (a change
# of benchmark_lib.sh's client code affects every config whose recipe sources it: 160 findings at one line; a
# launcher's change every config of its runners, under several labels: 12 at one line).  Two stay two findings,
# each saying which key an entry should name.
GROUPED_FROM = 3


def coverage_findings(affected: Sequence[AffectedKey], covers: Sequence[Cover], *, changelog: str) -> list[Finding]:
    open_items: list[tuple[AffectedKey, list[Cause], frozenset[str]]] = []
    for item in affected:
        covered = covered_scenarios(covers, item.key)
        open_causes = [c for c in item.causes if not set(c.scenarios) <= covered]
        if open_causes:
            open_items.append((item, open_causes, covered))
    # Configs no entry names at all, by the cause that comes first for them.
    by_cause: dict[tuple[str, int, str], list[tuple[AffectedKey, list[Cause], frozenset[str]]]] = {}
    for record in open_items:
        if not record[2]:
            first = record[1][0]
            by_cause.setdefault((first.path, first.line, first.common), []).append(record)
    out: list[Finding] = []
    for item, open_causes, covered in open_items:
        first = open_causes[0]
        group = by_cause.get((first.path, first.line, first.common), []) if not covered else []
        if len(group) >= GROUPED_FROM:
            if group[0][0] is item:
                out.append(_grouped_finding(group, changelog))
            continue
        missing = sorted({s for c in open_causes for s in c.scenarios} - covered)
        if covered:
            gap = (f"the appended entries that name it are limited to scenario-type {', '.join(sorted(covered))}, "
                   f"not {', '.join(missing)}; expected an entry that covers {', '.join(missing)} too")
        else:
            gap = f"no entry appended to {changelog} covers it; expected an appended entry whose config-keys match `{item.key}`"
        out.append(make_finding(
            UNCOVERED_KEY,
            f"config `{item.key}` is affected by this change ({first.reason} at {first.where}) but {gap}",
            first.location(),
            related=[c.location() for c in open_causes[1:6]],
            data={"key": item.key, "uncovered_scenarios": missing,
                  "causes": [{"path": c.path, "line": c.line, "reason": c.reason, "scenarios": list(c.scenarios)}
                             for c in open_causes]},
        ))
    return out


def _grouped_finding(group: Sequence[tuple[AffectedKey, list[Cause], frozenset[str]]], changelog: str) -> Finding:
    """One finding for the configs one changed line affects and no appended entry names."""
    first = group[0][1][0]
    keys = [item.key for item, _, _ in group]
    return make_finding(
        UNCOVERED_KEY,
        f"{len(keys)} configs are affected by this change ({first.common} at {first.where}) but no entry appended to "
        f"{changelog} covers them: {first_few(keys, 6)}; expected appended entries whose config-keys match them "
        "(a glob such as `dsr1-*` covers a family)",
        first.location(),
        data={"key": keys[0], "keys": keys,
              "uncovered_scenarios": sorted({s for _, causes, _ in group for c in causes for s in c.scenarios}),
              "causes": [{"path": first.path, "line": first.line, "reason": first.common,
                          "scenarios": sorted({s for _, causes, _ in group for s in causes[0].scenarios})}]},
    )
