"""The K-class report against independent computations at tiny n.

- The level of the verdict against the best of C random classifiers when the models' predicted counts differ: the
  report's p-value of every distinct arrangement of each model's predictions, summed exactly (Fractions) over the
  null in which the C classifiers are independent; the chance of a significant verdict is <= alpha.
- The max-T test against brute force: every one of the n! orders of the true labels, the metrics written from
  their definitions in Fractions, the Westfall–Young step-down p-values computed directly.
- Monte Carlo against exact: the shuffled pass within 4 standard errors of the enumerated p-values.
- K = 2 against the binary answers that coincide: accuracy against one random classifier is Fisher's exact test
  (one-sided: the hits are 2 TP + N - m_1 with the hypergeometric TP), the paired accuracy test is the exact
  McNemar test of :func:`tablegen.compare.paired_test`.
- The swap permutation against brute force over every swap pattern.
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest

from tablegen.compare.report import multiclass_tests as tests
from tablegen.compare.report.multiclass import evaluate_multiclass
from tablegen.compare.report.multiclass_input import multiclass_data
from tablegen.compute.stats import upper_tail_probability

METRICS = tests.METRICS


def _exact_metrics(true, predicted, f1_classes=None):
    """Accuracy, kappa, balanced accuracy, macro-F1 from their definitions, in Fractions."""
    classes = sorted(set(true) | set(predicted))
    n = len(true)
    tp = {k: sum(1 for t, p in zip(true, predicted) if t == p == k) for k in classes}
    n_k = {k: true.count(k) for k in classes}
    m_k = {k: list(predicted).count(k) for k in classes}
    hits = sum(tp.values())
    pe = Fraction(sum(n_k[k] * m_k[k] for k in classes), n * n)
    kappa = (Fraction(hits, n) - pe) / (1 - pe)
    with_items = [k for k in classes if n_k[k] > 0]
    balanced = sum(Fraction(tp[k], n_k[k]) for k in with_items) / len(with_items)
    counted = [k for k in classes if n_k[k] + m_k[k] > 0]
    f1 = sum(Fraction(2 * tp[k], n_k[k] + m_k[k]) for k in counted) / (f1_classes or len(counted))
    return [Fraction(hits, n), kappa, balanced, f1]


def _arrangements(counts):
    return [tuple(row) for row in tests.arrangements(counts).tolist()]


def _report_p(true, predicted, metric, C, alpha):
    """The report's p-value of one model against the best of C random classifiers."""
    data = multiclass_data(true, {"m": predicted})
    prep = tests.prepare(data)
    observed = tests.observed_values(prep)
    null = tests.permutation_null(prep, 0, 0)
    assert null.exact
    return tests.versus_random(prep, observed, null, metric, C, alpha, 0).tests["m"]


@pytest.mark.parametrize("metric", METRICS)
@pytest.mark.parametrize("C_extra", [0, 7])
def test_level_with_unequal_predicted_counts_is_at_most_alpha(metric, C_extra):
    true = [0, 0, 1, 1, 2, 2]
    counts = [(2, 2, 2), (3, 2, 1), (1, 1, 4)]  # three models, three different predicted counts
    C = len(counts) + C_extra
    alpha = 0.1
    significant = []
    for predicted_counts in counts:
        rows = _arrangements(predicted_counts)
        hits = sum(_report_p(true, list(row), metric, C, alpha).p_value <= alpha for row in rows)
        significant.append(Fraction(hits, len(rows)))
    # the C - 3 models not given: any counts; each significant with chance at most t (a super-uniform p-value)
    t = Fraction(float(upper_tail_probability(C, alpha)))
    survive = Fraction(1)
    for share in significant:
        survive *= 1 - share
    level = 1 - survive * (1 - t) ** C_extra
    assert level <= Fraction(alpha) * (1 + Fraction(1, 10 ** 12))
    assert level > 0  # the test can reject at this n


def test_the_judged_model_is_the_smallest_p():
    true = [0, 0, 1, 1, 2, 2, 0, 1]
    a, b = [0, 0, 1, 1, 2, 2, 0, 2], [0, 0, 0, 0, 0, 2, 0, 1]
    data = multiclass_data(true, {"a": a, "b": b})
    prep = tests.prepare(data)
    observed = tests.observed_values(prep)
    null = tests.permutation_null(prep, 0, 0)
    verdict = tests.versus_random(prep, observed, null, "accuracy", 2, 0.05, 0)
    alone = {m: _report_p(true, p, "accuracy", 2, 0.05).p_value for m, p in (("a", a), ("b", b))}
    assert verdict.model == min(alone, key=alone.get) and verdict.p_value == min(alone.values())
    for m in alone:
        assert verdict.tests[m].p_value == alone[m]


def test_enumerated_accuracy_is_the_exact_law():
    import tablegen

    true = [0, 0, 1, 1, 2, 2, 2]
    for predicted in ([0, 1, 1, 1, 2, 2, 0], [2, 2, 2, 0, 0, 1, 1]):
        for C in (1, 10):
            mine = _report_p(true, predicted, "accuracy", C, 0.05)
            exact = tablegen.multiclass_test(true, predicted, "accuracy", C=C)
            assert mine.p_value == pytest.approx(exact.p_value, rel=1e-12)
            assert mine.critical_value == exact.critical_value


def _step_down(observed, null_rows, names):
    """Westfall–Young step-down adjusted p-values, directly: rank by value, each against the max of itself and
    those ranked below, monotone."""
    order = sorted(range(len(names)), key=lambda m: (-observed[m], m))
    adjusted, running = {}, Fraction(0)
    for j, m in enumerate(order):
        rest = order[j:]
        share = Fraction(sum(1 for row in null_rows if max(row[r] for r in rest) >= observed[m]), len(null_rows))
        running = max(running, share)
        adjusted[names[m]] = running
    return adjusted


@pytest.mark.parametrize("column", range(4))
def test_max_t_against_brute_force_over_every_order(column):
    true = [0, 0, 1, 1, 1, 2, 2]
    models = {"a": [0, 0, 1, 1, 2, 2, 2], "b": [0, 1, 1, 1, 0, 2, 2], "c": [1, 0, 2, 1, 1, 0, 2]}
    names = list(models)
    null_rows = []
    for order in itertools.permutations(range(len(true))):
        shuffled = [true[i] for i in order]
        null_rows.append([_exact_metrics(shuffled, models[m], len(set(true) | set(models[m])))[column]
                          for m in names])
    observed = [_exact_metrics(true, models[m])[column] for m in names]
    expected = _step_down(observed, null_rows, names)
    report = evaluate_multiclass(true, models, metrics=[METRICS[column]])
    selection = report[METRICS[column]].versus_models
    assert selection.method == "exact" and selection.arrangements == 7 * 6 * 5 * 4 * 3 * 2 // (2 * 6 * 2)
    for m in names:
        assert selection.adjusted_p_values[m] == pytest.approx(float(expected[m]), abs=1e-12)
        raw = Fraction(sum(1 for row in null_rows if row[names.index(m)] >= observed[names.index(m)]), 5040)
        assert selection.raw_p_values[m] == pytest.approx(float(raw), abs=1e-12)


def test_monte_carlo_pass_within_four_standard_errors(monkeypatch):
    true = [0, 0, 1, 1, 1, 2, 2, 2]
    models = {"a": [0, 0, 1, 1, 2, 2, 2, 1], "b": [0, 1, 1, 1, 0, 2, 2, 2]}
    exact = evaluate_multiclass(true, models, metrics=["macro_f1"])["macro_f1"]
    monkeypatch.setattr(tests, "EXACT_ARRANGEMENTS", 0)
    R = 20_000
    shuffled = evaluate_multiclass(true, models, metrics=["macro_f1"], R=R)["macro_f1"]
    assert exact.versus_models.method == "exact" and shuffled.versus_models.method == "permutation"
    for m in models:
        p = exact.versus_models.adjusted_p_values[m]
        se = max(np.sqrt(p * (1 - p) / R), 1 / R)
        assert abs(shuffled.versus_models.adjusted_p_values[m] - p) <= 4 * se + 1 / R
        q = exact.versus_random.tests[m].p_value
        assert abs(shuffled.versus_random.tests[m].p_value - q) <= 4 * max(np.sqrt(q * (1 - q) / R), 1 / R) + 1 / R


def test_two_classes_reduce_to_fishers_exact_test_and_mcnemar():
    from scipy.stats import fisher_exact

    from tablegen.compare import paired_test

    rng = np.random.default_rng(11)
    y = rng.integers(0, 2, size=40)
    a = np.where(rng.random(40) < 0.75, y, 1 - y)
    b = np.where(rng.random(40) < 0.6, y, 1 - y)
    report = evaluate_multiclass(y, {"a": a, "b": b}, C=2, metrics=["accuracy"])["accuracy"]
    for name, p in (("a", a), ("b", b)):
        table = [[np.sum((y == 1) & (p == 1)), np.sum((y == 1) & (p == 0))],
                 [np.sum((y == 0) & (p == 1)), np.sum((y == 0) & (p == 0))]]
        fisher = fisher_exact(table, alternative="greater").pvalue
        C = report.versus_random.C  # the two models given
        assert C == 2
        assert report.versus_random.tests[name].p_value == pytest.approx(1 - (1 - fisher) ** C, rel=1e-9)
    pair = report.versus_others.tests["a", "b"]
    binary = paired_test(y, a.astype(float), b.astype(float), method="mcnemar", alternative="greater")
    assert pair.method == "mcnemar" and pair.p_value == binary.p_value


@pytest.mark.parametrize("metric", ["kappa", "balanced_accuracy", "macro_f1"])
def test_swap_test_against_every_pattern(metric):
    true = [0, 0, 1, 1, 2, 2, 0, 1, 2]
    a = [0, 0, 1, 1, 2, 2, 1, 1, 0]
    b = [0, 1, 1, 0, 2, 1, 0, 1, 2]
    column = METRICS.index(metric)
    differ = [i for i in range(len(true)) if a[i] != b[i]]
    classes = len(set(true) | set(a) | set(b))
    observed = _exact_metrics(true, a, classes)[column] - _exact_metrics(true, b, classes)[column]
    reaching = 0
    for pattern in itertools.product((0, 1), repeat=len(differ)):
        x, z = list(a), list(b)
        for i, swap in zip(differ, pattern):
            if swap:
                x[i], z[i] = z[i], x[i]
        d = _exact_metrics(true, x, classes)[column] - _exact_metrics(true, z, classes)[column]
        reaching += d >= observed
    report = evaluate_multiclass(true, {"a": a, "b": b}, metrics=[metric])[metric]
    assert report.winner == "a"
    test = report.versus_others.tests["a", "b"]
    assert test.method == "permutation" and test.replicates is None
    assert test.p_value == pytest.approx(reaching / 2 ** len(differ), abs=1e-12)


@pytest.mark.parametrize("metric", METRICS)
def test_where_the_exact_law_is_cheap_the_verdict_is_multiclass_tests(metric):
    """Too many arrangements to enumerate (24! / 8!^3), a cheap exact law: each model's verdict is multiclass_test's
    own answer (the hits' law; the weighted diagonal's for balanced accuracy and macro-F1)."""
    import tablegen

    true = [0] * 8 + [1] * 8 + [2] * 8
    models = {"a": [0] * 7 + [1] + [1] * 6 + [2] * 2 + [2] * 7 + [0], "b": [0, 1, 2] * 8}
    assert tests.arrangement_count([8, 8, 8]) > tests.EXACT_ARRANGEMENTS
    report = evaluate_multiclass(true, models, metrics=[metric])[metric]
    for name, predicted in models.items():
        counts = np.bincount(predicted, minlength=3)
        assert tests.exact_seconds(metric, [8, 8, 8], counts) <= tests.EXACT_SECONDS
        alone = tablegen.multiclass_test(true, predicted, metric, C=2)
        assert report.versus_random.tests[name].p_value == alone.p_value
        assert report.versus_random.tests[name].method == alone.method


def test_the_weighted_law_is_not_costed_beyond_its_reach(monkeypatch):
    """Beyond WEIGHTED_ITEMS the weighted diagonal's cost estimate (itself a product of large rook polynomials) is
    never asked: the report would wait minutes for it."""
    from tablegen.compute.exact import multiclass_weighted

    def refuse(*args):
        raise AssertionError("weighted_seconds asked beyond WEIGHTED_ITEMS")

    monkeypatch.setattr(multiclass_weighted, "weighted_seconds", refuse)
    assert tests.exact_seconds("macro_f1", [1000] * 10, [900] * 5 + [1100] * 5) == float("inf")
    assert tests.exact_seconds("balanced_accuracy", [500, 1500], [900, 1100]) == float("inf")
