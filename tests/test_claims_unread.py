"""No clause of the whole changelog history that names a setting and a value is read in silence.

``tests/data/claims_history/clauses.json.gz`` holds every description bullet the changelog commits of
SemiAnalysisAI/InferenceX appended (831 commits, 2025-12-15 to 843c6254f), each with the catalog of subjects
the checker built for its entry's jobs at that commit (``scripts/extract_claims_clauses.py``).  Every
clause of every bullet is read here with its catalog; one that names a known setting beside a value must give
a claim or a ``claim-unverified`` note saying why not.
"""

from __future__ import annotations

from ci_tools.claims.text.extract import extract
from ci_tools.claims.text.sentences import plain_source
from unread import load_history, names_a_setting_and_a_value, silent_clauses, spellings


def test_the_recorded_history_is_the_whole_history() -> None:
    catalogs, texts = load_history()
    assert len(texts) >= 1900 and len(catalogs) >= 400
    assert len({commit for commit, _, _ in texts}) >= 600  # commits that appended an entry with a description
    # Catalogs hold what the recipes of the time passed (the detector has names to find).
    assert sum(len(c.subjects) for c in catalogs) > 20_000


def test_every_clause_naming_a_setting_and_a_value_gives_a_claim_or_a_note() -> None:
    catalogs, texts = load_history()
    known = [spellings(c) for c in catalogs]
    silent: list[str] = []
    checked = 0
    for commit, at, text in texts:
        if not names_a_setting_and_a_value(text, known[at]):
            continue  # no clause of it can name both
        source = plain_source("perf-changelog.yaml", text)
        found = extract(source, catalogs[at])
        for clause in silent_clauses(source, found, known[at]):
            silent.append(f"{commit}: {clause.text}")
        checked += 1
    assert silent == []
    assert checked > 150


def test_the_detector_sees_a_setting_beside_a_value_and_nothing_else() -> None:
    known = {"--max-num-seqs", "max-num-seqs", "max_num_seqs", "SGLANG_USE_AITER"}
    assert names_a_setting_and_a_value("Set max-num-seqs to 32", known)
    assert names_a_setting_and_a_value("SGLANG_USE_AITER=1", known)
    assert names_a_setting_and_a_value("--max-num-seqs in FP8 mode", known)
    assert not names_a_setting_and_a_value("Tune max-num-seqs for the new image", known)
    assert not names_a_setting_and_a_value("Run 32 requests at a time", known)
