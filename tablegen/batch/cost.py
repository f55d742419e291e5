"""Per-cell cost model of a job, measured on the development machine (used by ``tablegen run --dry-run``).

seconds(P, N, R) = SETUP + R * sampling(P, N) + PER_REPLICATE * R                 (Monte Carlo)
                 + pairs * (exact lattice cost, tablegen.compute.exact.lattice.lattice_cost, per lattice metric)
plus, once per task, PER_AUC_MADD * I^2 J^2 / 4 for the exact-AUC sweep over the bounding rectangle
(I, J) of the task's cells within the cell engine's recursion budget, and the tilted inversion's
estimate (:func:`tablegen.compute.exact.auc.tilted_auc_seconds`) per (C, alpha) for each cell above it.

sampling(P, N) is PER_ELEMENT_STEP * (P + N) for the lane kernel and PER_MINORITY_RANKING +
PER_MINORITY_POSITION * min(P, N) for cells the minority-class kernel samples
(:func:`tablegen.compute.kernels.minority.uses_minority_sampling`).  ``pairs`` is the number of (C, alpha)
combinations.  The coefficients come from
``benchmarks/bench_cost.py`` (one core of a 2-core AVX-512 cloud VM, 2026-11-21); rerun it on other
hardware and the dry-run estimate scales with them.  The per-replicate term is the tail bookkeeping
(floor filter, sort and merge of the retained upper tail) and the per-cell scoring set-up.
"""

from __future__ import annotations

from tablegen.compute.exact import exact_cost
from tablegen.compute.exact.auc import EXACT_AUC_BUDGET, SECONDS_PER_AUC_MADD, auc_cost, tilted_auc_seconds
from tablegen.compute.kernels.minority import uses_minority_sampling

SETUP_SECONDS = 4.6e-3
SECONDS_PER_ELEMENT_STEP = 6.4e-10
SECONDS_PER_MINORITY_RANKING = 1.7e-7
SECONDS_PER_MINORITY_POSITION = 6.9e-9
SECONDS_PER_REPLICATE = 1.42e-7

_LATTICE_METRICS = ("best_f1", "best_balanced_accuracy")


def cell_seconds(P: int, N: int, R: int, metrics, exact: bool, critical_pairs: int) -> float:
    """Estimated single-core seconds for one cell, Monte Carlo plus exact values except AUC's.

    Exact AUC is shared by the cells of a task (one recursion sweep): see :func:`auc_sweep_seconds`.
    """
    seconds = SETUP_SECONDS + R * sampling_seconds(P, N) + SECONDS_PER_REPLICATE * R
    if exact:
        seconds += critical_pairs * sum(exact_cost(metric, P, N)[0] for metric in metrics
                                        if metric in _LATTICE_METRICS)
    return seconds


def sampling_seconds(P: int, N: int) -> float:
    """Estimated single-core seconds to sample and score one ranking of (P, N), by the kernel it uses."""
    if uses_minority_sampling(P, N):
        return SECONDS_PER_MINORITY_RANKING + SECONDS_PER_MINORITY_POSITION * min(P, N)
    return SECONDS_PER_ELEMENT_STEP * (P + N)


def auc_sweep_seconds(cells, critical_pairs: int = 1) -> float:
    """Estimated seconds of a task's exact AUC: one recursion sweep over the cells within the budget
    (over their bounding rectangle, each oriented (max, min)), the tilted inversion for the others."""
    affordable = [(max(P, N), min(P, N)) for P, N in cells if auc_cost(P, N)[0] <= EXACT_AUC_BUDGET]
    seconds = critical_pairs * sum(tilted_auc_seconds(P, N) for P, N in cells
                                   if auc_cost(P, N)[0] > EXACT_AUC_BUDGET)
    if affordable:
        rows, cols = max(r for r, _ in affordable), max(c for _, c in affordable)
        seconds += SECONDS_PER_AUC_MADD * auc_cost(rows, cols)[0]
    return seconds
