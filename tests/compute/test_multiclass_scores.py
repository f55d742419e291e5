"""Multi-class ranking metrics from a probability matrix: values against scikit-learn, the top-k tie rule, bad input.

The oracle values are scikit-learn 1.9.1's (``tests/data/sklearn_multiclass/values.json``, written by
``make_values.py`` there): ``roc_auc_score(multi_class="ovo", average="macro")`` is Hand & Till's M,
``multi_class="ovr", average="macro"`` the one-vs-rest macro AUC, and ``top_k_accuracy_score`` top-k accuracy where
no tie straddles the k-th place.
"""

from __future__ import annotations

import itertools
import json
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from tablegen.compute.multiclass_scores import SCORE_METRICS, check_score_metric, score_metric_values, top_k_credit
from tablegen.errors import TablegenInputError

ORACLE = json.loads((Path(__file__).parents[1] / "data" / "sklearn_multiclass" / "values.json").read_text())


def _case(record):
    labels = np.array(record["labels"])
    probabilities = np.array([[float.fromhex(v) for v in row] for row in record["probabilities"]])
    return labels, probabilities


@pytest.mark.parametrize("record", ORACLE["cases"], ids=[c["name"] for c in ORACLE["cases"]])
def test_aucs_equal_scikit_learns(record):
    labels, probabilities = _case(record)
    values = score_metric_values(labels, probabilities, ["hand_till_auc", "ovr_macro_auc"])
    for name in ("hand_till_auc", "ovr_macro_auc"):  # the same rationals, summed in another order: a few ulps
        assert values[name] == pytest.approx(record[name], rel=1e-14, abs=0), name


@pytest.mark.parametrize("record", ORACLE["cases"], ids=[c["name"] for c in ORACLE["cases"]])
def test_ovr_macro_is_not_scikit_learns_prevalence_weighted_average(record):
    labels, probabilities = _case(record)
    value = score_metric_values(labels, probabilities, "ovr_macro_auc")["ovr_macro_auc"]
    assert abs(value - record["ovr_weighted_auc"]) > 1e-6  # unequal prevalences: a different number


@pytest.mark.parametrize("record", [c for c in ORACLE["cases"] if "top_k_accuracy" in c],
                         ids=[c["name"] for c in ORACLE["cases"] if "top_k_accuracy" in c])
def test_top_k_without_ties_equals_scikit_learns(record):
    labels, probabilities = _case(record)
    for k, expected in record["top_k_accuracy"].items():
        assert score_metric_values(labels, probabilities, "top_k_accuracy", k=int(k))["top_k_accuracy"] == expected


def _fair_share(row, true_class, k):
    """The chance the true class is in the top k when ties are broken by a uniformly random order of the columns:
    every order enumerated, each ranking the columns by score and, within a tie, by the order."""
    K = len(row)
    hits = 0
    orders = list(itertools.permutations(range(K)))
    for order in orders:
        place = {c: i for i, c in enumerate(order)}
        ranked = sorted(range(K), key=lambda c: (-row[c], place[c]))
        hits += true_class in ranked[:k]
    return Fraction(hits, len(orders))


@pytest.mark.parametrize("record", [c for c in ORACLE["cases"] if c["name"].startswith("ties")][:2],
                         ids=lambda c: c["name"])
def test_top_k_tie_rule_is_the_fair_share_of_random_tie_breaking(record):
    labels, probabilities = _case(record)
    K = probabilities.shape[1]
    for k in range(1, K):
        credit = top_k_credit(probabilities, k)
        straddled = 0
        for i, c in enumerate(labels):
            share = _fair_share(probabilities[i].tolist(), int(c), k)
            assert Fraction(credit[i, c]) == Fraction(float(share)), (i, k)
            straddled += 0 < share < 1
        assert straddled > 0  # the case exercises the rule
        value = score_metric_values(labels, probabilities, "top_k_accuracy", k=k)["top_k_accuracy"]
        exact = sum(_fair_share(probabilities[i].tolist(), int(c), k) for i, c in enumerate(labels)) / len(labels)
        assert abs(Fraction(value) - exact) <= 4 * 2.0**-52


def test_top_k_tie_rule_on_a_small_example():
    # row 0: true class 1 tied with class 2 for the second place (k = 2): half a hit; row 1: class 0 third: a miss
    values = score_metric_values([1, 0, 2], [[0.5, 0.25, 0.25], [0.1, 0.6, 0.3], [0.2, 0.2, 0.6]], "top_k_accuracy",
                                 k=2)
    assert values["top_k_accuracy"] == (0.5 + 0 + 1) / 3


@pytest.mark.parametrize("name", ["log_loss", "LOG_LOSS", "brier", "brier_score_loss", "cross_entropy"])
def test_calibration_scores_are_refused_as_not_ranking_metrics(name):
    with pytest.raises(TablegenInputError, match=r"metric=.* is not a ranking metric.*calibration"):
        check_score_metric(name)


def test_label_metrics_and_unknown_names_are_refused_with_the_way_out():
    with pytest.raises(TablegenInputError, match=r"metric='accuracy' is a metric of predicted labels.*multiclass_test"):
        check_score_metric("accuracy")
    with pytest.raises(TablegenInputError, match="metric must be one of hand_till_auc"):
        check_score_metric("auc_pr")
    assert [check_score_metric(m.upper()) for m in SCORE_METRICS] == list(SCORE_METRICS)


GOOD = [[0.6, 0.3, 0.1], [0.2, 0.5, 0.3], [0.1, 0.2, 0.7], [0.3, 0.4, 0.3]]


@pytest.mark.parametrize(("labels", "probabilities", "k", "pattern"), [
    ([0, 1, 2, 1], [[0.6, 0.3, 0.2], *GOOD[1:]], None, r"probabilities row 0 sums to 1\.09999.*, not 1"),
    ([0, 1, 2, 1], [[np.nan, 0.5, 0.5], *GOOD[1:]], None, "probabilities holds a missing or non-finite value"),
    ([0, 1, 2, 1], [[1.2, -0.2, 0.0], *GOOD[1:]], None, "probabilities holds a negative entry"),
    ([0, 1, 2], GOOD, None, "probabilities has 4 rows but labels has 3"),
    ([0, 1, 1, 1], GOOD, None, "labels has no item of class 2"),
    ([0, 1, 2, 3], GOOD, None, "labels_codes must be a 1-D array of class codes in"),
    ([0, 1, 2, 1], [0.5, 0.5, 0.5, 0.5], None, "probabilities must be 2-D"),
    ([0, 1, 2, 1], GOOD, 3, r"k must be an integer in \[1, 2\]"),
    ([0, 1, 2, 1], GOOD, 0, r"k must be an integer in \[1, 2\]"),
])
def test_bad_input_names_the_argument(labels, probabilities, k, pattern):
    with pytest.raises(TablegenInputError, match=pattern):
        score_metric_values(labels, probabilities, SCORE_METRICS if k is not None else SCORE_METRICS[:2], k=k)


def test_top_k_needs_k():
    with pytest.raises(TablegenInputError, match="k is needed for top_k_accuracy"):
        score_metric_values([0, 1, 2, 1], GOOD, "top_k_accuracy")


def test_more_items_than_the_kernel_counts_exactly_are_refused():
    from tablegen.compute.multiclass_scores import MAX_ITEMS, check_codes

    with pytest.raises(TablegenInputError, match="labels has 33,554,433 items, more than"):
        check_codes(np.zeros(MAX_ITEMS + 1, np.int8), 2)
