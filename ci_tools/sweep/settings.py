"""The ``sweep:`` section of ``.ci-tools.yaml``: which launcher runs a job, and its limits.

Example::

    sweep:
      launchers:
        "cluster:mi355x-amds": docker
        mi355x: slurm
        "h100-*": direct
      default-launcher: repository
      model-cache: /models
      timeout-minutes: 180
      timeouts:                   # per config key (globs, file order; an exact key first)
        "*-agentic-*": 420
        dsr1-fp8-mi355x-sglang: 90
      grace-seconds: 30
      docker-args: ["--shm-size", "64g"]
      srun-args: ["--partition", "gpu"]
      report-metrics: [tput_per_gpu, median_ttft]

A runner label is looked up exactly first, then against the glob keys in
file order; nothing matching means ``default-launcher``.  Without one, a job
runs through the repository's own launcher (``repository``: the script its
workflow's launch step starts for the node's fleet) where the repository has
it, else ``direct``.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field
from typing import Any, Mapping, TypeVar

from ..config import ProjectConfig
from ..errors import UsageError
from ..revision.yamlpos import describe_type, key_line

LAUNCHER_KINDS = ("repository", "direct", "docker", "slurm")
DEFAULT_TIMEOUT_MINUTES = 240.0
DEFAULT_GRACE_SECONDS = 30.0
_T = TypeVar("_T")
_KEYS = ("launchers", "default-launcher", "model-cache", "timeout-minutes", "timeouts", "grace-seconds",
         "docker-args", "srun-args", "report-metrics")


@dataclass(frozen=True)
class SweepSettings:
    launchers: tuple[tuple[str, str], ...] = ()
    default_launcher: str | None = None  # None: the repository's launcher where it has one, else direct
    model_cache: str | None = None
    timeout_seconds: float = DEFAULT_TIMEOUT_MINUTES * 60
    timeouts: tuple[tuple[str, float], ...] = ()  # (config-key glob, seconds)
    grace_seconds: float = DEFAULT_GRACE_SECONDS
    docker_args: tuple[str, ...] = ()
    srun_args: tuple[str, ...] = ()
    report_metrics: tuple[str, ...] = field(default=())

    def launcher_for(self, runner_label: str) -> str | None:
        """The launcher kind for a runner label (exact key, then globs, then the default; None: not chosen)."""
        return _lookup(self.launchers, runner_label, self.default_launcher)

    def timeout_for(self, config_key: str) -> float:
        """Seconds a job of ``config_key`` may run (``timeouts``, then ``timeout-minutes``)."""
        return _lookup(self.timeouts, config_key, self.timeout_seconds)


def _lookup(pairs: tuple[tuple[str, _T], ...], name: str, default: _T) -> _T:
    """The value of an exact key, else of the first glob matching ``name``, else ``default``."""
    for pattern, value in pairs:
        if pattern == name:
            return value
    for pattern, value in pairs:
        if any(c in pattern for c in "*?[") and fnmatch.fnmatchcase(name, pattern):
            return value
    return default


def _kind(value: Any, where: str, path: str | None, line: int) -> str:
    if not isinstance(value, str) or value not in LAUNCHER_KINDS:
        raise UsageError(f"{where} must be one of {', '.join(LAUNCHER_KINDS)}, found {describe_type(value)}",
                         path=path, line=line)
    return value


def _positive(value: Any, key: str, path: str | None, line: int) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise UsageError(f"`sweep.{key}` must be a positive number, found {describe_type(value)}", path=path, line=line)
    return float(value)


def _strings(value: Any, key: str, path: str | None, line: int) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise UsageError(f"`sweep.{key}` must be a list of strings, found {describe_type(value)}", path=path, line=line)
    return tuple(value)


def parse_sweep_settings(section: Mapping[str, Any], path: str | None = None) -> SweepSettings:
    """Validate the raw ``sweep:`` mapping; errors name the file and line."""
    kwargs: dict[str, Any] = {}
    for key, value in section.items():
        line = key_line(section, key)
        if key == "launchers":
            if not isinstance(value, dict):
                raise UsageError(f"`sweep.launchers` must map runner labels to a launcher ({', '.join(LAUNCHER_KINDS)}), "
                                 f"found {describe_type(value)}", path=path, line=line)
            pairs = []
            for label, kind in value.items():
                label_line = key_line(value, label) or line
                if not isinstance(label, str) or not label:
                    raise UsageError(f"runner label in `sweep.launchers` must be a non-empty string, found {describe_type(label)}",
                                     path=path, line=label_line)
                pairs.append((label, _kind(kind, f"launcher for runner label `{label}`", path, label_line)))
            kwargs["launchers"] = tuple(pairs)
        elif key == "default-launcher":
            kwargs["default_launcher"] = _kind(value, "`sweep.default-launcher`", path, line)
        elif key == "model-cache":
            if not isinstance(value, str) or not value.startswith("/"):
                raise UsageError(f"`sweep.model-cache` must be an absolute path, found {describe_type(value)}", path=path, line=line)
            kwargs["model_cache"] = value
        elif key == "timeout-minutes":
            kwargs["timeout_seconds"] = _positive(value, key, path, line) * 60
        elif key == "timeouts":
            if not isinstance(value, dict):
                raise UsageError("`sweep.timeouts` must map config keys (globs) to minutes, found "
                                 f"{describe_type(value)}", path=path, line=line)
            timeouts = []
            for pattern, minutes in value.items():
                entry_line = key_line(value, pattern) or line
                if not isinstance(pattern, str) or not pattern:
                    raise UsageError(f"a config key in `sweep.timeouts` must be a non-empty string, found "
                                     f"{describe_type(pattern)}", path=path, line=entry_line)
                timeouts.append((pattern, _positive(minutes, f"timeouts.{pattern}", path, entry_line) * 60))
            kwargs["timeouts"] = tuple(timeouts)
        elif key == "grace-seconds":
            kwargs["grace_seconds"] = _positive(value, key, path, line)
        elif key in ("docker-args", "srun-args", "report-metrics"):
            kwargs[key.replace("-", "_")] = _strings(value, key, path, line)
        else:
            raise UsageError(f"unknown setting `sweep.{key}`, expected one of: {', '.join(_KEYS)}", path=path, line=line)
    return SweepSettings(**kwargs)


def load_sweep_settings(config: ProjectConfig) -> SweepSettings:
    return parse_sweep_settings(config.section("sweep"), config.source)
