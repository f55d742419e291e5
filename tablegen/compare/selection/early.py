"""The max-T test's early look and the sequential run after it (R left unset): which arrangements each count needs,
and the p-value each count reports.

The rule, fixed before any arrangement is drawn (:func:`~tablegen.compare.pairwise.sequential.max_t_look`: l_e =
ceil(10/alpha) - 1 arrangements, e = 0, H = 20): every count the test reports — each model's raw, step-down and
single-step count — is read at the l_e-th arrangement, X of them reaching it.

- X <= e or X >= H: the count settles there, p = (X + 1)/(l_e + 1).
- e < X < H: the count goes on until its h-th reaching arrangement, the L-th drawn (Besag & Clifford 1991: p_BC =
  h/L; h = H = 20), or R are drawn (p_BC = (X_R + 1)/(R + 1)); it reports min(H/(l_e + 1), p_BC + tau_e), tau_e =
  (e + 1)/(l_e + 1).  Where a run of R arrangements is cheap (at most
  :data:`~tablegen.compare.selection.engine.SEQUENTIAL_STEPS` model-item-arrangement steps) there is no h: such a
  count goes on to R, and its p-value is as precise as a run of R without a look (a verdict near alpha settled).

A metric's run stops at the end of the first block in which no count is left going (blocks of
:data:`FOLLOW_BLOCK` arrangements after the look; the H-th reaching arrangement of each count found exactly).

Why the level holds (:func:`designed_p_value`), and why the critical value's band is read from a prefix of fixed
size (:func:`band_prefix`): see those functions.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from tablegen.compute.stats import CI_LEVEL

#: Arrangements per kernel call after the look; where a count's h-th reaching arrangement falls in a block, it is
#: found by bisection, scoring halves of the block again (same keyed arrangements).
FOLLOW_BLOCK = 64
#: Each interval of a run with a look is at this level: it reports from one of two branches (l_e, or past it), so
#: the one reported covers with 95%.
LOOK_LEVEL = 1.0 - (1.0 - CI_LEVEL) / 2


@dataclass(frozen=True)
class LookedCounts:
    """One kind of count (raw, step-down or single-step) of every model under an early look: how many of the first
    l_e arrangements reached it (``at_look``), how many of the first ``drawn`` did (``hits``), ``drawn`` being l_e
    where the look settled it, L where its H-th reaching arrangement was the L-th, else R."""

    at_look: np.ndarray
    hits: np.ndarray
    drawn: np.ndarray


def designed_p_value(look, at_look: int, hits: int, drawn: int, total: int) -> Fraction:
    """The p-value of one count under the early ``look`` (an :class:`~tablegen.compare.pairwise.sequential.EarlyLook`
    with e and H), as an exact Fraction (:class:`LookedCounts`' fields; ``total`` = R).

    Each count's p-value depends on its own arrangements alone, and is a valid p-value.  For a level a below
    H/(l_e + 1), no count of H or more at the look reports a or less, so Pr(p <= a) <= Pr(X <= e, (X + 1)/(l_e + 1)
    <= a) + Pr(p_BC <= a - tau_e) <= min(a, tau_e) + max(0, a - tau_e) = a ((X + 1)/(l_e + 1) is a valid Monte Carlo
    p-value at the fixed l_e, and p_BC a valid one, Besag & Clifford's).  From H/(l_e + 1) on, a count reports a or
    less exactly where X <= m = floor(a (l_e + 1)) - 1 >= H - 1 (every count between e and H reports at most the
    cap), so Pr(p <= a) <= Pr(X <= m) <= (m + 1)/(l_e + 1) <= a.  No continuity is needed: it holds with ties.  The
    cap makes the p-value monotone — more arrangements reaching, at the look or after, never lower it — which the
    single-step and step-down adjustments need: the maximum over more models reaches at least as often.

    Examples
    --------
    >>> from tablegen.compare.pairwise.sequential import EarlyLook
    >>> look = EarlyLook(199, 0, 20, 20)
    >>> cases = [(0, 0, 199), (25, 25, 199), (3, 20, 1000), (3, 10, 9_999), (19, 20, 210)]
    >>> [str(designed_p_value(look, x, b, drawn, 9_999)) for x, b, drawn in cases]
    ['1/200', '13/100', '1/40', '61/10000', '1/10']
    """
    from tablegen.compare.pairwise.sequential import besag_clifford_fraction

    if look.settles(at_look):
        return besag_clifford_fraction(int(at_look), look.drawn, total, look.settled_from, look, early=True)
    sequential = besag_clifford_fraction(int(hits), int(drawn), total, _needed(look, total), look)
    return min(sequential, Fraction(look.settled_from, look.drawn + 1))


def _needed(look, total: int) -> int:
    """h of the continuation: the look's ``follow_hits``, or one more than R (a run to R: (X_R + 1)/(R + 1))."""
    return total + 1 if look.follow_hits is None else look.follow_hits


def p_values(counts: LookedCounts, look, total: int):
    """(p, low, high) of every count: :func:`designed_p_value` rounded up to a double (never below its exact
    value), with the 97.5% interval of the exact p-value of the branch it reports from (Clopper–Pearson of X in
    l_e where the look settled it; Besag & Clifford's under their stopping rule, or Clopper–Pearson of X_R in R,
    otherwise): whichever branch a count takes, its interval misses with probability at most 2.5% + 2.5%.

    Examples
    --------
    >>> from tablegen.compare.pairwise.sequential import EarlyLook
    >>> counts = LookedCounts(np.array([0, 3, 40]), np.array([0, 20, 40]), np.array([199, 1000, 199]))
    >>> p, low, high = p_values(counts, EarlyLook(199, 0, 20, 20), 9_999)
    >>> p.tolist(), bool(low[1] < 0.02 < high[1])  # 1/200; 20/1,000 + 1/200; 41/200
    ([0.005, 0.025, 0.20500000000000002], True)
    """
    from tablegen.compare.pairwise.sequential import rounded_up, stopped_interval
    from tablegen.compute.stats import clopper_pearson

    x, hits, drawn = (np.asarray(v, np.int64) for v in (counts.at_look, counts.hits, counts.drawn))
    p = np.array([rounded_up(designed_p_value(look, *c, total)) for c in zip(x, hits, drawn)], float)
    settled = look.settles(x)
    stopped = ~settled & (hits >= _needed(look, total))  # at the h-th reaching arrangement: Besag & Clifford's
    count, size = np.where(settled, x, hits), np.where(settled, look.drawn, drawn)
    low, high = (np.asarray(v, float) for v in clopper_pearson(count, count, size, LOOK_LEVEL))
    if stopped.any():
        low[stopped], high[stopped] = stopped_interval(hits[stopped], drawn[stopped], LOOK_LEVEL)
    return p, low, high


def band_sizes(look, total: int) -> list[int]:
    """The prefix sizes the critical value's band may be read from: l_e 2^j below R, and R.

    Examples
    --------
    >>> from tablegen.compare.pairwise.sequential import EarlyLook
    >>> band_sizes(EarlyLook(199, 0, 20), 10_000)
    [199, 398, 796, 1592, 3184, 6368, 10000]
    """
    sizes, size = [], look.drawn
    while size < total:
        sizes.append(size)
        size *= 2
    return sizes + [total]


def band_prefix(look, drawn: int, total: int) -> tuple[int, float]:
    """(G, level): the critical value's DKW band of a run of ``drawn`` arrangements is read from its first G, G the
    largest of :func:`band_sizes` at most ``drawn``, at level 1 - 5%/(the number of sizes).  The run's length depends
    on the counts, but G takes one of those fixed sizes, and the band of each fixed size misses with probability at
    most 5%/(the number of sizes): whichever is reported, it misses with probability at most 5%.

    Examples
    --------
    >>> from tablegen.compare.pairwise.sequential import EarlyLook
    >>> band_prefix(EarlyLook(199, 0, 20), 1200, 10_000)
    (796, 0.9928571428571429)
    """
    from tablegen.compute.stats import CI_LEVEL

    sizes = band_sizes(look, total)
    return max(s for s in sizes if s <= drawn), 1.0 - (1.0 - CI_LEVEL) / len(sizes)


def first_reaching(indicators: np.ndarray, before: np.ndarray, needed: int, first: int) -> np.ndarray:
    """For each column of ``indicators`` (arrangements ``first``, ``first`` + 1, ... by rows; 1 where it reached),
    having ``before`` reaching arrangements already: L, the number drawn when the ``needed``-th reached (1-based
    arrangement count), or 0 where it did not in these rows.

    Examples
    --------
    >>> first_reaching(np.array([[1, 0], [1, 1], [0, 1]]), np.array([18, 0]), 20, 100)
    array([102,   0])
    """
    running = before[None, :] + np.cumsum(indicators, axis=0)
    reached = running >= needed
    found = reached.any(axis=0)
    return np.where(found, first + 1 + np.argmax(reached, axis=0), 0)
