"""`/run-benchmark ... baseline`: the merge-base's recipes for the same points, on the same runner, in turn.

From the comment (grammar, the dispatcher choosing the merge-base and pairing its jobs with the pull
request's) through the sweep's plan (the merge-base's jobs planned again from its own configs, each
matrix entry saying which runs after which) to the run job's own script under bash.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterator

import pytest
import yaml

from ci_tools.config import load_config
from ci_tools.github.auth import DispatchPolicy
from ci_tools.github.client import GitHubClient, RetryPolicy
from ci_tools.github.command import Command, CommandError, parse_comment
from ci_tools.github.dispatch import Dispatcher, GitRevisions
from ci_tools.github.event import parse_event
from ci_tools.github.selection import DispatchSelection, Target, selection_from_json
from ci_tools.jobs.job import Job
from ci_tools.results.identity import identity
from ci_tools.results.point import point_keys
from ci_tools.sweep.jobs import job_from_entry
from test_github_dispatch import AGENTIC, HEAD_TIME, MASTER, PR, Repo, _git, comment_event, make_repo
from test_github_server import FakeGitHub
from test_workflows import WORKFLOWS

SWEEP = yaml.safe_load((WORKFLOWS / "sweep.yml").read_text(encoding="utf-8"))


def test_the_grammar_takes_baseline_as_a_flag() -> None:
    assert parse_comment("/run-benchmark cfg-* baseline dry-run") == Command(
        "run", globs=("cfg-*",), dry_run=True, baseline=True)
    assert parse_comment("/run-benchmark changelog baseline") == Command("changelog", baseline=True)
    assert parse_comment("/run-benchmark cfg-* baseline baseline") == CommandError(
        ("`baseline` is given more than once",))


@pytest.mark.parametrize("value", [{"sha": "A" * 40, "jobs": 1}, {"sha": "a" * 40}, {"sha": "a" * 40, "jobs": True},
                                   "a" * 40])
def test_a_selection_carries_its_baseline_checked(value: Any) -> None:
    good = DispatchSelection("keys", "c" * 40, (Target("a", ("fixed-seq-len",)),), jobs=3, jobs_digest="0" * 64,
                             baseline="b" * 40, baseline_jobs=2)
    assert selection_from_json(good.dumps()) == good
    assert json.loads(good.dumps())["baseline"] == {"sha": "b" * 40, "jobs": 2}
    data = json.loads(good.dumps())
    data["baseline"] = value
    with pytest.raises(ValueError) as err:
        selection_from_json(json.dumps(data))
    assert str(err.value) == "`baseline` must be {sha: 40 lowercase hex digits, jobs: a count}"


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Repo:
    """The dispatch tests' repository, and one more commit on the topic branch: cfg-a's image bumped (its jobs
    get other ids, same points) and cfg-b one concurrency longer (a point the merge-base does not run)."""
    made = make_repo(tmp_path_factory.mktemp("same-node") / "repo")
    root = made.root
    _git(root, "checkout", "-q", "feature")
    master = (MASTER + AGENTIC).replace("image: rocm/atom:1", "image: rocm/atom:9").replace(
        "{ tp: 8, conc-start: 32, conc-end: 64 }", "{ tp: 8, conc-start: 32, conc-end: 128 }")
    (root / "configs" / "amd-master.yaml").write_text(master)
    _git(root, "commit", "-q", "-am", "bump", date=HEAD_TIME)
    head = _git(root, "rev-parse", "HEAD")
    _git(root, "checkout", "-q", "main")
    return Repo(root, made.base, head)


@pytest.fixture
def github(repo: Repo) -> Iterator[FakeGitHub]:
    fake = FakeGitHub().start()
    fake.grant("alice", "write")
    fake.add_pull(PR, repo.head, repo.base)
    yield fake
    fake.stop()


def _dispatch(repo: Repo, github: FakeGitHub, body: str) -> Any:
    client = GitHubClient(github.repository, api_url=github.url, token="t", retry=RetryPolicy(attempts=1))
    with client:
        return Dispatcher(client, DispatchPolicy(), GitRevisions(load_config(repo.root), fetch=False)).handle(
            parse_event(comment_event(body)))


def test_the_dispatcher_pairs_the_merge_base_jobs(repo: Repo, github: FakeGitHub) -> None:
    outcome = _dispatch(repo, github, "/run-benchmark cfg-* baseline")
    assert outcome.status == "dispatched", outcome.reason
    (sent,) = github.dispatches
    selection = selection_from_json(sent["inputs"]["selection"])
    # cfg-a's 4 jobs and cfg-b's c32 and c64 have a partner; cfg-b's c128 and the new agentic config do not.
    assert (selection.jobs, selection.baseline, selection.baseline_jobs) == (9, repo.base, 6)
    reply = github.comments[PR][-1]["body"]
    assert (f"beside 6 of them, the merge-base `{repo.base[:12]}`'s recipes for the same points on the same "
            "runner, run in turn (a same-node baseline)") in reply
    assert github.violations == []


def test_nothing_to_compare_is_refused(repo: Repo, github: FakeGitHub) -> None:
    outcome = _dispatch(repo, github, "/run-benchmark cfg-c-* baseline")
    assert outcome.status == "refused" and github.dispatches == []
    assert (f"`baseline`: the merge-base `{repo.base[:12]}` runs none of these points on the same runners, so "
            "there is nothing to compare beside them; drop `baseline` to compare with the results store.") \
        in github.comments[PR][-1]["body"]


def _cli(repo: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ci_tools", *args], cwd=repo, capture_output=True, text=True,
                          timeout=120, env=env)


def test_the_plan_interleaves_the_merge_base_jobs(repo: Repo, github: FakeGitHub, tmp_path: Path) -> None:
    _dispatch(repo, github, "/run-benchmark cfg-* baseline")
    selection = github.dispatches[0]["inputs"]["selection"]
    output = tmp_path / "github_output"
    planned = _cli(repo.root, "sweep", "plan", "--rev", repo.head, "--selection", selection, "--write-matrix",
                   str(tmp_path / "m.json"), "--write-baseline", str(tmp_path / "b.json"), "--github-output",
                   env={**os.environ, "GITHUB_OUTPUT": str(output)})
    assert planned.returncode == 0, planned.stderr
    values = dict(line.split("=", 1) for line in output.read_text().splitlines())
    assert values["baseline-sha"] == repo.base and values["jobs"] == "15"
    pr_file, base_file = json.loads((tmp_path / "m.json").read_text()), json.loads((tmp_path / "b.json").read_text())
    assert (pr_file["sha"], base_file["sha"]) == (repo.head, repo.base)
    pr_jobs = [job_from_entry(e, "m.json") for e in pr_file["jobs"]]
    base_jobs = [job_from_entry(e, "b.json") for e in base_file["jobs"]]
    assert len(base_jobs) == 6 and {j.get("image") for j in base_jobs if j.config_key == "cfg-a-mi355x-atom"} == {
        "rocm/atom:1"}  # the merge-base's own configs, not the pull request's
    pairs: list[tuple[Job, Job]] = []
    for entry in json.loads(values["matrix"])["include"]:
        indices, after = entry["indices"].split(","), entry["baseline"].split(",")
        assert len(indices) == len(after)
        assert entry["jobs"] == len(indices) + sum(b != "-" for b in after)
        pairs += [(pr_jobs[int(i)], base_jobs[int(b)]) for i, b in zip(indices, after) if b != "-"]
        unpaired = {pr_jobs[int(i)].label() for i, b in zip(indices, after) if b == "-"}
        assert all("cfg-c" in label or "c128" in label for label in unpaired), unpaired
    assert sorted(base_file["jobs"].index(b.to_json()) for _, b in pairs) == list(range(6))  # each runs once
    for pr, base in pairs:
        assert pr.get("runner") == base.get("runner")
        assert point_keys(identity(pr)) == point_keys(identity(base))
    # The image bump gives cfg-a's jobs other ids: pairs are made by point, never by job id.
    assert sum(pr.config_key == "cfg-a-mi355x-atom" and pr.id != base.id for pr, base in pairs) == 4

    # What was not approved is not run: another count of merge-base jobs, or no file to write them to.
    changed = json.loads(selection)
    changed["baseline"]["jobs"] = 5
    refused = _cli(repo.root, "sweep", "plan", "--rev", repo.head, "--selection", json.dumps(changed),
                   "--write-matrix", str(tmp_path / "x.json"), "--write-baseline", str(tmp_path / "y.json"))
    assert refused.returncode == 2
    assert (f"the configs of the merge-base {repo.base[:12]} pair 6 job(s) with these, but the selection was "
            "authorised for 5; refusing to run anything other than what was approved") in refused.stderr
    no_file = _cli(repo.root, "sweep", "plan", "--rev", repo.head, "--selection", selection, "--write-matrix",
                   str(tmp_path / "z.json"))
    assert no_file.returncode == 2 and "give --write-baseline FILE" in no_file.stderr


# -- the run job's script --------------------------------------------------------------------------------------------


def _run_step(tmp_path: Path, indices: str, baseline: str, failing: str = "") -> tuple[int, list[str]]:
    """The run step under bash, with a ci-tools that only notes how it was called (and fails for ``failing``)."""
    step = next(s for s in SWEEP["jobs"]["run"]["steps"] if s.get("name") == "Run the jobs")
    assert step["env"] == {"INDICES": "${{ matrix.indices }}", "BASELINE": "${{ matrix.baseline }}"}
    tool = tmp_path / "ci-tools" / "bin" / "ci-tools"
    tool.parent.mkdir(parents=True)
    log = tmp_path / "calls"
    tool.write_text(f'#!/bin/bash\necho "$*" >> {log}\n[[ " $* " != *" --indices {failing} "* ]]\n')
    tool.chmod(tool.stat().st_mode | stat.S_IEXEC)
    done = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]], cwd=tmp_path,
                          env={"PATH": os.environ["PATH"], "RUNNER_TEMP": str(tmp_path), "INDICES": indices,
                               "BASELINE": baseline}, capture_output=True, text=True, timeout=60)
    calls = log.read_text().splitlines() if log.exists() else []
    common = "sweep local --settings-from trusted --no-progress "
    assert all(c.startswith(common) for c in calls), calls
    return done.returncode, [c[len(common):] for c in calls]


def test_the_run_job_runs_each_pair_in_turn(tmp_path: Path) -> None:
    pr = "--repo repo --matrix plan/matrix.json --indices {} --result-dir sweep-results"
    base = "--repo base --matrix plan/baseline.json --indices {} --result-dir sweep-results/merge-base"
    assert _run_step(tmp_path / "a", "3,4,5", "0,-,1") == (0, [pr.format(3), base.format(0), pr.format(4),
                                                                pr.format(5), base.format(1)])
    # A failed job does not stop the others; the step fails at the end.
    assert _run_step(tmp_path / "b", "3,4", "0,1", failing="0") == (1, [pr.format(3), base.format(0), pr.format(4),
                                                                         base.format(1)])
    # Without a baseline, one call runs the entry's jobs as before.
    assert _run_step(tmp_path / "c", "3,4,5", "") == (0, [pr.format("3,4,5")])


def test_the_merge_base_checkout_is_verified_and_holds_no_credential() -> None:
    steps = SWEEP["jobs"]["run"]["steps"]
    checkout = next(s for s in steps if s.get("name") == "Check out the merge-base (a same-node baseline)")
    assert checkout["with"] == {"ref": "${{ needs.plan.outputs.baseline-sha }}", "persist-credentials": False,
                                "path": "base"}
    names = [s.get("name") for s in steps]
    verify = steps[names.index(checkout["name"]) + 1]
    assert verify["env"] == {"SHA": "${{ needs.plan.outputs.baseline-sha }}"}
    assert 'head=$(git -C base rev-parse HEAD)' in verify["run"] and 'if [ "$head" != "$SHA" ]' in verify["run"]
    assert names.index(verify["name"]) < names.index("Run the jobs")


def _fetch_step(tmp_path: Path, selection: str) -> tuple[subprocess.CompletedProcess[str], str]:
    """The plan job's fetch step under bash, with a git that only notes its arguments."""
    step = next(s for s in SWEEP["jobs"]["plan"]["steps"] if s.get("name", "").startswith("Fetch the pinned commit"))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "git").write_text(f'#!/bin/bash\necho "$*" > {tmp_path / "git-args"}\n')
    (bin_dir / "git").chmod(0o755)
    (bin_dir / "python").symlink_to(sys.executable)
    done = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]], cwd=tmp_path,
                          env={"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "SHA": "c" * 40,
                               "SELECTION": selection, "GITHUB_TOKEN": "t"}, capture_output=True, text=True,
                          timeout=60)
    args = (tmp_path / "git-args").read_text() if (tmp_path / "git-args").exists() else ""
    return done, args


def test_the_plan_job_fetches_the_merge_base_too(tmp_path: Path) -> None:
    plain = DispatchSelection("keys", "c" * 40, (Target("a", ("fixed-seq-len",)),), jobs=3, jobs_digest="0" * 64)
    done, args = _fetch_step(tmp_path / "a", plain.dumps())
    assert done.returncode == 0 and args.endswith(f"fetch --no-tags --quiet --depth=1 origin {'c' * 40}\n")
    same_node = DispatchSelection("keys", "c" * 40, plain.targets, jobs=3, jobs_digest="0" * 64, baseline="b" * 40,
                                  baseline_jobs=2)
    done, args = _fetch_step(tmp_path / "b", same_node.dumps())
    assert done.returncode == 0 and args.endswith(f"origin {'c' * 40} {'b' * 40}\n")
    hostile = json.loads(same_node.dumps())
    hostile["baseline"]["sha"] = "main; id"
    done, args = _fetch_step(tmp_path / "c", json.dumps(hostile))
    assert (done.returncode, done.stdout, args) == (1, "::error::the selection's baseline must be 40 lowercase hex "
                                                       "digits\n", "")
