"""The batch job's task: compute one chunk's cells and write them into the store, data first, done flags last.

A task is what every executor runs (:mod:`tablegen.batch.executors`), in this process or on a dask
worker; it is idempotent, so a retry after a lost worker rewrites the same bytes.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

import numpy as np

from tablegen.batch.config import JobConfig
from tablegen.batch.plan import Chunk, power_seconds
from tablegen.compute.cell import exact_critical_values_for_cells, simulate_cell_values
from tablegen.compute.cost import cell_seconds
from tablegen.compute.mc import DEFAULT_BLOCK_SIZE
from tablegen.compute.validation import SimulateCellArgs
from tablegen.store.zarr_store import DATA_VARIABLES, write_chunk

logger = logging.getLogger(__name__)


#: ``report(done, left)``: a task's estimated single-core seconds done so far and those left of the step under way
#: (the cost model's, :mod:`tablegen.compute.cost`), called as each step starts (a cell's simulation, a metric's exact
#: values; ``left`` is then the whole step), within a cell's simulation after its blocks of replicates, and once at
#: the end (``left`` 0); ``done`` ends at :func:`~tablegen.batch.plan.chunk_seconds`.
WorkReport = Callable[[float, float], None]


def compute_chunk(config: JobConfig, chunk: Chunk, report: WorkReport | None = None,
                  report_every: float = 0.0) -> dict[str, np.ndarray]:
    """Every data variable of the chunk's cells, shaped as in the store over the chunk's region.

    The cells are simulated one by one, then the exact values are computed metric by metric, then (a ``power:``
    section) the minimum detectable AUC of every cell, one step (:func:`detectable_values`); ``report``
    is told the estimated seconds done and those of the next step before each (so a task reports as it
    starts, and then after each cell), and within a step the share of it done (a cell's blocks of
    replicates, the rows of AUC's exact sweep) at most every ``report_every`` seconds (:func:`block_reports`).
    The order changes no number: seeds are keyed on the cell.
    """
    pairs, entries = len(config.Cs) * len(config.alphas), config.metric_entries
    cells = chunk.cells(config)
    steps = [cell_seconds(P, N, config.replicates, entries, False, pairs) for P, N in cells]
    steps += [spec.cells_exact_seconds(cells, pairs) for spec in entries] if config.exact else []
    steps += [power_seconds(config, cells)] if config.power_levels else []
    step, done, report = iter(steps), 0.0, report or (lambda done, left: None)
    per_cell = {name: [] for name in DATA_VARIABLES}
    for P, N in cells:
        report(done, seconds := next(step))
        args = SimulateCellArgs(P, N, config.replicates, config.seed, config.metrics, config.Cs, config.alphas,
                                config.tail_probabilities, DEFAULT_BLOCK_SIZE)  # the config was checked on load
        arrays = simulate_cell_values(args, exact=False, device=config.device,  # NaN exact values
                                      progress=block_reports(report, done, seconds, report_every)).arrays()
        for name in DATA_VARIABLES:
            per_cell[name].append(np.array(arrays[name]))  # a copy: the exact values are filled in below
        done += seconds
    for i, spec in enumerate(entries if config.exact else ()):  # by metric: AUC's sweep serves every cell
        report(done, seconds := next(step))
        values = exact_critical_values_for_cells(cells, (spec,), config.Cs, config.alphas,
                                                 block_reports(report, done, seconds, report_every))
        for cell, exact in zip(cells, per_cell["exact_critical_value"], strict=True):
            exact[i] = values[cell][0]
        done += seconds
    if config.power_levels:  # the minimum detectable AUC of every cell: one step
        report(done, seconds := next(step))
        per_cell["minimum_detectable_auc"] = [detectable_values(config, P, N) for P, N in cells]
        done += seconds
    report(done, 0.0)
    shape = (chunk.p_stop - chunk.p_start, chunk.n_stop - chunk.n_start)
    return {name: _stack_cells(values, shape) for name, values in per_cell.items()}


def detectable_values(config: JobConfig, P: int, N: int) -> np.ndarray:
    """The minimum detectable AUC of every metric at (P, N), shaped (metric, power, alpha, C) as the store holds it
    (:func:`~tablegen.compute.exact.detectable.cell_detectable_aucs`; NaN where a metric has no exact Lehmann
    power at the cell, or one probability is estimated over the config's ``power.max_seconds``)."""
    from tablegen.compute.exact.detectable import cell_detectable_aucs

    return np.stack([cell_detectable_aucs(spec, P, N, config.Cs, config.alphas, config.power_levels,
                                          config.power_max_seconds) for spec in config.metric_entries])


def block_reports(report: WorkReport, done: float, seconds: float, every: float,
                  clock: Callable[[], float] = time.monotonic) -> Callable[[int, int], None]:
    """``progress(units_done, units)`` for a step of ``seconds`` (a cell's simulation,
    :func:`~tablegen.compute.cell.simulate_cell_values`, in replicates; a metric's exact values,
    :func:`~tablegen.compute.cell.exact_critical_values_for_cells`, in multiply-adds) that tells ``report`` the
    task's seconds done (``done`` before the step, and the share of the step's ``seconds`` done) and those left of
    the step, at most every ``every`` seconds; not at the end of the step (the next step's report follows at once).

    Examples
    --------
    >>> progress = block_reports(lambda done, left: print(done, left), 10.0, 4.0, every=0.0)
    >>> progress(65_536, 262_144), progress(262_144, 262_144)
    11.0 3.0
    (None, None)
    """
    last = clock()

    def progress(units: float, total: float) -> None:
        nonlocal last
        now = clock()
        if units < total and now - last >= every:
            last, share = now, units / total
            report(done + share * seconds, (1.0 - share) * seconds)
    return progress


def _stack_cells(values: list, shape: tuple[int, int]) -> np.ndarray:
    """Stack per-cell arrays (P-major) into one array with trailing (P, N) axes."""
    stacked = np.stack([np.asarray(v) for v in values], axis=-1)
    return stacked.reshape(stacked.shape[:-1] + shape)


def run_chunk(config: JobConfig, chunk: Chunk, report: WorkReport | None = None, report_every: float = 0.0) -> int:
    """The task: compute a chunk and write it into the store (data, then done flags).

    Idempotent: a retry after a lost worker rewrites the same bytes.  ``report`` is told the estimated
    seconds done as the work advances (:func:`compute_chunk`, within a cell at most every ``report_every``
    seconds).  Returns the number of cells.
    """
    start = time.perf_counter()
    arrays = compute_chunk(config, chunk, report, report_every)
    write_chunk(config.store_url, (chunk.p_slice, chunk.n_slice), arrays, config.storage_options)
    logger.info("chunk %s: %d cells in %.1f s", chunk.label(config), chunk.size, time.perf_counter() - start)
    return chunk.size
