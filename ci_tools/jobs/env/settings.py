"""The ``job-env:`` section of ``.ci-tools.yaml``: where a job's environment is defined.

Example::

    job-env:
      # The sweep workflow whose calls of reusable templates define what a
      # recipe receives; when it does not exist, the built-in contract
      # (ci_tools/jobs/env/builtin/) stands in.
      workflow: .github/workflows/run-sweep.yml
      # Further variables known to exist when a recipe runs, value unknown.
      runtime: [MODEL_PATH]
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ...config import ProjectConfig
from ...errors import UsageError
from ...revision.yamlpos import describe_type, key_line

SECTION = "job-env"
DEFAULT_WORKFLOW = ".github/workflows/run-sweep.yml"
_KEYS = ("workflow", "runtime")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class JobEnvSettings:
    workflow: str = DEFAULT_WORKFLOW
    runtime: tuple[str, ...] = ()


def load_job_env_settings(config: ProjectConfig) -> JobEnvSettings:
    config.reject_unknown_keys(SECTION, _KEYS, noun="key")
    section = config.section(SECTION)
    path = config.source
    workflow = section.get("workflow", DEFAULT_WORKFLOW)
    if not isinstance(workflow, str) or not workflow:
        raise UsageError(f"`{SECTION}.workflow` must be a repository path, found {describe_type(workflow)}",
                         path=path, line=key_line(section, "workflow"))
    runtime = section.get("runtime", [])
    if not isinstance(runtime, list) or not all(isinstance(n, str) and _NAME.match(n) for n in runtime):
        raise UsageError(f"`{SECTION}.runtime` must be a list of environment variable names, found "
                         f"{describe_type(runtime)}", path=path, line=key_line(section, "runtime"))
    return JobEnvSettings(workflow.removeprefix("./"), tuple(runtime))
