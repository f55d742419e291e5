"""Exact AUC null at any size: the exponentially tilted Fourier inversion of the Gaussian binomial.

U = AUC · P N has the generating function G(z) = prod_{i=1..P} (1 - z^{N+i}) / (1 - z^i), whose
coefficients c_u count the rankings with U = u.  A plain FFT of G resolves Pr(U = u) only to about
1e-16 of the *peak*, useless in the tail a critical value lives in.  Here every tail
probability is computed under its own exponential tilt:

1. **Tilt.**  f_u = c_u s^u / G(s), s = e^{-a}, a > 0, is a unimodal law whose mean mu(a) can be
   put anywhere below P N / 2 (U is symmetric, so everything is done in the lower orientation
   L(v) = Pr(U <= v) = Pr(U >= P N - v)).  For a tail probability t the tilt comes from the
   Bahadur–Rao lattice saddle-point approximation, so the wanted v sits near mu(a); for a given v,
   a solves mu(a) = v.  Near the centre (|v - P N / 2| < one sd) the tilt is tiny: no tilt, in effect.
2. **Window.**  [lo, lo + M) holds all but 2e-30 of the tilted mass on either side (optimised
   Chernoff bounds), M ~ 24 sd(a): aliasing is negligible.
3. **Band.**  F_k = G(s w^k) / G(s) (:func:`~tablegen.compute.exact.auc_fft_band._pgf`, cancellation-free factors)
   is computed for k = 0, 1, ... until a block of 32 falls below 1e-17 / sd(a); 256 spread k and the
   neighbourhoods of the roots of unity of order <= 32 (where the q-binomial has secondary peaks)
   must also be below it, else the band doubles (up to the whole spectrum).
4. **No FFT.**  Pr(lo <= U <= v) = e^{Lambda(a) + a v} S(v) with the geometric sum
   S(v) = (1/M) sum_{|k| <= K} F_k w^{-kv} (1 - rho_k^{v-lo+1}) / (1 - rho_k), rho_k = e^{-a} w^k:
   O(K) per probe, O(P + K) memory.  Pr(U < lo) < e^{-69} of the answer is neglected.  Lambda(a) + a v
   is summed from small terms (:meth:`TiltedAuc.exponent_parts`): Lambda(a) and a v cancel largely.

Error bound
-----------
Each of the 2P factors is evaluated to a few ulp, the window loses < 2e-30 and the band < 1e-17 / sd
of the tilted law near its mean; the untilting exponent is within a few ulp of its own size (~z^2 / 2, not
|Lambda(a)|: 14 ulp of it lost at (5e4, 5e4), z = 30, formed as Lambda(a) + a v; 1.8 summed from small terms);
the tail probability at a point within two sd of the tilt's mean
then carries a relative error of order 1e-14 (``tests/compute/test_exact_auc.py``: within 1e-12 of exact
integer counts for every P, N <= 60 and of the recursion on cells up to (1000, 1000); measured
< 3e-14).  :data:`RELATIVE_ERROR_BOUND` is the bound the tests hold it to; critical values are
decided with the same tie tolerance as every exact routine (:data:`tablegen.compute.exact.nulls.TIE_RTOL`),
which is larger than this error, and so agree with the recursion wherever it runs.

Cost: the band holds ~100 frequencies for balanced cells (up to the whole spectrum for tiny min(P, N),
where it is short anyway), and about 700 band checks, most decided by a bound on |F_k| that needs only part of
the denominator factors (:func:`~tablegen.compute.exact.auc_fft_band._undecided`), the rest a product over
min(P, N) factor pairs: ~0.07 s per tilted law at (2994, 7006), ~6 s at (299400, 700600) on one core.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from tablegen.compute.exact.auc_fft_band import BLOCK_ELEMENTS, BYTES_PER_FREQUENCY, TiltedLaw
from tablegen.compute.exact.nulls import TIE_RTOL

__all__ = ["BLOCK_ELEMENTS", "BYTES_PER_FREQUENCY", "RELATIVE_ERROR_BOUND", "TiltedAuc", "TiltedAucNull",
           "first_passing", "snapped_u"]

#: Relative error of a tail probability the tests hold this routine to (measured: below 3e-14).
RELATIVE_ERROR_BOUND = 1e-12
#: Probes within this many sd of the tilt's mean are accurate to RELATIVE_ERROR_BOUND; further out re-tilt.
_ACCURATE_SDS = 2.0
#: Points near one another share a tilted law: the tilts of a grid this many null sd apart (TiltedAuc.tilt_at),
#: each answering the points within _SHARED_SDS of its own sd of its mean (measured at (2994, 7006), tails 1e-2 to
#: 1e-205: within 3e-13 of the tilt at the point itself, the route's own error there; at 2 sd up to 6e-11; the centre
#: tilt, which does not answer 0.6 sd away as well, is not shared).
_GRID_SDS = 1.5
_SHARED_SDS = 1.0
#: Below e^this a tail's correctly rounded double is 0.0 (half the smallest subnormal is e^-745.13).
_LOG_BELOW_DOUBLES = -746.0


class TiltedAuc:
    """Pr(U <= v) and Pr(U >= u) of the Mann–Whitney U at one (P, N), by tilted Fourier inversion.

    Parameters
    ----------
    P, N : int
        Positives and negatives (>= 1).  U_{P,N} has the law of U_{N,P}, so the fewer factors are used.

    Examples
    --------
    >>> cell = TiltedAuc(3, 4)          # U is uniform-ish on 0..12; Pr(U >= 12) = 1/C(7, 3) = 1/35
    >>> round(cell.upper_tail(12) * 35, 12)
    1.0
    """

    def __init__(self, P: int, N: int):
        self.small, self.large = min(P, N), max(P, N)
        self.PN = P * N
        self._i = np.arange(1, self.small + 1, dtype=np.float64)
        self._j = self._i + self.large
        self.log_total = math.lgamma(P + N + 1) - math.lgamma(P + 1) - math.lgamma(N + 1)
        self.var0 = self.PN * (P + N + 1) / 12.0
        self._tilts: dict[float, TiltedLaw] = {}
        self._grid: dict[int, tuple[float, float, float] | None] = {}  # grid point -> (tilt, mean, sd)

    # -- the real axis: Lambda(b) = log E[e^{-bU}], mean and variance of the tilted law ------------
    def lam(self, b: float) -> float:
        """log E[exp(-b U)] (the cumulant generating function at -b)."""
        if b == 0.0:
            return 0.0
        if b < 0.0:
            return -b * self.PN + self.lam(-b)
        with np.errstate(over="ignore"):
            ratio = (-np.expm1(-b * self._j) / self._j) / (-np.expm1(-b * self._i) / self._i)
        return float(np.sum(np.log(ratio)))

    def exponent_parts(self, a: float) -> tuple[float, float]:
        """(C, D) with Lambda(a) + a v = C + a (v + D) for a > 0, free of the cancellation of Lambda(a) and a v.

        Lambda(a) = sum_i psi(a (L + i)) - psi(a i) - a P N / 2 with psi(x) = log(sinh(x/2) / (x/2)) >= 0
        (i = 1..min(P, N), L = max(P, N)): every psi is small where the tilt is (x^2 / 24 for small x),
        so C is a sum of small non-negative differences, summed exactly (math.fsum), and D = -P N / 2 is
        exact.  Where x > :data:`_PSI_LINEAR` (large tilts, small cells) psi(x) = x/2 + log(1 - e^-x) - log x
        and the x/2 goes into D as an exact half-integer, so no term is ever large.  Lambda(a) and a v, each
        ~-2900 at 10^4 items and z = 30 (~-8700 at 10^6 items, z = 10), cancel to the log tail (~-z^2/2):
        formed apart they lose |Lambda(a)| 2^-53 of the tail; this keeps the exponent to a few ulp of
        max(|C|, |a (v + D)|), about z^2 2^-53.

        Examples
        --------
        >>> cell = TiltedAuc(30, 70)
        >>> C, D = cell.exponent_parts(0.05)
        >>> abs(C + 0.05 * (600 + D) - (cell.lam(0.05) + 0.05 * 600)) < 1e-12
        True
        """
        i = np.arange(1, self.small + 1, dtype=np.int64)
        n = np.concatenate([i + self.large, i])
        x = a * n.astype(np.float64)
        linear = x > _PSI_LINEAR
        terms = _psi(x, linear)
        terms[self.small:] *= -1.0
        moved = np.where(linear, n, 0)
        twice_d = int(moved[:self.small].sum()) - int(moved[self.small:].sum()) - self.PN  # exact integers
        return math.fsum(terms), twice_d / 2.0

    def mu(self, b: float) -> float:
        """Mean of the law tilted by e^{-bU}."""
        if b == 0.0:
            return self.PN / 2.0
        if b < 0.0:
            return self.PN - self.mu(-b)
        with np.errstate(over="ignore"):
            return float(np.sum(_x_over_expm1(b * self._i) - _x_over_expm1(b * self._j)) / b)

    def var(self, b: float) -> float:
        """Variance of the law tilted by e^{-bU}."""
        if b == 0.0:
            return self.var0
        b = abs(b)
        with np.errstate(over="ignore"):
            return float(np.sum(_half_sinch2(b * self._i) - _half_sinch2(b * self._j)) / (b * b))

    def solve_mu(self, x: float, rtol: float = 1e-13) -> float:
        """The tilt b with mu(b) = x (mu falls from P N at b = -inf to 0 at +inf), to ``rtol`` relative."""
        if x == self.PN / 2.0:
            return 0.0
        if x > self.PN / 2.0:
            return -self.solve_mu(self.PN - x, rtol)
        low, high = 1e-9 / math.sqrt(self.var0), 1.0 / math.sqrt(self.var0)
        while self.mu(high) > x:
            high *= 4.0
            if high > 1e4:
                return high
        return _geometric_bisection(lambda b: self.mu(b) > x, low, high, rtol)

    def _log_bahadur_rao(self, b: float) -> float:
        """Saddle-point approximation of log Pr(U <= mu(b)), b > 0."""
        return (self.lam(b) + b * self.mu(b)
                - math.log(math.sqrt(2 * math.pi * self.var(b)) * -math.expm1(-b)))

    def tilt_for_tail(self, t: float) -> float:
        """The tilt a > 0 whose mean sits where (by the saddle-point approximation) Pr(U <= v) = t < 1/2."""
        target = math.log(t)
        low, high = 1e-6 / math.sqrt(self.var0), 1.0 / math.sqrt(self.var0)
        while self._log_bahadur_rao(high) > target and self.mu(high) > 0.5:
            high *= 2.0
        return _geometric_bisection(lambda b: self._log_bahadur_rao(b) > target, low, high, 1e-10)

    def tilted(self, a: float) -> TiltedLaw:
        """The tilted law at ``a`` (window and band of F_k), built once per tilt."""
        a = self._floored(a)
        if a not in self._tilts:
            self._tilts[a] = TiltedLaw.build(self, a)
        return self._tilts[a]

    def _floored(self, a: float) -> float:
        """The tilt :meth:`tilted` uses for ``a``: the centre is tilted by a hair (a tilt too small to matter)."""
        return max(a, 1e-6 / math.sqrt(self.var0))

    def tilt_at(self, v: float) -> float:
        """The tilt that answers at v (clamped to the lower half): the tilt of the nearest point of a fixed grid
        (:data:`_GRID_SDS` null sd apart) if v is within :data:`_SHARED_SDS` of its sd of that tilt's mean, else
        (and within 3/4 null sd of the centre, where the untilted inversion loses digits off its mean) the tilt
        whose mean is v.  A function of v alone (the same number whatever was asked before), and one
        tilted law answers every point near a grid point (every model's tail, every critical value near it).

        Examples
        --------
        >>> cell = TiltedAuc(300, 700)
        >>> cell.tilt_at(40_000) == cell.tilt_at(40_100), cell.tilt_at(40_000) == cell.solve_mu(40_000)
        (True, False)
        """
        v = min(max(v, 0.5), self.PN / 2.0)
        step = _GRID_SDS * math.sqrt(self.var0)
        m = round((self.PN / 2.0 - v) / step)
        if m not in self._grid:
            point = self.PN / 2.0 - m * step
            a = self._floored(self.solve_mu(point)) if point >= 0.5 and m > 0 else None  # the centre: its own
            self._grid[m] = None if a is None else (a, self.mu(a), math.sqrt(self.var(a)))
        if self._grid[m] is not None:
            a, mean, sd = self._grid[m]
            if abs(v - mean) <= _SHARED_SDS * sd:
                return a
        return self._floored(self.solve_mu(v))

    def tilted_at(self, v: float) -> TiltedLaw:
        """The tilted law that answers at v (:meth:`tilt_at`)."""
        return self.tilted(self.tilt_at(v))

    def _negligible(self, a: float, v: int) -> bool:
        """Whether Chernoff's bound Pr(U <= v) <= e^{Lambda(a) + a v} (any a > 0; the least at the tilt whose mean
        is v) puts the tail below e^-746, under half the smallest subnormal double (5e-324): its correctly rounded
        value is then 0.0 and no tilted law need be built (the inversion at the tilt whose mean is v answers 0.0 there
        too: its prefactor, the least of these bounds, underflows)."""
        tilt = self._tilts.get(a)
        lam = tilt.lam if tilt is not None else self.lam(a)
        return lam + a * v < _LOG_BELOW_DOUBLES

    # -- probabilities ----------------------------------------------------------------------------
    def lower_tail(self, v: int) -> float:
        """Pr(U <= v) for integer v; accurate to :data:`RELATIVE_ERROR_BOUND` when v <= P N / 2."""
        if v < 0:
            return 0.0
        if v >= self.PN:
            return 1.0
        if self.small == 1:  # one positive (or negative): U is uniform on 0..max(P, N)
            return (v + 1) / (self.PN + 1)
        if 2 * v > self.PN:
            return 1.0 - self.lower_tail(self.PN - v - 1)
        if self._negligible(self._floored((self.PN / 2.0 - v) / self.var0), v):  # the normal tilt: no solve
            return 0.0  # far in the tail (AUC's p-values at 10^6 items): no Fourier transform
        a = self.tilt_at(v)
        if self._negligible(a, v):
            return 0.0
        return self.tilted(a).lower_tail(v)

    def upper_tail(self, u: int) -> float:
        """Pr(U >= u) for integer u, to :data:`RELATIVE_ERROR_BOUND` relative (a complement is >= 1/2)."""
        return self.lower_tail(self.PN - u)

    def critical_u(self, t: float) -> int:
        """The largest u with Pr(U >= u) > t (1 + TIE_RTOL): the critical U for tail t.

        Equivalently the smallest u with F(u) = Pr(U <= u) >= 1 - t, decided with the same tie
        tolerance as every exact routine (:func:`tablegen.compute.exact.nulls.critical_index`).
        """
        threshold = t * (1.0 + TIE_RTOL)
        if self.small == 1:
            return self._uniform_critical_u(threshold)
        if threshold < 0.5:
            if -self.log_total > math.log(threshold):  # Pr(U >= P N) = 1 / C(P+N, P) > t
                return self.PN
            return self.PN - self._first_v(threshold, inclusive=False)
        complement = 1.0 - threshold  # Pr(U >= u) > thr  <=>  Pr(U <= u - 1) < 1 - thr
        if complement <= 0.0:
            return 0
        return self._first_v(complement, inclusive=True)  # (largest v with L(v) < c) + 1

    def _uniform_critical_u(self, threshold: float) -> int:
        """critical_u for min(P, N) = 1, where Pr(U >= u) = (PN + 1 - u) / (PN + 1)."""
        def tail(u):
            return (self.PN + 1 - u) / (self.PN + 1)

        u = min(max(math.ceil((self.PN + 1) * (1.0 - threshold)) - 1, 0), self.PN)
        while u > 0 and tail(u) <= threshold:
            u -= 1
        while u < self.PN and tail(u + 1) > threshold:
            u += 1
        return u

    def _first_v(self, level: float, inclusive: bool) -> int:
        """Smallest v with L(v) > level (>= level if ``inclusive``), for level < 1/2."""
        if -self.log_total > math.log(level) or (inclusive and -self.log_total >= math.log(level)):
            return 0
        tilt = self.tilted_at(self.mu(self.tilt_for_tail(level)))
        for _ in range(4):
            passes = (lambda v, tilt=tilt: tilt.lower_tail(v) >= level) if inclusive else \
                (lambda v, tilt=tilt: tilt.lower_tail(v) > level)
            v = first_passing(passes, *self._bracket(tilt, passes))
            if abs(v - tilt.mean) <= _ACCURATE_SDS * tilt.sd:
                break
            tilt = self.tilted_at(v)  # decide the crossing where this tilt is accurate
        return v

    def _bracket(self, tilt: TiltedLaw, passes) -> tuple[int, int]:
        """(low, high) with passes(high) and not passes(low) (low = -1 when v = 0 passes)."""
        width = max(int(4 * tilt.sd), 1)
        low = max(int(tilt.mean) - width, -1)
        high = min(int(tilt.mean) + width, self.PN)
        while low >= 0 and passes(low):
            low, high = max(low - 2 * width, -1), low
            width *= 2
        while not passes(high):
            low, high = high, min(high + 2 * width, self.PN)
            width *= 2
        return low, high


def _geometric_bisection(below, low: float, high: float, rtol: float) -> float:
    """The point where ``below`` (true at ``low``, false at ``high``, monotone) turns, to ``rtol`` relative."""
    while high / low - 1.0 > rtol:
        middle = math.sqrt(low * high)
        if below(middle):
            low = middle
        else:
            high = middle
    return math.sqrt(low * high)


def first_passing(passes, low: int, high: int) -> int:
    """Smallest v in (low, high] with passes(v), given passes(high), not passes(low), monotone."""
    while high - low > 1:
        middle = (low + high) // 2
        if passes(middle):
            high = middle
        else:
            low = middle
    return high


#: psi(x) = log(sinh(x/2) / (x/2)) = sum_k B_2k x^2k / (2k (2k)!) (|x| < 2 pi); the series below x = 1
#: (10 terms: the last is (1/(2 pi))^20 ~ 1e-16 of the first), the closed form up to _PSI_LINEAR, then its x/2 apart.
_PSI_SERIES = tuple(float(b / (2 * k * math.factorial(2 * k))) for k, b in enumerate(
    (Fraction(1, 6), Fraction(-1, 30), Fraction(1, 42), Fraction(-1, 30), Fraction(5, 66), Fraction(-691, 2730),
     Fraction(7, 6), Fraction(-3617, 510), Fraction(43867, 798), Fraction(-174611, 330)), start=1))
#: Above this psi(x) - x/2 = log(1 - e^-x) - log x is the smaller term (psi(8.7) ~ 8.7 / 4).
_PSI_LINEAR = 8.0


def _psi(x: np.ndarray, linear: np.ndarray) -> np.ndarray:
    """log(sinh(x/2) / (x/2)) for x > 0, less x/2 where ``linear``: each to a few ulp (no cancellation)."""
    out = np.empty_like(x)
    series = x <= 1.0
    y = x[series] ** 2
    acc = np.zeros_like(y)
    for c in reversed(_PSI_SERIES):
        acc = (acc + c) * y
    out[series] = acc
    middle = ~series & ~linear
    half = 0.5 * x[middle]
    out[middle] = np.log(np.sinh(half) / half)
    out[linear] = np.log1p(-np.exp(-x[linear])) - np.log(x[linear])
    return out


def _x_over_expm1(x):
    return x / np.expm1(x)


def _half_sinch2(x):
    return (0.5 * x / np.sinh(0.5 * x)) ** 2


class TiltedAucNull:
    """The exact AUC null at one (P, N) by tilted Fourier inversion: critical values and tails on demand.

    The null-object interface of :mod:`tablegen.compute.exact` (:meth:`critical_value`, :meth:`tail_ge_score`)
    without the tabulated support, which has P N + 1 points (10^10 at P = N = 10^5).

    Examples
    --------
    >>> from tablegen.compute.stats import upper_tail_probability
    >>> null = TiltedAucNull(100, 300)
    >>> round(null.critical_value(float(upper_tail_probability(1000, 0.01))), 6)  # C = 1000, alpha = 0.01
    0.641133
    """

    def __init__(self, P: int, N: int):
        self.P, self.N = int(P), int(N)
        self.cell = TiltedAuc(self.P, self.N)
        self._critical: dict[float, int] = {}  # tail -> critical U: a tail asked again is not searched again

    def critical_value(self, tail: float) -> float:
        """m* = the smallest AUC x with F(x) >= 1 - tail (U / (P N) of :meth:`TiltedAuc.critical_u`), each tail
        searched once per null object."""
        if tail not in self._critical:
            self._critical[tail] = self.cell.critical_u(tail)
        return self._critical[tail] / self.cell.PN

    def tail_ge_score(self, score: float) -> float:
        """Pr(AUC >= score), the score snapped to the nearest u / (P N) within the snap tolerance."""
        return self.cell.upper_tail(snapped_u(score, self.cell.PN))


def snapped_u(score: float, PN: int) -> int:
    """The smallest u with u / PN >= score - snap: what ``score_index`` finds on the tabulated support.

    snap = min(SNAP_TOLERANCE, 0.25 / PN): 1e-9 as for every metric, but never wider than a quarter
    step of the support, so at P N > 2.5e8 a score still means the nearest attainable value.
    """
    from tablegen.compute.exact.nulls import SNAP_TOLERANCE

    floor = score - min(SNAP_TOLERANCE, 0.25 / PN)
    u = min(max(math.ceil(floor * PN), 0), PN + 1)
    while u > 0 and (u - 1) / PN >= floor:
        u -= 1
    while u <= PN and u / PN < floor:
        u += 1
    return u
