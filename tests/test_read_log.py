"""ReadLog: the repository files an evaluation read, those a reused call read included (ci_tools.revision.read_log)."""

from __future__ import annotations

from pathlib import Path

from ci_tools.config import load_config
from ci_tools.revision.read_log import ReadLog, logged_reads
from ci_tools.revision.snapshot import WorkTreeSnapshot
from ci_tools.shell.interp import Interpreter
from ci_tools.shell.parse import parse_script

RECIPE = """\
#!/usr/bin/env bash
load() { source lib/extra.sh; }
load
vllm serve "$MODEL" --tensor-parallel-size "$TP"
"""


def test_paths_asked_for_are_kept_present_or_absent_read_or_tested(tmp_path: Path) -> None:
    (tmp_path / "a.sh").write_text("echo a\n", encoding="utf-8")
    snapshot = WorkTreeSnapshot(tmp_path)
    log = ReadLog(snapshot)
    assert log.read("a.sh") == b"echo a\n" and log.read("missing.yaml") is None and log.exists("b.py") is None
    assert log.paths == [("read", "a.sh"), ("read", "missing.yaml"), ("tested", "b.py")]
    assert logged_reads(log) is log.paths
    assert log.read_paths() == {"a.sh", "missing.yaml"} and log.tested_paths() == {"b.py"}
    assert log.files() == snapshot.files() and log.label == snapshot.label
    assert logged_reads(snapshot) is None


def test_a_call_reused_from_an_earlier_evaluation_still_reads_what_it_read(tmp_path: Path) -> None:
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib/extra.sh").write_text("helper() { echo hi; }\nREADY=1\n", encoding="utf-8")
    (tmp_path / "r.sh").write_text(RECIPE, encoding="utf-8")
    config, snapshot = load_config(tmp_path), WorkTreeSnapshot(tmp_path)
    for run in ("first", "second"):  # the second evaluation replays `load` from the first one's record
        log = ReadLog(snapshot)
        interp = Interpreter("r.sh", config, log)
        interp.run(parse_script("r.sh", RECIPE.encode()))
        assert interp.state.servers and interp.state.vars.get("READY") is not None
        assert "lib/extra.sh" in log.read_paths(), run


BRANCHES = """\
#!/usr/bin/env bash
MODE=agentic
for node in 0 1; do
    if [[ "$MODE" == "agentic" && -n "${IMAGE:-}" && "$node" -ge 0 ]]; then
        echo "client image $IMAGE"
    fi
done
"""


def test_each_if_keeps_the_values_its_conditions_read_the_same_at_every_visit(tmp_path: Path) -> None:
    """What coverage reads a chain file's branches with: a variable unset there (IMAGE) is left out, unknown, not
    taken for empty; one whose value differs between visits (the loop's `node`) too."""
    (tmp_path / "r.sh").write_text(BRANCHES, encoding="utf-8")
    config, snapshot = load_config(tmp_path), WorkTreeSnapshot(tmp_path)
    log = ReadLog(snapshot)
    Interpreter("r.sh", config, log).run(parse_script("r.sh", BRANCHES.encode()))
    assert log.branches == {("r.sh", 4): {"MODE": "agentic"}}
    log.note_branch("r.sh", 4, {"MODE": "throughput", "IMAGE": "img"})
    assert log.branches == {("r.sh", 4): {}}
