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
Counts int64, in COUNT_WAYS copies (:func:`count_rows`); a block is read column by column.

Buckets (:func:`bucket_absorb`, :func:`bucket_compact`)
------------------------------------------------------
For a column with many distinct values (average precision: nearly every ranking its own value), a
monotone bucket b(x) = clamp(int((x - low) * scale), 0, BUCKETS - 1) over the metric's range.  A sample
is kept (appended, its bucket counted) iff b(x) >= the floor bucket.  When the buffer is full the floor
bucket rises to the highest bucket with at least ``capacity`` kept samples at or above it
(:func:`bucket_compact`), and the samples below it are dropped: b is non-decreasing in x, so every
dropped sample is <= every kept one and the kept ones hold at least ``capacity`` samples; the top
``capacity`` multiset of the stream is therefore among them.  At the end the kept samples are
compacted once more, sorted in place (``ndarray.sort``: numpy's vectorised sort, 3-4 times faster here
than a counting sort of our own) and the top ``capacity`` of them collapsed to distinct values with counts
(:func:`distinct_sorted`).
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

#: Copies of each table :func:`count_rows` counts in, one row after another (summed when read).
COUNT_WAYS = 4
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
    slot is another, which no sample can match there) and of each row of ``counts``.  A sample is counted
    at its slot iff its bits equal the slot's, else ``misses[m]`` is raised (the caller re-reads the column
    with :func:`miss_mask`).

    Column by column (fastest where each column is contiguous: the lane kernel's output is column-major), in
    three loops: the slots (clamped without branches, into ``found``, int64 of one per row; this loop
    vectorises), the match of each sample's bits with its slot's (a miss goes to the sink, the last slot of
    ``counts``; indices unsigned, so no negative-index wrap-around stops the compiler), then the counts,
    rows r, r + 1, ... into the rows of ``counts`` (int64, shape (COUNT_WAYS, slots + 1)) in turn: a run of
    samples of one value (TP@10 or best accuracy take a few values) then raises COUNT_WAYS counters, not one
    counter whose every increment waits for the last (the caller sums the rows)."""
    rows, sink = out.shape[0], slot_bits.shape[0]
    for m in range(columns.shape[0]):
        c, low, scale = columns[m], lows[m], scales[m]
        first, slots = slot_starts[m], slot_starts[m + 1] - slot_starts[m]
        top = np.float64(slots - 1)
        for r in range(rows):
            t = (out[r, c] - low) * scale  # the slot of _slot, clamped without branches:
            t = t if t >= 0.0 else 0.0  # below the table or NaN: slot 0, whose value then differs
            t = t if t <= top else 0.0  # above it: the same
            found[r] = first + np.int64(t)
        missed = 0
        for r in range(rows):
            s = found[r]
            match = slot_bits[np.uint64(s)] == out_bits[r, c]
            found[r] = s if match else sink
            missed += not match
        whole = rows - rows % COUNT_WAYS
        for r in range(0, whole, COUNT_WAYS):
            for way in range(COUNT_WAYS):
                counts[way, found[r + way]] += 1
        for r in range(whole, rows):
            counts[0, found[r]] += 1
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
    t = t if t > 0.0 else 0.0  # without branches, so the loops that call it vectorise or pipeline
    return np.int64(t if t < BUCKETS - 1 else BUCKETS - 1.0)


@jit_cached(nogil=True)
def bucket_absorb(samples, start, buffer, held, bucket_counts, floor_bucket, low, scale, threshold):
    """Append ``samples[start:]`` whose bucket is >= ``floor_bucket`` to ``buffer`` (from ``held``) and count
    their buckets, until the buffer is full.  Returns (next index, held, samples >= ``threshold``)."""
    at_least = 0
    i = start
    size, room = samples.shape[0], buffer.shape[0]
    while i < size and held < room:
        end = min(size, i + room - held)  # a sample read keeps at most one: no test of the room in the loop
        for j in range(i, end):
            x = samples[j]
            at_least += x >= threshold
            b = _bucket(x, low, scale)
            keep = b >= floor_bucket  # branch-free: early on about half the samples are kept, at random
            buffer[held] = x
            held += keep
            bucket_counts[b] += keep
        i = end
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


@jit_cached(nogil=True)
def distinct_sorted(ordered):
    """Distinct values of an ascending array with how many times each occurs: (values, counts), views of
    two new arrays as long as ``ordered`` (16 bytes per sample; one pass)."""
    values = np.empty(ordered.shape[0])
    counts = np.zeros(ordered.shape[0], np.int64)
    distinct = 0
    for i in range(ordered.shape[0]):
        if distinct == 0 or ordered[i] != values[distinct - 1]:
            values[distinct] = ordered[i]
            distinct += 1
        counts[distinct - 1] += 1
    return values[:distinct], counts[:distinct]
