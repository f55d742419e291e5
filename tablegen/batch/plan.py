"""The plan of a job: the (P, N) grid cut into chunks of cells (one task each), minus those done.

A :class:`Chunk` is a small immutable value — index ranges along P and N — aligned with the Zarr
chunks of the store, so that a task writes exactly one chunk of every variable.  Planning never
computes statistics; it only needs the config, the done mask and the cost model.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tablegen.compute.cost import cell_seconds, shared_exact_seconds


@dataclass(frozen=True)
class Chunk:
    """Cells ``P[p_start:p_stop] x N[n_start:n_stop]`` of a job's grid (indices, not values)."""

    p_start: int
    p_stop: int
    n_start: int
    n_stop: int

    @property
    def p_slice(self) -> slice:
        return slice(self.p_start, self.p_stop)

    @property
    def n_slice(self) -> slice:
        return slice(self.n_start, self.n_stop)

    @property
    def size(self) -> int:
        """Number of cells."""
        return (self.p_stop - self.p_start) * (self.n_stop - self.n_start)

    def cells(self, config) -> list[tuple[int, int]]:
        """The (P, N) values of the chunk's cells, P-major."""
        return [(P, N) for P in config.P[self.p_slice] for N in config.N[self.n_slice]]

    def label(self, config) -> str:
        """A short human-readable name, e.g. ``P=20..30 N=20..1000``."""
        p_values, n_values = config.P[self.p_slice], config.N[self.n_slice]
        return f"P={p_values[0]}..{p_values[-1]} N={n_values[0]}..{n_values[-1]}"


def chunk_grid(config) -> list[Chunk]:
    """Every chunk of the grid, in P-major order, each at most ``config.chunks`` cells per axis."""
    step_p, step_n = config.chunks
    return [Chunk(p, min(p + step_p, len(config.P)), n, min(n + step_n, len(config.N)))
            for p in range(0, len(config.P), step_p) for n in range(0, len(config.N), step_n)]


@dataclass(frozen=True)
class Plan:
    """What a run will do: all chunks, those left to compute, and their estimated cost."""

    chunks: tuple[Chunk, ...]
    remaining: tuple[Chunk, ...]
    cells: int
    cells_done: int
    core_seconds: float
    core_seconds_remaining: float

    @property
    def cells_remaining(self) -> int:
        return self.cells - self.cells_done


def make_plan(config, done: np.ndarray | None = None) -> Plan:
    """Plan ``config`` given the store's done mask (None: nothing done yet).

    A chunk is remaining unless every one of its cells is done (tasks write whole chunks, so a
    partly done chunk only arises from a different chunking, which resuming refuses anyway).
    Remaining chunks are ordered most expensive first, so the long tasks start early.
    """
    done = np.zeros((len(config.P), len(config.N)), dtype=bool) if done is None else np.asarray(done, bool)
    chunks = chunk_grid(config)
    seconds = {chunk: chunk_seconds(config, chunk) for chunk in chunks}
    remaining = [chunk for chunk in chunks if not done[chunk.p_slice, chunk.n_slice].all()]
    remaining.sort(key=lambda chunk: -seconds[chunk])
    return Plan(
        chunks=tuple(chunks),
        remaining=tuple(remaining),
        cells=config.cells,
        cells_done=int(done.sum()),
        core_seconds=sum(seconds.values()),
        core_seconds_remaining=sum(seconds[chunk] for chunk in remaining),
    )


def chunk_seconds(config, chunk: Chunk) -> float:
    """Estimated single-core seconds of one chunk (sum of its cells, see :mod:`tablegen.compute.cost`)."""
    cells = chunk.cells(config)
    entries = config.metric_entries
    seconds = sum(cell_seconds(P, N, config.replicates, entries, config.exact,
                               len(config.Cs) * len(config.alphas)) for P, N in cells)
    if config.exact:
        seconds += shared_exact_seconds(cells, entries, len(config.Cs) * len(config.alphas))
    return seconds


def format_plan(config, plan: Plan) -> str:
    """The ``--dry-run`` report: cells, tasks, done/remaining and estimated core-hours."""
    lines = [
        f"job {config.name!r}: {len(config.P)} x {len(config.N)} = {plan.cells:,} cells, "
        f"R = {config.replicates:,}, {len(config.metrics)} metrics, C = {list(config.Cs)}, "
        f"alpha = {list(config.alphas)}, exact = {config.exact}",
        f"store {config.store_url}  (config hash {config.result_hash[:12]})",
        f"tasks: {len(plan.chunks):,} chunks of up to {config.chunks[0]} x {config.chunks[1]} cells; "
        f"{len(plan.chunks) - len(plan.remaining):,} done, {len(plan.remaining):,} remaining",
        f"cells: {plan.cells_done:,} done, {plan.cells_remaining:,} remaining",
        f"estimated cost (tablegen/compute/cost.py model): {_core_time(plan.core_seconds)} in all, "
        f"{_core_time(plan.core_seconds_remaining)} remaining"
        + (f"; about {_duration(plan.core_seconds_remaining / _cores(config))} on {_cores(config)} workers"
           if _cores(config) else ""),
    ]
    return "\n".join(lines)


def _cores(config) -> int:
    return int(config.cluster.get("workers", 0))


def _core_time(seconds: float) -> str:
    return f"{seconds:,.1f} core-seconds" if seconds < 360 else f"{seconds / 3600:,.2f} core-hours"


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"
