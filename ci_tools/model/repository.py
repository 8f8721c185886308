"""Loading master configs, runners and the changelog from a snapshot.

Loading never raises for bad data: a file that does not parse becomes a
finding and is left out, so one broken file cannot hide the findings of the
others.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from ..config import ProjectConfig
from ..config.limits import DEFAULT_MAX_FILE_BYTES, limits_of, too_large_finding
from ..findings import Finding, Location, make_finding
from ..revision.snapshot import Snapshot
from ..revision.yamlpos import LoadedYaml, PosMap, Span, YamlLoadError, load_yaml
from .rules import FILE_MISSING, YAML_DUPLICATE_KEY, YAML_SYNTAX


@dataclass
class LoadedFile:
    path: str
    raw: bytes
    yaml: LoadedYaml | None
    error: YamlLoadError | None = None

    @property
    def value(self) -> Any:
        return self.yaml.value if self.yaml else None

    def loc(self, span: Span, note: str = "") -> Location:
        return Location(self.path, span[0], span[1], span[2], span[3], note)


@dataclass
class ConfigEntry:
    """One master config: its key, where it is defined, its raw mapping."""

    key: str
    file: LoadedFile
    data: Any  # a PosMap when well formed; schema rules report anything else
    key_span: Span

    @property
    def path(self) -> str:
        return self.file.path

    def loc(self) -> Location:
        return self.file.loc(self.key_span)

    @cached_property
    def readable(self) -> bool:
        """Whether the config matches the master-config schema, so that jobs may be built from its values."""
        from ..schemacheck.check import MASTER_CONFIG, is_valid

        end = self.data.span[2] if isinstance(self.data, PosMap) else self.key_span[2]
        whole_floats = self.file.yaml is None or self.file.yaml.whole_float_within(self.key_span[0], end)
        return is_valid(MASTER_CONFIG, self.data, whole_floats)


@dataclass
class RepoData:
    snapshot: Snapshot
    config: ProjectConfig
    master_files: list[LoadedFile] = field(default_factory=list)
    runners: LoadedFile | None = None
    changelog: LoadedFile | None = None
    configs: dict[str, ConfigEntry] = field(default_factory=dict)
    # Later definitions of a key already defined in an earlier master file.
    shadowed: list[ConfigEntry] = field(default_factory=list)
    problems: list[Finding] = field(default_factory=list)

    @cached_property
    def runner_labels(self) -> dict[str, Any]:
        return runner_labels_of(self.runners.value if self.runners else None)

    @cached_property
    def hardware(self) -> dict[str, Any]:
        runners = self.runners.value if self.runners else None
        hw = runners.get("hardware") if isinstance(runners, dict) else None
        return dict(hw) if isinstance(hw, dict) else {}


def runner_labels_of(runners: Any) -> dict[str, Any]:
    """The runner labels (label -> node names) of a runners file's data: its `labels` mapping, or the whole
    file in the format InferenceX used until 2026-07-02 (every key a label, no `labels` or `hardware`), which
    runners-schema reports but whose nodes still say which fleets' launchers ran a job."""
    if not isinstance(runners, dict):
        return {}
    labels = runners.get("labels")
    if isinstance(labels, dict):
        return dict(labels)
    if "hardware" not in runners and runners and all(isinstance(v, list) for v in runners.values()):
        return dict(runners)
    return {}


def _load_file(snapshot: Snapshot, path: str, problems: list[Finding], *, required: bool,
               max_bytes: int = DEFAULT_MAX_FILE_BYTES) -> LoadedFile | None:
    raw = snapshot.read(path)
    if raw is None:
        why = getattr(snapshot, "why_absent", lambda _p: None)(path)
        if required or why:
            problems.append(make_finding(
                FILE_MISSING, f"file {path} {why or 'does not exist in the ' + snapshot.label}; expected it because the configuration names it",
                Location(path), data={"path": path},
            ))
        return None
    if len(raw) > max_bytes:
        # Parsing 50 MB of YAML with positions takes 20 s and a gigabyte: the size is the finding.
        problems.append(too_large_finding(path, len(raw), max_bytes))
        return LoadedFile(path=path, raw=raw, yaml=None)
    try:
        loaded = load_yaml(raw, path)
    except YamlLoadError as exc:
        problems.append(make_finding(YAML_SYNTAX, exc.message, Location(path, exc.line, exc.column), data={"path": path}))
        return LoadedFile(path=path, raw=raw, yaml=None, error=exc)
    if loaded.value is None:
        problems.append(make_finding(YAML_SYNTAX, "file is empty; expected a YAML document", Location(path, 1, 1), data={"path": path}))
    for dup in loaded.duplicates:
        problems.append(make_finding(
            YAML_DUPLICATE_KEY,
            f"duplicate key `{dup.key}`: first defined at line {dup.first[0]}, this later definition would silently override it",
            Location(path, dup.second[0], dup.second[1], dup.second[2], dup.second[3]),
            related=[Location(path, dup.first[0], dup.first[1], note="first definition")],
            data={"key": dup.key},
        ))
    return LoadedFile(path=path, raw=raw, yaml=loaded)


def master_paths(snapshot: Snapshot, config: ProjectConfig) -> list[str]:
    """The master config files of a revision, in the configured patterns' order, each once."""
    paths: list[str] = []
    for pattern in config.master_configs:
        for p in snapshot.glob(pattern):
            if p not in paths:
                paths.append(p)
    return paths


def load_repo(snapshot: Snapshot, config: ProjectConfig, *, with_changelog: bool = True) -> RepoData:
    repo = RepoData(snapshot=snapshot, config=config)
    max_bytes = limits_of(config).max_file_bytes
    paths = master_paths(snapshot, config)
    if not paths:
        repo.problems.append(make_finding(
            FILE_MISSING,
            f"no master config matches {', '.join(config.master_configs)}; expected at least one *-master.yaml file",
            Location(config.master_configs[0]), data={"patterns": list(config.master_configs)},
        ))
    for p in paths:
        loaded = _load_file(snapshot, p, repo.problems, required=True, max_bytes=max_bytes)
        if loaded is None:
            continue
        repo.master_files.append(loaded)
        root = loaded.value
        if not isinstance(root, PosMap):
            continue  # schema rules report the wrong root type
        for key, data in root.items():
            entry = ConfigEntry(key=str(key), file=loaded, data=data, key_span=root.key_span(key))
            if entry.key in repo.configs:
                repo.shadowed.append(entry)
            else:
                repo.configs[entry.key] = entry
    repo.runners = _load_file(snapshot, config.runners, repo.problems, required=True, max_bytes=max_bytes)
    if with_changelog:
        repo.changelog = _load_file(snapshot, config.changelog, repo.problems, required=False,
                                    max_bytes=max_bytes)
    return repo
