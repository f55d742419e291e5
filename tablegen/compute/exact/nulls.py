"""Exact null distributions as objects: candidate values and Pr(X >= value) at each.

Two kinds, one interface (``values``, ``tail_ge_at(index)``):

- :class:`TabulatedNull`: the whole upper-tail function is an array (closed forms, AUC recursion).
- :class:`LatticeNull`: Pr(X >= value) is one O(P N) lattice programme per value, evaluated on
  demand; its own :meth:`LatticeNull.critical_value` and :meth:`LatticeNull.tail_ge_score` search
  without listing the candidates (``tablegen.compute.exact`` calls them when a null has them).

``values`` may be a superset of the attainable values (it is, for the lattice metrics): a
non-attainable candidate has the tail probability of the next attainable one, and the bisection
below can only stop on an attainable value (see :func:`critical_index`).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

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


class LatticeNull:
    """A null distribution whose tail probability is a lattice programme per candidate value.

    Built on a family of exactly ordered candidate keys (:mod:`tablegen.compute.exact.lattice`).  Two ways in:

    - :meth:`critical_value` and :meth:`tail_ge_score`: the bracketed search and one programme at
      the score's candidate; they never list all candidates (any P, N; what
      :func:`tablegen.compute.metric_nulls.exact_critical_value` and
      :func:`tablegen.compute.metric_nulls.exact_tail_ge` call);
    - ``values``, :meth:`tail_ge_at` and :meth:`first_index_at_or_below`: the index interface of
      :class:`TabulatedNull`, built on first use from all P (N + 1) candidates (small cells only).

    Examples
    --------
    >>> from tablegen.compute.exact.lattice import best_balanced_accuracy_null
    >>> null = best_balanced_accuracy_null(20, 20)
    >>> bool(null.critical_value(0.001) == null.values[critical_index(null, 0.001)])
    True
    """

    def __init__(self, family):
        self.family = family
        self.programmes = 0  # lattice programmes run by the searches so far (for benchmarks)
        self._critical: dict[float, object] = {}  # tail -> m*'s key: a tail asked again costs no programme
        self._known: list = []  # (key, low, high) bounds on Pr(X >= key) from every programme of the searches so far

    @functools.cached_property
    def _listed(self):
        return self.family.all_keys()

    @property
    def values(self) -> np.ndarray:
        """Ascending candidate values (a superset of the attainable ones), all P (N + 1) of them."""
        return self._listed.values

    def tail_function(self, index: int) -> float:
        """Pr(X >= values[index]), one programme."""
        return self.family.tail(self._listed.key(index))

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

    def critical_value(self, tail: float) -> float:
        """m* = the smallest value x with F(x) >= q, given t = 1 - q (same rule as :func:`critical_index`).

        Each tail is searched once per null object: asked again (the verdict's level by the selection test, the
        competitors not given at each of its p-values), the key found is returned without a programme.
        """
        key = self._critical.get(tail)
        if key is None:
            key, programmes = self.family.critical(tail * (1.0 + TIE_RTOL), self._known)
            self.programmes += programmes
            self._critical[tail] = key
        return self.family.value(key)

    def tail_ge_score(self, score: float) -> float:
        """Pr(X >= score), the score snapped to a candidate (see :meth:`snap`); 0 above the maximum.  A key a search
        of this null has run a programme at, whose bracket is as narrow as a tail's
        (:data:`~tablegen.compute.exact.lattice_search.TRIM_RTOL`), is answered from it without a programme (the
        max-T test's effective C asks the tail at the critical value its search found)."""
        from tablegen.compute.exact.lattice_search import TRIM_RTOL

        key = self.snap(score)
        if key is None:
            return 0.0
        known = self._known_bracket(key, TRIM_RTOL)
        if known is not None:
            return known[0]
        self.programmes += 1
        return self.family.tail(key)

    def known_tail_bracket(self, score: float, rtol: float) -> tuple[float, float] | None:
        """(low, high) around Pr(X >= score) from a programme this null's searches already ran at the score's key,
        where that bracket is at most ``rtol`` x low wide; None where none is (no programme runs).  The searches'
        programmes decide comparisons and bracket their tails to about 1e-9 relative; the max-T test's effective C
        asks the tail at the critical value its search found this way.

        Examples
        --------
        >>> from tablegen.compute.exact.lattice import best_f1_null
        >>> null = best_f1_null(20, 20)
        >>> null.known_tail_bracket(0.7916666666666666, 1e-6) is None  # no search yet
        True
        >>> low, high = null.known_tail_bracket(null.critical_value(0.001), 1e-6)
        >>> 0.001 < low <= high <= low * (1 + 1e-6)
        True
        """
        key = self.snap(score)
        return (0.0, 0.0) if key is None else self._known_bracket(key, rtol)

    def _known_bracket(self, key, rtol: float) -> tuple[float, float] | None:
        for known, low, high in self._known:
            if known == key and high - low <= rtol * low:
                return low, high
        return None

    def critical_at_most(self, x: float, tail: float) -> bool:
        """Whether ``critical_value(tail)`` <= x, from one programme rather than the critical value's search: m*
        is the largest candidate whose tail exceeds t = tail (1 + TIE_RTOL), so m* <= the largest candidate worth
        at most x (its double) exactly when the candidate after that one has a tail <= t
        (:func:`~tablegen.compute.exact.lattice_search.tail_at_most`, decided as the search decides; a tail already
        searched answers without a programme).  The max-T test's crossing asks it of each level it tries.

        Examples
        --------
        >>> from tablegen.compute.exact.lattice import best_f1_null
        >>> null, fresh = best_f1_null(20, 20), best_f1_null(20, 20)
        >>> [null.critical_at_most(x, 0.001) for x in (0.79, 0.7916666666666666, 0.8)], fresh.critical_value(0.001)
        ([False, True, True], 0.7916666666666666)
        """
        from tablegen.compute.exact.lattice_search import tail_at_most

        key = self._critical.get(tail)
        if key is not None:
            return self.family.value(key) <= x
        family = self.family
        floor = family.floor_key(x)
        if floor is None:  # x below every candidate, m* among them
            return False
        noted = len(self._known)
        answer = tail_at_most(family, family.successor(floor), tail * (1.0 + TIE_RTOL), self._known)
        self.programmes += len(self._known) > noted  # a programme ran (its bounds noted)
        return answer

    def tail_ge_bracket(self, score: float, within: float | None = None) -> tuple[float, float]:
        """Rigorous (low, high) around Pr(X >= score) (the score snapped as by :meth:`tail_ge_score`): (p, p), or
        with ``within`` one trimmed programme's bracket where it is at most that wide
        (:func:`~tablegen.compute.exact.lattice_search.tail_bracket_at_key`: what the max-T fold asks of a model's
        tail, whose factor (1 - tail)^(C - K) moves by less than (C - K) ``within``)."""
        if within is None:
            value = self.tail_ge_score(score)
            return value, value
        from tablegen.compute.exact.lattice_search import tail_bracket_at_key

        key = self.snap(score)
        if key is None:
            return 0.0, 0.0
        self.programmes += 1
        return tail_bracket_at_key(self.family, key, within)

    def snap(self, score: float):
        """The candidate a score means: the nearest within :data:`SNAP_TOLERANCE`, else the next above."""
        family = self.family
        above, below = family.ceil_key(score), family.floor_key(score)
        near = [key for key in (above, below)
                if key is not None and abs(family.value(key) - score) <= SNAP_TOLERANCE]
        if near:
            return min(near, key=lambda key: abs(family.value(key) - score))
        return above


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


def tail_from_pmf(pmf: np.ndarray) -> np.ndarray:
    """Pr(X >= x_i) from a pmf on ascending support, summed from the top (small terms first).

    Examples
    --------
    >>> tail_from_pmf(np.array([0.25, 0.5, 0.25])).tolist()
    [1.0, 0.75, 0.25]
    """
    return np.cumsum(pmf[::-1])[::-1]
