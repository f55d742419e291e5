"""CUDA twins of the alternative kernels (:func:`tablegen.compute.kernels.alternative.binormal_block` and
:func:`~tablegen.compute.kernels.alternative.lehmann_block`).

One thread per replicate.  Thread i draws replicate ``first + i``'s P + N scores exactly as the CPU kernel
does (Marsaglia's polar method on the same xoshiro256** stream, the products and sums rounded separately with
:func:`~tablegen.compute.kernels.cuda.rng.mul_rn` / ``add_rn``, never fused) into its row of a scratch array,
heap-sorts the positives' and the negatives' scores apart (a sorted array does not depend on the sorting
algorithm, so the CPU's quicksort and this heapsort give the same arrays), and merges them from the top with
the CPU kernel's group-by-group updates (:func:`_score_row`, shared).  The Lehmann twin draws each item's open
uniform U from the same stream as the CPU kernel and takes U**(1/k) for a positive (``pow``: libdevice's on a GPU,
which may differ from libm's by an ulp, like ``log``).  Bit for bit equal to the CPU kernel under the simulator
(``tests/compute/test_power_mc.py``); on a GPU libdevice's ``log`` may differ from libm's by an ulp, which
changes a value only if two scores of a replicate fall within an ulp of each other.
"""

import math

import numpy as np
from numba import cuda

from tablegen.compute.kernels.cuda.rng import add_rn, mul_rn, replicate_state, xoshiro_next
from tablegen.compute.kernels.ranking import MCC_COLUMN, TP_COLUMN

#: Threads per CUDA block.
THREADS_PER_BLOCK = 128
#: Device bytes of score scratch per launch (8 bytes per item and thread in flight).
SCRATCH_BYTES = 1 << 30
S11 = np.uint64(11)
S12 = np.uint64(12)
HALF53 = np.int64(1 << 52)
ULP52 = 2.0 ** -52
ULP53 = 2.0 ** -53


@cuda.jit(device=True, inline=True)
def _signed_uniform(s0, s1, s2, s3):
    r, s0, s1, s2, s3 = xoshiro_next(s0, s1, s2, s3)
    return (np.int64(r >> S11) - HALF53) * ULP52, s0, s1, s2, s3


@cuda.jit(device=True, inline=True)
def _polar_pair(s0, s1, s2, s3):
    """Two N(0, 1) draws (as :func:`tablegen.compute.kernels.alternative.polar_pair`)."""
    u = 0.0
    v = 0.0
    s = 0.0
    searching = True
    while searching:
        u, s0, s1, s2, s3 = _signed_uniform(s0, s1, s2, s3)
        v, s0, s1, s2, s3 = _signed_uniform(s0, s1, s2, s3)
        s = add_rn(mul_rn(u, u), mul_rn(v, v))
        searching = not (0.0 < s < 1.0)
    f = math.sqrt(-2.0 * math.log(s) / s)
    return mul_rn(u, f), mul_rn(v, f), s0, s1, s2, s3


@cuda.jit(device=True, inline=True)
def _sift_down(a, row, base, root, size):
    """Restore the max-heap below ``root`` in a[row, base : base + size]."""
    while True:
        child = 2 * root + 1
        if child >= size:
            return
        if child + 1 < size and a[row, base + child + 1] > a[row, base + child]:
            child += 1
        if a[row, base + root] >= a[row, base + child]:
            return
        a[row, base + root], a[row, base + child] = a[row, base + child], a[row, base + root]
        root = child


@cuda.jit(device=True, inline=True)
def _heapsort(a, row, base, size):
    """Sort a[row, base : base + size] ascending, in place."""
    for start in range(size // 2 - 1, -1, -1):
        _sift_down(a, row, base, start, size)
    for end in range(size - 1, 0, -1):
        a[row, base], a[row, base + end] = a[row, base + end], a[row, base]
        _sift_down(a, row, base, 0, end)


@cuda.jit(device=True, inline=True)
def _score_row(scratch, i, n_pos, n_neg, ks, mcc_w, with_mcc, out):
    """Every metric of the sorted scores in ``scratch[i]`` (positives' then negatives', each ascending) into
    ``out[i]``: the CPU kernel's :func:`~tablegen.compute.kernels.alternative.score_sorted`, group by group."""
    n_ks = ks.shape[0]
    p, q = n_pos - 1, n_neg - 1
    tp, fp, u2, best_d, best_g, segment = 0, 0, 0, 0, 0, 0
    best_f1 = 0.0
    ap = 0.0
    best_m = 0.0
    while p >= 0 or q >= 0:
        top_pos = scratch[i, p] if p >= 0 else -math.inf
        top_neg = scratch[i, n_pos + q] if q >= 0 else -math.inf
        value = max(top_pos, top_neg)
        gp = 0
        while p >= 0 and scratch[i, p] == value:
            gp += 1
            p -= 1
        gn = 0
        while q >= 0 and scratch[i, n_pos + q] == value:
            gn += 1
            q -= 1
        tp += gp
        fp += gn
        k = tp + fp
        g = tp * n_neg - fp * n_pos
        if gp > 0:
            u2 += 2 * gp * (n_neg - fp) + gp * gn
            best_d = max(best_d, tp - fp)
            best_f1 = max(best_f1, (2 * tp) / (n_pos + k))
            best_g = max(best_g, g)
            ap = add_rn(ap, mul_rn(np.float64(gp), tp / k))
        if with_mcc:
            best_m = max(best_m, mul_rn(np.float64(g), mcc_w[k]))
        while segment < n_ks and ks[segment] <= k:
            out[i, TP_COLUMN + segment] = tp if ks[segment] == k else math.nan
            segment += 1
    out[i, 0] = mul_rn(np.float64(u2), 0.5) / (n_pos * n_neg)
    out[i, 1] = (best_d + n_neg) / (n_pos + n_neg)
    out[i, 2] = best_f1
    out[i, 3] = (best_g + n_pos * n_neg) / (2 * n_pos * n_neg)
    out[i, 4] = ap / n_pos
    out[i, MCC_COLUMN] = min(best_m, 1.0) if with_mcc else math.nan


@cuda.jit
def binormal_kernel(n_pos, n_neg, d, key0, key1, first, ks, mcc_w, with_mcc, scratch, out):
    """Thread i: replicate ``first + i``'s scores into ``scratch[i]``, every metric into ``out[i]``."""
    i = cuda.grid(1)
    if i >= out.shape[0]:
        return
    s0, s1, s2, s3 = replicate_state(key0, key1, np.int64(first) + np.int64(i))
    spare = 0.0
    have_spare = False
    for item in range(n_pos + n_neg):
        if have_spare:
            z = spare
            have_spare = False
        else:
            z, spare, s0, s1, s2, s3 = _polar_pair(s0, s1, s2, s3)
            have_spare = True
        scratch[i, item] = add_rn(z, d) if item < n_pos else z
    _heapsort(scratch, i, 0, n_pos)
    _heapsort(scratch, i, n_pos, n_neg)
    _score_row(scratch, i, n_pos, n_neg, ks, mcc_w, with_mcc, out)


@cuda.jit
def lehmann_kernel(n_pos, n_neg, k, key0, key1, first, ks, mcc_w, with_mcc, scratch, out):
    """Thread i: replicate ``first + i``'s Lehmann scores (positives U**(1/k), negatives U, as
    :func:`tablegen.compute.kernels.alternative.draw_lehmann`) into ``scratch[i]``, every metric into ``out[i]``."""
    i = cuda.grid(1)
    if i >= out.shape[0]:
        return
    s0, s1, s2, s3 = replicate_state(key0, key1, np.int64(first) + np.int64(i))
    inv_k = 1.0 / k
    for item in range(n_pos + n_neg):
        r, s0, s1, s2, s3 = xoshiro_next(s0, s1, s2, s3)
        u = mul_rn(np.float64(np.int64(r >> S12) * 2 + 1), ULP53)
        scratch[i, item] = u ** inv_k if item < n_pos else u
    _heapsort(scratch, i, 0, n_pos)
    _heapsort(scratch, i, n_pos, n_neg)
    _score_row(scratch, i, n_pos, n_neg, ks, mcc_w, with_mcc, out)


def _launch(kernel, n_pos, n_neg, effect, key0, key1, first, ks, mcc_w, with_mcc, out, threads):
    n = n_pos + n_neg
    d_ks, d_weights = cuda.to_device(ks), cuda.to_device(mcc_w)
    rows = max(1, min(threads, out.shape[0], SCRATCH_BYTES // (8 * n)))
    d_scratch = cuda.device_array((rows, n), np.float64)
    d_out = cuda.device_array((rows, out.shape[1]), np.float64)
    for start in range(0, out.shape[0], rows):
        count = min(rows, out.shape[0] - start)
        block = d_out[:count]
        grid = max(1, math.ceil(count / THREADS_PER_BLOCK))
        kernel[grid, THREADS_PER_BLOCK](n_pos, n_neg, np.float64(effect), key0, key1, first + start, d_ks,
                                        d_weights, bool(with_mcc), d_scratch, block)
        out[start:start + count] = block.copy_to_host()


def binormal_values_cuda(n_pos, n_neg, d, key0, key1, first, ks, mcc_w, with_mcc, out, threads: int = 1 << 16):
    """:func:`~tablegen.compute.kernels.alternative.binormal_block` on the GPU into ``out`` (rows, columns), up to
    ``threads`` replicates per launch (and at most :data:`SCRATCH_BYTES` of scores in flight)."""
    _launch(binormal_kernel, n_pos, n_neg, d, key0, key1, first, ks, mcc_w, with_mcc, out, threads)


def lehmann_values_cuda(n_pos, n_neg, k, key0, key1, first, ks, mcc_w, with_mcc, out, threads: int = 1 << 16):
    """:func:`~tablegen.compute.kernels.alternative.lehmann_block` on the GPU into ``out`` (rows, columns), as
    :func:`binormal_values_cuda`."""
    _launch(lehmann_kernel, n_pos, n_neg, k, key0, key1, first, ks, mcc_w, with_mcc, out, threads)
