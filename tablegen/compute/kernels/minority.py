"""Minority-class kernel: sample only where the rarer class sits, at a cost that follows min(P, N).

Why
---
The lane kernel (:mod:`tablegen.compute.kernels.lanes`) pays for every one of the P + N positions of a
ranking, about 0.6 ns each.  A ranking is fixed by the positions of its minority class alone
(positives if P <= N, else negatives): m = min(P, N) of the n = P + N positions.  For a skewed cell
such as (20, 1000), drawing 20 positions and scoring from them costs a fraction of walking 1,020.
:func:`uses_minority_sampling` decides, from (P, N) alone, which kernel a cell uses.

Sampling
--------
Floyd's algorithm draws the set of minority positions uniformly from all C(n, m) subsets with m
bounded draws: for j = n - m, ..., n - 1 (0-based), draw t uniform in [0, j]; mark j if t is
already marked, else mark t.  Marks live in a bitmap of n bits that is scanned word by word
(trailing-zero count) to list the positions in increasing order, clearing it as it goes.

Uniform integers come from the 32-bit halves of the replicate's xoshiro256** outputs, high half
first, by Lemire's multiply-shift: t = (x * bound) >> 32, and x is replaced by the next half while
(x * bound) mod 2**32 < 2**32 mod bound, so every draw is exactly uniform.  The replicate's
generator state is the same ``replicate_state(key0, key1, r)`` as in every kernel, so rows are
replicates, independent of blocks and workers.  ``tests/compute/test_minority.py`` checks the stream
against a pure-Python implementation of all of this, and uniformity by a chi-square test.

Scoring, O(m + len(ks)) from the sorted 1-based positions
----------------------------------------------------------
Within a run of positives D = 2 TP - k, G = TP N - FP P and 2 TP / (P + k) all increase; within a
run of negatives they all decrease.  So their maxima over k = 0..n are reached at k = 0 or at the
end of a run of positives: after each positive p_i (TP = i) when positives are the minority, or
just before each negative q_j (TP = q_j - j) and at k = n when negatives are.

``auc``                 U = sum_i (N - p_i + i), or sum_j (q_j - j)
``best_f1``             the largest fraction, compared by cross-multiplication
``average_precision``   sum_i i / p_i (the same additions, in the same order, as the scalar
                        kernel); from negative positions, a run of L positives after a = q_{j-1}
                        with c = j - 1 negatives above adds sum (k - c) / k = L - c (H_{a+L} - H_a),
                        harmonic numbers H tabulated by compensated summation (relative error of
                        AP about 1e-13 at n = 10**4, against the direct sum)
``best_mcc``            the largest G_k w_k (:func:`~tablegen.compute.kernels.ranking.mcc_weights`) at the
                        same run ends: within a run of positives MCC = G_k w_k rises whenever it is
                        >= 0, within a run of negatives it falls (by at least a relative 1/(P + N) a
                        step, far above rounding, so the floats order like the exact values), and the
                        maximum is >= 0 (k = 0): the same float as every kernel's maximum over all k
``tp_at_k``             positives at positions <= k, by a merge of the sorted cut-offs
Every reported value except average precision is the same correctly rounded division of exact
integers as in the other kernels.  As there, best MCC is scored only by the variant compiled with it
(``with_mcc``).
"""

import numba as nb
import numpy as np
from numba.cpython.unsafe.numbers import trailing_zeros

from tablegen.compute.kernels.jit import jit_cached, variant_name
from tablegen.compute.kernels.ranking import TP_COLUMN, VARIANT_SUFFIXES, mcc_weights, write_base_columns
from tablegen.compute.kernels.rng import replicate_state, xoshiro_next

#: A cell uses this kernel when MINORITY_FIXED + MINORITY_PER_POSITION * min(P, N) <= P + N, in units
#: of the lane kernel's cost per position.  Measured here (``benchmarks/bench_kernel.py``): about
#: 100 ns + 6.8 ns per minority position per ranking, against 0.63 ns per position for the lane
#: kernel, i.e. 160 + 10.8 min(P, N); the constants below keep a margin.
MINORITY_FIXED = 200
MINORITY_PER_POSITION = 12

_LOW32 = np.uint64(0xFFFFFFFF)
_TWO32 = np.uint64(1 << 32)
_S32 = np.uint64(32)


def uses_minority_sampling(P, N):
    """Whether cell (P, N) is sampled by this kernel: ``200 + 12 min(P, N) <= P + N`` (elementwise for
    arrays of P and N, as a grid's plan asks).

    A function of (P, N) alone, so a cell's stream never depends on where or how it runs.

    Examples
    --------
    >>> uses_minority_sampling(20, 1000), uses_minority_sampling(100, 100)
    (True, False)
    >>> uses_minority_sampling(np.array([20, 100]), np.array([1000, 100])).tolist()
    [True, False]
    """
    chosen = MINORITY_FIXED + MINORITY_PER_POSITION * np.minimum(P, N) <= np.add(P, N)
    return bool(chosen) if np.ndim(chosen) == 0 else chosen


@nb.njit(inline="always", nogil=True)
def _next_half(buffer, have_half, s0, s1, s2, s3):
    """The next 32-bit half of the stream (high half of a fresh output first)."""
    if have_half:
        return buffer & _LOW32, buffer, False, s0, s1, s2, s3
    buffer, s0, s1, s2, s3 = xoshiro_next(s0, s1, s2, s3)
    return buffer >> _S32, buffer, True, s0, s1, s2, s3


@nb.njit(inline="always", nogil=True)
def _bounded(bound, buffer, have_half, s0, s1, s2, s3):
    """Uniform integer in [0, bound) by Lemire's multiply-shift with rejection (bound < 2**32)."""
    x, buffer, have_half, s0, s1, s2, s3 = _next_half(buffer, have_half, s0, s1, s2, s3)
    m = x * bound
    if (m & _LOW32) < bound:
        threshold = (_TWO32 - bound) % bound
        while (m & _LOW32) < threshold:
            x, buffer, have_half, s0, s1, s2, s3 = _next_half(buffer, have_half, s0, s1, s2, s3)
            m = x * bound
    return np.int64(m >> _S32), buffer, have_half, s0, s1, s2, s3


@nb.njit(nogil=True)
def sample_positions(n, m, s0, s1, s2, s3, bitmap, positions):
    """Floyd's algorithm: m distinct positions of 1..n, uniformly, sorted into ``positions``.

    ``bitmap`` (int64, at least ceil(n / 64) words) must be all zero and is left all zero.
    """
    buffer = np.uint64(0)
    have_half = False
    for j in range(n - m, n):
        t, buffer, have_half, s0, s1, s2, s3 = _bounded(np.uint64(j + 1), buffer, have_half, s0, s1, s2, s3)
        taken = (bitmap[t >> 6] >> (t & 63)) & 1
        chosen = j if taken else t
        bitmap[chosen >> 6] |= np.int64(1) << (chosen & 63)
    found = 0
    for word in range((n + 63) >> 6):
        bits = bitmap[word]
        while bits != 0:
            positions[found] = (word << 6) + trailing_zeros(bits) + 1
            found += 1
            bits &= bits - 1
        bitmap[word] = 0


@nb.njit(nogil=True)
def harmonic_numbers(n):
    """H_0..H_n, each by Neumaier's compensated summation (error about one ulp)."""
    harmonic = np.zeros(n + 1)
    total, compensation = 0.0, 0.0
    for i in range(1, n + 1):
        term = 1.0 / i
        t = total + term
        if abs(total) >= abs(term):
            compensation += (total - t) + term
        else:
            compensation += (term - t) + total
        total = t
        harmonic[i] = total + compensation
    return harmonic


def _scorers(with_mcc):
    """The two scoring functions, with or without the best MCC work (``with_mcc``: a compile-time constant)."""

    def score_positive_positions(positions, n_pos, n_neg, inverse, mcc_w, ks, out, row):
        """Every metric of the ranking whose positives sit at ``positions`` (sorted, 1-based)."""
        u_pairs, best_d, best_g, f1_num, f1_den, ap_sum, best_m = 0, 0, 0, 0, 1, 0.0, 0.0
        n = n_pos + n_neg
        for index in range(n_pos):
            tp, k = index + 1, positions[index]
            u_pairs += n_neg - k + tp
            best_d = max(best_d, 2 * tp - k)
            g = tp * n - k * n_pos
            best_g = max(best_g, g)
            if with_mcc:
                best_m = max(best_m, g * mcc_w[k])
            if 2 * tp * f1_den > f1_num * (n_pos + k):
                f1_num, f1_den = 2 * tp, n_pos + k
            ap_sum += tp * inverse[k]
        index = 0
        for segment in range(ks.shape[0]):
            while index < n_pos and positions[index] <= ks[segment]:
                index += 1
            out[row, TP_COLUMN + segment] = index
        write_base_columns(out, row, n_pos, n_neg, u_pairs, best_d, f1_num, f1_den, best_g, ap_sum, best_m, with_mcc)

    def score_negative_positions(positions, n_pos, n_neg, harmonic, mcc_w, ks, out, row):
        """Every metric of the ranking whose negatives sit at ``positions`` (sorted, 1-based)."""
        u_pairs, best_d, best_g, f1_num, f1_den, ap_sum, best_m = 0, 0, 0, 0, 1, 0.0, 0.0
        n = n_pos + n_neg
        previous = 0
        for index in range(n_neg + 1):
            above = index  # negatives above the run of positives that ends here
            end = positions[index] - 1 if index < n_neg else n  # last position of the run
            run = end - previous
            tp = end - above
            if index < n_neg:
                u_pairs += tp
            if run > 0:
                best_d = max(best_d, 2 * tp - end)
                g = tp * n_neg - above * n_pos
                best_g = max(best_g, g)
                if with_mcc:
                    best_m = max(best_m, g * mcc_w[end])
                if 2 * tp * f1_den > f1_num * (n_pos + end):
                    f1_num, f1_den = 2 * tp, n_pos + end
                ap_sum += run - above * (harmonic[end] - harmonic[previous])
            previous = end + 1
        index = 0
        for segment in range(ks.shape[0]):
            while index < n_neg and positions[index] <= ks[segment]:
                index += 1
            out[row, TP_COLUMN + segment] = ks[segment] - index
        write_base_columns(out, row, n_pos, n_neg, u_pairs, best_d, f1_num, f1_den, best_g, ap_sum, best_m, with_mcc)

    suffix = VARIANT_SUFFIXES[with_mcc]
    return (nb.njit(nogil=True)(variant_name(score_positive_positions, f"_score_positive_positions_{suffix}")),
            nb.njit(nogil=True)(variant_name(score_negative_positions, f"_score_negative_positions_{suffix}")))


_score_positive_positions, _score_negative_positions = _scorers(False)
_score_positive_positions_mcc, _score_negative_positions_mcc = _scorers(True)


def _minority_kernel(with_mcc):
    """The minority-class kernel, with or without the best MCC work (``with_mcc``: a compile-time constant)."""

    def minority_block(n_pos, n_neg, key0, key1, first_replicate, ks, out, labels_out):
        n = n_pos + n_neg
        positives_are_minority = n_pos <= n_neg
        m = n_pos if positives_are_minority else n_neg
        bitmap = np.zeros((n + 63) >> 6, dtype=np.int64)
        positions = np.empty(m, dtype=np.int64)
        inverse = np.empty(n + 1)
        inverse[0] = 0.0
        for i in range(1, n + 1):
            inverse[i] = 1.0 / i
        harmonic = harmonic_numbers(n)
        mcc_w = mcc_weights(n_pos, n_neg, n + 1 if with_mcc else 0)
        record = labels_out.shape[0] > 0
        for row in range(out.shape[0]):
            s0, s1, s2, s3 = replicate_state(key0, key1, first_replicate + row)
            sample_positions(n, m, s0, s1, s2, s3, bitmap, positions)
            if positives_are_minority:
                if with_mcc:
                    _score_positive_positions_mcc(positions, n_pos, n_neg, inverse, mcc_w, ks, out, row)
                else:
                    _score_positive_positions(positions, n_pos, n_neg, inverse, mcc_w, ks, out, row)
            elif with_mcc:
                _score_negative_positions_mcc(positions, n_pos, n_neg, harmonic, mcc_w, ks, out, row)
            else:
                _score_negative_positions(positions, n_pos, n_neg, harmonic, mcc_w, ks, out, row)
            if record:
                labels_out[row, :] = 0 if positives_are_minority else 1
                for index in range(m):
                    labels_out[row, positions[index] - 1] = 1 if positives_are_minority else 0

    return jit_cached(nogil=True)(variant_name(minority_block, f"_minority_block_{VARIANT_SUFFIXES[with_mcc]}"))


#: The compiled minority-class kernel without and with best MCC (indexed by ``with_mcc``).
_MINORITY_BLOCK = (_minority_kernel(False), _minority_kernel(True))


def simulate_minority_block(n_pos, n_neg, key0, key1, first_replicate, ks, out, labels_out, with_mcc=False):
    """Fill ``out`` like :func:`tablegen.compute.kernels.ranking.simulate_block`, sampling minority positions.

    Same arguments and output columns as ``simulate_block`` (``labels_out``: the sampled rankings,
    1 = positive, top first, when not empty; without ``with_mcc``, the default, the variant compiled
    without best MCC's work runs: that column NaN, every other one the same, bit for bit); a
    different, equally uniform, random stream.

    Examples
    --------
    >>> from tablegen.compute.kernels.ranking import TP_COLUMN
    >>> out = np.empty((2, TP_COLUMN + 1))
    >>> labels = np.empty((0, 0), np.uint8)
    >>> simulate_minority_block(2, 300, np.uint64(1), np.uint64(2), 0, np.array([10]), out, labels, with_mcc=True)
    >>> bool(((0.0 <= out) & (out <= 2)).all())
    True
    """
    _MINORITY_BLOCK[bool(with_mcc)](n_pos, n_neg, key0, key1, first_replicate, ks, out, labels_out)
