"""Which recipe a job runs, resolved the way the launcher of its runner fleet picks it.

A job's runner label names nodes (runners.yaml); each node's fleet has its
launcher, and :mod:`ci_tools.config.resolution_rules` says how each launcher picks the
recipe.  A label whose nodes belong to several fleets is resolved for each
fleet: the first fleet's result is the job's, and the fleets that pick
something else are kept as alternatives (a job lands on whichever node is
free, so each of them must work).

The result tells an evaluator what it is looking at: a bash script, an
srt-slurm recipe YAML with its selector, or a recipe that lives outside the
repository (not evaluated).
"""

from __future__ import annotations

import difflib
import fnmatch
import posixpath
import weakref
from dataclasses import dataclass, replace
from typing import Any, Collection, Mapping

from ..config import ProjectConfig
from ..config.resolution_rules import (
    DEFAULT_RULES,
    EARLIER_SCRIPT_DIRS,
    EXTERNAL,
    SCRIPT,
    SRT_SLURM,
    Match,
    ResolutionRule,
)
from ..errors import UsageError
from ..model.repository import runner_labels_of
from ..revision.snapshot import Snapshot
from .job import AGENTIC, Job
from .launcher_copies import RecipeCopy, copy_for, launcher_inputs, read_launcher, scan_copies
from .matrix import gpu_name

# Placeholders a template may use (str.format); `settings` is the job's
# additional-settings as a mapping: `{settings[CONFIG_FILE]}`.
PLACEHOLDERS = ("model_prefix", "precision", "gpu", "framework", "framework_suffix", "mtp", "scenario_dir",
                "agentic_dir", "config_key", "fleet", "settings")
# The legacy recipe-name suffix of a framework (`dsr1_fp8_h200_trt.sh`).
FRAMEWORK_SUFFIXES = {"trt": "_trt", "atom": "_atom"}


@dataclass(frozen=True)
class RecipeResolution:
    """What a job runs, as its launcher picks it.

    ``kind`` is what the launcher runs: ``script`` (bash, started with the
    job's environment), ``srt-slurm`` (a recipe YAML submitted with
    ``srtctl``; ``selector`` is the part of the reference after ``:``, e.g.
    ``zip_override_lowlat[1]``) or ``external`` (outside the repository, not
    evaluated).  ``path`` is the repository file, None when it is not there:
    then the recipe is missing, unless the kind is external.
    """

    path: str | None
    candidates: tuple[str, ...]  # every repository path the launcher tries, in order
    kind: str = SCRIPT
    selector: str | None = None
    reference: str | None = None  # the additional-settings value naming the recipe, as written
    setting: str | None = None  # its name (CONFIG_FILE)
    inputs: tuple[str, ...] = ()  # more repository files the recipe reads as data
    missing_inputs: tuple[str, ...] = ()  # data files the rule names for this job that do not exist
    fleets: tuple[str, ...] = ()  # the fleets whose launcher picks this
    rule: str = ""
    rule_source: str = ""
    reason: str = ""  # why the recipe is missing or external, in words
    suggestions: tuple[str, ...] = ()  # existing files close to a missing recipe's name
    alternatives: tuple[RecipeResolution, ...] = ()  # what the label's other fleets pick instead
    copied_by: str = ""  # the launcher's copy that puts the recipe where the reference names it

    @property
    def missing(self) -> bool:
        return self.path is None and self.kind != EXTERNAL

    @property
    def script(self) -> str | None:
        """The bash script to evaluate, if the recipe is one."""
        return self.path if self.kind == SCRIPT else None

    @property
    def every_fleet(self) -> tuple[RecipeResolution, ...]:
        return (self, *self.alternatives)

    def describe(self, with_fleets: bool = False) -> str:
        """One line for people: what runs (and on which fleets), or why nothing does."""
        fleets = f" on {', '.join(self.fleets)}" if with_fleets and self.fleets else ""
        if self.kind == EXTERNAL:
            return f"external srt-slurm recipe {self.reference}{fleets}: {self.reason}; not evaluated"
        if self.path is None:
            return f"none{fleets}: {self.reason}"
        if self.kind == SRT_SLURM:
            selector = f", selector {self.selector}" if self.selector else ""
            copied = f" ({self.copied_by})" if self.copied_by else ""
            return f"srt-slurm recipe {self.path}{selector}{fleets}{copied}"
        return f"{self.path}{fleets}"


class _NoSetting(Exception):
    """A template names an additional-setting the job does not set."""


class _Settings(dict[str, str]):
    def __missing__(self, key: str) -> str:
        raise _NoSetting(key)


def job_settings(job: Job) -> dict[str, str]:
    """The job's additional-settings as the workflow exports them: prefill's, then decode's (the later wins)."""
    out: dict[str, str] = {}
    if not job.multinode:
        return out
    for role in ("prefill", "decode"):
        block = job.fields.get(role)
        settings = block.get("additional-settings") if isinstance(block, dict) else None
        for item in settings if isinstance(settings, list) else ():
            name, sep, value = str(item).partition("=")
            if sep and name.strip():
                out[name.strip()] = value
    return out


def fleet_of(node: str) -> str:
    """``mi355x-amds_03`` -> ``mi355x-amds``: the workflow starts ``runners/launch_${RUNNER_NAME%%_*}.sh``."""
    return node.split("_", 1)[0]


def launcher_of(fleet: str) -> str:
    """The launcher the workflow starts for a fleet."""
    return f"runners/launch_{fleet}.sh"


# Reasons name the launchers of every fleet that resolves alike, once the fleets are grouped.
_LAUNCHERS, _RUN, _SUBMIT, _COPY, _TAKE = "\0launchers", "\0run", "\0submit", "\0copy", "\0take"


def _name_launchers(reason: str, fleets: list[str]) -> str:
    if "\0" not in reason:
        return reason
    one = len(fleets) == 1
    names = ", ".join(launcher_of(f) for f in fleets)
    for mark, singular, plural in ((_LAUNCHERS, names, names), (_RUN, "runs", "run"), (_SUBMIT, "submits", "submit"),
                                   (_COPY, "copies", "copy"), (_TAKE, "takes", "take")):
        reason = reason.replace(mark, singular if one else plural)
    return reason


def fleets_of(label: str, labels: Mapping[str, Any] | None) -> tuple[str, ...]:
    """Fleets of a runner label's nodes, in runners.yaml order.

    An undefined label (runner-undefined reports it) has no nodes; the label
    itself, without ``cluster:``, stands in for its fleet, which is what such
    labels are named after (``gb300-nv``, ``cluster:mi325x-tw``).
    """
    nodes = labels.get(label) if labels is not None else None
    found: dict[str, None] = {}
    if isinstance(nodes, list):
        for node in nodes:
            if isinstance(node, str) and node:
                found[fleet_of(node)] = None
    return tuple(found) or (label.removeprefix("cluster:"),)


def _any_glob(value: str, globs: tuple[str, ...]) -> bool:
    return not globs or any(fnmatch.fnmatchcase(value, g) for g in globs)


def _matches(match: Match, job: Job, fleet: str, settings: Mapping[str, str]) -> bool:
    f = job.fields
    return (_any_glob(fleet, match.fleet)
            and _any_glob(str(f.get("runner") or ""), match.runner)
            and _any_glob(str(f.get("framework") or ""), match.framework)
            and (match.multinode is None or match.multinode == job.multinode)
            and (match.scenario is None or match.scenario == job.scenario)
            and (match.setting is None or bool(settings.get(match.setting)))
            and (match.without_setting is None or not settings.get(match.without_setting)))


def _values(job: Job, fleet: str, settings: Mapping[str, str]) -> dict[str, Any]:
    f = job.fields
    framework = str(f.get("framework") or "")
    agentic = job.scenario == AGENTIC
    return {
        "model_prefix": f.get("model-prefix") or "",
        "precision": f.get("precision") or "",
        "gpu": gpu_name(str(f.get("runner") or "")),
        "framework": framework,
        "framework_suffix": FRAMEWORK_SUFFIXES.get(framework, ""),
        "mtp": "_mtp" if f.get("spec-decoding") == "mtp" else "",
        "scenario_dir": "agentic" if agentic else "fixed_seq_len",
        "agentic_dir": "agentic/" if agentic else "",
        "config_key": job.config_key,
        "fleet": fleet,
        "settings": _Settings(settings),
    }


def _fill(template: str, values: Mapping[str, Any], where: str | None) -> str | None:
    """The template filled in; None when it names a setting the job does not set.

    ``where`` is the configuration file the template comes from (None for a default).
    """
    try:
        return template.format(**values)
    except _NoSetting:
        return None
    except (KeyError, IndexError, ValueError, AttributeError) as exc:
        expected = ", ".join("{" + k + "}" for k in PLACEHOLDERS)
        raise UsageError(f"recipe template `{template}` cannot be filled ({type(exc).__name__}: {exc}); "
                         f"expected only the placeholders {expected}", path=where) from None


class Resolver:
    """Resolves jobs against one snapshot; results are shared by jobs that resolve alike."""

    def __init__(self, config: ProjectConfig, files: Collection[str], labels: Mapping[str, Any] | None,
                 snapshot: Snapshot | None = None) -> None:
        self.config = config
        self.files = files
        self.labels = labels
        # Where the launchers are read (their copies of recipe directories); None: no launcher is read.
        self.snapshot = snapshot
        self._copies: dict[str, tuple[RecipeCopy, ...]] = {}
        self.rules = (*config.resolution_rules, *DEFAULT_RULES)
        self._dirs: frozenset[str] | None = None
        self._cache: dict[tuple[Any, ...], RecipeResolution] = {}
        self._fleets: dict[str, tuple[str, ...]] = {}
        # Jobs of different configs resolve alike unless a template names the config key.
        templates = (*config.single_node_templates, *config.multinode_templates,
                     *(t for r in self.rules for t in (*r.templates, *r.inputs)))
        self._per_config = any("{config_key" in t for t in templates)

    @property
    def dirs(self) -> frozenset[str]:
        """Every directory that holds a file of the snapshot."""
        if self._dirs is None:
            out: set[str] = set()
            for path in self.files:
                parent = posixpath.dirname(path)
                while parent and parent not in out:
                    out.add(parent)
                    parent = posixpath.dirname(parent)
            self._dirs = frozenset(out)
        return self._dirs

    def rule_for(self, job: Job, fleet: str, settings: Mapping[str, str]) -> ResolutionRule | None:
        return next((r for r in self.rules if _matches(r.match, job, fleet, settings)), None)

    def __call__(self, job: Job) -> RecipeResolution:
        settings = job_settings(job)
        f = job.fields
        # repr(): a malformed config may put a list where a string belongs (the schema reports it).
        key = (job.config_key if self._per_config else "", job.scenario, repr(f.get("runner")), repr(f.get("framework")),
               job.multinode, repr(f.get("model-prefix")), repr(f.get("precision")), repr(f.get("spec-decoding")),
               tuple(sorted(settings.items())))
        found = self._cache.get(key)
        if found is None:
            found = self._cache[key] = self._resolve(job, settings)
        return found

    def node_of(self, label: str, fleet: str) -> str | None:
        """The first node of a runner label in ``fleet`` (the RUNNER_NAME a job there gets); None if it has none."""
        nodes = self.labels.get(label) if self.labels is not None else None
        if isinstance(nodes, list):
            for node in nodes:
                if isinstance(node, str) and fleet_of(node) == fleet:
                    return node
        return None

    def fleets(self, label: str) -> tuple[str, ...]:
        found = self._fleets.get(label)
        if found is None:
            found = self._fleets[label] = fleets_of(label, self.labels)
        return found

    def _resolve(self, job: Job, settings: Mapping[str, str]) -> RecipeResolution:
        groups: list[tuple[RecipeResolution, list[str]]] = []
        for fleet in self.fleets(str(job.fields.get("runner") or "")):
            one = self._for_fleet(job, fleet, settings)
            # Fleets that run the same file group together; fleets that miss it, by what they looked for.
            same = next((fleets for r, fleets in groups if (r.kind, r.path, r.reference) == (one.kind, one.path, one.reference)
                         and (r.path is not None or r.candidates == one.candidates)), None)
            if same is None:
                groups.append((one, [fleet]))
            else:
                same.append(fleet)
        results = [replace(r, fleets=tuple(fleets), reason=_name_launchers(r.reason, fleets)) for r, fleets in groups]
        if len(results) == 1:
            return results[0]
        return replace(results[0], alternatives=tuple(results[1:]))

    def _for_fleet(self, job: Job, fleet: str, settings: Mapping[str, str]) -> RecipeResolution:
        rule = self.rule_for(job, fleet, settings)
        if rule is None:
            return RecipeResolution(None, (), SCRIPT, rule="", reason=f"no recipe-resolution rule matches fleet {fleet}")
        values = _values(job, fleet, settings)
        origin = None if rule.is_default else self.config.source
        named = [p for p in (_fill(t, values, origin) for t in rule.inputs) if p]
        inputs = tuple(p for p in named if p in self.files)
        missing = tuple(p for p in named if p not in self.files)
        if rule.kind == SCRIPT:
            return replace(self._script(job, rule, values, inputs, fleet), missing_inputs=missing)
        if rule.kind == SRT_SLURM:
            return replace(self._srt_slurm(job, rule, settings, inputs, fleet), missing_inputs=missing)
        return RecipeResolution(None, (), EXTERNAL, rule=rule.name, rule_source=rule.source, inputs=inputs,
                                reason=f"rule `{rule.name}` runs every such job from outside the repository")

    def _script(self, job: Job, rule: ResolutionRule, values: Mapping[str, Any], inputs: tuple[str, ...],
                fleet: str) -> RecipeResolution:
        templates = rule.templates or (self.config.multinode_templates if job.multinode else self.config.single_node_templates)
        # recipe-templates and the repository's own rules come from its configuration file.
        origin = None if rule.templates and rule.is_default else self.config.source
        candidates: list[str] = []
        for template in templates:
            path = _fill(template, values, origin)
            if path is not None and path not in candidates:
                candidates.append(path)
        path = next((c for c in candidates if c in self.files), None)
        if path is None:  # the same name where an earlier layout kept it (the candidates stay today's)
            path = next((earlier + c[len(now):] for c in candidates for now, earlier in EARLIER_SCRIPT_DIRS
                         if c.startswith(now) and earlier + c[len(now):] in self.files), None)
        if path or not candidates:
            reason = "" if path else f"rule `{rule.name}` gives no candidate for this job"
        elif len(candidates) == 1:
            reason = f"{_LAUNCHERS} {_RUN} {candidates[0]}, which does not exist"
        else:
            reason = f"{_LAUNCHERS} {_RUN} the first that exists of {', '.join(candidates)}; none does"
        return RecipeResolution(path, tuple(candidates), SCRIPT, inputs=inputs, rule=rule.name,
                                rule_source=rule.source, reason=reason)

    def launcher_copies(self, fleet: str) -> tuple[RecipeCopy, ...]:
        """The copies of recipe directories the fleet's launcher makes into its srt-slurm checkout."""
        found = self._copies.get(fleet)
        if found is None:
            found = ()
            if self.snapshot is not None:
                path, data = read_launcher(self.snapshot, launcher_of(fleet))
                found = scan_copies(path, data) if data is not None else ()
            self._copies[fleet] = found
        return found

    def _srt_slurm(self, job: Job, rule: ResolutionRule, settings: Mapping[str, str], inputs: tuple[str, ...],
                   fleet: str) -> RecipeResolution:
        common: dict[str, Any] = {"kind": SRT_SLURM, "setting": rule.setting, "inputs": inputs, "rule": rule.name,
                                  "rule_source": rule.source}
        reference = settings.get(rule.setting)
        if not reference:
            return RecipeResolution(None, (), reason=(
                f"{_LAUNCHERS} {_SUBMIT} the srt-slurm recipe named by `{rule.setting}=` in additional-settings, "
                f"and this row sets none"), **common)
        written, _, selector = reference.partition(":")
        written = written.strip()
        common.update(reference=reference, selector=selector.strip() or None)
        path = rule.srt_recipe_path(written)
        copies = self.launcher_copies(fleet)
        copy, copied = copy_for(copies, posixpath.normpath(written), launcher_inputs(job, settings),
                                self.files) if copies else (None, None)
        if copy is not None and copied is not None and copied != path:
            # The launcher puts another repository directory where the reference points.
            common["copied_by"] = copy.describe()
            if copied in self.files:
                return RecipeResolution(copied, (copied,), **common)
            return RecipeResolution(None, (copied,), suggestions=self._close(copied), reason=(
                f"{copied} does not exist, and the recipe is {written} only as {copy.describe()}"), **common)
        if path.startswith(("/", "../")) or path == "..":
            return RecipeResolution(None, (), **{**common, "kind": EXTERNAL},
                                    reason="the reference points outside the repository")
        if path in self.files:
            return RecipeResolution(path, (path,), **common)
        directory = posixpath.dirname(path)
        if directory.startswith(rule.root + "/") and directory in self.dirs:
            # Launchers copy the repository's recipe directories over their
            # srt-slurm checkout: a directory the repository holds is its own,
            # and a file missing from it is a recipe that was renamed or deleted.
            return RecipeResolution(None, (path,), suggestions=self._close(path), reason=(
                f"{path} does not exist, while the repository holds {directory}/, which {_LAUNCHERS} {_COPY} "
                "over the srt-slurm checkout"), **common)
        return RecipeResolution(None, (path,), **{**common, "kind": EXTERNAL}, reason=(
            f"not in the repository ({path} does not exist); {_LAUNCHERS} {_TAKE} it from the srt-slurm checkout"))

    def _close(self, path: str) -> tuple[str, ...]:
        """Existing files of ``path``'s directory with names close to its name."""
        directory = posixpath.dirname(path)
        names = sorted(posixpath.basename(p) for p in self.files if posixpath.dirname(p) == directory)
        return tuple(f"{directory}/{n}" for n in difflib.get_close_matches(posixpath.basename(path), names, n=3))


def _runner_labels(snapshot: Snapshot, config: ProjectConfig) -> Mapping[str, Any] | None:
    import yaml

    raw = snapshot.read(config.runners)
    try:
        data = yaml.load(raw.decode("utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)) if raw else None
    except (yaml.YAMLError, UnicodeDecodeError):
        return None  # yaml-syntax reports it; jobs resolve as for undefined labels
    return runner_labels_of(data) or None


# One resolver per snapshot and configuration (a snapshot lists its files once).
_RESOLVERS: weakref.WeakKeyDictionary[Snapshot, dict[int, Resolver]] = weakref.WeakKeyDictionary()


def resolver_for(config: ProjectConfig, snapshot: Snapshot, files: Collection[str] | None = None,
                 labels: Mapping[str, Any] | None = None) -> Resolver:
    """The snapshot's shared resolver (a fresh one when the snapshot cannot be weakly referenced)."""
    def make() -> Resolver:
        known = labels if labels is not None else _runner_labels(snapshot, config)
        return Resolver(config, files if files is not None else frozenset(snapshot.files()), known, snapshot)

    try:
        per_config = _RESOLVERS.setdefault(snapshot, {})
    except TypeError:
        return make()
    found = per_config.get(id(config))
    if found is None or found.config is not config:
        found = per_config[id(config)] = make()
    return found


def recipe_roots(config: ProjectConfig) -> tuple[str, ...]:
    """Directories whose files can be recipes or recipe inputs besides shell scripts (srt-slurm and llm-d YAML)."""
    out: dict[str, None] = {}
    for rule in (*config.resolution_rules, *DEFAULT_RULES):
        if rule.kind == SRT_SLURM:
            out[rule.root.rstrip("/") + "/"] = None
        for template in rule.inputs:
            fixed = template.split("{", 1)[0]
            directory = fixed if fixed.endswith("/") else posixpath.dirname(fixed) + "/"
            if directory != "/":
                out[directory] = None
    return tuple(out)
