"""Entries a change adds, found by content: mid-file inserts, re-appends, pr-link fixes, edited wording."""

from __future__ import annotations

from pathlib import Path

from ci_tools.changelog.added import added_entries
from ci_tools.changelog.layout import Layout
from test_claims_history import commit, history_repo
from test_claims_seed import run_claims

PATH = "perf-changelog.yaml"


def entry(key: str, text: str, n: int | str) -> str:
    return (f"- config-keys:\n    - {key}\n  description:\n    - \"{text}\"\n"
            f"  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/{n}\n")


A = entry("dsr1-fp8-mi355x-atom", "Bump the image.", 1)
B = entry("dsr1-fp4-mi355x-sglang", "Raise max-num-seqs to 256.", 2)
C = entry("qwen3.5-fp8-mi355x-sglang", "Use FP8 KV cache.", 3)


def added(base: str | None, head: str) -> list[tuple[int, list[str], str]]:
    found = added_entries(PATH, Layout(base.encode()) if base is not None else None, Layout(head.encode()))
    return [(e.line, [k for k, _ in e.config_keys], str(e.get("description")[0])) for e in found]


def test_an_entry_inserted_mid_file_is_added_at_its_head_line() -> None:
    base = A + "\n" + B
    head = A + "\n" + C + "\n" + B
    assert added(base, head) == [(7, ["qwen3.5-fp8-mi355x-sglang"], "Use FP8 KV cache.")]


def test_an_appended_entry_is_added_and_keeps_head_positions() -> None:
    base = A + "\n" + B
    found = added_entries(PATH, Layout(base.encode()), Layout((base + "\n" + C).encode()))
    assert [e.line for e in found] == [13]
    assert found[0].config_keys[0][1].line == 14
    assert found[0].key_loc("description").line == 15


def test_a_verbatim_re_append_adds_nothing() -> None:
    base = A + "\n" + B
    assert added(base, base + "\n" + A) == []


def test_a_pr_link_correction_adds_nothing() -> None:
    base = A + "\n" + entry("dsr1-fp4-mi355x-sglang", "Raise max-num-seqs to 256.", "XXX")
    assert added(base, A + "\n" + B) == []


def test_an_edited_description_is_added_in_its_new_wording() -> None:
    base = A + "\n" + B
    head = A + "\n" + B.replace("256", "512")
    assert added(base, head) == [(7, ["dsr1-fp4-mi355x-sglang"], "Raise max-num-seqs to 512.")]


def test_lines_that_extend_the_last_entry_make_it_added() -> None:
    base = A + "\n" + B
    head = base.replace("  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/2\n",
                        "  scenario-type:\n    - fixed-seq-len\n  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/2\n")
    assert [line for line, _, _ in added(base, head)] == [7]


def test_without_a_base_every_entry_is_added_and_a_broken_block_is_left_to_the_gate() -> None:
    assert [line for line, _, _ in added(None, A + "\n" + B)] == [1, 7]
    assert added(A, A + "\n- config-keys: [unclosed\n") == []


def test_history_checks_an_entry_a_squash_merge_inserted_mid_file(tmp_path: Path) -> None:
    repo, shas = history_repo(tmp_path)
    log = repo / "perf-changelog.yaml"
    text = log.read_text(encoding="utf-8")
    # A false claim lands between the first two entries, not at the end.
    first_end = text.index("\n- config-keys:") + 1
    inserted = entry("dsv4-fp4-mi355x-atom-agentic-mtp", "Set the state checkpoint interval to 32768 tokens on DEP.", 13)
    log.write_text(text[:first_end] + inserted + "\n" + text[first_end:], encoding="utf-8")
    sha = commit(repo, "squash merge that inserts its entry mid-file")
    line = text[:first_end].count("\n") + 4  # the description bullet of the inserted entry
    code, report = run_claims(repo, "--history", "--since", shas[-1], "--select", "claim-contradicted")
    assert code == 1
    assert [(f["line"], f["data"]["subject"], f["data"]["commit"]) for f in report["findings"]] == [
        (line, "--state-checkpoint-interval-tokens", sha)]
    # The pull request's own check reads the same entry.
    code, report = run_claims(repo, "--base", shas[-1], "--head", sha, "--select", "claim-contradicted")
    assert [(f["line"], f["data"]["subject"]) for f in report["findings"]] == [(line, "--state-checkpoint-interval-tokens")]


def test_history_does_not_re_report_an_entry_a_later_commit_re_appends(tmp_path: Path) -> None:
    repo, shas = history_repo(tmp_path)
    log = repo / "perf-changelog.yaml"
    text = log.read_text(encoding="utf-8")
    seed_start = text.rindex("- config-keys:", 0, text.index("pull/2886"))
    seed_entry = text[seed_start: text.index("\n\n", seed_start) + 1]
    assert "32768 tokens" in seed_entry
    log.write_text(text + "\n" + seed_entry, encoding="utf-8")
    commit(repo, "re-ingest: the seed entry appended again verbatim")
    code, report = run_claims(repo, "--history", "--since", shas[-1], "--select", "claim-contradicted")
    assert (code, report["findings"]) == (0, [])


def run_check(repo: Path, base: str) -> list[str]:
    import json
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-m", "ci_tools", "check", "--repo", str(repo), "--base", base,
                           "--format", "json", "--select", "coverage-uncovered-key"],
                          capture_output=True, text=True, cwd=repo)
    assert proc.returncode in (0, 1), proc.stderr
    return [f["data"]["key"] for f in json.loads(proc.stdout)["findings"]]


def test_an_entry_inserted_mid_file_covers_the_change_it_describes(tmp_path: Path) -> None:
    repo, shas = history_repo(tmp_path)
    recipe = repo / "benchmarks/single_node/agentic/dsv4_fp4_mi355x_atom_mtp.sh"
    recipe.write_text(recipe.read_text(encoding="utf-8").replace("8192", "16384"), encoding="utf-8")
    commit(repo, "recipe change without an entry")
    assert run_check(repo, shas[-1]) == ["dsv4-fp4-mi355x-atom-agentic-mtp"]
    log = repo / "perf-changelog.yaml"
    text = log.read_text(encoding="utf-8")
    first_end = text.index("\n- config-keys:") + 1
    inserted = entry("dsv4-fp4-mi355x-atom-agentic-mtp", "Raise the state checkpoint interval to 16384 tokens.", 14)
    log.write_text(text[:first_end] + inserted + "\n" + text[first_end:], encoding="utf-8")
    commit(repo, "the entry lands mid-file")
    assert run_check(repo, shas[-1]) == []


def test_at_most_the_limit_of_added_entries_is_parsed() -> None:
    base = A
    head = A + "".join("\n" + entry(f"k{i}", f"Entry {i}.", 10 + i) for i in range(5))
    found = added_entries(PATH, Layout(base.encode()), Layout(head.encode()), limit=2)
    assert [e.config_keys[0][0] for e in found] == ["k0", "k1"]
    assert [e.line for e in found] == [7, 13]


def _chain(*revisions: str) -> list[list[str]]:
    """What each revision adds over the one before, walked as a replay walks history: each head's bytes object
    is the next step's base (so the base's entry contents come from the step before)."""
    data = [r.encode() for r in revisions]
    out = []
    for base, head in zip(data, data[1:]):
        found = added_entries(PATH, Layout(base), Layout(head))
        out.append([str(e.get("description")[0]) for e in found])
    return out


def test_a_chain_of_revisions_gives_what_each_step_alone_gives() -> None:
    a_extended = A.replace("Bump the image.", "Bump the image and the model.")
    revisions = [
        A,
        A + "\n" + B,  # appended
        A + "\n" + C,  # B replaced mid-file: the base's last entry is gone, C is new
        A + "\n" + C + "\n" + B,  # B re-appended: new again, since the step's base no longer has it
        A + "\n" + C + "\n" + B + "\n" + A,  # a verbatim copy of an entry the base has: nothing new
        a_extended + "\n" + C + "\n" + B + "\n" + A,  # the first entry edited: added in its new wording
        a_extended + "\n" + C + "\n" + B,  # the copy dropped at the end: nothing new
        a_extended + "\n" + C + "\n" + B + "\n" + A,  # A is still the first entry's old wording: not in the base
        a_extended + "\n" + C + "\n" + B + "\n" + A + "    - \"And the tag.\"\n",  # the last entry extended
        a_extended + "\n" + C + "\n" + B + "\n" + A + "    - \"And the tag.\"\n" + "\n" + A,  # its old text
    ]
    chained = _chain(*revisions)
    alone = [[d for _, _, d in added(base, head)] for base, head in zip(revisions, revisions[1:])]
    assert chained == alone == [
        ["Raise max-num-seqs to 256."], ["Use FP8 KV cache."], ["Raise max-num-seqs to 256."], [],
        ["Bump the image and the model."], [], ["Bump the image."], ["Bump the image."], ["Bump the image."],
    ]


# An entry as InferenceX wrote it before its changelog became lists (abdb40a28246, #343), and as #343 rewrote it.
BLOCK_STYLE = """- config-keys:
    - gptoss-fp4-*-trt
  description: |
    - Upgrade GPT-OSS TRT images from 'release:1.1.0rc2.post2' to '1.2.0rc0.post1'
    - Change kv_cache_config.dtype from 'auto' to 'fp8' in
      benchmarks/gptoss_fp4_b200_trt_slurm.sh
    PR: https://github.com/InferenceMAX/InferenceMAX/pull/110
"""
LIST_STYLE = """- config-keys:
    - gptoss-fp4-*-trt
  description:
    - "Upgrade GPT-OSS TRT images from 'release:1.1.0rc2.post2' to '1.2.0rc0.post1'"
    - "Change kv_cache_config.dtype from 'auto' to 'fp8' in benchmarks/gptoss_fp4_b200_trt_slurm.sh"
  pr-link: https://github.com/InferenceMAX/InferenceMAX/pull/110
"""


def test_an_entry_re_formatted_with_the_same_words_adds_nothing() -> None:
    assert added(A + "\n" + BLOCK_STYLE, A + "\n" + LIST_STYLE) == []
    edited = LIST_STYLE.replace("'fp8'", "'fp4'")  # one word changed: the entry says something else now
    assert [d for _, _, d in added(A + "\n" + BLOCK_STYLE, A + "\n" + edited)] == [
        "Upgrade GPT-OSS TRT images from 'release:1.1.0rc2.post2' to '1.2.0rc0.post1'"]



def test_a_re_indented_copy_under_another_link_is_no_new_entry() -> None:
    # InferenceX 6cca39e13df4 (#1180) re-appended #1166's entry, re-indented; re-ingests append copies so too
    again = B.replace("pull/2", "pull/1180").replace("    - dsr1-fp4-mi355x-sglang", "   - dsr1-fp4-mi355x-sglang")
    assert added(A + "\n" + B, A + "\n" + B + "\n" + again) == []
    assert added(A + "\n" + B, A + "\n" + B.replace("Raise", "Lower") + "\n" + again) == [
        (1 + A.count("\n") + 1, ["dsr1-fp4-mi355x-sglang"], "Lower max-num-seqs to 256.")]
