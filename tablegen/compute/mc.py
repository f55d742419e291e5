"""Monte Carlo cell engine: blocks of replicates through the numba kernel into tail accumulators.

Replicate r of cell (P, N) under root seed s is always the same ranking (its generator state is a
function of ``SeedSequence(s, spawn_key=(P, N))`` and r alone, :mod:`tablegen.compute.kernels.rng`), and the
tails merge exactly (:mod:`tablegen.compute.accumulator`), so the result is bit-identical whatever the
block size, the order of the blocks or the worker that ran them.  Memory is one block of kernel
output plus the retained tails, independent of R beyond the tail itself.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from tablegen.compute.accumulator import (
    BucketStream,
    CountedTails,
    Tail,
    TailStream,
    ValueTable,
    tail_add,
    tail_empty,
    tail_merge,
    value_table,
)
from tablegen.compute.kernels.lanes import lane_output, simulate_rows
from tablegen.compute.kernels.minority import (
    MINORITY_FIXED,
    MINORITY_PER_POSITION,
    simulate_minority_block,
    uses_minority_sampling,
)
from tablegen.compute.kernels.ranking import BASE_COLUMNS, TP_COLUMN, simulate_block
from tablegen.compute.limits import BASE_TABLE_BYTES_PER_RANK, check_memory, ranking_memory, tails_memory
from tablegen.compute.metrics import Metric
from tablegen.compute.stats import tail_rank, upper_ranks

logger = logging.getLogger(__name__)

#: Name of the random stream recorded with every result.
RNG_NAME = ("xoshiro256** per replicate, keyed by splitmix64 on SeedSequence(seed, spawn_key=(P, N)); "
            f"Floyd sampling of the minority class where {MINORITY_FIXED} + {MINORITY_PER_POSITION} min(P, N) "
            "<= P + N, "
            "else sequential sampling (v2)")
DEFAULT_BLOCK_SIZE = 1 << 16


def cell_key(seed: int, P: int, N: int) -> tuple[np.uint64, np.uint64]:
    """The 128-bit key of cell (P, N) under root ``seed``."""
    words = np.random.SeedSequence(seed, spawn_key=(P, N)).generate_state(2, np.uint64)
    return np.uint64(words[0]), np.uint64(words[1])


@dataclass(frozen=True)
class KernelLayout:
    """Where each requested metric sits in the kernel's output columns, and which kernel variant runs."""

    ks: np.ndarray
    columns: dict[str, int]
    specs: tuple = ()

    @property
    def variants(self) -> frozenset:
        """The extra kernel work the requested metrics' entries name (``Metric.kernel_variant``)."""
        return frozenset(spec.kernel_variant for spec in self.specs if spec.kernel_variant)

    @property
    def with_mcc(self) -> bool:
        """Whether a requested metric needs best MCC's kernel work (the kernels' compile-time flag).

        If not, the kernels run their variant without that work and leave the best-MCC column
        (:data:`~tablegen.compute.kernels.ranking.MCC_COLUMN`) NaN (every other column is the same, bit for bit).
        """
        return "mcc" in self.variants

    @property
    def alone_variant(self) -> str | None:
        """The lane kernel's variant that steps the one metric asked alone (its entry's ``alone_variant``; None
        where several are asked, or cut-offs): its column the same values, bit for bit, the others NaN.

        Examples
        --------
        >>> from tablegen.compute.metrics import metric_entries
        >>> [KernelLayout.for_metrics(metric_entries(names), 20, 30).alone_variant
        ...  for names in (["average_precision"], ["average_precision", "auc"], ["auc"])]
        ['ap', None, None]
        """
        return self.specs[0].alone_variant if len(self.specs) == 1 and self.ks.size == 0 else None

    def _per_variant(self, field: str) -> list[float]:
        chosen = {}
        for spec in self.specs:
            if spec.kernel_variant:
                chosen[spec.kernel_variant] = getattr(spec, field)
        return list(chosen.values())

    @property
    def lane_cost_factor(self) -> float:
        """Factor on the lane kernel's sampling time for the requested extra work (1 without)."""
        return float(np.prod(self._per_variant("lane_cost_factor")))

    @property
    def minority_cost_factor(self) -> float:
        """Factor on the minority-class kernel's sampling time for the requested extra work (1 without)."""
        return float(np.prod(self._per_variant("minority_cost_factor")))

    @property
    def table_bytes_per_rank(self) -> float:
        """Bytes per rank of the kernel tables: the shared ones and each requested extra work's."""
        return BASE_TABLE_BYTES_PER_RANK + sum(self._per_variant("table_bytes_per_rank"))

    @classmethod
    def for_metrics(cls, metrics: Sequence[Metric], P: int, N: int) -> KernelLayout:
        """Layout for the registry entries ``metrics`` at (P, N): each metric's kernel column (its
        ``kernel_column``), then the distinct tp_at_k cut-offs, clipped to P + N, ascending.
        Columns are keyed by the metrics' names.

        Examples
        --------
        >>> from tablegen.compute.metrics import metric_entries
        >>> layout = KernelLayout.for_metrics(metric_entries(["auc", "tp_at_10"]), 20, 30)
        >>> layout.columns, layout.ks.tolist(), layout.with_mcc
        ({'auc': 0, 'tp_at_10': 6}, [10], False)
        >>> mcc = KernelLayout.for_metrics(metric_entries(["best_mcc", "auc"]), 20, 30)
        >>> mcc.with_mcc, mcc.lane_cost_factor, mcc.table_bytes_per_rank
        (True, 1.19, 24.0)
        """
        specs = {spec.name: spec for spec in metrics}
        cutoffs = sorted({min(spec.k, P + N) for spec in specs.values() if spec.k is not None})
        columns = {}
        for metric, spec in specs.items():
            columns[metric] = (BASE_COLUMNS.index(spec.kernel_column) if spec.k is None
                               else len(BASE_COLUMNS) + cutoffs.index(min(spec.k, P + N)))
        return cls(np.asarray(cutoffs, dtype=np.int64), columns, tuple(specs.values()))


def score_replicates(P: int, N: int, key, first: int, count: int, layout: KernelLayout,
                     labels_out: np.ndarray | None = None, out: np.ndarray | None = None) -> np.ndarray:
    """Kernel output (count, columns) for replicates ``first .. first + count - 1`` of a cell.

    ``out``: a block to fill instead of a new one, as :func:`output_block` makes it for these arguments
    (the engine reuses one block across a pass: whether a new block of a few MB comes back from the C
    allocator or from the system, page faults and all, depends on what was freed before; 48.7 against 65.7 ns
    per ranking at (20, 20) in a loop of this function).  Every element of it is written.

    Skewed cells (:func:`~tablegen.compute.kernels.minority.uses_minority_sampling`) are sampled by the
    minority-class kernel, which records the rankings in ``labels_out`` (tests) if given.  Other
    cells go to the lane-parallel kernel, or with ``labels_out`` to the scalar kernel, which records
    the rankings; those two give the same values, bit for bit.  The best-MCC column is NaN unless
    ``layout.with_mcc``.  The lane kernel's block is column-major
    (:func:`~tablegen.compute.kernels.lanes.lane_output`), the others' row-major.
    """
    if out is None:
        out = output_block(P, N, count, layout, labels_out is not None)
    elif out.shape != (count, len(BASE_COLUMNS) + layout.ks.size):
        raise ValueError(f"out has shape {out.shape}; {count} replicates of this layout need "
                         f"{(count, len(BASE_COLUMNS) + layout.ks.size)}")
    if uses_minority_sampling(P, N):
        labels = np.empty((0, 0), np.uint8) if labels_out is None else labels_out
        simulate_minority_block(P, N, key[0], key[1], first, layout.ks, out, labels, layout.with_mcc)
    elif labels_out is None:
        simulate_rows(P, N, key[0], key[1], first, layout.ks, out, layout.with_mcc, layout.alone_variant == "ap")
    else:
        simulate_block(P, N, key[0], key[1], first, layout.ks, out, labels_out, layout.with_mcc)
    return out


def output_block(P: int, N: int, count: int, layout: KernelLayout, recording: bool = False) -> np.ndarray:
    """An uninitialised block for :func:`score_replicates` of ``count`` replicates at (P, N): column-major
    where the lane kernel fills it (:func:`~tablegen.compute.kernels.lanes.lane_output`: the tails read it
    column by column), else row-major (the minority-class kernel, and the scalar kernel when the rankings
    are ``recording``).

    Examples
    --------
    >>> from tablegen.compute.metrics import metric_entries
    >>> layout = KernelLayout.for_metrics(metric_entries(["auc", "tp_at_10"]), 20, 30)
    >>> block = output_block(20, 30, 4, layout)
    >>> block.shape, block.flags.f_contiguous
    ((4, 7), True)
    """
    columns = len(BASE_COLUMNS) + layout.ks.size
    if recording or uses_minority_sampling(P, N):
        return np.empty((count, columns))
    return lane_output(count, columns)


def block_scorer(P: int, N: int, key, layout: KernelLayout) -> Callable[[int, int], np.ndarray]:
    """``score(first, count)``: :func:`score_replicates` into one block per block length, reused from call to call
    (a pass's blocks are all one length but perhaps the last).  A block returned is overwritten by the next call.

    Examples
    --------
    >>> from tablegen.compute.metrics import metric_entries
    >>> layout = KernelLayout.for_metrics(metric_entries(["auc"]), 20, 30)
    >>> score = block_scorer(20, 30, cell_key(1, 20, 30), layout)
    >>> score(0, 4) is score(4, 4), score(8, 2).shape
    (True, (2, 6))
    """
    blocks = {}

    def score(first: int, count: int) -> np.ndarray:
        if count not in blocks:
            blocks.clear()
            blocks[count] = output_block(P, N, count, layout)
        return score_replicates(P, N, key, first, count, layout, out=blocks[count])
    return score


def block_tails(P, N, key, first, count, layout: KernelLayout, capacity: int) -> dict[str, Tail]:
    """Tails of every metric over one block of replicates (the unit of work a task can run)."""
    out = score_replicates(P, N, key, first, count, layout)
    return {m: tail_add(tail_empty(capacity), out[:, c]) for m, c in layout.columns.items()}


def merge_tails(parts: Sequence[dict[str, Tail]]) -> dict[str, Tail]:
    """Merge per-block tails metric by metric (order-independent)."""
    merged = dict(parts[0])
    for part in parts[1:]:
        merged = {m: tail_merge(merged[m], part[m]) for m in merged}
    return merged


def simulate_tails(P: int, N: int, R: int, seed: int, metrics: Sequence[Metric], capacity: int,
                   block_size: int = DEFAULT_BLOCK_SIZE,
                   progress: Callable[[int, int], None] | None = None, device: str = "cpu") -> dict[str, Tail]:
    """Run R replicates in blocks and return the retained upper tail of each metric (registry entries
    ``metrics``; the tails are keyed by their names).

    On the CPU each block's samples are counted per value where a metric takes few values, else kept
    by a bucketed stream (:func:`tail_sinks`); on a GPU by a
    :class:`~tablegen.compute.accumulator.TailStream`.  Either way the result is the same as adding
    every block in turn with :func:`~tablegen.compute.accumulator.tail_add`, bit for bit.
    """
    return simulate_tails_and_counts(P, N, R, seed, metrics, capacity, {}, block_size, progress, device)[0]


def pass_memory(P: int, N: int, layout: KernelLayout, capacity: int, block_size: int,
                counted: Mapping[str, tuple[int, ValueTable]] | None = None) -> float:
    """Bytes a Monte Carlo pass at (P, N) may use, an upper bound: its tails (kept; or counted per value in
    ``counted``'s tables, :func:`counted_tables`: :func:`tablegen.compute.limits.tails_memory`) and its kernel
    tables."""
    slots = tuple(table.slot_bits.size for _, table in (counted or {}).values())
    return (tails_memory(len(layout.specs) - len(slots), capacity, block_size, slots)
            + ranking_memory(P, N, layout.table_bytes_per_rank))


def kernel_tables_memory(metrics: Sequence[Metric], P: int, N: int) -> float:
    """Bytes of the kernel tables for the entries ``metrics`` at (P, N)
    (:func:`tablegen.compute.limits.ranking_memory`)."""
    return ranking_memory(P, N, KernelLayout.for_metrics(metrics, P, N).table_bytes_per_rank)


def simulate_tails_and_counts(P: int, N: int, R: int, seed: int, metrics: Sequence[Metric], capacity: int,
                              thresholds: Mapping[str, float], block_size: int = DEFAULT_BLOCK_SIZE,
                              progress: Callable[[int, int], None] | None = None, device: str = "cpu",
                              first: int = 0) -> tuple[dict[str, Tail], dict[str, int]]:
    """:func:`simulate_tails`, and in the same pass the number of samples >= ``thresholds[m]``.

    ``first``: run replicates ``first .. first + R - 1`` of the cell's stream instead of ``0 .. R - 1`` (a later
    stretch of the same rankings: the tails of consecutive stretches, kept at one capacity, merge with
    :func:`~tablegen.compute.accumulator.tail_merge` into the tail of the whole run, bit for bit, and their
    counts add).  ``progress(done, R)`` counts the stretch's own replicates.

    One pass serves a significance test: the critical value from the tail, the p-value from the
    count, both from the same R rankings.  ``device`` ("cpu", "cuda" or "auto") says where the
    rankings are scored; on "cuda" only the samples above each tail's floor come back from the GPU
    (:mod:`tablegen.compute.kernels.cuda.driver`), and the tails are the same, bit for bit.
    """
    layout = KernelLayout.for_metrics(metrics, P, N)
    metrics = [spec.name for spec in metrics]
    on_cpu = _resolved(device) == "cpu"  # the device counts the samples >= threshold itself
    tables = counted_tables(P, N, layout, capacity) if on_cpu else {}  # at most 14 MB a metric, made first
    check_memory(pass_memory(P, N, layout, capacity, block_size, tables),
                 f"a Monte Carlo pass at P = {P:,}, N = {N:,}, R = {R:,} (keeping {capacity:,} samples per metric; "
                 f"tables over {P + N:,} ranks)",
                 "use a smaller R (the kept tail grows with R), fewer metrics, an exact method or the stored table")
    key = cell_key(seed, P, N)
    if on_cpu:
        counted, streams = tail_sinks(P, N, layout, capacity, thresholds, tables)
    else:
        counted, streams = None, {m: TailStream(capacity) for m in metrics}
    device_counts = {m: 0 for m in thresholds}
    block_size, score_block = _block_source(P, N, R, key, layout, metrics, thresholds, block_size, device, counted)
    for start in range(first, first + R, block_size):
        count = min(block_size, first + R - start)
        for m, hits in score_block(start, count, streams).items():
            device_counts[m] += hits
        if progress is not None:
            progress(start + count - first, R)
    tails = {m: counted.tail(m) if m not in streams else streams[m].tail() for m in metrics}
    counts = {m: (streams[m].at_least if m in streams else counted.at_least(m)) + device_counts[m] for m in thresholds}
    return tails, counts


#: Size rule of the CPU's tails (:func:`tail_sinks`).  A column is counted per value
#: (:class:`~tablegen.compute.accumulator.CountedTails`) when
#: :func:`~tablegen.compute.kernels.histogram_tail.value_count` lists at most half the slot limit (a table
#: takes about two slots a value) and its table fits the limit: max(COUNTED_MIN_SLOTS, capacity) slots,
#: never more than COUNTED_MAX_SLOTS.  At 53 bytes a slot (its value's bits, twice, an occupied flag, the
#: listed value and four counts) that is at most 14 MB a metric, and at most 1.4 times the kept tail's own memory
#: where the tail is the larger (:func:`tablegen.compute.limits.tails_memory` bounds it by 64 bytes a slot).  Other
#: columns go to a :class:`~tablegen.compute.accumulator.BucketStream` where the metric's range is
#: finite, else to a :class:`~tablegen.compute.accumulator.TailStream`.
COUNTED_MIN_SLOTS = 1 << 12
COUNTED_MAX_SLOTS = 1 << 18


def tail_sinks(P: int, N: int, layout: KernelLayout, capacity: int, thresholds: Mapping[str, float],
               tables: Mapping[str, tuple[int, ValueTable]] | None = None):
    """(CountedTails or None, {metric: stream}): where each requested metric's samples go on the CPU
    (the size rule above; every route gives the same :class:`~tablegen.compute.accumulator.Tail`, bit
    for bit).  ``tables``: :func:`counted_tables` at (P, N), if made already.

    Examples
    --------
    >>> from tablegen.compute.metrics import metric_entries
    >>> layout = KernelLayout.for_metrics(metric_entries(["auc", "average_precision", "tp_at_10"]), 20, 20)
    >>> counted, streams = tail_sinks(20, 20, layout, 1_000, {})
    >>> counted.names, {m: type(s).__name__ for m, s in streams.items()}
    (['auc', 'tp_at_10'], {'average_precision': 'BucketStream'})
    """
    tables = counted_tables(P, N, layout, capacity) if tables is None else tables
    streams = {}
    for spec in layout.specs:
        if spec.name in tables:
            continue
        threshold = thresholds.get(spec.name, np.inf)
        low, high = spec.range(P, N)
        if np.isfinite(low) and np.isfinite(high) and high > low:
            streams[spec.name] = BucketStream(capacity, low, high, threshold)
        else:
            streams[spec.name] = TailStream(capacity, threshold)
    return (CountedTails(tables, capacity, thresholds) if tables else None), streams


def counted_tables(P: int, N: int, layout: KernelLayout, capacity: int) -> dict[str, tuple[int, ValueTable]]:
    """metric -> (kernel column, its :class:`~tablegen.compute.accumulator.ValueTable`) of the metrics whose
    tails the CPU counts per value at (P, N): the size rule above.

    Examples
    --------
    >>> from tablegen.compute.metrics import metric_entries
    >>> layout = KernelLayout.for_metrics(metric_entries(["auc", "average_precision"]), 20, 20)
    >>> [(m, column, table.values.size) for m, (column, table) in counted_tables(20, 20, layout, 1_000).items()]
    [('auc', 0, 401)]
    """
    from tablegen.compute.kernels.histogram_tail import column_values, value_count

    max_slots = min(COUNTED_MAX_SLOTS, max(COUNTED_MIN_SLOTS, capacity))
    tables = {}
    for spec in layout.specs:
        column = layout.columns[spec.name]
        k = int(layout.ks[column - TP_COLUMN]) if column >= TP_COLUMN else 0
        size = value_count(column, P, N, k)
        table = value_table(column_values(column, P, N, k, size), max_slots) if 0 < size <= max_slots // 2 else None
        if table is not None:
            tables[spec.name] = (column, table)
    return tables


def _resolved(device: str) -> str:
    from tablegen.compute.kernels.cuda.device import resolve_device

    return resolve_device(device)


def _block_source(P, N, R, key, layout: KernelLayout, metrics, thresholds, block_size: int, device: str,
                  counted: CountedTails | None = None):
    """(block size, function(first, count, streams) -> counts >= threshold found on the device).

    On the CPU a block is scored by :func:`score_replicates` and its rows go to ``counted`` and each
    other metric's column to its stream (:func:`tail_sinks`); on a GPU
    (imported only then) it is scored and filtered on the device against the streams' floors, in
    blocks of :data:`~tablegen.compute.kernels.cuda.driver.DEVICE_BLOCK_SIZE` replicates (or
    ``block_size`` if larger; at most R), and only the samples above them come back.
    """
    if _resolved(device) == "cpu":
        score = block_scorer(P, N, key, layout)

        def cpu_block(first, count, streams):
            out = score(first, count)
            if counted is not None:
                counted.add_rows(out)
            for m, stream in streams.items():
                stream.add(out[:, layout.columns[m]])
            return {}
        return block_size, cpu_block
    from tablegen.compute.kernels.cuda.driver import DEVICE_BLOCK_SIZE, CudaCell

    block_size = min(max(block_size, DEVICE_BLOCK_SIZE), R)
    cell = CudaCell(P, N, key, layout.ks, block_size, layout.with_mcc)
    columns = [layout.columns[m] for m in metrics]
    limits = [float(thresholds.get(m, np.inf)) for m in metrics]

    def cuda_block(first, count, streams):
        kept, at_least = cell.candidates(first, count, columns, [streams[m].floor() for m in metrics], limits)
        for m, samples in zip(metrics, kept):
            streams[m].add(samples, seen=count)
        return {m: at_least[c] for c, m in enumerate(metrics) if m in thresholds}
    return block_size, cuda_block


def tail_capacity(R: int, Cs, alphas, tail_probabilities) -> int:
    """How many of the largest samples to keep so every requested order statistic is retained."""
    deepest = [upper_ranks(R, C, a)[1] for C in Cs for a in alphas]
    deepest += [tail_rank(R, t) for t in tail_probabilities]
    return max(deepest)
