"""Claim extraction on sentences of the InferenceX history before the hand-labelled window, by the reading
that keeps a finding from being false (tests/data/claims_sentences_history.yaml)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from ci_tools.claims.text.extract import extract
from ci_tools.claims.text.sentences import plain_source
from test_claims_sentences import catalog, normalise

TABLE = yaml.safe_load((Path(__file__).parent / "data" / "claims_sentences_history.yaml").read_text(encoding="utf-8"))
CATALOG = catalog(TABLE["catalog"])


@pytest.mark.parametrize("case", TABLE["sentences"], ids=[c["text"][:60] for c in TABLE["sentences"]])
def test_sentence_of_the_history(case: dict[str, Any]) -> None:
    found = extract(plain_source("x.md", case["text"]), CATALOG)
    assert [normalise(c) for c in found.claims] == case["claims"]


def test_a_launchers_variable_is_left_unverified_and_says_why() -> None:
    text = "Adds SPEC_SUFFIX=_mtp to runners/launch_h100-cw.sh"
    found = extract(plain_source("x.md", text), CATALOG)
    assert not found.claims
    assert [(u.phrase, u.reason) for u in found.unverified] == [("SPEC_SUFFIX", "a variable of the launcher")]
