"""CUDA twin of the swap-permutation kernel (:func:`tablegen.compute.kernels.swaps.swap_differences`).

One thread per swap pattern.  Thread i makes pattern ``first + i``'s flags exactly as the CPU kernel does (the
pattern's bits when ``exact``, else 64 flags per xoshiro256** output of its replicate's stream) into its row of
``flags``, walks the merged order of both models' values once (:func:`~tablegen.compute.kernels.swaps.swap_order`)
laying out each swapped vector's labels in sorted order and its tie-group ends (rows ``2 i`` for A', ``2 i + 1``
for B'), and scores both for every column as
:func:`~tablegen.compute.kernels.permutation.score_model` does: integers as integers, average precision's
``gp * (TP / k)`` and best MCC's ``G * w_k`` rounded separately with
:func:`~tablegen.compute.kernels.cuda.rng.mul_rn` / ``add_rn`` (never fused), every other value one correctly
rounded division.  Checked bit for bit against the CPU kernel under the simulator by
``tests/compute/test_cuda_swaps_sim.py``.
"""

import math

import numpy as np
from numba import cuda

from tablegen.compute.kernels.cuda.permutation import walk_step, walk_value
from tablegen.compute.kernels.cuda.rng import ONE, replicate_state, xoshiro_next

#: Threads per CUDA block.
THREADS_PER_BLOCK = 128
#: Scratch bytes of one launch at most (flags, labels and group ends: 5n + 2 bytes per pattern).
SCRATCH_BYTES = 1 << 30


@cuda.jit(device=True, inline=True)
def _score(sorted_labels, bounds, row, n_pos, column, k_cut, weights):
    """One swapped vector's value: its labels in sorted order in ``sorted_labels[row]``, ``bounds[row, j + 1]``
    1 where its j-th item ends a tie group (as ``score_model`` along the identity order: a close's update kept
    by a select, elsewhere a zero term; the same integers and floats)."""
    n = sorted_labels.shape[1]
    n_neg = n - n_pos
    tp = 0
    tp_before = 0
    fp_before = 0
    u2 = 0
    best_int = 0  # D or G, from the empty cut-off's 0
    best = 0.0  # F1 or G w_k, from 0.0
    ap = 0.0
    tpk = n_pos if k_cut >= n else -1
    for j in range(n):
        tp += int(sorted_labels[row, j])  # int64 (the simulator would keep uint8 and wrap)
        k = j + 1
        fp = k - tp
        close = bounds[row, j + 1] != 0
        if column == 0:
            u2 += (tp - tp_before) * (2 * n_neg - fp - fp_before) if close else 0
        else:
            best_int, best, ap, tpk = walk_step(column, tp, tp_before, k, close, n, n_pos, k_cut, weights, best_int,
                                                best, ap, tpk)
        tp_before = tp if close else tp_before
        fp_before = fp if close else fp_before
    if column == 0:
        return (u2 * 0.5) / (n_pos * n_neg)
    return walk_value(column, best_int, best, ap, tpk, n_pos, n_neg)


@cuda.jit
def swap_kernel(items, sources, values, entry_labels, n_pos, columns, k_cut, weights, exact, key0, key1, first,
                flags, sorted_labels, bounds, out):
    """Pattern ``first + i`` for i < out.shape[0]: its flags, the walk, ``out[i, c]`` for every column."""
    i = cuda.grid(1)
    if i >= out.shape[0]:
        return
    n = flags.shape[1]
    pattern = first + i
    if exact:
        for item in range(n):
            flags[i, item] = (pattern >> item) & 1
    else:
        s0, s1, s2, s3 = replicate_state(key0, key1, pattern)
        word = np.uint64(0)
        for item in range(n):
            if item % 64 == 0:
                word, s0, s1, s2, s3 = xoshiro_next(s0, s1, s2, s3)
            flags[i, item] = np.uint8((word >> np.uint64(item % 64)) & ONE)
    fill0 = 0
    fill1 = 0
    last0 = math.nan
    last1 = math.nan
    a, b = 2 * i, 2 * i + 1
    for e in range(2 * n):
        v = values[e]
        if int(sources[e]) == int(flags[i, items[e]]):
            sorted_labels[a, fill0] = entry_labels[e]
            bounds[a, fill0] = 1 if last0 != v else 0
            last0 = v
            fill0 += 1
        else:
            sorted_labels[b, fill1] = entry_labels[e]
            bounds[b, fill1] = 1 if last1 != v else 0
            last1 = v
            fill1 += 1
    bounds[a, n] = 1
    bounds[b, n] = 1
    for c in range(columns.shape[0]):
        out[i, c] = (_score(sorted_labels, bounds, a, n_pos, columns[c], k_cut, weights)
                     - _score(sorted_labels, bounds, b, n_pos, columns[c], k_cut, weights))


def swap_differences_cuda(items, sources, values, labels, n_pos, columns, k_cut, weights, exact, key0, key1, first,
                          out, threads: int = 4096):
    """:func:`~tablegen.compute.kernels.swaps.swap_differences` on the GPU, at most ``threads`` patterns per launch
    (and at most :data:`SCRATCH_BYTES` of scratch: 5n + 2 bytes a pattern).  Fills ``out`` (columns, patterns)."""
    n = labels.size
    rows = max(1, min(threads, out.shape[1], SCRATCH_BYTES // (5 * n + 2)))
    d_items, d_sources, d_values = cuda.to_device(items), cuda.to_device(sources), cuda.to_device(values)
    d_labels = cuda.to_device(np.ascontiguousarray(labels[items], np.uint8))
    d_columns, d_weights = cuda.to_device(np.asarray(columns, np.int64)), cuda.to_device(weights)
    d_flags = cuda.device_array((rows, n), np.uint8)
    d_sorted = cuda.device_array((2 * rows, n), np.uint8)
    d_bounds = cuda.device_array((2 * rows, n + 1), np.uint8)
    d_out = cuda.device_array((rows, out.shape[0]), np.float64)
    for start in range(0, out.shape[1], rows):
        count = min(rows, out.shape[1] - start)
        block = d_out[:count]
        grid = max(1, math.ceil(count / THREADS_PER_BLOCK))
        swap_kernel[grid, THREADS_PER_BLOCK](d_items, d_sources, d_values, d_labels, n_pos, d_columns, k_cut,
                                             d_weights, exact, key0, key1, first + start, d_flags, d_sorted, d_bounds,
                                             block)
        out[:, start:start + count] = block.copy_to_host().T
