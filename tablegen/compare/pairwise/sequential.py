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

**An early look** (:class:`EarlyLook`, fixed before any pattern is drawn; :func:`tablegen.compare.pairwise_tests`
places one when ``R`` is left unset): at l_e patterns, a run in which at most e of them reached the observed
difference stops there, with p = (X + 1)/(l_e + 1) (plus tau where the bound could answer); every other run goes on
as above and pays tau_e = (e + 1)/(l_e + 1): p = p_BC + tau_e (+ tau).  A clearly significant pair then costs l_e
patterns instead of L.  The level holds for the same reason as the bound's: with E the early stops,

    Pr(reported <= a) <= Pr(E, (X + 1)/(l_e + 1) <= min(a, tau_e)) + Pr(not E, p_BC <= a - tau_e)
                      <= min(a, tau_e) + max(0, a - tau_e) = a,

since (X + 1)/(l_e + 1) is a valid Monte Carlo p-value at the fixed l_e and X <= e makes it at most tau_e
(:func:`sequential_level` sums it exactly with a look; the tests do).  With a look the interval is the
Clopper–Pearson one of X in l_e for an early stop and the one above otherwise, each at 97.5%: whichever the run
reports, it misses the exact p-value with probability at most 2.5% + 2.5% (Bonferroni over the two).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from tablegen.compute.exact.nulls import SNAP_TOLERANCE
from tablegen.compute.stats import beta_quantile

#: h: the sequential Monte Carlo stops at the h-th pattern that reaches the observed difference.
SEQUENTIAL_HITS = 20
#: Patterns in the first block drawn; each next block is twice the last, up to :data:`LARGEST_BLOCK`.
FIRST_BLOCK = 64
LARGEST_BLOCK = 4096
#: The order of the alternatives in :class:`SwapCounts`.
SIDES = ("two-sided", "greater", "less")


@dataclass(frozen=True)
class EarlyLook:
    """A look fixed before any pattern is drawn: a run in which at most ``most_hits`` (e) of the first ``drawn``
    (l_e) patterns reached the observed difference stops there; every other run pays :attr:`price` on its p-value.

    Examples
    --------
    >>> look = early_look(0.05, 9, 10_000)
    >>> look, look.price
    (EarlyLook(drawn=359, most_hits=0, settled_from=None, follow_hits=None), Fraction(1, 360))
    """

    drawn: int
    most_hits: int = 0
    settled_from: int | None = None
    """H, for the max-T test's look (:func:`max_t_look`): a count of at least H of the l_e settles there too (p =
    (X + 1)/(l_e + 1), clearly not significant), and a count between e and H pays the price with its p-value capped
    at H/(l_e + 1) (:func:`tablegen.compare.selection.early.designed_p_value`); None: no such branch."""
    follow_hits: int | None = None
    """With H: a count between e and H goes on until this many arrangements have reached it (Besag & Clifford), or R;
    None: it goes on to R."""

    @property
    def price(self) -> Fraction:
        """tau_e = (e + 1)/(l_e + 1): the largest p-value an early stop reports, added to every other run's."""
        return Fraction(self.most_hits + 1, self.drawn + 1)

    def settles(self, hits):
        """Whether a count of ``hits`` of the l_e patterns settles at the look (at most e, or at least H where the
        look has H); vectorised."""
        hits = np.asarray(hits)
        low = hits <= self.most_hits
        return low if self.settled_from is None else low | (hits >= self.settled_from)


def early_look(alpha: float, comparisons: int, cap: int) -> EarlyLook | None:
    """The look of ``comparisons`` paired tests at level ``alpha`` (Holm's, and the best set's alpha/comparisons):
    e = 0 at the first l_e with tau_e = 1/(l_e + 1) <= alpha / (2 comparisons), so that an early stop is significant
    for the best set and for Holm's first step whatever the other pairs, and a run that goes on pays at most half
    of that step's level; None where l_e would exceed half the cap ``cap`` (too little saved for the price).

    Examples
    --------
    >>> early_look(0.05, 99, 10_000), early_look(0.05, 300, 10_000)
    (EarlyLook(drawn=3959, most_hits=0, settled_from=None, follow_hits=None), None)
    """
    return look_for(Fraction(alpha) / (2 * comparisons), cap)


def max_t_look(alpha: float, cap: int, sequential: bool = True) -> EarlyLook | None:
    """The look of a max-T selection test at level ``alpha`` with R = ``cap`` arrangements at most: e = 0 at the
    first l_e with tau_e = 1/(l_e + 1) <= alpha / 10, so that an early stop is significant and a run that goes on
    pays at most a tenth of the level, and H the count whose cap H/(l_e + 1) is 2 alpha (20 whatever alpha): a
    count of at least H settles as clearly not significant; a count between goes on until H arrangements reach it
    where ``sequential`` (Besag & Clifford), else to R (None where l_e would exceed half the cap).

    Examples
    --------
    >>> max_t_look(0.05, 10_000), max_t_look(0.001, 10_000)
    (EarlyLook(drawn=199, most_hits=0, settled_from=20, follow_hits=20), None)
    >>> max_t_look(0.05, 10_000, sequential=False).follow_hits is None
    True
    """
    look = look_for(Fraction(alpha) / 10, cap)
    if look is None:
        return None
    settled_from = max(look.most_hits + 2, math.ceil(2 * alpha * (look.drawn + 1) - 1e-9))
    return EarlyLook(look.drawn, look.most_hits, settled_from, settled_from if sequential else None)


def look_for(price: Fraction, cap: int) -> EarlyLook | None:
    """The look with e = 0 at the first l_e whose price 1/(l_e + 1) is at most ``price``; None past half the cap."""
    drawn = math.ceil(1 / price) - 1
    return EarlyLook(drawn) if 0 < drawn <= cap // 2 else None


@dataclass(frozen=True)
class SwapCounts:
    """How many swap patterns reached the observed difference, per alternative (:data:`SIDES`): ``hits[j]`` of the
    first ``drawn[j]`` patterns (``drawn[j] < patterns`` only where the h-th reaching pattern stopped that
    alternative's run early, or the :class:`EarlyLook` ``look`` did: ``early[j]``); ``patterns`` 2^n when
    ``exact`` (every pattern), else the cap L."""

    hits: tuple
    drawn: tuple
    patterns: int
    exact: bool
    early: tuple = (False, False, False)
    look: EarlyLook | None = None

    def of(self, alternative: str) -> tuple[int, int]:
        """(hits, drawn) of ``alternative``."""
        j = SIDES.index(alternative)
        return self.hits[j], self.drawn[j]

    def stopped_early(self, alternative: str) -> bool:
        """Whether ``alternative``'s run stopped at the early look."""
        return bool(self.early[SIDES.index(alternative)])

    def reversed(self) -> SwapCounts:
        """The counts of the pair the other way round: D negated, so "greater" and "less" trade places."""
        return SwapCounts((self.hits[0], self.hits[2], self.hits[1]), (self.drawn[0], self.drawn[2], self.drawn[1]),
                          self.patterns, self.exact, (self.early[0], self.early[2], self.early[1]), self.look)


def reaching(differences: np.ndarray, observed: float) -> np.ndarray:
    """Which differences reach ``observed`` (within the snap tolerance), one row per alternative of :data:`SIDES`."""
    return np.stack([np.abs(differences) >= abs(observed) - SNAP_TOLERANCE,
                     differences >= observed - SNAP_TOLERANCE,
                     differences <= observed + SNAP_TOLERANCE])


class SequentialCounter:
    """Besag & Clifford's stopping rule for several columns (metrics) scored on the same patterns: each alternative
    of a column stops at its h-th reaching pattern, or at the :class:`EarlyLook` ``look`` with at most e reaching;
    a column is sampled until all three have stopped or the cap.

    Examples
    --------
    >>> counter = SequentialCounter(np.array([0.5]), hits=2, cap=100)
    >>> counter.add(np.array([[0.1, 0.6, -0.7, 0.9, 0.0]]))
    >>> counter.counts(0)
    SwapCounts(hits=(2, 2, 2), drawn=(3, 4, 3), patterns=100, exact=False, early=(False, False, False), look=None)
    >>> bool(counter.active[0])
    False
    >>> early = SequentialCounter(np.array([0.5]), hits=2, cap=100, look=EarlyLook(4))
    >>> early.add(np.array([[0.1, -0.2, -0.7, 0.0, 0.9]]))  # "greater" none of 4 reached: stops at the look
    >>> early.counts(0).of("greater"), early.counts(0).stopped_early("greater"), early.counts(0).of("less")
    ((0, 4), True, (2, 2))
    """

    def __init__(self, observed: np.ndarray, hits: int, cap: int, look: EarlyLook | None = None):
        self.observed = np.asarray(observed, np.float64)
        self.h, self.cap, self.drawn, self.look = int(hits), int(cap), 0, look
        self.hits = np.zeros((self.observed.size, 3), np.int64)
        self.stopped = np.zeros((self.observed.size, 3), np.int64)  # the l of the h-th reaching pattern, 0: none yet
        self.early = np.zeros((self.observed.size, 3), bool)
        self.active = np.ones(self.observed.size, bool)

    def add(self, differences: np.ndarray) -> None:
        """The next ``differences.shape[1]`` patterns' differences of the active columns (one row each, in order)."""
        if self.look is not None and self.drawn < self.look.drawn < self.drawn + differences.shape[1]:
            split = self.look.drawn - self.drawn  # the look falls inside this block: count up to it, look, go on
            rows = np.flatnonzero(self.active)
            self.add(differences[:, :split])
            self.add(differences[np.isin(rows, np.flatnonzero(self.active)), split:])
            return
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
        if self.look is not None and self.drawn == self.look.drawn:
            self.early = (self.stopped == 0) & (self.hits <= self.look.most_hits) & self.active[:, None]
            self.stopped[self.early] = self.drawn
        self.active &= ~(self.stopped > 0).all(axis=1)

    def counts(self, c: int) -> SwapCounts:
        """Column ``c``'s counts once sampling has ended (stopped, or the cap drawn)."""
        drawn = tuple(int(s) if s else self.drawn for s in self.stopped[c])
        return SwapCounts(tuple(int(x) for x in self.hits[c]), drawn, self.cap, False,
                          tuple(bool(e) for e in self.early[c]), self.look)


def sequential_p(hits: int, drawn: int, cap: int, h: int = SEQUENTIAL_HITS, look: EarlyLook | None = None,
                 early: bool = False) -> tuple[float, tuple[float, float]]:
    """Besag & Clifford's p-value and the 95% interval of the exact p-value: h/l where the h-th reaching pattern
    was the l-th drawn, else (X + 1)/(L + 1); with an :class:`EarlyLook` ``look``, (X + 1)/(l_e + 1) for a run
    that stopped there (``early``), else the p-value above plus the look's price, and each interval at 97.5%.

    Examples
    --------
    >>> p, interval = sequential_p(20, 400, 10_000)
    >>> p, round(interval[0], 4), round(interval[1], 4)
    (0.05, 0.0308, 0.0734)
    >>> sequential_p(0, 359, 10_000, look=EarlyLook(359), early=True)[0] == 1 / 360
    True
    """
    p = besag_clifford_fraction(hits, drawn, cap, h, look, early)
    return rounded_up(p), p_interval(hits, drawn, cap, h, look, early)


def p_interval(hits: int, drawn: int, cap: int, h: int = SEQUENTIAL_HITS, look: EarlyLook | None = None,
               early: bool = False) -> tuple[float, float]:
    """:func:`sequential_p`'s interval of the exact p-value: 95%, or 97.5% with a look (see the module)."""
    from tablegen.compute.stats import CI_LEVEL, clopper_pearson

    level = CI_LEVEL if look is None else 1.0 - (1.0 - CI_LEVEL) / 2
    if early:
        low, high = clopper_pearson(hits, hits, drawn, level)
        return float(low), float(high)
    if hits >= h:
        low, high = stopped_interval(h, drawn, level)
        return float(low), float(high)
    low, high = clopper_pearson(hits, hits, cap, level)
    return float(low), float(high)


def stopped_interval(hits, drawn, level: float) -> tuple[np.ndarray, np.ndarray]:
    """Besag & Clifford's two-sided ``level`` interval of the exact p-value where the ``hits``-th (h-th) reaching
    pattern was the ``drawn``-th (L-th): Beta quantiles of h in (h, L - h + 1) below and (h, L - h) above (1 where
    L = h); element by element.

    Examples
    --------
    >>> low, high = stopped_interval(np.array([20, 20]), np.array([400, 20]), 0.95)
    >>> bool(low[0] < 0.05 < high[0]), float(high[1])
    (True, 1.0)
    """
    h, L = np.asarray(hits), np.asarray(drawn)
    half = (1.0 - level) / 2
    low = beta_quantile(half, h, L - h + 1)
    high = np.where(L > h, beta_quantile(1.0 - half, h, np.maximum(L - h, 1)), 1.0)
    return low, high


def besag_clifford_p(hits: int, drawn: int, cap: int, h: int = SEQUENTIAL_HITS, look: EarlyLook | None = None,
                     early: bool = False) -> float:
    """:func:`sequential_p`'s p-value alone: h/l if the h-th reaching pattern was the l-th drawn, else
    (X + 1)/(L + 1) (with a look: see :func:`sequential_p`), rounded up (:func:`rounded_up`).

    Examples
    --------
    >>> besag_clifford_p(20, 400, 10_000), besag_clifford_p(0, 10_000, 10_000)
    (0.05, 9.999000099990002e-05)
    """
    return rounded_up(besag_clifford_fraction(hits, drawn, cap, h, look, early))


def besag_clifford_fraction(hits: int, drawn: int, cap: int, h: int = SEQUENTIAL_HITS,
                            look: EarlyLook | None = None, early: bool = False) -> Fraction:
    """:func:`besag_clifford_p` before rounding, capped at 1."""
    if early:
        return Fraction(hits + 1, look.drawn + 1)
    p = Fraction(h, drawn) if hits >= h else Fraction(hits + 1, cap + 1)
    return min(Fraction(1), p + (look.price if look is not None else 0))


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


def sequential_level(alpha: Fraction, cap: int, h: int = SEQUENTIAL_HITS, look: EarlyLook | None = None) -> Fraction:
    """Pr(p <= alpha) of :func:`sequential_p` when every pattern reaches with probability U ~ Uniform(0, 1) (an
    exact p-value under the null at its most liberal), summed exactly over the stopping distribution: stopping at
    the h-th reaching pattern at draw l has probability integral C(l-1, h-1) u^h (1-u)^(l-h) du = h/(l(l+1)), and
    each of the cap's outcomes X < h has 1/(L + 1).  With an :class:`EarlyLook`, each early stop X = x <= e has
    1/(l_e + 1), and the outcomes above lose the paths that stopped early (:func:`_through_the_look`).

    Examples
    --------
    >>> sequential_level(Fraction(1, 20), 100, 5)  # the double 0.05 is just above 1/20: l = 100 does not count
    Fraction(5, 101)
    >>> sequential_level(Fraction(0.05), 100, 5)
    Fraction(1, 20)
    >>> sequential_level(Fraction(1, 11), 100, 5, EarlyLook(10)) <= Fraction(1, 11)
    True
    """
    level = Fraction(0)
    for drawn in range(h, cap + 1):
        if besag_clifford_p(h, drawn, cap, h, look) <= alpha:
            level += Fraction(h, drawn * (drawn + 1)) - _through_the_look(look, h, drawn, cap, h, True)
    for x in range(h):
        if besag_clifford_p(x, cap, cap, h, look) <= alpha:
            level += Fraction(1, cap + 1) - _through_the_look(look, x, cap, cap, h, False)
    if look is not None:
        for x in range(look.most_hits + 1):
            if besag_clifford_p(x, look.drawn, cap, h, look, early=True) <= alpha:
                level += Fraction(1, look.drawn + 1)
    return level


def _through_the_look(look: EarlyLook | None, hits: int, drawn: int, cap: int, h: int, stopped: bool) -> Fraction:
    """Pr(the run would end with ``hits`` of ``drawn`` — its h-th reaching pattern the ``drawn``-th if ``stopped``,
    else ``hits`` of the cap — and had at most e reaching at the look), U ~ Uniform(0, 1): the part of that outcome
    the look stopped early.  With x of the first l_e reaching, the integral of the path's probability is
    C(l_e, x) C(drawn - l_e - 1, h - x - 1) B(h + 1, drawn - h + 1) (stopped) or C(l_e, x) C(L - l_e, X - x)
    B(X + 1, L - X + 1) (at the cap)."""
    if look is None or drawn <= look.drawn:
        return Fraction(0)
    total = Fraction(0)
    for x in range(min(look.most_hits, hits) + 1):
        if stopped:
            ways = math.comb(look.drawn, x) * math.comb(drawn - look.drawn - 1, h - x - 1)
        else:
            ways = math.comb(look.drawn, x) * math.comb(drawn - look.drawn, hits - x)
        total += Fraction(ways, (drawn + 1) * math.comb(drawn, hits))  # B(k+1, n-k+1) = 1/((n+1) C(n, k))
    return total
