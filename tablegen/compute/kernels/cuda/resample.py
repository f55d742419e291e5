"""CUDA twin of the bootstrap kernel (:func:`tablegen.compute.kernels.resample.resample_metrics`).

One thread per resample.  Thread i draws resample ``first + i``'s multiplicities exactly as the CPU kernel
does (P draws over the positives' slots, then N over the negatives', each Lemire's multiply-shift of the upper
32 bits of a fresh xoshiro256** output, a rejected draw redrawn from the upper half of the next output) into
its row of ``weights`` (scratch, by slot), and scores every wanted metric of every model in one weighted pass
along the model's fixed order (its pass codes, :func:`~tablegen.compute.kernels.resample.pass_codes`), each
maximum taken over every cut-off (no scratch of cut-offs per thread): the CPU kernel's values, which it finds
from the cut-offs where TP grew (:func:`~tablegen.compute.kernels.resample.metrics_pass`), since no other
cut-off exceeds them and a term 0 adds nothing to average precision.  Integers as integers, AUC's
``A + 0.5 B`` and average precision's ``gp * (TP / k)`` sums rounded separately with
:func:`~tablegen.compute.kernels.cuda.rng.mul_rn` / ``add_rn`` (never fused), every other value one correctly
rounded division or square root, as on the CPU.  Checked bit for bit against the CPU kernel under the
simulator by ``tests/compute/test_cuda_sim.py``.
"""

import math

import numpy as np
from numba import cuda

from tablegen.compute.kernels.cuda.ranking import draw_below
from tablegen.compute.kernels.cuda.rng import add_rn, mul_rn, replicate_state
from tablegen.compute.kernels.resample import METRIC_COLUMNS

#: Threads per CUDA block.
THREADS_PER_BLOCK = 128


@cuda.jit(device=True, inline=True)
def _mcc_at(g, n_pos, n_neg, k):
    n = n_pos + n_neg
    if k <= 0 or k >= n:
        return 0.0
    return g * (1.0 / math.sqrt(np.float64(n_pos * n_neg) * np.float64(k * (n - k))))


@cuda.jit(device=True, inline=True)
def _weighted_metrics(codes, m, weights, i, n_pos, n_neg, want, k_cuts, out):
    """Model m's wanted metrics on row i of ``weights`` (slots) into ``out[i, m]``: the values of
    :func:`~tablegen.compute.kernels.resample.metrics_pass`."""
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
    for t in range(k_cuts.shape[0]):
        out[i, m, METRIC_COLUMNS + t] = np.float64(n_pos) if k_cuts[t] >= n else -1.0
    for j in range(codes.shape[1]):
        code = codes[m, j]
        w = int(weights[i, code >> 2])
        positive = w * int((code >> 1) & 1)  # no branch on the label or the weight: both are random
        tp += positive
        fp += w - positive
        if code & 1:  # a group of weight 0 repeats the cut-off before it (as on the CPU)
            k = tp + fp
            gp = tp - tp_before
            if want[0]:
                a += gp * (n_neg - fp)
                b += gp * (fp - fp_before)
            if want[1]:
                best_d = max(best_d, tp - fp)
            if want[2]:
                best_f1 = max(best_f1, (2 * tp) / (n_pos + k))
            if want[3]:
                best_ba = max(best_ba, 0.5 * (tp / n_pos + 1 - fp / n_neg))
            if want[4]:
                ap = add_rn(ap, mul_rn(np.float64(gp), tp / max(k, 1)))  # k = 0: gp = tp = 0
            if want[5]:
                best_m = max(best_m, _mcc_at(tp * n_neg - fp * n_pos, n_pos, n_neg, k))
            for t in range(k_cuts.shape[0]):
                if k == k_cuts[t]:
                    out[i, m, METRIC_COLUMNS + t] = np.float64(tp)
            tp_before = tp
            fp_before = fp
    out[i, m, 0] = add_rn(np.float64(a), mul_rn(0.5, np.float64(b))) / (n_pos * n_neg) if want[0] else math.nan
    out[i, m, 1] = (best_d + n_neg) / (n_pos + n_neg) if want[1] else math.nan
    out[i, m, 2] = best_f1 if want[2] else math.nan
    out[i, m, 3] = best_ba if want[3] else math.nan
    out[i, m, 4] = ap / n_pos if want[4] else math.nan
    out[i, m, 5] = min(best_m, 1.0) if want[5] else math.nan
    for t in range(k_cuts.shape[0]):
        if out[i, m, METRIC_COLUMNS + t] < 0:
            out[i, m, METRIC_COLUMNS + t] = math.nan


@cuda.jit
def resample_kernel(codes, n_pos, n_neg, want, k_cuts, key0, key1, first, weights, out):
    """Thread i: resample ``first + i`` into ``weights[i]`` (by slot), every model's wanted metrics into
    ``out[i]``."""
    i = cuda.grid(1)
    if i >= out.shape[0]:
        return
    for slot in range(weights.shape[1]):
        weights[i, slot] = 0
    s0, s1, s2, s3 = replicate_state(key0, key1, first + i)
    for _ in range(n_pos):
        j, s0, s1, s2, s3 = draw_below(np.uint64(n_pos), s0, s1, s2, s3)
        weights[i, j] += 1
    for _ in range(n_neg):
        j, s0, s1, s2, s3 = draw_below(np.uint64(n_neg), s0, s1, s2, s3)
        weights[i, n_pos + j] += 1
    for m in range(codes.shape[0]):
        _weighted_metrics(codes, m, weights, i, n_pos, n_neg, want, k_cuts, out)


#: Device bytes of multiplicity scratch per launch (4 bytes per item and thread in flight).
SCRATCH_BYTES = 1 << 30


def resample_metrics_cuda(codes, n_pos, n_neg, want, k_cuts, key0, key1, first, out, threads: int = 4096) -> None:
    """:func:`~tablegen.compute.kernels.resample.resample_metrics` on the GPU, up to ``threads`` resamples per
    launch (scratch: one row of 4-byte multiplicities per thread, at most :data:`SCRATCH_BYTES` in all, so 268
    resamples at a time at 10^6 items).  Fills ``out`` (resamples, models, ``METRIC_COLUMNS + k_cuts.size``)."""
    n = n_pos + n_neg
    d_codes, d_want, d_cuts = cuda.to_device(codes), cuda.to_device(want), cuda.to_device(k_cuts)
    rows = max(1, min(threads, out.shape[0], SCRATCH_BYTES // (4 * n)))
    d_weights = cuda.device_array((rows, n), np.int32)  # a count is at most P + N < 2**31
    d_out = cuda.device_array((rows, *out.shape[1:]), np.float64)
    for start in range(0, out.shape[0], rows):
        count = min(rows, out.shape[0] - start)
        block = d_out[:count]
        grid = max(1, math.ceil(count / THREADS_PER_BLOCK))
        resample_kernel[grid, THREADS_PER_BLOCK](d_codes, n_pos, n_neg, d_want, d_cuts, key0, key1, first + start,
                                                 d_weights, block)
        out[start:start + count] = block.copy_to_host()


def resample_values_cuda(orders, group_ends, labels, positives, negatives, column, k_cut, key0, key1, first, out,
                         threads: int = 4096) -> None:
    """:func:`~tablegen.compute.kernels.resample.resample_values` on the GPU: :func:`resample_metrics_cuda` asked for
    one column (base ``column``, or TP at ``k_cut`` for column 6).  Fills ``out`` (resamples, models)."""
    from tablegen.compute.kernels.resample import metric_choice, pass_codes

    want, cuts = metric_choice([column], []) if column < METRIC_COLUMNS else metric_choice([], [k_cut])
    values = np.empty((out.shape[0], orders.shape[0], METRIC_COLUMNS + cuts.size))
    resample_metrics_cuda(pass_codes(orders, group_ends, labels), positives.size, negatives.size, want, cuts, key0,
                          key1, first, values, threads)
    out[:] = values[:, :, min(column, METRIC_COLUMNS)]
