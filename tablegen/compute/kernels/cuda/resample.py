"""CUDA twin of the bootstrap kernel (:func:`tablegen.compute.kernels.resample.resample_values`).

One thread per resample.  Thread i draws resample ``first + i``'s multiplicities exactly as the CPU kernel
does (P draws over the positives, then N over the negatives, each Lemire's multiply-shift of the upper 32
bits of a fresh xoshiro256** output, a rejected draw redrawn from the upper half of the next output) into
its row of ``weights`` (scratch), and scores every model by the CPU kernel's weighted pass along the model's
fixed order: integers as integers, AUC's ``A + 0.5 B`` and average precision's ``gp * (TP / k)`` sums
rounded separately with :func:`~tablegen.compute.kernels.cuda.rng.mul_rn` / ``add_rn`` (never fused), every
other value one correctly rounded division or square root, as on the CPU.  Checked bit for bit against the
CPU kernel under the simulator by ``tests/compute/test_cuda_sim.py``.
"""

import math

import numpy as np
from numba import cuda

from tablegen.compute.kernels.cuda.ranking import draw_below
from tablegen.compute.kernels.cuda.rng import add_rn, mul_rn, replicate_state

#: Threads per CUDA block.
THREADS_PER_BLOCK = 128


@cuda.jit(device=True, inline=True)
def _mcc_at(g, n_pos, n_neg, k):
    n = n_pos + n_neg
    if k <= 0 or k >= n:
        return 0.0
    return g * (1.0 / math.sqrt(np.float64(n_pos * n_neg) * np.float64(k * (n - k))))


@cuda.jit(device=True, inline=True)
def _weighted_value(orders, ends, m, labels, weights, i, n_pos, n_neg, column, k_cut):
    """Model m's value on row i of ``weights`` (as :func:`~tablegen.compute.kernels.resample.weighted_value`)."""
    n = n_pos + n_neg
    tp = 0
    fp = 0
    tp_before = 0
    fp_before = 0
    a = 0
    b = 0
    best_d = 0
    best_f1 = 0.0
    best_ba = 0.5
    ap = 0.0
    best_m = 0.0
    tpk = n_pos if k_cut >= n else -1
    for j in range(orders.shape[1]):
        item = orders[m, j]
        w = int(weights[i, item])
        positive = w * labels[item]  # no branch on the label or the weight: both are random
        tp += positive
        fp += w - positive
        if ends[m, j]:  # a group of weight 0 repeats the cut-off before it (as on the CPU)
            k = tp + fp
            gp = tp - tp_before
            if column == 0:
                a += gp * (n_neg - fp)
                b += gp * (fp - fp_before)
            elif column == 1:
                best_d = max(best_d, tp - fp)
            elif column == 2:
                best_f1 = max(best_f1, (2 * tp) / (n_pos + k))
            elif column == 3:
                best_ba = max(best_ba, 0.5 * (tp / n_pos + 1 - fp / n_neg))
            elif column == 4:
                ap = add_rn(ap, mul_rn(np.float64(gp), tp / max(k, 1)))  # k = 0: gp = tp = 0
            elif column == 5:
                best_m = max(best_m, _mcc_at(tp * n_neg - fp * n_pos, n_pos, n_neg, k))
            elif k == k_cut:
                tpk = tp
            tp_before = tp
            fp_before = fp
    if column == 0:
        return add_rn(np.float64(a), mul_rn(0.5, np.float64(b))) / (n_pos * n_neg)
    if column == 1:
        return (best_d + n_neg) / (n_pos + n_neg)
    if column == 2:
        return best_f1
    if column == 3:
        return best_ba
    if column == 4:
        return ap / n_pos
    if column == 5:
        return min(best_m, 1.0)
    return math.nan if tpk < 0 else float(tpk)


@cuda.jit
def resample_kernel(orders, ends, labels, positives, negatives, column, k_cut, key0, key1, first, weights, out):
    """Thread i: resample ``first + i`` into ``weights[i]``, every model's value into ``out[i]``."""
    i = cuda.grid(1)
    if i >= out.shape[0]:
        return
    for item in range(weights.shape[1]):
        weights[i, item] = 0
    s0, s1, s2, s3 = replicate_state(key0, key1, first + i)
    n_pos = positives.shape[0]
    n_neg = negatives.shape[0]
    for _ in range(n_pos):
        j, s0, s1, s2, s3 = draw_below(np.uint64(n_pos), s0, s1, s2, s3)
        weights[i, positives[j]] += 1
    for _ in range(n_neg):
        j, s0, s1, s2, s3 = draw_below(np.uint64(n_neg), s0, s1, s2, s3)
        weights[i, negatives[j]] += 1
    for m in range(orders.shape[0]):
        out[i, m] = _weighted_value(orders, ends, m, labels, weights, i, n_pos, n_neg, column, k_cut)


#: Device bytes of multiplicity scratch per launch (4 bytes per item and thread in flight).
SCRATCH_BYTES = 1 << 30


def resample_values_cuda(orders, group_ends, labels, positives, negatives, column, k_cut, key0, key1, first, out,
                         threads: int = 4096) -> None:
    """:func:`~tablegen.compute.kernels.resample.resample_values` on the GPU, up to ``threads`` resamples per
    launch (scratch: one row of 4-byte multiplicities per thread, at most :data:`SCRATCH_BYTES` in all, so 268
    resamples at a time at 10^6 items).  Fills ``out`` (resamples, models)."""
    n = labels.size
    d_orders, d_ends, d_labels = cuda.to_device(orders), cuda.to_device(group_ends), cuda.to_device(labels)
    d_positives, d_negatives = cuda.to_device(positives), cuda.to_device(negatives)
    rows = max(1, min(threads, out.shape[0], SCRATCH_BYTES // (4 * n)))
    d_weights = cuda.device_array((rows, n), np.int32)  # a count is at most P + N < 2**31
    d_out = cuda.device_array((rows, orders.shape[0]), np.float64)
    for start in range(0, out.shape[0], rows):
        count = min(rows, out.shape[0] - start)
        block = d_out[:count]
        grid = max(1, math.ceil(count / THREADS_PER_BLOCK))
        resample_kernel[grid, THREADS_PER_BLOCK](d_orders, d_ends, d_labels, d_positives, d_negatives, column, k_cut,
                                                 key0, key1, first + start, d_weights, block)
        out[start:start + count] = block.copy_to_host()
