"""Project configuration: ``.ci-tools.yaml`` at the repository root.

Every setting has a default matching the InferenceX layout, so a repository
laid out like it needs no file at all.  The whole file, sections included, is
checked on load against ``schemas/ci-tools-config.schema.json`` (closed
mappings: a misspelt key at any depth is a usage error with its line).
Feature sections (``claims``, ``dispatch``, ``sweep``, ``limits``) are then
kept as raw mappings and read by the feature that owns them, which checks
what a schema cannot (a login's spelling, an absolute path).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping

from ..errors import UsageError
from .resolution_rules import ResolutionRule, parse_rules
from .suppressions import Suppression, read_suppressions

if TYPE_CHECKING:
    from ..schemacheck.check import SchemaProblem
from ..revision.yamlpos import NO_SPAN, PosMap, YamlLoadError, key_line, load_yaml

CONFIG_FILE = ".ci-tools.yaml"

DEFAULT_SINGLE_NODE_TEMPLATES = (
    "benchmarks/single_node/{scenario_dir}/{model_prefix}_{precision}_{gpu}_{framework}{mtp}.sh",
    "benchmarks/single_node/{scenario_dir}/{model_prefix}_{precision}_{gpu}{framework_suffix}{mtp}.sh",
    # Older history kept recipes directly under single_node/.
    "benchmarks/single_node/{model_prefix}_{precision}_{gpu}_{framework}{mtp}.sh",
    "benchmarks/single_node/{model_prefix}_{precision}_{gpu}{framework_suffix}{mtp}.sh",
)
# What launch_mi355x-amds.sh runs for a multinode disagg job: no spec-decoding
# suffix, agentic recipes in their own directory (see ci_tools.config.resolution_rules
# for the other fleets).
DEFAULT_MULTINODE_TEMPLATES = (
    "benchmarks/multi_node/{agentic_dir}{model_prefix}_{precision}_{gpu}_{framework}.sh",
)
# Launch forms of the inference servers (see ci_tools.shell.server): words are
# globs, the first is the program; a program held in a variable matches too.
DEFAULT_SERVER_PATTERNS = (
    "vllm serve",
    "sglang serve",
    "python* -m sglang.launch_server",
    "python* -m atom.entrypoints.openai_server",
    "trtllm-serve",
)
# Launch forms of the routers that spread a job's requests over its servers (sglang-router, vllm-router): their
# command lines are recorded beside the servers', never taken for a server's.
DEFAULT_ROUTER_PATTERNS = (
    "python* -m sglang_router.launch_router",
    "vllm-router",
)
CONFIG_SCHEMA = "ci-tools-config"
_SLUG = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")


@dataclass(frozen=True)
class ProjectConfig:
    root: Path
    master_configs: tuple[str, ...] = ("configs/*-master.yaml",)
    runners: str = "configs/runners.yaml"
    changelog: str = "perf-changelog.yaml"
    benchmark_lib: str = "benchmarks/benchmark_lib.sh"
    single_node_templates: tuple[str, ...] = DEFAULT_SINGLE_NODE_TEMPLATES
    multinode_templates: tuple[str, ...] = DEFAULT_MULTINODE_TEMPLATES
    server_patterns: tuple[str, ...] = DEFAULT_SERVER_PATTERNS
    router_patterns: tuple[str, ...] = DEFAULT_ROUTER_PATTERNS
    # `recipe-resolution`: the repository's own rules, tried before the defaults.
    resolution_rules: tuple[ResolutionRule, ...] = ()
    # `repository` as the file sets it; the `repository` property finds it otherwise.
    repository_setting: str | None = None
    pr_link_pattern: str = "https://github.com/{repository}/pull/{number}"
    default_branch: str = "main"
    # Which errors fail `check` once it compared with a base: "new" (those the change brings) or "all".
    fail_on: str = "new"
    # `ignore`: findings not reported, each entry with its reason.
    suppressions: tuple[Suppression, ...] = ()
    # `severity`: (rule id or prefix, severity) the findings of those rules are reported with.
    severities: tuple[tuple[str, str], ...] = ()
    # Paths (globs) whose changes never affect a benchmark result.
    sections: Mapping[str, Any] = field(default_factory=dict)
    source: str | None = None
    # The settings the file gives (its top-level keys); the others are defaults.
    explicit: frozenset[str] = frozenset()

    @cached_property
    def repository(self) -> str | None:
        """OWNER/NAME: the file's `repository`, else $GITHUB_REPOSITORY, else the origin remote's GitHub name.

        Found on first use: few commands need it, and asking the remote costs a git process.
        """
        return self.repository_setting or _repository_from_environment(self.root)

    def pr_link(self, number: int | str) -> str:
        return self.pr_link_pattern.format(repository=self.repository or "OWNER/REPO", number=number)

    def pr_link_regex(self) -> re.Pattern[str]:
        """Matches a canonical link; group ``number`` is the PR number."""
        repo = re.escape(self.repository) if self.repository else r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+"
        parts = self.pr_link_pattern.split("{number}")
        head = re.escape(parts[0]).replace(re.escape("{repository}"), repo)
        tail = re.escape(parts[1]) if len(parts) > 1 else ""
        return re.compile(f"^{head}(?P<number>[1-9][0-9]*){tail}$")

    @property
    def shown_source(self) -> str:
        """The configuration file as findings name it: relative to the root when it lies inside it."""
        source = Path(self.source) if self.source else self.root / CONFIG_FILE
        try:
            return source.resolve().relative_to(self.root).as_posix()
        except ValueError:
            return str(source)

    def section(self, name: str) -> Mapping[str, Any]:
        value = self.sections.get(name)
        return value if isinstance(value, Mapping) else {}

    def reject_unknown_keys(self, name: str, allowed: tuple[str, ...], noun: str = "setting") -> None:
        """A usage error at the first key of section ``name`` that is not ``allowed``, naming the ones that are."""
        section = self.section(name)
        for key in section:
            if key not in allowed:
                raise UsageError(f"unknown {noun} `{name}.{key}`, expected one of: {', '.join(allowed)}",
                                 path=self.source, line=key_line(section, key))


# Where InferenceX kept its configs before moving them to the repository root (2026-07-02, #1992):
# a revision of that time is read with these paths when the configuration does not name others.
LEGACY_LAYOUTS = (
    {"master_configs": (".github/configs/*-master.yaml",), "runners": ".github/configs/runners.yaml"},
)


def layout_at(config: ProjectConfig, glob: Callable[[str], list[str]]) -> ProjectConfig:
    """``config`` with the config paths a revision really uses (``glob`` lists that revision's files).

    A replay over a repository's history meets revisions from before a layout
    change; when the default paths match nothing there and an earlier default
    layout does, that one is used.  Paths the configuration file sets are never
    replaced.
    """
    if {"master-configs", "runners"} & config.explicit or any(glob(p) for p in config.master_configs):
        return config
    for layout in LEGACY_LAYOUTS:
        patterns = layout["master_configs"]
        assert isinstance(patterns, tuple)
        if any(glob(p) for p in patterns):
            from dataclasses import replace

            return replace(config, master_configs=patterns, runners=str(layout["runners"]))
    return config


# Settings of ProjectConfig by their key in the file; the schema has checked their types.
_STR_KEYS = {
    "runners": "runners",
    "changelog": "changelog",
    "benchmark-lib": "benchmark_lib",
    "repository": "repository_setting",
    "pr-link-pattern": "pr_link_pattern",
    "default-branch": "default_branch",
    "fail-on": "fail_on",
}
_LIST_KEYS = {
    "master-configs": "master_configs",
    "server-patterns": "server_patterns",
    "router-patterns": "router_patterns",
}
_TEMPLATE_KEYS = {"single-node": "single_node_templates", "multinode": "multinode_templates"}


def _repository_from_environment(root: Path) -> str | None:
    env = os.environ.get("GITHUB_REPOSITORY")
    if env and _SLUG.match(env):
        return env
    import subprocess

    try:
        url = subprocess.run(
            ["git", "-C", str(root), "config", "--get", "remote.origin.url"],
            capture_output=True, text=True, timeout=5, check=False,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    m = re.search(r"github\.com[:/]([A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+?)(?:\.git)?$", url)
    return m.group(1) if m else None


def _read_severities(value: PosMap, shown: str) -> tuple[tuple[str, str], ...]:
    """The `severity` overrides (schema-checked), each rule id checked against the registry with its line."""
    from ..findings import unknown_patterns

    for rule in value:
        if unknown_patterns([rule]):
            raise UsageError(f"`severity`: `{rule}` matches no rule; expected a rule id or a prefix of ids ending "
                             "where a word ends (`ci-tools rules` lists them)", path=shown, line=value.key_span(rule)[0])
    return tuple((str(rule), str(severity)) for rule, severity in value.items())


def _strings(value: str | list[str]) -> tuple[str, ...]:
    return (value,) if isinstance(value, str) else tuple(value)


def _check_schema(data: PosMap, shown: str, whole_floats: bool) -> None:
    """Every key and type of the file against ``schemas/ci-tools-config.schema.json``; all problems at once."""
    from ..schemacheck.check import Anchor, check

    anchor = Anchor(data, NO_SPAN, data.span, "the configuration", whole_floats)
    problems = sorted(check(CONFIG_SCHEMA, anchor), key=lambda p: p.span)
    if problems:
        messages = [_worded(p) for p in problems]
        more = "".join(f"\n{shown}:{p.span[0]}: {m}" for p, m in zip(problems[1:], messages[1:]))
        raise UsageError(messages[0] + more, path=shown, line=problems[0].span[0])


def _worded(problem: SchemaProblem) -> str:
    """An unknown key by its dotted name (`dispatch.min-permision`), as the feature sections word it."""
    if problem.keyword != "additionalProperties":
        return problem.message
    dotted = ".".join([*(str(part) for part in problem.path), str(problem.data["key"])])
    return f"unknown setting `{dotted}`, expected one of: {', '.join(problem.data['expected'])}"


def find_root(start: str | Path) -> Path:
    """The repository root for a command run in ``start``: the nearest directory upwards holding ``.git``
    (what git itself takes as the work tree), else the nearest holding ``.ci-tools.yaml``, else ``start``.

    Paths in the configuration and in every finding are relative to the root, so a command run from
    ``benchmarks/single_node`` reads the same files as one run at the top, as ruff and actionlint do.
    """
    begin = Path(start).resolve()
    for marker in (".git", CONFIG_FILE):
        for directory in (begin, *begin.parents):
            if (directory / marker).exists():
                return directory
    return begin


def load_config(root: str | Path | None, config_file: str | Path | None = None) -> ProjectConfig:
    """Load ``.ci-tools.yaml`` (or ``config_file``) over the defaults; ``root`` None: found from the working
    directory (:func:`find_root`)."""
    root_path = find_root(Path.cwd()) if root is None else Path(root).resolve()
    if not root_path.is_dir():
        raise UsageError(f"repository directory {root} does not exist or is not a directory")
    path = Path(config_file) if config_file else root_path / CONFIG_FILE
    if config_file and not path.is_file():
        raise UsageError(f"configuration file {config_file} does not exist")
    if not path.is_file():
        return ProjectConfig(root=root_path)
    if not config_file and not path.resolve().is_relative_to(root_path):
        raise UsageError("is a symbolic link that leads out of the repository; it is not followed (pass --config "
                         "FILE to use a file outside it)", path=CONFIG_FILE)
    shown = str(path)
    try:
        loaded = load_yaml(path.read_bytes(), shown)
    except YamlLoadError as exc:
        raise UsageError(exc.message, path=shown, line=exc.line) from None
    data = loaded.value
    if data is None:
        data = PosMap()
    if not isinstance(data, PosMap):
        raise UsageError("the configuration must be a mapping of settings", path=shown, line=1)
    if loaded.duplicates:
        dup = loaded.duplicates[0]
        raise UsageError(f"duplicate key `{dup.key}` (first defined at line {dup.first[0]})", path=shown, line=dup.second[0])
    _check_schema(data, shown, loaded.whole_float_within(1, data.span[2]))
    kwargs: dict[str, Any] = {}
    sections: dict[str, Any] = {}
    for key, value in data.items():
        if key in _STR_KEYS:
            kwargs[_STR_KEYS[key]] = value
        elif key in _LIST_KEYS:
            kwargs[_LIST_KEYS[key]] = _strings(value)
        elif key == "recipe-templates":
            kwargs.update({_TEMPLATE_KEYS[sub]: _strings(templates) for sub, templates in value.items()})
        elif key == "recipe-resolution":  # the rules' own reader words each problem with its line
            kwargs["resolution_rules"] = parse_rules(value, shown, data.key_span(key)[0])
        elif key == "ignore":
            kwargs["suppressions"] = read_suppressions(value, shown, value.item_span)
        elif key == "severity":
            kwargs["severities"] = _read_severities(value, shown)
        else:  # a feature section: its owner reads it (the schema already checked every key in it)
            sections[key] = value
    repo = kwargs.get("repository_setting")
    if repo is not None and not _SLUG.match(repo):
        raise UsageError(f"`repository` must look like OWNER/NAME, found {repo!r}", path=shown,
                         line=data.value_span("repository")[0])
    if "{number}" not in kwargs.get("pr_link_pattern", "{number}"):
        raise UsageError("`pr-link-pattern` must contain {number}", path=shown, line=data.value_span("pr-link-pattern")[0])
    config = ProjectConfig(root=root_path, sections=sections, source=shown, explicit=frozenset(data), **kwargs)
    for name in sections:
        if name in SECTION_READERS:
            _read_section(name, config)
    return config


# The reader of each feature section, run on load so that a bad value fails
# every command at once, in the owner's words (the schema has checked the
# keys).  Named as "module:function" and imported only when the file has that
# section: the configuration is read by every stage, so it imports none.
SECTION_READERS: dict[str, str] = {
    "claims": "ci_tools.claims.text.subjects:load_claims_settings",
    "dispatch": "ci_tools.github.auth:load_policy",
    "sweep": "ci_tools.sweep.settings:load_sweep_settings",
    "job-env": "ci_tools.jobs.env.settings:load_job_env_settings",
    "changelog-gate": "ci_tools.changelog.policy:load_gate_policy",
}


def _read_section(name: str, config: ProjectConfig) -> None:
    import importlib

    module, _, function = SECTION_READERS[name].partition(":")
    getattr(importlib.import_module(module), function)(config)
