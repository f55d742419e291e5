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
``tests/test_average_precision_exact.py``.

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
    return (P >= 1 and N >= 0 and arrangements(P, N) <= ENUMERATION_BUDGET
            and 8 * (2 * P + 1) * _UNIT_ROUNDOFF <= VALUE_RESOLUTION)


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

