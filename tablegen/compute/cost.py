"""Per-cell cost model of a job, measured on the development machine (used by ``tablegen run --dry-run``).

seconds(P, N, R) = SETUP + R * sampling(P, N) + PER_REPLICATE * R                 (Monte Carlo)
                 + pairs * (exact cost of one answer, per metric whose exact work is per cell)
plus, once per task, the estimate of each whole-grid exact routine over the task's cells (the
registry's :meth:`~tablegen.compute.metrics.Metric.cells_exact_seconds`: for AUC, PER_AUC_MADD * I^2 J^2 / 4
for the recursion sweep over the bounding rectangle (I, J) of the cells within the cell engine's
budget, and the tilted inversion's estimate per (C, alpha) for each cell above it).  Which metric
costs what is the metric registry's to say (:mod:`tablegen.compute.metrics`).

sampling(P, N) is PER_ELEMENT_STEP * (P + N) for the lane kernel and PER_MINORITY_RANKING +
PER_MINORITY_POSITION * min(P, N) for cells the minority-class kernel samples
(:func:`tablegen.compute.kernels.minority.uses_minority_sampling`), times the cost factors of the
extra kernel work the requested metrics' registry entries name (``lane_cost_factor``,
``minority_cost_factor``, combined by :class:`tablegen.compute.mc.KernelLayout`; best MCC's are from
``benchmarks/bench_mcc.py``).  ``pairs`` is the number of
(C, alpha) combinations.  The other coefficients come from ``benchmarks/bench_cost.py`` (one core of a
2-core AVX-512 cloud VM, 2026-11-21); rerun it on other hardware and the dry-run estimate scales with
them.  The per-replicate term is the tail bookkeeping
(floor filter, sort and merge of the retained upper tail) and the per-cell scoring set-up.
"""

from __future__ import annotations

from collections.abc import Sequence

from tablegen.compute.kernels.minority import uses_minority_sampling
from tablegen.compute.mc import KernelLayout
from tablegen.compute.metrics import Metric

SETUP_SECONDS = 4.6e-3
SECONDS_PER_ELEMENT_STEP = 6.4e-10
SECONDS_PER_MINORITY_RANKING = 1.7e-7
SECONDS_PER_MINORITY_POSITION = 6.9e-9
SECONDS_PER_REPLICATE = 1.42e-7


def cell_seconds(P: int, N: int, R: int, metrics: Sequence[Metric], exact: bool, critical_pairs: int) -> float:
    """Estimated single-core seconds for one cell (registry entries ``metrics``), Monte Carlo plus the exact
    values computed cell by cell.

    Exact work shared by the cells of a task (AUC's recursion sweep) is :func:`shared_exact_seconds`.
    """
    seconds = SETUP_SECONDS + R * sampling_seconds(P, N, metrics) + SECONDS_PER_REPLICATE * R
    if exact:
        seconds += critical_pairs * sum(spec.exact_cost(P, N)[0] for spec in metrics
                                        if spec.exact_work == "per_cell" and spec.exact_at(P, N))
    return seconds


def shared_exact_seconds(cells, metrics: Sequence[Metric], critical_pairs: int = 1) -> float:
    """Estimated seconds of a task's exact values that one whole-grid pass serves (AUC's sweep)."""
    return sum(spec.cells_exact_seconds(cells, critical_pairs) for spec in metrics if spec.exact_work == "shared")


def sampling_seconds(P: int, N: int, metrics: Sequence[Metric] = ()) -> float:
    """Estimated single-core seconds to sample and score one ranking of (P, N) for ``metrics``, by the
    kernel it uses, with the extra work the metrics' entries name (none when no metric is named).

    Examples
    --------
    >>> from tablegen.compute.metrics import metric_entries
    >>> mcc, auc = metric_entries(["best_mcc", "auc"])
    >>> round(sampling_seconds(1000, 1000, [mcc]) / sampling_seconds(1000, 1000, [auc]), 2)
    1.19
    """
    layout = KernelLayout.for_metrics(metrics, P, N)
    if uses_minority_sampling(P, N):
        seconds = SECONDS_PER_MINORITY_RANKING + SECONDS_PER_MINORITY_POSITION * min(P, N)
        return seconds * layout.minority_cost_factor
    return SECONDS_PER_ELEMENT_STEP * (P + N) * layout.lane_cost_factor
