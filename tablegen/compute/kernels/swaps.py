"""Paired permutation kernel: two models' scores swapped item by item, the metric difference of each pattern.

Under "the two models are exchangeable on every item", swapping the two models' values on any subset of
the items gives an equally likely outcome.  Each swap pattern is a 0/1 flag per item: pattern ``p`` of an
exact enumeration is the bits of ``p`` (item i swapped iff bit i is set, n <= 62); replicate r of a random
run draws its flags from its own xoshiro256** stream (:func:`~tablegen.compute.kernels.rng.replicate_state`
of the question's key and r; 64 flags per output), so any split into blocks gives the same patterns.  The key
holds neither the metric nor the pair, so one pattern serves every metric of a pair: :func:`swap_differences` scores
several metrics on each pattern it builds.

The values swapped are each model's within-model ranks (midranks over n: ties kept, scales made alike);
every metric depends on a model's scores only through their order, so each model's observed value is
unchanged.  A pattern's two swapped vectors (A' takes item i's a-value, or its b-value when i is swapped;
B' the other) are each scored in descending order, ties in item order (the threshold groups of
:mod:`tablegen.compute.metrics_from_scores`), by :func:`~tablegen.compute.kernels.permutation.score_model`
(whose walks close tie groups by selects: the swapped midranks of untied scores tie at random, where a branch
mispredicted); ``out[c, r]`` is metric(A') - metric(B') of column ``columns[c]``.

Sorting once: the 2n values (a_i, b_i) are merged into one descending order, ties by item index
(:func:`swap_order`: each model's own order, sorted once per report, merged in O(n)). A pattern sends each entry to
A' or B' (an a-value to A' unless its item is swapped, a b-value to A' only if it is), and a subsequence of a
sorted sequence is sorted, so one walk along the merged order lays out both vectors' items in their own sorted
orders, and their tie groups (an item ends a group where the next item of its side has another value): O(n) per
pattern, where sorting both vectors cost O(n log n). The walk writes each side's labels in its order, which
``score_model`` reads through the identity order; it sums the same labels in the same order as a walk through the
sorted items, so every difference is the one sorting each pattern gave, bit for bit
(``tests/compute/test_swaps.py`` checks it against that kernel; ``tests/compare/test_pairwise.py`` checks the
differences against the registry's scorers on every pattern of small cases).
"""

import numba as nb
import numpy as np

from tablegen.compute.kernels.jit import jit_cached
from tablegen.compute.kernels.orders import descending_order
from tablegen.compute.kernels.permutation import cutoff_value, f1_reciprocals, grown_cutoffs, score_model
from tablegen.compute.kernels.rng import replicate_state, xoshiro_next

_ONE = np.uint64(1)


def swap_order(ranks_a: np.ndarray, ranks_b: np.ndarray, orders=None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The two models' 2n values in one descending order, ties by item index: (items, sources, values), the
    source 0 for model a's value and 1 for model b's.  ``orders``: each vector's descending order with ties by item
    (:func:`~tablegen.compute.kernels.orders.descending_order`: of the scores the ranks were computed from, which
    order alike), computed if None.

    Examples
    --------
    >>> items, sources, values = swap_order(np.array([0.5, 1.0]), np.array([1.0, 0.5]))
    >>> items.tolist(), sources.tolist(), values.tolist()
    ([0, 1, 0, 1], [1, 0, 0, 1], [1.0, 1.0, 0.5, 0.5])
    """
    ranks_a, ranks_b = (np.ascontiguousarray(r, dtype=np.float64) for r in (ranks_a, ranks_b))
    n = ranks_a.size
    items, sources, values = np.empty(2 * n, np.int64), np.empty(2 * n, np.uint8), np.empty(2 * n)
    order_a, order_b = (descending_order(ranks_a), descending_order(ranks_b)) if orders is None else orders
    # each side's values gathered in its order first: the merge then reads four arrays in sequence (at 10^6 items
    # reading through the orders cost a cache miss a value, 61 ms a pair)
    _merge_descending(ranks_a[order_a], order_a, ranks_b[order_b], order_b, items, sources, values)
    return items, sources, values


@jit_cached(nogil=True)
def _merge_descending(sorted_a, order_a, sorted_b, order_b, items, sources, values):
    """Merge two descending orders (ties by item) into one, ties by item and then a before b: what a stable sort of
    the 2n values by (-value, item) gives (each model's order sorted once per report: ``kernels.orders``);
    ``sorted_a`` is a's values in a's order (``values_a[order_a]``), ``sorted_b`` likewise."""
    n = sorted_a.size
    i = j = 0
    for e in range(2 * n):
        if j == n:
            take_a = True
        elif i == n:
            take_a = False
        else:
            va, vb = sorted_a[i], sorted_b[j]
            take_a = va > vb or (va == vb and order_a[i] <= order_b[j])
        if take_a:
            items[e], sources[e], values[e] = order_a[i], 0, sorted_a[i]
            i += 1
        else:
            items[e], sources[e], values[e] = order_b[j], 1, sorted_b[j]
            j += 1


@nb.njit(inline="always", nogil=True)
def _flags(exact, key0, key1, pattern, flags):
    """Pattern ``pattern``'s swap flag per item: its bits when ``exact``, else its replicate's stream."""
    n = flags.size
    if exact:
        for i in range(n):
            flags[i] = (pattern >> i) & 1
    else:
        s0, s1, s2, s3 = replicate_state(key0, key1, pattern)
        word = np.uint64(0)
        for i in range(n):
            if i % 64 == 0:
                word, s0, s1, s2, s3 = xoshiro_next(s0, s1, s2, s3)
            flags[i] = np.uint8((word >> np.uint64(i % 64)) & _ONE)


@nb.njit(inline="always", nogil=True)
def _split(items, sources, values, entry_labels, flags, sorted_labels, bounds):
    """Walk the merged order once: side 0 (A') gets its labels in sorted order in ``sorted_labels[0:n]``, side 1
    (B') in ``sorted_labels[n + 1:2n + 1]``; ``bounds`` at the same offsets plus one is 1 where the side's item
    ends a tie group (``bounds[0]`` and ``bounds[n + 1]`` compare with NaN: slots no one reads).  One flat array
    per output and unsigned fills: no wrap-around test on the indices (2.1x faster than a (2, n) array with signed
    ones, benchmarks/README.md)."""
    n = flags.size
    fill0 = np.uint64(0)
    fill1 = np.uint64(n + 1)
    last0 = np.nan
    last1 = np.nan
    for e in range(2 * n):  # selects, not branches: a random pattern's sides are unpredictable (2.5x faster)
        v = values[e]
        side = sources[e] ^ flags[items[e]]
        fill = fill1 if side else fill0
        sorted_labels[fill] = entry_labels[e]
        bounds[fill] = (last1 if side else last0) != v
        last0 = last0 if side else v
        last1 = v if side else last1
        fill0 += np.uint64(1 - side)
        fill1 += np.uint64(side)
    bounds[n] = 1
    bounds[2 * n + 1] = 1


@jit_cached(nogil=True)
def swap_differences(items, sources, values, labels, n_pos, columns, k_cut, weights, exact, key0, key1, first, out):
    """metric(A') - metric(B') of each kernel column ``columns[c]`` into ``out[c, r]``, for patterns ``first ..
    first + out.shape[1] - 1`` (their bits when ``exact``, else replicates of ``key``); ``items``, ``sources``,
    ``values`` the merged order of :func:`swap_order`, ``labels`` in item order."""
    n = labels.size
    entry_labels = np.empty(2 * n, np.uint8)
    entry_items = np.empty(2 * n, np.uint32)  # unsigned: no wrap-around test where the walk reads a flag
    for e in range(2 * n):
        entry_labels[e] = labels[items[e]]
        entry_items[e] = items[e]
    identity = np.arange(n).astype(np.uint32)
    flags = np.empty(n, np.uint8)
    sorted_labels = np.empty(2 * n + 2, np.uint8)
    bounds = np.empty(2 * n + 2, np.uint8)
    cut_tp = np.empty(n, np.int64)
    cut_k = np.empty(n, np.int64)
    reciprocals = f1_reciprocals(n_pos, n)
    side_values = np.empty((2, columns.size))
    threshold_columns = 0
    for c in range(columns.size):
        threshold_columns += 1 if 1 <= columns[c] <= 5 else 0
    for row in range(out.shape[1]):
        _flags(exact, key0, key1, first + row, flags)
        _split(entry_items, sources, values, entry_labels, flags, sorted_labels, bounds)
        for side in range(2):
            start = side * (n + 1)
            _score_side(sorted_labels[start:start + n], identity, bounds[start + 1:start + n + 1], n_pos, columns,
                        k_cut, weights, threshold_columns, cut_tp, cut_k, reciprocals, side_values[side])
        for c in range(columns.size):
            out[c, row] = side_values[0, c] - side_values[1, c]


@nb.njit(inline="always", nogil=True)
def _score_side(labels, identity, ends, n_pos, columns, k_cut, weights, threshold_columns, cut_tp, cut_k, reciprocals,
                values):
    """One side's value of each column: with two or more threshold columns (best accuracy, F1, balanced accuracy,
    average precision, MCC), one walk keeps the cut-offs where TP grew and each is read from them (the max-T
    kernels' fused walk, :func:`~tablegen.compute.kernels.permutation.cutoff_value`: the floats
    :func:`~tablegen.compute.kernels.permutation.score_model` gives, bit for bit); else, and for AUC and TP at k,
    ``score_model``'s own walk."""
    count = 0
    if threshold_columns >= 2:
        count = grown_cutoffs(labels, identity, ends, False, cut_tp, cut_k)
    for c in range(columns.size):
        column = columns[c]
        if threshold_columns >= 2 and 1 <= column <= 5:
            values[c] = cutoff_value(column, cut_tp, cut_k, count, labels.size, n_pos, k_cut, ends, weights,
                                     reciprocals)
        else:
            values[c] = score_model(labels, identity, ends, n_pos, column, k_cut, weights)
