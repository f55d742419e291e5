"""Exact tied-AUC null at large n: a tilted two-dimensional Fourier inversion with a rigorous band.

Items sit in G tie groups (sizes m_g, ascending score); item i of group g has the centred score
s_g = 2 midrank_g - (n + 1), an integer, and T = sum over positives of s_g = 2U - P N.  The counts
c(k, t) of label sets with k positives and T = t have the generating function

    C(x, z) = prod_g (1 + x z^{s_g})^{m_g},     Pr(T = t) = c(P, t) / C(n, P).

1. **Tilt** (two parameters).  Under f(k, t) = c(k, t) e^{bk - at} / e^{Lambda(b, a)} every item of
   group g is a positive independently with probability pi_g = expit(b - a s_g).  b is set so that
   E K = P and a >= 0 so that E T sits at the wanted point (a saddle-point estimate for a wanted
   tail probability).  Then Pr(T <= v | K = P) = exp(Lambda - bP + av - log C(n, P)) S(v) with
   S(v) = sum_{t <= v} e^{a(t - v)} f(P, t).  T is sheared by an integer lambda (s_g - lambda), the
   regression of T on K under the tilt, so that its window is that of T given K.
2. **Windows.**  K in a window of L values around P and T in [lo, lo + M): Bernstein's inequality
   bounds the tilted mass outside each by 1e-30 (rigorous: every item contributes a bounded term).
3. **Band.**  Phi(theta, omega) = prod_g (1 - pi_g + pi_g e^{i(theta + omega s_g)})^{m_g} is kept
   where the bound of :mod:`tablegen.compute.exact.auc_ties_band` allows |Phi| > e^{-B}:
   every frequency left out has |Phi| <= e^{-B}, proved, not sampled.
4. **Sum.**  H_k = (1/L) sum_j Phi(theta_j, omega_k) e^{-i theta_j P} (numba kernel), and
   S(v) = (1/M) sum_k H_k e^{-i omega_k v} (1 - rho_k^{v - lo + 1}) / (1 - rho_k), rho_k = e^{-a + i omega_k}:
   O(band) per probe.

Error bound (relative, per probe; :meth:`TiedTilt.lower_tail` returns it with the value):

- window: <= 5e-30 absolute in S (aliasing and the mass below lo, each weight e^{a(t - v)} <= 1);
- band: every left-out term is <= e^{-B} |g_k| / (L M), and (1/M) sum_k |g_k| <= 1 + (log M + 1) / sqrt(rho)
  (|1 - rho e^{i omega}| >= 2 sqrt(rho) |omega| / pi), so <= e^{-B} (1 + (log M + 1) e^{a/2}) absolute;
- rounding: each factor is formed from exactly reduced angles to a few ulp and has modulus <= 1, so
  Phi carries at most (6 n + 4) 2^-53 of the modulus sum of its terms; the band sums add their count;
  bounded by that times (1/M) sum_k |H_k| |g_k|, computed alongside.

The sum of the three over the computed S(v) is the probe's bound; B is chosen so the band term is
1e-17 of the expected S at the tilt's mean.  :data:`RELATIVE_ERROR_BOUND` is what every answer is held to
(probes farther than two sd from their tilt's mean are re-tilted).
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from tablegen.compute.exact import auc_ties_band as band

logger = logging.getLogger(__name__)

#: Relative error of a tail probability that every answer of the inversion is held to (n <= 10^6).
RELATIVE_ERROR_BOUND = 1e-9
_LOG_OUTSIDE = math.log(1e30)
_EPS = 2.0 ** -53
_ACCURATE_SDS = 2.0


def _expit(x):
    """1 / (1 + e^-x), accurate at both ends (one exp)."""
    small = np.exp(-np.abs(x))
    return np.where(x >= 0, 1.0, small) / (1.0 + small)


def _softplus(x):
    return np.maximum(x, 0.0) + np.log1p(np.exp(-np.abs(x)))


def bernstein_radius(variance: float, bound: float) -> float:
    """h with exp(-h^2 / (2 (variance + bound h / 3))) <= 1e-30."""
    third = bound * _LOG_OUTSIDE / 3.0
    return third + math.sqrt(third * third + 2.0 * variance * _LOG_OUTSIDE)


class TiedTilt:
    """Lower tails Pr(T <= v) of T = sum over positives of s_g, for one orientation of the groups.

    Parameters
    ----------
    sizes : ndarray of int64
        Group sizes (any order; the shifts say where each group sits).
    shifts : ndarray of int64
        s_g of each group (2 midrank - (n + 1), or its negation for the mirrored orientation).
    P : int
        Positives.

    Examples
    --------
    >>> tilt = TiedTilt(np.array([3, 3, 3]), np.array([-6, 0, 6]), 3)   # T / 6 = k_3 - k_1
    >>> value, bound = tilt.lower_tail(-18)                         # all three positives in group 1
    >>> round(value * 84, 9), bound < 1e-9                          # 1 of C(9, 3) = 84 label sets
    (1.0, True)
    """

    def __init__(self, sizes, shifts, P: int):
        self.sizes = np.asarray(sizes, dtype=np.int64)
        self.shifts = np.asarray(shifts, dtype=np.int64)
        self.m = self.sizes.astype(float)
        self.s = self.shifts.astype(float)
        self.P, self.n = int(P), int(self.sizes.sum())
        self.log_total = _log_binomial(self.n, self.P)
        order = np.argsort(self.shifts, kind="stable")
        self.t_min = _extreme_sum(self.sizes[order], self.shifts[order], self.P)
        self.t_max = -_extreme_sum(self.sizes[order[::-1]], -self.shifts[order[::-1]], self.P)
        self._tilts: dict[float, _Tilted] = {}
        self._b_hint: dict[str, float] = {}

    # -- the tilted family -------------------------------------------------------------------------
    def solve_b(self, a: float, start: float | None = None) -> float:
        """b with sum_g m_g expit(b - a s_g) = P: Newton inside a shrinking bracket, bisection when it leaves."""
        low = a * float(self.s.min()) - 50.0   # every pi < e^-50: the sum is below P
        high = a * float(self.s.max()) + 50.0  # every pi > 1 - e^-50: the sum is above P
        if start is None:
            start = self._b_hint.get("b", math.log(self.P / (self.n - self.P)))
        b = min(max(start, low), high)
        for _ in range(400):
            pi = _expit(b - a * self.s)
            excess = float(self.m @ pi) - self.P
            # any b gives an exact inversion; b only centres K's window, so 1e-10 P is plenty
            if abs(excess) <= 1e-10 * self.P or high - low <= 1e-15 * max(1.0, abs(b)):
                break
            if excess > 0:
                high = b
            else:
                low = b
            slope = float(self.m @ (pi * (1.0 - pi)))
            new = b - excess / slope if slope > 0 else 0.5 * (low + high)
            b = new if low < new < high else 0.5 * (low + high)
        self._b_hint["b"] = b
        return b

    def moments(self, a: float) -> dict:
        """b, pi, w, W = Var K, the mean of T, its variance given K (Gaussian), its slope on K, Lambda; at tilt a."""
        b = self.solve_b(a)
        x = b - a * self.s
        pi = _expit(x)
        w = self.m * pi * _expit(-x)
        W = float(w.sum())
        ws = float(w @ self.s)
        return dict(b=b, pi=pi, w=w, W=W, mean=float(self.m @ (pi * self.s)),
                    var=max(float(w @ (self.s * self.s)) - ws * ws / W, 0.0) if W > 0 else 0.0,
                    slope=ws / W if W > 0 else 0.0, lam=float(self.m @ _softplus(x)))

    def mean(self, a: float) -> float:
        return self.moments(a)["mean"]

    @cached_property
    def scale(self) -> float:
        """1 / sd of T given K, untilted (at least 1): the unit of tilts."""
        return 1.0 / max(math.sqrt(self.moments(0.0)["var"]), 1.0)

    def solve_mu(self, v: float) -> float:
        """a >= 0 whose tilted mean of T is v (v at or below the untilted mean 0): Newton, d mean / da = -var."""
        if v >= 0:
            return 0.0
        low, high, a = 0.0, np.inf, 0.0
        for _ in range(200):
            mo = self.moments(a)
            gap = mo["mean"] - v  # > 0: a too small
            if gap > 0:
                low = a
            else:
                high = a
            if abs(gap) <= 1e-9 * max(1.0, abs(v)) or (math.isfinite(high) and high - low <= 1e-13 * high):
                return a
            new = a + gap / mo["var"] if mo["var"] > 0 else np.inf
            if not low < new < high:
                new = 0.5 * (low + high) if math.isfinite(high) else max(2.0 * low, 1.0 / math.sqrt(mo["var"] + 1.0))
            a = new
        return a

    def log_saddle(self, a: float) -> float:
        """Double saddle-point estimate of log Pr(T <= mean(a) | K = P), a > 0."""
        mo = self.moments(a)
        exponent = mo["lam"] - mo["b"] * self.P + a * mo["mean"] - self.log_total
        density = 1.0 / (2 * math.pi * math.sqrt(max(mo["W"] * mo["var"], 1e-300)))
        return exponent + math.log(density) - math.log(-math.expm1(-a))

    def tilt_for_tail(self, t: float) -> float:
        """a whose mean sits (by the saddle-point estimate) where Pr(T <= v) = t, t < 1/2."""
        target = math.log(t)
        low, high = 1e-6 * self.scale, self.scale
        while self.log_saddle(high) > target and self.mean(high) > self.t_min + 0.5:
            low, high = high, 2.0 * high
        while high / low - 1.0 > 1e-6:
            middle = math.sqrt(low * high)
            if self.log_saddle(middle) > target:
                low = middle
            else:
                high = middle
        return math.sqrt(low * high)

    def tilted(self, a: float) -> _Tilted:
        """The tilted law at ``a`` with its windows, band and sums, built once per tilt."""
        a = max(a, 1e-6 * self.scale)  # the centre: a tilt too small to matter
        if a not in self._tilts:
            self._tilts[a] = _Tilted.build(self, a)
        return self._tilts[a]

    def tilted_at(self, v: float) -> _Tilted:
        """The tilt whose mean is v (clamped to [t_min + 1/2, 0]: the lower half, a hair off the end)."""
        return self.tilted(self.solve_mu(min(max(v, self.t_min + 0.5), 0.0)))

    def lower_tail(self, v: int) -> tuple[float, float]:
        """(Pr(T <= v), its relative error bound) under the tilt whose mean is v (accurate at or below the centre)."""
        if v < self.t_min:
            return 0.0, 0.0
        if v >= self.t_max:
            return 1.0, 0.0
        tilt = self.tilted_at(v)
        return tilt.lower_tail(v)


def _log_binomial(n: int, P: int) -> float:
    """log C(n, P) = sum_i log1p(max / i), i <= min(P, n - P): non-negative terms, each to 2 ulp (lgamma
    differences lose ~n log n ulp: 2.5e-10 at n = 1e5)."""
    small, large = min(P, n - P), max(P, n - P)
    return math.fsum(np.log1p(large / np.arange(1, small + 1, dtype=np.float64)))


def _extreme_sum(sizes, shifts, P):
    """Smallest T: the P positives in the lowest groups (sizes, shifts sorted by shift)."""
    take = np.minimum(sizes, np.maximum(P - (np.cumsum(sizes) - sizes), 0))
    return int(take @ shifts)


@dataclass
class _Tilted:
    """One tilt: parameters, windows, band and the per-frequency sums H_k."""

    owner: TiedTilt
    a: float
    b: float
    lam: float
    shear: int
    L: int
    lo: int
    M: int
    ks: np.ndarray
    H: np.ndarray
    H_abs: np.ndarray
    B: float
    mean: float
    sd: float
    points: int  # (theta, omega) pairs in the band: the kernel's work is points x G factors

    @classmethod
    def build(cls, owner: TiedTilt, a: float) -> _Tilted:
        mo = owner.moments(a)
        pi, w, W = mo["pi"], mo["w"], mo["W"]
        shear = int(round(mo["slope"]))
        shifts = owner.shifts - shear
        s = shifts.astype(float)
        # windows: K within h_K of P (or all of 0..n), T'' = T - shear K within h_T of its mean
        h_K = bernstein_radius(W, 1.0)
        L = owner.n + 1 if 2 * h_K + 1 >= owner.n + 1 else int(2 * math.ceil(h_K) + 1)
        var_T = float(w @ (s * s))
        mean_T = float(owner.m @ (pi * s))
        h_T = bernstein_radius(var_T, float(np.max(np.abs(s))))
        support_low, support_high = owner.t_min - shear * owner.P, owner.t_max - shear * owner.P
        lo = max(math.floor(mean_T - h_T), support_low)
        hi = min(math.ceil(mean_T + h_T), support_high)
        spread = int(shifts.max() - shifts.min()) + 1
        M, D = _lengths(hi - lo + 1, spread)
        sd_T = math.sqrt(max(mo["var"], 1.0))
        rho = math.exp(-a)
        g_sum = 1.0 + min((math.log(M) + 1.0) / math.sqrt(rho), 2.0 / (1.0 - rho) if a > 0 else np.inf)
        # e^{-39.2} = 1e-17 of the tilted pmf near its mean, ~1 / (2 pi sqrt(W) sd), with room for 50x less
        B = 39.2 + math.log(g_sum) + math.log(50.0 * max(2 * math.pi * math.sqrt(W) * sd_T, 1.0))
        ks, S = _band_frequencies(owner, M, D, shifts, w, W, B, pi)
        first, count = band.theta_arcs(S, W, B, L)
        H, H_abs = _band_sums(ks, first, count, L, M, owner.P, pi, owner.sizes, shifts)
        logger.debug("tied AUC tilt a=%.3g: L=%d M=%d band %d x %.1f (B=%.1f)", a, L, M, ks.size,
                     count.mean() if count.size else 0, B)
        lam = math.fsum(owner.m * _softplus(mo["b"] - a * owner.s))  # exactly summed: within 2 ulp of Lambda
        return cls(owner, a, mo["b"], lam, shear, L, lo, M, ks, H, H_abs, B,
                   mo["mean"], math.sqrt(mo["var"]), int(count.sum()))

    @cached_property
    def _geometry(self):
        k = self.ks
        angle = np.where(k > self.M // 2, k - self.M, k) * (2 * np.pi / self.M)
        denominator = _one_minus(math.exp(-self.a), -math.expm1(-self.a), angle)
        multiplicity = np.where((k == 0) | (2 * k == self.M), 1.0, 2.0)
        return multiplicity / denominator, multiplicity / np.abs(denominator)

    def lower_tail(self, v: int) -> tuple[float, float]:
        """(Pr(T <= v), relative error bound): the geometric sum over the band, untilted."""
        owner = self.owner
        if v < owner.t_min or v >= owner.t_max:
            return (0.0 if v < owner.t_min else 1.0), 0.0
        v2 = v - self.shear * owner.P
        if v2 < self.lo:
            return 0.0, math.inf  # below this tilt's window: re-tilt to resolve it
        weighted, weighted_abs = self._geometry
        k = self.ks
        span = v2 - self.lo + 1
        phase = 2 * np.pi * (((k * v2) % self.M) / self.M)
        turns = ((k * span) % self.M).astype(np.float64)
        angle = np.where(turns > self.M / 2, turns - self.M, turns) * (2 * np.pi / self.M)
        decay = self.a * span
        numerator = (np.ones_like(angle, dtype=complex) if decay > 745
                     else _one_minus(math.exp(-decay), -math.expm1(-decay), angle))
        S = float(np.sum((self.H * weighted * np.exp(-1j * phase) * numerator).real)) / self.M
        modulus_sum = float(np.sum(self.H_abs * weighted_abs * np.abs(numerator))) / self.M
        rho = math.exp(-self.a)
        g_sum = 1.0 + min((math.log(self.M) + 1.0) / math.sqrt(rho), 2.0 / (1.0 - rho))
        error = 5e-30 + math.exp(-self.B) * g_sum + (6 * owner.n + 4 + 2 * k.size) * _EPS * modulus_sum
        if S <= error:
            return max(S, 0.0), math.inf
        terms = (self.lam, -self.b * owner.P, self.a * v, -owner.log_total)
        # the untilting exponent: each term to ~2 ulp of itself (sums of non-negative terms, one product)
        exponent_error = 4 * _EPS * (sum(abs(t) for t in terms) + 2 * owner.n)
        log_value = math.fsum(terms) + math.log(S)
        relative = error / (S - error)
        return min(math.exp(log_value), 1.0), relative + math.expm1(exponent_error) * (1 + relative)


def _one_minus(q: float, one_minus_q: float, angle: np.ndarray) -> np.ndarray:
    """1 - q e^{i angle} without cancellation: (1 - q) + 2 q sin^2(angle/2) - i q sin(angle)."""
    half = np.sin(0.5 * angle)
    return (one_minus_q + 2 * q * half * half) - 1j * q * np.sin(angle)


def _lengths(window: int, spread: int) -> tuple[int, int]:
    """(M, D): M >= window; D (a power of two >= spread) divides M when M is large (FFT path)."""
    D = 1 << max(spread - 1, 1).bit_length()
    if window <= band.FULL_FFT_POINTS:
        M = 1 << max(window - 1, 1).bit_length()
        if 3 * (M // 4) >= window:
            M = 3 * (M // 4)
        return max(M, 2), min(D, max(M, 2))
    return D * math.ceil(window / D), D


def _band_frequencies(owner: TiedTilt, M: int, D: int, shifts, w, W, B, pi):
    """(ks, S_k) of every k in [0, M/2] with W - |S(omega_k)| < B (a little slack for rounding).

    The sieve's candidates checked one by one, or |S| everywhere by FFTs, whichever is cheaper.
    """
    threshold = W - B - 1e-9 * W - 1.0
    half = M // 2
    c = pi * (1.0 - pi)
    order = np.argsort(shifts, kind="stable")
    near = band.untied_candidates(M, owner.sizes[order], c[order], W, B)
    intervals = np.array([[0, half]], dtype=np.int64) if near is None else near
    intervals = band.merged(band.pair_sieve(intervals, M, shifts.astype(float), w, B))
    candidates = int(np.sum(intervals[:, 1] - intervals[:, 0] + 1)) if intervals.size else 0
    direct = candidates * w.size * band.SECONDS_PER_S_TERM
    by_fft = M * math.log2(min(M, D) if half + 1 > band.FULL_FFT_POINTS else M) * band.SECONDS_PER_FFT_TERM
    if direct <= by_fft:
        ks, S = band.s_values(intervals, M, w, shifts)
    elif half + 1 <= band.FULL_FFT_POINTS:  # one real FFT of the whole grid
        ks = np.arange(half + 1, dtype=np.int64)
        table = np.zeros(M)
        np.add.at(table, shifts % M, w)
        S = np.conj(np.fft.rfft(table))[:half + 1]
    else:
        return band.s_by_fft(M, D, w, shifts, threshold)
    keep = np.abs(S) > threshold
    return ks[keep], S[keep]


def _band_sums(ks, first, count, L, M, P, pi, sizes, shifts):
    from tablegen.compute.kernels.tied_auc import band_sums

    H = np.empty(ks.size, dtype=complex)
    H_abs = np.empty(ks.size)
    band_sums(np.ascontiguousarray(ks), np.ascontiguousarray(first), np.ascontiguousarray(count), L, M, P,
              np.ascontiguousarray(pi), np.ascontiguousarray(sizes), np.ascontiguousarray(shifts), H, H_abs)
    return H, H_abs
