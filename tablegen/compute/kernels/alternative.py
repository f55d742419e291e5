"""Alternative kernels: draw one model's scores under an alternative (binormal or Lehmann) and score every metric in
one pass.

The binormal model (the convention of pROC and Obuchowski): a positive's score is N(d, 1), a negative's
N(0, 1), independent, so AUC = Phi(d / sqrt 2).  Replicate r of a question draws its P + N scores from its
own xoshiro256** stream (:func:`~tablegen.compute.kernels.rng.replicate_state` of the question's key and r),
so a replicate's scores depend on the key and r alone, never on how replicates are split into blocks.

Normal draws (Marsaglia's polar method, two per accepted pair): u = 2 U1 - 1, v = 2 U2 - 1 from the upper
53 bits of two outputs (exact: (x - 2**52) * 2**-52 with x the 53-bit integer), s = u*u + v*v, a pair
with s >= 1 or s = 0 drawn again from the next two outputs, then f = sqrt(-2 log(s) / s) and the normals
u f, v f.  The stream's normals go in order to the positives (adding d) and then to the negatives, a
pair's second normal to the next item.  Every operation is one IEEE operation rounded once (the
multiplications and additions are never fused, on the CPU or on the GPU, see
:mod:`tablegen.compute.kernels.cuda.alternative`); ``log`` is the platform's (libm here, libdevice on a
GPU, which may differ by an ulp; the metrics depend only on the order of the scores, so they differ only
if two scores fall within an ulp of each other).

The Lehmann alternative (:func:`lehmann_block`): positives' scores have CDF F**k and negatives' F; only the ranking
matters, so F is uniform: each item takes one output of its replicate's stream as an open uniform
U = (2 x + 1) 2**-53 (x its upper 52 bits; exact, never 0 or 1), a positive's score is U**(1/k) (``pow``, the
platform's: libm here, libdevice on a GPU, which may differ by an ulp, as ``log`` above) and a negative's U.
Positives first, then negatives, in the stream's order.  Each class is bucket-sorted over its own [min, max]
(equal bins where the draws lie, whatever k).  The ranking's law is that of the exact programme's Markov chain
(:mod:`tablegen.compute.kernels.lehmann`), reached here from real scores, independently of the step probability.

Scoring: the positives' and negatives' scores are sorted apart (ascending: :func:`bucket_sort`, a counting sort
into P (or N) equal bins over the class's mean +- 4 then an insertion sort, O(n) for normal draws and about 4x faster
than numba's quicksort; a sorted array is the same whatever sorts it) and merged from the top; equal
scores form one threshold group (as :func:`tablegen.compute.metric_scorers.threshold_groups` groups them;
with continuous draws a tie has probability about (P + N)**2 2**-53).  At the close of a group holding
``gp`` positives and ``gn`` negatives, with TP and FP after it and k = TP + FP, every metric is updated
by the expressions of the label-permutation kernel's scorer
(:func:`tablegen.compute.kernels.permutation.score_model`, the registry's kernel columns):

``0 auc``                     2U += 2 gp (N - FP) + gp gn, value (2U / 2) / (P N)
``1 best_accuracy``           max of TP - FP, value (D + N) / (P + N)
``2 best_f1``                 max of 2 TP / (P + k)
``3 best_balanced_accuracy``  max of TP N - FP P, value (G + P N) / (2 P N)
``4 average_precision``       sum of gp (TP / k), divided by P
``5 best_mcc``                max of (TP N - FP P) w_k (:func:`~tablegen.compute.kernels.ranking.mcc_weights`),
                              capped at 1 (NaN unless ``with_mcc``)
``6 ...``                     TP at each requested cut-off k (NaN when tied scores straddle k)

The output's columns are those of the null kernels (:data:`~tablegen.compute.kernels.ranking.BASE_COLUMNS`,
then TP at each cut-off), so :class:`tablegen.compute.mc.KernelLayout` places the metrics here too.
``tests/compute/test_power_mc.py`` checks every value against the registry's scorers of the drawn scores
and against ``score_model``, and the CUDA twin against this kernel bit for bit (simulator).
Integer widths: int64 counters; the RNG is uint64.
"""

import math

import numba as nb
import numpy as np

from tablegen.compute.kernels.jit import jit_cached
from tablegen.compute.kernels.ranking import MCC_COLUMN, TP_COLUMN
from tablegen.compute.kernels.rng import replicate_state, xoshiro_next

_S11 = np.uint64(11)
_S12 = np.uint64(12)
_HALF53 = np.int64(1 << 52)
_ULP52 = 2.0 ** -52
_ULP53 = 2.0 ** -53


@nb.njit(inline="always", nogil=True)
def _signed_uniform(s0, s1, s2, s3):
    """A uniform on [-1, 1) with 53 random bits, exact: (x - 2**52) 2**-52, x the output's upper 53 bits."""
    r, s0, s1, s2, s3 = xoshiro_next(s0, s1, s2, s3)
    return (np.int64(r >> _S11) - _HALF53) * _ULP52, s0, s1, s2, s3


@nb.njit(inline="always", nogil=True)
def polar_pair(s0, s1, s2, s3):
    """Two independent N(0, 1) draws by Marsaglia's polar method (module docstring)."""
    while True:
        u, s0, s1, s2, s3 = _signed_uniform(s0, s1, s2, s3)
        v, s0, s1, s2, s3 = _signed_uniform(s0, s1, s2, s3)
        s = u * u + v * v
        if 0.0 < s < 1.0:
            break
    f = math.sqrt(-2.0 * math.log(s) / s)
    return u * f, v * f, s0, s1, s2, s3


@nb.njit(nogil=True)
def draw_binormal(key0, key1, replicate, n_pos, d, scores):
    """Replicate ``replicate``'s scores into ``scores`` (P + N): the positives' N(d, 1) first, then the
    negatives' N(0, 1)."""
    s0, s1, s2, s3 = replicate_state(key0, key1, replicate)
    spare = 0.0
    have_spare = False
    for i in range(scores.size):
        if have_spare:
            z = spare
            have_spare = False
        else:
            z, spare, s0, s1, s2, s3 = polar_pair(s0, s1, s2, s3)
            have_spare = True
        scores[i] = z + d if i < n_pos else z


@nb.njit(nogil=True)
def bucket_sort_range(values, low, high, counts, spare, bins):
    """Sort ``values`` ascending in place: each value counted into one of n equal bins over [low, high) (those
    outside into the end bins), placed bin by bin into ``spare``, then an insertion sort (which only moves values
    within a bin, and any value outside the range, into place: the result is sorted whatever the range).
    ``counts`` holds n + 1 int64, ``spare`` n floats and ``bins`` n int64 (scratch)."""
    n = values.size
    if n < 2:
        return
    scale = n / (high - low) if high > low else 0.0
    counts[:n + 1] = 0
    for i in range(n):
        b = min(max(int((values[i] - low) * scale), 0), n - 1)
        bins[i] = b
        counts[b + 1] += 1
    for b in range(n):
        counts[b + 1] += counts[b]
    for i in range(n):
        spare[counts[bins[i]]] = values[i]
        counts[bins[i]] += 1
    values[0] = spare[0]
    for i in range(1, n):
        x = spare[i]
        j = i - 1
        while j >= 0 and values[j] > x:
            values[j + 1] = values[j]
            j -= 1
        values[j + 1] = x


@nb.njit(nogil=True)
def bucket_sort(values, center, counts, spare, bins):
    """Sort ``values`` ascending in place by :func:`bucket_sort_range` over [center - 4, center + 4) (normal
    draws of mean ``center``)."""
    bucket_sort_range(values, center - 4.0, center + 4.0, counts, spare, bins)


@nb.njit(nogil=True)
def score_sorted(positives, negatives, ks, mcc_w, with_mcc, out, row):
    """Every metric of one model whose positives' and negatives' scores are ``positives`` and ``negatives``,
    each sorted ascending, into ``out[row]`` (the merge from the top: module docstring)."""
    n_pos, n_neg = positives.size, negatives.size
    n_ks = ks.shape[0]
    i, j = n_pos - 1, n_neg - 1
    tp = 0
    fp = 0
    u2 = 0
    best_d = 0
    best_f1 = 0.0
    best_g = 0
    ap = 0.0
    best_m = 0.0
    segment = 0
    while i >= 0 or j >= 0:
        top_pos = positives[i] if i >= 0 else -np.inf
        top_neg = negatives[j] if j >= 0 else -np.inf
        value = max(top_pos, top_neg)
        gp = 0
        while i >= 0 and positives[i] == value:
            gp += 1
            i -= 1
        gn = 0
        while j >= 0 and negatives[j] == value:
            gn += 1
            j -= 1
        tp += gp
        fp += gn
        k = tp + fp
        g = tp * n_neg - fp * n_pos
        if gp > 0:  # a group of negatives alone adds nothing to U or AP and lowers TP - FP, G and 2 TP / (P + k)
            u2 += 2 * gp * (n_neg - fp) + gp * gn
            best_d = max(best_d, tp - fp)
            best_f1 = max(best_f1, (2 * tp) / (n_pos + k))
            best_g = max(best_g, g)
            ap += gp * (tp / k)
        if with_mcc:
            best_m = max(best_m, g * mcc_w[k])
        while segment < n_ks and ks[segment] <= k:
            out[row, TP_COLUMN + segment] = tp if ks[segment] == k else math.nan  # a tie straddles k: NaN
            segment += 1
    out[row, 0] = (u2 * 0.5) / (n_pos * n_neg)
    out[row, 1] = (best_d + n_neg) / (n_pos + n_neg)
    out[row, 2] = best_f1
    out[row, 3] = (best_g + n_pos * n_neg) / (2 * n_pos * n_neg)
    out[row, 4] = ap / n_pos
    out[row, MCC_COLUMN] = min(best_m, 1.0) if with_mcc else math.nan


@jit_cached(nogil=True)
def binormal_block(n_pos, n_neg, d, key0, key1, first, ks, mcc_w, with_mcc, out, scores_out):
    """Replicates ``first .. first + out.shape[0] - 1`` of the binormal alternative: every metric of each
    into ``out`` (rows, TP_COLUMN + len(ks)).

    Parameters
    ----------
    n_pos, n_neg : int
        P and N (both >= 1).
    d : float
        The positives' mean (the negatives' is 0, both variances 1).
    key0, key1 : np.uint64
        The question's key (see :mod:`tablegen.compute.kernels.rng`).
    first : int
        Replicate index of row 0.
    ks : int64 array
        Strictly increasing cut-offs for TP at k (each in 1..P+N).
    mcc_w : float64 array
        :func:`~tablegen.compute.kernels.ranking.mcc_weights` (P, N, P + N + 1), read only if ``with_mcc``.
    with_mcc : bool
        Whether to score best MCC (its column NaN otherwise).
    out : float64 array
        Filled row by row.
    scores_out : float64 array, (rows, P + N) or (0, 0)
        If not empty, each replicate's drawn scores (positives first), for tests.

    Examples
    --------
    >>> out = np.empty((3, TP_COLUMN + 1))
    >>> binormal_block(4, 5, 1.0, np.uint64(1), np.uint64(2), 0, np.array([2]), np.zeros(10), False, out,
    ...                np.empty((0, 0)))
    >>> bool(((0.0 <= out[:, 0]) & (out[:, 0] <= 1.0)).all()), bool(np.isnan(out[:, MCC_COLUMN]).all())
    (True, True)
    """
    n = n_pos + n_neg
    record = scores_out.shape[0] > 0
    scores = np.empty(n)
    counts = np.empty(max(n_pos, n_neg) + 1, np.int64)
    spare = np.empty(max(n_pos, n_neg))
    bins = np.empty(max(n_pos, n_neg), np.int64)
    for row in range(out.shape[0]):
        draw_binormal(key0, key1, first + row, n_pos, d, scores)
        if record:
            for i in range(n):  # not scores_out[row, :] = scores (compile time: see kernels/jit.py)
                scores_out[row, i] = scores[i]
        positives = scores[:n_pos]
        negatives = scores[n_pos:]
        bucket_sort(positives, d, counts, spare, bins)
        bucket_sort(negatives, 0.0, counts, spare, bins)
        score_sorted(positives, negatives, ks, mcc_w, with_mcc, out, row)


# -- the Lehmann alternative -------------------------------------------------------------------------------
@nb.njit(inline="always", nogil=True)
def open_uniform(s0, s1, s2, s3):
    """A uniform on (0, 1) with 52 random bits, exact: (2 x + 1) 2**-53, x the output's upper 52 bits (never 0,
    so a power of it is never 0 either)."""
    r, s0, s1, s2, s3 = xoshiro_next(s0, s1, s2, s3)
    return np.float64(np.int64(r >> _S12) * 2 + 1) * _ULP53, s0, s1, s2, s3


@nb.njit(nogil=True)
def draw_lehmann(key0, key1, replicate, n_pos, inv_k, scores):
    """Replicate ``replicate``'s scores into ``scores`` (P + N): the positives' U**(1/k) first (CDF u**k on
    (0, 1)), then the negatives' U (uniform), one :func:`open_uniform` each, in order."""
    s0, s1, s2, s3 = replicate_state(key0, key1, replicate)
    for i in range(scores.size):
        u, s0, s1, s2, s3 = open_uniform(s0, s1, s2, s3)
        scores[i] = u ** inv_k if i < n_pos else u


@nb.njit(nogil=True)
def _sort_between_extremes(values, counts, spare, bins):
    """:func:`bucket_sort_range` over [min, max] of ``values`` (equal bins where the draws are, whatever k)."""
    if values.size < 2:
        return
    low, high = values[0], values[0]
    for x in values:
        low = min(low, x)
        high = max(high, x)
    bucket_sort_range(values, low, high, counts, spare, bins)


@jit_cached(nogil=True)
def lehmann_block(n_pos, n_neg, k, key0, key1, first, ks, mcc_w, with_mcc, out, scores_out):
    """Replicates ``first .. first + out.shape[0] - 1`` of the Lehmann alternative (positives' scores U**(1/k),
    CDF F**k with F uniform; negatives' U): every metric of each into ``out`` (rows, TP_COLUMN + len(ks)).

    Parameters are those of :func:`binormal_block`, with the Lehmann exponent ``k`` (> 0; AUC k/(k + 1)) in
    place of d.

    Examples
    --------
    >>> out = np.empty((2000, TP_COLUMN))
    >>> lehmann_block(30, 30, 3.0, np.uint64(1), np.uint64(2), 0, np.zeros(0, np.int64), np.zeros(61), False,
    ...               out, np.empty((0, 0)))
    >>> bool(abs(out[:, 0].mean() - 0.75) < 0.01)  # the mean AUC is k / (k + 1)
    True
    """
    n = n_pos + n_neg
    record = scores_out.shape[0] > 0
    inv_k = 1.0 / k
    scores = np.empty(n)
    counts = np.empty(max(n_pos, n_neg) + 1, np.int64)
    spare = np.empty(max(n_pos, n_neg))
    bins = np.empty(max(n_pos, n_neg), np.int64)
    for row in range(out.shape[0]):
        draw_lehmann(key0, key1, first + row, n_pos, inv_k, scores)
        if record:
            for i in range(n):  # not scores_out[row, :] = scores (compile time: see kernels/jit.py)
                scores_out[row, i] = scores[i]
        positives = scores[:n_pos]
        negatives = scores[n_pos:]
        _sort_between_extremes(positives, counts, spare, bins)
        _sort_between_extremes(negatives, counts, spare, bins)
        score_sorted(positives, negatives, ks, mcc_w, with_mcc, out, row)
