"""The exact null law of balanced accuracy and macro-F1 (tablegen.compute.exact.multiclass_weighted), checked against
independent computations.

- enumeration of every distinct arrangement of the predicted labels (n <= 10, ten margins), the metrics as exact
  Fractions from their definitions (not from the weights): the same values, the same exact tails, the correctly
  rounded doubles, the best-of-C p-values at C = 1 and 10, the critical values;
- the Fisher-Freeman-Halton law of the whole K x K table (Pr(T) = prod n_k! prod m_k! / (n! prod T_ij!)), summed
  over every table with these margins (n up to 30, K = 3): no rook polynomial;
- the level of the best-of-C verdict summed exactly over the null (C = 1, 10), for equal and for different
  predicted counts;
- equal weights (balanced designs): the programme gives the hits' law, N_j at W = w j;
- K = 2: both metrics are increasing affine functions of TP, so their law is the hypergeometric law of TP at
  k = m_1 (tablegen.compute.exact.closed_form.tp_at_k_null).
"""

from __future__ import annotations

import functools
import itertools
import math
from collections import Counter
from fractions import Fraction

import pytest

from tablegen.compute.exact.closed_form import tp_at_k_null
from tablegen.compute.exact.multiclass import TIE_RTOL, accuracy_bytes, accuracy_seconds, hit_numbers
from tablegen.compute.exact.multiclass_weighted import (
    diagonal_weights,
    equal_weight,
    hits_map,
    weighted_cost,
    weighted_counts,
    weighted_null,
)
from tablegen.compute.stats import p_value_from_tail, upper_tail_probability
from tablegen.errors import TablegenInputError
from tests.compute.test_multiclass_exact import SMALL_MARGINS, arrangements

METRICS = ("balanced_accuracy", "macro_f1")


def exact_metric(metric: str, true_counts, predicted_counts, diagonal) -> Fraction:
    """Balanced accuracy (mean over classes with items of T_kk / n_k) or macro-F1 (mean over all classes of
    2 T_kk / (n_k + m_k)), exactly."""
    if metric == "balanced_accuracy":
        recalls = [Fraction(t, a) for t, a in zip(diagonal, true_counts) if a > 0]
        return sum(recalls) / len(recalls)
    return sum(Fraction(2 * t, a + b) for t, a, b in zip(diagonal, true_counts, predicted_counts)) / len(true_counts)


@functools.cache
def enumerated_metric_law(metric: str, true_counts, predicted_counts) -> tuple[Counter, int]:
    """{metric value: arrangements}, over every distinct arrangement of the predicted labels, and their number
    (cached: read it, do not change it)."""
    truth = [k for k, count in enumerate(true_counts) for _ in range(count)]
    law: Counter = Counter()
    for arrangement in arrangements(predicted_counts):
        diagonal = [0] * len(true_counts)
        for a, b in zip(truth, arrangement):
            if a == b:
                diagonal[a] += 1
        law[exact_metric(metric, true_counts, predicted_counts, diagonal)] += 1
    return law, sum(law.values())


def tail_of(law: Counter, total: int):
    return lambda value: Fraction(sum(c for v, c in law.items() if v >= value), total)


@pytest.mark.parametrize("metric", METRICS)
@pytest.mark.parametrize("true_counts, predicted_counts", SMALL_MARGINS)
def test_enumeration_of_every_arrangement(metric, true_counts, predicted_counts):
    law, total = enumerated_metric_law(metric, true_counts, predicted_counts)
    null = weighted_null(metric, true_counts, predicted_counts)
    assert null.n == sum(true_counts)
    values = [null.weights.value(key) for key in null.keys]
    assert values == sorted(law)  # the attainable values, exactly (ties are equal rationals)
    tail = tail_of(law, total)
    for key, value in zip(null.keys, values):
        assert null.tail_ge_exact(key) == tail(value)
        assert null.tail_ge(key) == float(tail(value))  # correctly rounded
        for C in (1, 10):
            p, bounded = null.p_value(key, C)
            assert not bounded and p == float(p_value_from_tail(float(tail(value)), C))
            assert abs(Fraction(p) - (1 - (1 - tail(value)) ** C)) <= 1e-15
    assert null.tail_ge(null.keys[-1] + 1) == 0.0
    mean = sum(v * c for v, c in law.items()) / total
    assert null.expected_value() == mean


@pytest.mark.parametrize("metric", METRICS)
@pytest.mark.parametrize("true_counts, predicted_counts", SMALL_MARGINS)
@pytest.mark.parametrize("C", [1, 10])
@pytest.mark.parametrize("alpha", [0.05, 0.2, 0.5])
def test_level_of_best_of_C_verdict_summed_exactly(metric, true_counts, predicted_counts, C, alpha):
    """Pr(the best of C independent random classifiers reaches the critical value) = 1 - (1 - s(w*))**C <= alpha,
    and one attainable value lower would exceed it."""
    law, total = enumerated_metric_law(metric, true_counts, predicted_counts)
    tail = tail_of(law, total)
    null = weighted_null(metric, true_counts, predicted_counts)
    key = null.critical_key(C, alpha)
    t = Fraction(float(upper_tail_probability(C, alpha))) * (1 + Fraction(TIE_RTOL))
    values = sorted(law)
    if key is None:
        assert all(tail(v) > t for v in values)
        return
    critical = null.weights.value(key)
    assert tail(critical) <= t
    assert float(1 - (1 - tail(critical)) ** C) <= alpha * (1 + 1e-11)
    below = [v for v in values if v < critical]
    assert not below or tail(below[-1]) > t


@pytest.mark.parametrize("metric", METRICS)
@pytest.mark.parametrize("alpha", [0.1, 0.3])
def test_level_when_the_classifiers_have_different_predicted_counts(metric, alpha):
    """Two independent random classifiers with predicted counts (3, 3, 3) and (6, 2, 1), the winner (smallest
    single p-value from its own exact law) judged by 1 - (1 - s_min)**2 <= alpha: the level, summed exactly over
    both enumerated laws, is <= alpha."""
    true_counts = (4, 3, 2)
    margins = [(3, 3, 3), (6, 2, 1)]
    laws = [enumerated_metric_law(metric, true_counts, m) for m in margins]
    nulls = [weighted_null(metric, true_counts, m) for m in margins]

    def single_p(null, value):
        return null.tail_ge_exact(math.ceil(value / null.weights.scale))  # the keys are integers: W >= value

    level = Fraction(0)
    for (v_1, c_1), (v_2, c_2) in itertools.product(laws[0][0].items(), laws[1][0].items()):
        s_min = min(single_p(nulls[0], v_1), single_p(nulls[1], v_2))
        if float(p_value_from_tail(float(s_min), 2)) <= alpha:
            level += Fraction(c_1, laws[0][1]) * Fraction(c_2, laws[1][1])
    assert 0 < level <= alpha


def table_law(metric: str, true_counts, predicted_counts) -> dict[Fraction, Fraction]:
    """The law of the metric from the Fisher-Freeman-Halton law of the K x K table (K = 3), every table with
    these margins: Pr(T) = prod n_k! prod m_k! / (n! prod T_ij!)."""
    n = sum(true_counts)
    numerator = math.prod(math.factorial(a) for a in (*true_counts, *predicted_counts))
    law: Counter = Counter()
    a, b, c = true_counts
    for t00, t01 in itertools.product(range(a + 1), repeat=2):
        t02 = a - t00 - t01
        if t02 < 0:
            continue
        for t10, t11 in itertools.product(range(b + 1), repeat=2):
            t12 = b - t10 - t11
            t20, t21, t22 = (predicted_counts[0] - t00 - t10, predicted_counts[1] - t01 - t11,
                             predicted_counts[2] - t02 - t12)
            if t12 < 0 or min(t20, t21, t22) < 0 or t20 + t21 + t22 != c:
                continue
            cells = (t00, t01, t02, t10, t11, t12, t20, t21, t22)
            weight = Fraction(numerator, math.factorial(n) * math.prod(math.factorial(x) for x in cells))
            law[exact_metric(metric, true_counts, predicted_counts, (t00, t11, t22))] += weight
    return law


@pytest.mark.parametrize("metric", METRICS)
@pytest.mark.parametrize("true_counts, predicted_counts", [
    ((5, 7, 9), (8, 6, 7)), ((10, 4, 6), (3, 12, 5)), ((12, 9, 0), (7, 7, 7)), ((3, 11, 16), (10, 10, 10))])
def test_the_law_of_the_whole_table_agrees(metric, true_counts, predicted_counts):
    law = table_law(metric, true_counts, predicted_counts)
    assert sum(law.values()) == 1
    null = weighted_null(metric, true_counts, predicted_counts)
    assert [null.weights.value(key) for key in null.keys] == sorted(law)
    running = Fraction(0)
    for key in reversed(null.keys):
        running += law[null.weights.value(key)]
        assert null.tail_ge_exact(key) == running


@pytest.mark.parametrize("metric, true_counts, predicted_counts", [
    ("balanced_accuracy", (5, 5, 5), (3, 7, 5)), ("balanced_accuracy", (4, 4, 4, 4), (2, 6, 4, 4)),
    ("macro_f1", (5, 5, 5), (5, 5, 5)), ("macro_f1", (6, 4, 5), (4, 6, 5)),
    ("balanced_accuracy", (6, 6, 0), (4, 6, 2))])
def test_equal_weights_collapse_to_the_hits_law(metric, true_counts, predicted_counts):
    """Every class that can have a hit has the same weight w: W = w X, and the programme (run anyway) gives N_j at
    W = w j, the hits' law."""
    weights = diagonal_weights(metric, true_counts, predicted_counts)
    w = equal_weight(weights)
    assert w is not None and w > 0
    hits = hit_numbers(true_counts, predicted_counts)
    assert weighted_counts(true_counts, predicted_counts, weights) == {w * j: c for j, c in enumerate(hits) if c}
    assert hits_map(weights, true_counts, predicted_counts) == (w, 0)
    # the lookups use the hits' law here, and the cost is its cost
    assert weighted_cost(true_counts, predicted_counts, weights) == (accuracy_seconds(true_counts, predicted_counts),
                                                                     accuracy_bytes(true_counts, predicted_counts))


@pytest.mark.parametrize("metric", METRICS)
@pytest.mark.parametrize("n_1, n_2, m_1", [(5, 7, 4), (30, 20, 25), (60, 40, 100), (1, 50, 50), (13, 29, 17)])
def test_two_classes_are_the_hypergeometric_law_of_tp_at_k(metric, n_1, n_2, m_1):
    """K = 2: T_11 = TP and T_22 = n_2 - m_1 + TP, so both metrics increase affinely in TP, whose law is the
    hypergeometric of tp_at_k (P = n_1, N = n_2, k = m_1) in the binary tables; every tail agrees."""
    null = weighted_null(metric, [n_1, n_2], [m_1, n_1 + n_2 - m_1])
    tp = tp_at_k_null(n_1, n_2, m_1)
    keys = [null.weights.key([int(v), n_2 - m_1 + int(v)]) for v in tp.values]
    assert keys == sorted(keys) and len(set(keys)) == len(keys)
    attainable = [key for key, tail in zip(keys, tp.tail_ge) if tail > 0]
    assert tuple(k for k in attainable if null.tail_ge(k) > 0) == null.keys
    for key, tail in zip(keys, tp.tail_ge):
        assert null.tail_ge(key) == pytest.approx(float(tail), rel=1e-12, abs=1e-300)
    a, b = hits_map(null.weights, [n_1, n_2], [m_1, n_1 + n_2 - m_1])  # W = a X + b, X = 2 TP + n_2 - m_1
    assert a > 0 and all(key == a * (2 * int(v) + n_2 - m_1) + b for key, v in zip(keys, tp.values))


def test_weights_are_the_metrics_definitions():
    weights = diagonal_weights("balanced_accuracy", [2, 4, 0], [3, 2, 1])  # the class only predicted is left out
    assert weights.weights == (2, 1, 0) and weights.value(weights.key([1, 2, 0])) == Fraction(1, 2)
    f1 = diagonal_weights("macro_f1", [2, 4, 0], [3, 2, 1])  # ... and scores 0 in macro-F1, over 3 classes
    assert f1.value(f1.key([2, 2, 0])) == (Fraction(4, 5) + Fraction(4, 6)) / 3
    nothing = diagonal_weights("macro_f1", [2, 2, 0], [0, 0, 4])  # no hit is possible: W = 0
    assert nothing.weights == (0, 0, 0)
    assert weighted_null("macro_f1", [2, 2, 0], [0, 0, 4]).keys == (0,)


def test_the_cost_estimate_bounds_the_states_and_grows():
    small = ([10, 20, 30], [20, 20, 20])
    large = ([97, 101, 103, 107, 109], [103, 103, 103, 104, 104])  # coprime sizes: W ranges over about 10^10
    small_seconds, small_bytes = weighted_cost(*small, diagonal_weights("balanced_accuracy", *small))
    large_seconds, large_bytes = weighted_cost(*large, diagonal_weights("balanced_accuracy", *large))
    assert small_seconds < 1 < 1e6 < large_seconds and small_bytes < 1e8 < large_bytes
    three = ([10, 20, 30, 0], [20, 20, 10, 10])  # not a function of the hits: a class only predicted breaks K = 2
    assert hits_map(diagonal_weights("balanced_accuracy", *three), *three) is None


@pytest.mark.parametrize("metric, true_counts, predicted_counts, message", [
    ("accuracy", [2, 2], [2, 2], "metric must be one of balanced_accuracy, macro_f1"),
    ("macro_f1", [2, 2], [2, 3], "same total"),
    ("balanced_accuracy", [4, 0], [2, 2], "one class with items only"),
])
def test_bad_input_names_the_argument(metric, true_counts, predicted_counts, message):
    with pytest.raises(TablegenInputError, match=message):
        weighted_null(metric, true_counts, predicted_counts)
