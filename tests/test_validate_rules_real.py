"""Every validate rule against the real InferenceX tree.

Two questions per rule: on the tree as it is (843c6254f), does the rule
report what is really wrong there and nothing else; and does it report a
defect made in a real config, exactly once, at the line that was changed?
The second kind copies one or two real configs (and the real runners.yaml)
into a small repository, changes one thing, and validates it.
"""

from __future__ import annotations

import json
import re
import shutil
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from ci_tools.cli.main import main
from ci_tools.findings import all_rules
from conftest import full_corpus_dir
from test_validate import REAL_DEFECTS

MASTERS = ("configs/amd-master.yaml", "configs/nvidia-master.yaml")
TOP_KEY = re.compile(r"^([A-Za-z0-9][^\s:#]*):[ \t]*$")
# The rules validate applies (config and YAML-file families).
VALIDATE_RULES = sorted(r.id for r in all_rules() if r.family in ("config", "yaml"))


@pytest.fixture(autouse=True)
def _outside_actions(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)


@cache
def real_tree_findings() -> tuple[tuple[str, str, int, str], ...]:
    """(rule, path, line, config key) of every finding validate reports on the real tree, computed once."""
    from ci_tools.config import load_config
    from ci_tools.model.repository import load_repo
    from ci_tools.revision.snapshot import WorkTreeSnapshot
    from ci_tools.validation.validate import validate

    config = load_config(full_corpus_dir())
    findings = validate(load_repo(WorkTreeSnapshot(config.root), config))
    return tuple((f.rule, f.location.path, f.location.line, str(f.data.get("config_key"))) for f in findings)


@pytest.mark.parametrize("rule", VALIDATE_RULES)
def test_on_the_real_tree_each_rule_reports_only_the_real_defects(rule: str) -> None:
    assert [f for f in real_tree_findings() if f[0] == rule] == [d for d in REAL_DEFECTS if d[0] == rule]


@cache
def real_blocks() -> dict[str, tuple[str, str]]:
    """config key -> (master file, the config's text as written, comments between configs left out)."""
    out: dict[str, tuple[str, str]] = {}
    for master in MASTERS:
        lines = (full_corpus_dir() / master).read_text(encoding="utf-8").splitlines(keepends=True)
        starts = [i for i, line in enumerate(lines) if TOP_KEY.match(line)]
        for n, start in enumerate(starts):
            end = starts[n + 1] if n + 1 < len(starts) else len(lines)
            body = lines[start:end]
            while body and (not body[-1].strip() or body[-1].lstrip().startswith("#")):
                body.pop()
            key = TOP_KEY.match(lines[start])
            assert key is not None
            out[key.group(1)] = (master, "".join(body))
    return out


def real_config(key: str, *edits: tuple[str, str]) -> str:
    """The real config ``key``, each (old, new) edit applied once (the old text must be there)."""
    text = real_blocks()[key][1]
    for old, new in edits:
        assert old in text, f"{old!r} not in {key}"
        text = text.replace(old, new, 1)
    return text


def small_repo(tmp_path: Path, masters: dict[str, str], runners: str | None = None) -> Path:
    repo = tmp_path / "repo"
    (repo / "configs").mkdir(parents=True)
    for name, text in masters.items():
        (repo / name).write_text(text, encoding="utf-8")
    if runners is None:
        shutil.copy(full_corpus_dir() / "configs" / "runners.yaml", repo / "configs" / "runners.yaml")
    else:
        (repo / "configs" / "runners.yaml").write_text(runners, encoding="utf-8")
    return repo


def findings(repo: Path, rule: str, capsys: pytest.CaptureFixture[str]) -> list[dict[str, Any]]:
    capsys.readouterr()
    code = main(["validate", "--repo", str(repo), "--format", "json", "--select", rule])
    out = capsys.readouterr().out
    found: list[dict[str, Any]] = json.loads(out)["findings"]
    assert code == (1 if found else 0)
    return found


def line_of(repo: Path, path: str, text: str) -> int:
    lines = (repo / path).read_text(encoding="utf-8").splitlines()
    matches = [i + 1 for i, line in enumerate(lines) if text in line]
    assert len(matches) == 1, f"{text!r} is on lines {matches}"
    return matches[0]


# (rule, config key, edits, text on the line the finding points at, words of the message)
MUTATIONS = [
    ("agentic-runner-not-cluster", "qwen3.5-fp8-mi325x-sglang-agentic-mtp",
     [("runner: cluster:mi325x-amds", "runner: mi325x")], "runner: mi325x", "must use a `cluster:<name>` label"),
    ("conc-range-inverted", "dsr1-fp8-mi325x-sglang",
     [("conc-start: 4, conc-end: 64", "conc-start: 128, conc-end: 64")], "conc-start: 128",
     "`conc-start` 128 is greater than `conc-end` 64"),
    ("config-schema", "dsr1-fp8-mi325x-sglang", [("{ tp: 8,", '{ tp: "8",')], 'tp: "8"', "must be an integer"),
    ("config-key-invalid", "dsr1-fp8-mi325x-sglang", [("dsr1-fp8-mi325x-sglang:", "dsr1-fp8-*-sglang:")],
     "dsr1-fp8-*-sglang:", "contains `*`"),
    ("dcp-size-indivisible", "kimik3-fp4-b300-vllm-agentic-dspark",
     [("{ tp: 8, ep: 1, dcp-size: 8,", "{ tp: 8, ep: 1, dcp-size: 3,")], "dcp-size: 3", "not a multiple of `dcp-size` 3"),
    ("disagg-requires-multinode", "dsr1-fp8-mi325x-sglang", [("multinode: false", "multinode: false\n  disagg: true")],
     "disagg: true", "`disagg: true` in single-node config"),
    ("kv-transfer-single-node", "dsr1-fp8-mi325x-sglang",
     [("multinode: false", "multinode: false\n  kv-p2p-transfer: mori")], "kv-p2p-transfer: mori", "single-node config"),
    ("model-prefix-underscore", "qwen3.5-fp8-mi325x-sglang-agentic-mtp",
     [("model-prefix: qwen3.5", "model-prefix: qwen3_5")], "model-prefix: qwen3_5", "contains `_`"),
    ("router-version-image", "dsr1-fp8-mi355x-sglang-disagg",
     [('version: "0.3.2"', 'version: "lmsysorg/sglang-router:0.3.2"')], "sglang-router:0.3.2", "container image reference"),
    ("gpus-exceed-node", "qwen3.5-fp8-mi325x-sglang-agentic-mtp", [("{ tp: 8, ep: 1,", "{ tp: 16, ep: 1,")],
     "{ tp: 16, ep: 1,", "needs 16 GPUs (tp x pp x pcp-size) but a node of `cluster:mi325x-amds` has 8"),
    ("ep-gpu-mismatch", "qwen3.5-fp8-mi325x-sglang-agentic-mtp", [("{ tp: 4, ep: 4,", "{ tp: 4, ep: 3,")],
     "{ tp: 4, ep: 3,", "`ep` 3 does not divide the 4 GPU(s)"),
    # A real DEP worker (tp 1, ep 8: eight data-parallel ranks) without data-parallel attention.
    ("ep-gpu-mismatch", "dsv4-fp4-b200-dynamo-vllm-mtp",
     [("          tp: 1\n          ep: 8\n          dp-attn: true", "          tp: 1\n          ep: 8\n          dp-attn: false")],
     None, "`ep` 8 in the prefill block is larger than the 1 GPU(s) of the tensor-parallel group"),
    ("hardware-one-block", "dsr1-fp8-mi355x-sglang-disagg",
     [("          num-worker: 2\n", "          num-worker: 2\n          hardware: cluster:mi355x-amds\n")],
     "hardware: cluster:mi355x-amds", "set on the prefill block but not on the decode block"),
    ("kv-offload-backend-mismatch", "kimik3-fp4-b300-vllm-agentic-dspark",
     [(', kv-offload-backend: { name: mooncake, version: "0.3.11.post1" }', "")], "kv-offloading: dram",
     "without `kv-offload-backend`"),
    ("dram-utilization-missing", "kimik3-fp4-b300-vllm-agentic-dspark", [("    - dram-utilization: 0.75\n      search-space:", "    - search-space:")],
     "kv-offloading: dram", "no `dram-utilization`"),
]


@pytest.mark.parametrize(("rule", "key", "edits", "at", "words"), MUTATIONS,
                         ids=[f"{m[0]}-{m[1]}" for m in MUTATIONS])
def test_a_defect_made_in_a_real_config_is_reported_once_where_it_was_made(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], rule: str, key: str, edits: list[tuple[str, str]],
        at: str | None, words: str) -> None:
    master = real_blocks()[key][0]
    clean = small_repo(tmp_path / "clean", {master: real_config(key)})
    assert findings(clean, rule, capsys) == []
    broken = small_repo(tmp_path / "broken", {master: real_config(key, *edits)})
    found = findings(broken, rule, capsys)
    assert len(found) == 1, found
    assert words in found[0]["message"]
    assert found[0]["path"] == master
    if at is not None:
        assert found[0]["line"] == line_of(broken, master, at)


def test_disagg_without_kv_transfer_anywhere_is_one_finding_at_its_disagg_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    key = "dsr1-fp8-mi355x-sglang-disagg"
    repo = small_repo(tmp_path, {"configs/amd-master.yaml": real_config(key, ("  kv-p2p-transfer: mori\n", ""))})
    [found] = findings(repo, "disagg-kv-transfer-missing", capsys)
    rows = real_config(key).count("- spec-decoding:")
    assert rows > 1 and f"at top level or in any of its {rows} search-space rows" in found["message"]
    assert found["line"] == line_of(repo, "configs/amd-master.yaml", "  disagg: true")
    assert len(found["related"]) == min(rows, 5)


def test_disagg_rows_without_kv_transfer_beside_rows_with_it_are_reported_each(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Where some rows name it, each row that does not is its own finding: the fix is that row's."""
    key = "dsr1-fp8-mi355x-sglang-disagg"
    text = real_config(key, ("  kv-p2p-transfer: mori\n", ""))
    first_row = text.index("- spec-decoding:")
    indent = text[text.rindex("\n", 0, first_row) + 1:first_row]
    text = text[:first_row] + f"- kv-p2p-transfer: mori\n{indent}  spec-decoding:" + text[first_row + len("- spec-decoding:"):]
    repo = small_repo(tmp_path, {"configs/amd-master.yaml": text})
    found = findings(repo, "disagg-kv-transfer-missing", capsys)
    assert len(found) == text.count("- spec-decoding:") >= 1
    assert all("in this search-space row" in f["message"] for f in found)


def test_a_key_in_two_master_files_is_a_duplicate(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = real_config("dsr1-fp8-mi325x-sglang")
    repo = small_repo(tmp_path, {"configs/amd-master.yaml": text, "configs/nvidia-master.yaml": text})
    [dup] = findings(repo, "config-key-duplicate", capsys)
    assert (dup["path"], dup["line"]) == ("configs/nvidia-master.yaml", 1)
    assert "already defined in configs/amd-master.yaml at line 1" in dup["message"]


def test_a_repeated_key_inside_a_real_config_is_a_duplicate_key(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = real_config("dsr1-fp8-mi325x-sglang", ("  precision: fp8\n", "  precision: fp8\n  precision: fp4\n"))
    repo = small_repo(tmp_path, {"configs/amd-master.yaml": text})
    [dup] = findings(repo, "yaml-duplicate-key", capsys)
    assert dup["line"] == line_of(repo, "configs/amd-master.yaml", "precision: fp4")


def test_a_broken_real_runners_file_is_reported(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    runners = (full_corpus_dir() / "configs" / "runners.yaml").read_text(encoding="utf-8")
    broken = runners.replace("    gpus-per-node: 8\n", '    gpus-per-node: "8"\n', 1)
    repo = small_repo(tmp_path, {"configs/amd-master.yaml": real_config("dsr1-fp8-mi325x-sglang")}, runners=broken)
    [bad] = findings(repo, "runners-schema", capsys)
    assert bad["line"] == line_of(repo, "configs/runners.yaml", 'gpus-per-node: "8"')


def test_a_label_missing_from_the_real_runners_file_is_undefined(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    runners = (full_corpus_dir() / "configs" / "runners.yaml").read_text(encoding="utf-8")
    without = re.sub(r"(?m)^  mi325x:\n(    - .*\n)+", "", runners)
    repo = small_repo(tmp_path, {"configs/amd-master.yaml": real_config("dsr1-fp8-mi325x-sglang")}, runners=without)
    [undefined] = findings(repo, "runner-undefined", capsys)
    assert "runner label `mi325x` of `dsr1-fp8-mi325x-sglang` is not defined" in undefined["message"]


def test_a_real_changelog_entry_with_a_wrong_shape_is_reported(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    changelog = (full_corpus_dir() / "perf-changelog.yaml").read_text(encoding="utf-8")
    first = changelog.index("- config-keys:")
    second = changelog.index("\n- config-keys:", first + 1)
    entry = changelog[first:second + 1]
    repo = small_repo(tmp_path, {"configs/amd-master.yaml": real_config("dsr1-fp8-mi325x-sglang")})
    (repo / "perf-changelog.yaml").write_text(entry.replace("pr-link:", "pr-links:", 1), encoding="utf-8")
    found = findings(repo, "changelog-entry-schema", capsys)
    assert [f["message"].split(";")[0] for f in found] == [
        "missing required key `pr-link` in changelog entry 1", "unknown key `pr-links` in changelog entry 1"]
