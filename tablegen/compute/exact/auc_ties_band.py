"""Where the tied-AUC characteristic function carries mass: a rigorous band for the tilted inversion.

Under the tilted law of :mod:`tablegen.compute.exact.auc_ties_fft` every item of group g is a
positive independently with probability pi_g, and the joint characteristic function of (K, T) at
(theta, omega) is Phi = prod_g (1 - pi_g + pi_g e^{i(theta + omega s_g)})^{m_g}.  Since
|1 - p + p e^{iy}|^2 = 1 - 2 p (1 - p)(1 - cos y) and log(1 - x) <= -x,

    log |Phi(theta, omega)| <= -(W - Re(e^{i theta} S(omega))) <= -(W - |S(omega)|),
    W = sum_g w_g,   S(omega) = sum_g w_g e^{i omega s_g},   w_g = m_g pi_g (1 - pi_g).

So every (theta, omega) outside {W - Re(e^{i theta} S(omega)) < B} has |Phi| <= e^{-B}: the band
is that set, which for each omega is one arc of theta around -arg S(omega).  Near the origin the
bound is the Gaussian shape of Phi itself (W is K's tilted variance), so the band is tight.

The omega grid has M/2 + 1 points (M ~ 24 sd of T, 2e8 at n = 1e5); |S| is needed on all of them
only where that is cheap (one real FFT, or M/D FFTs of length D ~ 2n).  Elsewhere two valid lower
bounds of W - |S(omega)| rule out almost every omega first (any bound below the true value keeps
every point of the band):

- **near-untied** (light ties): with items in rank order, reference exponents spaced 2 apart and
  d_i the shift of item i from its untied position (|d_i| < m_g), Abel summation gives
  |S(omega)| <= TV / sin(omega) + min(2 W_tied, omega E), TV the total variation of pi(1 - pi) along
  the ranks, W_tied = the tied items' share of W and E = sum_g pi_g (1 - pi_g) floor(m_g^2 / 2);
- **pairs of large groups** (heavy ties): for disjoint pairs (g, h), W - |S| >= sum over pairs of
  w_g + w_h - |w_g + w_h e^{i omega (s_h - s_g)}|, so each pair alone confines omega (s_h - s_g) to
  within phi* of a multiple of 2 pi: a sieve of periodic intervals, intersected pair by pair.

The candidates left are then checked one by one (|S(omega_k)|, O(G) each).
"""

from __future__ import annotations

import math

import numpy as np

#: Above this many omega points |S| comes from FFTs rather than the sieve's candidates (cost permitting).
FULL_FFT_POINTS = 1 << 23
#: Seconds per group per candidate of :func:`s_values` and per point per log2 length of an FFT (fit on one core).
SECONDS_PER_S_TERM = 6e-9
SECONDS_PER_FFT_TERM = 4e-9


def s_values(intervals: np.ndarray, M: int, weights: np.ndarray, shifts: np.ndarray):
    """(ks, S(omega_k)) for every k in the [low, high] ``intervals`` (disjoint, ascending), O(G) each (numba)."""
    from tablegen.compute.kernels.tied_auc import s_bound_values

    starts = np.ascontiguousarray(intervals[:, 0], dtype=np.int64)
    counts = np.ascontiguousarray(intervals[:, 1] - intervals[:, 0] + 1, dtype=np.int64)
    total = int(counts.sum())
    re, im = np.empty(total), np.empty(total)
    s_bound_values(starts, counts, M, np.ascontiguousarray(weights), np.ascontiguousarray(shifts), re, im)
    return expand(intervals), re + 1j * im


def s_by_fft(M: int, D: int, weights: np.ndarray, shifts: np.ndarray, threshold: float):
    """(ks, S_k) for every k in [0, M/2] with |S(omega_k)| > threshold, by FFTs.

    M = Q D with D >= the spread of the shifts: k = Q v + q reads S off the length-D DFT of
    w_t e^{2 pi i q t / M} (t = s - min s), so memory stays O(D) whatever M is.
    """
    low = int(shifts.min())
    base = np.zeros(D)
    np.add.at(base, shifts - low, weights)
    Q = M // D
    t = np.arange(D)
    found_k, found_s = [], []
    for q in range(Q):
        twisted = base * np.exp(2j * np.pi * (q * t % M) / M) if q else base.astype(complex)
        values = np.fft.ifft(twisted) * D  # sum_t a_t e^{+2 pi i v t / D}
        k = Q * np.arange(D) + q
        keep = (np.abs(values) > threshold) & (k <= M // 2)
        if keep.any():
            kk = k[keep]
            found_k.append(kk)
            found_s.append(values[keep] * np.exp(2j * np.pi * ((kk * low) % M) / M))
    if not found_k:
        return np.zeros(0, np.int64), np.zeros(0, complex)
    ks = np.concatenate(found_k)
    order = np.argsort(ks)
    return ks[order], np.concatenate(found_s)[order]


def untied_candidates(M: int, sizes: np.ndarray, c: np.ndarray, W: float, B: float):
    """Intervals of k in [0, M/2] outside which the near-untied bound gives W - |S| >= B (None: no help)."""
    tied = sizes > 1
    TV = float(np.sum(np.abs(np.diff(c))) + c[-1])
    W_tied = float(np.sum(sizes[tied] * c[tied]))
    E = float(np.sum(c * (sizes * sizes // 2)))
    level = W - B
    if level <= TV:
        return None

    def h(omega):  # upper bound of |S| on (0, pi), convex
        return TV / math.sin(omega) + omega * E

    # R2: h > level outside (omega_1, omega_2); find the minimum, then both crossings
    lo, hi = 1e-300, math.pi - 1e-15
    for _ in range(200):
        a, b = lo + (hi - lo) / 3, hi - (hi - lo) / 3
        if h(a) < h(b):
            hi = b
        else:
            lo = a
    middle = 0.5 * (lo + hi)
    if h(middle) >= level:
        return None
    omega_1 = _crossing(h, level, 0.0, middle, rising=False)
    omega_2 = _crossing(h, level, middle, math.pi, rising=True)
    near_pi = math.pi - omega_2
    if level - 2 * W_tied > TV:  # R1: sin(omega) < TV / (level - 2 W_tied)
        near_pi = min(near_pi, math.asin(TV / (level - 2 * W_tied)))
    k_1 = math.ceil(omega_1 * M / (2 * math.pi)) + 1
    k_2 = math.floor((math.pi - near_pi) * M / (2 * math.pi)) - 1
    half = M // 2
    if k_2 <= k_1:
        return None
    return np.array([[0, min(k_1, half)], [max(k_2, 0), half]], dtype=np.int64)


def _crossing(h, level, low, high, rising):
    """The point in (low, high) where h crosses ``level`` (monotone there), outward-rounded."""
    for _ in range(200):
        middle = 0.5 * (low + high)
        if (h(middle) > level) == rising:
            high = middle
        else:
            low = middle
    return high if not rising else low


def pair_sieve(intervals: np.ndarray, M: int, s: np.ndarray, w: np.ndarray, B: float,
               max_intervals: int = 5_000_000) -> np.ndarray:
    """Intersect k-intervals with every useful pair's periodic candidate set (see the module docstring).

    Pairs are consecutive groups, in s order, among those with w_g > B / 2; a pair confines
    k (s_h - s_g) mod M to within R = M phi* / (2 pi) of 0, cos phi* = ((w_g + w_h - B)^2 - w_g^2 - w_h^2)
    / (2 w_g w_h).  Rounded outward by one grid point.
    """
    big = np.flatnonzero(w > B / 2)
    big = big[np.argsort(s[big], kind="stable")]
    pairs = []
    for i in range(0, big.size - 1, 2):
        g, h = big[i], big[i + 1]
        wg, wh = float(w[g]), float(w[h])
        cos_phi = ((wg + wh - B) ** 2 - wg * wg - wh * wh) / (2 * wg * wh)
        if cos_phi <= -1.0:
            continue
        delta = int(abs(s[h] - s[g]))
        if delta:
            pairs.append((delta, M * math.acos(min(cos_phi, 1.0)) / (2 * math.pi)))
    pairs.sort()
    low, high = intervals[:, 0].astype(np.int64), intervals[:, 1].astype(np.int64)
    for delta, R in pairs:
        j_low = np.floor((low * float(delta) - R) / M).astype(np.int64)
        j_high = np.ceil((high * float(delta) + R) / M).astype(np.int64)
        counts = j_high - j_low + 1
        if counts.sum() > max_intervals:
            break
        owner = np.repeat(np.arange(low.size), counts)
        j = np.repeat(j_low, counts) + (np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts))
        a = np.maximum(np.ceil((j * float(M) - R) / delta).astype(np.int64) - 1, low[owner])
        b = np.minimum(np.floor((j * float(M) + R) / delta).astype(np.int64) + 1, high[owner])
        keep = a <= b
        low, high = a[keep], b[keep]
        if low.size == 0:
            break
    return np.stack([low, high], axis=1) if low.size else np.zeros((0, 2), np.int64)


def merged(intervals: np.ndarray) -> np.ndarray:
    """The same integers as a list of [low, high] intervals, as disjoint ascending ones."""
    if intervals.size == 0:
        return np.zeros((0, 2), np.int64)
    intervals = intervals[np.argsort(intervals[:, 0], kind="stable")]
    reach = np.maximum.accumulate(intervals[:, 1])
    starts = np.r_[True, intervals[1:, 0] > reach[:-1] + 1]
    ends = np.r_[starts[1:], True]
    return np.stack([intervals[starts, 0], reach[ends]], axis=1)


def expand(intervals: np.ndarray) -> np.ndarray:
    """Every integer k in a list of disjoint ascending [low, high] intervals, in order."""
    if intervals.size == 0:
        return np.zeros(0, np.int64)
    counts = intervals[:, 1] - intervals[:, 0] + 1
    starts = np.repeat(intervals[:, 0], counts)
    return starts + (np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts))


def theta_arcs(S: np.ndarray, W: float, B: float, L: int):
    """(first j, count) of theta_j = 2 pi j / L with W - Re(e^{i theta} S) < B, for each S (one outward j)."""
    modulus = np.abs(S)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(modulus > 0, (W - B) / modulus, -np.inf)
    gamma = np.arccos(np.clip(ratio, -1.0, 1.0))
    centre = -np.angle(S)
    first = np.floor((centre - gamma) * L / (2 * np.pi)).astype(np.int64) - 1
    last = np.ceil((centre + gamma) * L / (2 * np.pi)).astype(np.int64) + 1
    count = np.minimum(last - first + 1, L)
    full = ratio <= -1.0
    first[full], count[full] = 0, L
    return np.mod(first, L), count
