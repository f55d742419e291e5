"""The swap-permutation kernel that sorts once (:func:`tablegen.compute.kernels.swaps.swap_differences`) against
the kernel it replaced, which sorted both swapped vectors of every pattern (kept here as the oracle, unchanged but
for its name): the same patterns give the same differences, bit for bit, for every metric the swap test serves."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import rankdata

from tablegen.compute.kernels.jit import jit_cached
from tablegen.compute.kernels.permutation import score_model
from tablegen.compute.kernels.ranking import BASE_COLUMNS, mcc_weights
from tablegen.compute.kernels.rng import replicate_state, xoshiro_next
from tablegen.compute.kernels.swaps import swap_differences, swap_order

#: Every kernel column the swap test serves (tp_at_k's is refused: swaps tie items across its cut-off).
COLUMNS = np.arange(len(BASE_COLUMNS), dtype=np.int64)
KEY = (np.uint64(0x1234_5678_9ABC_DEF0), np.uint64(0x0FED_CBA9_8765_4321))


@jit_cached()
def _value(values, labels, n_pos, column, k_cut, weights):
    order = np.argsort(-values, kind="mergesort")
    n = values.size
    ends = np.ones(n, np.uint8)
    for j in range(n - 1):
        ends[j] = 1 if values[order[j]] != values[order[j + 1]] else 0
    return score_model(labels, order, ends, n_pos, column, k_cut, weights)


@jit_cached()
def sorting_swap_differences(ranks_a, ranks_b, labels, n_pos, column, k_cut, weights, exact, key0, key1, first, out):
    """The kernel before sorting once (tablegen 2026-11-28, ``swap_differences``): both vectors argsorted per
    pattern."""
    n = ranks_a.size
    a = np.empty(n)
    b = np.empty(n)
    flags = np.empty(n, np.uint8)
    for row in range(out.size):
        pattern = first + row
        if exact:
            for i in range(n):
                flags[i] = (pattern >> i) & 1
        else:
            s0, s1, s2, s3 = replicate_state(key0, key1, pattern)
            word = np.uint64(0)
            for i in range(n):
                if i % 64 == 0:
                    word, s0, s1, s2, s3 = xoshiro_next(s0, s1, s2, s3)
                flags[i] = np.uint8((word >> np.uint64(i % 64)) & np.uint64(1))
        for i in range(n):
            if flags[i]:
                a[i] = ranks_b[i]
                b[i] = ranks_a[i]
            else:
                a[i] = ranks_a[i]
                b[i] = ranks_b[i]
        out[row] = (_value(a, labels, n_pos, column, k_cut, weights)
                    - _value(b, labels, n_pos, column, k_cut, weights))


def _case(n, levels, seed):
    """Labels (both classes) and two models' midranks over n, tied scores where ``levels`` is small."""
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.4).astype(np.uint8)
    y[0], y[-1] = 1, 0
    a = np.round((y + rng.normal(size=n)) * levels)
    b = np.round((0.5 * y + rng.normal(size=n)) * levels)
    b[: n // 5] = a[: n // 5]  # some items with one value in both models
    return y, rankdata(a) / n, rankdata(b) / n


def _both(y, ra, rb, exact, first, count):
    n, P = y.size, int(y.sum())
    weights = mcc_weights(P, n - P, n + 1)
    new = np.empty((COLUMNS.size, count))
    swap_differences(*swap_order(ra, rb), y, P, COLUMNS, 0, weights, exact, KEY[0], KEY[1], first, new)
    old = np.empty((COLUMNS.size, count))
    for c in COLUMNS:
        sorting_swap_differences(ra, rb, y, P, c, 0, weights, exact, KEY[0], KEY[1], first, old[c])
    return new, old


@pytest.mark.parametrize("n, levels", [(2, 1.0), (9, 1.0), (12, 2.0), (16, 0.5), (16, 1e6)])
def test_every_exact_pattern_gives_the_sorting_kernels_differences_bit_for_bit(n, levels):
    y, ra, rb = _case(n, levels, seed=n)
    new, old = _both(y, ra, rb, True, 0, 2 ** n)
    assert np.array_equal(new, old)


@pytest.mark.parametrize("n, levels, first", [(17, 1.0, 0), (64, 2.0, 5), (65, 0.5, 0), (130, 3.0, 10 ** 9),
                                              (1000, 4.0, 77), (1000, 1e6, 0)])
def test_random_patterns_give_the_sorting_kernels_differences_bit_for_bit(n, levels, first):
    y, ra, rb = _case(n, levels, seed=n + 1)
    new, old = _both(y, ra, rb, False, first, 300)
    assert np.array_equal(new, old)
    assert np.unique(new[2]).size > 5  # the patterns differ: a real comparison, not one value repeated


def test_one_model_all_tied_and_equal_models():
    y = np.array([1, 0, 1, 0, 0, 1, 0, 1, 1, 0, 0, 0, 1, 0, 1, 0, 0, 1, 0, 1], np.uint8)
    flat = rankdata(np.zeros(20)) / 20
    ranks = rankdata(np.arange(20.0) % 7) / 20
    for ra, rb in ((flat, ranks), (ranks, flat), (ranks, ranks)):
        new, old = _both(y, ra, rb, False, 3, 200)
        assert np.array_equal(new, old)
    new, _ = _both(y, ranks, ranks, False, 0, 50)
    assert not new.any()  # a model against itself: every difference 0


def test_the_merged_order_is_descending_with_ties_by_item():
    items, sources, values = swap_order(np.array([0.25, 0.75, 0.75]), np.array([0.75, 0.25, 0.5]))
    assert values.tolist() == [0.75, 0.75, 0.75, 0.5, 0.25, 0.25]
    assert items.tolist() == [0, 1, 2, 2, 0, 1]
    assert sources.tolist() == [1, 0, 0, 1, 0, 1]


def test_a_block_of_patterns_is_the_same_whatever_the_split():
    y, ra, rb = _case(300, 2.0, seed=9)
    n, P = y.size, int(y.sum())
    merged, weights = swap_order(ra, rb), mcc_weights(P, n - P, n + 1)
    whole, part = np.empty((COLUMNS.size, 100)), np.empty((COLUMNS.size, 40))
    swap_differences(*merged, y, P, COLUMNS, 0, weights, False, KEY[0], KEY[1], 0, whole)
    swap_differences(*merged, y, P, COLUMNS, 0, weights, False, KEY[0], KEY[1], 60, part)
    assert np.array_equal(whole[:, 60:], part)
    one = np.empty((1, 100))
    swap_differences(*merged, y, P, COLUMNS[2:3], 0, weights, False, KEY[0], KEY[1], 0, one)
    assert np.array_equal(one[0], whole[2])  # a metric's null is the same alone or beside the others


def test_swap_order_merges_the_two_orders_as_one_stable_sort_would():
    """The merge of the two models' own orders (each sorted once per report) against a stable sort of the 2n values
    by (-value, item): ties within and across the models, equal vectors, one item, none."""
    rng = np.random.default_rng(29)
    for n in (0, 1, 2, 7, 300):
        for case in range(12):
            a = rng.integers(0, 4, n).astype(float) if case % 2 else rng.normal(size=n)
            b = a.copy() if case % 5 == 0 else (rng.integers(0, 4, n).astype(float) if case % 3 else rng.normal(size=n))
            values = np.concatenate([a, b])
            items = np.concatenate([np.arange(n), np.arange(n)])
            order = np.lexsort((items, -values))
            got = swap_order(a, b)
            assert np.array_equal(got[0], items[order]) and np.array_equal(got[1], order >= n)
            assert np.array_equal(got[2], values[order])
