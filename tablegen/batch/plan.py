"""The plan of a job: the (P, N) grid cut into chunks of cells (one task each), minus those done.

A :class:`Chunk` is a small immutable value — index ranges along P and N — aligned with the Zarr
shards (or, unsharded, chunks) of the store, so that a task writes exactly one shard of every variable.  Planning never
computes statistics; it only needs the config, the done mask and the cost model.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from tablegen.compute.cost import (
    REGIME_TEXT,
    REGIMES,
    cell_seconds,
    monte_carlo_seconds,
    regimes,
    shared_exact_seconds,
    startup_seconds,
)


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
    """Every task's region of the grid, in P-major order, each at most ``config.task_cells`` per axis."""
    step_p, step_n = config.task_cells
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
    regimes: dict = field(default_factory=dict)
    exact_seconds: float = 0.0
    startup_seconds: float = 0.0
    chunk_seconds: dict = field(default_factory=dict, compare=False)
    power_seconds: float = 0.0

    @property
    def cells_remaining(self) -> int:
        return self.cells - self.cells_done


def make_plan(config, done: np.ndarray | None = None) -> Plan:
    """Plan ``config`` given the store's done mask (None: nothing done yet).

    A chunk is remaining unless every one of its cells is done (tasks write whole chunks, so a
    partly done chunk only arises from a different chunking, which resuming refuses anyway).
    Remaining chunks are ordered most expensive first, so the long tasks start early.  The Monte
    Carlo cost of every cell is computed over the whole grid at once (numpy), and summed per chunk.
    """
    done = np.zeros((len(config.P), len(config.N)), dtype=bool) if done is None else np.asarray(done, bool)
    chunks = chunk_grid(config)
    costs = grid_costs(config)
    seconds = dict(zip(chunks, costs.chunk_seconds.ravel().tolist()))
    chunk_done = np.logical_and.reduceat(np.logical_and.reduceat(done, costs.p_starts, axis=0),
                                         costs.n_starts, axis=1).ravel() if done.size else np.ones(0, bool)
    remaining = [chunk for chunk, finished in zip(chunks, chunk_done.tolist()) if not finished]
    remaining.sort(key=lambda chunk: -seconds[chunk])
    regimes = {name: (int(costs.regime_cells[r]), float(costs.regime_seconds[r]))
               for r, name in enumerate(REGIMES) if costs.regime_cells[r]}
    return Plan(
        chunks=tuple(chunks),
        remaining=tuple(remaining),
        cells=config.cells,
        cells_done=int(done.sum()),
        core_seconds=float(sum(seconds.values())),
        core_seconds_remaining=float(sum(seconds[chunk] for chunk in remaining)),
        regimes=regimes,
        exact_seconds=costs.exact_seconds,
        startup_seconds=startup_seconds(_cores(config), config.exact),
        chunk_seconds=seconds,
        power_seconds=costs.power_seconds,
    )


@dataclass(frozen=True)
class GridCosts:
    """Estimated seconds of a grid: per chunk (P-major, shaped by the chunk grid), per Monte Carlo regime
    (:data:`~tablegen.compute.cost.REGIMES`) and of the exact values; the chunks' first P and N indices."""

    chunk_seconds: np.ndarray
    regime_cells: np.ndarray
    regime_seconds: np.ndarray
    exact_seconds: float
    p_starts: np.ndarray
    n_starts: np.ndarray
    power_seconds: float = 0.0


def grid_costs(config) -> GridCosts:
    """The cost model (:mod:`tablegen.compute.cost`) over a job's whole grid."""
    P, N = np.meshgrid(np.asarray(config.P, np.int64), np.asarray(config.N, np.int64), indexing="ij")
    entries = config.metric_entries
    monte_carlo = monte_carlo_seconds(P, N, config.replicates, entries)
    regime = regimes(P, N, entries)
    step_p, step_n = config.task_cells
    p_starts, n_starts = np.arange(0, len(config.P), step_p), np.arange(0, len(config.N), step_n)
    chunk_seconds = np.add.reduceat(np.add.reduceat(monte_carlo, p_starts, axis=0), n_starts, axis=1)
    exact = 0.0
    if config.exact:
        pairs = len(config.Cs) * len(config.alphas)
        per_cell = sum((_per_cell_exact_seconds(spec, P, N, pairs) for spec in entries
                        if spec.exact_work == "per_cell"), np.zeros(P.shape))
        per_chunk = np.add.reduceat(np.add.reduceat(per_cell, p_starts, axis=0), n_starts, axis=1)
        if any(spec.exact_work == "shared" for spec in entries):
            for i, p0 in enumerate(p_starts.tolist()):
                for j, n0 in enumerate(n_starts.tolist()):
                    chunk = Chunk(p0, min(p0 + step_p, len(config.P)), n0, min(n0 + step_n, len(config.N)))
                    per_chunk[i, j] += shared_exact_seconds(chunk.cells(config), entries, pairs)
        chunk_seconds += per_chunk
        exact = float(per_chunk.sum())
    power = 0.0
    if config.power_levels:
        per_cell = np.array([[power_seconds(config, [(p, n)]) for n in config.N] for p in config.P])
        per_chunk = np.add.reduceat(np.add.reduceat(per_cell, p_starts, axis=0), n_starts, axis=1)
        chunk_seconds += per_chunk
        power = float(per_chunk.sum())
    return GridCosts(chunk_seconds, np.bincount(regime.ravel(), minlength=len(REGIMES)),
                     np.bincount(regime.ravel(), monte_carlo.ravel(), minlength=len(REGIMES)), exact,
                     p_starts, n_starts, power)


def power_seconds(config, cells) -> float:
    """Estimated single-core seconds of the minimum detectable AUC of ``cells`` (every metric, C, alpha and power
    level of the config's ``power:`` section; :func:`~tablegen.compute.exact.detectable.detectable_seconds`)."""
    from tablegen.compute.exact.detectable import detectable_seconds

    pairs, levels = len(config.Cs) * len(config.alphas), len(config.power_levels)
    return sum(detectable_seconds(spec, P, N, pairs, levels, config.power_max_seconds)
               for P, N in cells for spec in config.metric_entries) if levels else 0.0


def _per_cell_exact_seconds(spec, P: np.ndarray, N: np.ndarray, pairs: int) -> np.ndarray:
    """``pairs`` times the entry's :meth:`~tablegen.compute.metrics.Metric.exact_cost` of each cell where it
    is exact (0 elsewhere): its cost routine called once on the arrays where it takes them, else cell by cell."""
    at = (np.ones(P.shape, bool) if spec.exact_domain_routine is None
          else np.frompyfunc(spec.exact_at, 2, 1)(P, N).astype(bool))
    seconds = np.zeros(P.shape)
    if at.any():
        try:
            costs = np.broadcast_to(np.asarray(spec.exact_cost(P[at], N[at])[0], dtype=float), (int(at.sum()),))
        except (TypeError, ValueError):  # a routine written for one cell
            costs = np.array([spec.exact_cost(int(p), int(n))[0] for p, n in zip(P[at].tolist(), N[at].tolist())])
        seconds[at] = pairs * costs
    return seconds


def chunk_seconds(config, chunk: Chunk) -> float:
    """Estimated single-core seconds of one chunk (sum of its cells, see :mod:`tablegen.compute.cost`)."""
    cells = chunk.cells(config)
    entries = config.metric_entries
    seconds = sum(cell_seconds(P, N, config.replicates, entries, config.exact,
                               len(config.Cs) * len(config.alphas)) for P, N in cells)
    if config.exact:
        seconds += shared_exact_seconds(cells, entries, len(config.Cs) * len(config.alphas))
    return seconds + power_seconds(config, cells)


def format_plan(config, plan: Plan) -> str:
    """The ``--dry-run`` report: cells, tasks, done/remaining and estimated core-hours."""
    lines = [
        f"job {config.name!r}: {len(config.P)} x {len(config.N)} = {plan.cells:,} cells, "
        f"R = {config.replicates:,}, {len(config.metrics)} metrics, C = {list(config.Cs)}, "
        f"alpha = {list(config.alphas)}, exact = {config.exact}",
        f"store {config.store_url}  (config hash {config.result_hash[:12]})",
        f"tasks: {len(plan.chunks):,} chunks of up to {config.task_cells[0]} x {config.task_cells[1]} cells"
        + (f" (shards of {config.shard[0]} x {config.shard[1]} Zarr chunks)" if config.sharded else "")
        + "; "
        f"{len(plan.chunks) - len(plan.remaining):,} done, {len(plan.remaining):,} remaining",
        f"cells: {plan.cells_done:,} done, {plan.cells_remaining:,} remaining",
        f"estimated cost (tablegen/compute/cost.py model): {_core_time(plan.core_seconds)} in all, "
        f"{_core_time(plan.core_seconds_remaining)} remaining"
        + (f"; about {_duration(plan.core_seconds_remaining / _cores(config))} on {_cores(config)} workers"
           if _cores(config) else ""),
        "where it goes (CPU time of the whole grid, by regime; the start-up comes on top):",
    ]
    for name, (cells, seconds) in plan.regimes.items():
        lines.append(f"  {REGIME_TEXT[name] + ':':<58}{cells:>11,} cells, {_core_time(seconds)}")
    if config.exact:
        lines.append(f"  {'exact values:':<58}{'':>18}{_core_time(plan.exact_seconds)}")
    if config.power_levels:
        lines.append(f"  {'minimum detectable AUC:':<58}{'':>18}{_core_time(plan.power_seconds)}")
    workers = _cores(config)
    where = (f"this process and a LocalCluster of {workers} workers" if workers else
             "this process; each worker of the running cluster adds its own" if config.cluster
             else "this process")
    lines.append(f"  {'start-up (' + where + '):':<76}{_core_time(plan.startup_seconds)}")
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
