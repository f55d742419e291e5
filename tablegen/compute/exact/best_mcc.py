"""Exact null of best MCC by a lattice programme with a per-diagonal boundary.

Best MCC = max over the cut-offs k of M_k = G_k / sqrt(P N k (P + N - k)), G_k = (P + N) TP_k - k P =
TP_k N - FP_k P (0 at k = 0 and k = P + N).  Along a diagonal k = t + f of the lattice, M rises with
t, so "max_k M_k >= x" (x > 0) is the event that the ranking's path reaches t >= tau_k(x) on some
diagonal k, tau_k(x) the smallest t with M(k, t) >= x: one O(P N) programme with a per-diagonal
boundary (:func:`tablegen.compute.kernels.lattice.column_boundary_sweep`), whatever the boundary's
shape.  Critical values and tail probabilities come from the bracketed search of the half-plane metrics
(:mod:`tablegen.compute.exact.lattice_search`), run over the candidates of this family.

**Exact order.**  The candidates are 0 (k = 0) and M at the lattice points with G > 0; M > 0 is
sqrt(q / (P N)) with the rational q = G^2 / (k (P + N - k)), so candidates are ordered exactly by q
(Python fractions; a candidate is a :class:`MccKey`).  For a candidate x = sqrt(A / (B P N)) the
boundary is exact in integers: M(k, t) >= x  <=>  G^2 B >= A k (P + N - k)  <=>  G >= g_k, the
smallest integer with g_k^2 >= ceil(A k (P + N - k) / B), and tau_k = ceil((g_k + k P) / (P + N)).
g_k is ceil(r) for the double r = sqrt(float(q) k (P + N - k)) (relative error < 4 * 2**-53) where r
lies farther than 1e-12 r from an integer, else ``math.isqrt`` in Python integers.  So the
programme's event is exactly {best MCC >= x}.

**The float reported.**  The Monte Carlo kernels and the reference scorer compute M as float(G) *
w_k, w_k = 1 / sqrt(float(P N) * float(k (P + N - k))), capped at 1; :meth:`BestMccKeys.value` is that
float at a point attaining the candidate.  Each of its four operations is correctly rounded, so it
is within 4 * 2**-53 relative (3 ulp in the tests) of the exact M, at any point with the same exact
value too: the kernels'
maximum over a ranking is within that of the exact maximum, and both are within far less than the
snap tolerance (1e-9) of each other.  Distinct candidates are not always separated by doubles (q's
differ by >= 1 / (k (P+N-k) k' (P+N-k')) only), so floats never decide an order here: they only
place probes, and a score is snapped to the exactly smallest of the candidates whose doubles are
nearest to it (where distinct candidates share a double, the p-value is that of the smallest: never
too small).

**Search.**  A probe that does not qualify moves the bracket to the lowest point where mass was
absorbed (the tail is flat up to it) and to the largest *atom* its absorbed masses prove
(:meth:`BestMccKeys.atom_bound`); no edge bound (the half-planes' rests on a linear-fractional
value), so a probe that qualifies moves the bracket to itself only.  The model of the maximum is the
standardised bridge's: with c = x sqrt(P + N - 1) (M_k sqrt(P + N - 1) has unit variance),
Pr(max >= x) ~ c phi(c) log(P + N).  Each step of the search does O(P + N) numpy work (the
boundary and the candidate counts, one line per diagonal).
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction

import numpy as np

from tablegen.compute.exact.lattice import Listed, lattice_cost
from tablegen.compute.exact.lattice_search import critical_key, tail_at_key
from tablegen.compute.exact.nulls import LatticeNull
from tablegen.compute.kernels.lattice import column_boundary_sweep

#: Relative width within which float estimates of q are compared exactly (they err by < 1e-15).
_NEAR = 1e-9
#: Roots sqrt(q m) within this relative distance of an integer are rounded in Python integers.
_FLOAT_MARGIN = 1e-12


@functools.total_ordering
class MccKey:
    """A best-MCC candidate: ``square`` = G^2 / (k (P + N - k)) (exact order), and a point (g, k)
    attaining it (for the float)."""

    __slots__ = ("square", "g", "k")

    def __init__(self, square: Fraction, g: int, k: int):
        self.square, self.g, self.k = square, int(g), int(k)

    def __eq__(self, other) -> bool:
        return isinstance(other, MccKey) and self.square == other.square

    def __lt__(self, other) -> bool:
        return self.square < other.square

    def __hash__(self) -> int:
        return hash(self.square)

    def __repr__(self) -> str:
        return f"MccKey(G={self.g}, k={self.k})"


class BestMccKeys:
    """Candidates of best MCC at (P, N): exact keys, per-diagonal boundaries, their programmes.

    The interface of the half-plane families (:mod:`tablegen.compute.exact.lattice`) that the search
    (:func:`~tablegen.compute.exact.lattice_search.critical_key`) uses.  Lines are the diagonals
    k = 1 .. P + N - 1; along each, M rises with t.
    """

    #: Programmes per critical value, for :func:`best_mcc_cost` (measured 3-16 on the cells of
    #: ``benchmarks/bench_best_mcc_exact.py``: 2-3 on skewed ones, where atoms such as "the top item is
    #: positive" (Pr = P/(P+N)) hold the tail and :meth:`atom_bound` finds them).
    programmes = 16
    record_limit = 0

    def __init__(self, P: int, N: int):
        self.P, self.N = int(P), int(N)
        n = self.n = self.P + self.N
        self.k = np.arange(1, n, dtype=np.int64)
        self.m = self.k * (n - self.k)  # k (P + N - k) < 2**62 for P + N < 2**31
        self.t_low = np.maximum(self.k - self.N, 0)
        self.t_high = np.minimum(self.k, self.P)
        self._weights = 1.0 / np.sqrt(np.float64(self.P * self.N) * self.m.astype(np.float64))
        self.min_key = MccKey(Fraction(0), 0, 0)
        self.max_key = self.key_of(self.P, self.P)

    # -- keys ------------------------------------------------------------------------------------
    def key_of(self, k: int, t: int) -> MccKey:
        """The candidate at diagonal k, TP = t (G > 0 assumed, or k in (0, P + N) with G <= 0: key 0)."""
        g = self.n * t - k * self.P
        if g <= 0 or k <= 0 or k >= self.n:
            return self.min_key
        return MccKey(Fraction(g * g, k * (self.n - k)), g, k)

    def value(self, key: MccKey) -> float:
        """The kernels' float of the candidate: float(G) * w_k, capped at 1 (see module)."""
        if key.g <= 0:
            return 0.0
        weight = 1.0 / math.sqrt(float(np.float64(self.P * self.N) * np.float64(key.k * (self.n - key.k))))
        return min(float(key.g) * weight, 1.0)

    def _values(self, g: np.ndarray, line: np.ndarray) -> np.ndarray:
        """Floats of points (g, k = line + 1), as :meth:`value`."""
        return np.minimum(g.astype(np.float64) * self._weights[line], 1.0)

    def _g_bounds(self, key: MccKey, strict: bool) -> np.ndarray:
        """Per diagonal, the smallest G with M >= key (M > key if ``strict``), exactly (see module)."""
        if key.g <= 0:
            return np.full(len(self.k), 1 if strict else -(self.n * self.P), dtype=np.int64)
        # the root r = sqrt(q m) in floats carries a relative error < 4 * 2**-53: where it is farther
        # than _FLOAT_MARGIN r from an integer, floor(r) + 1 (strict) or ceil(r) is exact; the other
        # diagonals are decided in Python integers
        root = np.sqrt(float(key.square) * self.m.astype(np.float64))
        bounds = (np.floor(root) + 1.0 if strict else np.ceil(root)).astype(np.int64)
        unsure = np.nonzero(np.abs(root - np.round(root)) <= _FLOAT_MARGIN * root + 1e-300)[0]
        A, B = key.square.numerator, key.square.denominator
        isqrt = math.isqrt
        for line in unsure.tolist():
            m = int(self.m[line])
            if strict:  # G^2 B > A m  <=>  G^2 >= floor(A m / B) + 1
                bounds[line] = isqrt(A * m // B) + 1
            else:  # G^2 B >= A m  <=>  G^2 >= ceil(A m / B)
                bounds[line] = isqrt(-(-A * m // B) - 1) + 1
        return bounds

    def _t_bounds(self, key: MccKey, strict: bool) -> np.ndarray:
        """Per diagonal, the smallest t with M(k, t) >= key (> key if ``strict``): ceil((g + k P)/(P + N))."""
        g = self._g_bounds(key, strict)
        return -(-(g + self.k * self.P) // self.n)

    # -- programmes ------------------------------------------------------------------------------
    def sweep(self, key: MccKey, floor: float):
        """(hit, dropped, flat, record) of the programme for Pr(X >= key); ``flat`` the lowest candidate
        where mass was absorbed (Pr(X >= flat) >= hit), None if none; ``record`` the lowest absorbed
        point of each diagonal and the mass absorbed there, for :meth:`atom_bound`."""
        if key.g <= 0:
            return 1.0, 0.0, None, None
        threshold = np.full(self.n + 1, self.P + 1, dtype=np.int64)
        threshold[1:-1] = self._t_bounds(key, strict=False)
        entry, mass = np.empty(self.n + 1, dtype=np.int64), np.empty(self.n + 1)
        hit, dropped = column_boundary_sweep(self.P, self.N, threshold, floor, entry, mass)
        lines = np.nonzero(entry[1:-1] >= 0)[0]
        record = (lines, entry[1:-1][lines], mass[1:-1][lines])
        return hit, dropped, self._lowest(lines, record[1]), record

    def atom_bound(self, record, target: float, hi):
        """A candidate v with Pr(X >= v) > ``target`` read off a programme's absorbed masses: every path
        absorbed on diagonal d has a maximum >= the value at d's lowest absorbed point, so Pr(X >= v) >=
        the mass absorbed on the diagonals whose lowest point is worth >= v.  The diagonals are taken
        from the highest (by doubles) until their mass exceeds ``target``, and v is the exact minimum of
        their points; None if the whole record does not exceed it."""
        if record is None:
            return None
        lines, t, mass = record
        g = self.n * t - self.k[lines] * self.P
        order = np.argsort(-(g.astype(np.float64) ** 2 / self.m[lines]), kind="stable")
        reached = np.nonzero(np.cumsum(mass[order]) > target)[0]
        if len(reached) == 0:
            return None
        chosen = order[: reached[0] + 1]
        return self._lowest(lines[chosen], t[chosen])

    def edge_bound(self, record, budget, lo, key):
        return None

    def tail(self, key: MccKey) -> float:
        """Pr(X >= key) (:func:`tail_at_key`)."""
        return tail_at_key(self, key)

    def critical(self, target: float, known: list | None = None):
        """(m*, programmes run) for the tail ``target`` (:func:`critical_key`; ``known``: what earlier searches
        showed)."""
        return critical_key(self, target, known)

    def model_phi(self, x: float) -> float:
        """sqrt(-log Pr(X >= x)) of the standardised-bridge model (see module); only places probes."""
        c = x * math.sqrt(max(self.n - 1, 1))
        log_tail = -0.5 * c * c - 0.5 * math.log(2 * math.pi) + math.log(max(c * math.log(max(self.n, 3)), 1e-300))
        return math.sqrt(max(-log_tail, 0.0))

    # -- candidates ------------------------------------------------------------------------------
    def _lowest(self, lines: np.ndarray, t: np.ndarray):
        """The exactly smallest candidate among points (k = lines + 1, t) with G > 0 (None if none)."""
        g = self.n * t - self.k[lines] * self.P
        positive = g > 0
        lines, t, g = lines[positive], t[positive], g[positive]
        if len(lines) == 0:
            return None
        q = g.astype(np.float64) ** 2 / self.m[lines]
        near = np.nonzero(q <= q.min() * (1 + _NEAR))[0]
        return min(self.key_of(int(self.k[lines[i]]), int(t[i])) for i in near)

    def _ranges(self, low: MccKey, high):
        first = np.maximum(self._t_bounds(low, strict=True), self.t_low)
        last = self.t_high if high is None else np.minimum(self._t_bounds(high, strict=False) - 1, self.t_high)
        return first, last

    def count_between(self, low: MccKey, high) -> int:
        """Number of lattice points whose candidate lies strictly between low and high (None: above)."""
        first, last = self._ranges(low, high)
        return int(np.maximum(last - first + 1, 0).sum())

    def keys_between(self, low: MccKey, high) -> Listed:
        """Distinct candidates strictly between low and high, ascending."""
        first, last = self._ranges(low, high)
        lengths = np.maximum(last - first + 1, 0)
        offsets = np.arange(lengths.sum()) - np.repeat(np.cumsum(lengths) - lengths, lengths)
        return self._sorted(np.repeat(self.k, lengths), np.repeat(first, lengths) + offsets)

    def _sorted(self, k: np.ndarray, t: np.ndarray) -> Listed:
        keys = sorted({self.key_of(int(a), int(b)) for a, b in zip(k.tolist(), t.tolist())})
        raw = np.empty(len(keys), dtype=object)
        raw[:] = keys
        return Listed(np.array([self.value(key) for key in keys]), raw, lambda key: key)

    def all_keys(self) -> Listed:
        """Every candidate, 0 included (small cells)."""
        first, last = self._ranges(self.min_key, None)
        lengths = np.maximum(last - first + 1, 0)
        offsets = np.arange(lengths.sum()) - np.repeat(np.cumsum(lengths) - lengths, lengths)
        listed = self._sorted(np.repeat(self.k, lengths), np.repeat(first, lengths) + offsets)
        raw = np.empty(len(listed) + 1, dtype=object)
        raw[0], raw[1:] = self.min_key, [listed.key(i) for i in range(len(listed))]
        return Listed(np.concatenate([[0.0], listed.values]), raw, lambda key: key)

    def successor(self, key: MccKey):
        """The smallest candidate above ``key`` (None if none), exactly."""
        first = self._t_bounds(key, strict=True)
        lines = np.nonzero(first <= self.t_high)[0]
        return self._lowest(lines, np.maximum(first[lines], self.t_low[lines]))

    def ceil_key(self, x: float):
        """Smallest candidate with value >= x (None if none), judged on the candidates' doubles."""
        return self._nearest(x, above=True)

    def floor_key(self, x: float):
        """Largest candidate with value <= x (None if none), judged on the candidates' doubles."""
        return self._nearest(x, above=False)

    def _nearest(self, x: float, above: bool):
        if above and x <= 0.0:
            return self.min_key
        # per diagonal, M crosses x next to t = (k P + x sqrt(P N m)) / (P + N): look at its neighbours
        crossing = (self.k * self.P + max(x, 0.0) * np.sqrt(float(self.P * self.N) * self.m)) / self.n
        t = np.floor(crossing)[:, None] + np.array([-1.0, 0.0, 1.0, 2.0])[None, :]
        t = np.clip(t, self.t_low[:, None], self.t_high[:, None]).astype(np.int64)
        g = self.n * t - (self.k * self.P)[:, None]
        values = np.where(g > 0, self._values(g, np.arange(len(self.k))[:, None]), -np.inf)
        fits = (values >= x) if above else ((values <= x) & (g > 0))
        if not fits.any():
            return None if above or x < 0.0 else self.min_key
        masked = np.where(fits, values, np.inf if above else -np.inf)
        best = masked.min() if above else masked.max()
        # distinct candidates may share a double: take the exactly smallest of them (its tail is the
        # largest, so a snapped score's p-value is never too small)
        lines, columns = np.nonzero(masked == best)
        return min(self.key_of(int(self.k[line]), int(t[line, column])) for line, column in zip(lines, columns))


def best_mcc_null(P: int, N: int) -> LatticeNull:
    """Exact null of best MCC = max_k (TP_k N - FP_k P) / sqrt(P N k (P + N - k)) (0 at k = 0, P + N).

    Pr(best MCC >= x) is one lattice programme with a per-diagonal boundary (see module); critical
    values by the bracketed search over the exactly ordered candidates.

    Examples
    --------
    >>> round(best_mcc_null(3, 2).tail_ge_score(1.0), 12)  # 1 of the 10 rankings is perfect
    0.1
    >>> best_mcc_null(20, 20).critical_value(0.001)  # 1/sqrt(3)
    0.5773502691896258
    """
    return LatticeNull(BestMccKeys(P, N))


#: CPU seconds per diagonal per programme of the numpy work between programmes (the boundary, the
#: candidate counts and probes, one line per diagonal), on the machine of ``benchmarks/bench_best_mcc_exact.py``.
SECONDS_PER_DIAGONAL = 2.5e-7
#: CPU seconds of listing the last <= 4,096 points of a bracket as exact fractions, once per critical value.
LISTING_SECONDS = 0.015


def best_mcc_cost(P: int, N: int) -> tuple[float, float]:
    """Estimated (single-core seconds, peak bytes) of one exact best-MCC critical value.

    The lattice programmes' estimate (:func:`~tablegen.compute.exact.lattice.lattice_cost`, with
    :data:`BestMccKeys.programmes` programmes) plus the numpy work on the P + N diagonals per programme
    (:data:`SECONDS_PER_DIAGONAL`) and the listing of the last candidates; bytes: the programme's and
    about 256 bytes a diagonal of the search's arrays.  Fitted to ``benchmarks/bench_best_mcc_exact.py``
    (figures in ``benchmarks/README.md``): above every measured figure there, by 1.3-17x.

    Examples
    --------
    >>> seconds, memory = best_mcc_cost(1000, 1000)
    >>> seconds < 1, memory < 1e7
    (True, True)
    """
    seconds, memory = lattice_cost(P, N, BestMccKeys)
    seconds += LISTING_SECONDS + BestMccKeys.programmes * SECONDS_PER_DIAGONAL * (P + N)
    return seconds, memory + 256.0 * (P + N)
