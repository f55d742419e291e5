"""One tilted law of the exact AUC null (:mod:`tablegen.compute.exact.auc_fft`): its window, its band of the
characteristic function F_k (cancellation-free factors) and the geometric sum that gives Pr(U <= v) from it.

The steps and the error bound are those of :mod:`tablegen.compute.exact.auc_fft`; ``cell`` is its
:class:`~tablegen.compute.exact.auc_fft.TiltedAuc` (Lambda, mu, var and solve_mu of the cell).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from tablegen.compute.exact.auc_fft import TiltedAuc

#: Tilted mass allowed outside the window, each side (natural log).
_LOG_OUTSIDE = math.log(1e-30)
_CHERNOFF_STEPS = (8, 10, 12, 14, 16, 20, 24, 32, 48, 64, 128, 256, 1024)
_BLOCK = 32
#: The band stops where |F_k| < this / sd(a): an error ~1e-16 relative in f near its peak.
_BAND_TOLERANCE = 1e-17


@dataclass
class TiltedLaw:
    """One tilted law: its tilt a, window [lo, lo + M), band F_0..F_K, Lambda(a), and Lambda(a) + a v as
    ``centred + a (v + offset)`` (:meth:`~tablegen.compute.exact.auc_fft.TiltedAuc.exponent_parts`: the
    untilting factor without the cancellation of Lambda(a) and a v); built by
    :meth:`~tablegen.compute.exact.auc_fft.TiltedAuc.tilted`, once per tilt.

    Examples
    --------
    >>> from tablegen.compute.exact.auc_fft import TiltedAuc
    >>> cell = TiltedAuc(30, 70)
    >>> law = cell.tilted_at(600)  # tilted so that its mean is near U = 600 (of P N = 2100)
    >>> abs(law.mean - 600) <= law.sd, law.lower_tail(600) == cell.lower_tail(600)
    (True, True)
    """

    cell: TiltedAuc
    a: float
    lo: int
    M: int
    band: np.ndarray
    lam: float
    mean: float
    sd: float
    centred: float
    offset: float

    @classmethod
    def build(cls, cell: TiltedAuc, a: float) -> TiltedLaw:
        lo, M = _window(cell, a)
        sd = math.sqrt(cell.var(a))
        return cls(cell, a, lo, M, _band(cell, a, M, sd), cell.lam(a), cell.mu(a), sd, *cell.exponent_parts(a))

    @cached_property
    def _geometry(self):
        K = self.band.size - 1
        k = np.arange(K + 1, dtype=np.int64)
        angle_k = np.where(k > self.M // 2, k - self.M, k) * (2 * np.pi / self.M)
        denominator = _one_minus(math.exp(-self.a), -math.expm1(-self.a), angle_k)
        denominator[0] = -math.expm1(-self.a)
        # F_k and F_{-k} = conj(F_k) both count, except k = 0 and the Nyquist frequency M / 2
        multiplicity = np.where((k == 0) | (2 * k == self.M), 1.0, 2.0)
        return k, multiplicity * self.band / denominator

    def lower_tail(self, v: int) -> float:
        """Pr(U <= v) = Pr(lo <= U <= v) (the rest is below 1e-30 of it)."""
        if v < self.lo:
            return 0.0
        k, weighted = self._geometry
        span = v - self.lo + 1
        phase = 2 * np.pi * (((k * v) % self.M) / self.M)
        turns = ((k * span) % self.M).astype(np.float64)
        angle = np.where(turns > self.M / 2, turns - self.M, turns) * (2 * np.pi / self.M)
        decay = self.a * span
        numerator = (np.ones_like(angle, dtype=complex) if decay > 745
                     else _one_minus(math.exp(-decay), -math.expm1(-decay), angle))
        numerator[0] = -math.expm1(-decay)
        terms = weighted * np.exp(-1j * phase) * numerator
        S = np.sum(terms.real) / self.M
        return min(math.exp(self.log_untilt(v)) * float(S), 1.0)

    def log_untilt(self, v: int) -> float:
        """Lambda(a) + a v, the log of the factor that untilts the geometric sum at v (and of Chernoff's bound
        on Pr(U <= v)), to a few ulp of its own size: ``centred + a (v + offset)``, v + offset exact."""
        return self.centred + self.a * (v + self.offset)


def _one_minus(q: float, one_minus_q: float, angle: np.ndarray) -> np.ndarray:
    """1 - q e^{i angle} without cancellation: (1 - q) + 2 q sin^2(angle/2) - i q sin(angle)."""
    half = np.sin(0.5 * angle)
    return (one_minus_q + 2 * q * half * half) - 1j * q * np.sin(angle)


#: Relative accuracy of the tilts of the window's Chernoff bounds: any b >= a (b <= a above the mean) gives a bound,
#: the one solving mu(b) = x the least, and a b off by 1e-7 relative raises it by ~var(b) (1e-7 b)^2 / 2 < 1e-8 in
#: the exponent (the window is still rigorous); half the evaluations of the mean that solving to 1e-13 takes (each is
#: O(min(P, N)): ~1 s of a law at 10^6 items).
_WINDOW_RTOL = 1e-7


def _window(cell: TiltedAuc, a: float) -> tuple[int, int]:
    """(lo, M): all but e^{-69} of the tilted mass lies in [lo, lo + M) (Chernoff bounds both sides)."""
    mu, sd, lam_a = cell.mu(a), math.sqrt(cell.var(a)), cell.lam(a)
    lo = 0
    for spread in _CHERNOFF_STEPS:
        x = math.floor(mu - spread * sd)
        if x < 0:
            break
        b = cell.solve_mu(x, _WINDOW_RTOL)  # b >= a
        if cell.lam(b) - lam_a + (b - a) * x <= _LOG_OUTSIDE:  # log Pr_a(W <= x)
            lo = x + 1
            break
    high = cell.PN + 1
    for spread in _CHERNOFF_STEPS:
        x = math.ceil(mu + spread * sd)
        if x > cell.PN:
            break
        b = cell.solve_mu(x, _WINDOW_RTOL)  # b <= a
        if cell.lam(b) - lam_a - (a - b) * x <= _LOG_OUTSIDE:  # log Pr_a(W >= x)
            high = x
            break
    return lo, _fast_length(high - lo)


def _fast_length(n: int) -> int:
    """The smallest 2^p 3^q 5^r >= n (any M works; a smooth one keeps the frequency grid regular).

    Same as ``scipy.fft.next_fast_len(n, real=True)``, without importing scipy.fft (~0.4 s).
    """
    n, best = max(n, 2), None
    five = 1
    while five < 2 * n:
        three = five
        while three < 2 * n:
            two = three << max((n - 1) // three, 0).bit_length()  # smallest power-of-2 multiple >= n
            best = two if best is None or two < best else best
            three *= 3
        five *= 5
    return best


#: Factor evaluations per numpy block in :func:`_pgf` (bounds its temporaries to ~32 MB each).
BLOCK_ELEMENTS = 1 << 22


def _pgf(cell: TiltedAuc, a: float, M: int, ks: np.ndarray, magnitude_only: bool = False) -> np.ndarray:
    """F_k = G(s w^k) / G(s) = prod_i A_{N+i}(k) / A_i(k) for each k in ``ks``, without cancellation.

    Each factor A_j = (1 - s^j e^{iy}) / (1 - s^j), y = 2 pi (j k mod M) / M, is

        A_j = (1 + 2 alpha_j sin^2(y/2)) - i alpha_j sin y,   alpha_j = 1 / expm1(a j),
        log|A_j| = 0.5 log1p(4 alpha_j (1 + alpha_j) sin^2(y/2)),
        arg A_j = atan2(-alpha_j sin y, 1 + 2 alpha_j sin^2(y/2)),

    every term added non-negative (the textbook 1 - exp(j log z) loses every digit when s^j is near 1),
    and j k is reduced mod M in exact integers before any floating-point operation.  The logs and
    arguments are summed over the 2 min(P, N) factors, pair by pair (:func:`_paired_sum`): a few ulp each, ~1e-14
    relative on the tails in the end (``tests/compute/test_exact_auc.py``).  Plain numpy: a lookup loads no
    compiled kernel.
    ``magnitude_only`` returns |F_k| (half the work: the band checks need no phase).
    """
    j_den = np.arange(1, cell.small + 1, dtype=np.int64)
    j_num = j_den + cell.large
    with np.errstate(over="ignore", divide="ignore"):
        alpha = np.concatenate([1.0 / np.expm1(a * j_num), 1.0 / np.expm1(a * j_den)])
    beta = 4.0 * alpha * (1.0 + alpha)
    exponents = np.concatenate([j_num, j_den]) % M
    ks = np.asarray(ks, dtype=np.int64)
    out = np.empty(ks.size, dtype=float if magnitude_only else complex)
    rows = max(1, BLOCK_ELEMENTS // exponents.size)
    for start in range(0, ks.size, rows):
        turns = exponents[None, :] * ks[start:start + rows, None]  # j k < 2**63: k < 9e12 / (P + N)
        np.remainder(turns, M, out=turns)
        half_angle = turns * (np.pi / M)  # y / 2 in [0, pi): sin^2 and sin y are those of y - 2 pi
        sine = np.sin(half_angle)
        sine2 = sine * sine
        log_abs = _paired_sum(0.5 * np.log1p(beta * sine2), cell.small)
        if magnitude_only:
            out[start:start + rows] = np.exp(log_abs)
            continue
        arg = np.arctan2(-2.0 * alpha * sine * np.cos(half_angle), 1.0 + 2.0 * alpha * sine2)
        out[start:start + rows] = np.exp(log_abs + 1j * _paired_sum(arg, cell.small))
    return out


def _paired_sum(values: np.ndarray, small: int) -> np.ndarray:
    """Row sums of numerator minus denominator terms, pair by pair (i with L + i), pairwise-summed by numpy.

    A BLAS dot product with the +-1 signs runs up the numerator half first: at 10^6 items the phase of F_1 (220 rad
    from terms adding to 1.3e4 in modulus) came out 1e-11 to 3e-11 off the exactly summed terms; this is within
    ~1 ulp of the sum (and the log-modulus likewise).
    """
    return (values[:, :small] - values[:, small:]).sum(axis=1)


def _band(cell: TiltedAuc, a: float, M: int, sd: float) -> np.ndarray:
    """F_0..F_K: blocks (32, then doubling) until one is below tolerance, then checks beyond K (doubling
    K if one fails).  The band holds ~100 frequencies for balanced cells and up to the whole half
    spectrum when min(P, N) is tiny (a slowly decaying characteristic function): refused beyond the
    memory limit (:func:`tablegen.compute.limits.check_memory`)."""
    half, tolerance = M // 2, _BAND_TOLERANCE / sd
    blocks, end = [], 0
    while end <= half:
        _check_band_memory(cell, min(max(2 * end, _BLOCK), half + 1))
        block = _pgf(cell, a, M, np.arange(end, min(end + max(end, _BLOCK), half + 1)))
        blocks.append(block)
        end += block.size
        if np.max(np.abs(block)) < tolerance:
            break
    suspects = _secondary_peaks(M)
    while end <= half:
        checks = np.union1d(np.linspace(end, half, 256).astype(np.int64), suspects)
        checks = checks[(checks >= end) & (checks <= half)]
        if _all_below(cell, a, M, checks, tolerance):
            break
        stop = min(2 * end, half + 1)
        _check_band_memory(cell, stop)
        blocks.append(_pgf(cell, a, M, np.arange(end, stop)))
        end = stop
    return np.concatenate(blocks)


def _all_below(cell: TiltedAuc, a: float, M: int, checks: np.ndarray, tolerance: float) -> bool:
    """Whether |F_k| < ``tolerance`` at every k in ``checks``: the band check, the same verdict as
    ``np.max(_pgf(cell, a, M, checks, magnitude_only=True)) < tolerance``, at a fraction of its cost.

    Most check points are decided by an upper bound on |F_k| (:func:`_undecided`); only the others get |F_k|
    itself.  A point the bound decides has |F_k| < tolerance / 2 (with the bound's rounding, below the
    tolerance), so the verdict, and the band built from it, are those of the exact check.
    """
    undecided = _undecided(cell, a, M, checks, tolerance)
    return undecided.size == 0 or bool(np.max(_pgf(cell, a, M, undecided, magnitude_only=True)) < tolerance)


def _undecided(cell: TiltedAuc, a: float, M: int, ks: np.ndarray, tolerance: float) -> np.ndarray:
    """The k in ``ks`` at which the bound below does not show |F_k| < tolerance / 2.

    **The bound.**  With alpha_j = 1 / expm1(a j), beta_j = 4 alpha_j (1 + alpha_j) and s_j = sin(pi (j k mod M) / M),
    :func:`_pgf` has log|F_k| = sum_i l_{L+i} - sum_i l_i with l_j = 0.5 log1p(beta_j s_j^2) (i = 1..min(P, N),
    L = max(P, N)).  Every l_j >= 0 (beta_j > 0), and l_j <= 0.5 log1p(beta_j) since s_j^2 <= 1.  So for any
    set S of denominator indices

        log|F_k| <= sum_i 0.5 log1p(beta_{L+i}) - sum_{i in S} l_i,

    the first sum free of k.  The denominator terms are added in ascending i (the largest beta first: alpha_i ~
    1 / (a i)), a block of indices at a time, and a point leaves as soon as the bound is below
    log(tolerance / 2); the points left when every index is in S are returned.  Away from the secondary
    peaks a few hundred to all of the min(P, N) denominator terms decide a point (measured: 740 points at
    (2994, 7006) from z = 5 to 30, 6 to 14 times cheaper than |F_k|; at (299400, 700600), z = 10, 3 left of 740,
    3 times cheaper).  The margin log 2 dwarfs the rounding of both sums (sums of non-negative terms:
    relative 1e-16 x log(min(P, N)), ~1e-9 absolute at 10^6 items), so a point decided here has a computed
    |F_k| below the tolerance too (``tests/compute/test_exact_auc.py`` checks the bound against |F_k|).
    """
    j_den = np.arange(1, cell.small + 1, dtype=np.int64)
    with np.errstate(over="ignore", divide="ignore"):
        alpha_num = 1.0 / np.expm1(a * (j_den + cell.large))
        alpha_den = 1.0 / np.expm1(a * j_den)
    numerator_max = 0.5 * math.fsum(np.log1p(4.0 * alpha_num * (1.0 + alpha_num)))
    beta = 4.0 * alpha_den * (1.0 + alpha_den)
    needed = numerator_max - (math.log(tolerance) - math.log(2.0))  # the denominator sum that decides a point
    exponents = j_den % M
    ks = np.asarray(ks, dtype=np.int64)
    denominator = np.zeros(ks.size)
    step = max(1, min(cell.small // 16 + 1, BLOCK_ELEMENTS // max(ks.size, 1)))
    for start in range(0, cell.small, step):
        turns = exponents[None, start:start + step] * ks[:, None]  # j k < 2**63, as in _pgf
        np.remainder(turns, M, out=turns)
        sine = np.sin(turns * (np.pi / M))
        denominator += 0.5 * np.log1p(beta[None, start:start + step] * (sine * sine)).sum(axis=1)
        left = ~(denominator > needed)  # a NaN stays undecided: |F_k| itself then answers, as before
        ks, denominator = ks[left], denominator[left]
        if ks.size == 0:
            break
    return ks


#: Bytes per band frequency: the band and the O(K) temporaries of one probe (measured peak / K ~ 110).
BYTES_PER_FREQUENCY = 200


def _check_band_memory(cell: TiltedAuc, size: int) -> None:
    from tablegen.compute.limits import check_memory
    from tablegen.errors import Argument

    check_memory(BYTES_PER_FREQUENCY * size, f"exact auc at min(P, N) = {cell.small}, max(P, N) = {cell.large} "
                 f"(a band of {size:,} frequencies)",
                 ("use ", Argument("method", "simulate"), " or ", Argument("method", "auto")))


def _secondary_peaks(M: int) -> np.ndarray:
    """Grid points next to the roots of unity of order <= 32, where the q-binomial has secondary peaks."""
    roots = {round(M * p / b) for b in range(2, 33) for p in range(1, b // 2 + 1) if math.gcd(p, b) == 1}
    return np.array(sorted({r + d for r in roots for d in (-1, 0, 1)}), dtype=np.int64)
