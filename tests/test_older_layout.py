"""Master configs of the older layout (``seq-len-configs:``, before 2026-05-01): read by history replays as
their own generator read them, still refused by ``validate`` today."""

from __future__ import annotations

import json
from pathlib import Path

from ci_tools.model.older_layout import in_current_layout
from ci_tools.revision.yamlpos import PosMap, load_yaml
from test_claims_seed import git, run_claims
from test_cli import run as run_cli

HEAD = """\
dsr1-fp4-mi355x-sglang:
  image: lmsysorg/sglang:v0.5.12-rocm700-mi35x
  model: amd/DeepSeek-R1-0528-MXFP4-Preview
  model-prefix: dsr1
  runner: mi355x
  precision: fp4
  framework: sglang
  multinode: false
"""
NEWER = HEAD + """\
  scenarios:
    fixed-seq-len:
    - isl: 8192
      osl: 1024
      search-space:
      - { tp: 4, conc-start: 4, conc-end: 64 }
      - { tp: 8, conc-start: 4, conc-end: 64 }
"""
# The same config as InferenceX wrote it before b7ae44045 (e.g. at its parent).
OLDER = HEAD + """\
  seq-len-configs:
  - isl: 8192
    osl: 1024
    search-space:
    - { tp: 4, conc-start: 4, conc-end: 64 }
    - { tp: 8, conc-start: 4, conc-end: 64 }
"""


def _config(text: str) -> PosMap:
    value = load_yaml(text, "configs/amd-master.yaml").value
    assert isinstance(value, PosMap)
    return value["dsr1-fp4-mi355x-sglang"]


def test_an_older_config_reads_as_the_newer_one_with_its_own_positions() -> None:
    older, newer = _config(OLDER), _config(NEWER)
    read = in_current_layout(older)
    assert read == newer
    assert list(read) == list(newer)  # every key in its place
    blocks = read["scenarios"]["fixed-seq-len"]
    assert blocks is older["seq-len-configs"]  # the rows themselves, with their lines
    assert blocks.item_span(0)[0] == 10 and blocks[0]["search-space"].item_span(1)[0] == 14
    assert read.key_span("scenarios") == older.key_span("seq-len-configs")
    assert read.key_span("image") == older.key_span("image")


def test_configs_in_the_newer_layout_or_in_both_are_left_as_they_are() -> None:
    newer = _config(NEWER)
    assert in_current_layout(newer) is newer
    both = _config(NEWER + "  seq-len-configs: []\n")
    assert in_current_layout(both) is both
    assert in_current_layout(["not", "a", "config"]) == ["not", "a", "config"]


ENTRY = """
- config-keys:
    - dsr1-fp4-mi355x-sglang
  description:
    - "Set --mem-fraction-static to {value} and --cuda-graph-max-bs to 128"
  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/{n}
"""


def _older_history(full_corpus_copy: Path, flat_recipe: bool = False) -> tuple[Path, str]:
    """The real tree with one config in the older layout (and, ``flat_recipe``, its recipe where recipes lay
    before 2026-02-19: directly under benchmarks/, sourcing benchmark_lib.sh beside it), then two entries."""
    repo = full_corpus_copy
    master = repo / "configs" / "amd-master.yaml"
    text = master.read_text(encoding="utf-8")
    assert text.startswith(NEWER)
    master.write_text(OLDER + text[len(NEWER):], encoding="utf-8")
    if flat_recipe:
        recipe = repo / "benchmarks" / "single_node" / "fixed_seq_len" / "dsr1_fp4_mi355x.sh"
        script = recipe.read_text(encoding="utf-8")
        assert 'source "$(dirname "$0")/../../benchmark_lib.sh"' in script
        (repo / "benchmarks" / "dsr1_fp4_mi355x.sh").write_text(
            script.replace("/../../benchmark_lib.sh", "/benchmark_lib.sh"), encoding="utf-8")
        recipe.unlink()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "the tree with one config in the older layout")
    base = git(repo, "rev-parse", "HEAD")
    with (repo / "perf-changelog.yaml").open("a", encoding="utf-8") as fh:
        fh.write(ENTRY.format(value="0.9", n=9001))  # the recipe passes --mem-fraction-static=0.8
        fh.write(ENTRY.format(value="0.8", n=9002))
    git(repo, "commit", "-q", "-am", "two entries about the older-layout config")
    return repo, base


def test_history_checks_the_claims_of_an_entry_whose_config_is_in_the_older_layout(full_corpus_copy: Path) -> None:
    repo, base = _older_history(full_corpus_copy)
    code, report = run_claims(repo, "--history", "--since", base)
    findings = [(f["rule"], f["data"].get("subject"), f["data"].get("claimed")) for f in report["findings"]]
    assert code == 1
    # the false value is an error; the true one and the true cuda-graph-max-bs give nothing; nothing is "not checked"
    assert findings == [("claim-contradicted", "--mem-fraction-static", "0.9")]
    message = report["findings"][0]["message"]
    assert "--mem-fraction-static=0.8" in message or "--mem-fraction-static 0.8" in message
    assert "for all 10 jobs of dsr1-fp4-mi355x-sglang" in message


def test_history_finds_a_recipe_where_recipes_lay_before_they_moved_under_single_node(
        full_corpus_copy: Path) -> None:
    repo, base = _older_history(full_corpus_copy, flat_recipe=True)
    code, report = run_claims(repo, "--history", "--since", base)
    assert code == 1
    assert [(f["rule"], f["data"].get("subject"), f["data"].get("claimed")) for f in report["findings"]] == [
        ("claim-contradicted", "--mem-fraction-static", "0.9")]
    assert "benchmarks/dsr1_fp4_mi355x.sh" in report["findings"][0]["message"]


def test_validate_still_refuses_the_older_layout_today(full_corpus_copy: Path) -> None:
    repo, _ = _older_history(full_corpus_copy)
    result = run_cli("validate", "--repo", str(repo), "--format", "json")
    found = [f for f in json.loads(result.stdout)["findings"]
             if f["path"] == "configs/amd-master.yaml" and f["line"] <= 14]
    assert found and all(f["severity"] == "error" for f in found)
    assert any("seq-len-configs" in f["message"] or "scenarios" in f["message"] for f in found)
