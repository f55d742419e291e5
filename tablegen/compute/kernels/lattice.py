"""Lattice-path dynamic programme: does a random ranking's path touch a half-plane?

A ranking is a monotone lattice path from (0, 0) to (P, N): a positive steps TP += 1, a negative
FP += 1, and all C(P+N, P) paths are equally likely.  For integers a > 0, b >= 0, c the event
"max over prefixes of a*TP - b*FP >= c" is the event that the path touches the half-plane
H = {(t, f): a t - b f >= c}.  Because a > 0 and b >= 0, a negative step never enters H, so a path
first enters H on a positive step.

**Wavefront.**  The programme walks the anti-diagonals d = t + f = 0..P+N.  On diagonal d it holds, for each t,
the probability m(t, d) that a random path reaches (t, d - t) without having touched H.  Every point of diagonal
d + 1 depends only on two points of diagonal d, so the inner loop has no serial dependency and vectorises.  On
diagonal d, H is {t >= T_d} with T_d = ceil((c + b d)/(a + b)), kept exactly by an integer remainder (T grows by 0
or 1 per diagonal); mass stepping into H is added to ``hit``.

**Tilted masses.**  In probability form a step costs two coefficients and a scale per point (from (t, f) the next
step is positive with probability (P - t)/R, negative with (N - f)/R, R = P + N - d).  The programme holds instead
u(t, d) = A(t, f) theta^t eta^f K_d, A the number of paths from the origin that avoid H, so that a step is
u'(t) = eta u(t) + theta u(t - 1): one fused multiply-add a point, as the larger of (theta, eta) is 1 (about 0.08
ns a point here against 0.19 for the probability form, EPYC AVX-512: LLVM keeps to 256-bit vectors, so AVX2 runs
it alike).  The tilt theta / eta is P / N to within 2^-25 relative (the smaller is a / 2^s, a an integer below
2^52 / (P + N + 2)), so u follows the binomial walk that keeps the paths' centre: u(t, d) 2^-delta is the
probability that P + N independent steps, positive with probability p = theta / (theta + eta), reach (t, d - t)
avoiding H, where 2^delta (0 <= delta <= 33) is the growth since the last exact rescaling by a power of two
(every :data:`RESCALE_DIAGONALS` diagonals).  A point's probability is m = u R with the weight
R(t, d) = theta^-t eta^-f C(P + N - d, P - t) / (C(P + N, P) K_d) = Binomial(P + N - d, p)(P - t) /
Binomial(P + N, p)(P) 2^-delta <= P + N + 1 (P is the larger binomial's mode).  R is needed only at the band's
two ends, where points enter H or are trimmed: it is carried there from diagonal to diagonal as a product of exact
ratios of doubles in double-double arithmetic (about 2^-104 relative a factor), so the programme's rounding is one
rounding a point and step, against three to four in the probability form.

**Trimming (optional).**  With ``floor > 0`` the programme drops, diagonal by diagonal, the points at
either end of the live range whose mass is below ``floor`` (paths far from the centre: the low
ones rarely come back up to H, the high ones are too rare to matter) and adds their mass to
``dropped``; the live band then spans some 20-25 standard deviations of TP instead of the whole
diagonal, and no point is subnormal (subnormal arithmetic is about 100x slower: a kept point's u = m / R is at
least floor / (P + N + 1)).  A dropped path
is never counted as a hit, and it might have hit later, so the exact answer lies in
[hit, hit + dropped]: a rigorous bound that the caller checks (``tablegen.compute.exact.lattice_search``).
``floor = 0`` trims nothing.

**Records.**  Per diagonal the programme can keep the mass entering H and the highest live point
with its mass (``entry_mass``, ``edge_mass``, ``edge_t``); :func:`entries_between` and
:func:`edges_above` scan them for the search's bounds (``tablegen.compute.exact.lattice``).

All terms are non-negative, so there is no cancellation: the probability carries a relative error
of order (P + N) * 2**-53 even deep in the tail, where 1 - Pr(avoid) would lose every digit.  A point whose
computed mass is 0 (untrimmed programmes, far from the centre) carries less than (P + N + 1)^2 2^-1074 (below
2.3e-308 for P + N <= 2e7).
Membership of H is decided in exact integer arithmetic (int64: |c + b d| < 2**63 is the caller's
bound, met by the metrics' coefficients for P, N <= 1e8).  Memory: four float64 rows of P + 3,
and the records (3 x 8 bytes a diagonal) when kept.

The metrics map onto H as follows (``tablegen.compute.exact.lattice``):
``best_accuracy >= (N + h)/(P + N)``   a = 1, b = 1, c = h
``best_balanced_accuracy`` with key g  a = N, b = P, c = g       (g = TP N - FP P)
``best_f1 >= num/den``                 a = 2 den - num, b = num, c = num P
Checked against brute-force enumeration, exact integer path counts, the row-by-row programme and the
probability-form wavefront (records included) in ``tests/compute/test_exact_lattice.py``.
"""

import math

import numpy as np
from llvmlite import ir
from numba.core import cgutils, types
from numba.core.extending import intrinsic

from tablegen.compute.kernels.jit import jit_cached

#: The band is rescaled by a power of two (exactly) every this many diagonals: its tilted masses stay below 2^33.
RESCALE_DIAGONALS = 32


@jit_cached(nogil=True, error_model="numpy", fastmath={"contract"}, inline="always")
def _step_diagonal(following, current, t_of, positives_left, start, count, negatives_left, scale):
    """following[i] = (current[i] (N - f) + current[i - 1] (P - t + 1)) / R for i = start..start+count-1.

    Unsigned indices: numba then skips its negative-index wrap-around, and LLVM vectorises the loop.
    """
    for j in range(count):
        i = start + np.uint64(j)
        following[i] = (current[i] * (negatives_left + t_of[i]) + current[i - np.uint64(1)] * positives_left[i]) * scale


@jit_cached(nogil=True, error_model="numpy", fastmath={"contract"})
def half_plane_sweep(n_pos, n_neg, a, b, c, floor, value, entry_mass, edge_mass, edge_t):
    """Probability that a random path from (0,0) to (P,N) touches a*t - b*f >= c, with trimming.

    Parameters
    ----------
    n_pos, n_neg : int
        P and N (>= 0).
    a, b, c : int
        Half-plane coefficients, a > 0 and b >= 0 (see module docstring).
    floor : float
        Points at either end of a diagonal's live range with mass below ``floor`` are dropped
        (0: none).
    value : int64 array of 6
        A ranking of lattice points, (v0 t + v1 f + v2)/(v3 t + v4 f + v5) with a positive
        denominator (the metric's value at the point), used for ``first_t, first_f``.
    entry_mass, edge_mass, edge_t : float64, float64, int64 arrays of P + N + 1 (or of 1: not kept)
        Per diagonal d: the mass first entering H on it (at t = T_d), and the highest live point
        outside H with mass (t, or -1) and its mass.  The caller reads the tail's flat stretches
        and atoms off them: Pr(X >= v) >= the entry mass at points worth >= v, and Pr(X >= v) <=
        Pr(X >= threshold) + dropped + the edge mass at points worth >= v, when no other live
        point is worth >= v.

    Returns
    -------
    hit, dropped : float
        Hitting probability of the trimmed programme and the total mass dropped; the exact
        probability lies in [hit, hit + dropped].
    first_t, first_f : int
        Of the points where mass first entered H, the one of lowest ``value`` (-1, -1 if none).
        Every path that touches H has a maximum >= that value, so the tail is flat up to it.
    """
    first_t, first_f = -1, -1
    keep = entry_mass.shape[0] > n_pos + n_neg
    if keep:
        entry_mass[:] = 0.0
        edge_mass[:] = 0.0
        edge_t[:] = -1
    if c <= 0:
        return 1.0, 0.0, first_t, first_f  # the origin (0, 0) is already in the half-plane
    n = n_pos + n_neg
    if n == 0:
        return 0.0, 0.0, first_t, first_f
    # the tilt (theta, eta): the larger of the two is 1, so a step is one fused multiply-add; the smaller is a / 2^s
    # (a below 2^52 / (P + N + 2)), so each weight's update is one exact ratio of doubles
    mantissa, exponent = math.frexp(min(n_pos, n_neg) / max(n_pos, n_neg))
    bits = 52 - math.ceil(math.log2(n + 2.0))
    tilt_a = float(round(mantissa * 2.0**bits))
    tilt_s = math.ldexp(1.0, bits - exponent)  # 2^s
    theta, eta = (tilt_a / tilt_s, 1.0) if n_pos <= n_neg else (1.0, tilt_a / tilt_s)
    ratios = (tilt_s, tilt_a, 1.0, 1.0) if n_pos <= n_neg else (1.0, 1.0, tilt_s, tilt_a)  # 1/theta, 1/eta
    owed = 0.0  # binary orders of magnitude the band has grown by since its last rescaling
    growth = math.log2(theta + eta) * RESCALE_DIAGONALS
    # index i holds t = i - 1; index 0 is a sentinel (t = -1) that always holds 0
    current = np.zeros(n_pos + 3)
    following = np.zeros(n_pos + 3)
    current[1] = 1.0
    step = a + b
    first_in = (c + step - 1) // step  # T_0 = ceil(c / (a + b)) >= 1
    slack = step * first_in - c  # (a + b) T_d - (c + b d), in [0, a + b)
    low, high = 0, 0  # live t-range on the current diagonal
    top = (1.0, 0.0, 0)  # the weight R (double-double x 2^e) of the point (high, d); of (low, d) below
    bottom = (1.0, 0.0, 0)
    trimming = floor > 0.0
    hit = 0.0
    dropped = 0.0
    for d in range(n):
        current[low] = 0.0
        current[high + 2] = 0.0
        new_low = low if low >= d + 1 - n_neg else low + 1
        new_high = high + 1 if high < n_pos else n_pos
        if theta == 1.0:
            _step_tilted_negative(following, current, np.uint64(new_low + 1), new_high - new_low + 1, eta)
        else:
            _step_tilted_positive(following, current, np.uint64(new_low + 1), new_high - new_low + 1, theta)
        top = _stepped(top, high, d, new_high > high, n_pos, n_neg, ratios)
        if trimming:
            bottom = _stepped(bottom, low, d, new_low > low, n_pos, n_neg, ratios)
        slack -= b
        if slack < 0:
            first_in += 1
            slack += step
        # at most one point enters H per diagonal: t = T_{d+1} = high + 1 when T did not move
        while new_high >= first_in and new_high >= new_low:
            mass = _mass(following[new_high + 1], top)
            if mass > 0.0 and (first_t < 0 or _ranks_below(value, new_high, d + 1 - new_high, first_t, first_f)):
                first_t, first_f = new_high, d + 1 - new_high
            if keep:
                entry_mass[d + 1] += mass
            hit += mass
            top = _one_lower(top, new_high, d + 1, n_pos, n_neg, ratios)
            new_high -= 1
        while trimming and new_low <= new_high:
            mass = _mass(following[new_low + 1], bottom)
            if mass >= floor:
                break
            dropped += mass
            bottom = _one_higher(bottom, new_low, d + 1, n_pos, n_neg, ratios)
            new_low += 1
        while trimming and new_high >= new_low:
            mass = _mass(following[new_high + 1], top)
            if mass >= floor:
                break
            dropped += mass
            top = _one_lower(top, new_high, d + 1, n_pos, n_neg, ratios)
            new_high -= 1
        if new_low > new_high:
            break
        if keep:
            edge, weight = new_high, top
            mass = _mass(following[edge + 1], weight)
            while edge > new_low and mass == 0.0:  # underflowed (untrimmed) mass
                weight = _one_lower(weight, edge, d + 1, n_pos, n_neg, ratios)
                edge -= 1
                mass = _mass(following[edge + 1], weight)
            if mass > 0.0:
                edge_t[d + 1] = edge
                edge_mass[d + 1] = mass
        if (d + 1) % RESCALE_DIAGONALS == 0:  # scale the band by 2^-k, exactly; its weights by 2^k
            owed += growth
            k = math.floor(owed)
            owed -= k
            factor, inverse = math.ldexp(1.0, -k), math.ldexp(1.0, k)
            for i in range(new_low + 1, new_high + 2):
                following[i] *= factor
            top = _times(top, inverse, 1.0)  # exact: a power of two
            bottom = _times(bottom, inverse, 1.0)
        current, following = following, current
        low, high = new_low, new_high
    return hit, dropped, first_t, first_f


@jit_cached(nogil=True, error_model="numpy", fastmath={"contract"}, inline="always")
def _step_tilted_positive(following, current, start, count, theta):
    """following[i] = current[i] + theta current[i - 1] for i = start..start+count-1 (one fused multiply-add)."""
    for j in range(count):
        i = start + np.uint64(j)
        following[i] = current[i] + current[i - np.uint64(1)] * theta


@jit_cached(nogil=True, error_model="numpy", fastmath={"contract"}, inline="always")
def _step_tilted_negative(following, current, start, count, eta):
    """following[i] = eta current[i] + current[i - 1] for i = start..start+count-1 (one fused multiply-add)."""
    for j in range(count):
        i = start + np.uint64(j)
        following[i] = current[i] * eta + current[i - np.uint64(1)]


# -- the weights R(t, d) in double-double arithmetic: (hi, lo, e) stands for (hi + lo) 2^e, the exponent moved into
# e only where hi leaves [2^-500, 2^500].  Inlined into the programme (no cache entries of their own to load at a
# cold start); its "contract" flag may fuse a product and a sum into a multiply-add, which is exact where it fuses
# (lo * num + err) and meets nothing else: the error-free product is the explicit fused multiply-add (_fma).
_TINY_WEIGHT, _HUGE_WEIGHT = 2.0**-500, 2.0**500

@intrinsic
def _fma(typingctx, a, b, c):
    """a b + c with one rounding (LLVM's ``llvm.fma.f64``: the FMA instruction of AVX2 machines, exact everywhere)."""
    signature = types.float64(types.float64, types.float64, types.float64)

    def codegen(context, builder, signature, arguments):
        double = ir.DoubleType()
        function = cgutils.get_or_insert_function(builder.module, ir.FunctionType(double, [double] * 3),
                                                  "llvm.fma.f64")
        return builder.call(function, arguments)

    return signature, codegen


@jit_cached(nogil=True, inline="always")
def _two_product(a, b):
    """(p, e) with p = fl(a b) and p + e = a b exactly (the fused multiply-add's error-free product)."""
    p = a * b
    return p, _fma(a, b, -p)


@jit_cached(nogil=True, inline="always")
def _times(weight, num, den):
    """weight x num / den in double-double (num, den: doubles, den > 0), renormalised."""
    hi, lo, e = weight
    p, err = _two_product(hi, num)
    lo = lo * num + err
    hi = p + lo
    lo = lo - (hi - p)
    q = hi / den
    p, err = _two_product(q, den)
    r = ((hi - p) - err + lo) / den
    hi = q + r
    lo = r - (hi - q)
    if 0.0 < abs(hi) < _TINY_WEIGHT or abs(hi) > _HUGE_WEIGHT:  # far from 1: move the binary exponent into e
        mantissa, k = math.frexp(hi)
        return mantissa, math.ldexp(lo, -k), e + k
    return hi, lo, e


@jit_cached(nogil=True, inline="always")
def _stepped(weight, t, d, positive, n_pos, n_neg, ratios):
    """R at (t + 1, d + 1) (a positive step, ``positive``) or at (t, d + 1), from R at (t, d - t): times
    (P - t) / ((P + N - d) theta) or (N - d + t) / ((P + N - d) eta); ``ratios``: 1/theta, 1/eta as
    (num, den, num, den), exact doubles."""
    if positive:
        return _times(weight, (n_pos - t) * ratios[0], (n_pos + n_neg - d) * ratios[1])
    return _times(weight, (n_neg - d + t) * ratios[2], (n_pos + n_neg - d) * ratios[3])


@jit_cached(nogil=True, inline="always")
def _one_lower(weight, t, d, n_pos, n_neg, ratios):
    """R at (t - 1, d - t + 1) from R at (t, d - t), on diagonal d: times (theta / eta) (N - d + t) / (P - t + 1)."""
    return _times(weight, (n_neg - d + t) * ratios[1] * ratios[2], (n_pos - t + 1) * ratios[0] * ratios[3])


@jit_cached(nogil=True, inline="always")
def _one_higher(weight, t, d, n_pos, n_neg, ratios):
    """R at (t + 1, d - t - 1) from R at (t, d - t), on diagonal d: times (eta / theta) (P - t) / (N - d + t + 1)."""
    return _times(weight, (n_pos - t) * ratios[0] * ratios[3], (n_neg - d + t + 1) * ratios[1] * ratios[2])


@jit_cached(nogil=True, inline="always")
def _mass(u, weight):
    """The probability mass u R of a point of tilted mass u and weight R."""
    return u * weight[0] if weight[2] == 0 else math.ldexp(u * weight[0], weight[2])


@jit_cached(inline="always")
def _ranks_below(value, t1, f1, t2, f2):
    """value(t1, f1) < value(t2, f2), by cross-multiplication in int64 (denominators > 0)."""
    num1 = value[0] * t1 + value[1] * f1 + value[2]
    den1 = value[3] * t1 + value[4] * f1 + value[5]
    num2 = value[0] * t2 + value[1] * f2 + value[2]
    den2 = value[3] * t2 + value[4] * f2 + value[5]
    return num1 * den2 < num2 * den1


@jit_cached(nogil=True)
def entries_between(entry_mass, a, b, c, value, hi_num, hi_den):
    """Scan a programme's entry masses: (mass entering at points worth >= hi_num/hi_den,
    diagonals whose entry point is worth less).  The entry point of diagonal D is
    t = ceil((c + b D)/(a + b)); hi_den = 0 means no upper bound."""
    above = 0.0
    inside = np.empty(entry_mass.shape[0], dtype=np.int64)
    count = 0
    for d in range(entry_mass.shape[0]):
        if entry_mass[d] > 0.0:
            t = (c + b * d + a + b - 1) // (a + b)
            num = value[0] * t + value[1] * (d - t) + value[2]
            den = value[3] * t + value[4] * (d - t) + value[5]
            if hi_den > 0 and num * hi_den >= hi_num * den:
                above += entry_mass[d]
            else:
                inside[count] = d
                count += 1
    return above, inside[:count]


@jit_cached(nogil=True)
def edges_above(edge_t, value, first_row, lo_num, lo_den):
    """Scan a programme's edge points: (diagonals whose edge point is worth more than
    lo_num/lo_den, the point (t, f) just below an edge point that is worth most, or (-1, -1))."""
    inside = np.empty(edge_t.shape[0], dtype=np.int64)
    count = 0
    floor_t, floor_f = -1, -1
    for d in range(edge_t.shape[0]):
        t = edge_t[d]
        if t < first_row:
            continue
        num = value[0] * t + value[1] * (d - t) + value[2]
        den = value[3] * t + value[4] * (d - t) + value[5]
        if num * lo_den > lo_num * den:
            inside[count] = d
            count += 1
        if t - 1 >= first_row and (floor_t < 0 or _ranks_below(value, floor_t, floor_f, t - 1, d - t + 1)):
            floor_t, floor_f = t - 1, d - t + 1
    return inside[:count], floor_t, floor_f


_NO_VALUE = np.array([1, 0, 0, 0, 0, 1], dtype=np.int64)  # rank points by t alone
_NOT_KEPT, _NOT_KEPT_T = np.zeros(1), np.zeros(1, dtype=np.int64)  # no per-diagonal record


def half_plane_hit_probability(n_pos, n_neg, a, b, c):
    """Probability that a uniformly random path from (0,0) to (P,N) touches a*t - b*f >= c.

    The untrimmed programme (:func:`half_plane_sweep` with ``floor = 0``).  P + N <= 12 cells are
    checked against every arrangement, larger ones against exact path counts and the row-by-row
    programme it replaced (``tests/compute/test_exact_lattice.py``).

    Examples
    --------
    >>> round(half_plane_hit_probability(2, 2, 1, 1, 2), 12)  # both positives first: 1 of 6 paths
    0.166666666667
    """
    return half_plane_sweep(n_pos, n_neg, a, b, c, 0.0, _NO_VALUE, _NOT_KEPT, _NOT_KEPT, _NOT_KEPT_T)[0]


@jit_cached(nogil=True, error_model="numpy", fastmath={"contract"})
def column_boundary_sweep(n_pos, n_neg, threshold, floor, entry_low, entry_mass):
    """Probability that a random path from (0,0) to (P,N) reaches t >= threshold[d] on some diagonal d.

    The probability-form wavefront (see the module docstring) with a per-diagonal boundary instead of a half-plane:
    the absorbing set is {(t, d - t): t >= threshold[d]}, any int64 per diagonal (above min(d, P): no
    boundary there), so it may jump or fall by any amount between diagonals; every live point at or
    above the boundary is absorbed, its mass added to ``hit``.  Best MCC >= x is such an event
    (:mod:`tablegen.compute.exact.best_mcc`).  Trimming (``floor``) and its bound [hit, hit + dropped]
    are those of :func:`half_plane_sweep`.  Integer widths: int64 thresholds and indices; float64
    masses.  Checked against brute-force enumeration and exact path counts in
    ``tests/compute/test_best_mcc_exact.py``.

    Parameters
    ----------
    n_pos, n_neg : int
        P and N (>= 0).
    threshold : int64 array of P + N + 1
        The boundary's lowest absorbing t on each diagonal d = t + f.
    floor : float
        Points at either end of a diagonal's live range with mass below ``floor`` are dropped.
    entry_low, entry_mass : int64 and float64 arrays of P + N + 1 (or of 1: not kept)
        Filled per diagonal with the lowest absorbed t that carried mass (-1 if none) and the mass
        absorbed on that diagonal.  Every path absorbed on diagonal d has a maximum at least the
        value at (entry_low[d], d - entry_low[d]) when the value rises with t along a diagonal.

    Returns
    -------
    hit, dropped : float
        Hitting probability of the trimmed programme and the mass dropped; the exact probability
        lies in [hit, hit + dropped].
    """
    n = n_pos + n_neg
    keep = entry_low.shape[0] > n
    if keep:
        entry_low[:] = -1
        entry_mass[:] = 0.0
    if threshold[0] <= 0:
        if keep:
            entry_low[0] = 0
            entry_mass[0] = 1.0
        return 1.0, 0.0
    current = np.zeros(n_pos + 3)
    following = np.zeros(n_pos + 3)
    t_of = np.arange(n_pos + 3) - 1.0
    positives_left = n_pos + 1.0 - t_of
    current[1] = 1.0
    low, high = 0, 0
    hit = 0.0
    dropped = 0.0
    for d in range(n):
        scale = 1.0 / (n - d)
        negatives_left = float(n_neg - d)
        current[low] = 0.0
        current[high + 2] = 0.0
        new_low = low if low >= d + 1 - n_neg else low + 1
        new_high = high + 1 if high < n_pos else n_pos
        _step_diagonal(following, current, t_of, positives_left, np.uint64(new_low + 1),
                       new_high - new_low + 1, negatives_left, scale)
        boundary = threshold[d + 1]
        while new_high >= new_low and new_high >= boundary:
            mass = following[new_high + 1]
            if keep and mass > 0.0:
                entry_low[d + 1] = new_high
                entry_mass[d + 1] += mass
            hit += mass
            new_high -= 1
        while new_low <= new_high and following[new_low + 1] < floor:
            dropped += following[new_low + 1]
            new_low += 1
        while new_high >= new_low and following[new_high + 1] < floor:
            dropped += following[new_high + 1]
            new_high -= 1
        if new_low > new_high:
            break
        current, following = following, current
        low, high = new_low, new_high
    return hit, dropped
