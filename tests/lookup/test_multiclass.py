"""tablegen.multiclass_test: the exact multi-class accuracy / kappa test from labels, and its bad input."""

from __future__ import annotations

import json
import math
from fractions import Fraction

import numpy as np
import pytest

import tablegen
from tablegen.compute.exact.multiclass import accuracy_null
from tablegen.errors import ResourceLimitError, TablegenInputError


def enumerated_p_value(true_codes, predicted_codes, C):
    """1 - Pr(X < x)**C by permuting the predictions over every distinct arrangement (small n only)."""
    import itertools

    observed = sum(a == b for a, b in zip(true_codes, predicted_codes))
    hits = [sum(a == b for a, b in zip(true_codes, arrangement))
            for arrangement in set(itertools.permutations(predicted_codes))]
    tail = Fraction(sum(h >= observed for h in hits), len(hits))
    return 1 - (1 - tail) ** C


def test_p_value_is_the_permutation_test_by_enumeration():
    labels = ["b", "a", "c", "a", "b", "c", "a", "a"]
    predicted = ["b", "a", "a", "a", "c", "c", "b", "a"]
    for C in (1, 10):
        result = tablegen.multiclass_test(labels, predicted, C=C)
        codes = {"a": 0, "b": 1, "c": 2}
        expected = enumerated_p_value([codes[v] for v in labels], [codes[v] for v in predicted], C)
        assert result.p_value == pytest.approx(float(expected), rel=1e-14)
        assert result.method == "exact" and result.hits == 5 and result.value == 5 / 8
        assert result.classes == ("a", "b", "c")
        assert result.true_counts == (4, 2, 2) and result.predicted_counts == (4, 2, 2)
        assert result.significant == (result.p_value <= 0.05)


def test_a_predicted_class_absent_from_the_labels_is_never_a_hit():
    labels = [0, 0, 0, 1, 1, 1, 2, 2]
    predicted = [0, 0, 9, 1, 1, 9, 2, 0]
    result = tablegen.multiclass_test(labels, predicted)
    assert result.classes == (0, 1, 2, 9)
    assert result.true_counts == (3, 3, 2, 0) and result.predicted_counts == (3, 2, 1, 2)
    assert result.hits == 5
    expected = enumerated_p_value(labels, predicted, 1)
    assert result.p_value == pytest.approx(float(expected), rel=1e-14)


def test_kappa_shares_the_p_value_and_maps_the_critical_value():
    rng = np.random.default_rng(5)
    labels = rng.integers(0, 4, 200)
    predicted = np.where(rng.random(200) < 0.4, labels, rng.integers(0, 4, 200))
    accuracy = tablegen.multiclass_test(labels, predicted, C=20)
    kappa = tablegen.multiclass_test(labels, predicted, metric="Kappa", C=20)
    assert kappa.metric == "kappa" and kappa.p_value == accuracy.p_value
    assert kappa.significant == accuracy.significant and kappa.critical_hits == accuracy.critical_hits
    n, pe = 200, accuracy.expected_value
    assert kappa.value == pytest.approx((accuracy.value - pe) / (1 - pe), rel=1e-12)
    assert kappa.critical_value == pytest.approx((accuracy.critical_value - pe) / (1 - pe), rel=1e-12)
    assert accuracy.critical_value == accuracy.critical_hits / n
    # the critical value is the smallest significant one: one hit fewer is not significant
    null = accuracy_null(accuracy.true_counts, accuracy.predicted_counts)
    assert null.p_value(accuracy.critical_hits, 20)[0] <= 0.05 < null.p_value(accuracy.critical_hits - 1, 20)[0]


def test_labels_of_any_hashable_type_give_the_same_answer():
    codes = [0, 1, 2, 0, 1, 2, 0, 0, 1, 2, 2, 1]
    guesses = [0, 1, 1, 0, 2, 2, 0, 1, 1, 2, 0, 1]
    names = {0: "cat", 1: ("dog", 2), 2: None.__class__.__name__}
    as_ints = tablegen.multiclass_test(codes, guesses, C=3)
    as_mixed = tablegen.multiclass_test([names[c] for c in codes], [names[c] for c in guesses], C=3)
    as_array = tablegen.multiclass_test(np.array(codes), np.array(guesses), C=3)
    for other in (as_mixed, as_array):
        assert (other.p_value, other.hits, other.critical_hits) == (as_ints.p_value, as_ints.hits,
                                                                    as_ints.critical_hits)
    assert len(as_mixed.classes) == 3


def test_sentence_and_dict():
    result = tablegen.multiclass_test(["x", "y", "z"] * 30, ["x", "y", "z"] * 20 + ["y", "z", "x"] * 10, C=100)
    text = result.sentence()
    assert "the best of 100 random classifiers" in text and "(exact)" in text and "is significant" in text
    record = json.loads(json.dumps(result.to_dict(), allow_nan=False))
    assert record["hits"] == 60 and record["classes"] == ["x", "y", "z"] and record["p_bound"] == ""


def test_a_tail_below_the_floor_is_reported_as_a_bound():
    labels = np.repeat(np.arange(6), 100)
    result = tablegen.multiclass_test(labels, labels)  # 600 hits: Pr = 1 / multinomial(600; 100 x 6) ~ 1e-467
    assert result.p_bounded and 0 < result.p_value <= 1e-300
    assert "p < " in result.sentence() and result.to_dict()["p_bound"] == "<"


def test_no_attainable_value_significant():
    result = tablegen.multiclass_test([0, 1, 1], [0, 1, 1], C=1, alpha=0.05)
    assert result.critical_value is None and not result.significant
    assert "no attainable value is significant" in result.sentence()


@pytest.mark.parametrize("labels, predicted, message", [
    ([1, 1, 1, 1], [1, 2, 1, 2], r"labels has one class only \(1\)"),
    ([0, 1, 2], [0, 1], "labels and predicted must have the same length"),
    ([0.0, 1.0, float("nan")], [0, 1, 1], r"labels\[2\] is missing \(nan\)"),
    ([0, 1, 1], [0, None, 1], r"predicted\[1\] is missing"),
    (np.array([0.0, 1.0, 1.0]), np.array([0.0, np.nan, 1.0]), r"predicted\[1\] is missing"),
    ([[0], [1]], [0, 1], r"labels\[0\] is not a class label \(unhashable list\)"),
    ([], [], "labels is empty"),
    (np.zeros((2, 2)), [0, 1], "labels must be one-dimensional"),
    ("abc", "abc", "labels must be a sequence of class labels"),
    (5, [1], "labels must be a sequence of class labels"),
])
def test_bad_input_names_the_argument(labels, predicted, message):
    with pytest.raises(TablegenInputError, match=message):
        tablegen.multiclass_test(labels, predicted)


@pytest.mark.parametrize("kwargs, message", [
    ({"metric": "f1"}, "metric must be one of accuracy, kappa, balanced_accuracy, macro_f1"),
    ({"metric": None}, "metric must be one of"),
    ({"C": 0}, "C must be an integer >= 1"),
    ({"alpha": 1.5}, "alpha must be in"),
])
def test_bad_options_name_the_argument(kwargs, message):
    with pytest.raises(TablegenInputError, match=message):
        tablegen.multiclass_test([0, 1, 0, 1], [0, 1, 1, 1], **kwargs)


def test_too_large_for_the_time_limit_refuses_before_computing(monkeypatch):
    """Beyond the exact routine's budget the answer simulates; beyond the simulation's too, it is refused."""
    monkeypatch.setenv("TABLEGEN_TIME_LIMIT", "1")
    labels = np.repeat(np.arange(10), 10_000)
    with pytest.raises(ResourceLimitError, match="Monte Carlo multi-class null at n = 100,000, K = 10, R = 10,000"):
        tablegen.multiclass_test(labels, labels)


def test_p_value_never_above_one_nor_zero():
    rng = np.random.default_rng(11)
    for _ in range(20):
        n = int(rng.integers(4, 60))
        labels, predicted = rng.integers(0, 3, n), rng.integers(0, 4, n)
        if len(set(labels.tolist())) < 2:
            continue
        result = tablegen.multiclass_test(labels, predicted, C=int(rng.integers(1, 50)))
        assert 0 < result.p_value <= 1 and math.isfinite(result.value)
