"""multiclass_test by Monte Carlo: balanced accuracy and macro-F1 (method="monte carlo", or beyond the exact budget),
and accuracy/kappa beyond the exact budget.

The oracle at tiny n is the enumeration of every distinct arrangement of the predicted labels (each equally
likely under the permutation null), with the metrics as exact Fractions from their definitions; at moderate n
the exact rook-polynomial law of the hits (:mod:`tablegen.compute.exact.multiclass`).
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest

import tablegen
from tablegen.compute.exact.multiclass import accuracy_null
from tablegen.errors import ResourceLimitError, TablegenInputError

#: (labels, predicted) at n <= 8: several margins, a class only predicted, a class never predicted.
CASES = [
    ([0, 0, 1, 1, 2, 2], [0, 1, 1, 2, 2, 0]),
    ([0, 0, 1, 1, 2, 2, 2, 2], [0, 0, 1, 2, 2, 2, 2, 1]),
    ([0, 0, 0, 1, 1, 2, 2, 3], [0, 0, 1, 1, 2, 2, 3, 3]),
    (["a", "a", "a", "a", "b", "b", "b"], ["a", "a", "c", "c", "b", "b", "a"]),  # "c" only predicted
    ([0, 1, 1, 2, 2, 2, 2, 2], [1, 1, 1, 2, 2, 2, 2, 1]),  # class 0 never predicted
]
R = 20_000
#: Balanced accuracy and macro-F1 are exact where the weighted rook programme fits: these tests ask for Monte Carlo.
MC = "monte carlo"


def _metric(metric, labels, predicted):
    classes = sorted(set(labels) | set(predicted), key=str)
    tp = {k: sum(1 for t, p in zip(labels, predicted) if t == p == k) for k in classes}
    n_k = {k: labels.count(k) for k in classes}
    m_k = {k: predicted.count(k) for k in classes}
    if metric == "balanced_accuracy":
        with_items = [k for k in classes if n_k[k]]
        return sum(Fraction(tp[k], n_k[k]) for k in with_items) / len(with_items)
    return sum(Fraction(2 * tp[k], n_k[k] + m_k[k]) for k in classes) / len(classes)


def _enumerated_tail(metric, labels, predicted):
    """Pr(X >= x) over every distinct arrangement of the predicted labels, exactly."""
    x = _metric(metric, labels, predicted)
    arrangements = set(itertools.permutations(predicted))
    return Fraction(sum(1 for a in arrangements if _metric(metric, labels, list(a)) >= x), len(arrangements)), x


@pytest.mark.parametrize("metric", ["balanced_accuracy", "macro_f1"])
@pytest.mark.parametrize(("labels", "predicted"), CASES)
def test_tail_and_best_of_C_p_value_agree_with_the_enumerated_law(metric, labels, predicted):
    tail, x = _enumerated_tail(metric, labels, predicted)
    for C in (1, 10):
        result = tablegen.multiclass_test(labels, predicted, metric=metric, C=C, R=R, method="monte carlo")
        assert result.method == "monte carlo" and result.replicates == R
        assert abs(Fraction(result.value) - x) <= Fraction(1, 10**14)
        q = (result.reaching + 1) / (R + 1)
        se = math.sqrt(float(tail) * (1 - float(tail)) / R) + 1 / R
        assert abs(q - float(tail)) <= 4 * se, (q, float(tail))
        assert result.p_value == pytest.approx(1 - (1 - q) ** C, rel=1e-12)
        low, high = result.p_interval
        assert low <= result.p_value <= high
        assert result.significant == (result.p_value <= result.alpha)


@pytest.mark.parametrize("metric", ["balanced_accuracy", "macro_f1"])
def test_expected_value_is_the_enumerated_mean(metric):
    labels, predicted = CASES[3]
    arrangements = set(itertools.permutations(predicted))
    mean = sum(_metric(metric, labels, list(a)) for a in arrangements) / len(arrangements)
    result = tablegen.multiclass_test(labels, predicted, metric=metric, R=100)
    assert result.expected_value == float(mean)


def test_critical_value_is_the_smallest_replicate_value_significant_by_its_p_value():
    rng = np.random.default_rng(5)
    labels = rng.integers(0, 5, 200)
    predicted = np.where(rng.random(200) < 0.3, labels, rng.integers(0, 5, 200))
    result = tablegen.multiclass_test(labels, predicted, metric="macro_f1", C=10, R=5000)
    assert result.critical_value is not None
    again = tablegen.multiclass_test(labels, predicted, metric="macro_f1", C=10, R=5000)
    assert again == result  # the same question, the same replicates
    assert result.significant and result.value >= result.critical_value  # a clearly better-than-chance model
    assert "Monte Carlo, R = 5,000" in result.sentence() and "significant from about" in result.sentence()


def test_accuracy_beyond_the_exact_budget_simulates_within_4_se_of_the_exact_tail(monkeypatch):
    rng = np.random.default_rng(8)
    labels = rng.integers(0, 4, 300)
    predicted = np.where(rng.random(300) < 0.12, labels, rng.integers(0, 4, 300))
    exact = tablegen.multiclass_test(labels, predicted, C=1)
    assert exact.method == "exact"
    import tablegen.lookup.multiclass as module

    monkeypatch.setattr(module, "accuracy_seconds", lambda *counts: 1e9)  # the exact routine over budget
    for metric in ("accuracy", "kappa"):
        simulated = tablegen.multiclass_test(labels, predicted, metric=metric, C=1, R=R)
        assert simulated.method == "monte carlo" and "Monte Carlo" in simulated.sentence()
        assert simulated.hits == exact.hits
        null = accuracy_null(exact.true_counts, exact.predicted_counts)
        tail = null.tail_ge(exact.hits)
        q = (simulated.reaching + 1) / (R + 1)
        assert abs(q - tail) <= 4 * (math.sqrt(tail * (1 - tail) / R) + 1 / R)
        assert abs(simulated.critical_hits - exact.critical_hits) <= 1
    kappa = tablegen.multiclass_test(labels, predicted, metric="kappa", R=R)
    accuracy = tablegen.multiclass_test(labels, predicted, metric="accuracy", R=R)
    assert kappa.p_value == accuracy.p_value and kappa.critical_hits == accuracy.critical_hits


def test_a_large_test_set_beyond_the_time_limit_simulates_and_says_so(monkeypatch):
    monkeypatch.setenv("TABLEGEN_TIME_LIMIT", "5")  # exact: ~38 s estimated at n = 20,000, K = 10 (10^4 s pure Python)
    labels = np.repeat(np.arange(10), 2000)
    predicted = np.roll(labels, 150)
    result = tablegen.multiclass_test(labels, predicted, metric="kappa", C=10, R=500)
    assert result.method == "monte carlo" and result.replicates == 500 and result.p_interval is not None
    assert result.significant and "(Monte Carlo, R = 500" in result.sentence()


def test_replicates_and_seed_are_used():
    labels, predicted = CASES[1]
    first = tablegen.multiclass_test(labels, predicted, metric="balanced_accuracy", R=300, seed=1, method=MC)
    assert first.replicates == 300 and first.seed == 1
    assert first == tablegen.multiclass_test(labels, predicted, metric="balanced_accuracy", R=300, seed=1, method=MC)
    others = {tablegen.multiclass_test(labels, predicted, metric="balanced_accuracy", R=300, seed=s, method=MC).reaching
              for s in range(2, 8)}
    assert len(others | {first.reaching}) > 1
    default = tablegen.multiclass_test(labels, predicted, metric="balanced_accuracy", method=MC)
    assert default.replicates == 10_000 and default.seed == 2005
    many = tablegen.multiclass_test(labels, predicted, metric="balanced_accuracy", C=1000, method=MC)
    assert many.replicates == 194_963


def test_too_few_replicates_for_the_critical_value_says_so():
    labels, predicted = CASES[1]
    result = tablegen.multiclass_test(labels, predicted, metric="macro_f1", C=100, R=50, method=MC)
    assert result.critical_value is None and not result.significant
    assert "no replicate value is significant" in result.sentence()


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"R": 0}, "R must be an integer >= 1"),
    ({"R": 1.5}, "R must be an integer"),
    ({"R": 2**53 + 1}, "R must be at most 2"),
    ({"seed": -1}, "seed must be an integer >= 0"),
    ({"seed": 2**64}, "seed must be below 2"),
    ({"metric": "micro_f1"}, "metric must be one of accuracy, kappa, balanced_accuracy, macro_f1"),
])
def test_bad_options_name_the_argument(kwargs, message):
    with pytest.raises(TablegenInputError, match=message):
        tablegen.multiclass_test([0, 1, 0, 1], [0, 1, 1, 1], **{"metric": "macro_f1", **kwargs})


def test_monte_carlo_over_the_time_limit_refuses_naming_R(monkeypatch):
    monkeypatch.setenv("TABLEGEN_TIME_LIMIT", "1e-3")
    pattern = r"Monte Carlo multi-class null at n = 8, K = 3, R = 1,000,000 .*use fewer replicates \(R\)"
    with pytest.raises(ResourceLimitError, match=pattern):
        tablegen.multiclass_test(*CASES[1], metric="macro_f1", R=1_000_000, method=MC)


def test_the_answer_does_not_depend_on_the_kernel_blocks(monkeypatch):
    import tablegen.lookup.multiclass as module

    labels, predicted = CASES[2]
    whole = tablegen.multiclass_test(labels, predicted, metric="balanced_accuracy", C=3, R=1000, method=MC)
    monkeypatch.setattr(module, "_BLOCK", 97)  # eleven kernel calls, the last one short
    assert tablegen.multiclass_test(labels, predicted, metric="balanced_accuracy", C=3, R=1000, method=MC) == whole


@pytest.mark.parametrize(("labels", "predicted", "message"), [
    ([1, 1, 1, 1], [1, 2, 1, 2], r"labels has one class only \(1\)"),
    ([0, 1, 2], [0, 1], "labels and predicted must have the same length"),
    ([0, 1, 1], [0, float("nan"), 1], r"predicted\[1\] is missing"),
])
def test_bad_labels_name_the_argument_for_the_simulated_metrics(labels, predicted, message):
    for metric in ("balanced_accuracy", "macro_f1"):
        with pytest.raises(TablegenInputError, match=message):
            tablegen.multiclass_test(labels, predicted, metric=metric)


def test_a_verdict_the_replicates_do_not_settle_says_so():
    labels, predicted = CASES[1]  # Pr(balanced accuracy >= 0.75) is near 0.05
    result = tablegen.multiclass_test(labels, predicted, metric="balanced_accuracy", R=200, method=MC)
    low, high = result.p_interval
    assert low <= 0.05 < high
    assert "straddles alpha: more replicates (R) would settle the verdict" in result.sentence()
    settled = tablegen.multiclass_test(labels, predicted, metric="balanced_accuracy", alpha=0.5, R=2000, method=MC)
    assert "straddles" not in settled.sentence()
