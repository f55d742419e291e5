"""multiclass_test answers balanced accuracy and macro-F1 exactly where the weighted rook programme fits.

Oracles: the enumeration of every distinct arrangement of the predicted labels (the metrics as exact Fractions
from their definitions), the hits' law in balanced designs (where both metrics equal accuracy), and the Monte
Carlo path at a moderate n (within 4 standard errors).
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest

import tablegen
from tablegen.compute.exact.closed_form import tp_at_k_null
from tablegen.compute.exact.multiclass_weighted import diagonal_weights, weighted_null
from tablegen.compute.stats import p_value_from_tail, upper_tail_probability
from tests.lookup.test_multiclass_monte_carlo import CASES, _enumerated_tail, _metric

METRICS = ("balanced_accuracy", "macro_f1")


@pytest.mark.parametrize("metric", METRICS)
@pytest.mark.parametrize(("labels", "predicted"), CASES)
def test_exact_by_default_and_equal_to_the_enumerated_law(metric, labels, predicted):
    """The regression: these answered by Monte Carlo only; now exactly, the p-value the correctly rounded best-of-C
    p-value of the enumerated tail, the critical value the smallest enumerated value significant."""
    tail, x = _enumerated_tail(metric, labels, predicted)
    arrangements = set(itertools.permutations(predicted))
    values = sorted({_metric(metric, labels, list(a)) for a in arrangements})
    for C in (1, 10):
        result = tablegen.multiclass_test(labels, predicted, metric=metric, C=C)
        assert result.method == "exact" and result.replicates is None and result.p_interval is None
        assert result.p_value == float(p_value_from_tail(float(tail), C))
        t = Fraction(float(upper_tail_probability(C, 0.05))) * (1 + Fraction(10) ** -12)
        significant = {v for v in values
                       if Fraction(sum(1 for a in arrangements if _metric(metric, labels, list(a)) >= v),
                                   len(arrangements)) <= t}
        # the critical value c: an attainable value is significant iff it reaches c (the hits' law, used where the
        # weights are equal, says the smallest significant number of hits, attainable or not)
        if result.critical_value is None:
            assert not significant
        else:
            c = Fraction(result.critical_value)
            assert all((v in significant) == (v >= c - Fraction(1, 10**12)) for v in values)
        assert result.significant == (x in significant) == (result.p_value <= 0.05)
        simulated = tablegen.multiclass_test(labels, predicted, metric=metric, C=C, R=100, method="monte carlo")
        assert result.value == simulated.value  # the kernel's arithmetic, bit for bit
        assert abs(Fraction(result.value) - x) <= Fraction(1, 10**14)
        assert ("(exact)" in result.sentence()) and ("Monte Carlo" not in result.sentence())


@pytest.mark.parametrize("metric", METRICS)
def test_balanced_designs_use_the_hits_law(metric):
    """All n_k equal (and m_k equal, for macro-F1: n_k + m_k = 2n / K): both metrics equal accuracy X / n."""
    rng = np.random.default_rng(41)
    labels = np.repeat(np.arange(5), 60)
    predicted = labels.copy()
    predicted[25:] = rng.permutation(labels[25:])  # the first 25 (all class 0) right: some skill, same counts
    result = tablegen.multiclass_test(labels, predicted, metric=metric, C=10)
    accuracy = tablegen.multiclass_test(labels, predicted, metric="accuracy", C=10)
    assert result.method == accuracy.method == "exact"
    assert result.p_value == accuracy.p_value and result.critical_value == accuracy.critical_value
    assert result.value == pytest.approx(accuracy.value, rel=1e-15) and result.significant == accuracy.significant


@pytest.mark.parametrize("metric", METRICS)
def test_exact_and_monte_carlo_agree_within_four_standard_errors(metric):
    rng = np.random.default_rng(2026)
    labels = np.repeat(np.arange(3), [20, 30, 40])
    predicted = labels.copy()
    shuffled = rng.choice(90, 70, replace=False)  # the other 20 right: some skill, the same counts
    predicted[shuffled] = rng.permutation(predicted[shuffled])
    exact = tablegen.multiclass_test(labels, predicted, metric=metric, C=1)
    R = 20_000
    simulated = tablegen.multiclass_test(labels, predicted, metric=metric, C=1, R=R, method="monte carlo")
    assert exact.method == "exact" and simulated.method == "monte carlo"
    null = weighted_null(metric, exact.true_counts, exact.predicted_counts)
    diagonal = [int(np.sum((labels == k) & (predicted == k))) for k in range(3)]
    tail = null.tail_ge(null.weights.key(diagonal))
    assert exact.p_value == tail
    q = (simulated.reaching + 1) / (R + 1)
    assert abs(q - tail) <= 4 * (math.sqrt(tail * (1 - tail) / R) + 1 / R), (q, tail)
    assert exact.expected_value == simulated.expected_value


def test_beyond_the_time_limit_the_weighted_metrics_simulate_and_say_so(monkeypatch):
    labels = np.repeat(np.arange(3), [30, 40, 50])
    predicted = np.roll(labels, 7)
    assert tablegen.multiclass_test(labels, predicted, metric="macro_f1").method == "exact"
    monkeypatch.setenv("TABLEGEN_TIME_LIMIT", "1e-3")  # the programme: about 0.5 s estimated here
    result = tablegen.multiclass_test(labels, predicted, metric="macro_f1", R=500)
    assert result.method == "monte carlo" and result.replicates == 500 and "Monte Carlo, R = 500" in result.sentence()


def test_beyond_the_memory_limit_the_weighted_metrics_simulate(monkeypatch):
    labels = np.repeat(np.arange(3), [30, 40, 50])
    predicted = np.roll(labels, 7)
    monkeypatch.setenv("TABLEGEN_MEMORY_LIMIT", "1000000")  # 1 MB: the programme holds about 10^8 bytes here
    assert tablegen.multiclass_test(labels, predicted, metric="balanced_accuracy", R=300).method == "monte carlo"


def test_ties_are_exact_rationals():
    """Two diagonals with the same balanced accuracy as rationals reach each other (no float tolerance needed):
    classes of 2 and 4 items, W = 2 T_0 + T_1 + ...: T = (1, 0) and (0, 2) tie."""
    weights = diagonal_weights("balanced_accuracy", [2, 4, 3], [3, 3, 3])
    assert weights.key([1, 0, 0]) == weights.key([0, 2, 0])
    labels = [0, 0, 1, 1, 1, 1, 2, 2, 2]
    predicted = [0, 1, 2, 2, 0, 0, 1, 1, 2]
    result = tablegen.multiclass_test(labels, predicted, metric="balanced_accuracy")
    tail, _ = _enumerated_tail("balanced_accuracy", labels, predicted)
    assert result.method == "exact" and result.p_value == float(tail)


@pytest.mark.parametrize("metric", METRICS)
def test_two_classes_use_the_hits_law_and_a_reachable_critical_value(metric):
    """K = 2: W is increasing and affine in the hits (X = 2 TP + n_2 - m_1), so the hits' law answers, exactly, at
    any size the hits' law affords (the programme would cost about 45 s at 300/200 items); the critical value is
    an attainable value (X takes every other integer), the smallest significant one."""
    labels = np.repeat([0, 1], [300, 200])
    predicted = np.repeat([0, 1, 0, 1], [170, 130, 80, 120])  # TP = 170, m_1 = 250
    result = tablegen.multiclass_test(labels, predicted, metric=metric, C=10)
    assert result.method == "exact"
    tp = tp_at_k_null(300, 200, 250)
    t = float(upper_tail_probability(10, 0.05)) * (1 + 1e-12)
    assert result.p_value == pytest.approx(float(p_value_from_tail(tp.tail_ge_at(170 - int(tp.values[0])), 10)),
                                           rel=1e-12)
    weights = diagonal_weights(metric, [300, 200], [250, 250])
    values = [float(weights.value(weights.key([int(v), int(v) - 50]))) for v in tp.values]
    significant = [v for v, tail in zip(values, tp.tail_ge) if tail <= t]
    assert result.critical_value == pytest.approx(significant[0], rel=1e-15)
    assert result.significant == (result.value >= result.critical_value)
    small = tablegen.multiclass_test([0, 0, 0, 1, 1], [0, 1, 1, 1, 0], metric=metric)
    tail, _ = _enumerated_tail(metric, [0, 0, 0, 1, 1], [0, 1, 1, 1, 0])
    assert small.method == "exact" and small.p_value == float(tail)


def test_auto_simulates_where_the_exact_law_is_dear_and_exact_forces_it(monkeypatch):
    """method="auto" computes the exact law only where it is quick (AUTO_EXACT_SECONDS) or cheaper than simulating;
    method="exact" computes it all the same, and refuses it beyond the time limit naming method."""
    from tablegen.compute.limits import ResourceLimitError
    from tablegen.lookup import multiclass

    labels = [0] * 10 + [1] * 12 + [2] * 14
    predicted = [0] * 6 + [1] * 4 + [1] * 8 + [2] * 4 + [2] * 10 + [0] * 4
    quick = tablegen.multiclass_test(labels, predicted, metric="balanced_accuracy", C=5)
    assert quick.method == "exact"
    monkeypatch.setattr(multiclass, "exact_cost", lambda *args: (1000.0, 1e6))  # dearer than 10 s and than simulating
    dear = tablegen.multiclass_test(labels, predicted, metric="balanced_accuracy", C=5, R=2000)
    assert dear.method == "monte carlo" and dear.replicates == 2000
    forced = tablegen.multiclass_test(labels, predicted, metric="balanced_accuracy", C=5, method="exact")
    assert forced.method == "exact" and forced.p_value == quick.p_value
    monkeypatch.setenv("TABLEGEN_TIME_LIMIT", "100")
    with pytest.raises(ResourceLimitError, match=r"method='auto'"):
        tablegen.multiclass_test(labels, predicted, metric="balanced_accuracy", C=5, method="exact")
    with pytest.raises(tablegen.TablegenInputError, match=r"\bmethod\b"):
        tablegen.multiclass_test(labels, predicted, method="exactly")
