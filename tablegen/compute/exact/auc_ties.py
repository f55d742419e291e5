"""Exact null of AUC given the observed tie groups: the permutation law of the labels, ties fixed.

Scores with ties form G groups of sizes m_1..m_G (ascending score, n = sum m_g = P + N).  Under the
null the P positive labels fall on a uniformly random P-subset of the n items, the groups staying
as observed (the conditional null StatXact and R's coin use for the Wilcoxon–Mann–Whitney test).
AUC counts a tied (positive, negative) pair as 1/2, so with k_g positives in group g

    2U = sum_g k_g (2 * negatives in groups below g + m_g - k_g),     AUC = U / (P N),

and Pr(k_1..k_G) = prod_g C(m_g, k_g) / C(n, P).  Two exact routes, picked by estimated cost:

- the **programme** over groups (:func:`tablegen.compute.kernels.tied_auc.tied_programme`),
  probability form, the whole law tabulated (:class:`TiedProgrammeNull`);
- the **tilted inversion** (:mod:`tablegen.compute.exact.auc_ties_fft`), tails on demand at any n
  (:class:`TiltedTiedAucNull`), each with its rigorous error bound.

Untied scores (every m_g = 1) get :func:`tablegen.compute.exact.auc.auc_null` itself, so their
answers are today's, bit for bit.  Explanation and error bounds: ``docs/explanation/exact-auc-ties.md``.
"""

from __future__ import annotations

import math
import operator

import numpy as np

from tablegen.compute.exact.auc import auc_exact_cost, auc_null
from tablegen.compute.exact.auc_fft import first_passing, snapped_u
from tablegen.compute.exact.auc_ties_fft import RELATIVE_ERROR_BOUND, TiedTilt, bernstein_radius
from tablegen.compute.exact.nulls import TIE_RTOL, TabulatedNull, critical_index, score_index, tail_from_pmf
from tablegen.errors import TablegenInputError

__all__ = ["RELATIVE_ERROR_BOUND", "TiedProgrammeNull", "TiltedTiedAucNull", "check_tie_groups",
           "programme_cost", "tie_groups", "tied_auc_cost", "tied_auc_null"]

#: Seconds per multiply-add of the programme on one core, states in cache and beyond 50 MB
#: (benchmarks/bench_auc_ties.py: 0.5-1 ns small, 1.3-2.9 ns at n = 1000, P = 500).
SECONDS_PER_PROGRAMME_MADD = 1.0e-9
SECONDS_PER_PROGRAMME_MADD_OUT_OF_CACHE = 3.0e-9
#: Seconds per factor evaluation of the inversion's band sums, and tilts per answer (a critical value
#: takes one or two, a p-value one).
SECONDS_PER_FACTOR = 5e-9
TILTS_PER_ANSWER = 2


def check_tie_groups(group_sizes, P) -> tuple[np.ndarray, int]:
    """Validated (sizes as int64, P): positive integer sizes, 1 <= P < n = sum of sizes.

    Examples
    --------
    >>> check_tie_groups([2, 1, 3], 2)
    (array([2, 1, 3]), 2)
    >>> check_tie_groups([2, 0], 1)
    Traceback (most recent call last):
    ...
    tablegen.errors.TablegenInputError: group_sizes must be positive integers, got [2, 0]
    """
    try:
        sizes = np.asarray(group_sizes)
    except (TypeError, ValueError):
        sizes = None
    if (sizes is None or sizes.ndim != 1 or sizes.size == 0 or sizes.dtype.kind not in "iuf"
            or not np.all(np.isfinite(sizes)) or np.any(sizes != np.round(sizes)) or np.any(sizes < 1)):
        raise TablegenInputError(f"group_sizes must be positive integers, got {_shown(group_sizes)}")
    sizes = sizes.astype(np.int64)
    n = int(sizes.sum())
    try:
        P = operator.index(P)
    except TypeError:
        if not (isinstance(P, float) and P.is_integer()):
            raise TablegenInputError(f"P must be an integer, got {P!r}") from None
        P = int(P)
    if not 1 <= P < n:
        raise TablegenInputError(f"P must satisfy 1 <= P < n = {n} (the sum of group_sizes), got {P}")
    return sizes, int(P)


def _shown(value) -> str:
    text = repr(list(value)) if isinstance(value, (list, tuple, np.ndarray)) else repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def tie_groups(groups) -> tuple[np.ndarray, int, int]:
    """(group sizes in ascending score order, P, observed 2U) from one classifier's threshold groups.

    ``groups`` is what :func:`tablegen.compute.metric_scorers.threshold_groups` returns for labels and
    scores (groups read from the highest score down, with ``group_pos`` and ``group_neg``); 2U is
    twice the half-credit Mann–Whitney U, an integer, so AUC = 2U / (2 P N) exactly.

    Examples
    --------
    >>> from types import SimpleNamespace          # threshold_groups([1, 0, 1, 0], [0.9, 0.5, 0.5, 0.1])
    >>> groups = SimpleNamespace(group_pos=np.array([1, 1, 0]), group_neg=np.array([0, 1, 1]))
    >>> sizes, P, two_u = tie_groups(groups)
    >>> sizes.tolist(), P, two_u, two_u / (2 * P * 2)        # U = 1 + 1 + 1/2 + 1 of 4 pairs
    ([1, 2, 1], 2, 7, 0.875)
    """
    pos = np.asarray(groups.group_pos, dtype=np.int64)[::-1]  # ascending score
    neg = np.asarray(groups.group_neg, dtype=np.int64)[::-1]
    below = np.concatenate([[0], np.cumsum(neg)[:-1]])
    two_u = int(np.sum(pos * (2 * below + neg)))
    return pos + neg, int(pos.sum()), two_u


class TiedProgrammeNull(TabulatedNull):
    """The tabulated tied-AUC null from the programme: ``values`` (attainable AUCs) and ``tail_ge``.

    Examples
    --------
    >>> null = tied_auc_null([2, 2], 2)      # k positives in the upper group (1, 4, 1 of 6 ways): AUC = k / 2
    >>> null.values.tolist(), [round(float(t), 12) for t in null.tail_ge]
    ([0.0, 0.5, 1.0], [1.0, 0.833333333333, 0.166666666667])
    >>> null.critical_value(0.2), null.critical_value(0.1), round(null.tail_ge_score(0.5), 12)
    (0.5, 1.0, 0.833333333333)
    """

    def critical_value(self, tail: float) -> float:
        """m* = the smallest value x with F(x) >= 1 - tail (:func:`critical_index`)."""
        return float(self.values[critical_index(self, tail)])

    def tail_ge_score(self, score: float) -> float:
        """Pr(AUC >= score), the score snapped to the support within the snap tolerance."""
        return self.tail_ge_at(score_index(self, score))


def programme_null(sizes: np.ndarray, P: int) -> TiedProgrammeNull:
    """The whole tied-AUC null by the programme (any size it fits in memory)."""
    from tablegen.compute.kernels.tied_auc import tied_programme

    N = int(sizes.sum()) - P
    lo, pmf = tied_programme(np.ascontiguousarray(sizes, dtype=np.int64), P, N)
    support = np.flatnonzero(pmf > 0)
    return TiedProgrammeNull(values=(lo + support) / (2.0 * P * N), tail_ge=tail_from_pmf(pmf[support]))


class TiltedTiedAucNull:
    """The tied-AUC null by the tilted inversion: critical values and tails on demand, any n.

    ``error_bound`` is the largest relative error bound of the tail probabilities its answers rest on
    (each <= :data:`RELATIVE_ERROR_BOUND`).

    Examples
    --------
    >>> null = TiltedTiedAucNull([2, 2], 2)    # as TiedProgrammeNull's example
    >>> round(null.tail_ge_score(0.5), 12), null.critical_value(0.2), null.critical_value(0.1)
    (0.833333333333, 0.5, 1.0)
    """

    def __init__(self, group_sizes, P: int):
        sizes, self.P = check_tie_groups(group_sizes, P)
        self.n = int(sizes.sum())
        self.N = self.n - self.P
        self.PN = self.P * self.N
        below = np.concatenate([[0], np.cumsum(sizes)[:-1]])
        shifts = 2 * below + sizes - self.n  # 2 midrank - (n + 1)
        self.low = TiedTilt(sizes, shifts, self.P)     # lower tails of T = 2U - P N
        self.high = TiedTilt(sizes, -shifts, self.P)   # lower tails of -T
        self.error_bound = 0.0

    def _record(self, value: float, bound: float) -> float:
        self.error_bound = max(self.error_bound, bound)
        return value

    def upper_tail(self, v: int) -> float:
        """Pr(T >= v), T = 2U - P N."""
        if v > self.low.t_max:
            return 0.0
        if v <= self.low.t_min:
            return 1.0
        if v >= 0:
            return self._record(*self.high.lower_tail(-v))
        value, bound = self.low.lower_tail(v - 1)
        return self._record(1.0 - value, bound * value / max(1.0 - value, 1e-300))

    def tail_ge_score(self, score: float) -> float:
        """Pr(AUC >= score), the score snapped to the nearest half-step u / (2 P N) within the snap tolerance."""
        return self.upper_tail(snapped_u(score, 2 * self.PN) - self.PN)

    def critical_value(self, tail: float) -> float:
        """m* = the smallest attainable AUC x with F(x) >= 1 - tail (the rule of :func:`critical_index`)."""
        return (self._critical_t(tail * (1.0 + TIE_RTOL)) + self.PN) / (2.0 * self.PN)

    def _critical_t(self, threshold: float) -> int:
        """The largest attainable v with Pr(T >= v) > threshold (T's minimum if none)."""
        if threshold >= 1.0 or self.low.t_min == self.low.t_max:
            return self.low.t_min
        if threshold < 0.5:  # Pr(T >= v) = Pr(-T <= -v): the first -v whose lower tail passes
            y, tilted = _first_passing_tail(self.high, threshold, inclusive=False)
            v = -y
        else:  # Pr(T >= v) > thr  <=>  Pr(T <= v - 1) < 1 - thr: v = the first y with Pr(T <= y) >= 1 - thr
            y, tilted = _first_passing_tail(self.low, 1.0 - threshold, inclusive=True)
            v = y
        if tilted is not None:
            orientation = tilted.owner
            at, bound = tilted.lower_tail(y)
            below, bound_below = tilted.lower_tail(y - 1)
            if bound_below > RELATIVE_ERROR_BOUND:
                below, bound_below = orientation.lower_tail(y - 1)
            self._record(at, max(bound, bound_below))
            if at - below > 8.0 * max(bound, bound_below, 1e-15) * at:
                return v  # carries probability: attainable
        return self._attainable_at_or_below(min(max(v, self.low.t_min), self.low.t_max))

    def _attainable_at_or_below(self, v: int) -> int:
        """The largest v' <= v that carries probability beyond the error bound (t_min at the latest)."""
        if v <= self.low.t_min:
            return self.low.t_min
        tail_v = self.upper_tail(v)
        slack = 8.0 * max(self.error_bound, 1e-15)
        if tail_v - self.upper_tail(v + 1) > slack * tail_v:
            return v
        target, low, high = tail_v * (1.0 + slack), self.low.t_min, v - 1  # upper_tail(low) = 1 > target
        while low < high:
            middle = (low + high + 1) // 2
            if self.upper_tail(middle) > target:
                low = middle
            else:
                high = middle - 1
        return low


def _first_passing_tail(tilt: TiedTilt, level: float, inclusive: bool):
    """(y, tilt used): the smallest y with Pr(T <= y) > level (>= if inclusive) in ``tilt``'s orientation.

    level <= 1/2; the crossing is found under the saddle-point tilt for ``level``, then re-tilted
    at the crossing (at most three times) until it lies within two sd of its tilt's mean.
    """
    if level <= 0.0:
        return tilt.t_min, None
    tilted = tilt.tilted(tilt.tilt_for_tail(level))
    y = tilt.t_min
    for _ in range(4):
        def passes(y, tilted=tilted):
            value = 1.0 if y >= tilt.t_max else 0.0 if y < tilt.t_min else tilted.lower_tail(y)[0]
            return value >= level if inclusive else value > level

        y = _bisect(passes, tilted, tilt)
        if abs(y - tilted.mean) <= 2.0 * tilted.sd + 1:
            break
        tilted = tilt.tilted_at(y)
    return y, tilted


def _bisect(passes, tilted, tilt: TiedTilt) -> int:
    """Smallest integer y in [t_min, t_max] with passes(y) (monotone), bracketed around the tilt's mean."""
    width = max(int(4 * tilted.sd), 1)
    low = max(int(tilted.mean) - width, tilt.t_min - 1)
    high = min(int(tilted.mean) + width, tilt.t_max)
    while low >= tilt.t_min and passes(low):
        low, high = max(low - 2 * width, tilt.t_min - 1), low
        width *= 2
    while high < tilt.t_max and not passes(high):
        low, high = high, min(high + 2 * width, tilt.t_max)
        width *= 2
    return first_passing(passes, low, high)


def programme_cost(group_sizes, P) -> tuple[float, float]:
    """(multiply-adds, peak bytes) of the programme: sum over groups of (m_g + 1) x the states' lengths.

    A state (q positives among the first M items) spans 2U from its greedy minimum to its maximum:
    2q(M - q) + 1 values less the partial groups' k(m - k) at both ends (exact for up to 200 groups;
    above, the dense 2q(M - q) + 1, an upper bound).
    """
    sizes, P = check_tie_groups(group_sizes, P)
    N = int(sizes.sum()) - P
    totals = np.concatenate([[0], np.cumsum(sizes)])
    lengths = [_state_lengths(sizes[:g], int(totals[g]), P, N) for g in range(sizes.size)] + [1.0]
    madds = float(sum((int(m) + 1) * length for m, length in zip(sizes, lengths[:-1])))
    peak = max(a + b for a, b in zip(lengths[:-1], lengths[1:]))
    return madds, 8.0 * peak + 64.0 * (int(sizes.max()) + 1)


def _state_lengths(prefix: np.ndarray, M: int, P: int, N: int) -> float:
    """Total stored length of the states after the groups in ``prefix`` (M items)."""
    a, b = max(0, M - N), min(P, M)
    if prefix.size > 200 or M == 0:
        s1 = (a + b) * (b - a + 1) / 2.0
        s2 = (b * (b + 1) * (2 * b + 1) - (a - 1) * a * (2 * a - 1)) / 6.0
        return 2.0 * M * s1 - 2.0 * s2 + (b - a + 1)
    q = np.arange(a, b + 1, dtype=np.int64)
    return float(np.sum(2 * q * (M - q) + 1 - _partial(prefix, q) - _partial(prefix[::-1], q)))


def _partial(sizes: np.ndarray, q: np.ndarray) -> np.ndarray:
    """k (m - k) of the group the greedy fill of q items (from the start of ``sizes``) leaves partial."""
    ends = np.cumsum(sizes)
    index = np.minimum(np.searchsorted(ends, q, side="right"), sizes.size - 1)
    k = q - (ends[index] - sizes[index])
    return k * (sizes[index] - k)


def inversion_cost(group_sizes, P) -> tuple[float, float]:
    """(seconds, bytes) of one answer by the tilted inversion: a closed-form estimate of its band.

    At the untilted law: W = n p (1 - p) (K's variance), V = P N (n + 1) / 3 (1 - tie correction)
    (T's given K), windows L and M from Bernstein's bound, the band an ellipse of semi-axes
    sqrt(2B / V) M / 2 pi frequencies by sqrt(2B / W) L / 2 pi, times the secondary peaks of a law with
    few groups (fit: about 12 sqrt(n) e^{-1.5 (G - 3)} more), and the whole spectrum (M/2 x L) when
    W < B + 3 sqrt(W) (small min(P, N): the characteristic function never falls below e^-B).  Each band
    point costs G factor evaluations; ``TILTS_PER_ANSWER`` tilts per answer
    (``benchmarks/bench_auc_ties.py`` measures both).
    """
    sizes, P = check_tie_groups(group_sizes, P)
    n, G = int(sizes.sum()), int(sizes.size)
    N = n - P
    W = P * N / n
    tie = float(np.sum(sizes.astype(float) ** 3 - sizes)) / (float(n) ** 3 - n)
    V = max(P * N * (n + 1) / 3.0 * (1.0 - tie), 1.0)
    L = min(n + 1.0, 2.0 * bernstein_radius(W, 1.0) + 1.0)
    M = 1.3 * (2.0 * bernstein_radius(V, float(n)) + 1.0)
    B = 41.0 + math.log(2 + math.log(M)) + math.log(50.0 * max(2 * math.pi * math.sqrt(W * V), 1.0))
    full = (M / 2.0 + 1.0) * L
    omegas, thetas = math.sqrt(2 * B / V) * M / (2 * math.pi) + 2, math.sqrt(2 * B / W) * L / (2 * math.pi) + 2
    main = math.pi / 2.0 * omegas * thetas  # half an ellipse of those semi-axes
    peaks = 1.0 + 12.0 * math.sqrt(n) * math.exp(-1.5 * max(G - 3, 0))
    points = full if W < B + 3.0 * math.sqrt(W) else min(full, main * peaks)
    # the band search: the sieve's candidates (light ties: ~M / (2 pi W) near 0 and pi) or FFTs
    search = min(M * math.log2(M) * 4e-9, (M / (2 * math.pi * W) + 1000.0) * G * 6e-9)
    seconds = TILTS_PER_ANSWER * (0.005 + points * G * SECONDS_PER_FACTOR + search)
    bytes_ = 24.0 * min(M, 2.0 ** 23) + 200.0 * G + 48.0 * min(points, 1e7) + 1e6
    return seconds, bytes_


def programme_seconds_per_madd(bytes_: float) -> float:
    """Seconds per multiply-add of a programme whose states take ``bytes_``."""
    return SECONDS_PER_PROGRAMME_MADD if bytes_ < 5e7 else SECONDS_PER_PROGRAMME_MADD_OUT_OF_CACHE


def _programme_chosen(sizes: np.ndarray, P: int) -> tuple[bool, tuple[float, float]]:
    """(programme?, its (seconds, bytes) or the inversion's): the faster route that fits in memory."""
    from tablegen.compute.limits import memory_limit_bytes

    madds, bytes_ = programme_cost(sizes, P)
    programme = (madds * programme_seconds_per_madd(bytes_), bytes_)
    inverted = inversion_cost(sizes, P)
    chosen = programme[1] <= memory_limit_bytes() and programme[0] <= inverted[0]
    return chosen, programme if chosen else inverted


def tied_auc_cost(group_sizes, P) -> tuple[float, float]:
    """Estimated (single-core seconds, peak bytes) of one exact answer by the route :func:`tied_auc_null` takes.

    Examples
    --------
    >>> seconds, bytes_ = tied_auc_cost([1] * 10 + [5] + [1] * 10, 12)
    >>> seconds < 1.0 and bytes_ < 1e8
    True
    """
    sizes, P = check_tie_groups(group_sizes, P)
    if np.all(sizes == 1):
        return auc_exact_cost(P, int(sizes.size) - P)
    return _programme_chosen(sizes, P)[1]


def tied_auc_null(group_sizes, P):
    """The exact null of AUC given tie groups of ``group_sizes`` (ascending score) and P positives.

    The programme (the whole law, :class:`TiedProgrammeNull`) where it is the faster route and fits in
    memory, else the tilted inversion (:class:`TiltedTiedAucNull`); untied sizes (all 1) give
    :func:`tablegen.compute.exact.auc.auc_null` itself.  Answer with ``null.critical_value(t)`` and
    ``null.tail_ge_score(score)``, or :func:`tablegen.compute.exact.null_critical_value` /
    :func:`~tablegen.compute.exact.null_tail_ge`, which take every exact null.

    Examples
    --------
    >>> null = tied_auc_null([1, 3, 1, 1], 3)  # 2U / 2PN with 2U in {2, 6, 8, 10, 12, 16}
    >>> [round(float(x), 4) for x in null.values]
    [0.1111, 0.3333, 0.4444, 0.5556, 0.6667, 0.8889]
    >>> round(null.tail_ge_score(8 / 9), 12)    # 3 of C(6, 3) = 20 label sets reach AUC = 8/9
    0.15
    >>> type(tied_auc_null([1, 1, 1, 1], 2)).__name__   # untied: the no-ties null
    'TabulatedNull'
    """
    sizes, P = check_tie_groups(group_sizes, P)
    N = int(sizes.sum()) - P
    if np.all(sizes == 1):
        return auc_null(P, N)
    if _programme_chosen(sizes, P)[0]:
        return programme_null(sizes, P)
    return TiltedTiedAucNull(sizes, P)
