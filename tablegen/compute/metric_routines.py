"""How a metric's registry entry answers from the routines it names: each a ``"module:function"`` path into a
layer below the registry (:mod:`tablegen.compute.exact`, :mod:`tablegen.compute.swap_bounds`), imported and
looked up only when asked, so ``import tablegen.compute.metrics`` stays cheap and a closed-form lookup loads no
numba.

:class:`MetricRoutines` is the part of :class:`tablegen.compute.metrics.Metric` that resolves them (its exact
null, power event, costs and domains); the entries themselves, their fields and the registry live in
:mod:`tablegen.compute.metrics`.
"""

from __future__ import annotations

import functools
import importlib
import math
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

#: Seconds of a closed-form exact answer (O(P + N) at most): negligible at any size a user has.
CLOSED_FORM_SECONDS = 1e-3
#: Exact answers a search asks of one null, each at :meth:`MetricRoutines.exact_cost`: the max-T critical value's
#: with competitors not given (2 for the estimate and each end of its interval where the guess is right, more where
#: it is not) and the models' tails.
SEARCH_QUERIES = 8


@functools.cache
def resolve_routine(path: str) -> Callable:
    """The function ``module:name`` (every path here names a routine in a layer below the registry; looked
    up once: a grid's plan asks for millions).

    Examples
    --------
    >>> resolve_routine("math:sqrt")(4.0)
    2.0
    """
    module, name = path.split(":")
    return getattr(importlib.import_module(module), name)


class MetricRoutines:
    """The methods of a :class:`~tablegen.compute.metrics.Metric` that call the routines its fields name (the
    fields, ``k`` and :meth:`~tablegen.compute.metrics.Metric.count_divisor` are the entry's own)."""

    def swap_constants(self, labels: np.ndarray) -> np.ndarray | None:
        """Each item's bounded-difference constant (:attr:`swap_constant_routine`), None where none is proved."""
        return None if self.swap_constant_routine is None else resolve_routine(self.swap_constant_routine)(labels)

    @property
    def has_exact(self) -> bool:
        """Whether :mod:`tablegen.compute.exact` has an exact null distribution for it."""
        return self.exact_routine is not None

    @property
    def exact_work(self) -> str:
        """How a run's exact values cost: "none" (no routine), "negligible" (closed form),
        "per_cell" (:meth:`exact_cost` for each cell and (C, alpha)) or "shared" (one
        whole-grid pass over a task's cells, :meth:`cells_exact_seconds`)."""
        if not self.has_exact:
            return "none"
        if self.cells_routine is not None:
            return "shared"
        return "per_cell" if self.cost_routine is not None else "negligible"

    def exact_at(self, P: int, N: int) -> bool:
        """Whether the exact routine answers (P, N) exactly (see :attr:`exact_domain_routine`).

        Examples
        --------
        >>> from tablegen.compute.metrics import get_metric
        >>> get_metric("average_precision").exact_at(3, 5), get_metric("average_precision").exact_at(20, 20)
        (True, False)
        """
        if not self.has_exact:
            return False
        return self.exact_domain_routine is None or bool(resolve_routine(self.exact_domain_routine)(P, N))

    def exact_null(self, P: int, N: int):
        """Exact null distribution object at (P, N) (see :mod:`tablegen.compute.exact.nulls`).

        Raises
        ------
        ValueError
            If the metric has no exact routine.

        Examples
        --------
        >>> from tablegen.compute.metrics import get_metric
        >>> get_metric("best_accuracy").exact_null(2, 2).values.tolist()
        [0.5, 0.75, 1.0]
        """
        if not self.has_exact:
            raise ValueError(f"metric {self.name!r} has no exact null distribution; use the Monte Carlo")
        routine = resolve_routine(self.exact_routine)
        if self.k is None:
            return routine(P, N)
        from tablegen.compute.exact.nulls import TabulatedNull

        null = routine(P, N, self.k)
        divisor = self.count_divisor(P, N)
        return null if divisor == 1 else TabulatedNull(values=null.values / divisor, tail_ge=null.tail_ge)

    def lehmann_event(self, P: int, N: int, tail: float):
        """The event "metric > m*" at (P, N) for the per-competitor ``tail``, with its exact probability under
        any Lehmann alternative (:class:`tablegen.compute.exact.power.ExceedEvent`; m* in the metric's units).

        Raises
        ------
        ValueError
            If the metric has no power model (:attr:`power_routine`).

        Examples
        --------
        >>> from tablegen.compute.metrics import get_metric
        >>> event = get_metric("precision_at_10").lehmann_event(20, 20, 0.05)
        >>> event.critical_value, round(event.probability(1.0), 6)
        (0.7, 0.032417)
        """
        if self.power_routine is None:
            raise ValueError(f"metric {self.name!r} has no exact power model")
        event = resolve_routine(self.power_routine)(P, N, tail, self.k)
        divisor = self.count_divisor(P, N)
        if divisor == 1:
            return event
        import dataclasses

        return dataclasses.replace(event, critical_value=event.critical_value / divisor)

    def lehmann_batch(self, k: float, cells, critical_values, memory: float):
        """The exact Lehmann probabilities of "metric > m*" at many cells for one k in one pass (m* per cell in
        the metric's units), or None where the metric has no batch routine or it would need more than ``memory``
        bytes (:attr:`power_batch_routine`).

        Examples
        --------
        >>> from tablegen.compute.metrics import get_metric
        >>> [round(float(x), 4) for x in get_metric("auc").lehmann_batch(3.0, [(10, 10)], [0.72], 1e9)]
        [0.6125]
        >>> get_metric("best_f1").lehmann_batch(3.0, [(10, 10)], [0.7], 1e9) is None
        True
        """
        if self.power_batch_routine is None:
            return None
        return resolve_routine(self.power_batch_routine)(k, cells, critical_values, memory)

    def power_exact_at(self, P: int, N: int) -> bool:
        """Whether :meth:`lehmann_event` is exact (and runs) at (P, N).

        Examples
        --------
        >>> from tablegen.compute.metrics import get_metric
        >>> get_metric("auc").power_exact_at(50, 50), get_metric("average_precision").power_exact_at(20, 20)
        (True, False)
        """
        if self.power_routine is None:
            return False
        return self.power_domain_routine is None or bool(resolve_routine(self.power_domain_routine)(P, N))

    def tabulated_null(self, P: int, N: int):
        """The whole exact null at (P, N), every candidate value listed (``values``, ``tail_ge_at``)."""
        if self.tabulated_routine is not None:
            return resolve_routine(self.tabulated_routine)(P, N)
        return self.exact_null(P, N)

    def tied_null(self, group_sizes, P: int):
        """The exact null given tie groups of ``group_sizes`` (ascending score) and P positives.

        Raises
        ------
        ValueError
            If the metric has no tie-conditional routine (:attr:`tied_null_routine`).

        Examples
        --------
        >>> from tablegen.compute.metrics import get_metric
        >>> null = get_metric("auc").tied_null([2, 2], 2)  # k positives in the upper group: AUC = k / 2
        >>> null.values.tolist(), round(float(null.tail_ge_score(1.0)), 12)  # 1 of C(4, 2) = 6 label sets
        ([0.0, 0.5, 1.0], 0.166666666667)
        """
        if self.tied_null_routine is None:
            raise ValueError(f"metric {self.name!r} has no exact null given ties; the no-ties null tests it")
        return resolve_routine(self.tied_null_routine)(group_sizes, P)

    def tied_null_cost(self, group_sizes, P: int) -> tuple[float, float]:
        """Estimated (single-core seconds, peak bytes) of :meth:`tied_null` and one answer from it."""
        if self.tied_cost_routine is None:
            return math.inf, math.inf
        return resolve_routine(self.tied_cost_routine)(group_sizes, P)

    def exact_nulls(self, cells, progress=None) -> Iterator[tuple[tuple[int, int], object]]:
        """(cell, exact null) for each cell, from the whole-grid routine where there is one, else cell
        by cell as the iteration reaches it; nothing for a metric without an exact routine, nor for a
        cell outside its exact domain (:meth:`exact_at`).  ``progress(done, total)``, if given, is passed
        to the whole-grid routine (AUC's sweep tells it of each row)."""
        if not self.has_exact:
            return
        cells = [(int(P), int(N)) for P, N in cells]
        if self.cells_routine is not None:
            routine = resolve_routine(self.cells_routine)
            nulls = routine(cells) if progress is None else routine(cells, progress)
            yield from ((cell, nulls[cell]) for cell in cells)
            return
        for P, N in cells:
            if self.exact_at(P, N):
                yield (P, N), self.exact_null(P, N)

    def power_cost(self, P: int, N: int) -> tuple[float, float]:
        """Estimated (single-core seconds, bytes) of one exact Lehmann power probability (one k) at (P, N), where
        :meth:`power_exact_at`; ``(inf, inf)`` without a power model.

        Examples
        --------
        >>> from tablegen.compute.metrics import get_metric
        >>> get_metric("best_f1").power_cost(1000, 1000)[0] < get_metric("auc").power_cost(100, 100)[0]
        True
        """
        if self.power_routine is None:
            return float("inf"), float("inf")
        if self.power_cost_routine is not None:
            return resolve_routine(self.power_cost_routine)(P, N)
        from tablegen.compute.exact.power import boundary_cost

        return boundary_cost(P, N, self.k)

    def exact_cost(self, P: int, N: int) -> tuple[float, float]:
        """Estimated (single-core seconds, peak bytes) of one exact critical value or p-value at (P, N).

        ``(inf, inf)`` without an exact routine.
        """
        if not self.has_exact:
            return float("inf"), float("inf")
        if self.cost_routine is not None:
            return resolve_routine(self.cost_routine)(P, N)
        return CLOSED_FORM_SECONDS, 16.0 * (min(self.k or P, P) + 1)

    def search_seconds(self, P: int, N: int) -> float:
        """Estimated single-core seconds of a search's questions of the exact null at (P, N) (the max-T critical
        value with competitors not given, and the models' tails): :attr:`search_cost_routine`'s where the null
        answers them from programmes run once, else :data:`SEARCH_QUERIES` answers of :meth:`exact_cost`.

        Examples
        --------
        >>> from tablegen.compute.metrics import get_metric
        >>> ap = get_metric("average_precision")
        >>> round(ap.search_seconds(600, 1400) / ap.exact_cost(600, 1400)[0], 1)
        2.0
        """
        if self.search_cost_routine is not None:
            return float(resolve_routine(self.search_cost_routine)(P, N))
        return SEARCH_QUERIES * self.exact_cost(P, N)[0]

    def cells_exact_seconds(self, cells, critical_pairs: int = 1) -> float:
        """Estimated seconds of the exact values of ``cells`` (``critical_pairs`` (C, alpha) each) in one
        run: the whole-grid routine's estimate, or each cell's :meth:`exact_cost` (0 for a closed form)."""
        work = self.exact_work
        if work == "shared":
            return resolve_routine(self.cells_cost_routine)(cells, critical_pairs)
        if work == "per_cell":
            return critical_pairs * sum(self.exact_cost(P, N)[0] for P, N in cells if self.exact_at(P, N))
        return 0.0
