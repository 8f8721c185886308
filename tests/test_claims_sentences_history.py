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


def test_a_setting_of_the_drafter_where_no_recipe_passes_a_speculative_config_is_left_unverified() -> None:
    without = catalog({"flags": ["--attention-backend"]})
    found = extract(plain_source("x.md", "No attention_backend override on the drafter."), without)
    assert not found.claims
    assert [(u.phrase, u.reason) for u in found.unverified] == [
        ("attention_backend", "a setting of the draft model, not the server's")]


def test_the_concurrencies_a_setting_is_switched_for_are_noted_not_claimed() -> None:
    text = "Switch CONC 2048/4096/8192 from --moe-a2a-backend deepep to megamoe"
    found = extract(plain_source("x.md", text), CATALOG)
    assert not any(c.kind == "concurrency" for c in found.claims)
    assert ("CONC 2048/4096/8192", "the concurrencies name the recipe's branches a setting is switched for") in [
        (u.phrase, u.reason) for u in found.unverified]


def test_the_concurrencies_of_a_recipes_launch_profiles_are_noted_not_claimed() -> None:
    # PR 2189: the megamoe band's new points "reuse" two branches the recipe already had.
    text = ("Extend the megamoe band down to conc 2048-8192, reusing the existing CONC 2048/4096 launch profiles "
            "in dsv4_fp4_b300_sglang.sh")
    found = extract(plain_source("x.md", text), CATALOG)
    assert [c.value.text for c in found.claims if c.kind == "concurrency"] == ["conc 2048-8192"]
    assert ("CONC 2048/4096", "the concurrencies name branches of the recipe's code, not points the sweep runs") in [
        (u.phrase, u.reason) for u in found.unverified]
    # Profiles alone may be the sweep's bands: still points the sweep runs.
    found = extract(plain_source("x.md", "Add TP8 concurrency 1/4 and TP4 concurrency 8 profiles."), CATALOG)
    assert [c.value.text for c in found.claims if c.kind == "concurrency"] == ["concurrency 1/4", "concurrency 8"]
