"""Tail accumulator: the ``capacity`` largest samples of a stream, as a mergeable value.

A reduction in four parts (STYLE 4): :func:`tail_empty` (init), :func:`tail_add` (update with a
batch of samples), :func:`tail_merge` (combine two partial results) and :func:`tail_upper_order`
(finalize: the j-th largest sample).  The state is the multiset of the ``capacity`` largest values
seen, stored compactly as ascending unique values with counts, plus the number of samples seen.

Merge is exact: the top-``capacity`` multiset of a union is the top-``capacity`` multiset of the
union of the parts' top-``capacity`` multisets.  It is therefore associative and commutative, and the
result does not depend on how a stream is cut into batches or in which order batches arrive
(property-tested in ``tests/compute/test_accumulator.py``).  Memory is at most ``capacity`` entries, and
much less for metrics with few distinct values in the tail.

:class:`TailStream` is the same reduction for a stream of blocks (a Monte Carlo pass): each sample is
taken once in numba (:mod:`tablegen.compute.kernels.tails`, a running floor and counts in place) and
:meth:`TailStream.tail` is the :class:`Tail` that :func:`tail_add` of every block would give.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np


@dataclass(frozen=True)
class Tail:
    """The retained upper tail of a stream of samples.

    Attributes
    ----------
    values : ndarray of float64
        Ascending distinct retained values.
    counts : ndarray of int64
        Multiplicity of each retained value (their sum is at most ``capacity``).
    seen : int
        Number of samples the tail summarises.
    capacity : int
        How many of the largest samples are retained.
    """

    values: np.ndarray
    counts: np.ndarray
    seen: int
    capacity: int

    @cached_property
    def retained(self) -> int:
        """Number of samples retained (min(seen, capacity); computed once)."""
        return int(self.counts.sum())

    @cached_property
    def at_or_above(self) -> np.ndarray:
        """Samples at or above each value, from the top (``values[::-1]``'s cumulative counts; computed once)."""
        return np.cumsum(self.counts[::-1])


def tail_empty(capacity: int) -> Tail:
    """An empty tail that will keep the ``capacity`` largest samples."""
    return Tail(np.empty(0), np.empty(0, np.int64), 0, int(capacity))


def _truncate(values: np.ndarray, counts: np.ndarray, capacity: int) -> tuple[np.ndarray, np.ndarray]:
    """Keep the ``capacity`` largest of a multiset given as ascending unique values with counts."""
    from_top = np.cumsum(counts[::-1])[::-1]  # samples at or above each value
    keep = from_top - counts < capacity
    values, counts, from_top = values[keep], counts[keep].copy(), from_top[keep]
    if counts.size and from_top[0] > capacity:
        counts[0] -= from_top[0] - capacity
    return values, counts


def _run_lengths(values: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Collapse equal neighbours of a sorted multiset: distinct values and summed counts."""
    if values.size == 0:
        return values, counts.astype(np.int64)
    starts = np.flatnonzero(np.concatenate(([True], values[1:] != values[:-1])))
    return values[starts], np.add.reduceat(counts, starts).astype(np.int64)


def _combine(values: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Ascending unique values of a multiset given as concatenated sorted runs with counts.

    A stable sort (timsort for floats) merges pre-sorted runs in linear time, about 9x faster here
    than re-sorting from scratch.
    """
    order = np.argsort(values, kind="stable")
    return _run_lengths(values[order], counts[order])


def tail_candidates(tail: Tail, samples: np.ndarray) -> np.ndarray:
    """The samples that can change ``tail``: all while it is not full, else those above its floor.

    A full tail holds ``capacity`` samples at or above its floor, so another copy of the floor
    value leaves its multiset as it is (copies of one value are interchangeable), and a smaller
    value cannot enter.  Dropping the rest before :func:`tail_add` (passing ``seen``) therefore
    gives the same tail; for a discrete metric whose floor is a common value (TP@10 = 0 in a skewed
    cell) it drops most of a batch.
    """
    if tail.capacity == 0 or tail.retained < tail.capacity:
        return samples
    return samples[samples > tail.values[0]]


def tail_add(tail: Tail, samples: np.ndarray, seen: int | None = None) -> Tail:
    """Add a batch of samples (any order) to a tail; returns a new :class:`Tail`.

    Parameters
    ----------
    tail : Tail
        The tail so far.
    samples : array_like
        The batch, or the part of it that :func:`tail_candidates` keeps (see ``seen``).
    seen : int, optional
        How many samples the batch held before any were dropped below the floor (default:
        ``len(samples)``).
    """
    samples = np.asarray(samples, dtype=np.float64).ravel()
    n_samples = samples.size if seen is None else int(seen)
    if samples.size > tail.capacity:  # only the batch's own top `capacity` can survive
        samples = np.partition(samples, samples.size - tail.capacity)[samples.size - tail.capacity:]
    samples = tail_candidates(tail, samples)
    batch_values, batch_counts = _run_lengths(np.sort(samples), np.ones(samples.size, np.int64))
    batch = Tail(batch_values, batch_counts, n_samples, tail.capacity)
    return tail_merge(tail, batch)


def tail_merge(first: Tail, second: Tail) -> Tail:
    """Merge two tails of the same capacity (associative, commutative, exact)."""
    if first.capacity != second.capacity:
        raise ValueError(f"cannot merge tails of capacity {first.capacity} and {second.capacity}")
    values, counts = _combine(
        np.concatenate([first.values, second.values]), np.concatenate([first.counts, second.counts])
    )
    values, counts = _truncate(values, counts, first.capacity)
    return Tail(values, counts, first.seen + second.seen, first.capacity)


def tail_upper_order(tail: Tail, rank: int) -> float:
    """The ``rank``-th largest sample seen (rank 1 = the maximum).

    Raises
    ------
    ValueError
        If ``rank`` is not in 1..retained (the tail was sized too small for the question).
    """
    if not 1 <= rank <= tail.retained:
        raise ValueError(f"upper rank {rank} is outside the retained tail (1..{tail.retained})")
    return float(tail.values[::-1][np.searchsorted(tail.at_or_above, rank, side="left")])


def critical_order_statistics(tail: Tail, ranks, maximum: float) -> tuple[float, float, float]:
    """Estimate, CI low and CI high for the upper ``ranks`` of :func:`tablegen.compute.stats.upper_ranks`.

    A ``ci_high`` rank of 0 means no sample lies high enough to be the interval's upper end; the
    metric's ``maximum`` at (P, N) bounds it instead.
    """
    estimate, low, high = ranks
    upper = float(maximum) if high == 0 else tail_upper_order(tail, high)
    return tail_upper_order(tail, estimate), tail_upper_order(tail, low), upper


def tail_count_at_least(tail: Tail, threshold: float) -> int | None:
    """Number of samples >= threshold, or None if the tail cannot tell.

    Once samples have been dropped, only values strictly above the retained floor have complete
    counts (the floor value itself may have lost some of its copies).
    """
    if tail.retained < tail.seen and (tail.retained == 0 or threshold <= tail.values[0]):
        return None
    return int(tail.counts[tail.values >= threshold].sum())


class TailStream:
    """The top ``capacity`` samples of a stream of blocks, kept in numba (a running floor; samples
    equal to a retained value counted in place), with the count of samples >= ``threshold``.

    :meth:`tail` is the same :class:`Tail` as :func:`tail_add` of every block in turn, bit for bit.

    Examples
    --------
    >>> stream = TailStream(3, threshold=2.0)
    >>> stream.add(np.array([1.0, 5.0, 2.0, 2.0]))
    >>> stream.add(np.array([0.5, 5.0]))
    >>> tail = stream.tail()
    >>> tail.values.tolist(), tail.counts.tolist(), tail.seen, stream.at_least
    ([2.0, 5.0], [1, 2], 6, 4)
    """

    def __init__(self, capacity: int, threshold: float = np.inf, buffer_size: int = 1 << 14):
        from tablegen.compute.kernels import tails as kernel

        self._kernel = kernel
        self._values, self._counts = np.empty(64), np.zeros(64, np.int64)
        self._buffer_size = buffer_size
        self._buffer = np.empty(max(1, min(int(capacity), buffer_size)))
        self._state = np.zeros(5, np.int64)
        self._state[kernel.CAPACITY] = int(capacity)
        self._low = np.array([np.inf])
        self.threshold = float(threshold)
        self.capacity = int(capacity)
        self.seen = 0
        self.at_least = 0

    def add(self, samples: np.ndarray, seen: int | None = None) -> None:
        """Take a block of samples (any order; a strided view will do).  ``seen``: how many samples the
        block held before any were dropped below :meth:`floor` (default: all of ``samples``)."""
        samples = np.asarray(samples, dtype=np.float64)
        start = 0
        while start < samples.shape[0]:
            start, at_least = self._kernel.absorb(samples, start, self._values, self._counts, self._buffer,
                                                  self._state, self._low, self.threshold)
            self.at_least += at_least
            if start < samples.shape[0]:
                self._fold()
        self.seen += samples.shape[0] if seen is None else int(seen)

    def _fold(self) -> None:
        batch = self._buffer[:int(self._state[self._kernel.HELD])]
        batch.sort()  # numpy's sort, in place: faster than numba's
        self._values, self._counts = self._kernel.fold(self._values, self._counts, batch, self._state)
        self._low[0] = np.inf
        distinct = int(self._state[self._kernel.HI] - self._state[self._kernel.LO])  # doubled while filling, then 1/4
        growth = distinct if self._state[self._kernel.RETAINED] < self.capacity else distinct // 4
        wanted = min(self.capacity, max(self._buffer_size, growth))
        if wanted != self._buffer.shape[0]:
            self._buffer = np.empty(max(1, wanted))

    def floor(self) -> float:
        """A value no sample at or below which can enter (-inf while the tail is not full)."""
        state = self._state
        if state[self._kernel.RETAINED] < self.capacity or self.capacity == 0:
            return -np.inf
        lo, hi, held = (int(state[i]) for i in (self._kernel.LO, self._kernel.HI, self._kernel.HELD))
        floor = self._values[lo] if lo < hi else np.inf
        return float(min(floor, self._low[0]) if held else floor)

    def tail(self) -> Tail:
        """The retained tail as a :class:`Tail` (ascending distinct values with counts)."""
        self._fold()
        self._buffer = np.empty(1)
        lo, hi = int(self._state[self._kernel.LO]), int(self._state[self._kernel.HI])
        return Tail(self._values[lo:hi], self._counts[lo:hi], self.seen, self.capacity)


@dataclass(frozen=True)
class ValueTable:
    """The distinct values one kernel column can take, with their direct-address slots
    (:mod:`tablegen.compute.kernels.histogram_tail`): ``slot_bits[slot(x)]`` is the 64 bits of the value in
    x's slot (of another value, whose slot is elsewhere, where the slot is empty); ``occupied`` marks
    the slots that hold a value.
    """

    values: np.ndarray
    low: float
    scale: float
    slot_bits: np.ndarray
    occupied: np.ndarray


def value_table(candidates: np.ndarray, max_slots: int) -> ValueTable | None:
    """The :class:`ValueTable` of ``candidates`` (floats, any order, repeats allowed), or None where it
    would need more than ``max_slots`` slots (or the values are not finite and distinct by value).

    Examples
    --------
    >>> table = value_table(np.array([0.5, 0.25, 1.0, 0.5]), 64)
    >>> table.values.tolist(), np.flatnonzero(table.occupied).tolist()
    ([0.25, 0.5, 1.0], [0, 2, 6])
    """
    from tablegen.compute.kernels.histogram_tail import slots_of

    values = np.unique(np.asarray(candidates, dtype=np.float64).view(np.int64)).view(np.float64)
    values = values[np.argsort(values, kind="stable")]
    if values.size == 0 or not np.isfinite(values).all() or not (np.diff(values) > 0).all():
        return None
    low = float(values[0])
    scale = 2.0 / float(np.diff(values).min()) if values.size > 1 else 1.0
    n_slots = int((float(values[-1]) - low) * scale) + 2
    if n_slots > max_slots:
        return None
    slots = slots_of(values, low, scale)
    if (slots < 0).any() or (np.diff(slots) <= 0).any() or slots[-1] >= n_slots:
        return None
    bits = values.view(np.int64)
    slot_bits = np.full(n_slots, bits[-1] if slots[0] == 0 else bits[0])  # an empty slot: a value placed elsewhere
    slot_bits[slots] = bits
    occupied = np.zeros(n_slots, np.bool_)
    occupied[slots] = True
    return ValueTable(values, low, scale, slot_bits, occupied)


class CountedTails:
    """Tails of several kernel columns kept as counts per possible value, one block of rows at a time.

    ``tables`` maps a name to (kernel column, :class:`ValueTable`).  A sample that matches no value
    of its table (none should) goes to a :class:`TailStream` of that name, merged in at the end, so
    :meth:`tail` is the :class:`Tail` that :func:`tail_add` of every column would give, bit for bit.

    Examples
    --------
    >>> table = value_table(np.array([0.0, 0.5, 1.0]), 64)
    >>> counted = CountedTails({"x": (0, table)}, capacity=3, thresholds={"x": 0.5})
    >>> counted.add_rows(np.array([[0.5], [1.0], [0.0], [0.5], [0.75]]))
    >>> tail = counted.tail("x")
    >>> tail.values.tolist(), tail.counts.tolist(), tail.seen, counted.at_least("x")
    ([0.5, 0.75, 1.0], [1, 1, 1], 5, 4)
    """

    def __init__(self, tables: dict, capacity: int, thresholds=None):
        from tablegen.compute.kernels.histogram_tail import COUNT_WAYS

        thresholds = thresholds or {}
        self.names = list(tables)
        self.capacity = int(capacity)
        self.columns = np.array([column for column, _ in tables.values()], dtype=np.int64)
        self._tables = [table for _, table in tables.values()]
        self._lows = np.array([table.low for table in self._tables])
        self._scales = np.array([table.scale for table in self._tables])
        self._slot_starts = np.cumsum([0] + [table.slot_bits.size for table in self._tables]).astype(np.int64)
        self._slot_bits = np.concatenate([table.slot_bits for table in self._tables] or [np.empty(0, np.int64)])
        self._counts = np.zeros((COUNT_WAYS, self._slot_bits.size + 1), np.int64)  # count_rows' copies and sink
        self._found = np.empty(0, np.int64)
        self._thresholds = {name: float(thresholds.get(name, np.inf)) for name in self.names}
        self._missed = {name: TailStream(capacity, self._thresholds[name]) for name in self.names}
        self.seen = 0

    def add_rows(self, out: np.ndarray) -> None:
        """Count a block of kernel output (rows = rankings; the tables' columns are read)."""
        from tablegen.compute.kernels.histogram_tail import count_rows, miss_mask

        out = np.asarray(out, dtype=np.float64)
        if not (out.flags.c_contiguous or out.flags.f_contiguous):  # the lane kernel's: column-major
            out = np.ascontiguousarray(out)
        misses = np.zeros(len(self.names), np.int64)
        if self._found.shape[0] < out.shape[0]:
            self._found = np.empty(out.shape[0], np.int64)
        count_rows(out, out.view(np.int64), self.columns, self._lows, self._scales, self._slot_starts,
                   self._slot_bits, self._counts, misses, self._found)
        for m in np.flatnonzero(misses):
            table, column = self._tables[m], out[:, self.columns[m]]
            mask = miss_mask(column, column.view(np.int64), table.low, table.scale, table.slot_bits)
            self._missed[self.names[m]].add(column[mask])
        self.seen += out.shape[0]

    def _counted(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        m = self.names.index(name)
        counts = self._counts[:, self._slot_starts[m]:self._slot_starts[m + 1]].sum(axis=0)[self._tables[m].occupied]
        kept = counts > 0
        return self._tables[m].values[kept], counts[kept]

    def tail(self, name: str) -> Tail:
        """The top ``capacity`` samples of column ``name`` so far."""
        values, counts = _truncate(*self._counted(name), self.capacity)
        missed = self._missed[name]
        counted = Tail(values, counts, self.seen - missed.seen, self.capacity)
        return counted if missed.seen == 0 else tail_merge(counted, missed.tail())

    def at_least(self, name: str) -> int:
        """Samples of column ``name`` >= its threshold."""
        values, counts = self._counted(name)
        return int(counts[values >= self._thresholds[name]].sum()) + self._missed[name].at_least


class BucketStream:
    """:class:`TailStream`'s reduction for samples with many distinct values in [``low``, ``high``]: kept in
    monotone buckets above a rising floor bucket, sorted once at the end
    (:mod:`tablegen.compute.kernels.histogram_tail`).  Where heavy ties stop a compaction from freeing
    room, the kept samples go to a :class:`TailStream` which takes the rest.  The buffer holds
    2 ``capacity`` + ``slack`` samples (16 bytes per kept sample; the final count of equal values 16 more).

    :meth:`tail` is the same :class:`Tail` as :func:`tail_add` of every block in turn, bit for bit.

    Examples
    --------
    >>> stream = BucketStream(3, 0.0, 10.0, threshold=2.0)
    >>> stream.add(np.array([1.0, 5.0, 2.0, 2.0]))
    >>> stream.add(np.array([0.5, 5.0]))
    >>> tail = stream.tail()
    >>> tail.values.tolist(), tail.counts.tolist(), tail.seen, stream.at_least
    ([2.0, 5.0], [1, 2], 6, 4)
    """

    def __init__(self, capacity: int, low: float, high: float, threshold: float = np.inf, slack: int = 1 << 14):
        from tablegen.compute.kernels import histogram_tail as kernel

        self._kernel = kernel
        self.capacity = int(capacity)
        self.threshold = float(threshold)
        self._low = float(low)
        self._scale = kernel.BUCKETS / (float(high) - self._low)
        self._buffer = np.empty(2 * self.capacity + max(1, slack))  # compactions scan ~2 samples per sample kept
        self._held = 0
        self._bucket_counts = np.zeros(kernel.BUCKETS, np.int64)
        self._floor = 0
        self._stream = None  # the TailStream that takes over after heavy ties
        self._hits = 0
        self.seen = 0

    @property
    def at_least(self) -> int:
        """Samples >= ``threshold`` so far."""
        return self._hits + (self._stream.at_least if self._stream is not None else 0)

    def add(self, samples: np.ndarray, seen: int | None = None) -> None:
        """Take a block of samples (any order; a strided view will do)."""
        samples = np.asarray(samples, dtype=np.float64)
        start = 0
        while start < samples.shape[0] and self._stream is None:
            start, self._held, hits = self._kernel.bucket_absorb(
                samples, start, self._buffer, self._held, self._bucket_counts, self._floor, self._low, self._scale,
                self.threshold)
            self._hits += hits
            if self._held == self._buffer.shape[0]:
                self._compact()
        if self._stream is not None and start < samples.shape[0]:
            self._stream.add(samples[start:])
        self.seen += samples.shape[0] if seen is None else int(seen)

    def _compact(self) -> None:
        self._held, self._floor = self._kernel.bucket_compact(self._buffer, self._held, self._bucket_counts,
                                                              self._floor, self.capacity, self._low, self._scale)
        if 4 * self._held > 3 * self._buffer.shape[0]:  # heavy ties: hand the kept samples to a TailStream
            self._stream = TailStream(self.capacity)
            self._stream.add(self._buffer[:self._held])
            self._stream.threshold = self.threshold
            self._buffer = np.empty(0)

    def tail(self) -> Tail:
        """The retained tail as a :class:`Tail` (ascending distinct values with counts)."""
        if self._stream is not None:
            tail = self._stream.tail()
            values, counts = tail.values, tail.counts
        else:
            self._held, self._floor = self._kernel.bucket_compact(
                self._buffer, self._held, self._bucket_counts, self._floor, self.capacity, self._low, self._scale)
            kept = self._buffer[:self._held]
            kept.sort()  # in place: the order of the kept samples means nothing to the stream
            values, counts = self._kernel.distinct_sorted(kept[max(0, self._held - self.capacity):])
        return Tail(values, counts, self.seen, self.capacity)
