"""Estimated cost of one exact Lehmann power probability (one k) at (P, N), by programme: the registry's
``power_cost_routine`` (:meth:`tablegen.compute.metrics.Metric.power_cost`), so that a caller can decide before
computing, without naming metrics.

The boundary walks (best accuracy, balanced accuracy, F1, MCC, TP@k) cost
:func:`tablegen.compute.exact.power.boundary_cost`; AUC carries the law of U
(:func:`tablegen.compute.exact.power.auc_power_cost` multiply-adds); average precision sums every arrangement.
"""

from __future__ import annotations

import math

#: CPU seconds per arrangement of one exact average-precision probability (1.1e-7 measured at C(24, 9) =
#: 1.3e6 arrangements, one core, load 6 on 2 cores).
SECONDS_PER_ARRANGEMENT = 1.5e-7


def auc_power_seconds(P: int, N: int) -> tuple[float, float]:
    """Estimated (single-core seconds, bytes) of one exact AUC power at (P, N) (the whole law's multiply-adds: the
    programme with retirement does about a fifth of them).

    Examples
    --------
    >>> seconds, memory = auc_power_seconds(100, 100)
    >>> 0.01 < seconds < 0.1
    True
    """
    from tablegen.compute.exact.power import SECONDS_PER_AUC_MADD, auc_power_cost

    madds, memory = auc_power_cost(P, N)
    return SECONDS_PER_AUC_MADD * madds, memory


def average_precision_power_seconds(P: int, N: int) -> tuple[float, float]:
    """Estimated (single-core seconds, bytes) of one exact average-precision power at (P, N): every arrangement.

    Examples
    --------
    >>> seconds, memory = average_precision_power_seconds(10, 10)
    >>> round(seconds, 4), memory
    (0.0277, 2956096.0)
    """
    arrangements = math.comb(P + N, P)
    return SECONDS_PER_ARRANGEMENT * arrangements, 16.0 * arrangements
