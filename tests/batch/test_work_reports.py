"""Tasks report their work as it advances (for the progress line), the same numbers whoever runs them, and a
LocalCluster run ends without a lost-result or killed-worker warning."""

from __future__ import annotations

import logging

import numpy as np
import pytest
from jobtools import assert_stores_bit_identical, small_config

from tablegen.batch.job import run
from tablegen.batch.plan import Chunk, chunk_grid, chunk_seconds
from tablegen.batch.tasks import block_reports, compute_chunk
from tablegen.compute.cell import exact_critical_values_for_cells
from tablegen.compute.mc import DEFAULT_BLOCK_SIZE

_SMALL = {"replicates": 10_000, "Cs": [10], "alphas": [0.05]}


def test_a_task_reports_each_step_before_it_starts_and_its_whole_cost_at_the_end(tmp_path):
    config = small_config(tmp_path / "unused.zarr", grid={"P": [5, 10], "N": [8, 16]}, **_SMALL)
    chunk = Chunk(0, 2, 0, 2)
    reports = []
    arrays = compute_chunk(config, chunk, lambda done, step: reports.append((done, step)), report_every=float("inf"))
    cells, metrics = chunk.size, len(config.metrics)
    assert len(reports) == cells + metrics + 1  # before each cell, before each metric's exact values, at the end
    assert reports[0][0] == 0 and reports[0][1] > 0  # the first comes before any work
    for (done, step), (next_done, _) in zip(reports, reports[1:]):
        assert next_done == pytest.approx(done + step)  # each step's cost is counted once it is done
    assert reports[-1] == (pytest.approx(chunk_seconds(config, chunk)), 0.0)  # the plan's estimate of the chunk
    # the exact values, filled in metric by metric, are those computed for all metrics at once
    whole = exact_critical_values_for_cells(chunk.cells(config), config.metric_entries, config.Cs, config.alphas)
    expected = np.stack([whole[cell] for cell in chunk.cells(config)], axis=-1).reshape(
        arrays["exact_critical_value"].shape)
    np.testing.assert_array_equal(arrays["exact_critical_value"], expected)


def test_a_serial_run_hands_every_report_to_on_work():
    config = small_config("memory://work-reports.zarr", grid={"P": [5], "N": [8, 16]}, **_SMALL)
    seen = []
    run(config, executor="serial", on_work=lambda chunk, done, step: seen.append((chunk, done, step)))
    chunk = Chunk(0, 1, 0, 2)
    assert {c for c, _, _ in seen} == {chunk}
    assert seen[-1][1] == pytest.approx(chunk_seconds(config, chunk)) and seen[-1][2] == 0.0


def test_a_serial_run_reports_within_a_cell_of_many_blocks_and_writes_the_same_store(tmp_path):
    """One cell of 4 blocks of replicates and a bit: on_work hears of the blocks before the cell ends (the
    share of its replicates done, what is left of it), and reporting changes no byte of the store."""
    R = 4 * DEFAULT_BLOCK_SIZE + 1
    config = small_config(tmp_path / "reported.zarr", grid={"P": [5], "N": [8]}, replicates=R, metrics=["auc"],
                          exact=False, Cs=[10], alphas=[0.05], chunks={"P": 1, "N": 1})
    chunk, seen = Chunk(0, 1, 0, 1), []
    run(config, executor="serial", on_work=lambda c, done, left: seen.append((done, left)))
    cell = chunk_seconds(config, chunk)
    within = [(done, left) for done, left in seen if 0 < done < cell]
    assert seen[0] == (0.0, pytest.approx(cell)) and seen[-1] == (pytest.approx(cell), 0.0)
    assert [done / cell for done, _ in within] == pytest.approx([k * DEFAULT_BLOCK_SIZE / R for k in range(1, 5)])
    assert all(done + left == pytest.approx(cell) for done, left in within)
    quiet = small_config(tmp_path / "quiet.zarr", grid={"P": [5], "N": [8]}, replicates=R, metrics=["auc"],
                         exact=False, Cs=[10], alphas=[0.05], chunks={"P": 1, "N": 1})
    run(quiet, executor="serial")
    assert_stores_bit_identical(config.store_url, quiet.store_url)


def test_the_exact_auc_sweep_reports_its_rows_as_it_goes():
    """AUC's exact values (one recursion sweep for the chunk, the longest step of the README's job) are reported
    row by row: the work done grows within the step, by the sweep's multiply-adds, and no number changes."""
    config = small_config("memory://unused.zarr", grid={"P": [5, 10], "N": [8, 16]}, metrics=["auc"], **_SMALL)
    chunk, reports = Chunk(0, 2, 0, 2), []
    arrays = compute_chunk(config, chunk, lambda done, left: reports.append((done, left)))
    quiet = compute_chunk(config, chunk, report_every=float("inf"))
    sweep = config.metric_entries[0].cells_exact_seconds(chunk.cells(config), 1)
    start = chunk_seconds(config, chunk) - sweep
    within = [done for done, _ in reports if start < done < start + sweep]
    assert len(within) == 16 - 1 and within == sorted(within)  # 16 rows (max(P, N)), the last not reported
    for name in arrays:
        np.testing.assert_array_equal(arrays[name], quiet[name])


def test_block_reports_come_at_most_every_so_many_seconds_and_never_after_the_last_block():
    clock, reports = iter([0.0, 0.1, 0.6, 0.7, 1.3, 1.4]).__next__, []
    progress = block_reports(lambda done, left: reports.append((done, left)), 2.0, 10.0, every=0.5, clock=clock)
    for blocks in (1, 2, 3, 4, 5):  # at 0.1 s (too soon), 0.6 s, 0.7 s (too soon), 1.3 s, 1.4 s (the last block)
        progress(blocks, 5)
    assert reports == [(6.0, 6.0), (10.0, pytest.approx(2.0))]


@pytest.mark.slow
def test_a_local_cluster_run_reports_from_its_workers_and_ends_without_warnings(tmp_path):
    config = small_config(tmp_path / "cluster.zarr", **_SMALL)
    seen, records = [], _Records()
    logging.getLogger("distributed").addHandler(records)  # dask's loggers may not propagate to the root
    try:
        run(config, on_work=lambda chunk, done, step: seen.append((chunk, done, step)))
    finally:
        logging.getLogger("distributed").removeHandler(records)
    reports = [(chunk, done) for chunk, done, _ in seen if chunk is not None]  # None: a look with no news
    assert reports and {chunk for chunk, _ in reports} <= set(chunk_grid(config))
    assert all(done <= chunk_seconds(config, chunk) * (1 + 1e-9) for chunk, done in reports)
    noise = [message for message in records.messages if "still alive" in message or "lose already" in message]
    assert not noise, noise


class _Records(logging.Handler):
    def __init__(self):
        super().__init__(logging.WARNING)
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())
