"""Exact power under the Lehmann alternative: Pr_k(the metric > m*) on the lattice the nulls walk.

Under the Lehmann alternative the positives' scores have CDF F**k and the negatives' F, with
k = AUC / (1 - AUC) (the alternative's AUC is k / (k + 1)).  Read from the top, the ranking is a
Markov chain on the (t, f) lattice whose step out of (t, f) is positive with probability
k (P - t) / ((N - f) + k (P - t)) (:mod:`tablegen.compute.kernels.lehmann`; ``docs/explanation/power.md``).
So every exact null that walks the lattice gives exact power by carrying these probabilities:

=========================  ============================================================  ==================
metric                     event "metric > m*"                                           cost per k
=========================  ============================================================  ==================
best_accuracy              the path touches TP - FP >= h* + 1                            O(P (P + N))
best_balanced_accuracy     touches t N - f P >= g* + 1                                   O(P (P + N))
best_f1                    touches (2 den - num) t - num f >= num P + 1 (m* = num/den)   O(P (P + N))
best_mcc                   t > the per-diagonal boundary of m*, strictly (exact integers)  O(P (P + N))
tp_at_k, precision_at_k    TP at diagonal k >= c* + 1                                    O(P k)
auc                        U >= u* + 1, the law of U carried along the lattice            O(P^2 N^2 / 4)
average_precision          every arrangement weighted by its probability (where the      C(P + N, P)
                           null enumerates: :func:`~.average_precision.enumerable`)
=========================  ============================================================  ==================

m* is the exact critical value, by the exact null's own rule (the smallest value x with
F(x) >= (1 - alpha)**(1/C), ties resolved with :data:`~tablegen.compute.exact.nulls.TIE_RTOL`): what
:func:`tablegen.critical_value` gives with ``method="exact"``.  A model is significant iff its value
is > m*, so the event is strict: the boundary of "> m*" is that of ">= m*" moved by one integer unit
(the half-planes' c + 1, the counts' c* + 1), or decided strictly in integers (best MCC).

Each routine returns an :class:`ExceedEvent`: the critical value, found once, and the probability of
the event for any k (:meth:`ExceedEvent.probability`), so that a search over k (the minimum
detectable effect) does not repeat the critical value.  Beyond its exact domain (AUC beyond
:data:`AUC_POWER_BUDGET`, average precision beyond the enumeration) a routine raises
:class:`~tablegen.errors.TablegenInputError` naming P and N: nothing here is approximate.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from tablegen.compute.exact.nulls import TIE_RTOL, critical_index
from tablegen.errors import TablegenInputError

#: Multiply-adds of the whole law of U, sum over lattice points of 2 (t f + 1), beyond which the AUC programme
#: refuses (the programme with retirement does about a fifth of them near the centre of U's law: ~3 s at the bound).
AUC_POWER_BUDGET = 2e10
#: Bytes of the AUC programme's two (min(P, N) + 1) x (P N + 1) arrays beyond which it refuses.
AUC_POWER_MEMORY = 1e9


#: CPU seconds per lattice point of the boundary programme (about 0.6-1.4 ns measured, one core, loaded machine).
SECONDS_PER_POINT = 2e-9
#: CPU seconds per multiply-add of the AUC programme (about 0.8 ns measured).
SECONDS_PER_AUC_MADD = 1.2e-9


def boundary_cost(P: int, N: int, cut: int | None = None) -> tuple[float, float]:
    """Estimated (single-core seconds, bytes) of one probability of a boundary programme: the walk visits at most
    min(P, D) + 1 points on each of D = P + N diagonals (D = min(cut, P + N) for TP at ``cut``).

    Examples
    --------
    >>> seconds, memory = boundary_cost(1000, 1000)
    >>> seconds < 0.01, memory
    (True, 32040.0)
    """
    depth = P + N if cut is None else min(int(cut), P + N)
    rows = min(P, depth) + 2
    return SECONDS_PER_POINT * float(rows) * float(depth), 16.0 * rows + 8.0 * (depth + 1)


def lehmann_k(auc: float) -> float:
    """The Lehmann exponent k = AUC / (1 - AUC) of an alternative with that AUC.

    Examples
    --------
    >>> lehmann_k(0.75), lehmann_k(0.5)
    (3.0, 1.0)
    """
    return auc / (1.0 - auc)


def lehmann_auc(k: float) -> float:
    """The AUC k / (k + 1) of the Lehmann alternative with exponent k.

    Examples
    --------
    >>> lehmann_auc(3.0)
    0.75
    """
    return k / (k + 1.0)


@dataclass(frozen=True)
class ExceedEvent:
    """The event "metric > m*" at (P, N): its critical value and its probability under any k.

    Attributes
    ----------
    P, N : int
        The cell.
    critical_value : float
        m*, as :func:`tablegen.critical_value` reports it with ``method="exact"``.
    """

    P: int
    N: int
    critical_value: float
    _probability: object = field(repr=False, compare=False)

    @property
    def size(self) -> float:
        """Pr(metric > m*) under the null (k = 1): the exact per-model level, <= t = 1 - (1 - alpha)**(1/C)."""
        return self.probability(1.0)

    def probability(self, k: float) -> float:
        """Pr_k(metric > m*) under the Lehmann alternative with exponent ``k`` (> 0), exactly.

        Examples
        --------
        >>> event = best_accuracy_event(10, 10, 0.05)
        >>> round(event.probability(1.0), 6) == round(event.size, 6)
        True
        """
        return min(max(float(self._probability(float(k))), 0.0), 1.0)


def _event_of(P: int, N: int, value: float, probability) -> ExceedEvent:
    return ExceedEvent(P, N, float(value), probability)


# -- the best-threshold metrics: boundaries on the lattice ------------------------------------------
def _half_plane_threshold(P: int, N: int, a: int, b: int, c: int) -> np.ndarray:
    """Per diagonal d, the lowest t with a t - b (d - t) >= c: ceil((c + b d)/(a + b)), clipped to [0, P + 1]."""
    d = np.arange(P + N + 1, dtype=object if max(abs(c), b * (P + N)) >= 2**62 else np.int64)
    threshold = -(-(c + b * d) // (a + b))
    return np.clip(threshold, 0, P + 1).astype(np.int64)


def _boundary_event(P: int, N: int, value: float, threshold: np.ndarray, stop: int | None = None) -> ExceedEvent:
    from tablegen.compute.kernels.lehmann import boundary_hit

    last = P + N if stop is None else int(stop)
    return _event_of(P, N, value, lambda k: boundary_hit(P, N, k, threshold, last))


def best_accuracy_event(P: int, N: int, tail: float, cut: int | None = None) -> ExceedEvent:
    """"best accuracy > m*": the walk TP - FP reaches h* + 1, m* = (N + h*)/(P + N) (closed-form null).

    Examples
    --------
    >>> event = best_accuracy_event(20, 20, 0.001)
    >>> event.critical_value, round(event.probability(3.0), 4)
    (0.775, 0.232)
    """
    from tablegen.compute.exact.closed_form import best_accuracy_null

    null = best_accuracy_null(P, N)
    index = critical_index(null, tail)
    h = max(0, P - N) + index
    return _boundary_event(P, N, null.values[index], _half_plane_threshold(P, N, 1, 1, h + 1))


def _family_event(family, tail: float) -> ExceedEvent:
    key, _ = family.critical(tail * (1.0 + TIE_RTOL))
    a, b, c = family.half_plane(key)
    threshold = _half_plane_threshold(family.P, family.N, a, b, c + 1)  # a t - b f > c
    return _boundary_event(family.P, family.N, family.value(key), threshold)


def best_balanced_accuracy_event(P: int, N: int, tail: float, cut: int | None = None) -> ExceedEvent:
    """"best balanced accuracy > m*": the walk t N - f P reaches g* + 1 (m* from the lattice null's search).

    Examples
    --------
    >>> best_balanced_accuracy_event(20, 20, 0.001).critical_value
    0.775
    """
    from tablegen.compute.exact.lattice import BalancedAccuracyKeys

    return _family_event(BalancedAccuracyKeys(P, N), tail)


def best_f1_event(P: int, N: int, tail: float, cut: int | None = None) -> ExceedEvent:
    """"best F1 > num/den": the walk (2 den - num) t - num f reaches num P + 1.

    Examples
    --------
    >>> best_f1_event(20, 20, 0.001).critical_value
    0.7916666666666666
    """
    from tablegen.compute.exact.lattice import BestF1Keys

    return _family_event(BestF1Keys(P, N), tail)


def best_mcc_event(P: int, N: int, tail: float, cut: int | None = None) -> ExceedEvent:
    """"best MCC > m*": on some diagonal k, G > the exact bound of m* (strict comparison in integers).

    Examples
    --------
    >>> event = best_mcc_event(20, 20, 0.001)
    >>> round(event.critical_value, 6), event.probability(1.0) <= 0.001
    (0.57735, True)
    """
    from tablegen.compute.exact.best_mcc import BestMccKeys

    family = BestMccKeys(P, N)
    key, _ = family.critical(tail * (1.0 + TIE_RTOL))
    threshold = np.full(P + N + 1, P + 1, dtype=np.int64)
    threshold[1:-1] = np.clip(family._t_bounds(key, strict=True), 0, P + 1)  # M > m* on diagonal k
    return _boundary_event(P, N, family.value(key), threshold)


def tp_at_k_event(P: int, N: int, tail: float, cut: int) -> ExceedEvent:
    """"TP among the top ``cut`` > c*": the walk is at t >= c* + 1 on diagonal min(cut, P + N).

    Examples
    --------
    >>> event = tp_at_k_event(20, 20, 0.05, 10)
    >>> event.critical_value, round(event.probability(1.0), 6)
    (7.0, 0.032417)
    """
    from tablegen.compute.exact.closed_form import tp_at_k_null

    null = tp_at_k_null(P, N, cut)
    index = critical_index(null, tail)
    depth = min(cut, P + N)
    threshold = np.full(depth + 1, P + 1, dtype=np.int64)  # the walk stops at diagonal depth
    threshold[depth] = int(null.values[index]) + 1
    return _boundary_event(P, N, null.values[index], threshold, stop=depth)


# -- AUC: the law of U along the lattice ------------------------------------------------------------
def auc_power_cost(P: int, N: int) -> tuple[float, float]:
    """(multiply-adds, bytes) of the AUC programme at (P, N), oriented with min(P, N) rows.

    Examples
    --------
    >>> auc_power_cost(2, 2)
    (36.0, 240.0)
    """
    rows, cols = min(P, N), max(P, N)
    madds = 2.0 * (rows * (rows + 1) / 2 * cols * (cols + 1) / 2 + (rows + 1) * (cols + 1))
    return madds, 2 * 8.0 * (rows + 1) * (P * N + 1)


def auc_exact_at(P: int, N: int) -> bool:
    """Whether the exact AUC power programme runs at (P, N) (within :data:`AUC_POWER_BUDGET` and memory).

    Examples
    --------
    >>> auc_exact_at(300, 300), auc_exact_at(10_000, 10_000)
    (True, False)
    """
    madds, memory = auc_power_cost(P, N)
    return madds <= AUC_POWER_BUDGET and memory <= AUC_POWER_MEMORY


def auc_power_pmf(P: int, N: int, k: float) -> np.ndarray:
    """The law of U = AUC P N under the Lehmann alternative, an array of P N + 1 (exact programme).

    Oriented with min(P, N) rows: swapping the classes turns the (P, N, k) walk into the (N, P, 1/k)
    walk and U into P N - U.

    Examples
    --------
    >>> [round(float(p), 6) for p in auc_power_pmf(1, 1, 3.0)]  # Pr(positive above) = k/(k+1)
    [0.25, 0.75]
    """
    from tablegen.compute.kernels.lehmann import auc_pmf

    _check_auc_domain(P, N)
    if P <= N:
        return auc_pmf(P, N, float(k))
    return auc_pmf(N, P, 1.0 / float(k))[::-1].copy()


def _check_auc_domain(P: int, N: int) -> None:
    if not auc_exact_at(P, N):
        madds, memory = auc_power_cost(P, N)
        raise TablegenInputError(
            f"P, N: exact Lehmann power of auc at P = {P}, N = {N} carries the law of U along the lattice "
            f"({madds:.2g} multiply-adds, {memory / 1e6:,.0f} MB), over its budget of {AUC_POWER_BUDGET:.2g} "
            f"and {AUC_POWER_MEMORY / 1e6:,.0f} MB; no exact power there")


def auc_upper_tail(P: int, N: int, k: float, target: int) -> float:
    """Pr_k(U >= target) by the programme with retirement
    (:func:`~tablegen.compute.kernels.lehmann.auc_tail`), oriented with min(P, N) rows: for P > N the
    (N, P, 1/k) walk's U' = P N - U, and Pr(U >= target) = Pr(U' < P N - target + 1), summed from its own terms.

    Examples
    --------
    >>> round(auc_upper_tail(1, 1, 3.0, 1), 12), round(auc_upper_tail(2, 1, 3.0, 1), 12)
    (0.75, 0.857142857143)
    """
    from tablegen.compute.kernels.lehmann import auc_tail

    _check_auc_domain(P, N)
    if P <= N:
        return auc_tail(P, N, float(k), int(target))[0]
    return auc_tail(N, P, 1.0 / float(k), P * N - int(target) + 1)[1]


def auc_event(P: int, N: int, tail: float, cut: int | None = None) -> ExceedEvent:
    """"AUC > u*/(P N)": Pr_k(U >= u* + 1) by the law of U along the lattice (m* from the exact AUC null).

    Examples
    --------
    >>> event = auc_event(10, 10, 0.05)
    >>> event.critical_value, round(event.probability(3.0), 4)
    (0.72, 0.6125)
    """
    from tablegen.compute.exact import null_critical_value
    from tablegen.compute.exact.auc import auc_null

    _check_auc_domain(P, N)
    value = null_critical_value(auc_null(P, N), tail)
    u = int(round(value * P * N))
    return _event_of(P, N, value, lambda k: auc_upper_tail(P, N, k, u + 1))


def auc_events_tails(k: float, cells, critical_values, memory: float) -> np.ndarray | None:
    """The probabilities of the events :func:`auc_event` sets ("AUC > m*", i.e. U >= m* P N + 1) at each cell of
    ``cells`` for one k, by one backward programme over every cell
    (:func:`tablegen.compute.kernels.lehmann_batch.auc_upper_tails`); None where it would need more than
    ``memory`` bytes.

    Examples
    --------
    >>> [round(float(x), 4) for x in auc_events_tails(3.0, [(10, 10)], [0.72], 1e9)]
    [0.6125]
    """
    from tablegen.compute.kernels.lehmann_batch import auc_upper_tails, batch_memory

    if batch_memory(cells) > memory:
        return None
    thresholds = [round(value * P * N) + 1 for (P, N), value in zip(cells, critical_values)]
    return auc_upper_tails(k, cells, thresholds)


# -- average precision: every arrangement ------------------------------------------------------------
def average_precision_event(P: int, N: int, tail: float, cut: int | None = None) -> ExceedEvent:
    """"AP > m*": the Lehmann probabilities of the arrangements whose AP lies in a support point above m*.

    Only where the null enumerates (:func:`~tablegen.compute.exact.average_precision.enumerable`): the
    support points are the null's (values grouped at its resolution), so "above m*" is the null's.

    Examples
    --------
    >>> event = average_precision_event(4, 6, 0.05)
    >>> round(event.critical_value, 6), round(event.probability(1.0), 6)
    (0.816667, 0.047619)
    """
    from tablegen.compute.exact.average_precision import VALUE_RESOLUTION, average_precision_null, enumerable

    if not enumerable(P, N):
        raise TablegenInputError(
            f"P, N: exact Lehmann power of average_precision needs every arrangement of P = {P}, N = {N} "
            f"(C(P + N, P) = {math.comb(P + N, P):,}), over the enumeration budget; no exact power there")
    null = average_precision_null(P, N)
    index = critical_index(null, tail)

    def probability(k: float) -> float:
        from tablegen.compute.kernels.lehmann import enumerate_weights

        count = math.comb(P + N, P)
        sums, weights = np.empty(count), np.empty(count)
        enumerate_weights(P, N, float(k), sums, weights)
        order = np.argsort(sums / P, kind="stable")
        values = (sums / P)[order]
        starts = np.flatnonzero(np.concatenate([[True], np.diff(values) >= VALUE_RESOLUTION]))
        if len(starts) != len(null.values) or np.max(np.abs(values[starts] - null.values)) > VALUE_RESOLUTION:
            raise AssertionError("the enumeration's support points differ from the null's")  # pragma: no cover
        if index + 1 >= len(starts):
            return 0.0
        return math.fsum(weights[order][starts[index + 1]:])

    return _event_of(P, N, null.values[index], probability)
