"""``ci-tools claims --history`` on real InferenceX pull requests from before the configs moved to configs/
(their master configs under .github/configs/), each replayed from a minimal extract of its files
(tests/data/claims_real, see its README).  The expected findings are the hand verdicts of
tests/data/ix-judged-history: the claims the judge found true are reported, the ones found false are not."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from test_changelog_support import run
from test_claims_real import CLAIM_RULES, Finding, replay

# commit -> (what the case shows, the claim findings of the replay: rule, line, subject, claimed)
CASES: dict[str, tuple[str, set[Finding]]] = {
    "c512990ce318": (
        "a bullet headed by a config key speaks of that key's jobs only: 'minimaxm3-fp8-mi355x-vllm: ... 8k1k sweeps "
        "TP8 (conc 1-2)' holds for that key (the MTP key's row runs 1-16); the TP4 bands that differ are reported "
        "on the key each bullet names",
        {("claim-partly-contradicted", 15, "concurrency/tp/ep/dp-attn/isl/osl", "conc 4-32"),
         ("claim-partly-contradicted", 16, "concurrency/tp/dp-attn/isl/osl", "conc 16-128")}),
    "7fe8c8d0a4ee": (
        "an override judged inside its condition (when ISL=8192, OSL=1024, and CONC>128), on the key the bullet "
        "is headed by; the condition's CONC>128 is no point the sweep is said to run; its '(default 0.85 "
        "elsewhere)' is judged on the jobs outside the condition, where the recipe's CONC>128 branch gives the "
        "1k1k conc-256 job 0.8",
        {("claim-partly-contradicted", 17, "--mem-fraction-static", "0.85")}),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_history_replay_of_a_real_pull_request(case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    repo, base = replay(case, tmp_path, monkeypatch)
    code, out, err = run(["claims", "--repo", str(repo.path), "--history", "--since", base, "--format", "json"], capsys)
    assert code in (0, 1), err
    findings = json.loads(out)["findings"]
    assert not [f["message"] for f in findings if f["rule"] == "claim-not-checked"], "the extract must hold every file"
    found = {(f["rule"], f["line"], str(f["data"]["subject"]), str(f["data"]["claimed"]))
             for f in findings if f["rule"] in CLAIM_RULES}
    assert found == CASES[case][1], CASES[case][0]
