"""Exact Lehmann power (:mod:`tablegen.compute.exact.power`) against independent computations.

- Enumeration: every arrangement of a tiny cell (P + N <= 16), its probability under the Lehmann
  alternative the product of the step probabilities in exact rationals, each arrangement scored by the
  metric's reference scorer, compared with m* from ``tablegen.critical_value(method="exact")``: the
  power of every metric at C = 1 and 10 equals the enumeration to 1e-12; the weights sum to 1 and the
  mean AUC is k/(k+1) exactly (which the step probability must give, being the law of F**k vs F).
- k = 1 is the null: the power is the test's exact size Pr(X > m*) <= t (a property test over cells).
- Simulation of real scores (positives uniform**(1/k), negatives uniform) at a moderate cell: within
  4 standard errors.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tablegen
from tablegen.compute.exact import power as exact_power
from tablegen.compute.metric_nulls import tabulated_null
from tablegen.compute.metrics import get_metric
from tablegen.compute.stats import upper_tail_probability

LATTICE = ("best_accuracy", "best_balanced_accuracy", "best_f1", "best_mcc", "tp_at_3", "precision_at_4", "auc")
K = Fraction(7, 3)  # AUC = 0.7
#: Every cell with P + N <= 9, and some with P + N = 16 (skewed and balanced)
CELLS = [(P, n - P) for n in range(2, 10) for P in range(1, n)] + [(8, 8), (3, 13), (13, 3), (5, 11)]


def _arrangements(P: int, N: int) -> np.ndarray:
    rows = np.zeros((math.comb(P + N, P), P + N), dtype=np.uint8)
    for row, top in enumerate(itertools.combinations(range(P + N), P)):
        rows[row, list(top)] = 1
    return rows


def lehmann_weight(labels, P: int, N: int, k: Fraction) -> Fraction:
    """The probability of one arrangement (top first) under the Lehmann alternative, in exact rationals:
    with p positives and n negatives left, the next is positive with probability k p / (n + k p)."""
    p, n, weight = P, N, Fraction(1)
    for label in labels:
        if label:
            weight *= k * p / (n + k * p)
            p -= 1
        else:
            weight *= Fraction(n) / (n + k * p)
            n -= 1
    return weight


_WEIGHTS: dict = {}


def weights(P: int, N: int, k: Fraction = K):
    if (P, N, k) not in _WEIGHTS:
        labels = _arrangements(P, N)
        _WEIGHTS[P, N, k] = labels, [lehmann_weight(row, P, N, k) for row in labels]
    return _WEIGHTS[P, N, k]


def enumerated_power(metric: str, P: int, N: int, C: int, alpha: float, k: Fraction = K) -> tuple[Fraction, float]:
    labels, w = weights(P, N, k)
    m_star = float(tablegen.critical_value(metric, P, N, C=C, alpha=alpha, method="exact"))
    values = get_metric(metric).reference_scores(labels, P, N)
    return sum((wi for wi, v in zip(w, values) if v > m_star + 1e-9), Fraction(0)), m_star


@pytest.mark.parametrize("metric", LATTICE)
@pytest.mark.parametrize("C", [1, 10])
def test_power_equals_enumeration_of_every_weighted_arrangement(metric, C):
    for P, N in CELLS:
        for alpha in (0.05, 0.2):
            exact, m_star = enumerated_power(metric, P, N, C, alpha)
            event = get_metric(metric).lehmann_event(P, N, float(upper_tail_probability(C, alpha)))
            assert event.critical_value == pytest.approx(m_star, abs=1e-12), (P, N, alpha)
            assert event.probability(float(K)) == pytest.approx(float(exact), rel=1e-12, abs=1e-15), (P, N, alpha)


@pytest.mark.parametrize("C", [1, 10])
def test_average_precision_power_equals_enumeration(C):
    for P, N in [(1, 3), (3, 1), (2, 5), (4, 4), (3, 6), (8, 8), (4, 12)]:
        for alpha in (0.05, 0.2):
            exact, m_star = enumerated_power("average_precision", P, N, C, alpha)
            event = get_metric("average_precision").lehmann_event(P, N, float(upper_tail_probability(C, alpha)))
            assert event.critical_value == pytest.approx(m_star, abs=1e-12)
            assert event.probability(float(K)) == pytest.approx(float(exact), rel=1e-12, abs=1e-15), (P, N, alpha)


@pytest.mark.parametrize("P, N", [(1, 1), (3, 5), (6, 4), (8, 8)])
def test_weights_sum_to_one_and_mean_auc_is_k_over_k_plus_one(P, N):
    labels, w = weights(P, N)
    assert sum(w) == 1
    u = [sum(int(row[i]) * int(row[j] == 0) for i in range(P + N) for j in range(i + 1, P + N)) for row in labels]
    assert sum(wi * ui for wi, ui in zip(w, u)) / (P * N) == K / (K + 1)
    # the programme's law of U is the enumeration's
    pmf = exact_power.auc_power_pmf(P, N, float(K))
    exact = np.zeros(P * N + 1, dtype=object)
    for wi, ui in zip(w, u):
        exact[ui] += wi
    assert np.allclose(pmf, exact.astype(float), rtol=1e-12, atol=1e-16)


def test_swapping_the_classes_orients_the_auc_programme():
    # P > N runs the (N, P, 1/k) walk reversed; P <= N the direct one: both against enumeration
    for P, N in [(5, 2), (2, 5)]:
        labels, w = weights(P, N)
        u = get_metric("auc").reference_scores(labels, P, N) * P * N
        exact = np.zeros(P * N + 1)
        for wi, ui in zip(w, u):
            exact[int(round(ui))] += float(wi)
        assert np.allclose(exact_power.auc_power_pmf(P, N, float(K)), exact, rtol=1e-12, atol=1e-16)


METRICS_AT_K1 = ("best_accuracy", "best_balanced_accuracy", "best_f1", "best_mcc", "tp_at_5", "auc",
                 "average_precision")


@settings(max_examples=40, deadline=None)
@given(metric=st.sampled_from(METRICS_AT_K1), P=st.integers(1, 9), N=st.integers(1, 9),
       C=st.sampled_from([1, 2, 10, 100]), alpha=st.sampled_from([0.01, 0.05, 0.2]))
def test_k_equal_one_gives_the_exact_size_of_the_test(metric, P, N, C, alpha):
    tail = float(upper_tail_probability(C, alpha))
    event = get_metric(metric).lehmann_event(P, N, tail)
    null = tabulated_null(metric, P, N)
    index = int(np.searchsorted(null.values, event.critical_value + 1e-9))  # the first value above m*
    size = null.tail_ge_at(index)
    assert event.probability(1.0) == pytest.approx(size, rel=1e-12, abs=1e-15)
    assert event.probability(1.0) <= tail * (1 + 1e-12)  # the level holds exactly


def test_power_rises_with_k_and_reaches_one():
    event = get_metric("best_f1").lehmann_event(30, 40, float(upper_tail_probability(10, 0.05)))
    powers = [event.probability(k) for k in (1.0, 1.5, 2.0, 4.0, 50.0)]
    assert powers == sorted(powers) and powers[-1] > 0.999


@pytest.mark.slow
@pytest.mark.parametrize("metric", ["auc", "best_f1", "best_mcc", "tp_at_10", "best_balanced_accuracy"])
def test_simulated_scores_agree_within_four_standard_errors(metric):
    P, N, C, alpha, k, R = 30, 50, 10, 0.05, 2.0, 20_000
    rng = np.random.default_rng(20261128)
    scores = np.concatenate([rng.random((R, P)) ** (1.0 / k), rng.random((R, N))], axis=1)
    order = np.argsort(-scores, axis=1)
    labels = (order < P).astype(np.uint8)
    values = get_metric(metric).reference_scores(labels, P, N)
    event = get_metric(metric).lehmann_event(P, N, float(upper_tail_probability(C, alpha)))
    power = event.probability(k)
    hits = np.mean(values > event.critical_value + 1e-9)
    se = math.sqrt(power * (1 - power) / R)
    assert abs(hits - power) <= 4 * se, (hits, power, se)


def test_no_exact_power_beyond_the_domains_is_refused_naming_the_cell():
    with pytest.raises(tablegen.TablegenInputError, match="P, N"):
        exact_power.auc_event(20_000, 20_000, 0.05)
    with pytest.raises(tablegen.TablegenInputError, match="P, N"):
        exact_power.average_precision_event(20, 20, 0.05)


def test_the_auc_programme_with_retirement_equals_the_whole_laws_tails():
    from tablegen.compute.kernels.lehmann import auc_pmf, auc_tail

    for P, N, k in [(1, 1, 3.0), (3, 5, 2.0), (6, 4, 0.5), (20, 30, 2.3), (60, 60, 1.3), (30, 7, 4.0)]:
        pmf = auc_pmf(P, N, k)
        for target in sorted({0, 1, P * N // 3, P * N // 2, P * N // 2 + 3, P * N, P * N + 1}):
            upper, lower = auc_tail(P, N, k, target)
            assert upper == pytest.approx(math.fsum(pmf[target:]), rel=1e-12, abs=1e-300)
            assert lower == pytest.approx(math.fsum(pmf[:max(target, 0)]), rel=1e-12, abs=1e-300)
            # P > N runs the swapped walk: the same tail
            assert exact_power.auc_upper_tail(N, P, 1 / k, N * P - target + 1) == pytest.approx(
                math.fsum(pmf[:max(target, 0)]), rel=1e-12, abs=1e-300)


def _scattered_boundary_hit(n_pos, n_neg, k, threshold, stop):
    """The Lehmann boundary walk as first written, each point's mass scattered into its two successors: the
    oracle of the vectorised kernel's gather (the same floats)."""
    if threshold[0] <= 0:
        return 1.0
    last = min(stop, n_pos + n_neg)
    current, low, high, hit = {0: 1.0}, 0, 0, 0.0
    for d in range(last):
        new_low = low if low >= d + 1 - n_neg else low + 1
        new_high = high + 1 if high < n_pos else n_pos
        following = dict.fromkeys(range(new_low, new_high + 1), 0.0)
        for t in range(low, high + 1):
            p, n = k * (n_pos - t), float(n_neg - (d - t))
            share = current[t] / (n + p)
            following[t] = following.get(t, 0.0) + share * n  # t < new_low: f = N, n = 0 (never read)
            if t < n_pos:
                following[t + 1] += share * p
        while new_high >= new_low and new_high >= threshold[d + 1]:
            hit += following[new_high]
            following[new_high] = 0.0
            new_high -= 1
        if new_low > new_high:
            break
        current, low, high = following, new_low, new_high
    return hit


def test_the_vectorised_boundary_walk_gives_the_scattering_walks_floats():
    from tablegen.compute.kernels.lehmann import boundary_hit

    rng = np.random.default_rng(11)
    for _ in range(150):
        P, N = int(rng.integers(0, 30)), int(rng.integers(0, 30))
        k = float(10 ** rng.uniform(-1, 1))
        if rng.random() < 0.5:
            threshold = np.sort(rng.integers(-1, P + 3, P + N + 1))
        else:  # a half-plane, as best accuracy's
            threshold = np.minimum(np.arange(P + N + 1) // 2 + int(rng.integers(0, 5)), P + 5).astype(np.int64)
        stop = int(rng.integers(0, P + N + 1)) if rng.random() < 0.3 else P + N
        assert boundary_hit(P, N, k, threshold, stop) == _scattered_boundary_hit(P, N, k, threshold, stop)
