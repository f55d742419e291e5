"""The selection-aware max-T test against brute force: every label arrangement scored by the registry's scorers.

The references here enumerate the arrangements with itertools and score each model with the metric's
registry scorer (``score_groups`` over ``threshold_groups``), so the kernel, its enumeration order, the
step-down bookkeeping and the critical value are each checked against code that shares none of them.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from tablegen.compare import selection_test
from tablegen.compare.selection.engine import models_sorted, null_counts
from tablegen.compute.kernels.permutation import score_model
from tablegen.compute.kernels.ranking import BASE_COLUMNS, TP_COLUMN, mcc_weights
from tablegen.compute.metrics import get_metric
from tablegen.compute.metrics_from_scores import threshold_groups
from tablegen.errors import TablegenInputError

METRICS = ("auc", "best_accuracy", "best_f1", "best_balanced_accuracy", "average_precision", "best_mcc", "tp_at_3",
           "precision_at_4")
#: Metrics whose kernel value is one correctly rounded division of the same integers as the registry's scorer.
BIT_FOR_BIT = ("auc", "best_accuracy", "best_f1", "tp_at_3")


def _kernel_value(name, y, s):
    entry = get_metric(name).counted_entry()
    column = TP_COLUMN if entry.k is not None else BASE_COLUMNS.index(entry.kernel_column)
    sorted_models = models_sorted(np.asarray([s], float))
    P = int(y.sum())
    value = score_model(y.astype(np.uint8), sorted_models.orders[0], sorted_models.group_ends[0], P, column,
                        entry.k or 0, mcc_weights(P, y.size - P, y.size + 1))
    return value / get_metric(name).count_divisor(P, y.size - P)


@pytest.mark.parametrize("name", METRICS)
def test_the_kernel_scores_every_metric_as_the_registry_does_with_ties(name):
    rng = np.random.default_rng(7)
    checked = 0
    for _ in range(60):
        n = int(rng.integers(4, 30))
        y = np.zeros(n, int)
        y[rng.choice(n, int(rng.integers(1, n)), replace=False)] = 1
        s = rng.integers(0, int(rng.integers(2, 8)), n).astype(float)  # few distinct values: many ties
        try:
            expected = get_metric(name).score_groups(threshold_groups(y, s))
        except TablegenInputError:  # a tied group straddles k: the test leaves such a model out
            continue
        got = _kernel_value(name, y, s)
        checked += 1
        if name in BIT_FOR_BIT:
            assert got == expected
        else:
            assert got == pytest.approx(expected, rel=1e-13, abs=1e-15)
    assert checked >= 10


def test_auc_from_midranks_is_the_same_float_as_the_sorted_walk():
    from tablegen.compute.kernels.permutation import auc_from_ranks

    rng = np.random.default_rng(9)
    for _ in range(40):
        n = int(rng.integers(2, 40))
        y = np.zeros(n, np.uint8)
        y[rng.choice(n, int(rng.integers(1, n)), replace=False)] = 1
        scores = rng.integers(0, int(rng.integers(1, 6)), (1, n)).astype(float)
        s = models_sorted(scores)
        P = int(y.sum())
        walk = score_model(y, s.orders[0], s.group_ends[0], P, 0, 0, np.zeros(n + 1))
        assert auc_from_ranks(y, s.double_ranks[0], P) == walk


# -- brute force --------------------------------------------------------------------------------------------
def _arrangements(n, P):
    for positives in itertools.combinations(range(n), P):
        y = np.zeros(n, int)
        y[list(positives)] = 1
        yield y


def _brute(name, y, models, alpha):
    """Raw and step-down p-values, the max-T law and the critical value, by enumeration and the registry."""
    spec = get_metric(name)
    names = list(models)
    observed = np.array([spec.score_groups(threshold_groups(y, models[m])) for m in names])
    table = np.array([[spec.score_groups(threshold_groups(z, models[m])) for m in names]
                      for z in _arrangements(y.size, int(y.sum()))])
    M = table.shape[0]
    reach = table >= observed - 1e-9
    raw = reach.mean(axis=0)
    order = sorted(range(len(names)), key=lambda i: -observed[i])
    adjusted, running = {}, 0.0
    for j, i in enumerate(order):
        below = table[:, order[j:]].max(axis=1)
        running = max(running, float(np.mean(below >= observed[i] - 1e-9)))
        adjusted[names[i]] = running
    maxima = np.sort(table.max(axis=1))
    critical = maxima[math.ceil((1 - alpha) * M - 1e-9) - 1]
    return dict(zip(names, raw)), adjusted, maxima, critical


def _tied_models(rng, n, K, levels):
    base = rng.normal(size=n)
    return {f"m{i}": np.round((base + 0.7 * rng.normal(size=n)) * levels) / levels for i in range(K)}


@pytest.mark.parametrize("name", METRICS)
def test_exact_max_t_equals_enumerating_every_arrangement(name):
    rng = np.random.default_rng(3)
    y = np.array([1, 0, 1, 1, 0, 0, 1, 0, 0, 1])
    models = _tied_models(rng, y.size, 4, 8 if get_metric(name).k else 1)  # some ties, fewer at a cut-off k
    result = selection_test(y, models, metric=name, alpha=0.1)
    applicable = {m: s for m, s in models.items() if m not in result.not_applicable}
    raw, adjusted, _, critical = _brute(name, y, applicable, 0.1)
    assert result.method == "exact" and result.arrangements == math.comb(10, 5)
    for m in applicable:
        assert result.raw_p_values[m] == pytest.approx(raw[m], abs=1e-12)
        assert result.adjusted_p_values[m] == pytest.approx(adjusted[m], abs=1e-12)
    divisor = get_metric(name).count_divisor(5, 5)
    assert result.critical_value == pytest.approx(critical, abs=1e-9 / divisor)
    assert result.winner == max(applicable, key=lambda m: (result.values[m], -list(applicable).index(m)))


@pytest.mark.parametrize("name", METRICS)
def test_single_step_p_values_equal_enumerating_the_maximum_over_every_model(name):
    """Westfall–Young single-step max-T: p_j = Pr(max_k T_k >= t_j), the maximum over every arrangement."""
    rng = np.random.default_rng(7)
    y = np.array([1, 0, 0, 1, 1, 0, 1, 0, 1])
    models = _tied_models(rng, y.size, 4, 8 if get_metric(name).k else 2)
    result = selection_test(y, models, metric=name)
    applicable = {m: s for m, s in models.items() if m not in result.not_applicable}
    _, adjusted, maxima, _ = _brute(name, y, applicable, 0.05)
    spec = get_metric(name)
    for m, s in applicable.items():
        value = spec.score_groups(threshold_groups(y, s))
        expected = float(np.mean(maxima >= value - 1e-9))
        assert result.single_step_p_values[m] == pytest.approx(expected, abs=1e-12)
        assert result.single_step_p_intervals[m] == (result.single_step_p_values[m],) * 2
        assert result.single_step_p_values[m] >= adjusted[m] - 1e-12
    assert result.single_step_p_values[result.winner] == pytest.approx(result.p_value, abs=1e-15)


def test_single_step_p_values_take_the_models_not_given_and_the_permutation_estimate():
    rng = np.random.default_rng(5)
    y = np.array([1, 1, 0, 1, 0, 0, 0, 1, 0])
    models = {f"m{i}": y + rng.normal(size=9) for i in range(3)}
    alone = selection_test(y, models, metric="best_accuracy")
    law = np.array([get_metric("best_accuracy").score_groups(threshold_groups(z, np.arange(9, 0, -1)))
                    for z in _arrangements(9, 4)])
    more = selection_test(y, models, metric="best_accuracy", C=7)
    for m in models:
        below = np.mean(law < more.values[m] - 1e-9)
        assert more.single_step_p_values[m] == pytest.approx(1 - (1 - alone.single_step_p_values[m]) * below ** 4,
                                                             abs=1e-12)
    estimate = selection_test(y, models, metric="best_accuracy", method="permutation", R=20_000, seed=3)
    for m in models:
        low, high = estimate.single_step_p_intervals[m]
        assert low <= alone.single_step_p_values[m] <= high
    assert set(estimate.to_dict()["single_step_p_values"]) == set(models)


def test_models_not_given_join_the_maximum_through_the_metrics_exact_law():
    """C > K: Pr(max < t) = Pr(maxT < t) Pr(X < t)^(C - K), X's law by enumerating every ranking (untied)."""
    rng = np.random.default_rng(5)
    y = np.array([1, 1, 0, 1, 0, 0, 0, 1, 0])
    models = {f"m{i}": y + rng.normal(size=9) for i in range(3)}
    _, adjusted, maxima, _ = _brute("best_accuracy", y, models, 0.05)
    law = np.array([get_metric("best_accuracy").score_groups(threshold_groups(z, np.arange(9, 0, -1)))
                    for z in _arrangements(9, 4)])
    result = selection_test(y, models, metric="best_accuracy", C=7, alpha=0.05)
    t = result.values[result.winner]
    below = np.mean(law < t - 1e-9)
    expected = 1 - (1 - adjusted[result.winner]) * below ** 4
    assert result.p_value == pytest.approx(expected, abs=1e-12)
    # the critical value: smallest support point x with Pr(maxT <= x) Pr(X <= x)^4 >= 0.95
    support = np.unique(np.r_[maxima, law])
    cdf = [np.mean(maxima <= x + 1e-9) * np.mean(law <= x + 1e-9) ** 4 for x in support]
    assert result.critical_value == pytest.approx(support[np.argmax(np.array(cdf) >= 0.95)], abs=1e-12)


def test_the_law_of_a_competitor_not_given_is_asked_once_per_distinct_value(monkeypatch):
    """The fold of the C - K competitors asks X's law at each model's value once, shared by its step-down and
    single-step p-values (a bracketed law's query can take minutes: average precision at P = 600, N = 1,400)."""
    from tablegen.compare.selection import maxt

    rng = np.random.default_rng(5)
    y = np.array([1, 1, 0, 1, 0, 0, 0, 1, 0])
    models = {f"m{i}": y + rng.normal(size=9) for i in range(3)}
    models["copy"] = models["m0"].copy()  # the same value as m0: asked once for both
    asked = []
    real = maxt.null_tail_ge_bracket
    monkeypatch.setattr(maxt, "null_tail_ge_bracket",
                        lambda null, score, **within: asked.append(score) or real(null, score, **within))
    result = selection_test(y, models, metric="auc", C=7)
    values = set(result.values.values())
    assert len(values) == 3 and values <= set(asked) <= values | {result.critical_value}  # and the effective C's
    assert len(asked) == len(values) + 1  # was 2 per model (step-down and single-step) + 1


@pytest.mark.slow  # average precision's programme kernel (~6 s from a cold numba cache)
def test_a_bracketed_law_answers_the_whole_fold_from_one_prepared_pair(monkeypatch):
    """Average precision past enumeration (P, N = 20, 40): the critical value's search and the models' tails ask
    its bracketed law ~45 questions, each a pair of fine programmes; a dry run on the coarse programmes finds their
    span and one fine pair over it answers them all (2 coarse + 2 fine programmes), the same answers to 1e-12."""
    from tablegen.compare.selection import maxt
    from tablegen.compute.exact import average_precision as ap

    rng = np.random.default_rng(5)
    n, P = 60, 20
    y = np.r_[np.ones(P), np.zeros(n - P)]
    models = {f"m{j}": (0.3 + 0.4 * j) * y + rng.normal(size=n) for j in range(3)}
    ran = []
    real = ap._programme
    monkeypatch.setattr(ap, "_programme", lambda *args, **kwargs: ran.append(args[2]) or real(*args, **kwargs))
    prepared = selection_test(y, models, metric="average_precision", C=10)
    assert sorted(ran) == [ap.COARSE_GRID] * 2 + [ap.FINE_GRID] * 2
    ran.clear()
    monkeypatch.setattr(maxt, "_prepare", lambda null, questions, progress=None: None)
    plain = selection_test(y, models, metric="average_precision", C=10)
    assert len(ran) > 20  # what the dry run saves
    assert prepared.critical_value == plain.critical_value and prepared.critical_interval == plain.critical_interval
    assert prepared.effective_C == pytest.approx(plain.effective_C, rel=1e-12)
    for kind in ("adjusted_p_values", "single_step_p_values"):
        assert getattr(prepared, kind) == pytest.approx(getattr(plain, kind), abs=1e-12)
    for kind in ("adjusted_p_intervals", "single_step_p_intervals"):
        for m in models:
            assert getattr(prepared, kind)[m] == pytest.approx(getattr(plain, kind)[m], abs=1e-12)


def test_the_fold_is_refused_on_the_cost_of_its_whole_search_not_of_one_answer(monkeypatch):
    """The competitors not given cost a search's questions of their law (average precision past enumeration: two
    answers' worth); a time limit between one answer and the search refuses, naming C, before any programme."""
    from tablegen.compute.exact import average_precision as ap
    from tablegen.errors import ResourceLimitError

    P, N = 20, 40
    entry = get_metric("average_precision")
    one, search = entry.exact_cost(P, N)[0], entry.search_seconds(P, N)
    assert search == pytest.approx(ap.SEARCH_ANSWERS * one)
    monkeypatch.setenv("TABLEGEN_TIME_LIMIT", str(0.5 * (one + search)))
    monkeypatch.setattr(ap, "_programme", lambda *args, **kwargs: pytest.fail("a programme ran"))
    y = np.r_[np.ones(P), np.zeros(N)]
    rng = np.random.default_rng(5)
    models = {f"m{j}": y + rng.normal(size=P + N) for j in range(2)}
    with pytest.raises(ResourceLimitError, match=r"C\b.*|competitors not given"):
        selection_test(y, models, metric="average_precision", C=10)


def test_the_exact_test_holds_its_level_summed_over_every_arrangement():
    """Under the null every arrangement of the labels is equally likely: the share of arrangements on which
    the winner is declared significant is at most alpha (an exact sum, not a simulation)."""
    rng = np.random.default_rng(11)
    n, P = 9, 4
    models = _tied_models(rng, n, 3, 3)
    for alpha in (0.05, 0.2):
        rejected = [selection_test(z, models, metric="auc", alpha=alpha).significant for z in _arrangements(n, P)]
        assert np.mean(rejected) <= alpha + 1e-12
        assert np.mean(rejected) > 0  # the test can reject: it is not vacuous


def test_identical_models_are_worth_one_and_independent_ones_about_their_number():
    rng = np.random.default_rng(2)
    y = np.r_[np.ones(7), np.zeros(8)]
    s = rng.normal(size=15)  # untied: its label-permutation law is the metric's exact null
    copies = selection_test(y, {"a": s, "b": s.copy(), "c": s.copy()}, metric="auc")
    assert copies.effective_C == pytest.approx(1.0, abs=1e-9)
    assert copies.p_value == pytest.approx(copies.raw_p_values["a"], abs=1e-15)


def test_permutation_counts_do_not_depend_on_the_blocks(monkeypatch):
    import tablegen.compare.selection.engine as engine

    rng = np.random.default_rng(4)
    scores = rng.normal(size=(3, 40))
    sorted_models = models_sorted(scores)
    args = (sorted_models, 20, 0, 0, np.zeros(41), np.full(3, 0.6), np.arange(3))
    key = (np.uint64(12345), np.uint64(678))
    whole = null_counts(*args, exact=False, R=1000, key=key)
    monkeypatch.setattr(engine, "BLOCK", 77)
    pieces = null_counts(*args, exact=False, R=1000, key=key)
    assert np.array_equal(whole.maxima, pieces.maxima)
    assert np.array_equal(whole.raw_hits, pieces.raw_hits) and np.array_equal(whole.step_hits, pieces.step_hits)


def test_the_permutation_estimate_brackets_the_exact_answer():
    rng = np.random.default_rng(8)
    y = np.r_[np.ones(8), np.zeros(10)]
    models = {f"m{i}": y * 0.8 + rng.normal(size=18) for i in range(4)}
    exact = selection_test(y, models, metric="best_f1")
    estimate = selection_test(y, models, metric="best_f1", method="permutation", R=20_000, seed=1)
    assert estimate.method == "permutation" and estimate.R == 20_000
    for m in models:
        low, high = estimate.adjusted_p_intervals[m]
        assert low <= exact.adjusted_p_values[m] <= high
    low, high = estimate.critical_interval
    assert low <= exact.critical_value <= high
    again = selection_test(y, models, metric="best_f1", method="permutation", R=20_000, seed=1)
    assert again.to_dict() == estimate.to_dict()


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"C": 1}, "C = 1 is less than the 2 models given"),
    ({"method": "fast"}, "method must be one of"),
    ({"R": 100}, "R applies to a permutation test"),
    ({"metric": "tp_at_2"}, "tp_at_2 is not defined for any model"),
    ({"metric": "nope"}, "unknown metric"),
    ({"alpha": 1.5}, "alpha"),
])
def test_bad_arguments_are_refused_naming_them(kwargs, message):
    y = np.array([1, 0, 1, 0, 0])
    models = {"a": [0.9, 0.5, 0.5, 0.5, 0.1], "b": [0.8, 0.5, 0.5, 0.5, 0.2]}
    with pytest.raises(TablegenInputError, match=message):
        selection_test(y, models, **kwargs)


def test_an_exact_null_over_budget_is_refused_when_asked_for():
    y = np.r_[np.ones(30), np.zeros(30)]
    with pytest.raises(TablegenInputError, match="over the exact budget") as refused:
        selection_test(y, {"a": np.arange(60.0)}, method="exact")
    assert "--method permutation" in refused.value.option_message()


def test_doubled_midranks_are_twice_scipys_average_ranks():
    from scipy.stats import rankdata

    rng = np.random.default_rng(12)
    for levels in (2, 5, 40, None):  # heavy ties to none
        scores = rng.normal(size=(4, 37)) if levels is None else rng.integers(0, levels, size=(4, 37)) / 7.0
        expected = np.rint(2 * rankdata(scores, method="average", axis=1)).astype(np.int64)
        assert np.array_equal(models_sorted(scores).double_ranks, expected)


def test_exact_fits_decides_as_the_whole_binomial_coefficient_does():
    """Past 19 items of the smaller class C(n, P) >= 2^20 exceeds the budget, decided without the big integer (at
    10^6 items with 3 x 10^5 positives, computing C(n, P) took 2.4 s, five times in a report)."""
    import math

    from tablegen.compare.selection.engine import EXACT_ARRANGEMENTS, EXACT_STEPS, exact_fits

    for n in list(range(1, 60)) + [100, 1000, 10**5]:
        for P in sorted({0, 1, 2, 5, 10, 19, 20, 21, n // 3, n // 2, n - 20, n - 19, n - 1, n}):
            if 0 <= P <= n:
                count = math.comb(n, P)
                for models in (1, 10, 1000):
                    expected = count <= EXACT_ARRANGEMENTS and count * n * models <= EXACT_STEPS
                    assert exact_fits(n, P, models) == expected, (n, P, models)
