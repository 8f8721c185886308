"""The bash oracle of the default-keeping reduction (bench/bench_unset_reads.py), on a throwaway history: every
function edit of a shell file is read, those judged the same are run by real bash at both revisions, and an edit
bash runs otherwise would be named a fault."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
import bench_unset_reads  # noqa: E402
from test_bench_claims_prs import git, new_repo  # noqa: E402

BASH = shutil.which("bash")
LIB = """\
#!/usr/bin/env bash
build_cmd() {
    CMD="client --port $PORT"
    CMD+=" --entries 393"
    curl -s "http://localhost:$PORT/health"
}
other() { echo "unchanged"; }
"""


def commit_lib(repo: Path, text: str) -> str:
    (repo / "lib.sh").write_text(text, encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "lib")
    return git(repo, "rev-parse", "HEAD")


pytestmark = pytest.mark.skipif(BASH is None, reason="bash is the oracle")


def test_a_default_keeping_edit_runs_alike_and_another_default_does_not(tmp_path: Path) -> None:
    repo = new_repo(tmp_path)
    first = commit_lib(repo, LIB)
    kept = commit_lib(repo, LIB.replace("--entries 393", "--entries ${ENTRIES:-393}"))
    moved = commit_lib(repo, LIB.replace("--entries 393", "--entries ${ENTRIES:-394}"))
    [edit] = bench_unset_reads.edits_between("c", repo, first, kept)
    assert (edit.path, edit.name) == ("lib.sh", "build_cmd")  # `other` did not change
    unset = bench_unset_reads.judged_same(edit)
    assert unset is not None and "ENTRIES" in unset and "CMD" not in unset  # CMD is assigned: not unset
    assert bench_unset_reads.compare(edit, unset, str(BASH), tmp_path) == (True, True)
    # Another default: not judged the same; bash, asked anyway, prints otherwise.
    [other] = bench_unset_reads.edits_between("c", repo, first, moved)
    assert bench_unset_reads.judged_same(other) is None
    assert bench_unset_reads.compare(other, frozenset({"ENTRIES"}), str(BASH), tmp_path)[0] is False


def test_bash_records_the_commands_instead_of_running_them(tmp_path: Path) -> None:
    printed = bench_unset_reads.bash_prints(str(BASH), LIB, "build_cmd", frozenset(), {"PORT": "8000"}, tmp_path)
    assert "CMD curl -s http://localhost:8000/health" in printed
    assert "status=0" in printed and 'declare -- CMD="client --port 8000 --entries 393"' in printed
    assert "RANDOM" not in printed and "line N:" not in printed  # bash's own changing variables are left out


def test_the_run_names_each_fault(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    """A reduction bash disagrees with is printed as a fault and fails the run (the judgement is made to err)."""
    repo = new_repo(tmp_path)
    commit_lib(repo, LIB)
    commit_lib(repo, LIB.replace("--entries 393", "--entries ${ENTRIES:-393}"))
    assert bench_unset_reads.main(["--ix", str(repo), "--main", "main"]) == 0
    out = capsys.readouterr().out
    assert "judged to run the same with the variables the file never names otherwise unset: 1" in out
    assert "bash prints the same for both in every sample: 1 of 1" in out and "faults (bash prints otherwise): 0" in out
    commit_lib(repo, LIB.replace("--entries 393", "--entries ${ENTRIES:-394}"))
    monkeypatch.setattr(bench_unset_reads, "judged_same", lambda edit: frozenset({"ENTRIES"}))
    assert bench_unset_reads.main(["--ix", str(repo), "--main", "main"]) == 1
    out = capsys.readouterr().out
    assert "faults (bash prints otherwise): 1" in out and "lib.sh build_cmd" in out.split("faults")[1]
