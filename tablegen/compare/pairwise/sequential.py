"""The swap-permutation p-value with as few patterns as its level allows: McDiarmid's bound first, then Besag &
Clifford's sequential Monte Carlo.

The rule, fixed before any pattern is drawn (L: the cap on patterns, ``R``, default 10,000; tau = 1/(L + 1)):

1. **Bound.** Where the metric has a bounded-difference constant (:mod:`tablegen.compute.swap_bounds`: best
   accuracy, best balanced accuracy, best F1, AUC) and McDiarmid's bound B on the exact p-value is below tau — less
   than any Monte Carlo p-value can be — the answer is "p <= B" (method ``"bound"``) and no pattern is drawn.
2. **Sequential Monte Carlo** (Besag & Clifford 1991).  Otherwise patterns are drawn in their keyed order (the
   same first L patterns as a run of L) until h = :data:`SEQUENTIAL_HITS` of them reach the observed difference,
   or L are drawn: p = h/l if the h-th reaching pattern is the l-th drawn (l <= L), else (X + 1)/(L + 1) with X < h
   reaching patterns.  For a metric that step 1 can settle, tau is added (and the sum capped at 1).  Each
   p-value is the smallest double at least its exact value (:func:`rounded_up`).

Why the level holds.  Under the swap null the exact p-value p* is super-uniform (Pr(p* <= u) <= u), and given the
data the patterns are independent draws, each reaching with probability p*.  Besag & Clifford's p-value is valid:
summing over its stopping distribution, Pr(p <= a) = h/l0 for a >= h/L (l0 the smallest l with h/l <= a) and
floor(a (L + 1))/(L + 1) below, each at most a (:func:`sequential_level` computes it exactly; the tests sum it).
With the bound, the p-value reported is B where B < tau and p_MC + tau elsewhere, so for a level a >= tau

    Pr(reported <= a) <= Pr(B < tau) + Pr(p_MC <= a - tau) <= Pr(p* < tau) + (a - tau) <= tau + a - tau = a

(B >= p*), and for a < tau only B can be at most a: Pr <= Pr(p* <= a) <= a.  Without the added tau the bound's
early answers would add up to tau Pr(Binomial(L, tau) >= a (L + 1)) to the level.  A metric without a constant
never answers by the bound, so its p-value is Besag & Clifford's alone.

The 95% interval of the exact p-value: Clopper–Pearson for X of L where the run went to the cap; where it stopped
at the h-th reaching pattern (inverse binomial sampling), [the Clopper–Pearson low end of h in l, its high end of
h - 1 in l - 1], the exact interval under that stopping rule.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from tablegen.compute.exact.nulls import SNAP_TOLERANCE

#: h: the sequential Monte Carlo stops at the h-th pattern that reaches the observed difference.
SEQUENTIAL_HITS = 20
#: Patterns in the first block drawn; each next block is twice the last, up to :data:`LARGEST_BLOCK`.
FIRST_BLOCK = 64
LARGEST_BLOCK = 4096
#: The order of the alternatives in :class:`SwapCounts`.
SIDES = ("two-sided", "greater", "less")


@dataclass(frozen=True)
class SwapCounts:
    """How many swap patterns reached the observed difference, per alternative (:data:`SIDES`): ``hits[j]`` of the
    first ``drawn[j]`` patterns (``drawn[j] < patterns`` only where the h-th reaching pattern stopped that
    alternative's run early); ``patterns`` 2^n when ``exact`` (every pattern), else the cap L."""

    hits: tuple
    drawn: tuple
    patterns: int
    exact: bool

    def of(self, alternative: str) -> tuple[int, int]:
        """(hits, drawn) of ``alternative``."""
        j = SIDES.index(alternative)
        return self.hits[j], self.drawn[j]

    def reversed(self) -> SwapCounts:
        """The counts of the pair the other way round: D negated, so "greater" and "less" trade places."""
        return SwapCounts((self.hits[0], self.hits[2], self.hits[1]), (self.drawn[0], self.drawn[2], self.drawn[1]),
                          self.patterns, self.exact)


def reaching(differences: np.ndarray, observed: float) -> np.ndarray:
    """Which differences reach ``observed`` (within the snap tolerance), one row per alternative of :data:`SIDES`."""
    return np.stack([np.abs(differences) >= abs(observed) - SNAP_TOLERANCE,
                     differences >= observed - SNAP_TOLERANCE,
                     differences <= observed + SNAP_TOLERANCE])


class SequentialCounter:
    """Besag & Clifford's stopping rule for several columns (metrics) scored on the same patterns: each alternative
    of a column stops at its h-th reaching pattern; a column is sampled until all three have stopped or the cap.

    Examples
    --------
    >>> counter = SequentialCounter(np.array([0.5]), hits=2, cap=100)
    >>> counter.add(np.array([[0.1, 0.6, -0.7, 0.9, 0.0]]))
    >>> counter.counts(0)
    SwapCounts(hits=(2, 2, 2), drawn=(3, 4, 3), patterns=100, exact=False)
    >>> bool(counter.active[0])
    False
    """

    def __init__(self, observed: np.ndarray, hits: int, cap: int):
        self.observed = np.asarray(observed, np.float64)
        self.h, self.cap, self.drawn = int(hits), int(cap), 0
        self.hits = np.zeros((self.observed.size, 3), np.int64)
        self.stopped = np.zeros((self.observed.size, 3), np.int64)  # the l of the h-th reaching pattern, 0: none yet
        self.active = np.ones(self.observed.size, bool)

    def add(self, differences: np.ndarray) -> None:
        """The next ``differences.shape[1]`` patterns' differences of the active columns (one row each, in order)."""
        for row, c in zip(differences, np.flatnonzero(self.active)):
            for j, reached in enumerate(reaching(row, self.observed[c])):
                if self.stopped[c, j]:
                    continue
                where = np.flatnonzero(reached)
                need = self.h - self.hits[c, j]
                if where.size >= need:
                    self.hits[c, j], self.stopped[c, j] = self.h, self.drawn + where[need - 1] + 1
                else:
                    self.hits[c, j] += where.size
        self.drawn += differences.shape[1]
        self.active &= ~(self.stopped > 0).all(axis=1)

    def counts(self, c: int) -> SwapCounts:
        """Column ``c``'s counts once sampling has ended (stopped, or the cap drawn)."""
        drawn = tuple(int(s) if s else self.drawn for s in self.stopped[c])
        return SwapCounts(tuple(int(x) for x in self.hits[c]), drawn, self.cap, False)


def sequential_p(hits: int, drawn: int, cap: int, h: int = SEQUENTIAL_HITS) -> tuple[float, tuple[float, float]]:
    """Besag & Clifford's p-value and the 95% interval of the exact p-value: h/l where the h-th reaching pattern
    was the l-th drawn, else (X + 1)/(L + 1).

    Examples
    --------
    >>> p, interval = sequential_p(20, 400, 10_000)
    >>> p, round(interval[0], 4), round(interval[1], 4)
    (0.05, 0.0308, 0.0734)
    """
    from scipy.stats import beta

    if hits >= h:
        low = float(beta.ppf(0.025, h, drawn - h + 1))
        high = float(beta.ppf(0.975, h, drawn - h)) if drawn > h else 1.0
        return besag_clifford_p(hits, drawn, cap, h), (low, high)
    from tablegen.compute.stats import CI_LEVEL, clopper_pearson

    low, high = clopper_pearson(hits, hits, cap, CI_LEVEL)
    return besag_clifford_p(hits, drawn, cap, h), (float(low), float(high))


def besag_clifford_p(hits: int, drawn: int, cap: int, h: int = SEQUENTIAL_HITS) -> float:
    """:func:`sequential_p`'s p-value alone: h/l if the h-th reaching pattern was the l-th drawn, else
    (X + 1)/(L + 1), rounded up (:func:`rounded_up`).

    Examples
    --------
    >>> besag_clifford_p(20, 400, 10_000), besag_clifford_p(0, 10_000, 10_000)
    (0.05, 9.999000099990002e-05)
    """
    return rounded_up(Fraction(h, drawn) if hits >= h else Fraction(hits + 1, cap + 1))


def rounded_up(value: Fraction) -> float:
    """The smallest double at least ``value``: a p-value rounded never below its exact value, so that its level
    holds to the last bit.

    Examples
    --------
    >>> rounded_up(Fraction(1, 5)) == 0.2, rounded_up(Fraction(5, 6)) >= Fraction(5, 6)
    (True, True)
    """
    import math

    nearest = float(value)
    return nearest if Fraction(nearest) >= value else math.nextafter(nearest, math.inf)


def sequential_level(alpha: Fraction, cap: int, h: int = SEQUENTIAL_HITS) -> Fraction:
    """Pr(p <= alpha) of :func:`sequential_p` when every pattern reaches with probability U ~ Uniform(0, 1) (an
    exact p-value under the null at its most liberal), summed exactly over the stopping distribution: stopping at
    the h-th reaching pattern at draw l has probability integral C(l-1, h-1) u^h (1-u)^(l-h) du = h/(l(l+1)), and
    each of the cap's outcomes X < h has 1/(L + 1).

    Examples
    --------
    >>> sequential_level(Fraction(1, 20), 100, 5)  # the double 0.05 is just above 1/20: l = 100 does not count
    Fraction(5, 101)
    >>> sequential_level(Fraction(0.05), 100, 5)
    Fraction(1, 20)
    """
    level = Fraction(0)
    for drawn in range(h, cap + 1):
        if besag_clifford_p(h, drawn, cap, h) <= alpha:
            level += Fraction(h, drawn * (drawn + 1))
    for x in range(h):
        if besag_clifford_p(x, cap, cap, h) <= alpha:
            level += Fraction(1, cap + 1)
    return level
