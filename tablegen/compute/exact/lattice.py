"""Exact nulls of best F1 and best balanced accuracy by the half-plane lattice programme.

"max_k metric >= value" is the event that the ranking's lattice path touches a half-plane
(:mod:`tablegen.compute.kernels.lattice`).  The *candidates* are the metric's values at the lattice points
(t, f), a finite superset of the attainable maxima; both metrics order them exactly (integer keys
g = t N - f P for balanced accuracy, fractions 2t/(P + t + f) for F1), and within any interval the
candidates of one row t form an integer range of f, so they are counted and listed in O(P) integer
arithmetic without building all P (N + 1) of them.

The search is guided by a Brownian-bridge model of the maximum: the walk a TP_k - b FP_k runs
from 0 to a P - b N with step variance (a + b)^2 P N / (P + N)^2, so Pr(max >= c) is about
exp(-2 (c + s)(c + s - (a P - b N)) / ((a + b)^2 P N / (P + N))), with s = 0.5826 step standard
deviations (Siegmund's overshoot of a discrete walk).  The model only places probes; every verdict
comes from a programme.  F1 fractions are ordered by their doubles where those separate them
(2P (2P + N) < 2**51, i.e. any cell with P N <= 1e8 and P <= 1e7), else exactly.

Critical values and tail probabilities: :mod:`tablegen.compute.exact.lattice_search` (a bracketed search
of a few programmes; trimmed programmes with a rigorous bound on what trimming leaves out).
Cost: :func:`lattice_cost`.  The candidate arithmetic runs along the shorter side (rows t when
P <= N, else columns f).  Very thin cells pay per diagonal: about 2-4 s CPU at (10, 10**7).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from tablegen.compute.exact.lattice_search import critical_key, tail_at_key
from tablegen.compute.exact.nulls import LatticeNull
from tablegen.compute.kernels.lattice import edges_above, entries_between, half_plane_sweep

#: Read bounds off this many highest entry or edge points of a programme.
TOP_POINTS = 4096
#: Expected overshoot of a Gaussian random walk's maximum over the continuous one (Siegmund).
_OVERSHOOT = 0.5826


class _Family:
    """Candidates of one lattice metric at (P, N): exact keys, their rows, their programmes.

    ``record_limit``: keep per-diagonal entry and edge masses (24 bytes a diagonal, ~70 with the
    scans) up to this P + N.  ``programmes``: programmes per critical value, for :func:`lattice_cost`.
    """

    record_limit = 0
    programmes = 10

    def __init__(self, P: int, N: int):
        self.P, self.N = int(P), int(N)
        # candidates are walked along the shorter side: rows t (f free) or columns f (t free)
        self.by_rows = self.P - self.first_row <= self.N
        self.lines = (np.arange(self.first_row, self.P + 1, dtype=np.int64) if self.by_rows
                      else np.arange(0, self.N + 1, dtype=np.int64))
        self.free_bounds = (0, self.N) if self.by_rows else (self.first_row, self.P)

    # -- model ----------------------------------------------------------------------------------
    def model_phi(self, x: float) -> float:
        """sqrt(-log Pr(X >= x)) under the Brownian-bridge approximation of the walk a TP - b FP."""
        a, b, c = self.real_half_plane(x)
        P, N = self.P, self.N
        total = P + N
        end = a * P - b * N
        shift = _OVERSHOOT * (a + b) * math.sqrt(P * N) / total
        variance = (a + b) ** 2 * P * N / total
        level = c + shift
        if level <= max(0.0, end):
            return 0.0
        return math.sqrt(2.0 * level * (level - end) / variance)

    # -- programmes ------------------------------------------------------------------------------
    def sweep(self, key, floor: float) -> tuple[float, float, object, object]:
        """(hit, dropped, next, record) of the programme for Pr(X >= key).

        next: the lowest candidate where a path first entered H (Pr(X >= next) = Pr(X >= key)),
        None if none; record: the per-diagonal entry and edge masses for :meth:`atom_bound` and
        :meth:`edge_bound` (None where not kept).
        """
        a, b, c = self.half_plane(key)
        size = self.P + self.N + 1 if self.P + self.N <= self.record_limit and self.ordered else 1
        entry, edge, edge_t = np.zeros(size), np.zeros(size), np.full(size, -1, dtype=np.int64)
        hit, dropped, t, f = half_plane_sweep(self.P, self.N, a, b, c, floor, self.ranking, entry, edge, edge_t)
        record = (a, b, c, entry, edge, edge_t) if size > 1 else None
        return hit, dropped, (self.key_of(t, f) if t >= 0 else None), record

    def atom_bound(self, record, target: float, hi):
        """The largest entry candidate v of a programme's ``record`` with the entry mass at points
        worth >= v above ``target`` (so Pr(X >= v) > target); None if none or not kept."""
        if record is None:
            return None
        a, b, c, entry, _, _ = record
        above, d = entries_between(entry, a, b, c, self.ranking, *self.fraction_of(hi))
        if above > target:
            return None
        t = (c + b * d + a + b - 1) // (a + b)  # the entry point T_d of each diagonal
        rank = _top(self.order(t, d - t))
        reached = np.nonzero(above + np.cumsum(entry[d[rank]]) > target)[0]
        if len(reached) == 0:
            return None
        best = rank[reached[0]]
        return self.key_of(int(t[best]), int(d[best] - t[best]))

    def edge_bound(self, record, budget: float, lo, key):
        """The smallest candidate x in (lo, key] such that the edge mass in a programme's ``record``
        at points worth >= x is <= ``budget``, and no other live point is worth >= x (so
        Pr(X >= x) <= Pr(X >= key) + dropped + budget); None if none or not kept."""
        if record is None or budget <= 0:
            return None
        _, _, _, _, edge, edge_t = record
        d, floor_t, floor_f = edges_above(edge_t, self.ranking, self.first_row, *self.fraction_of(lo))
        floor_key = self.key_of(floor_t, floor_f) if floor_t >= 0 else None
        t = edge_t[d]
        order = self.order(t, d - t)
        if floor_key is not None and floor_key > lo:  # x must stay above every second point too
            keep = order > self.order_of(floor_key)
            d, t, order = d[keep], t[keep], order[keep]
        rank = _top(order)
        covered = int(np.searchsorted(np.cumsum(edge[d[rank]]), budget, side="right"))
        if covered < len(rank):
            point = rank[covered]
            bound = self.key_of(int(t[point]), int(d[point] - t[point]))
        elif len(rank) < len(order):
            return None  # the budget covers the TOP_POINTS highest edges: not worth going further
        else:
            bound = floor_key if floor_key is not None and floor_key > lo else lo
        step = self.successor(bound)
        return step if step is not None and step <= key else None

    def tail(self, key) -> float:
        """Pr(X >= key) (:func:`tail_at_key`)."""
        return tail_at_key(self, key)

    def critical(self, target: float, known: list | None = None):
        """(m*, programmes run) for the tail ``target`` (:func:`critical_key`; ``known``: what earlier searches
        showed)."""
        return critical_key(self, target, known)

    # -- candidates ------------------------------------------------------------------------------
    def _points(self, lines, free):
        """(t, f) of the points at positions ``free`` along ``lines``."""
        return (lines, free) if self.by_rows else (free, lines)

    def _ranges(self, low, high) -> tuple[np.ndarray, np.ndarray]:
        """Per line, the range [first, last] of the free coordinate whose candidates lie strictly
        between keys low and high (value falls with f along a row, rises with t along a column)."""
        first, last = self.f_range(low, high) if self.by_rows else self.t_range(low, high)
        return np.maximum(first, self.free_bounds[0]), np.minimum(last, self.free_bounds[1])

    def count_between(self, low, high) -> int:
        """Number of lattice points whose candidate lies strictly between low and high (high None: above)."""
        first, last = self._ranges(low, self.beyond if high is None else high)
        return int(np.maximum(last - first + 1, 0).sum())

    def keys_between(self, low, high) -> Listed:
        """Distinct candidates strictly between low and high, ascending."""
        first, last = self._ranges(low, self.beyond if high is None else high)
        lengths = np.maximum(last - first + 1, 0)
        offsets = np.arange(lengths.sum()) - np.repeat(np.cumsum(lengths) - lengths, lengths)
        return self.sorted_keys(*self._points(np.repeat(self.lines, lengths), np.repeat(first, lengths) + offsets))

    def successor(self, key):
        """The smallest candidate above ``key`` (None if none), exactly."""
        first, last = self._ranges(key, self.beyond)
        lines = np.nonzero(last >= first)[0]
        if len(lines) == 0:
            return None
        free = (last if self.by_rows else first)[lines]  # the lowest value above key on each line
        t, f = self._points(self.lines[lines], free)
        best = int(np.argmin(self.value_array(t, f)))
        return self.key_of(int(t[best]), int(f[best]))

    def ceil_key(self, x: float):
        """Smallest candidate with value >= x (None if none), judged on the candidates' doubles."""
        return self._nearest(x, above=True)

    def floor_key(self, x: float):
        """Largest candidate with value <= x (None if none), judged on the candidates' doubles."""
        return self._nearest(x, above=False)

    def _nearest(self, x: float, above: bool):
        # per line, the free coordinate where the value crosses x is next to free_real(x), up to
        # the rounding of free_real; look at its neighbours and compare the candidates' doubles
        crossing = self.f_real(x) if self.by_rows else self.t_real(x)
        free = np.clip(np.floor(crossing)[:, None] + np.array([-1.0, 0.0, 1.0, 2.0])[None, :], *self.free_bounds)
        t, f = self._points(self.lines[:, None], free)
        values = self.value_array(t, f)
        fits = values >= x if above else values <= x
        if not fits.any():
            return None
        masked = np.where(fits, values, np.inf if above else -np.inf)
        line, column = np.unravel_index(np.argmin(masked) if above else np.argmax(masked), masked.shape)
        t, f = self._points(self.lines[line], free[line, column])
        return self.key_of(int(t), int(f))


class BalancedAccuracyKeys(_Family):
    """Keys g = t N - f P >= 0; best balanced accuracy = (G + P N)/(2 P N), G = max_k key."""

    first_row = 0
    # gains little from the records beyond 2e6 diagonals and pays their scans; 2-6 programmes
    record_limit = 2_000_000
    programmes = 6

    def __init__(self, P: int, N: int):
        super().__init__(P, N)
        self.min_key, self.max_key, self.beyond = 0, self.P * self.N, self.P * self.N + 1
        self.ranking = np.array([self.N, -self.P, 0, 0, 0, 1], dtype=np.int64)  # t N - f P

    def value(self, key) -> float:
        return (key + self.P * self.N) / (2 * self.P * self.N)

    def half_plane(self, key):
        return self.N, self.P, int(key)

    def real_half_plane(self, x):
        return float(self.N), float(self.P), (2.0 * x - 1.0) * self.P * self.N

    def f_real(self, x):
        return (self.lines * self.N - (2.0 * x - 1.0) * self.P * self.N) / self.P

    def t_real(self, x):
        return ((2.0 * x - 1.0) * self.P * self.N + self.lines * self.P) / self.N

    def value_array(self, rows, f):
        return (rows * self.N - f * self.P + self.P * self.N) / (2.0 * self.P * self.N)

    def key_of(self, t: int, f: int):
        return t * self.N - f * self.P

    ordered = True  # integer keys order exactly

    def order(self, t, f):
        return t * self.N - f * self.P

    def order_of(self, key):
        return key

    def fraction_of(self, key):
        """(num, den) of a key in the units of ``ranking``; (0, 0) for None (no bound)."""
        return (0, 0) if key is None else (int(key), 1)

    def f_range(self, low, high):
        # low < t N - f P < high  <=>  (t N - high)/P < f < (t N - low)/P; key >= 0 as low >= -1
        low = max(int(low), -1)
        top = self.lines * self.N
        return (top - int(high)) // self.P + 1, (top - low - 1) // self.P

    def t_range(self, low, high):
        # low < t N - f P < high  <=>  (low + f P)/N < t < (high + f P)/N
        low = max(int(low), -1)
        base = self.lines * self.P
        return (low + base) // self.N + 1, (int(high) + base - 1) // self.N

    def sorted_keys(self, rows, f) -> Listed:
        keys = np.unique(rows * self.N - f * self.P)
        keys = keys[keys >= 0]
        return Listed((keys + self.P * self.N) / (2 * self.P * self.N), keys, int)

    def all_keys(self) -> Listed:
        t = np.repeat(np.arange(self.P + 1, dtype=np.int64), self.N + 1)
        return self.sorted_keys(t, np.tile(np.arange(self.N + 1, dtype=np.int64), self.P + 1))


def _top(order: np.ndarray) -> np.ndarray:
    """Indices of the TOP_POINTS largest entries of ``order``, largest first."""
    if len(order) > TOP_POINTS:
        chosen = np.argpartition(order, len(order) - TOP_POINTS)[-TOP_POINTS:]
        return chosen[np.argsort(order[chosen], kind="stable")[::-1]]
    return np.argsort(order, kind="stable")[::-1]


def _fraction(pair) -> Fraction:
    return Fraction(int(pair[0]), int(pair[1]))


class BestF1Keys(_Family):
    """Keys 2t/(P + t + f) as exact fractions, t >= 1 (F1 at k = 0 is 0, below every maximum)."""

    first_row = 1
    # needs the records to find its atoms (at (30, 3e6): 2 programmes with, 17 without); 2-14 programmes
    record_limit = 12_000_000
    programmes = 10

    def __init__(self, P: int, N: int):
        super().__init__(P, N)
        self.min_key = self.key_of(1, self.N)
        self.max_key, self.beyond = Fraction(1), Fraction(2)
        # distinct fractions 2t/(P+t+f) differ by >= 1/(2P (2P+N)) relative, more than an ulp if < 2**-51
        self.doubles_separate = 2 * self.P * (2 * self.P + self.N) < 2**51
        self.ranking = np.array([2, 0, 0, 1, 1, self.P], dtype=np.int64)  # 2t / (t + f + P)

    def key_of(self, t: int, f: int):
        return Fraction(2 * t, self.P + t + f)

    @property
    def ordered(self) -> bool:
        return self.doubles_separate  # doubles order the fractions exactly

    def order(self, t, f):
        return 2.0 * t / (self.P + t + f)

    def order_of(self, key):
        return float(key)

    def fraction_of(self, key):
        """(num, den) of a key in the units of ``ranking``; (0, 0) for None (no bound)."""
        return (0, 0) if key is None else (key.numerator, key.denominator)

    def value(self, key) -> float:
        return float(key)  # correctly rounded, as 2t/(P+t+f) in float64 is

    def half_plane(self, key):
        num, den = key.numerator, key.denominator
        return 2 * den - num, num, num * self.P

    def real_half_plane(self, x):
        return 2.0 - x, x, x * self.P

    def f_real(self, x):
        return 2.0 * self.lines / max(x, 1e-300) - self.P - self.lines

    def t_real(self, x):
        return min(x, 2.0 - 1e-12) * (self.P + self.lines) / (2.0 - min(x, 2.0 - 1e-12))

    def value_array(self, rows, f):
        return 2.0 * rows / (self.P + rows + f)

    def f_range(self, low, high):
        # n1/d1 < 2t/(P+t+f)  <=>  n1 f < 2 t d1 - n1 (P + t);  2t/(P+t+f) < n2/d2  <=>  n2 f > 2 t d2 - n2 (P + t)
        n1, d1, n2, d2 = low.numerator, low.denominator, high.numerator, high.denominator
        t = self.lines
        last = (2 * t * d1 - n1 * (self.P + t) - 1) // n1 if n1 > 0 else np.full_like(t, self.N)
        return (2 * t * d2 - n2 * (self.P + t)) // n2 + 1, last

    def t_range(self, low, high):
        # n1/d1 < 2t/(P+t+f)  <=>  t (2 d1 - n1) > n1 (P + f);  2t/(P+t+f) < n2/d2  <=>  t (2 d2 - n2) < n2 (P + f)
        n1, d1, n2, d2 = low.numerator, low.denominator, high.numerator, high.denominator
        base = self.P + self.lines
        last = (n2 * base - 1) // (2 * d2 - n2) if 2 * d2 > n2 else np.full_like(base, self.P)
        return n1 * base // (2 * d1 - n1) + 1, last

    def sorted_keys(self, rows, f) -> Listed:
        num, den = 2 * rows, self.P + rows + f
        if self.doubles_separate:  # equal doubles <=> equal fractions
            values, first = np.unique(num / den, return_index=True)
            return Listed(values, np.stack([num[first], den[first]], axis=1), _fraction)
        common = np.gcd(num, den)
        pairs = np.unique(np.stack([num // common, den // common], axis=1), axis=0)
        exact = sorted(range(len(pairs)), key=lambda i: _fraction(pairs[i]))
        return Listed(pairs[exact, 0] / pairs[exact, 1], pairs[exact], _fraction)

    def all_keys(self) -> Listed:
        t = np.repeat(np.arange(1, self.P + 1, dtype=np.int64), self.N + 1)
        return self.sorted_keys(t, np.tile(np.arange(self.N + 1, dtype=np.int64), self.P))


class Listed:
    """Distinct candidates in ascending order: float ``values`` and the exact key at each index."""

    def __init__(self, values: np.ndarray, raw: np.ndarray, make):
        self.values, self._raw, self._make = values, raw, make

    def __len__(self) -> int:
        return len(self.values)

    def key(self, index: int):
        return self._make(self._raw[index])


# -- builders -------------------------------------------------------------------------------------

def best_f1_null(P: int, N: int) -> LatticeNull:
    """Exact null of best F1 = max_k 2 TP_k / (P + k).

    Candidates 2t/(P + t + f), t = 1..P, f = 0..N (F1 at k = 0 is 0, below the always-attained
    2P/(2P + N) at k = P + N).  Pr(F1 >= num/den) = Pr(touch 2 t den >= num (P + t + f)), i.e.
    a = 2 den - num, b = num, c = num P.

    Examples
    --------
    >>> best_f1_null(20, 20).critical_value(0.001)
    0.7916666666666666
    """
    return LatticeNull(BestF1Keys(P, N))


def best_balanced_accuracy_null(P: int, N: int) -> LatticeNull:
    """Exact null of best balanced accuracy = (G + P N)/(2 P N), G = max_k (TP_k N - FP_k P).

    Candidates: every g = t N - f P >= 0 (G >= 0 always, from k = 0).  Pr(G >= g) is the touch
    probability of t N - f P >= g, i.e. a = N, b = P, c = g.

    Examples
    --------
    >>> best_balanced_accuracy_null(20, 20).critical_value(0.001)
    0.775
    """
    return LatticeNull(BalancedAccuracyKeys(P, N))


# -- cost -----------------------------------------------------------------------------------------

#: CPU seconds per lattice point in a trimmed programme's band and per diagonal (with the search's
#: scans of the per-diagonal records); programmes per critical value (best F1: 2-7, and 12-14 at
#: (1000, 1e5), on the cells of ``benchmarks/bench_lattice.py``; balanced accuracy 2-6) and Python
#: overhead per answer.  Fitted to ``benchmarks/bench_lattice.py`` (CPU seconds) on one core of a
#: 2-core AVX-512 VM (2026-11-23; the point's cost lowered from 2.5e-10 with the tilted programme, 2026-11-29, on
#: its cells and (3e5, 7e5): best F1 4.2 s measured, 10.2 estimated); the estimates sit above every measured figure.
SECONDS_PER_POINT = 1.0e-10
SECONDS_PER_DIAGONAL = 6.0e-8
#: CPU seconds per line (row or column, the shorter side) per programme of the candidate arithmetic.
SECONDS_PER_LINE = 1.5e-7
SETUP_SECONDS = 3e-3
#: A trimmed band spans about this many standard deviations of TP on a diagonal (at its widest).
BAND_DEVIATIONS = 20.0


def lattice_cost(P: int, N: int, family: type = None) -> tuple[float, float]:
    """Estimated (single-core seconds, peak bytes) of one exact answer of a lattice metric.

    ``family`` is the metric's candidate family (:class:`BestF1Keys` by default, or
    :class:`BalancedAccuracyKeys`): its programmes per critical value and record limit.
    The seconds are for a critical value (a p-value runs one programme, rarely two or three).
    A programme walks P + N diagonals over a band of at most min(P, N) + 1 points and about
    :data:`BAND_DEVIATIONS` standard deviations of TP (sqrt(P N / (P + N)) at the widest), and the
    search between programmes does numpy arithmetic over the min(P, N) + 1 lines of candidates.
    Bytes: per-diagonal records (about 70 B a diagonal with the search's scans, up to the family's
    ``record_limit``), the programme's four rows of P + 3 doubles and the search's O(min(P, N)) arrays.

    Examples
    --------
    >>> seconds, memory = lattice_cost(10_000, 10_000)
    >>> seconds < 1, memory < 1e7
    (True, True)
    """
    family = BestF1Keys if family is None else family
    if np.ndim(P) or np.ndim(N):  # arrays of cells at once (a grid's plan), the same arithmetic elementwise
        P, N = np.asarray(P, dtype=float), np.asarray(N, dtype=float)
        diagonals, small = P + N, np.minimum(P, N)
        band = np.minimum(small + 1.0, BAND_DEVIATIONS * np.sqrt(P * N / np.maximum(diagonals, 1.0)) + 10.0)
        records = np.where(diagonals <= family.record_limit, 72.0 * diagonals, 0.0)
    else:
        diagonals, small = float(P) + float(N), min(P, N)
        band = min(small + 1.0, BAND_DEVIATIONS * math.sqrt(float(P) * float(N) / max(diagonals, 1.0)) + 10.0)
        records = 72.0 * diagonals if diagonals <= family.record_limit else 0.0
    programme = SECONDS_PER_POINT * diagonals * band + SECONDS_PER_DIAGONAL * diagonals + SECONDS_PER_LINE * small
    return SETUP_SECONDS + family.programmes * programme, records + 32.0 * (P + 3) + 128.0 * small + 1e6


#: Critical values' worth of programmes that a max-T test's search with competitors not given runs on one lattice
#: null (its critical value and the two ends of its interval, each search starting from the programmes the others
#: ran, one programme per level decided, the models' tails): 14 best-F1 programmes at P, N = 3e5, 7e5 (1.4 of
#: :func:`lattice_cost`'s 10 a critical value), rounded up.
SEARCH_ANSWERS = 3


def best_f1_search_seconds(P: int, N: int) -> float:
    """Estimated seconds of a max-T search's questions of best F1's null: :data:`SEARCH_ANSWERS` critical values.

    Examples
    --------
    >>> best_f1_search_seconds(1000, 1000) == SEARCH_ANSWERS * best_f1_cost(1000, 1000)[0]
    True
    """
    return SEARCH_ANSWERS * best_f1_cost(P, N)[0]


def best_balanced_accuracy_search_seconds(P: int, N: int) -> float:
    """Estimated seconds of a max-T search's questions of best balanced accuracy's null (as
    :func:`best_f1_search_seconds`)."""
    return SEARCH_ANSWERS * best_balanced_accuracy_cost(P, N)[0]


def best_f1_cost(P: int, N: int) -> tuple[float, float]:
    """:func:`lattice_cost` of best F1."""
    return lattice_cost(P, N, BestF1Keys)


def best_balanced_accuracy_cost(P: int, N: int) -> tuple[float, float]:
    """:func:`lattice_cost` of best balanced accuracy."""
    return lattice_cost(P, N, BalancedAccuracyKeys)
