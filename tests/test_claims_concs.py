"""Concurrency scopes as prose writes them: points, ranges and bounds (claims/text/concs.py)."""

from __future__ import annotations

import pytest

from ci_tools.claims.text.concs import conc_scope, conc_specs
from ci_tools.claims.text.sentences import plain_source, split_clauses


def specs_of(text: str) -> list[tuple[str, bool, frozenset[int] | None, int | None]]:
    """(words, is a condition, points named, lowest point) of each concurrency spec of a one-clause text."""
    (clause,) = split_clauses(plain_source("perf-changelog.yaml", text))
    out = []
    for spec in conc_specs(clause):
        scope = conc_scope(spec)
        out.append((spec.value.text, spec.condition, scope.concs, scope.conc_min))
    return out


@pytest.mark.parametrize("text, lowest", [
    ("32768 above conc 32", 33), ("32768 over concurrency 32", 33), ("32768 for conc greater than 32", 33),
    ("32768 at concurrency above 32", 33), ("32768 beyond c32", 33), ("32768 when conc > 32", 33),
    ("32768 when conc >= 32", 32)])
def test_a_number_above_which_the_jobs_are_is_a_lower_bound(text: str, lowest: int) -> None:
    ((_, condition, _, conc_min),) = specs_of(text)
    assert condition and conc_min == lowest


@pytest.mark.parametrize("text, highest", [
    ("196608 below conc 64", 63), ("196608 under concurrency 64", 63), ("196608 for conc less than 64", 63),
    ("196608 at concurrency below 64", 63), ("196608 for conc up to 32", 32), ("196608 when conc <= 32", 32),
    ("196608 at conc 32 and below", 32)])
def test_a_number_below_which_the_jobs_are_is_an_upper_bound(text: str, highest: int) -> None:
    ((_, condition, concs, _),) = specs_of(text)
    assert condition and concs is not None and max(concs) == highest and min(concs) == 1


@pytest.mark.parametrize("text, points", [
    ("tp=8 and tp=4 over conc 4-64", {4, 64}), ("run past conc 8/16", {8, 16}), ("above conc 4, 8 and 16", {4, 8, 16})])
def test_a_range_or_list_after_a_comparison_word_names_points_not_a_bound(text: str, points: set[int]) -> None:
    ((_, condition, concs, conc_min),) = specs_of(text)
    assert not condition and conc_min is None and concs is not None and points <= concs
