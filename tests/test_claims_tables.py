"""Markdown tables of a PR description, read as the sentences their rows state (ci_tools/claims/text/tables.py).

On the real tree: dsr1-fp8-b200-sglang's recipe passes --mem-fraction-static 0.82 on TP8 and 0.95 on TP4,
--chunked-prefill-size 32768 and 8192, --max-running-requests 128 and 32, --kv-cache-dtype fp8_e4m3."""

from __future__ import annotations

from pathlib import Path

from ci_tools.claims.text.markdown import pr_body_source
from ci_tools.claims.text.tables import tables
from test_claims_pr_body import repo  # noqa: F401 - fixture: the real tree with one entry about dsr1-fp8-b200-sglang
from test_claims_seed import run_claims


def sentences(text: str) -> list[str]:
    return ["".join(piece for piece, _ in row.pieces) for table in tables(text) for row in table.rows]


def test_each_row_states_its_setting_by_what_the_header_says_its_columns_hold() -> None:
    before_after = "| Flag | Before | After |\n|------|--------|-------|\n| `--mem-fraction-static` (TP8) | 0.80 | 0.88 |\n"
    assert sentences(before_after) == ["Change `--mem-fraction-static` from 0.80 to 0.88 for TP8."]
    per_arm = "| setting | TP8 | TP4 |\n|---|---|---|\n| --chunked-prefill-size | 32768 | 8192 |\n"
    assert sentences(per_arm) == ["Set --chunked-prefill-size to 32768 on TP8 and 8192 on TP4."]
    value = "Parameter | Value\n--- | ---\nMEM_FRAC_STATIC | **0.88**\n"  # outer pipes are optional
    assert sentences(value) == ["Set MEM_FRAC_STATIC to 0.88."]
    # Arms down the first column and a setting a column: a sentence a cell; a column of results says nothing.
    # (only a column that names a setting as recipes spell one: "conc" of a row of results is a point measured)
    across = ("| Arm | --max-num-seqs | conc | Throughput |\n|---|---|---|---|\n| TP8 | 128 | 64 | 1.3x |\n"
              "| DEP8 | — | 256 | 2.0x |\n")
    assert sentences(across) == ["Set --max-num-seqs to 128 on TP8."]
    # A column of reasons is not read, nor is a cell that gives no value.
    notes = "| Knob | Old | New | Why |\n|:--|:--:|--:|:--|\n| a-flag | 1 | 2 | fewer \\| preemptions |\n| b-flag | 3 | — | |\n"
    assert sentences(notes) == ["Change a-flag from 1 to 2."]


def test_tables_of_results_or_of_the_old_state_alone_state_nothing() -> None:
    results = "| conc | Before tok/s | After tok/s |\n|---|---|---|\n| 4 | 100 | 130 |\n"
    metrics = "| Metric | main | this PR |\n|---|---|---|\n| throughput | 1.0 | 1.3 |\n"
    old_only = "| Flag | Before |\n|---|---|\n| --max-num-seqs | 64 |\n"
    no_rule = "| Flag | After |\n| --max-num-seqs | 64 |\n"  # no delimiter row: not a table
    assert sentences(results) == [] and sentences(old_only) == [] and sentences(no_rule) == []
    # A metric's row is a sentence, which names no setting: the checker finds no subject in it.
    assert sentences(metrics) == ["Change throughput from 1.0 to 1.3."]


def test_every_character_of_a_row_s_sentence_points_at_the_cell_it_came_from() -> None:
    text = "## Changes\n\n| Flag | Before | After |\n|---|---|---|\n| --max-num-seqs | 64 | 128 |\n\nRerun.\n"
    source = pr_body_source("body.md", text)
    assert "Change --max-num-seqs from 64 to 128." in source.text and "| Flag |" not in source.text
    assert len(source.positions) == len(source.text) + 1
    at = source.text.index("128")
    assert source.location(at, at + 3).line == 5 and source.location(at, at + 3).column == text.splitlines()[4].index("128") + 1
    flag = source.text.index("--max-num-seqs")
    assert (source.location(flag, flag + 1).line, source.location(flag, flag + 1).column) == (5, 3)
    after = source.text.index("Rerun")
    assert source.location(after, after + 1).line == 7  # the prose after the table keeps its lines


def _findings(repo: Path, tmp_path: Path, text: str) -> list[tuple[str, int, int, str]]:
    body = tmp_path / "body.md"
    body.write_text(text, encoding="utf-8")
    _, report = run_claims(repo, "--base", "HEAD~1", "--head", "HEAD", "--pr-body", str(body), "-v")
    return [(f["rule"], f["line"], f["column"], str(f["data"].get("claimed", f["data"].get("phrase", ""))))
            for f in report["findings"] if f["severity"] != "note" or f["rule"] == "claim-unverified"]


def test_a_table_s_false_values_are_found_at_their_cells_and_its_true_ones_pass(repo: Path, tmp_path: Path) -> None:
    table = ("## Changes\n\n"
             "| setting | TP8 | TP4 |\n"
             "|---|---|---|\n"
             "| --mem-fraction-static | 0.82 | 0.90 |\n"
             "| --chunked-prefill-size | 32768 | 8192 |\n"
             "\n"
             "| Flag | Before | After |\n"
             "|------|--------|-------|\n"
             "| `--max-running-requests` (TP8) | 64 | 128 |\n"
             "| --kv-cache-dtype | fp8_e4m3 | fp8_e5m2 |\n"
             "\n"
             "| Arm | --max-prefill-tokens | Throughput |\n"
             "|---|---|---|\n"
             "| TP8 | 32768 | 1.3x |\n"
             "| TP4 | 4096 | 1.1x |\n")
    found = _findings(repo, tmp_path, table)
    # Before, each row was a subject with no value next to it: a note at best, never a check.
    lines = table.splitlines()
    # Each on its row, at its value's cell or at the setting's (where the claim's words begin).
    assert found == [("claim-contradicted", 5, lines[4].index("0.90") + 1, "0.90"),
                     ("claim-contradicted", 11, lines[10].index("--kv-cache-dtype") + 1, "fp8_e5m2"),
                     ("claim-contradicted", 16, 3, "4096")]  # a row of arms: at the row's first cell
