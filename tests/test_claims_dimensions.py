"""A claim turning on a setting that is a matrix dimension (--enable-dp-attention, DP_ATTENTION) is not partly
contradicted by points the config runs without that dimension; by a point of the dimension it still is."""

from __future__ import annotations

from ci_tools.claims.text.claim import Claim
from ci_tools.claims.text.scope import Scope
from ci_tools.claims.text.subjects import Subject
from ci_tools.claims.text.values import Bool, ClaimValue, Present
from ci_tools.claims.verdict.actual import Actual
from ci_tools.claims.verdict.compare import Judgement
from ci_tools.claims.verdict.dimensions import explained_by_the_matrix
from ci_tools.findings import Location
from ci_tools.jobs.job import Job

HERE = Location("perf-changelog.yaml", 1, 1)


def _claim(name: str, value: ClaimValue, kind: str = "flag") -> Claim:
    return Claim("recipe", value, Scope(), HERE, "clause", Subject(kind, name))


def _judgement(claim: Claim, jobs: list[Job], passes: list[bool]) -> Judgement:
    actuals = tuple(Actual(ok, "passes it" if ok else "does not pass it", "", None) for ok in passes)
    return Judgement(claim, tuple(jobs), actuals, existential=False)


def _single(full_corpus_jobs: list[Job], key: str) -> tuple[Job, Job]:
    """One dp-attn point and one point without it of a single-node key."""
    jobs = [j for j in full_corpus_jobs if j.config_key == key]
    return (next(j for j in jobs if j.fields.get("dp-attn") is True),
            next(j for j in jobs if j.fields.get("dp-attn") is not True))


def test_missing_only_where_the_config_runs_no_dp_attention_is_explained(full_corpus_jobs: list[Job]) -> None:
    dpa, plain = _single(full_corpus_jobs, "dsv4-fp4-mi355x-atom")
    for claim in (_claim("--enable-dp-attention", Present("set")), _claim("DP_ATTENTION", Bool("on", True), "env")):
        assert explained_by_the_matrix(_judgement(claim, [dpa, plain], [True, False]))
        # a dp-attn point without it is a real disagreement
        assert not explained_by_the_matrix(_judgement(claim, [dpa, plain], [False, True]))
        # nothing holds: no reading of the text as "the DP-attention points" is true either
        assert not explained_by_the_matrix(_judgement(claim, [plain], [False]))


def test_only_turning_the_setting_on_and_only_a_dimension_s_setting_is_explained(full_corpus_jobs: list[Job]) -> None:
    dpa, plain = _single(full_corpus_jobs, "dsv4-fp4-mi355x-atom")
    assert not explained_by_the_matrix(_judgement(_claim("--enable-dp-attention", Bool("off", False)), [dpa, plain],
                                                  [True, False]))
    assert not explained_by_the_matrix(_judgement(_claim("--enable-torch-compile", Present("set")), [dpa, plain],
                                                  [True, False]))


def test_a_multinode_point_runs_the_dimension_when_either_role_does(full_corpus_jobs: list[Job]) -> None:
    jobs = [j for j in full_corpus_jobs if j.config_key == "dsv4-fp4-gb300-dynamo-sglang"]
    plain = next(j for j in jobs if not any((j.fields.get(r) or {}).get("dp-attn") for r in ("prefill", "decode")))
    dpa = next(j for j in jobs if (j.fields.get("prefill") or {}).get("dp-attn"))
    claim = _claim("--enable-dp-attention", Present("set"))
    assert explained_by_the_matrix(_judgement(claim, [dpa, plain], [True, False]))
    assert not explained_by_the_matrix(_judgement(claim, [dpa, plain], [False, True]))
