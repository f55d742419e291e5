"""CUDA twin of the minority-class kernel (:func:`tablegen.compute.kernels.minority.simulate_minority_block`).

Sampling is the CPU kernel's, draw for draw: Floyd's algorithm over j = n - m .. n - 1 with
t uniform in [0, j] by Lemire's multiply-shift on the 32-bit halves of the replicate's stream (high
half first), a rejected half replaced by the *next half* (unlike the sequential kernel's fresh
output), marks in a bitmap of n bits.  The bitmap lives in global scratch memory, one column per
thread (``bitmap[word, thread]``), which bounds how many threads a launch can have: the kernel loops
over replicates with a grid stride, so any number of replicates fits a fixed scratch array.

Scoring streams the marked positions out of the bitmap in increasing order (the CPU kernel first
lists them, then walks the list; the arithmetic and its order are the same):
positives the minority: after the i-th positive at position k, U += N - k + i, the maxima of
D, G and the F1 fraction at (TP = i, k), and AP += i * (1/k) (``inverse`` tabulated on the host);
negatives the minority: for each run of positives ending just before a negative (and at k = n),
the same maxima (best MCC: G w_k with the host's MCC weights, one separately rounded multiply),
U += TP at each negative and AP += run - above * (H[end] - H[previous]) with the
host's compensated harmonic numbers H.  TP at each cut-off comes from merging the cut-offs with the
positions as they stream past.  Every float operation is separately rounded (``mul_rn``/``add_rn``).
Checked bit for bit against the CPU kernel under the simulator by ``tests/compute/test_cuda_sim.py``.
"""

import numpy as np
from numba import cuda

from tablegen.compute.kernels.cuda.ranking import write_base
from tablegen.compute.kernels.cuda.rng import (
    LOW32,
    ONE,
    S32,
    TWO32,
    ZERO,
    add_rn,
    mul_rn,
    replicate_state,
    trailing_zeros,
    xoshiro_next,
)
from tablegen.compute.kernels.ranking import TP_COLUMN


@cuda.jit(device=True, inline=True)
def next_half(buffer, have_half, s0, s1, s2, s3):
    """The next 32-bit half of the stream (high half of a fresh output first)."""
    if have_half:
        return buffer & LOW32, buffer, False, s0, s1, s2, s3
    buffer, s0, s1, s2, s3 = xoshiro_next(s0, s1, s2, s3)
    return buffer >> S32, buffer, True, s0, s1, s2, s3


@cuda.jit(device=True, inline=True)
def bounded_halves(bound, buffer, have_half, s0, s1, s2, s3):
    """Uniform integer in [0, bound) by Lemire's multiply-shift; a rejected half is replaced by the next."""
    x, buffer, have_half, s0, s1, s2, s3 = next_half(buffer, have_half, s0, s1, s2, s3)
    m = x * bound
    if (m & LOW32) < bound:
        threshold = (TWO32 - bound) % bound
        while (m & LOW32) < threshold:
            x, buffer, have_half, s0, s1, s2, s3 = next_half(buffer, have_half, s0, s1, s2, s3)
            m = x * bound
    return np.int64(m >> S32), buffer, have_half, s0, s1, s2, s3


@cuda.jit(device=True, inline=True)
def floyd_marks(n, m, s0, s1, s2, s3, bitmap, thread):
    """Mark m distinct positions (0-based) of n in ``bitmap[:, thread]``, as the CPU kernel does."""
    buffer = np.uint64(0)
    have_half = False
    for j in range(n - m, n):
        t, buffer, have_half, s0, s1, s2, s3 = bounded_halves(np.uint64(j + 1), buffer, have_half,
                                                               s0, s1, s2, s3)
        taken = (bitmap[t >> 6, thread] >> np.uint64(t & 63)) & ONE
        chosen = j if taken else t
        bitmap[chosen >> 6, thread] |= ONE << np.uint64(chosen & 63)


@cuda.jit(device=True, inline=True)
def score_positive_minority(n_pos, n_neg, bitmap, thread, ks, inverse, mcc_w, with_mcc, scores, i):
    """Scores from the positives' positions, read (and cleared) from the bitmap in increasing order."""
    n = n_pos + n_neg
    n_ks = ks.shape[0]
    u_pairs, best_d, best_g, f1_num, f1_den, tp, segment = 0, 0, 0, 0, 1, 0, 0
    ap_sum = np.float64(0.0)
    best_m = np.float64(0.0)
    for word in range((n + 63) >> 6):
        bits = bitmap[word, thread]
        bitmap[word, thread] = np.uint64(0)
        while bits != ZERO:
            k = word * 64 + np.int64(trailing_zeros(bits)) + 1
            bits &= bits - ONE
            while segment < n_ks and ks[segment] < k:
                scores[TP_COLUMN + segment, i] = tp
                segment += 1
            tp += 1
            u_pairs += n_neg - k + tp
            best_d = max(best_d, 2 * tp - k)
            g = tp * n - k * n_pos
            best_g = max(best_g, g)
            if with_mcc:
                best_m = max(best_m, mul_rn(np.float64(g), mcc_w[k]))
            if 2 * tp * f1_den > f1_num * (n_pos + k):
                f1_num = 2 * tp
                f1_den = n_pos + k
            ap_sum = add_rn(ap_sum, mul_rn(np.float64(tp), inverse[k]))
    while segment < n_ks:
        scores[TP_COLUMN + segment, i] = tp
        segment += 1
    write_base(scores, i, n_pos, n_neg, u_pairs, best_d, f1_num, f1_den, best_g, ap_sum, best_m, with_mcc)


@cuda.jit(device=True, inline=True)
def score_negative_minority(n_pos, n_neg, bitmap, thread, ks, harmonic, mcc_w, with_mcc, scores, i):
    """Scores from the negatives' positions: one update per run of positives (see the CPU kernel)."""
    n = n_pos + n_neg
    n_ks = ks.shape[0]
    u_pairs, best_d, best_g, f1_num, f1_den, segment = 0, 0, 0, 0, 1, 0
    ap_sum = np.float64(0.0)
    best_m = np.float64(0.0)
    above = 0  # negatives seen so far
    previous = 0  # first position of the current run of positives
    words = (n + 63) >> 6
    for word in range(words + 1):
        bits = bitmap[word, thread] if word < words else np.uint64(0)
        if word < words:
            bitmap[word, thread] = np.uint64(0)
        last = word == words
        while bits != ZERO or last:
            if last:
                end = n  # the final run ends at k = n
            else:
                q = word * 64 + np.int64(trailing_zeros(bits)) + 1
                bits &= bits - ONE
                end = q - 1
                while segment < n_ks and ks[segment] < q:
                    scores[TP_COLUMN + segment, i] = ks[segment] - above
                    segment += 1
            run = end - previous
            tp = end - above
            if not last:
                u_pairs += tp
            if run > 0:
                best_d = max(best_d, 2 * tp - end)
                g = tp * n_neg - above * n_pos
                best_g = max(best_g, g)
                if with_mcc:
                    best_m = max(best_m, mul_rn(np.float64(g), mcc_w[end]))
                if 2 * tp * f1_den > f1_num * (n_pos + end):
                    f1_num = 2 * tp
                    f1_den = n_pos + end
                spread = add_rn(harmonic[end], -harmonic[previous])
                ap_sum = add_rn(ap_sum, add_rn(np.float64(run), -mul_rn(np.float64(above), spread)))
            previous = end + 1
            above += 1
            last = False
    while segment < n_ks:
        scores[TP_COLUMN + segment, i] = ks[segment] - n_neg
        segment += 1
    write_base(scores, i, n_pos, n_neg, u_pairs, best_d, f1_num, f1_den, best_g, ap_sum, best_m, with_mcc)


@cuda.jit
def minority_kernel(n_pos, n_neg, key0, key1, first, ks, inverse, harmonic, mcc_w, with_mcc, bitmap, scores):
    """Fill ``scores[:, i]`` for replicates ``first + i``, grid-stride; ``bitmap`` (uint64, zero) is
    ``(ceil(n / 64), threads in the grid)`` scratch, left zero."""
    thread = cuda.grid(1)
    if thread >= bitmap.shape[1]:
        return
    n = n_pos + n_neg
    positives_are_minority = n_pos <= n_neg
    m = n_pos if positives_are_minority else n_neg
    for i in range(thread, scores.shape[1], bitmap.shape[1]):
        s0, s1, s2, s3 = replicate_state(key0, key1, np.int64(first) + np.int64(i))
        floyd_marks(n, m, s0, s1, s2, s3, bitmap, thread)
        if positives_are_minority:
            score_positive_minority(n_pos, n_neg, bitmap, thread, ks, inverse, mcc_w, with_mcc, scores, i)
        else:
            score_negative_minority(n_pos, n_neg, bitmap, thread, ks, harmonic, mcc_w, with_mcc, scores, i)
