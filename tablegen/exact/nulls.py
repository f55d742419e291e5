"""Exact null distributions as objects: candidate values and Pr(X >= value) at each.

Two kinds, one interface (``values``, ``tail_ge_at(index)``):

- :class:`TabulatedNull`: the whole upper-tail function is an array (closed forms, AUC recursion).
- :class:`LatticeNull`: Pr(X >= value) is one O(P N) lattice programme per value, evaluated on
  demand; critical values bisect over the finite candidate set (about log2(P N) evaluations).

``values`` may be a superset of the attainable values (it is, for the lattice metrics): a
non-attainable candidate has the tail probability of the next attainable one, and the bisection
below can only stop on an attainable value (see :func:`critical_index`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

#: Scores within this distance of a candidate value are taken as that value (user-computed
#: scores carry rounding error; distinct candidates are > 1e-7 apart for P, N <= 1000).
SNAP_TOLERANCE = 1e-9

#: Tail probabilities within this relative distance of t = 1 - q count as equal to it.  The exact
#: routines carry relative errors below ~(P + N) * 2**-53 < 1e-12 (P + N <= 2000), so this makes
#: exact ties (F(x) = q exactly, possible when C = 1) resolve as in exact arithmetic (F(x) >= q holds)
#: without moving any comparison that floating point can actually resolve.
TIE_RTOL = 1e-12


@dataclass(frozen=True)
class TabulatedNull:
    """A null distribution with its upper tail tabulated on ascending candidate values.

    Attributes
    ----------
    values : ndarray
        Ascending candidate values of the metric.
    tail_ge : ndarray
        ``tail_ge[i] = Pr(X >= values[i])``, computed as a sum of non-negative terms from the top.
    """

    values: np.ndarray
    tail_ge: np.ndarray

    def tail_ge_at(self, index: int) -> float:
        """Pr(X >= values[index]); 0 past the last value."""
        return float(self.tail_ge[index]) if index < len(self.values) else 0.0

    def first_index_at_or_below(self, tail: float) -> int:
        """Smallest index whose tail probability is <= ``tail`` (len(values) if none)."""
        # tail_ge is non-increasing: search its negation, which is non-decreasing.
        return int(np.searchsorted(-self.tail_ge, -tail, side="left"))


@dataclass(frozen=True)
class LatticeNull:
    """A null distribution whose tail probability is a lattice programme per candidate value.

    Attributes
    ----------
    values : ndarray
        Ascending candidate values (a superset of the attainable ones).
    tail_function : callable
        ``tail_function(index)`` returns Pr(X >= values[index]).
    """

    values: np.ndarray
    tail_function: Callable[[int], float]

    def tail_ge_at(self, index: int) -> float:
        """Pr(X >= values[index]); 0 past the last value."""
        return float(self.tail_function(index)) if index < len(self.values) else 0.0

    def first_index_at_or_below(self, tail: float) -> int:
        """Smallest index whose tail probability is <= ``tail``, by bisection."""
        low, high = 0, len(self.values)  # invariant: answer in [low, high]; high always qualifies
        while low < high:
            middle = (low + high) // 2
            if self.tail_ge_at(middle) <= tail:
                high = middle
            else:
                low = middle + 1
        return low


def critical_index(null, tail: float) -> int:
    """Index of m* = the smallest value x with F(x) >= q, given t = 1 - q.

    F(values[i]) >= q  <=>  Pr(X > values[i]) <= t  <=>  Pr(X >= values[i+1]) <= t.  So with y the
    first index whose tail is <= t, m* = values[y - 1].  Pr(X >= values[y-1]) > t >= Pr(X >= values[y])
    means values[y-1] carries probability, i.e. it is attainable.  y >= 1 because values[0] is at or
    below the minimum, where the tail is 1 > t.
    """
    return max(null.first_index_at_or_below(tail * (1.0 + TIE_RTOL)) - 1, 0)


def score_index(null, score: float) -> int:
    """Index of the smallest candidate >= score (within :data:`SNAP_TOLERANCE`); len(values) if none."""
    return int(np.searchsorted(null.values, score - SNAP_TOLERANCE, side="left"))
