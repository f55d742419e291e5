"""Cost model of a job, in single-core CPU seconds, fitted on this project's benchmarks (used by
``tablegen run --dry-run``, the run's progress line and a simulated lookup's choice of R).

Monte Carlo, per cell::

    seconds(P, N, R) = SETUP + R * (sampling(P, N) + PER_REPLICATE * metrics)

sampling(P, N) is LANE_RANKING + PER_ELEMENT_STEP * (P + N) for the lane kernel and MINORITY_RANKING +
MINORITY_POSITION * min(P, N) + MINORITY_RANK * (P + N) (the bitmap of ranks it scans) for cells the
minority-class kernel samples (:func:`tablegen.compute.kernels.minority.uses_minority_sampling`), times
the cost factors of the extra kernel work the requested metrics' registry entries name
(``lane_cost_factor``, ``minority_cost_factor``, combined by :class:`tablegen.compute.mc.KernelLayout`;
best MCC's are from ``benchmarks/bench_mcc.py``).  PER_REPLICATE is the tail bookkeeping of one metric
per ranking (on the CPU counts per value or a bucketed stream, :func:`tablegen.compute.mc.tail_sinks`,
with the default tail probabilities, whose deepest keeps 10% of R).  Exact values add, per cell, ``pairs``
(the (C, alpha) combinations) times each per-cell routine's cost, and once per task each whole-grid
routine's estimate over the task's cells (the registry's
:meth:`~tablegen.compute.metrics.Metric.cells_exact_seconds`; for AUC one recursion sweep).  Which metric
costs what is the metric registry's to say (:mod:`tablegen.compute.metrics`).

Start-up, once per run (:func:`startup_seconds`): the command's process, and for a LocalCluster the
cluster itself and each worker process (start, imports, the first task's kernels loaded from numba's
cache, and the exact routines' modules in a job with exact values).

The regimes a cell falls in (:func:`regimes`, shown by ``--dry-run``): *skewed* (the minority-class
kernel), *small* (the lane kernel, tail bookkeeping at least the sampling), *large* (P + N >=
:data:`LARGE_CELL`: tables beyond the caches, lanes replayed at Lemire rejections) and *lane*.

The coefficients come from ``benchmarks/bench_cost.py`` (CPU time, one core of a 2-core AVX-512 AMD
EPYC cloud VM under load, 2026-11-25, figures in ``benchmarks/results/cost.md``; the start-up's from two
runs of it, as its rows are noisy); rerun it on other hardware and the estimates scale with them.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from tablegen.compute.kernels.minority import uses_minority_sampling
from tablegen.compute.mc import KernelLayout
from tablegen.compute.metrics import Metric

SETUP_SECONDS = 4.6e-3
SECONDS_PER_LANE_RANKING = 5.1e-9
SECONDS_PER_ELEMENT_STEP = 6.35e-10
SECONDS_PER_MINORITY_RANKING = 8.9e-8
SECONDS_PER_MINORITY_POSITION = 7.4e-9
SECONDS_PER_MINORITY_RANK = 7.1e-12
SECONDS_PER_REPLICATE = 4.55e-9
#: CPU seconds of starting the command (imports, config, store).
STARTUP_SECONDS = 2.7
#: CPU seconds of a LocalCluster itself (scheduler, nannies, dashboard), when the run starts one.
STARTUP_SECONDS_CLUSTER = 0.3
#: CPU seconds per LocalCluster worker: its process, imports and the first task's kernels from the cache ...
STARTUP_SECONDS_PER_WORKER = 1.1
#: ... and the exact routines' modules its first task loads, in a job with exact values (bench_cost's fits:
#: 0.82 on AMD EPYC, 2026-11-25; 0.07 on Intel Xeon, 2026-11-27; the larger kept).
STARTUP_SECONDS_PER_WORKER_EXACT = 0.8
#: P + N from which a lane-kernel cell is *large* (its tables leave the caches; most rankings replay a lane).
LARGE_CELL = 20_000
#: The regimes of :func:`regimes`, in the order ``--dry-run`` lists them.
REGIMES = ("small", "lane", "large", "skewed")
REGIME_TEXT = {"small": "small cells (lane kernel; tail bookkeeping >= sampling)",
               "lane": "lane kernel (sampling > tail bookkeeping)",
               "large": f"large cells (lane kernel, P + N >= {LARGE_CELL:,})",
               "skewed": "skewed cells (minority-class kernel)"}


def cell_seconds(P: int, N: int, R: int, metrics: Sequence[Metric], exact: bool, critical_pairs: int) -> float:
    """Estimated single-core seconds for one cell (registry entries ``metrics``), Monte Carlo plus the exact
    values computed cell by cell.

    Exact work shared by the cells of a task (AUC's recursion sweep) is :func:`shared_exact_seconds`.

    Examples
    --------
    >>> from tablegen.compute.metrics import metric_entries
    >>> seconds = cell_seconds(1000, 1000, 10**6, metric_entries(["auc"]), exact=False, critical_pairs=1)
    >>> 0.1 < seconds < 10
    True
    """
    seconds = SETUP_SECONDS + R * (sampling_seconds(P, N, metrics) + SECONDS_PER_REPLICATE * max(len(metrics), 1))
    if exact:
        seconds += critical_pairs * sum(spec.exact_cost(P, N)[0] for spec in metrics
                                        if spec.exact_work == "per_cell" and spec.exact_at(P, N))
    return seconds


def monte_carlo_seconds(P, N, R: int, metrics: Sequence[Metric]) -> np.ndarray:
    """:func:`cell_seconds` without exact values, over arrays of P and N at once (the plan of a grid).

    Examples
    --------
    >>> from tablegen.compute.metrics import metric_entries
    >>> entries = metric_entries(["auc", "best_mcc"])
    >>> float(monte_carlo_seconds(np.array([300]), np.array([20]), 10**5, entries)[0]) == cell_seconds(
    ...     300, 20, 10**5, entries, exact=False, critical_pairs=0)
    True
    """
    P, N = np.asarray(P, dtype=np.int64), np.asarray(N, dtype=np.int64)
    lane, minority = _sampling_arrays(P, N, metrics)
    sampling = np.where(uses_minority_sampling(P, N), minority, lane)
    return SETUP_SECONDS + R * (sampling + SECONDS_PER_REPLICATE * max(len(metrics), 1))


def regimes(P, N, metrics: Sequence[Metric]) -> np.ndarray:
    """Index into :data:`REGIMES` of each cell (arrays of P and N): which cost dominates its Monte Carlo.

    Examples
    --------
    >>> from tablegen.compute.metrics import metric_entries
    >>> entries = metric_entries(["auc", "best_f1"])
    >>> [REGIMES[i] for i in regimes(np.array([2, 1000, 50000, 20]), np.array([2, 1000, 50000, 5000]), entries)]
    ['small', 'lane', 'large', 'skewed']
    """
    P, N = np.asarray(P, dtype=np.int64), np.asarray(N, dtype=np.int64)
    lane, _ = _sampling_arrays(P, N, metrics)
    bookkeeping = SECONDS_PER_REPLICATE * max(len(metrics), 1)
    index = np.where(lane <= bookkeeping, 0, np.where(P + N >= LARGE_CELL, 2, 1))
    return np.where(uses_minority_sampling(P, N), 3, index)


def startup_seconds(workers: int, exact: bool = True) -> float:
    """Estimated CPU seconds of a run's start-up with a LocalCluster of ``workers`` (0: no cluster, as the
    serial executor or a cluster that is already running), for a job with or without exact values.

    Examples
    --------
    >>> startup_seconds(0) < startup_seconds(1, exact=False) < startup_seconds(1) < startup_seconds(2)
    True
    """
    if workers == 0:
        return STARTUP_SECONDS
    per_worker = STARTUP_SECONDS_PER_WORKER + (STARTUP_SECONDS_PER_WORKER_EXACT if exact else 0.0)
    return STARTUP_SECONDS + STARTUP_SECONDS_CLUSTER + per_worker * workers


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
    lane, minority = _sampling_arrays(np.int64(P), np.int64(N), metrics)
    return float(minority if uses_minority_sampling(P, N) else lane)


def _sampling_arrays(P, N, metrics: Sequence[Metric]):
    """(lane kernel, minority kernel) seconds per ranking, elementwise over P and N."""
    layout = KernelLayout.for_metrics(metrics, 2, 2)  # the factors depend on the metrics only
    lane = (SECONDS_PER_LANE_RANKING + SECONDS_PER_ELEMENT_STEP * (P + N)) * layout.lane_cost_factor
    minority = (SECONDS_PER_MINORITY_RANKING + SECONDS_PER_MINORITY_POSITION * np.minimum(P, N)
                + SECONDS_PER_MINORITY_RANK * (P + N)) * layout.minority_cost_factor
    return lane, minority


