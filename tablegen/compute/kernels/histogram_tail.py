"""Tails without sorting every sample: counts per possible value, and a bucketed stream.

Why
---
A Monte Carlo pass keeps the ``capacity`` largest of R samples per metric (10% of R for the default tail
probabilities).  At small cells the ranking kernel takes about one nanosecond per position, so a
ranking of P + N = 40 costs ~35 ns while the streaming tail (:mod:`tablegen.compute.kernels.tails`:
a floor, a binary search, a sorted merge) cost 7-30 ns per metric.  Two cheaper exact routes:

Counts (:func:`count_rows`)
---------------------------
Most kernel columns take few values at small (P, N): AUC is U / (P N) with U in 0..P N, best accuracy
(D + N) / (P + N), best balanced accuracy (G + P N) / (2 P N), best F1 2 TP / (P + k), TP@k an integer.
:func:`column_values` lists every value a column can take, computed by
:func:`~tablegen.compute.kernels.ranking.write_base_columns` (the kernels' own last step, the same
floating-point expressions) from every integer that can produce it.  The distinct values v_0 < ... <
v_{n-1} get direct-address slots: slot(x) = int((x - v_0) * scale), scale = 2 / min gap, so distinct
values land in distinct slots (checked when the table is built, :func:`slots_of`).  A sample x is
counted at slot(x) only if its 64 bits equal the bits that slot holds (v_i where slot(v_i) = slot(x);
an empty slot holds the bits of a value whose own slot is another); anything else (a value the list
missed, NaN) is a *miss*, returned to the caller, which keeps it in a streaming tail: the counts
never hold a number the kernel did not produce.  The tail is then the top ``capacity`` of (v_i,
count_i) in slot order (ascending: slot() is non-decreasing), merged with the misses' tail (exact).
Counts int64; a block is read column by column.

Buckets (:func:`bucket_absorb`, :func:`bucket_compact`, :func:`bucket_sorted`)
------------------------------------------------------------------------------
For a column with many distinct values (average precision: nearly every ranking its own value), a
monotone bucket b(x) = clamp(int((x - low) * scale), 0, BUCKETS - 1) over the metric's range.  A sample
is kept (appended, its bucket counted) iff b(x) >= the floor bucket.  When the buffer is full the floor
bucket rises to the highest bucket with at least ``capacity`` kept samples at or above it
(:func:`bucket_compact`), and the samples below it are dropped: b is non-decreasing in x, so every
dropped sample is <= every kept one and the kept ones hold at least ``capacity`` samples; the top
``capacity`` multiset of the stream is therefore among them.  At the end the kept samples are
compacted once more and sorted (:func:`bucket_sorted`: a counting sort on finer buckets of the same
form over their own range, then within each bucket), then collapsed to distinct values with counts.
If a compaction frees less than a quarter of the buffer (heavy ties in one bucket), the caller hands
the kept samples to the streaming tail instead.

Checked by ``tests/compute/test_histogram_tail.py`` (tables against exact fractions; every count and
bucket tail against :func:`tablegen.compute.accumulator.tail_add` of the same samples, with misses and
ties forced) and by the stored cell values of ``tests/compute/test_stream_golden.py``.
"""

import numba as nb
import numpy as np

from tablegen.compute.kernels.jit import jit_cached
from tablegen.compute.kernels.ranking import BASE_COLUMNS, MCC_COLUMN, TP_COLUMN, write_base_columns

#: Buckets of a bucketed stream over its metric's range.
BUCKETS = 1 << 16
#: Kernel columns without a value list (too many distinct values): average precision, best MCC.
AP_COLUMN = BASE_COLUMNS.index("average_precision")
UNLISTED_COLUMNS = (AP_COLUMN, MCC_COLUMN)


def value_count(column: int, n_pos: int, n_neg: int, k: int = 0) -> int:
    """How many values :func:`column_values` lists (with repeats) for kernel column ``column`` at (P, N)
    (``k``: the cut-off of a TP@k column); 0 for a column it does not list.

    Examples
    --------
    >>> value_count(0, 20, 20), value_count(TP_COLUMN, 20, 20, 10), value_count(MCC_COLUMN, 20, 20)
    (401, 11, 0)
    """
    if column >= TP_COLUMN:
        return min(k, n_pos) + 1
    if column in UNLISTED_COLUMNS:
        return 0
    return (n_pos * n_neg + 1, n_pos + 1, 1 + (n_pos + 1) * (n_pos + n_neg + 1), n_pos * n_neg + 1)[column]


@jit_cached(nogil=True)
def column_values(column, n_pos, n_neg, k, size):
    """Every value kernel column ``column`` can take at (P, N), unsorted, with repeats (``size`` of them,
    :func:`value_count`), each computed by ``write_base_columns`` (or, for TP@k, the float of TP).

    The integers: U in 0..P N (AUC); D in 0..P (best accuracy: the maximum starts at 0 and 2 TP - k <= P);
    (2 TP, P + k) for every prefix k and TP in max(0, k - N)..min(k, P), and the start 0 / 1 (best F1);
    G in 0..P N (best balanced accuracy; a superset of the reachable maxima).
    """
    values = np.empty(size)
    row = np.empty((1, TP_COLUMN))
    n = n_pos + n_neg
    if column >= TP_COLUMN:
        for tp in range(size):
            values[tp] = tp
        return values
    i = 0
    if column == 2:
        write_base_columns(row, 0, n_pos, n_neg, 0, 0, 0, 1, 0, 0.0, 0.0, False)
        values[0] = row[0, 2]
        i = 1
        for j in range(n + 1):
            for tp in range(max(0, j - n_neg), min(j, n_pos) + 1):
                write_base_columns(row, 0, n_pos, n_neg, 0, 0, 2 * tp, n_pos + j, 0, 0.0, 0.0, False)
                values[i] = row[0, 2]
                i += 1
        for rest in range(i, size):  # (P + 1)(P + N + 1) bounds the pairs; repeat the last for the rest
            values[rest] = values[i - 1]
        return values
    for integer in range(size):
        write_base_columns(row, 0, n_pos, n_neg, integer, integer, 0, 1, integer, 0.0, 0.0, False)
        values[integer] = row[0, column]
    return values


@nb.njit(inline="always", nogil=True)
def _slot(x, low, scale):
    """Direct-address slot of x (a float; -1 when below, NaN or not finite)."""
    t = (x - low) * scale
    return np.int64(t) if t >= 0.0 and t < 9.0e18 else -1


@jit_cached(nogil=True)
def slots_of(values, low, scale):
    """The slot of every value (the lookup's own arithmetic, so a table built here finds its samples)."""
    out = np.empty(values.shape[0], np.int64)
    for i in range(values.shape[0]):
        out[i] = _slot(values[i], low, scale)
    return out


@jit_cached(nogil=True, error_model="numpy")
def count_rows(out, out_bits, columns, lows, scales, slot_starts, slot_bits, counts, misses, found):
    """Count every row of ``out`` (a block of kernel output; ``out_bits`` the same memory as int64) in the
    tables of the counted ``columns``: table m's slots are ``slot_starts[m]:slot_starts[m + 1]`` of
    ``slot_bits`` (the 64 bits of the slot's value; an empty slot holds the bits of a value whose own
    slot is another, which no sample can match there) and ``counts``.  A sample is counted at its
    slot iff its bits equal the slot's, else ``misses[m]`` is raised (the caller re-reads the column
    with :func:`miss_mask`).  Column by column (fastest where each column is contiguous: the lane
    kernel's output is column-major), in three loops: the slots (clamped without branches, into ``found``,
    int64 of one per row; this loop vectorises), the match of each sample's bits with its slot's (-1 for
    a miss; indices unsigned, so no negative-index wrap-around stops the compiler), then the counts."""
    rows = out.shape[0]
    for m in range(columns.shape[0]):
        c, low, scale = columns[m], lows[m], scales[m]
        first, slots = slot_starts[m], slot_starts[m + 1] - slot_starts[m]
        top = np.float64(slots - 1)
        for r in range(rows):
            t = (out[r, c] - low) * scale  # the slot of _slot, clamped without branches:
            t = t if t >= 0.0 else 0.0  # below the table or NaN: slot 0, whose value then differs
            t = t if t <= top else 0.0  # above it: the same
            found[r] = first + np.int64(t)
        for r in range(rows):
            s = found[r]
            found[r] = s if slot_bits[np.uint64(s)] == out_bits[r, c] else -1
        missed = 0
        for r in range(rows):
            s = found[r]
            if s >= 0:
                counts[s] += 1
            else:
                missed += 1
        misses[m] += missed


@jit_cached(nogil=True)
def miss_mask(samples, sample_bits, low, scale, slot_bits):
    """True where a sample matches no value of one table (see :func:`count_rows`)."""
    mask = np.ones(samples.shape[0], np.bool_)
    for r in range(samples.shape[0]):
        s = _slot(samples[r], low, scale)
        if 0 <= s < slot_bits.shape[0]:
            mask[r] = slot_bits[s] != sample_bits[r]
    return mask


@nb.njit(inline="always", nogil=True)
def _bucket(x, low, scale):
    """Monotone bucket of x in 0..BUCKETS - 1 (NaN to 0)."""
    t = (x - low) * scale
    if not t > 0.0:
        return 0
    return BUCKETS - 1 if t >= BUCKETS - 1 else np.int64(t)


@jit_cached(nogil=True)
def bucket_absorb(samples, start, buffer, held, bucket_counts, floor_bucket, low, scale, threshold):
    """Append ``samples[start:]`` whose bucket is >= ``floor_bucket`` to ``buffer`` (from ``held``) and count
    their buckets, until the buffer is full.  Returns (next index, held, samples >= ``threshold``)."""
    at_least = 0
    i = start
    size, room = samples.shape[0], buffer.shape[0]
    while i < size and held < room:
        x = samples[i]
        i += 1
        at_least += x >= threshold
        b = _bucket(x, low, scale)
        keep = b >= floor_bucket  # branch-free: early on about half the samples are kept, at random
        buffer[held] = x
        held += keep
        bucket_counts[b] += keep
    return i, held, at_least


@jit_cached(nogil=True)
def bucket_compact(buffer, held, bucket_counts, floor_bucket, capacity, low, scale):
    """Raise the floor bucket to the highest with at least ``capacity`` kept samples at or above it (if
    fewer are kept, leave it), drop the samples below it.  Returns (held, floor bucket)."""
    above = 0
    b = BUCKETS - 1
    while b > floor_bucket and above + bucket_counts[b] < capacity:
        above += bucket_counts[b]
        b -= 1
    if b == floor_bucket:
        return held, floor_bucket
    for j in range(floor_bucket, b):
        bucket_counts[j] = 0
    kept = 0
    for i in range(held):  # branch-free: about a third of the samples go, at random
        x = buffer[i]
        buffer[kept] = x
        kept += _bucket(x, low, scale) >= b
    return kept, b


@nb.njit(inline="always", nogil=True)
def _sort_run(a, start, end):
    """Sort ``a[start:end]`` in place: Shell sort (gaps 1, 4, 13, ...; insertion sort for the short runs most
    buckets hold).  Written out rather than ``np.sort``, whose compilation took 2 s of a cold start."""
    gap = 1
    while 3 * gap + 1 < end - start:
        gap = 3 * gap + 1
    while gap >= 1:
        for i in range(start + gap, end):
            x = a[i]
            j = i - gap
            while j >= start and a[j] > x:
                a[j + gap] = a[j]
                j -= gap
            a[j + gap] = x
        gap //= 3


@jit_cached(nogil=True)
def bucket_sorted(buffer, held, capacity):
    """Ascending distinct values of the top ``capacity`` of ``buffer[:held]`` with their counts: a counting
    sort on ``held`` fine buckets over the samples' own range (the same monotone bucket form), then each
    bucket sorted (:func:`_sort_run`: most hold zero to three), equal values collapsed and the excess
    dropped from the bottom.  Memory: 16 bytes per sample besides ``buffer``."""
    if held == 0 or capacity <= 0:
        return np.empty(0), np.zeros(0, np.int64)
    low, high = buffer[0], buffer[0]
    for i in range(held):
        low, high = min(low, buffer[i]), max(high, buffer[i])
    n_buckets = held
    scale = (n_buckets - 1) / (high - low) if high > low else 0.0
    starts = np.zeros(n_buckets + 1, np.int64)
    for i in range(held):
        starts[min(np.int64((buffer[i] - low) * scale), n_buckets - 1) + 1] += 1
    for b in range(n_buckets):
        starts[b + 1] += starts[b]
    fill = starts[:-1].copy()
    ordered = np.empty(held)
    for i in range(held):
        b = min(np.int64((buffer[i] - low) * scale), n_buckets - 1)
        ordered[fill[b]] = buffer[i]
        fill[b] += 1
    for b in range(n_buckets):
        _sort_run(ordered, starts[b], starts[b + 1])
    distinct = 0  # collapsed in place: values into ordered[:distinct], counts into starts[:distinct]
    for i in range(held):
        if distinct == 0 or ordered[i] != ordered[distinct - 1]:
            ordered[distinct] = ordered[i]
            starts[distinct] = 0
            distinct += 1
        starts[distinct - 1] += 1
    lo, excess = 0, held - capacity
    while excess > 0:  # as accumulator._truncate: whole values, then copies of the lowest kept one
        drop = min(excess, starts[lo])
        starts[lo] -= drop
        excess -= drop
        lo += starts[lo] == 0
    return ordered[lo:distinct], starts[lo:distinct]
