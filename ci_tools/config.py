"""Project configuration: ``.ci-tools.yaml`` at the repository root.

Every setting has a default matching the InferenceX layout, so a repository
laid out like it needs no file at all.  Feature sections (``claims``,
``dispatch``, ``sweep``) are kept as raw mappings here and parsed, with their
own validation, by the feature that owns them; this module only guarantees
that the file is well formed and that no unknown top-level key is silently
ignored.
"""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from .errors import UsageError
from .yamlpos import PosMap, YamlLoadError, load_yaml

CONFIG_FILE = ".ci-tools.yaml"

DEFAULT_SINGLE_NODE_TEMPLATES = (
    "benchmarks/single_node/{scenario_dir}/{model_prefix}_{precision}_{gpu}_{framework}{mtp}.sh",
    "benchmarks/single_node/{scenario_dir}/{model_prefix}_{precision}_{gpu}{framework_suffix}{mtp}.sh",
    # Older history kept recipes directly under single_node/.
    "benchmarks/single_node/{model_prefix}_{precision}_{gpu}_{framework}{mtp}.sh",
    "benchmarks/single_node/{model_prefix}_{precision}_{gpu}{framework_suffix}{mtp}.sh",
)
DEFAULT_MULTINODE_TEMPLATES = (
    "benchmarks/multi_node/{agentic_dir}{model_prefix}_{precision}_{gpu}_{framework}{mtp}.sh",
    "benchmarks/multi_node/{agentic_dir}{model_prefix}_{precision}_{gpu}{framework_suffix}{mtp}.sh",
)
# Launch forms of the inference servers (see ci_tools.recipes.server): words are
# globs, the first is the program; a program held in a variable matches too.
DEFAULT_SERVER_PATTERNS = (
    "vllm serve",
    "sglang serve",
    "python* -m sglang.launch_server",
    "python* -m atom.entrypoints.openai_server",
    "trtllm-serve",
)
FEATURE_SECTIONS = ("claims", "dispatch", "sweep")
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
    repository: str | None = None
    pr_link_pattern: str = "https://github.com/{repository}/pull/{number}"
    default_branch: str = "main"
    # Paths (globs) whose changes never affect a benchmark result.
    sections: Mapping[str, Any] = field(default_factory=dict)
    source: str | None = None

    def pr_link(self, number: int | str) -> str:
        return self.pr_link_pattern.format(repository=self.repository or "OWNER/REPO", number=number)

    def pr_link_regex(self) -> re.Pattern[str]:
        """Matches a canonical link; group ``number`` is the PR number."""
        repo = re.escape(self.repository) if self.repository else r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+"
        parts = self.pr_link_pattern.split("{number}")
        head = re.escape(parts[0]).replace(re.escape("{repository}"), repo)
        tail = re.escape(parts[1]) if len(parts) > 1 else ""
        return re.compile(f"^{head}(?P<number>[1-9][0-9]*){tail}$")

    def section(self, name: str) -> Mapping[str, Any]:
        value = self.sections.get(name)
        return value if isinstance(value, Mapping) else {}


_STR_KEYS = {
    "runners": "runners",
    "changelog": "changelog",
    "benchmark-lib": "benchmark_lib",
    "repository": "repository",
    "pr-link-pattern": "pr_link_pattern",
    "default-branch": "default_branch",
}
_LIST_KEYS = {
    "master-configs": "master_configs",
    "server-patterns": "server_patterns",
}


def _repository_from_environment(root: Path) -> str | None:
    env = os.environ.get("GITHUB_REPOSITORY")
    if env and _SLUG.match(env):
        return env
    try:
        url = subprocess.run(
            ["git", "-C", str(root), "config", "--get", "remote.origin.url"],
            capture_output=True, text=True, timeout=5, check=False,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    m = re.search(r"github\.com[:/]([A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+?)(?:\.git)?$", url)
    return m.group(1) if m else None


def _string_list(value: Any, key: str, path: str, line: int) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list) and value and all(isinstance(v, str) and v for v in value):
        return tuple(value)
    raise UsageError(f"`{key}` must be a non-empty list of strings, found {value!r}", path=path, line=line)


def load_config(root: str | Path, config_file: str | Path | None = None) -> ProjectConfig:
    """Load ``.ci-tools.yaml`` (or ``config_file``) over the defaults."""
    root_path = Path(root).resolve()
    if not root_path.is_dir():
        raise UsageError(f"repository directory {root} does not exist or is not a directory")
    path = Path(config_file) if config_file else root_path / CONFIG_FILE
    if config_file and not path.is_file():
        raise UsageError(f"configuration file {config_file} does not exist")
    if not path.is_file():
        return ProjectConfig(root=root_path, repository=_repository_from_environment(root_path))
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
    kwargs: dict[str, Any] = {}
    sections: dict[str, Any] = {}
    for key, value in data.items():
        line = data.key_span(key)[0]
        if key in _STR_KEYS:
            if not isinstance(value, str) or not value:
                raise UsageError(f"`{key}` must be a non-empty string, found {value!r}", path=shown, line=line)
            kwargs[_STR_KEYS[key]] = value
        elif key in _LIST_KEYS:
            kwargs[_LIST_KEYS[key]] = _string_list(value, key, shown, line)
        elif key == "recipe-templates":
            if not isinstance(value, dict):
                raise UsageError("`recipe-templates` must map `single-node`/`multinode` to lists of templates", path=shown, line=line)
            for sub, attr in (("single-node", "single_node_templates"), ("multinode", "multinode_templates")):
                if sub in value:
                    kwargs[attr] = _string_list(value[sub], f"recipe-templates.{sub}", shown, line)
            unknown = set(value) - {"single-node", "multinode"}
            if unknown:
                raise UsageError(f"unknown key `{sorted(unknown)[0]}` in `recipe-templates`, expected `single-node` or `multinode`", path=shown, line=line)
        elif key in FEATURE_SECTIONS:
            if not isinstance(value, dict):
                raise UsageError(f"`{key}` must be a mapping, found {value!r}", path=shown, line=line)
            sections[key] = value
        else:
            known = sorted([*_STR_KEYS, *_LIST_KEYS, "recipe-templates", *FEATURE_SECTIONS])
            raise UsageError(f"unknown setting `{key}`, expected one of: {', '.join(known)}", path=shown, line=line)
    repo = kwargs.get("repository")
    if repo is not None and not _SLUG.match(repo):
        raise UsageError(f"`repository` must look like OWNER/NAME, found {repo!r}", path=shown)
    if repo is None:
        kwargs["repository"] = _repository_from_environment(root_path)
    if "{number}" not in kwargs.get("pr_link_pattern", "{number}"):
        raise UsageError("`pr-link-pattern` must contain {number}", path=shown)
    return ProjectConfig(root=root_path, sections=sections, source=shown, **kwargs)
