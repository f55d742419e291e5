"""The K-class report's bootstrap, jackknife and swap kernels of the probability metrics (Hand–Till AUC,
one-vs-rest macro AUC, top-k accuracy), several models at once; the label permutations and the enumeration are
:mod:`tablegen.compute.kernels.multiclass_scores`' (which imports these three kernels, so they are importable from
there as before).  Columns of their ``out``: Hand–Till AUC, one-vs-rest macro AUC, then top-k accuracy for each of
the J requested k.

- :func:`stratified_score_resamples`: the stratified bootstrap of the report (each true class's items drawn with
  replacement, the draws of :func:`~tablegen.compute.kernels.multiclass_resample.stratified_resamples`: under the
  same key resample r holds the same items for the label metrics and these), each item weighted by how often it
  was drawn; the AUCs from weighted pair counts along each column's fixed order (:func:`_weighted_pairs`).
- :func:`score_left_out`: each model's values with one item left out (the BCa jackknife), from the pair counts
  and each item's share of them: O(n K^2) a model.
- :func:`linear_swap_differences`: two models' probability rows swapped item by item, the difference A' - B' of
  every column as the Rademacher sum of the items' influences (linear in the swap flags).

Pair counts: ``acc[i, c]`` = 2 U(i|c), twice the (i-labelled, c-labelled) pairs ordered right by column i (ties
1/2), exact integers; Hand–Till and one-vs-rest from them in a fixed order (:func:`_auc_pair`):
AUC_c = (sum over b != c of acc[c, b]) / (2 n_c (n - n_c)), the same integer as the rank sum's S_c - n_c (n_c + 1).
Every sum is taken in a fixed order, each addition rounded on its own: the CUDA twins
(:mod:`tablegen.compute.kernels.cuda.multiclass_scores_resample`) give the same doubles.
"""

import numba as nb
import numpy as np

from tablegen.compute.kernels.jit import jit_cached
from tablegen.compute.kernels.ranking import draw_below
from tablegen.compute.kernels.rng import replicate_state, xoshiro_next

_U1 = np.uint64(1)


@nb.njit(nogil=True)
def untied_columns(group_last):
    """(M, K): whether each model's column has no tie (``group_last`` (M, K, n), each position's last tied position).

    Examples
    --------
    >>> untied_columns(np.array([[[0, 1, 2], [1, 1, 2]]])).tolist()
    [[True, False]]
    """
    M, K, n = group_last.shape
    out = np.ones((M, K), np.bool_)
    for m in range(M):
        for i in range(K):
            for p in range(n):
                if group_last[m, i, p] != p:
                    out[m, i] = False
                    break
    return out


@nb.njit(inline="always", nogil=True)
def _auc_pair(acc, counts, n):
    """(Hand–Till, one-vs-rest macro) from the doubled pair counts ``acc`` and the class counts (NaN where a class
    has no items)."""
    K = counts.size
    for c in range(K):
        if counts[c] == 0:
            return np.nan, np.nan
    total = 0.0
    for i in range(K):
        for j in range(i + 1, K):
            total += (acc[i, j] + acc[j, i]) / (4.0 * counts[i] * counts[j])
    ovr = 0.0
    for c in range(K):
        right = 0
        for b in range(K):
            if b != c:
                right += acc[c, b]
        ovr += right / (2.0 * counts[c] * (n - counts[c]))
    return total / (K * (K - 1) // 2), ovr / K


@nb.njit(inline="always", nogil=True)
def _weighted_pairs(weights, labels_along, orders, group_last, untied, acc):
    """``acc`` (K, K) the doubled pair counts of the items weighted by ``weights`` (a bootstrap resample's draw
    counts): each column i walked from the top along its fixed order, ``labels_along[i, p]`` the label of the item
    at position p (``above``: twice the weight of the i-labelled items above); a column without ties
    (``untied[i]``) without reading its tie groups."""
    K, n = orders.shape
    acc[:, :] = 0
    for i in range(K):
        above = 0
        if untied[i]:
            row = acc[i]
            column = orders[i]
            labels = labels_along[i]
            for p in range(n):
                w = weights[column[p]]
                c = labels[p]
                row[c] += w * above
                above += 2 * w * (c == i)
            continue
        p = 0
        while p < n:
            last = group_last[i, p]
            if last == p:  # branch-free: a third of the items are not drawn (w = 0)
                w = weights[orders[i, p]]
                c = labels_along[i, p]
                acc[i, c] += w * above
                above += 2 * w * (c == i)
                p += 1
            else:
                tied = 0
                for q in range(p, last + 1):
                    if labels_along[i, q] == i:
                        tied += weights[orders[i, q]]
                for q in range(p, last + 1):
                    acc[i, labels_along[i, q]] += weights[orders[i, q]] * (above + tied)
                above += 2 * tied
                p = last + 1


@jit_cached(nogil=True)
def stratified_score_resamples(order, starts, codes, labels_along, orders, group_last, credit_true, counts, key0,
                               key1, first, out):
    """Bootstrap resamples ``first .. first + out.shape[0] - 1``, stratified by true class: ``out[r, m]`` model m's
    columns on resample r.

    ``order`` lists the items grouped by true class (class k's are ``order[starts[k]:starts[k + 1]]``), the draws
    those of :func:`~tablegen.compute.kernels.multiclass_resample.stratified_resamples`; ``labels_along`` (M, K, n)
    the true label at each position of each model's column orders; ``credit_true`` (M, J, n) each item's top-k
    credit at its true class.

    Examples
    --------
    >>> from tablegen.compute.multiclass_scores import score_tables
    >>> P = np.array([[0.9, 0.1], [0.6, 0.4], [0.3, 0.7], [0.2, 0.8]])  # ranked right: every resample scores 1
    >>> codes = np.array([0, 0, 1, 1], np.int32)
    >>> _, orders, last, credit = score_tables(P, k=1)
    >>> out = np.empty((3, 1, 3))
    >>> stratified_score_resamples(np.arange(4), np.array([0, 2, 4]), codes, codes[orders][None], orders[None],
    ...                            last[None], credit[np.arange(4), codes][None, None], np.array([2, 2]),
    ...                            np.uint64(1), np.uint64(2), 0, out)
    >>> out[:, 0].tolist() == [[1.0, 1.0, 1.0]] * 3
    True
    """
    K = counts.size
    M = orders.shape[0]
    J = credit_true.shape[1]
    n = order.size
    weights = np.zeros(n, np.int32)  # draw counts (< 2**31 items): a narrow gather in the walks
    acc = np.empty((K, K), np.int64)
    untied = untied_columns(group_last)
    for row in range(out.shape[0]):
        s0, s1, s2, s3 = replicate_state(key0, key1, first + row)
        weights[:] = 0
        for k in range(K):
            size = starts[k + 1] - starts[k]
            for _ in range(size):
                j, s0, s1, s2, s3 = draw_below(np.uint64(size), s0, s1, s2, s3)
                weights[order[starts[k] + j]] += 1
        for m in range(M):
            _weighted_pairs(weights, labels_along[m], orders[m], group_last[m], untied[m], acc)
            out[row, m, 0], out[row, m, 1] = _auc_pair(acc, counts, n)
            for j in range(J):
                top_k = 0.0
                for i in range(n - 1, -1, -1):
                    top_k += weights[i] * credit_true[m, j, i]
                out[row, m, 2 + j] = top_k / n


@jit_cached(nogil=True)
def score_left_out(codes, labels_along, orders, group_last, credit_true, counts, out):
    """``out[m, q]`` model m's columns with item q left out (the jackknife of the bootstrap's BCa; NaN AUCs where q
    is its class's only item).

    Item q of label y takes part in row y of the pair counts (as the higher-ranked item in column y: twice the
    b-labelled items below it plus those tied, for each b) and in column y of them (in each column a != y: twice the
    a-labelled items above it plus those tied); both shares come from one walk of each column.

    Examples
    --------
    >>> from tablegen.compute.multiclass_scores import score_tables
    >>> P = np.array([[0.9, 0.1], [0.3, 0.7], [0.6, 0.4], [0.2, 0.8]])
    >>> codes = np.array([0, 0, 1, 1], np.int32)
    >>> _, orders, last, credit = score_tables(P, k=1)
    >>> out = np.empty((1, 4, 3))
    >>> score_left_out(codes, codes[orders][None], orders[None], last[None], credit[np.arange(4), codes][None, None],
    ...                np.array([2, 2]), out)
    >>> out[0, :, 0].tolist()  # 0.75 with every item; without item 1 or 2 (each ranked wrong once) 1
    [0.5, 1.0, 1.0, 0.5]
    """
    M, K, n = orders.shape
    J = credit_true.shape[1]
    acc = np.empty((K, K), np.int64)
    left = np.empty((K, K), np.int64)
    row_share = np.empty((n, K), np.int64)  # item q's share of acc[y_q, b]
    column_share = np.empty((n, K), np.int64)  # item q's share of acc[a, y_q]
    above = np.empty(K, np.int64)
    tied = np.empty(K, np.int64)
    reduced = counts.copy()
    ones = np.ones(n, np.int64)
    untied = untied_columns(group_last)
    for m in range(M):
        _weighted_pairs(ones, labels_along[m], orders[m], group_last[m], untied[m], acc)
        for a in range(K):
            above[:] = 0
            p = 0
            while p < n:
                last = group_last[m, a, p]
                tied[:] = 0
                for q in range(p, last + 1):
                    tied[labels_along[m, a, q]] += 1
                for q in range(p, last + 1):
                    item = orders[m, a, q]
                    y = labels_along[m, a, q]
                    if y == a:
                        for b in range(K):
                            row_share[item, b] = 2 * (counts[b] - above[b] - tied[b]) + tied[b]
                    else:
                        column_share[item, a] = 2 * above[a] + tied[a]
                for b in range(K):
                    above[b] += tied[b]
                p = last + 1
        for j in range(J):
            total = 0.0
            for i in range(n - 1, -1, -1):
                total += credit_true[m, j, i]
            for q in range(n):
                out[m, q, 2 + j] = (total - credit_true[m, j, q]) / (n - 1)
        for q in range(n):
            y = codes[q]
            for a in range(K):  # not left[:, :] = acc (compile time: see kernels/jit.py)
                for b in range(K):
                    left[a, b] = acc[a, b]
            for b in range(K):
                if b != y:
                    left[y, b] -= row_share[q, b]
                    left[b, y] -= column_share[q, b]
            reduced[y] -= 1
            out[m, q, 0], out[m, q, 1] = _auc_pair(left, reduced, n - 1)
            reduced[y] += 1


@jit_cached(nogil=True)
def linear_swap_differences(influences, key0, key1, first, exact, out):
    """Swap patterns ``first .. first + out.shape[0] - 1`` of two models' probability rows: ``out[r, c]`` =
    sum_i sigma_i ``influences[i, c]``, the difference A' - B' of column c (sigma_i = -1 where item i's rows are
    swapped; :func:`tablegen.compare.report.multiclass_probabilities.swap_influences` gives the influences of the
    items whose rows differ, and proves the difference linear in the flags).  Exact: pattern r swaps item t where
    bit t of r is set (pattern 0 is the data); else item t's flag is the t-th bit of the pattern's stream, low bit
    first (the label kernel's swap bits).  Each sum in item order.

    Examples
    --------
    >>> out = np.empty((4, 1))
    >>> linear_swap_differences(np.array([[0.5], [0.25]]), np.uint64(1), np.uint64(2), 0, True, out)
    >>> out[:, 0].tolist()  # no swap, the first swapped, the second, both
    [0.75, -0.25, 0.25, -0.75]
    """
    d, width = influences.shape
    sign = np.empty(d)
    for row in range(out.shape[0]):
        pattern = first + row
        s0, s1, s2, s3 = replicate_state(key0, key1, pattern)
        bits = np.uint64(0)
        left = 0
        for t in range(d):
            if exact:
                swapped = (pattern >> t) & 1
            else:
                if left == 0:
                    bits, s0, s1, s2, s3 = xoshiro_next(s0, s1, s2, s3)
                    left = 64
                swapped = np.int64(bits & _U1)
                bits >>= _U1
                left -= 1
            sign[t] = -1.0 if swapped else 1.0
        for c in range(width):
            total = 0.0
            for t in range(d):
                total += sign[t] * influences[t, c]
            out[row, c] = total
