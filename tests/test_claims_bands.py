"""Concurrency bands one sentence gives arms the config does not tell apart are judged together
(claims/verdict/bands.py).

SemiAnalysisAI/InferenceX#2354 as proposed: "TP16 (conc 1-8), TEP16 (conc 8-32), and TP4 x DP4 = EP16 (conc
32-256)", where the config wrote both the TP16 and the TEP16 rows as tp 16 / ep 16: each band had been judged
against the points of both rows ("also 16, 24, 32"; "also 1, 2, 4")."""

from __future__ import annotations

from pathlib import Path

from ci_tools.claims.text.values import Concurrency
from ci_tools.claims.verdict.bands import names_point, without_partner_points
from ci_tools.claims.text.claim import Claim
from ci_tools.claims.text.scope import Scope
from ci_tools.findings import Location
from ci_tools.jobs.job import Job
from test_changelog_support import git
from test_claims_recipe_loops import concurrency_findings
from test_claims_seed import run_claims
from test_claims_wordings import ENTRY

KEY = "kimik3-fp4-gb200-dynamo-vllm-agentic"
MASTER = "configs/nvidia-master.yaml"
SENTENCE = ("Add Day-0 Kimi K3 MXFP4 GB200 AgentX points: TP16 (conc 1-8), TEP16 (conc {tep}), and TP4 x DP4 = EP16 "
            "(conc 32-384).")


def _rows_alike(repo: Path) -> None:
    """The key's TP16 row (conc 1, 2, 4, 8) written with ep 16, as its TEP16 row is."""
    path = repo / MASTER
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if line.startswith(KEY + ":"))
    first = next(i for i in range(start, len(lines)) if "conc-list: [1, 2, 4, 8]" in lines[i])
    for i in range(first, first + 14):
        lines[i] = lines[i].replace("ep: 1\n", "ep: 16\n")
    path.write_text("".join(lines), encoding="utf-8")
    git(repo, "commit", "-q", "-am", "the TP16 row written with ep 16")


def test_bands_of_arms_the_config_does_not_tell_apart_are_judged_together(real_repo: Path) -> None:
    _rows_alike(real_repo)
    changelog = real_repo / "perf-changelog.yaml"
    first = len(changelog.read_text(encoding="utf-8").splitlines()) + 5  # the first entry's description line
    with changelog.open("a", encoding="utf-8") as fh:
        fh.write(ENTRY.format(key=KEY, text=SENTENCE.format(tep="8-32"), n=9401))
        fh.write(ENTRY.format(key=KEY, text=SENTENCE.format(tep="8-16"), n=9402))
    git(real_repo, "commit", "-q", "-am", "two entries")
    _, report = run_claims(real_repo, "--base", "HEAD~1", "--head", "HEAD")
    found = concurrency_findings(report)
    assert not [m for m in found if f"perf-changelog.yaml:{first})" in m]
    # Points neither band names are still points the text does not list.
    second = [m for m in found if f"perf-changelog.yaml:{first + 6})" in m]
    assert len(second) == 2 and all("also 24, 32" in m for m in second)


def test_a_partner_band_takes_only_the_points_it_names_and_the_claim_does_not() -> None:
    row = Job("k", "agentic-coding", {"conc": [1, 2, 4, 8, 16, 24, 32], "prefill": {}}, Location("c.yaml", 1))
    single = Job("k", "agentic-coding", {"conc": 16}, Location("c.yaml", 2))
    own = Concurrency("conc 1-8", (1, 8), True, None)
    claim = Claim("concurrency", own, Scope(), Location("x.md", 1), "TP16 (conc 1-8)")
    kept = without_partner_points(claim, [row, single], [Concurrency("conc 8-16", (8, 16), True, None)])
    assert [j.concs for j in kept] == [[1, 2, 4, 8, 24, 32]]  # 8 is the claim's own; the conc-16 job left out
    assert names_point(Concurrency("c64+", (64,), False, 64), 128) and not names_point(own, 9)
