"""CUDA twins of the K-class report's bootstrap and swap kernels of the probability metrics
(``tablegen.compute.kernels.multiclass_scores_resample``: several models at once).

One thread per replicate (resample or swap pattern), per-thread scratch rows; every float sum in the CPU kernel's
order with each product and addition rounded separately (:func:`~tablegen.compute.kernels.cuda.rng.mul_rn` /
``add_rn``, never fused), each division once: the same doubles.  Hand–Till from the pair counts is
:func:`~tablegen.compute.kernels.cuda.multiclass_scores.hand_till_total`, the label permutations' own.  Checked bit
for bit against the CPU kernels under the simulator by ``tests/compare/test_report_multiclass_probabilities.py``.
"""

import math

import numpy as np
from numba import cuda

from tablegen.compute.kernels.cuda.multiclass_resample import launch_rows
from tablegen.compute.kernels.cuda.multiclass_scores import hand_till_total
from tablegen.compute.kernels.cuda.ranking import draw_below
from tablegen.compute.kernels.cuda.rng import ONE, ZERO, add_rn, mul_rn, replicate_state, xoshiro_next


@cuda.jit(device=True, inline=True)
def _auc_pair(acc, counts, n):
    """(Hand–Till, one-vs-rest macro) from the doubled pair counts (the CPU kernel's ``_auc_pair``)."""
    K = counts.shape[0]
    for c in range(K):
        if counts[c] == 0:
            return math.nan, math.nan
    hand_till = hand_till_total(acc, counts)
    ovr = 0.0
    for c in range(K):
        right = 0
        for b in range(K):
            if b != c:
                right += acc[c, b]
        ovr = add_rn(ovr, right / mul_rn(mul_rn(2.0, float(counts[c])), float(n - counts[c])))
    return hand_till, ovr / K


@cuda.jit
def stratified_scores_kernel(order, starts, codes, labels_along, orders, group_last, credit_true, counts, key0, key1,
                             first, weights, acc, out):
    """Resample ``first + t``: each item's draw count, then every model's columns in ``out[t, m]``."""
    t = cuda.grid(1)
    if t >= out.shape[0]:
        return
    K = counts.shape[0]
    M = orders.shape[0]
    J = credit_true.shape[1]
    n = order.shape[0]
    s0, s1, s2, s3 = replicate_state(key0, key1, first + t)
    for item in range(n):
        weights[t, item] = 0
    for k in range(K):
        size = starts[k + 1] - starts[k]
        for _ in range(size):
            j, s0, s1, s2, s3 = draw_below(np.uint64(size), s0, s1, s2, s3)
            weights[t, order[starts[k] + int(j)]] += 1
    for m in range(M):
        for i in range(K):
            for c in range(K):
                acc[t, i, c] = 0
            above = 0
            p = 0
            while p < n:
                last = group_last[m, i, p]
                tied = 0
                for q in range(p, last + 1):
                    if labels_along[m, i, q] == i:
                        tied += weights[t, orders[m, i, q]]
                for q in range(p, last + 1):
                    acc[t, i, labels_along[m, i, q]] += weights[t, orders[m, i, q]] * (2 * above + tied)
                above += tied
                p = last + 1
        ht, ovr = _auc_pair(acc[t], counts, n)
        out[t, m, 0] = ht
        out[t, m, 1] = ovr
        for jk in range(J):
            top_k = 0.0
            for item in range(n - 1, -1, -1):
                top_k = add_rn(top_k, mul_rn(float(weights[t, item]), credit_true[m, jk, item]))
            out[t, m, 2 + jk] = top_k / n


@cuda.jit
def linear_swaps_kernel(influences, key0, key1, first, exact, sign, out):
    """Swap pattern ``first + t``: out[t, c] the sum of the signed influences, in item order."""
    t = cuda.grid(1)
    if t >= out.shape[0]:
        return
    d = influences.shape[0]
    width = influences.shape[1]
    pattern = first + t
    s0, s1, s2, s3 = replicate_state(key0, key1, pattern)
    bits = ZERO
    left = 0
    for item in range(d):
        if exact:
            swapped = (pattern >> item) & 1
        else:
            if left == 0:
                bits, s0, s1, s2, s3 = xoshiro_next(s0, s1, s2, s3)
                left = 64
            swapped = int(bits & ONE)
            bits >>= ONE
            left -= 1
        sign[t, item] = -1.0 if swapped else 1.0
    for c in range(width):
        total = 0.0
        for item in range(d):
            total = add_rn(total, mul_rn(sign[t, item], influences[item, c]))
        out[t, c] = total


def stratified_score_resamples_cuda(order, starts, codes, labels_along, orders, group_last, credit_true, counts, key0,
                                    key1, first, out, threads: int = 4096):
    """:func:`~tablegen.compute.kernels.multiclass_scores_resample.stratified_score_resamples` on the GPU."""
    n, K = order.size, counts.size
    launch_rows(stratified_scores_kernel, (order, starts, codes, labels_along, orders, group_last, credit_true,
                                            counts, key0, key1), (), [((n,), np.int64), ((K, K), np.int64)], out,
                 first, threads)


def linear_swap_differences_cuda(influences, key0, key1, first, exact, out, threads: int = 4096):
    """:func:`~tablegen.compute.kernels.multiclass_scores_resample.linear_swap_differences` on the GPU (out (rows,
    columns))."""
    launch_rows(linear_swaps_kernel, (influences, key0, key1), (bool(exact),), [((influences.shape[0],), np.float64)],
                 out, first, threads)
