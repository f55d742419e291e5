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

from tablegen.compute.kernels.cuda.ranking import draw_below
from tablegen.compute.kernels.cuda.rng import add_rn, mul_rn, replicate_state

#: Threads per CUDA block.
THREADS_PER_BLOCK = 128


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
        for i in range(K):
            for c in range(K):
                acc[t, i, c] = 0
            above = 0
            p = 0
            while p < n:
                last = group_last[i, p]
                tied = 0
                for q in range(p, last + 1):
                    if work[t, orders[i, q]] == i:
                        tied += 1
                for q in range(p, last + 1):
                    acc[t, i, work[t, orders[i, q]]] += 2 * above + tied
                above += tied
                p = last + 1
        total = 0.0
        for i in range(K):
            for j in range(i + 1, K):
                total = add_rn(total, (acc[t, i, j] + acc[t, j, i])
                               / mul_rn(mul_rn(4.0, float(counts[i])), float(counts[j])))
        out[t, 0] = total / (K * (K - 1) // 2)
    else:
        out[t, 0] = math.nan
    total = 0.0
    empty = False
    for c in range(K):
        if counts[c] == 0:
            empty = True
        else:
            total = add_rn(total, (sums[t, c] - counts[c] * (counts[c] + 1))
                           / mul_rn(mul_rn(2.0, float(counts[c])), float(n - counts[c])))
    out[t, 1] = math.nan if empty else total / K
    out[t, 2] = top_k / n


def multiclass_score_permutations_cuda(codes, double_ranks, orders, group_last, credit, counts, hand_till, key0, key1,
                                       first, out, threads: int = 4096):
    """:func:`~tablegen.compute.kernels.multiclass_scores.multiclass_score_permutations` on the GPU, ``threads``
    replicates per launch (scratch per thread: n codes, K sums, K x K pair counts).  Fills ``out`` (rows, 3)."""
    n, K = codes.size, counts.size
    tables = [cuda.to_device(np.ascontiguousarray(a)) for a in (codes, double_ranks, orders, group_last, credit,
                                                                 counts)]
    rows = max(1, min(threads, out.shape[0]))
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
