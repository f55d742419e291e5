"""The exact AUC null given tie groups against independent references.

- every label arrangement enumerated, exact fractions (n <= 12; heavy ties: few groups; light ties:
  mostly singletons; several P), for the programme and the tilted inversion;
- R's coin: exact conditional Wilcoxon–Mann–Whitney p-values, both tails, n = 20..200
  (``tests/data/coin_auc_ties.csv``, made by ``Rscript tests/data/coin_auc_ties.R``);
- the programme and the inversion against each other (two independent methods) where both run,
  through both ways the inversion finds its band (one FFT; the sieve of bounds used at large n).

The inversion is held to the relative error bound it reports with every answer (``error_bound``) and
to :data:`tablegen.compute.exact.auc_ties_fft.RELATIVE_ERROR_BOUND`.
"""

from __future__ import annotations

import csv
import functools
import itertools
from fractions import Fraction

import numpy as np
import pytest
from conftest import DATA

from tablegen.compute.exact import auc_ties_band, null_critical_value, null_tail_ge
from tablegen.compute.exact.auc import auc_exact_cost, auc_null
from tablegen.compute.exact.auc_fft import TiltedAucNull
from tablegen.compute.exact.auc_ties import (
    TiedProgrammeNull,
    TiltedTiedAucNull,
    programme_null,
    tie_groups,
    tied_auc_cost,
    tied_auc_null,
)
from tablegen.compute.exact.auc_ties_fft import RELATIVE_ERROR_BOUND
from tablegen.compute.exact.nulls import TIE_RTOL
from tablegen.compute.metric_scorers import auc_from_groups, threshold_groups
from tablegen.errors import TablegenInputError

TAILS = (0.5, 0.2, 0.05, 0.01, 1e-3)

#: (group sizes in ascending score order, P values): heavy ties, light ties, mixed.
SMALL_CASES = (
    ((5, 5), (1, 3, 7)),
    ((3, 1, 2, 4, 1), (1, 4, 8)),
    ((2, 2, 2, 2, 2, 2), (3, 6)),
    ((1, 1, 4, 1, 1, 1, 2), (2, 5)),
    ((1, 1, 1, 1, 1, 2, 1, 1, 1, 1), (4,)),
    ((12,), (5,)),
)


def exact_law(sizes, P) -> dict[int, Fraction]:
    """{2U: probability} over every choice of P positive items, straight from the definition."""
    group = [g for g, m in enumerate(sizes) for _ in range(m)]
    counts: dict[int, int] = {}
    for chosen in itertools.combinations(range(len(group)), P):
        k = [0] * len(sizes)
        for item in chosen:
            k[group[item]] += 1
        negatives_below, two_u = 0, 0
        for g, m in enumerate(sizes):  # a positive beats every negative below, ties with its own group's
            two_u += k[g] * (2 * negatives_below + m - k[g])
            negatives_below += m - k[g]
        counts[two_u] = counts.get(two_u, 0) + 1
    total = sum(counts.values())
    return {u: Fraction(c, total) for u, c in sorted(counts.items())}


def exact_critical(law: dict[int, Fraction], tail: float, PN: int) -> float:
    """m* = the smallest x with Pr(X > x) <= t (1 + TIE_RTOL), in exact arithmetic."""
    level = Fraction(tail) * (1 + Fraction(TIE_RTOL))
    above = Fraction(1)
    for u, p in law.items():
        above -= p
        if above <= level:
            return u / (2 * PN)
    raise AssertionError("unreachable: the tail above the maximum is 0")


def small_cases():
    return [(sizes, P) for sizes, Ps in SMALL_CASES for P in Ps]


@pytest.mark.parametrize("sizes, P", small_cases())
def test_programme_equals_enumeration(sizes, P):
    law = exact_law(sizes, P)
    PN = P * (sum(sizes) - P)
    null = programme_null(np.array(sizes), P)
    assert null.values.tolist() == [u / (2 * PN) for u in law]  # exactly the attainable values
    tails = np.cumsum([float(p) for p in reversed(law.values())])[::-1]
    exact_tails = [float(sum(list(law.values())[i:])) for i in range(len(law))]
    np.testing.assert_allclose(null.tail_ge, exact_tails, rtol=1e-13, atol=0)
    np.testing.assert_allclose(tails, exact_tails, rtol=1e-13)
    for tail in TAILS:
        assert null.critical_value(tail) == exact_critical(law, tail, PN)


@pytest.mark.parametrize("sizes, P", [((5, 5), 3), ((3, 1, 2, 4, 1), 4), ((2, 2, 2, 2, 2, 2), 6),
                                      ((1, 1, 4, 1, 1, 1, 2), 5), ((1, 1, 1, 1, 1, 2, 1, 1, 1, 1), 4)])
def test_inversion_equals_enumeration(sizes, P):
    law = exact_law(sizes, P)
    PN = P * (sum(sizes) - P)
    null = TiltedTiedAucNull(sizes, P)
    above = Fraction(1)
    for u, p in law.items():
        null.error_bound = 0.0
        got = null.tail_ge_score(u / (2 * PN))
        assert got == pytest.approx(float(above), rel=null.error_bound + 1e-15, abs=0)  # its own bound
        above -= p
    assert null.tail_ge_score(1.0 + 1e-6) == 0.0 and null.tail_ge_score(-0.5) == 1.0
    for tail in TAILS:
        assert null.critical_value(tail) == exact_critical(law, tail, PN)
    assert null.error_bound <= RELATIVE_ERROR_BOUND


def test_all_tied_is_a_point_mass():
    for null in (tied_auc_null([7], 3), TiltedTiedAucNull([7], 3)):
        assert null.critical_value(1e-3) == 0.5
        assert null.tail_ge_score(0.5) == 1.0 and null.tail_ge_score(0.5 + 1e-6) == 0.0


@pytest.mark.parametrize("P, N", [(7, 9), (20, 20), (3, 40)])
def test_untied_scores_give_todays_null(P, N):
    null, today = tied_auc_null([1] * (P + N), P), auc_null(P, N)
    assert type(null) is type(today)
    np.testing.assert_array_equal(null.values, today.values)
    np.testing.assert_array_equal(null.tail_ge, today.tail_ge)


def test_untied_large_scores_give_todays_tilted_null():
    null = tied_auc_null(np.ones(2000, dtype=int), 1000)
    assert isinstance(null, TiltedAucNull) and (null.P, null.N) == (1000, 1000)
    assert tied_auc_cost(np.ones(2000, dtype=int), 1000) == auc_exact_cost(1000, 1000)


def coin_rows():
    with open(DATA / "coin_auc_ties.csv", newline="") as handle:
        return list(csv.DictReader(handle))


@pytest.fixture(scope="module")
def coin_cases():
    """(sizes, P, 2U, coin's W, Pr(W >= w), Pr(W <= w)) for each case, tie groups from threshold_groups."""
    cases = []
    for row in coin_rows():
        labels = np.array(row["labels"].split(), dtype=int)
        scores = np.array(row["scores"].split(), dtype=float)
        sizes, P, two_u = tie_groups(threshold_groups(labels, scores))
        cases.append((sizes, P, two_u, float(row["linear"]), float(row["p_greater"]), float(row["p_less"])))
    return cases


def test_programme_equals_coin(coin_cases):
    for sizes, P, two_u, linear, greater, less in coin_cases:
        assert two_u + P * (P + 1) == 2 * linear  # coin's statistic is the positives' mid-rank sum W
        PN = P * (int(sizes.sum()) - P)
        auc = two_u / (2 * PN)
        assert null_tail_ge(tied_auc_null(sizes, P), auc) == pytest.approx(greater, rel=1e-12)
        # Pr(AUC <= a) = Pr(AUC' >= 1 - a) with the scores reversed
        assert null_tail_ge(tied_auc_null(sizes[::-1], P), 1 - auc) == pytest.approx(less, rel=1e-12)


@pytest.mark.parametrize("case", [4, pytest.param(7, marks=pytest.mark.slow), pytest.param(8, marks=pytest.mark.slow)])
# n = 60 (51 groups), 120 (70 groups), 200 (9 groups)
def test_inversion_equals_coin(coin_cases, case):
    sizes, P, two_u, _, greater, less = coin_cases[case]
    PN = P * (int(sizes.sum()) - P)
    null = TiltedTiedAucNull(sizes, P)
    assert null.tail_ge_score(two_u / (2 * PN)) == pytest.approx(greater, rel=null.error_bound + 1e-13)
    mirrored = TiltedTiedAucNull(sizes[::-1], P)
    assert mirrored.tail_ge_score(1 - two_u / (2 * PN)) == pytest.approx(less, rel=mirrored.error_bound + 1e-13)
    assert max(null.error_bound, mirrored.error_bound) <= RELATIVE_ERROR_BOUND


def test_tie_groups_match_the_scorer():
    rng = np.random.default_rng(3)
    for _ in range(20):
        labels = rng.permutation(np.r_[np.ones(9, int), np.zeros(14, int)])
        scores = rng.integers(0, 5, labels.size) + 0.5 * labels
        groups = threshold_groups(labels, scores)
        sizes, P, two_u = tie_groups(groups)
        assert sizes.sum() == 23 and P == 9 and sizes.tolist() == np.unique(scores, return_counts=True)[1].tolist()
        pairs = sum(Fraction(int(a > b) + Fraction(int(a == b), 2)) for a in scores[labels == 1]
                    for b in scores[labels == 0])
        assert two_u == 2 * pairs and two_u / (2 * P * 14) == pytest.approx(auc_from_groups(groups), rel=1e-15)


@pytest.mark.parametrize("null", [lambda: tied_auc_null([3, 1, 2, 4, 1], 4),
                                  lambda: TiltedTiedAucNull([3, 1, 2, 4, 1], 4)])
def test_p_values_lie_in_the_unit_interval(null):
    null = null()
    for score in (-1.0, 0.0, 0.3, 0.5, 0.77, 1.0, 1.0 + 1e-12, 2.0):
        assert 0.0 <= null_tail_ge(null, score) <= 1.0
    for tail in (1.0, 0.999, 0.5, 1e-6, 1e-300):
        assert 0.0 <= null_critical_value(null, tail) <= 1.0


@pytest.mark.parametrize("sizes, P, needle", [
    ([], 1, "group_sizes"), ([0, 2], 1, "group_sizes"), ([1.5, 2], 1, "group_sizes"), ([-1, 3], 1, "group_sizes"),
    (["a", "b"], 1, "group_sizes"), ([[1, 2]], 1, "group_sizes"), (None, 1, "group_sizes"),
    ([2, 3], 0, "P"), ([2, 3], 5, "P"), ([2, 3], 1.5, "P"), ([2, 3], "2", "P"),
])
def test_bad_input_is_refused(sizes, P, needle):
    for call in (tied_auc_null, tied_auc_cost, TiltedTiedAucNull):
        with pytest.raises(TablegenInputError, match=needle):
            call(sizes, P)


def test_routes_by_cost():
    assert isinstance(tied_auc_null([2] * 20, 15), TiedProgrammeNull)
    light = np.where(np.arange(100_000) % 10 == 0, 3, 1)[:80_000]
    seconds, bytes_ = tied_auc_cost(light, int(light.sum()) // 2)
    assert 0.1 < seconds < 60 and bytes_ < 1e9  # the inversion; the programme would take years


@functools.cache
def mid_cases():
    rng = np.random.default_rng(3)
    light = []
    while sum(light) < 400:
        light.append(1 if rng.random() < 0.85 else int(rng.integers(2, 6)))
    return [(np.array(light), 150), (np.bincount(rng.integers(0, 12, 500)), 250)]


@functools.cache
def mid_programme(case: int):
    return programme_null(*mid_cases()[case])


#: How the inversion finds |S| on the frequency grid: forced by making the other ways look expensive.
BAND_PATHS = {"fft": {"SECONDS_PER_S_TERM": 1.0},
              "sieve": {"SECONDS_PER_FFT_TERM": 1.0},
              "chunked": {"SECONDS_PER_S_TERM": 1.0, "FULL_FFT_POINTS": 64}}


@pytest.mark.slow
@pytest.mark.parametrize("path", sorted(BAND_PATHS))
@pytest.mark.parametrize("case", [0, 1])
def test_inversion_equals_programme(monkeypatch, case, path):
    """Light ties (n = 400) and 12 groups (n = 500); the band by one FFT, by the sieve, by chunked FFTs."""
    sizes, P = mid_cases()[case]
    for name, value in BAND_PATHS[path].items():
        monkeypatch.setattr(auc_ties_band, name, value)
    exact = mid_programme(case)
    null = TiltedTiedAucNull(sizes, P)
    probes = np.searchsorted(-exact.tail_ge, -np.array([0.9, 0.5, 1e-2, 1e-5, 1e-9, 1e-13]))
    for index in np.unique(np.minimum(probes, exact.values.size - 1)):
        null.error_bound = 0.0
        got = null.tail_ge_score(exact.values[index])
        assert abs(got / exact.tail_ge[index] - 1) <= null.error_bound + 1e-13
    for tail in (0.3, 1e-3, 1e-7):
        assert null.critical_value(tail) == exact.critical_value(tail)
    assert null.error_bound <= RELATIVE_ERROR_BOUND
