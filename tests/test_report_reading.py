"""Reports people can act on: colour on a terminal only, short table cells, links to the line at the commit."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from ci_tools.findings import Baseline, Finding, Location, Severity
from ci_tools.report import markdown, text
from ci_tools.report.context import Links, ReportContext, actions_links

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "tests" / "fixtures" / "rules" / "runner-undefined" / "err" / "undefined-cluster-label"
SHA = "0123456789abcdef0123456789abcdef01234567"
LONG = ("`CONFIG_FILE=recipes/vllm/deepseek-v4/agentic/disagg-gb300-1p6d-dep4-tp4-agentic.yaml` of this agentic-coding "
        "row names no recipe: benchmarks/multi_node/srt-slurm-recipes/vllm/deepseek-v4/agentic/disagg-gb300-1p6d-dep4-"
        "tp4-agentic.yaml does not exist, while the repository holds benchmarks/multi_node/srt-slurm-recipes/vllm/"
        "deepseek-v4/agentic/, which runners/launch_gb300-nv.sh copies over the srt-slurm checkout; closest: a.yaml")


def _tree(tmp_path: Path) -> Path:
    from fixture_trees import tree_files

    repo = tmp_path / "repo"
    for rel, path in tree_files(FIXTURE).items():
        if rel.endswith(".yaml"):
            (repo / rel).parent.mkdir(parents=True, exist_ok=True)
            (repo / rel).write_bytes(path.read_bytes())
    return repo


def _on_a_terminal(argv: list[str], env: dict[str, str]) -> bytes:
    """What the command writes to a pseudo-terminal (a person's shell)."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "ci_tools", *argv], stdout=follower, stderr=subprocess.DEVNULL,
                            env=env, close_fds=True)
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: the other side closed
            break
        if not chunk:
            break
        chunks.append(chunk)
    proc.wait(timeout=120)
    os.close(leader)
    return b"".join(chunks)


def test_text_is_coloured_on_a_terminal_and_plain_in_a_pipe(tmp_path: Path) -> None:
    repo = _tree(tmp_path)
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "CI", "GITHUB_ACTIONS", "TERM")}
    argv = ["validate", "--repo", str(repo), "--format", "text", "--select", "runner-undefined"]
    coloured = _on_a_terminal(argv, env)
    assert b"\x1b[1;31merror\x1b[0m" in coloured and b"\x1b[2m[runner-undefined]\x1b[0m" in coloured
    piped = subprocess.run([sys.executable, "-m", "ci_tools", *argv], env=env, capture_output=True, timeout=120)
    assert b"\x1b" not in piped.stdout and b"error: runner label" in piped.stdout
    for quiet in ({"NO_COLOR": "1"}, {"GITHUB_ACTIONS": "true"}):
        assert b"\x1b" not in _on_a_terminal(argv, {**env, **quiet}), quiet


def test_long_messages_are_cut_in_tables_and_kept_whole_elsewhere() -> None:
    finding = Finding("recipe-missing", Severity.ERROR, LONG, Location("configs/nvidia-master.yaml", 7147, 13))
    row = markdown.row(finding)
    message = row.rsplit(" | ", 1)[1]
    assert len(message) < 260 and message.endswith(" … |\n") and "srt-slurm checkout" not in message
    assert LONG in text.render([finding])


def test_locations_link_to_the_line_at_the_commit_inside_actions_only() -> None:
    env = {"GITHUB_ACTIONS": "true", "GITHUB_SERVER_URL": "https://github.example.com", "GITHUB_REPOSITORY": "o/r"}
    links = actions_links(SHA, "f" * 40, env)
    assert links == Links("https://github.example.com", "o/r", SHA, "f" * 40)
    assert actions_links(SHA, None, {**env, "GITHUB_ACTIONS": "false"}) is None
    assert actions_links("HEAD", None, env) is None  # only a full commit id is a stable link
    here = Finding("runner-undefined", Severity.ERROR, "x", Location("configs/a b.yaml", 5, 11, 7, 1))
    fixed = Finding("runner-undefined", Severity.ERROR, "x", Location("configs/a.yaml", 9, 11), baseline=Baseline.ABSENT)
    row = markdown.row(here, ReportContext(links))
    assert f"[`configs/a b.yaml:5:11`](https://github.example.com/o/r/blob/{SHA}/configs/a%20b.yaml#L5-L7)" in row
    assert f"/blob/{'f' * 40}/configs/a.yaml#L9)" in markdown.row(fixed, ReportContext(links))  # at the base
    assert "](http" not in markdown.row(here).split(" | ")[2]  # no links outside Actions


@pytest.mark.parametrize("pr_description", [True, False])
def test_a_pr_description_location_is_never_a_link(pr_description: bool) -> None:
    path = "PR description" if pr_description else "perf-changelog.yaml"
    finding = Finding("claim-contradicted", Severity.ERROR, "x", Location(path, 3, 1))
    links = Links("https://github.com", "o/r", SHA)
    assert (links.url(finding) is None) is pr_description
