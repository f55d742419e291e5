"""CUDA twin of the label-permutation kernel
(:func:`tablegen.compute.kernels.permutation.permutation_metrics_counts`: every metric of a report at once).

One thread per replicate.  Thread i draws replicate ``first + i``'s arrangement exactly as the CPU kernel
does (sequential sampling over the items, each draw Lemire's multiply-shift of the upper 32 bits of a
fresh xoshiro256** output, a rejected draw redrawn from the upper half of the next output) into its row
of ``labels``, once for every metric, scores every model on it for each metric as the CPU kernel does (AUC from
the doubled midranks, every other metric by the sorted walk, a walk per metric; integers as integers, average
precision's ``gp * (TP / k)`` products and sums rounded separately with
:func:`~tablegen.compute.kernels.cuda.rng.mul_rn` / ``add_rn``, never fused: the CPU kernel's floats, which sums
only the terms of the cut-offs where TP grew, the others adding 0.0), writes each metric's maximum to
``maxima[t, i]`` and adds its hits with integer atomics (sums, so the order in which threads add does not change
them).  Checked bit for bit against the CPU kernel under the simulator by
``tests/compute/test_cuda_sim.py``.
"""

import math

import numpy as np
from numba import cuda

from tablegen.compute.kernels.cuda.ranking import draw_below
from tablegen.compute.kernels.cuda.rng import add_rn, mul_rn, replicate_state

#: Threads per CUDA block.
THREADS_PER_BLOCK = 128


@cuda.jit(device=True, inline=True)
def _auc_from_ranks(labels, i, ranks, m, n_pos):
    total = 0
    n = labels.shape[1]
    for item in range(n):
        total += int(labels[i, item]) * ranks[m, item]
    return ((total - n_pos * (n_pos + 1)) * 0.5) / (n_pos * (n - n_pos))


@cuda.jit(device=True, inline=True)
def walk_step(column, tp, tp_before, k, close, n, n_pos, k_cut, weights, best_int, best, ap, tpk):
    """One item of the sorted walk for the threshold columns (1-5) and TP at k, ``close`` whether it ends a tie
    group: the updated (best_int, best, ap, tpk), a close's update kept by a select, elsewhere a zero term."""
    g = tp * n - k * n_pos  # G = TP N - FP P
    if column == 1:
        best_int = max(best_int, 2 * tp - k if close else 0)
    elif column == 2:
        best = max(best, (2 * tp if close else 0) / (n_pos + k))
    elif column == 3:
        best_int = max(best_int, g if close else 0)
    elif column == 4:
        ap = add_rn(ap, mul_rn(float(tp - tp_before if close else 0), tp / k))
    elif column == 5:
        best = max(best, mul_rn(float(g if close else 0), weights[k]))
    else:
        tpk = tp if close and k == k_cut else tpk
    return best_int, best, ap, tpk


@cuda.jit(device=True, inline=True)
def walk_value(column, best_int, best, ap, tpk, n_pos, n_neg):
    """The value of a threshold column (1-5) or TP at k from the walk's state (:func:`walk_step`)."""
    if column == 1:
        return (best_int + n_neg) / (n_pos + n_neg)
    if column == 2:
        return best
    if column == 3:
        return (best_int + n_pos * n_neg) / (2 * n_pos * n_neg)
    if column == 4:
        return ap / n_pos
    if column == 5:
        return min(best, 1.0)
    return math.nan if tpk < 0 else float(tpk)


@cuda.jit(device=True, inline=True)
def _walk(labels, i, orders, ends, m, n_pos, column, k_cut, weights):
    """One model's value by the sorted walk (as :func:`~tablegen.compute.kernels.permutation.score_model`: a
    close's update kept by a select, elsewhere a zero term; the same integers and floats)."""
    n = orders.shape[1]
    n_neg = n - n_pos
    tp = 0
    tp_before = 0
    best_int = 0  # D or G, from the empty cut-off's 0
    best = 0.0  # F1 or G w_k, from 0.0
    ap = 0.0
    tpk = n_pos if k_cut >= n else -1  # -1 until a group ends at k: NaN if none does (ties straddle k)
    for j in range(n):
        tp += int(labels[i, orders[m, j]])  # int64 (the simulator would keep uint8 and wrap)
        k = j + 1
        close = ends[m, j] != 0
        best_int, best, ap, tpk = walk_step(column, tp, tp_before, k, close, n, n_pos, k_cut, weights, best_int, best,
                                            ap, tpk)
        tp_before = tp if close else tp_before
    return walk_value(column, best_int, best, ap, tpk, n_pos, n_neg)


@cuda.jit(device=True, inline=True)
def _tally(values, i, t, members, size, thresholds, ranked, maxima, raw_hits, step_hits):
    """Metric t on thread i's arrangement: its maximum over its members, its hits (integer atomics: sums)."""
    largest = -math.inf
    for j in range(size):
        v = values[i, t, members[t, j]]
        largest = max(largest, v)
        if v >= thresholds[t, j]:
            cuda.atomic.add(raw_hits, (t, j), 1)
    maxima[t, i] = largest
    running = -math.inf
    for r in range(size - 1, -1, -1):
        j = ranked[t, r]
        running = max(running, values[i, t, members[t, j]])
        if running >= thresholds[t, j]:
            cuda.atomic.add(step_hits, (t, r), 1)


@cuda.jit
def permutation_kernel(orders, ends, ranks, n_pos, columns, k_cuts, weights, members, sizes, thresholds, ranked, key0,
                       key1, first, labels, values, maxima, raw_hits, step_hits):
    """Replicate ``first + i`` for i < maxima.shape[1]: its arrangement, drawn once, and for each metric t (kernel
    column ``columns[t]``) every model's value, the maximum over its members and their hits."""
    i = cuda.grid(1)
    if i >= maxima.shape[1]:
        return
    n = orders.shape[1]
    s0, s1, s2, s3 = replicate_state(key0, key1, first + i)
    remaining = n_pos
    for item in range(n):
        j, s0, s1, s2, s3 = draw_below(np.uint64(n - item), s0, s1, s2, s3)
        positive = 1 if j < np.uint64(remaining) else 0
        labels[i, item] = positive
        remaining -= positive
    for m in range(orders.shape[0]):
        for t in range(columns.shape[0]):
            if columns[t] == 0:
                values[i, t, m] = _auc_from_ranks(labels, i, ranks, m, n_pos)
            else:
                values[i, t, m] = _walk(labels, i, orders, ends, m, n_pos, columns[t], k_cuts[t], weights)
    for t in range(columns.shape[0]):
        _tally(values, i, t, members, sizes[t], thresholds, ranked, maxima, raw_hits, step_hits)


def permutation_counts_cuda(orders, ends, ranks, n_pos, columns, k_cuts, weights, members, sizes, thresholds, ranked,
                            key0, key1, first, maxima, raw_hits, step_hits, threads: int = 4096):
    """:func:`~tablegen.compute.kernels.permutation.permutation_metrics_counts` on the GPU, ``threads`` replicates
    per launch (scratch: a label row and a row of values per metric and model per thread).  Fills ``maxima`` (a row
    per metric) and adds to the hit counts (a row per metric)."""
    models, n = orders.shape
    count_metrics = columns.shape[0]
    d_orders, d_ends, d_ranks = cuda.to_device(orders), cuda.to_device(ends), cuda.to_device(ranks)
    d_columns, d_cuts, d_weights = cuda.to_device(columns), cuda.to_device(k_cuts), cuda.to_device(weights)
    d_members, d_sizes = cuda.to_device(members), cuda.to_device(sizes)
    d_thresholds, d_ranked = cuda.to_device(thresholds), cuda.to_device(ranked)
    d_raw, d_step = cuda.to_device(np.zeros(raw_hits.shape, np.int64)), cuda.to_device(np.zeros(step_hits.shape,
                                                                                                np.int64))
    total = maxima.shape[1]
    rows = max(1, min(threads, total))
    d_labels = cuda.device_array((rows, n), np.uint8)
    d_values = cuda.device_array((rows, count_metrics, models), np.float64)
    d_maxima = cuda.device_array((count_metrics, rows), np.float64)
    for start in range(0, total, rows):
        count = min(rows, total - start)
        grid = max(1, math.ceil(count / THREADS_PER_BLOCK))
        permutation_kernel[grid, THREADS_PER_BLOCK](d_orders, d_ends, d_ranks, n_pos, d_columns, d_cuts, d_weights,
                                                     d_members, d_sizes, d_thresholds, d_ranked, key0, key1,
                                                     first + start, d_labels, d_values, d_maxima[:, :count], d_raw,
                                                     d_step)
        maxima[:, start:start + count] = d_maxima.copy_to_host()[:, :count]
    raw_hits += d_raw.copy_to_host()
    step_hits += d_step.copy_to_host()
