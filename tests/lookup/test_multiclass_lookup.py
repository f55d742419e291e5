"""critical_value / p_value with K and n_per_class: exact answers for balanced K-class designs, checked against
enumeration of every distinct arrangement, the hit numbers of the rook polynomial and multiclass_test; the proof
that balanced accuracy and macro-F1 equal accuracy there; and bad input."""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest

import tablegen
from tablegen.compute.exact.balanced_multiclass import attainable_hits_below, hits_from_value, value_from_hits
from tablegen.compute.exact.multiclass import hit_numbers, kappa_from_hits
from tablegen.compute.stats import upper_tail_probability
from tablegen.errors import ResourceLimitError, TablegenInputError


def by_definition(true, predicted, K):
    """(accuracy, balanced accuracy, macro-F1) as exact Fractions, from the textbook definitions
    (recall TP/n_k, precision TP/m_k, F1 = 2PR/(P+R), 0 where TP = 0)."""
    n = len(true)
    tp = [sum(1 for a, b in zip(true, predicted) if a == b == k) for k in range(K)]
    n_k = [true.count(k) for k in range(K)]
    m_k = [predicted.count(k) for k in range(K)]
    recall = [Fraction(tp[k], n_k[k]) for k in range(K)]
    precision = [Fraction(tp[k], m_k[k]) for k in range(K)]
    f1 = [2 * p * r / (p + r) if tp[k] else Fraction(0) for k, (p, r) in enumerate(zip(precision, recall))]
    return Fraction(sum(tp), n), sum(recall) / K, sum(f1) / K


def arrangements(K, n_per_class):
    true = tuple(k for k in range(K) for _ in range(n_per_class))
    return true, sorted(set(itertools.permutations(true)))


@pytest.mark.parametrize("K, n_per_class", [(2, 3), (3, 2), (4, 2), (3, 3)])
def test_balanced_accuracy_and_macro_f1_equal_accuracy_on_every_arrangement(K, n_per_class):
    """The proof, checked: with n_k = m_k = n_per_class, recall_k = F1_k = TP_k / n_per_class, so both means are
    sum_k TP_k / n = accuracy, for every distinct arrangement of the predicted labels."""
    true, every = arrangements(K, n_per_class)
    for predicted in every:
        accuracy, balanced, macro_f1 = by_definition(list(true), list(predicted), K)
        assert balanced == accuracy and macro_f1 == accuracy


@pytest.mark.parametrize("K, n_per_class", [(2, 3), (3, 2), (4, 2), (3, 3)])
@pytest.mark.parametrize("C", [1, 10])
@pytest.mark.parametrize("alpha", [0.05, 0.2])
def test_critical_values_and_p_values_equal_enumeration(K, n_per_class, C, alpha):
    """Every metric's critical value (the largest attainable value whose best-of-C p-value is above alpha, the
    value to exceed) and p-value, against the law of each metric counted over every distinct arrangement."""
    true, every = arrangements(K, n_per_class)
    laws = {metric: [] for metric in ("accuracy", "balanced_accuracy", "macro_f1", "kappa")}
    for predicted in every:
        accuracy, balanced, macro_f1 = by_definition(list(true), list(predicted), K)
        kappa = (accuracy - Fraction(1, K)) / (1 - Fraction(1, K))
        for metric, value in zip(laws, (accuracy, balanced, macro_f1, kappa)):
            laws[metric].append(value)
    t = Fraction(float(upper_tail_probability(C, alpha)))
    for metric, values in laws.items():
        support = sorted(set(values))
        tail = {v: Fraction(sum(w >= v for w in values), len(values)) for v in support}
        significant = [v for v in support if tail[v] <= t]
        below = [v for v in support if not significant or v < significant[0]]
        expected = float(below[-1]) if significant else 1.0
        answer = tablegen.critical_value(metric, K=K, n_per_class=n_per_class, C=C, alpha=alpha)
        assert answer.method == "exact" and answer.value == pytest.approx(expected, abs=1e-12)
        for v in support[::2]:
            p = tablegen.p_value(metric, K=K, n_per_class=n_per_class, C=C, score=float(v))
            assert p.value == pytest.approx(float(1 - (1 - tail[v]) ** C), rel=1e-12)


@pytest.mark.parametrize("K", [2, 3, 4, 5])
@pytest.mark.parametrize("n_per_class", [1, 2, 3, 4])
def test_attainable_hits_are_those_the_rook_polynomial_counts(K, n_per_class):
    counts = hit_numbers([n_per_class] * K, [n_per_class] * K)
    n = K * n_per_class
    for x in range(1, n + 2):
        expected = max(j for j in range(min(x, n + 1)) if counts[j] > 0)
        assert attainable_hits_below(x, K, n_per_class) == expected


def predictions_with_hits(K, n_per_class, hits):
    """Balanced labels and balanced predictions with exactly ``hits`` hits (the misses rotated one place)."""
    labels = np.repeat(np.arange(K), n_per_class)
    order = np.argsort(np.tile(np.arange(n_per_class), K), kind="stable")  # classes interleaved
    missed = order[:labels.size - hits]
    predicted = labels.copy()
    predicted[missed] = labels[np.roll(missed, -1)]
    assert int((predicted == labels).sum()) == hits and np.array_equal(np.bincount(predicted), np.bincount(labels))
    return labels, predicted


def test_the_example_of_the_issue_agrees_with_multiclass_test():
    """critical_value('accuracy', K=5, n_per_class=40, C=100, alpha=0.05): 60 of 200 hits are not significant,
    61 are, by multiclass_test's exact routine on real labels; the p-values agree."""
    answer = tablegen.critical_value("accuracy", K=5, n_per_class=40, C=100, alpha=0.05)
    assert answer.value == 0.3 and answer.method == "exact"
    for hits, significant in ((60, False), (61, True)):
        labels, predicted = predictions_with_hits(5, 40, hits)
        test = tablegen.multiclass_test(labels, predicted, C=100, alpha=0.05)
        assert test.significant is significant and (test.value > answer.value) is significant
        p = tablegen.p_value("accuracy", K=5, n_per_class=40, C=100, score=hits / 200)
        assert p.value == test.p_value
    kappa = tablegen.critical_value("kappa", K=5, n_per_class=40, C=100, alpha=0.05)
    assert kappa.value == pytest.approx(kappa_from_hits(60, [40] * 5, [40] * 5), abs=1e-15)
    for metric in ("balanced_accuracy", "macro_f1"):
        assert tablegen.critical_value(metric, K=5, n_per_class=40, C=100, alpha=0.05).value == 0.3


def test_none_significant_answers_the_maximum():
    """K = 2, one item each: Pr(X = 2) = 1/2, so nothing is significant at alpha = 0.05; nothing exceeds 1."""
    assert tablegen.critical_value("accuracy", K=2, n_per_class=1, C=1, alpha=0.05).value == 1.0


def test_value_and_hits_round_trip():
    for metric in ("accuracy", "kappa", "macro_f1"):
        for hits in (0, 7, 9, 15):
            assert hits_from_value(metric, value_from_hits(metric, hits, 3, 5), 3, 5) == hits


@pytest.mark.parametrize("kwargs, named", [
    ({"K": 1, "n_per_class": 40}, "K"),
    ({"K": 5, "n_per_class": 0}, "n_per_class"),
    ({"K": 5.0, "n_per_class": 40}, "K"),
    ({"K": True, "n_per_class": 40}, "K"),
    ({"K": 5}, "n_per_class"),
    ({"n_per_class": 40}, "K"),
    ({"K": 5, "n_per_class": 40, "P": 100}, "P"),
    ({"K": 5, "n_per_class": 40, "N": 100}, "N"),
    ({"K": 5, "n_per_class": 40, "metric": "auc"}, "metric"),
    ({"K": 5, "n_per_class": 40, "method": "simulate"}, "method"),
    ({"K": 5, "n_per_class": 40, "R": 1000}, "R"),
    ({"K": 5, "n_per_class": 40, "C": None}, "C"),
    ({"K": 5, "n_per_class": 40, "alpha": 1.5}, "alpha"),
    ({"K": 5, "n_per_class": 40, "table": 3}, "table"),
    ({"K": 5, "n_per_class": 40, "method": "table"}, "table"),
])
def test_bad_input_is_refused_naming_the_argument(kwargs, named):
    arguments = {"metric": "accuracy", "C": 10, "alpha": 0.05} | kwargs
    with pytest.raises(TablegenInputError, match=rf"\b{named}\b"):
        tablegen.critical_value(**arguments)


@pytest.mark.parametrize("score", [0.995, 0.3001, float("nan"), "0.3", 1.2])
def test_a_score_the_metric_cannot_take_is_refused_naming_score(score):
    with pytest.raises(TablegenInputError, match=r"\bscore\b"):
        tablegen.p_value("accuracy", K=5, n_per_class=40, C=10, score=score)


def test_beyond_the_time_limit_is_refused_with_the_way_out(monkeypatch):
    monkeypatch.setenv("TABLEGEN_TIME_LIMIT", "1")
    with pytest.raises(ResourceLimitError, match="table"):
        tablegen.critical_value("accuracy", K=10, n_per_class=1000, C=10, alpha=0.05)


# -- significance_test with K and n_per_class ------------------------------------------------------------------
@pytest.mark.parametrize("K, n_per_class", [(2, 3), (3, 2), (3, 3)])
@pytest.mark.parametrize("C", [1, 10])
@pytest.mark.parametrize("alpha", [0.05, 0.2])
def test_significance_test_equals_enumeration_at_every_attainable_score(K, n_per_class, C, alpha):
    """The verdict, critical value and p-value of significance_test against the law of the hits counted over every
    distinct arrangement (exact Fractions): significant iff score > the critical value iff p <= alpha."""
    true, every = arrangements(K, n_per_class)
    hits = [sum(a == b for a, b in zip(true, predicted)) for predicted in every]
    n = K * n_per_class
    t = Fraction(float(upper_tail_probability(C, alpha)))
    tail = {x: Fraction(sum(h >= x for h in hits), len(hits)) for x in sorted(set(hits))}
    critical = max((x for x in tail if tail[x] > t), default=n)
    for metric in ("accuracy", "kappa", "macro_f1"):
        for x in tail:
            score = value_from_hits(metric, x, K, n_per_class)
            result = tablegen.significance_test(metric, K=K, n_per_class=n_per_class, C=C, alpha=alpha, score=score)
            assert isinstance(result, tablegen.SignificanceResult) and result.method == "exact" and result.settled
            assert result.critical_value.value == value_from_hits(metric, critical, K, n_per_class)
            assert result.p_value.value == pytest.approx(float(1 - (1 - tail[x]) ** C), rel=1e-12)
            assert result.significant is (x > critical) is (tail[x] <= t), (metric, x)
            assert (result.P, result.N, result.K, result.n_per_class) == (None, None, K, n_per_class)


def test_significance_test_agrees_with_critical_value_and_p_value():
    for score in (0.3, 0.305, 0.32):
        result = tablegen.significance_test("accuracy", K=5, n_per_class=40, C=100, alpha=0.05, score=score)
        cv = tablegen.critical_value("accuracy", K=5, n_per_class=40, C=100, alpha=0.05)
        p = tablegen.p_value("accuracy", K=5, n_per_class=40, C=100, score=score)
        assert result.critical_value == cv and result.p_value == p
        assert result.significant is (score > cv.value) is (p.value <= 0.05)
    assert not tablegen.significance_test("accuracy", K=5, n_per_class=40, C=100, alpha=0.05, score=0.3).significant


def test_significance_test_builds_one_law():
    from tablegen.compute.exact.balanced_multiclass import balanced_null

    balanced_null.cache_clear()
    tablegen.significance_test("kappa", K=4, n_per_class=7, C=10, alpha=0.05, score=value_from_hits("kappa", 14, 4, 7))
    info = balanced_null.cache_info()
    assert (info.misses, info.hits) == (1, 1)


def test_significance_test_sentence_and_dict_name_the_design():
    result = tablegen.significance_test("accuracy", K=5, n_per_class=40, C=100, alpha=0.05, score=0.32)
    assert result.sentence() == ("accuracy = 0.32 is significant at alpha = 0.05: it exceeds 0.3, the critical value "
                                 "for the best of 100 random classifiers at K = 5 classes of 40 items (balanced).")
    record = result.to_dict()
    assert (record["K"], record["n_per_class"], record["P"], record["N"]) == (5, 40, None, None)
    binary = tablegen.significance_test("auc", 20, 20, C=10, score=0.9).to_dict()
    assert "K" not in binary and "n_per_class" not in binary  # the binary record is unchanged


@pytest.mark.parametrize("kwargs, named", [
    ({"K": 5}, "n_per_class"),
    ({"n_per_class": 40}, "K"),
    ({"K": 1, "n_per_class": 40}, "K"),
    ({"K": 5, "n_per_class": 40, "P": 100}, "P"),
    ({"K": 5, "n_per_class": 40, "N": 100}, "N"),
    ({"K": 5, "n_per_class": 40, "metric": "auc"}, "metric"),
    ({"K": 5, "n_per_class": 40, "method": "simulate"}, "method"),
    ({"K": 5, "n_per_class": 40, "method": "table"}, "method"),
    ({"K": 5, "n_per_class": 40, "R": 1000}, "R"),
    ({"K": 5, "n_per_class": 40, "seed": 1}, "seed"),
    ({"K": 5, "n_per_class": 40, "C": None}, "C"),
    ({"K": 5, "n_per_class": 40, "alpha": None}, "alpha"),
    ({"K": 5, "n_per_class": 40, "alpha": 1.5}, "alpha"),
    ({"K": 5, "n_per_class": 40, "table": 3}, "table"),
    ({"K": 5, "n_per_class": 40, "score": 0.995}, "score"),
    ({"K": 5, "n_per_class": 40, "score": float("nan")}, "score"),
])
def test_significance_test_bad_input_is_refused_naming_the_argument(kwargs, named):
    arguments = {"metric": "accuracy", "C": 10, "alpha": 0.05, "score": 0.32} | kwargs
    with pytest.raises(TablegenInputError, match=rf"\b{named}\b"):
        tablegen.significance_test(**arguments)


def test_significance_test_checks_a_table_it_is_given():
    from tablegen.errors import StoreError
    from tablegen.store.schema import bundled_table_path

    with pytest.raises(StoreError, match="table=.*is not a multi-class table"):
        tablegen.significance_test("accuracy", K=5, n_per_class=40, C=100, alpha=0.05, score=0.32,
                                   table=bundled_table_path())


def test_significance_test_checks_device_on_the_k_class_path_too():
    """An unknown device is refused naming it, as on the binary path (it was accepted and ignored)."""
    with pytest.raises(TablegenInputError, match=r"\bdevice\b"):
        tablegen.significance_test("accuracy", K=3, n_per_class=5, C=1, alpha=0.05, score=0.6, device="gpu")
    result = tablegen.significance_test("accuracy", K=3, n_per_class=5, C=1, alpha=0.05, score=0.6, device="cpu")
    assert result.K == 3 and result.p_value.method == "exact"
