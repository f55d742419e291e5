"""CUDA twin of the sequential-sampling kernel (:func:`tablegen.compute.kernels.ranking.simulate_block`).

One thread per replicate.  Thread i walks replicate ``first + i`` exactly as the scalar CPU kernel
does (and so as the lane kernel, which equals it bit for bit): the high 32 bits of a fresh
xoshiro256** output on even steps, the low 32 bits of that output on odd steps; Lemire's
j = (x * total) >> 32, and when (x * total) mod 2**32 < 2**32 mod total a redraw from the high half
of a *fresh* output, which does not disturb the pending low half.  Item k is positive iff
j < p_rem.

Scores, one pass, integer state kept as integers (int64): U as the sum of TP at every negative,
D = max(2 TP - k), G = max(TP N - k P), best F1 as the fraction (f1_num, f1_den) compared by
cross-multiplication (the first k attaining the maximum wins, as on the CPU), best MCC as the largest
G_k w_k (``mcc_w``: the CPU's :func:`~tablegen.compute.kernels.ranking.mcc_weights`, computed on the host;
one separately rounded multiply per k), TP at each requested k,
and the average-precision sum in float64, adding TP * (1/k) at each positive in the CPU kernel's
order with separately rounded multiply and add (:func:`~tablegen.compute.kernels.cuda.rng.mul_rn`).  The
reported values are the same single divisions of exact integers as on the CPU (IEEE division is
correctly rounded on both), written column by column into ``scores[column, i]`` (coalesced).
Checked bit for bit against the CPU kernels under the simulator by ``tests/compute/test_cuda_sim.py``.
"""

import math

import numpy as np
from numba import cuda

from tablegen.compute.kernels.cuda.rng import LOW32, S32, TWO32, add_rn, mul_rn, replicate_state, xoshiro_next
from tablegen.compute.kernels.ranking import MCC_COLUMN, TP_COLUMN


@cuda.jit(device=True, inline=True)
def bounded_fresh(x32, total, s0, s1, s2, s3):
    """Uniform integer in [0, total) from a 32-bit draw; redraws take the high half of fresh outputs."""
    m = x32 * total
    if (m & LOW32) < total:
        threshold = (TWO32 - total) % total
        while (m & LOW32) < threshold:
            r, s0, s1, s2, s3 = xoshiro_next(s0, s1, s2, s3)
            m = (r >> S32) * total
    return m >> S32, s0, s1, s2, s3


@cuda.jit(device=True, inline=True)
def draw_below(total, s0, s1, s2, s3):
    """Uniform integer in [0, total) from the upper half of one fresh output (the CPU kernels'
    :func:`tablegen.compute.kernels.ranking.draw_below`)."""
    r, s0, s1, s2, s3 = xoshiro_next(s0, s1, s2, s3)
    return bounded_fresh(r >> S32, total, s0, s1, s2, s3)


@cuda.jit(device=True, inline=True)
def write_base(scores, i, n_pos, n_neg, u_pairs, best_d, f1_num, f1_den, best_g, ap_sum, best_m, with_mcc):
    """The base columns, each one division as in the CPU kernels (best MCC: its maximum, capped at 1;
    NaN unless ``with_mcc``)."""
    scores[0, i] = u_pairs / (n_pos * n_neg)
    scores[1, i] = (best_d + n_neg) / (n_pos + n_neg)
    scores[2, i] = f1_num / f1_den
    scores[3, i] = (best_g + n_pos * n_neg) / (2 * n_pos * n_neg)
    scores[4, i] = ap_sum / n_pos
    scores[MCC_COLUMN, i] = min(best_m, 1.0) if with_mcc else math.nan


@cuda.jit
def sequential_kernel(n_pos, n_neg, key0, key1, first, ks, inverse, mcc_w, with_mcc, scores):
    """Fill ``scores[:, i]`` (TP_COLUMN + len(ks) columns) for replicate ``first + i``, i < scores.shape[1].

    ``inverse[k]`` must hold 1.0 / k (computed on the host, as the CPU kernel tabulates it) and
    ``mcc_w`` the CPU kernels' MCC weights (:func:`~tablegen.compute.kernels.ranking.mcc_weights`), read
    only if ``with_mcc`` (a run-time flag here: the same for every thread, so it costs no divergence).
    """
    i = cuda.grid(1)
    if i >= scores.shape[1]:
        return
    n = n_pos + n_neg
    n_ks = ks.shape[0]
    s0, s1, s2, s3 = replicate_state(key0, key1, np.int64(first) + np.int64(i))
    k, tp, p_rem, u_pairs, best_d, best_g, f1_num, f1_den = 0, 0, n_pos, 0, 0, 0, 0, 1
    ap_sum = np.float64(0.0)
    best_m = np.float64(0.0)
    buffer = np.uint64(0)
    have_half = False
    segment = 0
    next_k = ks[0] if n_ks > 0 else n + 1
    while k < n:
        if have_half:
            x32 = buffer & LOW32
            have_half = False
        else:
            buffer, s0, s1, s2, s3 = xoshiro_next(s0, s1, s2, s3)
            x32 = buffer >> S32
            have_half = True
        j, s0, s1, s2, s3 = bounded_fresh(x32, np.uint64(n - k), s0, s1, s2, s3)
        is_pos = 1 if j < np.uint64(p_rem) else 0
        k += 1
        tp += is_pos
        p_rem -= is_pos
        u_pairs += (1 - is_pos) * tp
        best_d = max(best_d, 2 * tp - k)
        g = tp * n - k * n_pos
        best_g = max(best_g, g)
        if with_mcc:
            best_m = max(best_m, mul_rn(np.float64(g), mcc_w[k]))
        if 2 * tp * f1_den > f1_num * (n_pos + k):
            f1_num = 2 * tp
            f1_den = n_pos + k
        if is_pos:
            ap_sum = add_rn(ap_sum, mul_rn(np.float64(tp), inverse[k]))
        if k == next_k:
            scores[TP_COLUMN + segment, i] = tp
            segment += 1
            next_k = ks[segment] if segment < n_ks else n + 1
    write_base(scores, i, n_pos, n_neg, u_pairs, best_d, f1_num, f1_den, best_g, ap_sum, best_m, with_mcc)
