"""One-pass Monte Carlo kernel: sample random rankings and score every metric in the same pass.

Algorithm
---------
A ranking of P positives and N negatives is drawn top to bottom by sequential sampling: with
``p_rem`` positives among the ``total`` items still to place, the next item is positive iff a
uniform integer in ``[0, total)`` is below ``p_rem``.  This gives every one of C(P+N, P)
arrangements the same probability (the product of the step probabilities is P! N! / (P+N)!), and
``tests/compute/test_kernel.py`` checks uniformity by a chi-square test over all arrangements of a small cell.

Uniform integers come from 32-bit halves of xoshiro256** outputs (two steps per output) by
Lemire's multiply-shift with its rejection step, so sampling is exact, not merely close: a draw
``x`` is rejected iff ``(x * total) mod 2**32 < 2**32 mod total`` (probability < total / 2**32).

Scoring, per prefix k (integers only, except average precision):
``auc``                      U += TP_k at every negative (pairs with the positive above)
``best_accuracy``            max of D_k = TP_k - FP_k = 2 TP_k - k, reported as (N + D) / (P + N)
``best_f1``                  max of 2 TP_k / (P + k), kept as a fraction, compared by cross-multiplication
``best_balanced_accuracy``   max of G_k = TP_k N - FP_k P, reported as (G + P N) / (2 P N)
``average_precision``        sum over positives of TP_k / k (reciprocals tabulated), divided by P
``best_mcc``                 max of G_k * w_k, w_k = 1 / sqrt(P N k (P+N-k)) tabulated (:func:`mcc_weights`;
                             0 at k = 0 and k = P+N, where MCC is undefined), capped at 1
``tp_at_k``                  TP at each requested k (the loop runs in segments ending at each k)
The maxima start at k = 0 (D = G = F1 = 0) and include k = P + N.  Updates are branch-free, so the
loop does not mispredict on the random labels.  Every reported value except average precision and
best MCC is a single correctly rounded division of two exact integers, so equal rationals give equal
floats and ties in the sampled distribution are exact.  Best MCC is the largest of the floats
G_k * w_k, each the same correctly rounded operations in every kernel and on every device (a maximum
of the same floats does not depend on the order it is taken in).  Best MCC costs a conversion, a
multiply and a maximum per step, so each kernel is compiled in two variants, with and without that
work (``with_mcc``, a compile-time constant: :data:`MCC_COLUMN` is NaN without it); the engine runs
the one without unless a requested metric reads that column (:class:`tablegen.compute.mc.KernelLayout`),
and every other column is the same, bit for bit.  Integer widths: int64 counters (P, N <= 10**6 keep
every product below 2**63); the RNG is uint64.

Checked against the slow numpy reference scorers of :mod:`tablegen.compute.metrics` in
``tests/compute/test_kernel.py`` (every metric, on rankings the kernel itself records in ``labels_out``).
"""

import math

import numba as nb
import numpy as np

from tablegen.compute.kernels.jit import jit_cached, variant_name
from tablegen.compute.kernels.rng import replicate_state, xoshiro_next

#: Columns of the kernel's output before the tp_at_k columns.
BASE_COLUMNS = ("auc", "best_accuracy", "best_f1", "best_balanced_accuracy", "average_precision", "best_mcc")
#: Column of TP at the first cut-off.
TP_COLUMN = len(BASE_COLUMNS)
#: The one column whose work a kernel skips unless asked (``with_mcc``); NaN when skipped.
MCC_COLUMN = BASE_COLUMNS.index("best_mcc")
#: Name suffixes of the kernel variants compiled without / with best MCC (:func:`.jit.variant_name`).
VARIANT_SUFFIXES = ("plain", "mcc")

_LOW32 = np.uint64(0xFFFFFFFF)
_TWO32 = np.uint64(1 << 32)
_S32 = np.uint64(32)


@nb.njit(inline="always", nogil=True)
def bounded_draw(x32, total, s0, s1, s2, s3):
    """Uniform integer in [0, total) from a 32-bit draw, redrawing on rejection (Lemire 2019)."""
    m = x32 * total
    if (m & _LOW32) < total:
        threshold = (_TWO32 - total) % total
        while (m & _LOW32) < threshold:
            r, s0, s1, s2, s3 = xoshiro_next(s0, s1, s2, s3)
            m = (r >> _S32) * total
    return m >> _S32, s0, s1, s2, s3


@nb.njit(inline="always", nogil=True)
def draw_below(total, s0, s1, s2, s3):
    """Uniform integer in [0, total) from the upper half of one fresh xoshiro256** output (Lemire's
    multiply-shift, a rejected draw redrawn from the next outputs' upper halves: :func:`bounded_draw`); the
    draw of the permutation and bootstrap kernels."""
    r, s0, s1, s2, s3 = xoshiro_next(s0, s1, s2, s3)
    return bounded_draw(r >> _S32, total, s0, s1, s2, s3)


@nb.njit(nogil=True)
def mcc_weights(n_pos, n_neg, size):
    """w_k = 1 / sqrt(P N k (P + N - k)) for k = 1 .. P+N-1, and 0 at k = 0, k >= P + N (``size`` entries).

    MCC at prefix k is G_k w_k with G_k = TP_k N - FP_k P = (P+N) TP_k - k P.  Each weight is one
    product of two exact integers' floats (P N and k (P+N-k), both below 2**53), one square root and
    one division, all correctly rounded: the same float wherever it is computed (the CUDA kernels get
    this very table from the host).
    """
    n = n_pos + n_neg
    weights = np.zeros(size)
    pairs = np.float64(n_pos * n_neg)
    for k in range(1, min(n, size)):
        weights[k] = 1.0 / math.sqrt(pairs * np.float64(k * (n - k)))
    return weights


@nb.njit(inline="always", nogil=True)
def write_base_columns(out, row, n_pos, n_neg, u_pairs, best_d, f1_num, f1_den, best_g, ap_sum, best_m, with_mcc):
    """Write the base columns of one ranking from its running sums (every CPU kernel's last step, so the
    same floats come out of each: checked bit for bit across kernels by ``tests/compute/test_kernel.py``)."""
    out[row, 0] = u_pairs / (n_pos * n_neg)
    out[row, 1] = (best_d + n_neg) / (n_pos + n_neg)
    out[row, 2] = f1_num / f1_den
    out[row, 3] = (best_g + n_pos * n_neg) / (2 * n_pos * n_neg)
    out[row, 4] = ap_sum / n_pos
    out[row, MCC_COLUMN] = min(best_m, 1.0) if with_mcc else np.nan


def _scalar_kernel(with_mcc):
    """The scalar kernel, with or without the best MCC work (``with_mcc`` is a compile-time constant)."""

    def scalar_block(n_pos, n_neg, key0, key1, first_replicate, ks, out, labels_out):
        n = n_pos + n_neg
        record = labels_out.shape[0] > 0
        inverse = np.empty(n + 1)
        inverse[0] = 0.0
        for i in range(1, n + 1):
            inverse[i] = 1.0 / i
        mcc_w = mcc_weights(n_pos, n_neg, n + 1 if with_mcc else 0)
        n_ks = ks.shape[0]
        for row in range(out.shape[0]):
            s0, s1, s2, s3 = replicate_state(key0, key1, first_replicate + row)
            k = 0
            tp = 0
            p_rem = n_pos
            u_pairs = 0
            best_d = 0
            best_g = 0
            f1_num = 0
            f1_den = 1
            ap_sum = 0.0
            best_m = 0.0
            buffer = np.uint64(0)
            have_half = False
            for segment in range(n_ks + 1):
                end = ks[segment] if segment < n_ks else n
                while k < end:
                    if have_half:
                        x32 = buffer & _LOW32
                        have_half = False
                    else:
                        buffer, s0, s1, s2, s3 = xoshiro_next(s0, s1, s2, s3)
                        x32 = buffer >> _S32
                        have_half = True
                    j, s0, s1, s2, s3 = bounded_draw(x32, np.uint64(n - k), s0, s1, s2, s3)
                    is_pos = np.int64(j < np.uint64(p_rem))
                    if record:
                        labels_out[row, k] = is_pos
                    k += 1
                    tp += is_pos
                    p_rem -= is_pos
                    u_pairs += (1 - is_pos) * tp
                    best_d = max(best_d, 2 * tp - k)
                    g = tp * n - k * n_pos
                    best_g = max(best_g, g)
                    if with_mcc:
                        best_m = max(best_m, g * mcc_w[k])
                    better = 2 * tp * f1_den > f1_num * (n_pos + k)
                    f1_num = 2 * tp if better else f1_num
                    f1_den = n_pos + k if better else f1_den
                    ap_sum += is_pos * tp * inverse[k]
                if segment < n_ks:
                    out[row, TP_COLUMN + segment] = tp
            write_base_columns(out, row, n_pos, n_neg, u_pairs, best_d, f1_num, f1_den, best_g, ap_sum, best_m,
                               with_mcc)

    return jit_cached(nogil=True)(variant_name(scalar_block, f"_simulate_block_{VARIANT_SUFFIXES[with_mcc]}"))


#: The compiled scalar kernel without and with best MCC (indexed by ``with_mcc``); numba compiles each
#: on first use in the first process and loads it from its on-disk cache in the others.
_SCALAR = (_scalar_kernel(False), _scalar_kernel(True))


def simulate_block(n_pos, n_neg, key0, key1, first_replicate, ks, out, labels_out, with_mcc=False):
    """Sample ``out.shape[0]`` rankings and write every metric of each into ``out``.

    Parameters
    ----------
    n_pos, n_neg : int
        P and N of the cell (both >= 1).
    key0, key1 : np.uint64
        The cell's key (see :mod:`tablegen.compute.kernels.rng`).
    first_replicate : int
        Replicate index of row 0; row i is replicate ``first_replicate + i``.
    ks : int64 array
        Strictly increasing cut-offs for ``tp_at_k`` (each in 1..P+N).
    out : float64 array, shape (n_replicates, TP_COLUMN + len(ks))
        Filled with the columns :data:`BASE_COLUMNS` followed by TP at each k.
    labels_out : uint8 array, shape (n_replicates, P+N) or (0, 0)
        If not empty, the sampled rankings (1 = positive, top first), for tests.
    with_mcc : bool
        Whether to score best MCC (column :data:`MCC_COLUMN`); if False (the default, as in a run
        that does not ask for it) that column is NaN and the variant compiled without its work runs
        (every other column is the same, bit for bit).

    Examples
    --------
    >>> out = np.empty((2, TP_COLUMN + 1))
    >>> simulate_block(3, 4, np.uint64(1), np.uint64(2), 0, np.array([2]), out, np.empty((0, 0), np.uint8))
    >>> bool(np.isnan(out[:, MCC_COLUMN]).all())
    True
    >>> simulate_block(3, 4, np.uint64(1), np.uint64(2), 0, np.array([2]), out, np.empty((0, 0), np.uint8), True)
    >>> bool(((0.0 <= out) & (out <= 2)).all())
    True
    """
    _SCALAR[bool(with_mcc)](n_pos, n_neg, key0, key1, first_replicate, ks, out, labels_out)
