"""CUDA twin of the multi-class from-scores permutation kernel (``tablegen.compute.kernels.multiclass_scores``).

One thread per replicate.  Thread i shuffles a fresh copy of the label codes into its row of ``work`` exactly as the
CPU kernel does (Fisher–Yates from the top, :func:`~tablegen.compute.kernels.cuda.ranking.draw_below` of the
replicate's stream), adds each settled position's doubled rank to its row of ``sums`` and its top-k credit to T,
walks each column for Hand–Till into its (K, K) slice of ``acc`` when asked, and writes the three columns as the
CPU kernel does: the same integer sums, the same divisions, the float sums in the same order with every
product and addition rounded separately (:func:`~tablegen.compute.kernels.cuda.rng.mul_rn` / ``add_rn``, never
fused).  Checked bit for bit against the CPU kernel under the simulator by
``tests/compute/test_multiclass_scores_kernel.py``.
"""

import math

import numpy as np
from numba import cuda

from tablegen.compute.kernels.cuda import device
from tablegen.compute.kernels.cuda.multiclass_resample import launch_rows
from tablegen.compute.kernels.cuda.ranking import draw_below
from tablegen.compute.kernels.cuda.rng import add_rn, mul_rn, replicate_state

#: Threads per CUDA block.
THREADS_PER_BLOCK = 128


@cuda.jit(device=True, inline=True)
def hand_till_counts(labels, orders, group_last, acc):
    """``acc`` (K, K) the doubled pair counts 2U(i|c) of the arrangement ``labels`` (each item's label): column i
    walked from the top along ``orders[i]``, its tie groups ending at ``group_last[i]`` (the CPU kernels' walk)."""
    K = acc.shape[0]
    n = orders.shape[1]
    for i in range(K):
        for c in range(K):
            acc[i, c] = 0
        above = 0
        p = 0
        while p < n:
            last = group_last[i, p]
            tied = 0
            for q in range(p, last + 1):
                if labels[orders[i, q]] == i:
                    tied += 1
            for q in range(p, last + 1):
                acc[i, labels[orders[i, q]]] += 2 * above + tied
            above += tied
            p = last + 1


@cuda.jit(device=True, inline=True)
def hand_till_total(acc, counts):
    """Hand–Till M from the doubled pair counts: pairs lexicographic, each term one division, every addition and
    product rounded on its own (the CPU kernels' order)."""
    K = counts.shape[0]
    total = 0.0
    for i in range(K):
        for j in range(i + 1, K):
            total = add_rn(total, (acc[i, j] + acc[j, i]) / mul_rn(mul_rn(4.0, float(counts[i])), float(counts[j])))
    return total / (K * (K - 1) // 2)


@cuda.jit(device=True, inline=True)
def ovr_macro(sums, counts, n):
    """The one-vs-rest macro AUC from the doubled rank sums S_c (NaN where a class has no items)."""
    K = counts.shape[0]
    total = 0.0
    empty = False
    for c in range(K):
        if counts[c] == 0:
            empty = True
        else:
            total = add_rn(total, (sums[c] - counts[c] * (counts[c] + 1))
                           / mul_rn(mul_rn(2.0, float(counts[c])), float(n - counts[c])))
    return math.nan if empty else total / K


@cuda.jit
def multiclass_scores_kernel(codes, double_ranks, orders, group_last, credit, counts, hand_till, key0, key1, first,
                             work, sums, acc, out):
    """Replicate ``first + t`` for t < out.shape[0]: its shuffle and its three columns in ``out[t]``."""
    t = cuda.grid(1)
    if t >= out.shape[0]:
        return
    n = codes.shape[0]
    K = counts.shape[0]
    s0, s1, s2, s3 = replicate_state(key0, key1, first + t)
    for item in range(n):
        work[t, item] = codes[item]
    for c in range(K):
        sums[t, c] = 0
    top_k = 0.0
    for item in range(n - 1, 0, -1):
        j, s0, s1, s2, s3 = draw_below(np.uint64(item + 1), s0, s1, s2, s3)
        c = work[t, j]
        work[t, j] = work[t, item]
        work[t, item] = c
        sums[t, c] += double_ranks[item, c]
        top_k = add_rn(top_k, credit[item, c])
    c = work[t, 0]
    sums[t, c] += double_ranks[0, c]
    top_k = add_rn(top_k, credit[0, c])
    if hand_till:
        hand_till_counts(work[t], orders, group_last, acc[t])
        out[t, 0] = hand_till_total(acc[t], counts)
    else:
        out[t, 0] = math.nan
    out[t, 1] = ovr_macro(sums[t], counts, n)
    out[t, 2] = top_k / n


def multiclass_score_permutations_cuda(codes, double_ranks, orders, group_last, credit, counts, hand_till, key0, key1,
                                       first, out, threads: int = 4096):
    """:func:`~tablegen.compute.kernels.multiclass_scores.multiclass_score_permutations` on the GPU, ``threads``
    replicates per launch (scratch per thread: n codes, K sums, K x K pair counts).  Fills ``out`` (rows, 3)."""
    n, K = codes.size, counts.size
    tables = [cuda.to_device(np.ascontiguousarray(a)) for a in (codes, double_ranks, orders, group_last, credit,
                                                                 counts)]
    rows = device.replicates_per_launch(threads, out.shape[0], 4 * n + 8 * K + 8 * K * K)
    d_work = cuda.device_array((rows, n), np.int32)
    d_sums = cuda.device_array((rows, K), np.int64)
    d_acc = cuda.device_array((rows, K, K), np.int64)
    d_out = cuda.device_array((rows, out.shape[1]), np.float64)
    for start in range(0, out.shape[0], rows):
        count = min(rows, out.shape[0] - start)
        target = d_out[:count]
        grid = max(1, math.ceil(count / THREADS_PER_BLOCK))
        multiclass_scores_kernel[grid, THREADS_PER_BLOCK](*tables, bool(hand_till), key0, key1, first + start,
                                                          d_work, d_sums, d_acc, target)
        out[start:start + count] = target.copy_to_host()


# -- the K-class report's label permutations (``tablegen.compute.kernels.multiclass_scores``: several models at once)
# One thread per replicate, per-thread scratch rows; every float sum in the CPU kernel's order with each product and
# addition rounded separately, each division once: the same doubles.  The report's bootstrap and swap patterns:
# :mod:`tablegen.compute.kernels.cuda.multiclass_scores_resample`.


@cuda.jit
def model_permutations_kernel(codes, double_ranks, orders, group_last, credit, counts, hand_till, key0, key1, first,
                              work, sums, acc, out):
    """Replicate ``first + t``: the labels shuffled once, every model's columns in ``out[t, m]``."""
    t = cuda.grid(1)
    if t >= out.shape[0]:
        return
    n = codes.shape[0]
    K = counts.shape[0]
    M = double_ranks.shape[0]
    J = credit.shape[1]
    s0, s1, s2, s3 = replicate_state(key0, key1, first + t)
    for item in range(n):
        work[t, item] = codes[item]
    for item in range(n - 1, 0, -1):
        j, s0, s1, s2, s3 = draw_below(np.uint64(item + 1), s0, s1, s2, s3)
        c = work[t, j]
        work[t, j] = work[t, item]
        work[t, item] = c
    for m in range(M):
        for c in range(K):
            sums[t, c] = 0
        for item in range(n - 1, -1, -1):
            c = work[t, item]
            sums[t, c] += double_ranks[m, item, c]
        for jk in range(J):
            top_k = 0.0
            for item in range(n - 1, -1, -1):
                top_k = add_rn(top_k, credit[m, jk, item, work[t, item]])
            out[t, m, 2 + jk] = top_k / n
        if hand_till:
            hand_till_counts(work[t], orders[m], group_last[m], acc[t])
            out[t, m, 0] = hand_till_total(acc[t], counts)
        else:
            out[t, m, 0] = math.nan
        out[t, m, 1] = ovr_macro(sums[t], counts, n)


def model_score_permutations_cuda(codes, double_ranks, orders, group_last, credit, counts, hand_till, key0, key1,
                                  first, out, threads: int = 4096):
    """:func:`~tablegen.compute.kernels.multiclass_scores.model_score_permutations` on the GPU (out (rows, M,
    2 + J))."""
    n, K = codes.size, counts.size
    launch_rows(model_permutations_kernel, (codes, double_ranks, orders, group_last, credit, counts, bool(hand_till),
                                             key0, key1), (), [((n,), np.int32), ((K,), np.int64),
                                                               ((K, K), np.int64)], out, first, threads)
