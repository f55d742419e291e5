"""Exact null of average precision (AP) under a random ranking, by enumerating every arrangement.

AP = (1/P) sum_{j=1..P} j / r_j, r_j the rank of the j-th positive: a rational number.  Where the
C(P + N, P) arrangements fit :data:`ENUMERATION_BUDGET`, every one is scored
(:func:`tablegen.compute.kernels.average_precision.enumerate_sums`, float64) and the values are
grouped into the null's support.

**The support, at a stated resolution.**  Distinct rationals can be closer together than float
error (for P + N of a few dozen, two values of AP may differ by 1e-17), and one rational computed
along two arrangements may come out an ulp apart.  So the support is defined as the exact values
grouped into clusters whose consecutive members are less than :data:`VALUE_RESOLUTION` (1e-11) apart,
100 times finer than the 1e-9 within which a user's score counts as a value
(:data:`~tablegen.compute.exact.nulls.SNAP_TOLERANCE`).  One support point per cluster: its value is
the cluster's smallest member, its upper tail Pr(AP >= that member) (an integer count of arrangements
over C(P + N, P), one rounding).  A critical value can therefore be low by at most a cluster's span
(below 1e-11 times its members; clusters have one member wherever the values are 1e-11 apart, as
they are for every P + N <= 16, tested), and a score inside a cluster gets the cluster's whole tail
(the conservative p-value).

**What float error can do.**  Each computed sum is P correctly rounded quotients summed in order, so
|AP_float - AP| <= (2 P + 1) 2**-53 (AP <= 1).  Enumeration is used only where this is at most
VALUE_RESOLUTION / 8 (P <= 5,600; the budget allows no larger P with N > 1 anyway).  Then values
of one cluster stay within one computed cluster, and two clusters more than 1.25 VALUE_RESOLUTION
apart stay apart; only exact gaps within VALUE_RESOLUTION / 4 of the resolution may fall either
way, which moves a support point by less than 1.25e-11.  Checked against exact rationals (integer
numerators over lcm(1..P+N)) for every cell with P + N <= 16 in
``tests/compute/test_average_precision_exact.py``.

Cost: the enumeration visits each arrangement once (the changed suffix only) and sorts the values:
:data:`SECONDS_PER_ARRANGEMENT` each, 8 bytes each, three arrays at the peak.
"""

from __future__ import annotations

import math

import numpy as np

from tablegen.compute.exact.nulls import TabulatedNull
from tablegen.errors import TablegenInputError

#: Most arrangements C(P + N, P) enumerated for one exact null (~0.3 s, 48 MB at the peak).
ENUMERATION_BUDGET = 2_000_000
#: Exact values of AP closer than this are one support point (module docstring).
VALUE_RESOLUTION = 1e-11
#: Single-core seconds per arrangement (enumeration and sort; benchmarks/bench_ap_bracket.py).
SECONDS_PER_ARRANGEMENT = 1.5e-7
#: Fixed seconds of one exact AP null (numpy calls, a loaded kernel).
SETUP_SECONDS = 2e-3
_UNIT_ROUNDOFF = 2.0 ** -53


def arrangements(P: int, N: int) -> int:
    """C(P + N, P): the equally likely arrangements of P positives among P + N ranks."""
    return math.comb(P + N, P)


def enumerable(P: int, N: int) -> bool:
    """Whether :func:`average_precision_null` enumerates (P, N): within the budget and the float bound.

    Examples
    --------
    >>> enumerable(3, 5), enumerable(20, 20)
    (True, False)
    """
    # C(P + N, P) >= 2**min(P, N): a cheap refusal before the exact (big-integer) count
    return (P >= 1 and N >= 0 and min(P, N) <= ENUMERATION_BUDGET.bit_length()
            and arrangements(P, N) <= ENUMERATION_BUDGET and 8 * (2 * P + 1) * _UNIT_ROUNDOFF <= VALUE_RESOLUTION)


def average_precision_cost(P: int, N: int) -> tuple[float, float]:
    """Estimated (single-core seconds, peak bytes) of one exact AP answer; (inf, inf) beyond the budget.

    Examples
    --------
    >>> seconds, memory = average_precision_cost(3, 5)
    >>> seconds < 0.01, average_precision_cost(100, 300)
    (True, (inf, inf))
    """
    if not enumerable(P, N):
        return math.inf, math.inf
    count = arrangements(P, N)
    return SETUP_SECONDS + SECONDS_PER_ARRANGEMENT * count, 24.0 * count


def average_precision_null(P: int, N: int) -> TabulatedNull:
    """Exact null of AP at (P, N) by enumeration, its support grouped at :data:`VALUE_RESOLUTION`.

    Raises
    ------
    TablegenInputError
        If C(P + N, P) exceeds :data:`ENUMERATION_BUDGET` (see :func:`enumerable`).

    Examples
    --------
    >>> null = average_precision_null(2, 1)  # ranks of the positives: (1, 2), (1, 3), (2, 3)
    >>> [round(float(v), 4) for v in null.values], null.tail_ge.tolist()
    ([0.5833, 0.8333, 1.0], [1.0, 0.6666666666666666, 0.3333333333333333])
    """
    if not enumerable(P, N):
        raise TablegenInputError(
            f"P, N: exact average precision enumerates C(P + N, P) = {arrangements(P, N):,} arrangements, "
            f"over the budget of {ENUMERATION_BUDGET:,}")
    from tablegen.compute.kernels.average_precision import enumerate_sums

    total = arrangements(P, N)
    sums = np.empty(total)
    enumerate_sums(P, N, sums)
    return grouped_support(np.sort(sums / P))


def grouped_support(values: np.ndarray) -> TabulatedNull:
    """The null of equally likely ascending ``values``, grouped at :data:`VALUE_RESOLUTION`.

    A new support point starts wherever the next value is at least the resolution above the previous
    one; its value is its first (smallest) member, its tail the share of values from that member up
    (an integer count over ``len(values)``, one rounding).

    Examples
    --------
    >>> null = grouped_support(np.array([0.25, 0.5, 0.5 + 4e-12, 1.0]))
    >>> null.values.tolist(), null.tail_ge.tolist()
    ([0.25, 0.5, 1.0], [1.0, 0.75, 0.25])
    """
    total = len(values)
    starts = np.flatnonzero(np.concatenate([[True], np.diff(values) >= VALUE_RESOLUTION]))
    return TabulatedNull(values=values[starts], tail_ge=(total - starts) / total)



# -- the bracket: rounded lattice programmes -----------------------------------------------------------
#: Grid of the coarse programmes (steps per unit of S = P AP) that locate a critical value.
COARSE_GRID = 100
#: Grid of the fine programmes: a bracket is about 1 / FINE_GRID wide in AP (module docstring).
FINE_GRID = 10_000
#: Live-window ends with less mass than this are dropped; the dropped mass widens the bracket.
TRIM_MASS = 1e-20
#: Relative float error allowed for the programmes' probability sums (non-negative terms).
_SUM_RTOL = 1e-12


def _programme(P: int, N: int, grid: int, kind: int, window=None):
    """(hist, first, above, lost) of the programme rounding each increment ``kind`` on ``grid``.

    ``window`` = (Ya, Yb): retire mass that cannot reach Ya or surely ends >= Yb; then
    Pr(B >= y) = above + hist[y - first:].sum() for y in [Ya, Yb].
    """
    from tablegen.compute.kernels.average_precision import rest_bounds, rounded_programme

    high_rest, low_rest = rest_bounds(P, N, grid, 1, kind)
    Ya, Yb = window if window is not None else (0, 0)
    counters = np.zeros(2, dtype=np.int64)
    hist, first, _, above, lost = rounded_programme(P, N, grid, 1, kind, Ya, Yb, window is not None, TRIM_MASS,
                                                    1024, high_rest, low_rest, counters)
    return hist, int(first), float(above), float(lost)


def _tail_at(hist, first: int, above: float, y: int) -> float:
    """Pr(B >= y) from a programme's output (y within its window, or any y without one)."""
    return above + float(np.sum(hist[max(y - first, 0):]))


def _quantile(hist, first: int, above: float, tail: float) -> int:
    """Smallest grid value b with Pr(B >= b + 1) <= tail (the critical value's rule on B)."""
    tails = above + np.cumsum(hist[::-1])[::-1]  # tails[i] = Pr(B >= first + i)
    after = np.concatenate([tails[1:], [above]])
    index = np.flatnonzero(after <= tail)
    return first + int(index[0]) if index.size else first + len(hist) - 1


class BracketedAveragePrecisionNull:
    """Rigorous bounds on AP's null law at any (P, N), from programmes that round each increment down / up.

    Every increment (j + 1)/(r + 1) of S = P AP rounded down to a multiple of 1/grid gives S_low <= S
    on every ranking, rounded up S_up >= S; so Pr(S_low >= x) <= Pr(S >= x) <= Pr(S_up >= x) and the
    quantiles of S lie between those of S_low and S_up.  Each programme is exact integer grid
    arithmetic with float64 probabilities; dropped window ends (:data:`TRIM_MASS`) are added to the
    upper ends.  A critical value: coarse programmes (:data:`COARSE_GRID`) locate it, fine ones
    (:data:`FINE_GRID`) track only the mass that can still end in the coarse bracket (the rest is
    retired exactly).  A tail: one fine programme each way, retiring all mass but at the threshold (or, asked
    with ``within``, the coarse programmes' bracket where it is at most that wide).

    **Kept programmes.**  The two coarse programmes (the whole law on the coarse grid, ~1% of a fine
    programme's cost) are run once per object and kept; so is every pair of fine programmes, and a pair
    answers every later question whose window lies inside its own (a programme with window [Ya, Yb] gives
    Pr(B >= y) for every y in it).  :meth:`prepare` runs one pair over a window chosen in advance: the max-T
    test's critical value asks for ~30 critical values within a few thousandths of each other, which one
    pair over their span answers at the cost of ~1.2 narrow pairs (:meth:`coarse_view` finds the span
    on the coarse grid first).

    Examples
    --------
    >>> null = BracketedAveragePrecisionNull(100, 300)  # builds nothing: each answer runs its programmes
    >>> null.fine_grid, 1 / null.fine_grid  # grid steps per unit of S; the bracket's width in AP, about
    (10000, 0.0001)

    ``null.critical_bracket(0.001)`` is then (0.35093, 0.351019) in 3.5 s (checked against enumeration at
    small cells and against the bundled Monte Carlo table in ``tests/compute/test_average_precision_exact.py``).
    """

    def __init__(self, P: int, N: int, fine_grid: int = FINE_GRID, coarse_grid: int = COARSE_GRID):
        if fine_grid % coarse_grid:
            raise TablegenInputError(f"fine_grid must be a multiple of coarse_grid, got {fine_grid}, {coarse_grid}")
        self.P, self.N, self.fine_grid, self.coarse_grid = P, N, fine_grid, coarse_grid
        self._coarse = None  # (floor, ceiling): the whole law on the coarse grid, once asked
        self._fine = []  # [(Ya, Yb, floor, ceiling)]: fine pairs, each answering any y in [Ya, Yb]
        self.programmes = 0  # programmes run (coarse and fine), for the tests and the benchmarks

    def critical_value(self, tail: float) -> float:
        """Refused: a bracketed null has bounds, not an exact value (:meth:`critical_bracket`)."""
        raise TablegenInputError(f"P, N: average precision at P = {self.P}, N = {self.N} has no exact critical "
                                 "value (beyond enumeration); null_critical_bracket gives rigorous bounds")

    def tail_ge_score(self, score: float) -> float:
        """Refused: a bracketed null has bounds, not an exact tail (:meth:`tail_ge_bracket`)."""
        raise TablegenInputError(f"P, N: average precision at P = {self.P}, N = {self.N} has no exact tail "
                                 "probability (beyond enumeration); null_tail_ge_bracket gives rigorous bounds")

    def critical_bracket(self, tail: float) -> tuple[float, float]:
        """(low, high) around m* = the smallest AP with Pr(AP > m*) <= tail."""
        window = self._critical_window(tail)
        floor, ceiling = self._fine_pair(*window)
        low_tail, high_tail = tail * (1.0 + _SUM_RTOL), tail * (1.0 - _SUM_RTOL)
        hist, first, above, _ = floor
        f_low = max(_quantile(hist, first, above, low_tail), window[0])
        hist, first, above, lost = ceiling
        f_high = min(_quantile(hist, first, above, high_tail - lost), window[1] - 1)
        return f_low / (self.fine_grid * self.P), f_high / (self.fine_grid * self.P)

    def tail_ge_bracket(self, score: float, within: float | None = None) -> tuple[float, float]:
        """(low, high) around Pr(AP >= score - SNAP_TOLERANCE) (the score snapped as for an exact null); with
        ``within``, the coarse programmes' bracket where it is at most that wide (no fine programme)."""
        if within is not None:
            coarse = self._coarse_tail(score)
            if coarse[1] - coarse[0] <= within:
                return coarse
        y_low, y_high = self._thresholds(score, self.fine_grid)
        floor, ceiling = self._fine_pair(y_high, y_low)
        return _tail_bracket(floor, ceiling, y_low, y_high)

    def prepare(self, window: tuple[int, int], progress=None) -> None:
        """Run (and keep) one pair of fine programmes over ``window`` = (Ya, Yb) in fine grid steps of S, unless
        a kept pair covers it: every later question inside it is answered without a programme.  ``progress(done,
        2)`` is told as each programme ends (each can take minutes at a few thousand items)."""
        self._fine_pair(*window, progress=progress)

    def coarse_view(self) -> CoarseAveragePrecisionAnswers:
        """The same questions answered from the coarse programmes alone (brackets around the fine ones), noting
        the fine window each fine answer would need (:class:`CoarseAveragePrecisionAnswers`)."""
        return CoarseAveragePrecisionAnswers(self)

    # -- the programmes, run once and kept --------------------------------------------------------------
    def _coarse_pair(self):
        from tablegen.compute.kernels.average_precision import CEILING, FLOOR

        if self._coarse is None:
            self._coarse = tuple(_programme(self.P, self.N, self.coarse_grid, kind) for kind in (FLOOR, CEILING))
            self.programmes += 2
        return self._coarse

    def _fine_pair(self, Ya: int, Yb: int, progress=None):
        from tablegen.compute.kernels.average_precision import CEILING, FLOOR

        for ya, yb, floor, ceiling in self._fine:
            if ya <= Ya and Yb <= yb:
                return floor, ceiling
        pair = []
        for kind in (FLOOR, CEILING):
            pair.append(_programme(self.P, self.N, self.fine_grid, kind, (Ya, Yb)))
            self.programmes += 1
            if progress is not None:
                progress(len(pair), 2)
        floor, ceiling = pair
        self._fine.append((Ya, Yb, floor, ceiling))
        return floor, ceiling

    def _critical_window(self, tail: float) -> tuple[int, int]:
        """The fine window (Ya, Yb) the coarse programmes place m*(``tail``) in (fine rounding lies between the
        coarse ones, path by path)."""
        low_tail, high_tail = tail * (1.0 + _SUM_RTOL), tail * (1.0 - _SUM_RTOL)
        floor, ceiling = self._coarse_pair()
        b_low = _quantile(floor[0], floor[1], floor[2], low_tail)
        b_high = _quantile(ceiling[0], ceiling[1], ceiling[2], high_tail - ceiling[3])
        scale = self.fine_grid // self.coarse_grid
        return b_low * scale, (b_high + 1) * scale + 1

    def _thresholds(self, score: float, grid: int) -> tuple[int, int]:
        """(y_low, y_high) on ``grid``: {B_floor >= y_low} lies within {S >= x} and {S >= x} within
        {B_ceil >= y_high}, x the snapped score in grid steps of S."""
        from tablegen.compute.exact.nulls import SNAP_TOLERANCE

        x = (score - SNAP_TOLERANCE) * self.P * grid
        return math.floor(x * (1.0 + 4 * _UNIT_ROUNDOFF)) + 1, math.floor(x * (1.0 - 4 * _UNIT_ROUNDOFF))

    def _coarse_tail(self, score: float) -> tuple[float, float]:
        """:meth:`tail_ge_bracket` from the coarse programmes (a bracket around the fine one)."""
        y_low, y_high = self._thresholds(score, self.coarse_grid)
        return _tail_bracket(*self._coarse_pair(), y_low, y_high)


class CoarseAveragePrecisionAnswers:
    """A :class:`BracketedAveragePrecisionNull`'s questions answered from its coarse programmes alone, each
    bracket containing the fine one, with the fine window each fine answer needs noted in ``windows`` (none for
    a tail the coarse bracket settles): a dry run of a search shows where its fine questions will fall.

    Examples
    --------
    >>> null = BracketedAveragePrecisionNull(40, 80)
    >>> view = null.coarse_view()
    >>> low, high = view.critical_bracket(0.01)
    >>> fine_low, fine_high = null.critical_bracket(0.01)
    >>> low <= fine_low <= fine_high <= high, len(view.windows), view.span() == view.windows[0]
    (True, 1, True)
    """

    def __init__(self, null: BracketedAveragePrecisionNull):
        self.null = null
        self.windows: list[tuple[int, int]] = []

    def critical_bracket(self, tail: float) -> tuple[float, float]:
        """The coarse programmes' bracket around m*(``tail``)."""
        null = self.null
        window = null._critical_window(tail)
        self.windows.append(window)
        return window[0] / (null.fine_grid * null.P), (window[1] - 1) / (null.fine_grid * null.P)  # the fine clamp

    def tail_ge_bracket(self, score: float, within: float | None = None) -> tuple[float, float]:
        """The coarse programmes' bracket around Pr(AP >= score); the fine window noted unless ``within`` is given
        and the bracket is at most that wide (the null answers it from the coarse programmes then)."""
        coarse = self.null._coarse_tail(score)
        if within is None or coarse[1] - coarse[0] > within:
            y_low, y_high = self.null._thresholds(score, self.null.fine_grid)
            self.windows.append((y_high, y_low))
        return coarse

    def span(self) -> tuple[int, int] | None:
        """The smallest fine window holding every window noted (None if none was)."""
        if not self.windows:
            return None
        return min(w[0] for w in self.windows), max(w[1] for w in self.windows)


def _tail_bracket(floor, ceiling, y_low: int, y_high: int) -> tuple[float, float]:
    """(low, high) around Pr(S >= x) from a floor and a ceiling programme holding y_low and y_high."""
    hist, first, above, _ = floor
    low = _tail_at(hist, first, above, y_low) * (1.0 - _SUM_RTOL)
    hist, first, above, lost = ceiling
    high = (_tail_at(hist, first, above, y_high) + lost) * (1.0 + _SUM_RTOL)
    return max(low, 0.0), min(high, 1.0)


#: Single-core seconds per (P + N) P^1.5 of a bracketed critical value or tail (fitted at (100, 300) and
#: (300, 300); benchmarks/bench_ap_bracket.py).
SECONDS_PER_BRACKET_UNIT = 9e-6


def bracket_cost(P: int, N: int) -> tuple[float, float]:
    """Estimated (single-core seconds, peak bytes) of one bracketed answer at (P, N) (fine programmes).

    Examples
    --------
    >>> seconds, memory = bracket_cost(100, 300)
    >>> 1 < seconds < 10
    True
    """
    seconds = SETUP_SECONDS + SECONDS_PER_BRACKET_UNIT * (P + N) * P ** 1.5
    return seconds, 8.0 * (P + 1) * 4 * FINE_GRID * (P ** 0.5 + 1)


#: A search's questions of a bracketed law (:meth:`BracketedAveragePrecisionNull.prepare`) in answers of
#: :func:`bracket_cost`: the coarse pair and one fine pair over the search's span, at most the whole law (whose two
#: fine programmes cost ~3.6 narrow ones: 38 s against 10.7 s an answer at P, N = 200, 500).
SEARCH_ANSWERS = 2.0


def average_precision_search_seconds(P: int, N: int) -> float:
    """Estimated seconds of a search's questions (the max-T critical value with competitors not given, and the
    models' tails): the enumeration once where it fits, else :data:`SEARCH_ANSWERS` bracketed answers.

    Examples
    --------
    >>> average_precision_search_seconds(3, 5) < 0.01, average_precision_search_seconds(100, 300) > 2
    (True, True)
    """
    if enumerable(P, N):
        return average_precision_cost(P, N)[0]
    return SEARCH_ANSWERS * bracket_cost(P, N)[0]


def average_precision_exact_null(P: int, N: int):
    """AP's null for lookups: the enumerated one where it fits the budget, else the bracketed one.

    Examples
    --------
    >>> type(average_precision_exact_null(3, 5)).__name__, type(average_precision_exact_null(100, 300)).__name__
    ('TabulatedNull', 'BracketedAveragePrecisionNull')
    """
    return average_precision_null(P, N) if enumerable(P, N) else BracketedAveragePrecisionNull(P, N)


def average_precision_exact_cost(P: int, N: int) -> tuple[float, float]:
    """Estimated (seconds, bytes) of one answer from :func:`average_precision_exact_null`."""
    return average_precision_cost(P, N) if enumerable(P, N) else bracket_cost(P, N)
