"""Exact null distributions against brute-force enumeration (P + N <= 12) and exact rationals (P, N <= 40)."""

import math
from fractions import Fraction

import numpy as np
import pytest

from tablegen.compute.exact import auc_null_from_pmf, auc_pmf_sweep
from tablegen.compute.kernels.lattice import half_plane_hit_probability
from tablegen.compute.metric_nulls import exact_critical_value, exact_p_value, exact_tail_ge, null_distribution
from tablegen.compute.stats import upper_tail_probability

EXACT_METRICS = ("auc", "best_accuracy", "best_f1", "best_balanced_accuracy", "tp_at_1", "tp_at_3",
                 "tp_at_10", "tp_at_20", "precision_at_1", "precision_at_3", "precision_at_10", "precision_at_20")
CS = (1, 2, 10, 100, 1000)
ALPHAS = (0.01, 0.05, 0.2, 0.5)
RTOL = 1e-11


def tail_of(distribution: dict, value) -> Fraction:
    total = sum(distribution.values())
    return Fraction(sum(c for v, c in distribution.items() if v >= value), total)


def true_tail_probability(C, alpha):
    """t = 1 - (1 - alpha)**(1/C) in exact arithmetic where it is rational (C = 1), else the float."""
    return Fraction(str(alpha)) if C == 1 else Fraction(float(upper_tail_probability(C, alpha)))


def brute_critical_value(distribution: dict, C, alpha) -> Fraction:
    """Smallest x in the support with F(x) >= q, judged on the exact tail Pr(X > x) <= t."""
    t = true_tail_probability(C, alpha)
    total = sum(distribution.values())
    for x in sorted(distribution):
        above = Fraction(sum(c for v, c in distribution.items() if v > x), total)
        if C > 1:  # t is irrational: an exact tie is impossible, a near-tie would make the test moot
            assert abs(above - t) > t * Fraction(1, 10**9)
        if above <= t:
            return x
    raise AssertionError("unreachable: the maximum always qualifies")


def test_brute_force_covers_every_small_cell(brute_force_distributions):
    assert len(brute_force_distributions) == sum(n - 1 for n in range(2, 13))


def cells_with_nulls(metric, brute_force_distributions):
    """(P, N, brute-force distribution, our exact null) for every small cell."""
    for (P, N), per_metric in brute_force_distributions.items():
        yield P, N, per_metric[metric], null_distribution(metric, P, N)


@pytest.mark.parametrize("metric", EXACT_METRICS)
def test_exact_tail_equals_brute_force(metric, brute_force_distributions):
    for P, N, distribution, null in cells_with_nulls(metric, brute_force_distributions):
        for value in distribution:
            expected = float(tail_of(distribution, value))
            got = exact_tail_ge(metric, P, N, float(value), null=null)
            assert got == pytest.approx(expected, rel=RTOL), (metric, P, N, value)
        assert exact_tail_ge(metric, P, N, float(max(distribution)) + 1e-6, null=null) == 0.0


@pytest.mark.parametrize("metric", EXACT_METRICS)
def test_exact_critical_value_and_p_value_equal_brute_force(metric, brute_force_distributions):
    for P, N, distribution, null in cells_with_nulls(metric, brute_force_distributions):
        for C in CS:
            for alpha in ALPHAS:
                expected = brute_critical_value(distribution, C, alpha)
                assert exact_critical_value(metric, P, N, C, alpha, null=null) == float(expected)
            for value in distribution:
                expected_p = 1 - (1 - float(tail_of(distribution, value))) ** C
                got = exact_p_value(metric, float(value), P, N, C, null=null)
                assert got == pytest.approx(expected_p, rel=1e-9, abs=1e-15), (metric, P, N, C, value)


# --- exact rational arithmetic at P, N <= 40 ------------------------------------------------------

RATIONAL_CELLS = [(40, 40), (40, 7), (3, 40), (25, 33), (1, 40)]


def rational_auc_pmf(P, N):
    """Counts of U by the same recursion in Python integers, as Fractions."""
    row = [[1] for _ in range(N + 1)]  # i = 0
    for i in range(1, P + 1):
        new_row = [[1]]
        for j in range(1, N + 1):
            counts = [0] * (i * j + 1)
            for u, c in enumerate(row[j]):  # top item positive: U' + j
                counts[u + j] += c
            for u, c in enumerate(new_row[j - 1]):  # top item negative
                counts[u] += c
            new_row.append(counts)
        row = new_row
    total = math.comb(P + N, P)
    assert sum(row[N]) == total
    return [Fraction(c, total) for c in row[N]]


def rational_touch_probability(P, N, a, b, c):
    """Fraction of lattice paths (0,0)->(P,N) that touch a t - b f >= c, by integer path counting."""
    if c <= 0:
        return Fraction(1)
    avoid = [[0] * (N + 1) for _ in range(P + 1)]
    for t in range(P + 1):
        for f in range(N + 1):
            if a * t - b * f >= c:
                continue
            avoid[t][f] = 1 if t == f == 0 else (avoid[t - 1][f] if t else 0) + (avoid[t][f - 1] if f else 0)
    return 1 - Fraction(avoid[P][N], math.comb(P + N, P))


@pytest.mark.parametrize("P,N", RATIONAL_CELLS)
def test_auc_equals_rational_recursion(P, N):
    expected = rational_auc_pmf(P, N)
    null = null_distribution("auc", P, N)
    tail = Fraction(0)
    for u in range(P * N, -1, -1):
        tail += expected[u]
        assert null.tail_ge[u] == pytest.approx(float(tail), rel=RTOL)


@pytest.mark.parametrize("P,N", RATIONAL_CELLS)
def test_closed_forms_equal_rationals(P, N):
    total = math.comb(P + N, P)
    accuracy = null_distribution("best_accuracy", P, N)
    for value, tail in zip(accuracy.values, accuracy.tail_ge):
        h = round(value * (P + N)) - N
        assert tail == pytest.approx(float(Fraction(math.comb(P + N, N + h), total)), rel=RTOL)
    for k in (1, 10, 33, 100):
        null = null_distribution(f"tp_at_{k}", P, N)
        draws = min(k, P + N)
        for value, tail in zip(null.values, null.tail_ge):
            exact = Fraction(sum(math.comb(P, x) * math.comb(N, draws - x)
                                 for x in range(int(value), min(draws, P) + 1)), math.comb(P + N, draws))
            assert tail == pytest.approx(float(exact), rel=RTOL)


@pytest.mark.parametrize("P,N", RATIONAL_CELLS)
def test_lattice_metrics_equal_rational_path_counts(P, N):
    f1 = null_distribution("best_f1", P, N)
    for index in range(0, len(f1.values), max(1, len(f1.values) // 40)):
        value = Fraction(f1.values[index]).limit_denominator(2 * P + N)
        num, den = value.numerator, value.denominator
        exact = rational_touch_probability(P, N, 2 * den - num, num, num * P)
        assert f1.tail_ge_at(index) == pytest.approx(float(exact), rel=RTOL)
    balanced = null_distribution("best_balanced_accuracy", P, N)
    for index in range(0, len(balanced.values), max(1, len(balanced.values) // 40)):
        g = round(balanced.values[index] * 2 * P * N) - P * N
        exact = rational_touch_probability(P, N, N, P, g)
        assert balanced.tail_ge_at(index) == pytest.approx(float(exact), rel=RTOL)


def test_lattice_programme_reproduces_reflection_principle():
    for P, N in [(40, 40), (13, 29), (30, 3)]:
        for h in range(max(0, P - N), P + 1):
            closed = Fraction(math.comb(P + N, N + h), math.comb(P + N, P))
            assert half_plane_hit_probability(P, N, 1, 1, h) == pytest.approx(float(closed), rel=RTOL)


def test_one_auc_sweep_yields_every_cell_like_single_cells():
    cells = [(3, 5), (5, 3), (12, 12), (20, 7), (1, 20)]
    swept = dict(auc_pmf_sweep(cells))
    assert set(swept) == set(cells)
    for P, N in cells:
        single = null_distribution("auc", P, N)
        np.testing.assert_array_equal(auc_null_from_pmf(P, N, swept[(P, N)]).tail_ge, single.tail_ge)
        assert swept[(P, N)].sum() == pytest.approx(1.0, abs=1e-13)
        np.testing.assert_allclose(swept[(P, N)], swept[(P, N)][::-1], rtol=1e-12)  # symmetric about PN/2


def test_scores_are_snapped_to_attainable_values():
    # 0.7 is 7/10 for AUC at (2, 5); a user's 0.7000000000001 is the same score.
    assert exact_tail_ge("auc", 2, 5, 0.7) == exact_tail_ge("auc", 2, 5, 0.7 + 1e-13)
    assert exact_tail_ge("auc", 2, 5, 0.7) > exact_tail_ge("auc", 2, 5, 0.7 + 1e-6)
