"""McDiarmid's bound on the exact swap-permutation p-value (:mod:`tablegen.compute.swap_bounds`): each
bounded-difference constant checked by brute force with the registry's scorers (the largest change over every
single-item move: exhaustively at n = 4, on random data, and on the adversarial data where the constant is
reached), and the bound checked against the exact p-value over every swap pattern."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.stats import rankdata

from tablegen.compare.pairwise.tests import swap_nulls
from tablegen.compute.kernels.ranking import BASE_COLUMNS
from tablegen.compute.metrics import get_metric
from tablegen.compute.metrics_from_scores import threshold_groups
from tablegen.compute.swap_bounds import bounded_metrics, item_constants, swap_p_bound

KEY = (np.uint64(11), np.uint64(12))


def _value(metric, y, s):
    return float(get_metric(metric).score_groups(threshold_groups(y, s)))


def _largest_moves(metric, y, s):
    """Per item, the largest change of the metric over moving that item to every score position (below, at and
    between the other scores, above)."""
    base = _value(metric, y, s)
    levels = np.unique(s)
    targets = np.r_[levels, (levels[:-1] + levels[1:]) / 2, levels[0] - 1, levels[-1] + 1]
    worst = np.zeros(y.size)
    for i, t in itertools.product(range(y.size), targets):
        moved = s.copy()
        moved[i] = t
        worst[i] = max(worst[i], abs(_value(metric, y, moved) - base))
    return worst


@pytest.mark.parametrize("metric", bounded_metrics())
def test_the_constants_bound_every_single_item_move_exhaustively_at_four_items(metric):
    """Every label vector with both classes and every score vector over three values (ties included) of 4 items,
    each item moved to every position: no change exceeds its c_i."""
    largest = 0.0
    for labels in itertools.product((0, 1), repeat=4):
        y = np.array(labels)
        if y.min() == y.max():
            continue
        c = item_constants(metric, y)
        for scores in itertools.product((0.0, 1.0, 2.0), repeat=4):
            moves = _largest_moves(metric, y, np.array(scores))
            assert np.all(moves <= c + 1e-12), (labels, scores, moves, c)
            largest = max(largest, float(np.max(moves / c)))
    assert largest > 0.99  # and reached


@pytest.mark.parametrize("metric", bounded_metrics())
def test_the_constants_bound_every_move_on_random_data_with_ties(metric):
    rng = np.random.default_rng(31)
    for n, P in ((12, 3), (15, 9), (20, 10)):
        y = np.r_[np.ones(P, int), np.zeros(n - P, int)]
        for scores in (y + rng.normal(size=n), np.round(rng.normal(size=n), 0), rng.normal(size=n) - y):
            assert np.all(_largest_moves(metric, y, scores) <= item_constants(metric, y) + 1e-12)


@pytest.mark.parametrize(("metric", "labels", "scores", "item", "to", "change"), [
    ("best_accuracy", [1, 1, 0, 0], [4.0, 3, 2, 1], 0, 0.0, 1 / 4),  # the top positive to the bottom: 1/n
    ("best_balanced_accuracy", [1, 0, 0, 0], [4.0, 3, 2, 1], 0, 0.0, 1 / 2),  # 1/(2P), P = 1
    ("best_balanced_accuracy", [1, 1, 1, 0], [4.0, 3, 2, 1], 3, 5.0, 1 / 2),  # 1/(2N), N = 1
    ("auc", [1, 1, 0, 0, 0], [5.0, 4, 3, 2, 1], 0, 0.0, 1 / 2),  # 1/P
    ("best_f1", [0, 0, 0, 1, 1, 1], [0.0, 1, 2, 3, 4, 5], 0, 6.0, 1 / 7),  # 1/(2P + 1): a negative to the top
    ("best_f1", [1, 0, 0, 0, 0, 0], [0.0, 5, 4, 3, 2, 1], 0, 6.0, 5 / 7),  # a positive to the top: 1 - f0, c = 1
])
def test_adversarial_moves_stay_within_and_near_the_constants(metric, labels, scores, item, to, change):
    """The constants are reached (best F1's for a positive within 1 - f0 = 5/7 of it at P = 1, N = 5)."""
    y, s = np.array(labels), np.array(scores)
    moved = s.copy()
    moved[item] = to
    found = abs(_value(metric, y, moved) - _value(metric, y, s))
    c = item_constants(metric, y)[item]
    assert found == pytest.approx(change) and found <= c + 1e-12 and change >= 5 / 7 * c - 1e-12


def _exact_p(metric, y, a, b, observed, alternative):
    differences, exact = swap_nulls(y, a, b, [BASE_COLUMNS.index(metric)], 0, R=1, key=KEY)
    assert exact
    d = differences[0]
    if alternative == "greater":
        return np.mean(d >= observed - 1e-9)
    if alternative == "less":
        return np.mean(d <= observed + 1e-9)
    return np.mean(np.abs(d) >= abs(observed) - 1e-9)


@pytest.mark.parametrize("metric", bounded_metrics())
def test_the_bound_is_at_least_the_exact_p_value_over_every_pattern(metric):
    """At n = 14 (2^14 patterns): strong, weak and no separation, ties; every alternative.  The bound is never
    below the exact p, and says something (< 1) in some cases."""
    rng = np.random.default_rng(32)
    informative = 0
    for trial in range(12):
        P = int(rng.integers(3, 11))
        y = np.r_[np.ones(P, int), np.zeros(14 - P, int)]
        lift = (4.0, 1.0, 0.0)[trial % 3]
        a, b = lift * y + rng.normal(size=14), np.round(rng.normal(size=14), trial % 2)
        ranks_a, ranks_b = rankdata(a) / 14, rankdata(b) / 14
        observed = _value(metric, y, a) - _value(metric, y, b)
        for alternative in ("greater", "less", "two-sided"):
            bound = swap_p_bound(metric, y, ranks_a, ranks_b, observed, alternative, 1e-9)
            assert _exact_p(metric, y, a, b, observed, alternative) <= bound
            informative += bound < 1
    assert informative > 0


def test_no_constant_no_bound_and_the_sides():
    y = np.r_[np.ones(50), np.zeros(50)]
    r = np.arange(100.0)
    for metric in ("average_precision", "best_mcc", "tp_at_10"):
        assert item_constants(metric, y) is None and swap_p_bound(metric, y, r, r[::-1], 0.9, "greater", 0) == 1
    one = swap_p_bound("best_accuracy", y, r, r[::-1], 0.3, "greater", 1e-9)
    assert one == pytest.approx(np.exp(-2 * (0.3 - 1e-9 - 1e-12) ** 2 / (100 * (2 / 100) ** 2)))
    assert swap_p_bound("best_accuracy", y, r, r[::-1], -0.3, "less", 1e-9) == one
    assert swap_p_bound("best_accuracy", y, r, r[::-1], -0.3, "two-sided", 1e-9) == pytest.approx(2 * one)
    same = r.copy()
    same[:50] = r[::-1][:50]  # half the items have equal ranks in both models: they do not count
    assert swap_p_bound("best_accuracy", y, same, r[::-1], 0.3, "greater", 1e-9) == pytest.approx(
        np.exp(-2 * (0.3 - 1e-9 - 1e-12) ** 2 / (50 * (2 / 100) ** 2)))
