"""Paired tests of two models on one test set, against independent references: a naive O(PN) DeLong, R's pROC
(tests/data/proc_delong/: cases.csv read by delong.R, expected.csv its output), scipy's binomial test and
statsmodels' exact McNemar (tests/data/statsmodels_mcnemar/: expected.csv written by mcnemar.py) for McNemar,
and enumerating every swap pattern with the registry's scorers for the permutation test."""

from __future__ import annotations

import csv
import itertools
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import binomtest

from tablegen.compare import bootstrap_interval, paired_test, pairwise_tests
from tablegen.compare.datasets.analysis import adjust_p_values
from tablegen.compare.pairwise.delong import delong_covariance
from tablegen.compare.pairwise.tests import SwapNulls, mcnemar_p, swap_null
from tablegen.compute.metrics import get_metric
from tablegen.compute.metrics_from_scores import threshold_groups
from tablegen.errors import TablegenInputError

DATA = Path(__file__).resolve().parents[1] / "data" / "proc_delong"
STATSMODELS_MCNEMAR = Path(__file__).resolve().parents[1] / "data" / "statsmodels_mcnemar" / "expected.csv"


def _naive_delong(y, scores):
    """DeLong's placement values by comparing every (positive, negative) pair: O(PN), no ranks."""
    x, z = scores[:, y == 1], scores[:, y == 0]
    psi = (x[:, :, None] > z[:, None, :]) + 0.5 * (x[:, :, None] == z[:, None, :])  # (K, P, N)
    v10, v01 = psi.mean(axis=2), psi.mean(axis=1)
    return v10.mean(axis=1), np.atleast_2d(np.cov(v10)) / x.shape[1] + np.atleast_2d(np.cov(v01)) / z.shape[1]


@pytest.mark.parametrize("levels", [None, 2, 5])
def test_delong_by_midranks_equals_the_pairwise_definition(levels):
    rng = np.random.default_rng(levels or 0)
    y = np.r_[np.ones(23, int), np.zeros(31, int)]
    scores = np.vstack([y + rng.normal(size=54) for _ in range(3)])
    if levels:
        scores = np.round(scores * levels) / levels  # ties, within and across classes
    est = delong_covariance(y, scores)
    aucs, covariance = _naive_delong(y, scores)
    np.testing.assert_allclose(est.aucs, aucs, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(est.covariance, covariance, rtol=1e-10, atol=1e-15)


def test_delong_equals_r_proc():
    cases = list(csv.DictReader(open(DATA / "cases.csv")))
    for row in csv.DictReader(open(DATA / "expected.csv")):
        items = [c for c in cases if c["case"] == row["case"]]
        y = np.array([int(c["label"]) for c in items])
        a, b = (np.array([float(c[name]) for c in items]) for name in ("a", "b"))
        result = paired_test(y, a, b, metric="auc", method="delong")
        assert (result.value_a, result.value_b) == pytest.approx((float(row["auc_a"]), float(row["auc_b"])), abs=1e-12)
        assert result.statistic == pytest.approx(float(row["z"]), rel=1e-9)
        assert result.p_value == pytest.approx(float(row["p_value"]), rel=1e-9)
        assert (result.ci_low, result.ci_high) == pytest.approx((float(row["ci_low"]), float(row["ci_high"])),
                                                                rel=1e-9)


def test_the_interval_level_is_one_minus_alpha():
    from scipy.stats import norm
    rng = np.random.default_rng(8)
    y = np.r_[np.ones(30), np.zeros(40)]
    a, b = 1.5 * y + rng.normal(size=70), y + rng.normal(size=70)
    wide, narrow = (paired_test(y, a, b, alpha=alpha) for alpha in (0.05, 0.2))
    half = (wide.ci_high - wide.ci_low) / 2 / norm.ppf(0.975) * norm.ppf(0.9)  # the same standard error
    assert (narrow.ci_low, narrow.ci_high) == pytest.approx((wide.difference - half, wide.difference + half))
    assert narrow.confidence_level == pytest.approx(0.8) and "80% CI" in narrow.sentence()
    assert narrow.p_value == wide.p_value and "alpha = 0.2" in narrow.sentence()


@pytest.mark.parametrize(("b", "c"), [(0, 0), (1, 0), (10, 2), (2, 10), (7, 7), (25, 13), (0, 9), (40, 60)])
def test_mcnemar_is_the_exact_binomial_test_on_the_discordant_pairs(b, c):
    for alternative in ("two-sided", "greater", "less"):
        expected = 1.0 if b + c == 0 else binomtest(b, b + c, 0.5, alternative=alternative).pvalue
        assert mcnemar_p(b, c, alternative) == pytest.approx(expected, rel=1e-12, abs=1e-300)
    if b + c:  # mid-p: the exact p less half the probability of what was observed (each tail counted)
        from scipy.stats import binom
        k, n = min(b, c), b + c
        mid = 1.0 if b == c else 2 * binom.cdf(k, n, 0.5) - binom.pmf(k, n, 0.5)
        assert mcnemar_p(b, c, mid_p=True) == pytest.approx(min(1.0, mid), rel=1e-12)


def test_mcnemar_from_predictions_counts_the_discordant_items():
    y = np.array([1, 1, 1, 1, 0, 0, 0, 0, 1, 0])
    a = np.array([1, 1, 1, 0, 0, 0, 0, 1, 1, 0])   # right on 8
    b = np.array([0, 0, 1, 0, 0, 1, 1, 1, 1, 0])   # right on 4
    result = paired_test(y, a, b)  # 0/1 predictions: McNemar, threshold 1/2
    assert result.method == "mcnemar" and (result.value_a, result.value_b) == (0.8, 0.4)
    assert result.statistic == 4  # A alone right on items 0, 1, 5, 6; B alone right on none: b = 4, c = 0
    assert result.p_value == pytest.approx(binomtest(4, 4, 0.5).pvalue)


def test_mcnemar_equals_statsmodels_exact_mcnemar():
    for row in csv.DictReader(open(STATSMODELS_MCNEMAR)):
        counts = [int(row[k]) for k in ("both_right", "only_a_right", "only_b_right", "both_wrong")]
        right = [(True, True), (True, False), (False, True), (False, False)]  # (A right, B right) per cell
        y, a, b = [], [], []
        for (a_right, b_right), count in zip(right, counts):
            for i in range(count):  # alternate the classes; a prediction is right when it equals the label
                label = i % 2
                y.append(label)
                a.append(label if a_right else 1 - label)
                b.append(label if b_right else 1 - label)
        result = paired_test(y, a, b, method="mcnemar")
        assert min(result.statistic, counts[1] + counts[2] - result.statistic) == float(row["statistic"])
        assert result.p_value == pytest.approx(float(row["p_value"]), rel=1e-12)


def _brute_swap_p(y, a, b, metric):
    """(two-sided, greater) p-values by scoring every swap pattern with the registry's scorer."""
    spec = get_metric(metric)
    n = y.size
    ra, rb = (np.argsort(np.argsort(s, kind="stable"), kind="stable") for s in (a, b))  # untied scores: ranks

    def value(s):
        return spec.score_groups(threshold_groups(y, s))
    observed = value(ra) - value(rb)
    both, greater = 0, 0
    for flags in itertools.product((0, 1), repeat=n):
        f = np.array(flags, bool)
        d = value(np.where(f, rb, ra)) - value(np.where(f, ra, rb))
        both += abs(d) >= abs(observed) - 1e-9
        greater += d >= observed - 1e-9
    return {"two-sided": both / 2 ** n, "greater": greater / 2 ** n}


@pytest.mark.parametrize("metric", ["auc", "best_f1", "best_accuracy", "average_precision", "best_mcc"])
def test_the_exact_swap_permutation_equals_enumerating_every_pattern(metric):
    rng = np.random.default_rng(5)
    y = np.array([1, 0, 1, 1, 0, 0, 1, 0, 1])  # 2^9 patterns, each scored by the registry
    a, b = y + rng.normal(size=9), rng.normal(size=9)
    brute = _brute_swap_p(y, a, b, metric)
    for alternative in ("two-sided", "greater"):
        result = paired_test(y, a, b, metric=metric, method="permutation", alternative=alternative)
        assert result.replicates is None and result.p_interval[0] == result.p_value
        assert result.p_value == pytest.approx(brute[alternative], abs=1e-12)


def test_the_random_swap_patterns_bracket_the_exact_answer_and_repeat():
    rng = np.random.default_rng(6)
    n = 18  # over the exact limit: random patterns; the kernel enumerates all 2^18 for the reference
    y = np.r_[np.ones(8, int), np.zeros(10, int)]
    a, b = y + rng.normal(size=n), 0.5 * y + rng.normal(size=n)
    result = paired_test(y, a, b, metric="best_f1", R=20_000, seed=3)
    assert result.method == "sequential permutation" and result.max_replicates == 20_000
    assert result.hits == 20 and result.replicates < 20_000  # p ~ 0.2: stopped at the 20th reaching pattern
    from scipy.stats import rankdata

    from tablegen.compute.kernels.ranking import mcc_weights
    from tablegen.compute.kernels.swaps import swap_differences, swap_order
    every = np.empty((1, 2 ** n))
    swap_differences(*swap_order(rankdata(a) / n, rankdata(b) / n), y.astype(np.uint8), 8, np.array([2]), 0,
                     mcc_weights(8, 10, n + 1), True, np.uint64(0), np.uint64(0), 0, every)
    exact = np.mean(np.abs(every[0]) >= abs(result.difference) - 1e-9)
    assert result.p_interval[0] <= exact <= result.p_interval[1]
    assert paired_test(y, a, b, metric="best_f1", R=20_000, seed=3) == result
    differences, _ = swap_null(y, a, b, 2, 0, R=500, key=(np.uint64(1), np.uint64(2)))
    first, _ = swap_null(y, a, b, 2, 0, R=200, key=(np.uint64(1), np.uint64(2)))
    assert np.array_equal(differences[:200], first)  # pattern r depends on r alone


def test_one_pass_serves_every_metric_planned_with_a_pair_and_each_column_stops_on_its_own():
    """The counts a shared pass gives each column are those of its own run, which are the counts over the first
    patterns of a fixed run of R (the same keyed patterns), each alternative stopped at its 20th reaching one."""
    from tablegen.compare.pairwise.sequential import SIDES, reaching
    from tablegen.compare.pairwise.tests import column_value, swap_counts

    rng = np.random.default_rng(7)
    n = 40
    y = np.r_[np.ones(15, int), np.zeros(25, int)]
    a, b, c = y + rng.normal(size=n), np.round(y + rng.normal(size=n), 1), rng.normal(size=n)
    key = (np.uint64(5), np.uint64(6))

    def observed(u, v, column):
        return column_value(y, u, column) - column_value(y, v, column)

    nulls = SwapNulls()
    for column in (1, 2, 4):
        nulls.plan(column, a)  # a wins best_accuracy, best_f1 and AP
    nulls.plan(3, b)  # b wins best balanced accuracy
    stopped_early = 0
    for column in (1, 2, 4):
        for other in (b, c):
            d = observed(a, other, column)
            found = nulls.counts(y, a, other, column, 0, d, R=3000, key=key)
            assert found == swap_counts(y, a, other, [column], [d], 0, R=3000, key=key)[0]
            full, _ = swap_null(y, a, other, column, 0, R=3000, key=key)
            for side, reached in zip(SIDES, reaching(full, d)):
                hits, drawn = found.of(side)
                assert hits == reached[:drawn].sum() and (hits < 20) == (drawn == 3000) and hits <= 20
                assert hits < 20 or reached[drawn - 1]  # stopped at its 20th reaching pattern
                stopped_early += drawn < 3000
    assert stopped_early > 0
    assert nulls.passes == 2  # (a, b) with columns 1, 2, 3, 4; (a, c) with 1, 2, 4
    d = observed(b, a, 3)
    reverse = nulls.counts(y, b, a, 3, 0, d, R=3000, key=key)  # computed with (a, b): greater and less exchanged
    assert nulls.passes == 2 and reverse == swap_counts(y, b, a, [3], [d], 0, R=3000, key=key)[0]
    nulls.counts(y, b, c, 3, 0, observed(b, c, 3), R=3000, key=key)
    assert nulls.passes == 3
    other_seed = nulls.counts(y, a, b, 2, 0, observed(a, b, 2), R=3000, key=(np.uint64(7), np.uint64(6)))
    assert nulls.passes == 4 and other_seed == swap_counts(y, a, b, [2], [observed(a, b, 2)], 0, R=3000,
                                                           key=(np.uint64(7), np.uint64(6)))[0]


def test_pairwise_tests_with_shared_swap_nulls_give_the_same_results():
    rng = np.random.default_rng(8)
    y = np.r_[np.ones(12), np.zeros(18)]
    models = {"a": y + rng.normal(size=30), "b": y + 2 * rng.normal(size=30), "c": rng.normal(size=30)}
    nulls = SwapNulls()
    for column in (1, 2, 3, 4):
        nulls.plan(column, models["a"])
    for metric in ("best_accuracy", "best_f1", "best_balanced_accuracy", "average_precision"):
        for against in ("winner", "all"):
            shared = pairwise_tests(y, models, metric=metric, method="permutation", against=against, R=500, seed=4,
                                    swap_nulls=nulls)
            alone = pairwise_tests(y, models, metric=metric, method="permutation", against=against, R=500, seed=4)
            assert {k: (t.p_value, t.p_interval) for k, t in shared.tests.items()} == \
                {k: (t.p_value, t.p_interval) for k, t in alone.tests.items()}
            assert shared.adjusted_p_values == alone.adjusted_p_values and shared.best_set == alone.best_set


def test_many_models_holm_and_the_confidence_set_of_the_best():
    rng = np.random.default_rng(12)  # a draw where the two good models are close: both in the set
    y = np.r_[np.ones(50), np.zeros(70)]
    models = {"best": 2.4 * y + rng.normal(size=120), "close": 2.0 * y + rng.normal(size=120),
              "weak": 0.2 * y + rng.normal(size=120), "noise": rng.normal(size=120)}
    result = pairwise_tests(y, models, metric="auc")
    assert result.winner == "best" and set(result.tests) == {("best", m) for m in ("close", "weak", "noise")}
    raw = [t.p_value for t in result.tests.values()]
    assert list(result.adjusted_p_values.values()) == pytest.approx(adjust_p_values(raw, "holm").tolist())
    assert all(t.alternative == "greater" for t in result.tests.values())
    assert "close" in result.best_set and "noise" not in result.best_set and "weak" not in result.best_set
    bonferroni = {m for (_, m), t in result.tests.items() if 3 * t.p_value <= 0.05}  # beaten at alpha / (K - 1)
    holm = {m for (_, m), p in result.adjusted_p_values.items() if p <= 0.05}
    assert set(result.best_set) == set(models) - bonferroni and set(result.best_set) >= set(models) - holm
    every = pairwise_tests(y, models, metric="auc", against="all")
    assert len(every.tests) == 6 and all(t.alternative == "two-sided" for t in every.tests.values())


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"method": "delong", "metric": "best_f1"}, "method='delong' compares AUCs"),
    ({"method": "mcnemar"}, "threshold is needed for McNemar"),
    ({"method": "permutation", "threshold": 0.5}, "threshold applies to McNemar"),
    ({"alternative": "bigger"}, "alternative must be one of"),
    ({"method": "fast"}, "method must be one of"),
    ({"metric": "nope"}, "unknown metric"),
    ({"R": 5}, "R must be an integer >= 100"),
    ({"method": "permutation", "metric": "tp_at_2"}, "tp_at_2 is not defined"),
    ({"alpha": 1.5}, "alpha must be in"),
    ({"labels": [1, 0, 2, 0, 1, 0]}, "labels must hold exactly two classes"),
    ({"labels": [1, 1, 1, 1, 1, 1]}, "labels must hold exactly two classes"),
    ({"scores_b": [0.2, 0.4, np.inf, 0.1, 0.5, 0.6]}, "scores_b"),
    ({"mid_p": True}, r"mid_p=True is McNemar's mid-p; method='delong' has none"),
    ({"mid_p": True, "metric": "best_f1"}, r"mid_p=True is McNemar's mid-p; method='permutation' has none"),
    ({"mid_p": "yes", "threshold": 0.5}, "mid_p must be True or False"),
    ({"metric": "accuracy", "method": "delong"}, r"metric='accuracy' \(at a threshold\) is tested by McNemar"),
    ({"metric": "accuracy"}, "threshold is needed for McNemar"),
])
def test_bad_arguments_are_refused_naming_them(kwargs, message):
    arguments = {"labels": np.array([1, 0, 1, 0, 1, 0]), "scores_a": [0.9, 0.1, 0.8, 0.3, 0.6, 0.5],
                 "scores_b": [0.2, 0.4, 0.9, 0.1, 0.5, 0.6]}
    arguments.update({k: kwargs.pop(k) for k in list(kwargs) if k in arguments})
    with pytest.raises(TablegenInputError, match=message):
        paired_test(arguments["labels"], arguments["scores_a"], arguments["scores_b"], **kwargs)


def test_mismatched_or_missing_scores_are_refused():
    with pytest.raises(TablegenInputError, match="scores of 'scores_b' has 2 value"):
        paired_test([1, 0, 1], [0.1, 0.2, 0.3], [0.1, 0.2])
    with pytest.raises(TablegenInputError, match="NaN"):
        paired_test([1, 0, 1], [0.1, np.nan, 0.3], [0.1, 0.2, 0.3])


def _winner_by_auc_loser_by_accuracy():
    """The issue's reproducer: A ranks perfectly (AUC 1) with every score < 0.5 (accuracy 0.5 at 0.5); B is
    far more accurate at 0.5 (0.875)."""
    y = np.r_[np.ones(20), np.zeros(20)]
    a = np.r_[np.linspace(0.30, 0.49, 20), np.linspace(0, 0.19, 20)]
    rng = np.random.default_rng(1)
    b = np.clip(np.r_[rng.normal(0.7, 0.2, 20), rng.normal(0.3, 0.2, 20)], 0, 1)
    return y, {"A": a, "B": b}


def test_the_winner_is_chosen_by_the_metric_tested():
    y, models = _winner_by_auc_loser_by_accuracy()
    result = pairwise_tests(y, models, threshold=0.5)  # McNemar: accuracy at 0.5 is what is tested
    assert (result.metric, result.winner, result.best_set) == ("accuracy", "B", ("B",))
    (pair, test), = result.tests.items()
    assert pair == ("B", "A") and (test.metric, test.value_a, test.value_b) == ("accuracy", 0.875, 0.5)
    only_a, only_b = _discordant(y, models)  # the winner B is model A of the test: b = items only B gets right
    assert test.statistic == only_b and test.p_value == pytest.approx(
        binomtest(only_b, only_a + only_b, 0.5, alternative="greater").pvalue, rel=1e-12)
    assert round(test.p_value, 4) == 0.0013 and result.to_dict()["metric"] == "accuracy"
    by_auc = pairwise_tests(y, models)  # no threshold: DeLong, and A (AUC 1) wins by the metric tested
    assert (by_auc.metric, by_auc.winner) == ("auc", "A")
    every = pairwise_tests(y, models, threshold=0.5, against="all")
    assert list(every.tests) == [("B", "A")] and every.metric == "accuracy"


def _discordant(y, models):
    right = {k: (s >= 0.5) == (y == 1) for k, s in models.items()}
    return int(np.sum(right["A"] & ~right["B"])), int(np.sum(~right["A"] & right["B"]))


def test_mixed_predictions_and_scores_use_one_method_for_every_pair():
    y = np.r_[np.ones(10), np.zeros(10)]
    rng = np.random.default_rng(3)
    models = {"p": (y + (rng.random(20) < 0.2)) % 2, "q": (y + (rng.random(20) < 0.4)) % 2,
              "s": y + rng.normal(size=20)}
    result = pairwise_tests(y, models)  # 'auto' resolves once: not every model gives 0/1 predictions
    assert result.metric == "auc" and {t.method for t in result.tests.values()} == {"delong"}
    with pytest.raises(TablegenInputError, match="threshold is needed for McNemar"):
        pairwise_tests(y, models, method="mcnemar")


def test_accuracy_is_accepted_by_mcnemar_and_names_itself():
    y, models = _winner_by_auc_loser_by_accuracy()
    named = paired_test(y, models["A"], models["B"], metric="accuracy", method="mcnemar", threshold=0.5)
    auto = paired_test(y, models["A"], models["B"], metric="Accuracy", threshold=0.5)
    default = paired_test(y, models["A"], models["B"], threshold=0.5)
    assert named == auto == default and named.metric == "accuracy" and named.method == "mcnemar"
    b, c = _discordant(y, models)
    assert named.statistic == b and named.p_value == pytest.approx(binomtest(b, b + c, 0.5).pvalue)
    predictions = paired_test(y, (models["A"] >= 0.5) * 1.0, (models["B"] >= 0.5) * 1.0, metric="accuracy")
    assert predictions.p_value == named.p_value


def test_one_sided_mid_p_without_discordant_items_is_one_by_convention():
    assert mcnemar_p(0, 0, "greater", mid_p=True) == 1.0 == mcnemar_p(0, 0, "less", mid_p=True)
    assert mcnemar_p(3, 3, "two-sided", mid_p=True) == 1.0
    assert mcnemar_p(3, 3, "greater", mid_p=True) == pytest.approx(binomtest(3, 6, 0.5, "greater").pvalue
                                                                   - 0.5 * 20 / 64)


# -- the bootstrap interval: only when asked, and its keywords ---------------------------------------------
def test_paired_test_bootstraps_only_when_its_interval_is_read(monkeypatch):
    import tablegen.compare.pairwise.paired as paired

    calls = []
    real = paired.scipy_bootstrap
    monkeypatch.setattr(paired, "scipy_bootstrap", lambda *args, **kwargs: calls.append(args) or real(*args, **kwargs))
    rng = np.random.default_rng(4)
    y = np.r_[np.ones(7), np.zeros(7)]  # n = 14: the exact permutation test
    a, b = y + rng.normal(size=14), y + rng.normal(size=14)
    for method, metric in (("permutation", "best_f1"), ("mcnemar", "auc"), ("delong", "auc")):
        result = paired_test(y, a, b, metric=metric, method=method, threshold=0.5 if method == "mcnemar" else None)
        assert calls == [] and result.p_value >= 0  # the test itself: no bootstrap
        low, high = result.ci_low, result.ci_high
        assert len(calls) == (0 if method == "delong" else 1) and low <= result.difference <= high
        assert result.to_dict()["ci_low"] == low and result.confidence_interval == (low, high)
        assert len(calls) == (0 if method == "delong" else 1)  # computed once, then kept
        calls.clear()
    pairwise_tests(y, {"a": a, "b": b, "c": -a}, metric="best_f1")
    assert calls == []


def test_a_lazy_interval_is_the_interval_computed_at_once():
    rng = np.random.default_rng(6)
    y = np.r_[np.ones(12), np.zeros(13)]
    a, b = y + rng.normal(size=25), y + rng.normal(size=25)
    lazy = paired_test(y, a, b, metric="average_precision", method="permutation", seed=3)
    from tablegen.compare.pairwise.bootstrap import scipy_bootstrap
    from tablegen.compare.pairwise.validation import checked_pair

    q = checked_pair(y, a, b, "average_precision", "permutation", "two-sided", None, None, 3, None)
    assert lazy.confidence_interval == scipy_bootstrap(q.metric_difference, q.labels, q.seed, 0.95)


def test_bootstrap_interval_takes_level_resamples_and_method():
    rng = np.random.default_rng(3)
    y = np.r_[np.ones(30), np.zeros(40)]
    s = y + rng.normal(size=70)
    default = bootstrap_interval(y, s, metric="auc")
    assert bootstrap_interval(y, s, metric="auc", level=0.95, resamples=2000, method="auto") == default
    assert bootstrap_interval(y, s, metric="auc", method="BCa") == default  # auto is BCa up to 2,000 items
    low80, high80 = bootstrap_interval(y, s, level=0.8)
    assert default[0] < low80 < high80 < default[1]
    percentile = bootstrap_interval(y, s, method="percentile", resamples=500)
    basic = bootstrap_interval(y, s, method="basic", resamples=500)
    # the basic interval is the percentile one reflected about the estimate: 2 * AUC - (high, low)
    auc = paired_test(y, s, s, metric="auc", method="delong").value_a
    assert basic == pytest.approx((2 * auc - percentile[1], 2 * auc - percentile[0]), abs=1e-12)


@pytest.mark.parametrize("kwargs, match", [({"level": 1.0}, "level must be in"), ({"level": "0.9"}, "level must be"),
                                           ({"resamples": 10}, "resamples must be an integer >= 100"),
                                           ({"method": "bca"}, "method must be one of 'auto', 'BCa'")])
def test_bad_bootstrap_options_are_refused_naming_them(kwargs, match):
    y = np.r_[np.ones(5), np.zeros(5)]
    with pytest.raises(TablegenInputError, match=match):
        bootstrap_interval(y, np.arange(10.0), **kwargs)


def test_a_report_sorts_each_model_once_per_metric_for_its_paired_tests(monkeypatch):
    """With a shared SwapNulls each model's value of a metric and its midranks are computed once for the report's
    paired tests (at 10^6 items the repeated sorts were half the stage), with the same answers as without it."""
    import tablegen.compute.metrics_from_scores as scores_module
    from tablegen.compare import pairwise_tests
    from tablegen.compare.pairwise.tests import SwapNulls

    rng = np.random.default_rng(48)
    y = np.r_[np.ones(60), np.zeros(140)]
    models = {f"m{i}": (0.5 + 0.4 * i) * y + rng.normal(size=200) for i in range(4)}
    alone = {m: pairwise_tests(y, models, metric=m).to_dict() for m in ("best_f1", "average_precision")}
    calls = []
    original = scores_module.threshold_groups
    monkeypatch.setattr(scores_module, "threshold_groups", lambda *a, **k: calls.append(1) or original(*a, **k))
    nulls = SwapNulls()
    shared = {m: pairwise_tests(y, models, metric=m, swap_nulls=nulls).to_dict()
              for m in ("best_f1", "average_precision")}
    assert shared == alone
    assert len(calls) <= 2 * len(models)  # each (metric, model) once; the bootstrap intervals are not read here
    assert len(nulls._ranks) == len(models)


def test_a_swap_nulls_digests_each_array_object_once_while_it_lives(monkeypatch):
    """SwapNulls keys its answers by content digests; an array object's digest is computed once while the object
    lives (a 10^6-item vector's costs 14 ms, and a report asked for 473), never taken for another object's."""
    import gc

    import tablegen.compare.pairwise.tests as module
    from tablegen.compute.metrics import get_metric

    digests = []
    original = module._digest
    monkeypatch.setattr(module, "_digest", lambda values: digests.append(1) or original(values))
    nulls = module.SwapNulls()
    y = np.r_[np.ones(30), np.zeros(30)].astype(np.int64)
    scores = np.linspace(0.0, 1.0, 60) + y
    spec = get_metric("best_f1")
    first = nulls.metric_value(y, scores, spec)
    assert nulls.metric_value(y, scores, spec) == first and len(digests) == 2  # the labels' and the scores'
    other = scores[::-1].copy()  # another object: its own digest, its own value
    assert nulls.metric_value(y, other, spec) == module.column_value(y, other, 2) and len(digests) == 3
    del other
    gc.collect()
    again = scores[::-1].copy()  # maybe at the freed object's id: the dead reference tells them apart
    assert nulls.metric_value(y, again, spec) == module.column_value(y, again, 2) and len(digests) == 4


def test_delong_with_a_reports_kept_midranks_answers_as_alone():
    """DeLong's placements from the midranks a report keeps per model (the winner's sorted once, not once per pair):
    every statistic, p-value and interval as computed afresh, bit for bit."""
    rng = np.random.default_rng(9)
    y = np.r_[np.ones(40), np.zeros(60)]
    models = {f"m{i}": (0.3 * i) * y + np.round(rng.normal(size=100), 1) for i in range(4)}  # ties too
    nulls = SwapNulls()
    shared = pairwise_tests(y, models, metric="auc", method="delong", swap_nulls=nulls)
    alone = pairwise_tests(y, models, metric="auc", method="delong")
    assert shared.to_dict() == alone.to_dict()
    assert len(nulls._delong_ranks) == len(models)


def test_the_lanes_score_whole_groups_of_64_and_the_counts_are_those_of_the_patterns_asked(monkeypatch):
    """Up to an early look at 359 patterns the blocks are 64, 128 and 167 patterns: the lane kernel scores 192 for the
    last (the patterns past 359 keyed as every other, unused) rather than leaving 39 to the one-pattern kernel; the
    counts are those of scoring exactly the patterns asked, bit for bit."""
    from tablegen.compare.pairwise import tests
    from tablegen.compare.pairwise.sequential import early_look
    from tablegen.compare.pairwise.tests import column_value, swap_counts
    from tablegen.compute.kernels import swap_lanes

    rng = np.random.default_rng(11)
    y = np.r_[np.ones(30, int), np.zeros(50, int)]
    a, b = 2 * y + rng.normal(size=80), rng.normal(size=80)  # a far better: no pattern reaches, the run looks
    key, look = (np.uint64(3), np.uint64(4)), early_look(0.05, 9, 10_000)
    widths = []
    original = swap_lanes.lane_swap_differences
    monkeypatch.setattr(swap_lanes, "lane_swap_differences",
                        lambda *args: (widths.append(args[-1].shape[1]), original(*args))[1])
    monkeypatch.setattr(tests, "_swap_kernel", lambda *_: swap_lanes.lane_swap_differences)
    differences = [column_value(y, a, c) - column_value(y, b, c) for c in (1, 4)]
    monkeypatch.setattr(tests, "_scored_patterns", lambda kernel, rows: rows + 64 * (rows % 64 != 0) - rows % 64)
    grouped = swap_counts(y, a, b, [1, 4], differences, 0, R=10_000, key=key, look=look)
    scored = list(widths)
    widths.clear()
    monkeypatch.setattr(tests, "_scored_patterns", lambda kernel, rows: rows)
    exact = swap_counts(y, a, b, [1, 4], differences, 0, R=10_000, key=key, look=look)
    assert grouped == exact and scored[:3] == [64, 128, 192] and widths[:3] == [64, 128, 167]
