"""`source $HOME/.local/bin/env` after uv's installer puts its bin directory on PATH and does nothing else
(ci_tools/shell/interp.py ``_installer_env``): the real tree's gb200 launcher does so before it runs srtctl, and
while that line could not be resolved its every change counted for every gb200 config, "the launcher could not be
evaluated" (InferenceX pull requests 2050 and 2087: 17 and 15 configs)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ci_tools.config import ProjectConfig, load_config
from ci_tools.evaluation.launcher_run import evaluate_launcher, launcher_env, mentioned
from ci_tools.jobs.matrix import expand
from ci_tools.model.repository import load_repo
from ci_tools.revision.snapshot import WorkTreeSnapshot
from conftest import full_corpus_dir

LAUNCHER = """\
curl -LsSf https://astral.sh/uv/install.sh | sh
source {env}
srun --export=ALL,PATH="$PATH" uv run bench
"""


def run(tmp_path: Path, env_file: str):  # type: ignore[no-untyped-def]
    data = LAUNCHER.format(env=env_file).encode()
    return evaluate_launcher((("HOME", None), ("PATH", "/usr/bin")), "launch.sh", data, ProjectConfig(root=tmp_path),
                             WorkTreeSnapshot(tmp_path))


@pytest.mark.parametrize("env_file", ["$HOME/.local/bin/env", '"$HOME/.local/bin/env"', "~/.cargo/env"])
def test_an_installers_env_file_puts_its_bin_directory_on_path(tmp_path: Path, env_file: str) -> None:
    found = run(tmp_path, env_file)
    assert found.unknown == ""
    [sh] = [s for s in found.steps if s.program == "sh"]
    [srun] = [s for s in found.steps if s.program == "srun"]
    assert dict(sh.env)["PATH"] == ("/usr/bin",)  # the installer ran with the workflow's PATH ...
    [(_, said, _)] = dict(srun.env)["PATH"]  # ... what runs after the env file, with a PATH known on the node
    assert said.startswith("PATH with $HOME/") and said.endswith(f"put first unless it holds it, after source {env_file}")


def test_another_file_of_the_home_directory_is_still_unknown(tmp_path: Path) -> None:
    assert "cannot resolve `source $HOME/tools/env`" in run(tmp_path, "$HOME/tools/env").unknown


def test_the_real_gb200_launcher_is_evaluated_for_its_jobs() -> None:
    root = full_corpus_dir()
    config, snapshot = load_config(root), WorkTreeSnapshot(root)
    repo = load_repo(snapshot, config, with_changelog=False)
    launcher = "runners/launch_gb200-nv.sh"
    data = (root / launcher).read_bytes()
    assert b"source $HOME/.local/bin/env" in data
    jobs = [j for key in repo.configs if key.startswith("dsv4-fp4-gb200-dynamo") for j in expand(repo, [key])[:1]]
    assert jobs
    for job in jobs:
        found = evaluate_launcher(mentioned(launcher_env(job, config, snapshot), data), launcher, data, config, snapshot)
        assert found.unknown == "", (job.config_key, found.unknown)
        assert any(s.program == "srtctl" or "srtctl" in str(s.words) for s in found.steps), job.config_key
