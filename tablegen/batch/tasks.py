"""The batch job's task: compute one chunk's cells and write them into the store, data first, done flags last.

A task is what every executor runs (:mod:`tablegen.batch.executors`), in this process or on a dask
worker; it is idempotent, so a retry after a lost worker rewrites the same bytes.
"""

from __future__ import annotations

import logging
import time

import numpy as np

from tablegen.batch.config import JobConfig
from tablegen.batch.plan import Chunk
from tablegen.compute.cell import exact_critical_values_for_cells, simulate_cell_values
from tablegen.compute.mc import DEFAULT_BLOCK_SIZE
from tablegen.compute.validation import SimulateCellArgs
from tablegen.store.zarr_store import DATA_VARIABLES, write_chunk

logger = logging.getLogger(__name__)


def compute_chunk(config: JobConfig, chunk: Chunk) -> dict[str, np.ndarray]:
    """Every data variable of the chunk's cells, shaped as in the store over the chunk's region."""
    p_values, n_values = config.P[chunk.p_slice], config.N[chunk.n_slice]
    cells = chunk.cells(config)
    exact = (exact_critical_values_for_cells(cells, config.metric_entries, config.Cs, config.alphas)
             if config.exact else {})
    shape = (len(p_values), len(n_values))
    per_cell = {name: [] for name in DATA_VARIABLES}
    for P, N in cells:
        args = SimulateCellArgs(P, N, config.replicates, config.seed, config.metrics, config.Cs, config.alphas,
                                config.tail_probabilities, DEFAULT_BLOCK_SIZE)  # the config was checked on load
        arrays = simulate_cell_values(args, exact=False, device=config.device).arrays()  # NaN exact values
        if config.exact:
            arrays["exact_critical_value"] = exact[P, N]
        for name in DATA_VARIABLES:
            per_cell[name].append(arrays[name])
    return {name: _stack_cells(values, shape) for name, values in per_cell.items()}


def _stack_cells(values: list, shape: tuple[int, int]) -> np.ndarray:
    """Stack per-cell arrays (P-major) into one array with trailing (P, N) axes."""
    stacked = np.stack([np.asarray(v) for v in values], axis=-1)
    return stacked.reshape(stacked.shape[:-1] + shape)


def run_chunk(config: JobConfig, chunk: Chunk) -> int:
    """The task: compute a chunk and write it into the store (data, then done flags).

    Idempotent: a retry after a lost worker rewrites the same bytes.  Returns the number of cells.
    """
    start = time.perf_counter()
    arrays = compute_chunk(config, chunk)
    write_chunk(config.store_url, (chunk.p_slice, chunk.n_slice), arrays, config.storage_options)
    logger.info("chunk %s: %d cells in %.1f s", chunk.label(config), chunk.size, time.perf_counter() - start)
    return chunk.size
