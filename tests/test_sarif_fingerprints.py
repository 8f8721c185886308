"""SARIF `partialFingerprints`: code scanning must keep tracking a finding when unrelated lines move."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ci_tools.cli.main import main
from ci_tools.findings import Finding, Location, Severity
from ci_tools.report import sarif

MASTER = "configs/nvidia-master.yaml"


def _results(repo: Path, out: Path) -> list[dict[str, object]]:
    assert main(["validate", "--repo", str(repo), "--format", "sarif", "--output", str(out)]) == 1
    results: list[dict[str, object]] = json.loads(out.read_text(encoding="utf-8"))["runs"][0]["results"]
    return results


def _by_fingerprint(results: list[dict[str, object]]) -> dict[str, tuple[str, int]]:
    out = {}
    for r in results:
        region = r["locations"][0]["physicalLocation"].get("region", {})  # type: ignore[index]
        out[r["partialFingerprints"][sarif.FINGERPRINT_KEY]] = (r["ruleId"], region.get("startLine", 0))  # type: ignore[index]
    return out


def test_fingerprints_survive_lines_inserted_above_on_the_real_tree(full_corpus_copy: Path, tmp_path: Path) -> None:
    before = _by_fingerprint(_results(full_corpus_copy, tmp_path / "before.sarif"))
    master = full_corpus_copy / MASTER
    master.write_text("# a new comment\n# and another\n" + master.read_text(encoding="utf-8"), encoding="utf-8")
    after = _by_fingerprint(_results(full_corpus_copy, tmp_path / "after.sarif"))
    assert len(before) == len(_results(full_corpus_copy, tmp_path / "again.sarif")) > 10  # one per finding
    assert set(after) == set(before)
    moved = [fp for fp, (rule, line) in before.items() if after[fp] != (rule, line)]
    assert moved and all(after[fp] == (before[fp][0], before[fp][1] + 2) for fp in moved)  # same finding, 2 lines lower


def test_content_not_position_makes_the_fingerprint() -> None:
    def finding(message: str, line: int, path: str = MASTER, rule: str = "yaml-duplicate-key") -> Finding:
        return Finding(rule, Severity.ERROR, message, Location(path, line, 3))

    one = finding("duplicate key `tp`: first defined at line 12, this later definition would silently override it", 14)
    shifted = finding("duplicate key `tp`: first defined at line 40, this later definition would silently override it", 42)
    other_key = finding("duplicate key `ep`: first defined at line 12, this later definition would silently override it", 14)
    [a], [b], [c] = sarif.fingerprints([one]), sarif.fingerprints([shifted]), sarif.fingerprints([other_key])
    assert a == b and a != c
    assert sarif.fingerprints([finding("x", 1, path="other.yaml")]) != sarif.fingerprints([finding("x", 1)])
    assert sarif.fingerprints([finding("x", 1, rule="recipe-missing")]) != sarif.fingerprints([finding("x", 1)])
    twins = sarif.fingerprints([finding("same", 5), finding("same", 9)])
    assert len(set(twins)) == 2 and sarif.fingerprints([finding("same", 7), finding("same", 30)]) == twins


@pytest.mark.parametrize(("message", "content"), [
    ("the entry at line 120 of the base revision was removed", "the entry at line # of the base revision was removed"),
    ("changelog entry 773 must have `pr-link`", "changelog entry # must have `pr-link`"),
    ("related: configs/a.yaml:5:3 here", "related: configs/a.yaml here"),
    ("tp 8 needs 8 GPUs", "tp 8 needs 8 GPUs"),
])
def test_positions_are_removed_from_the_message(message: str, content: str) -> None:
    got = sarif.fingerprint_content(Finding("r", Severity.ERROR, message, Location("f.yaml", 1)))
    assert got == f"r\0f.yaml\0{content}"
