"""A tail accumulator's streaming work in numba: the samples of a block that can enter, counted in place.

Why
---
A Monte Carlo pass keeps the ``capacity`` largest of R samples per metric (deep tails: 10% of R for
the default tail probabilities).  Filtering each block in numpy and merging the survivors by sorting
cost 3-7 times the sampling itself at (20, 20).  Here each sample is handled once, in a loop:

State (what :class:`tablegen.compute.accumulator.TailStream` holds)
-------------------------------------------------------------------
``values[lo:hi]`` ascending distinct values with ``counts[lo:hi]`` (int64), plus ``buffer[:held]``:
samples not yet among those values, unsorted, all above the floor they were let in by.  ``state``
(int64) holds lo, hi, held, retained (samples in both parts) and capacity; ``buffer_min`` (float64
in ``low[0]``) is the smallest buffered sample.

Algorithm (:func:`absorb`), per sample x
----------------------------------------
1. Once ``retained >= capacity`` the multiset's smallest element, min(values[lo], buffer_min), is a
   floor: a sample x <= floor cannot change the top ``capacity`` multiset (another copy of the floor
   value is interchangeable with the one it would replace), so it is skipped.
2. Otherwise x is kept: found by binary search among ``values[lo:hi]`` (only while there are at most
   :data:`SEARCH_LIMIT` of them; a metric with many distinct values goes straight to the buffer)
   it adds one to its count, else it is buffered.
3. While more than ``capacity`` are retained and the smallest element is ``values[lo]`` (not a
   buffered sample), one copy of it is dropped (``lo`` moves up when its count reaches 0): the floor
   rises as the samples come, as a running floor.
4. A full buffer stops the loop, and so does an excess of retained samples that cannot be dropped
   because the smallest is buffered (more than max(256, distinct values / 4)); :func:`fold` merges the
   sorted buffer with the values (equal values summed) and drops the excess from the bottom, and
   the loop resumes where it stopped.  The buffer holds a quarter of the distinct values (at least
   2**14 samples, at most ``capacity``), so folds cost O(1) per sample however many values there are.

The result is the top-``capacity`` multiset of every sample seen, whatever the blocks: the same
values and counts as :func:`tablegen.compute.accumulator.tail_add` of all of them
(``tests/compute/test_accumulator.py`` checks this on random and heavily tied streams, and
``tests/compute/test_stream_golden.py`` the cells' values against stored ones).  Counts are int64,
values float64 (compared, never computed).
"""

import numba as nb
import numpy as np

from tablegen.compute.kernels.jit import jit_cached

#: Distinct values up to which a sample is looked up (binary search) before it is buffered.
SEARCH_LIMIT = 4096
LO, HI, HELD, RETAINED, CAPACITY = range(5)


@nb.njit(inline="always", nogil=True)
def _floor(values, lo, hi, held, buffer_min, retained, capacity):
    """The smallest retained sample once ``capacity`` are retained (-inf before): nothing at or below it enters."""
    if retained < capacity:
        return -np.inf
    floor = values[lo] if lo < hi else np.inf
    return buffer_min if held > 0 and buffer_min < floor else floor


@jit_cached(nogil=True)
def absorb(samples, start, values, counts, buffer, state, low, threshold):
    """Take ``samples[start:]`` into the tail (see the module docstring) until the buffer must be folded.

    Returns (next index to take, samples >= ``threshold`` among those taken).
    """
    lo, hi, held, retained, capacity = state[LO], state[HI], state[HELD], state[RETAINED], state[CAPACITY]
    buffer_min = low[0]
    floor = _floor(values, lo, hi, held, buffer_min, retained, capacity)
    at_least = 0
    i = start
    size = samples.shape[0]
    while i < size:
        # a full buffer, or an excess that cannot be dropped because the smallest is buffered: fold first
        if held == buffer.shape[0] or retained - capacity > max(256, (hi - lo) >> 2):
            break
        x = samples[i]
        i += 1
        at_least += x >= threshold
        if x <= floor:
            continue
        found = False
        if lo < hi and hi - lo <= SEARCH_LIMIT:
            a, length = lo, hi - lo  # branch-free lower bound: the loop's trip count depends on length only
            while length > 1:
                half = length >> 1
                a = a + half if values[a + half - 1] < x else a
                length -= half
            if values[a] == x:
                counts[a] += 1
                found = True
        if not found:
            buffer[held] = x
            held += 1
            if held == 1 or x < buffer_min:
                buffer_min = x
        retained += 1
        while retained > capacity and lo < hi and (held == 0 or values[lo] <= buffer_min):
            drop = min(counts[lo], retained - capacity)
            counts[lo] -= drop
            retained -= drop
            if counts[lo] == 0:
                lo += 1
        floor = _floor(values, lo, hi, held, buffer_min, retained, capacity)
    state[LO], state[HI], state[HELD], state[RETAINED] = lo, hi, held, retained
    low[0] = buffer_min
    return i, at_least


@jit_cached(nogil=True)
def fold(values, counts, batch, state):
    """Merge ``batch`` (the buffered samples, sorted) into the values (equal values' counts summed), keep
    the top ``capacity``.

    The merge runs backwards in place, into the room after ``values[hi]`` (the values slid to the front
    of the arrays when that room is too small, new arrays a quarter larger than needed when that is
    not enough either).  Returns the (values, counts) arrays; ``state`` is
    updated (held = 0).
    """
    lo, hi, held, capacity = state[LO], state[HI], batch.shape[0], state[CAPACITY]
    if values.shape[0] - hi < held and hi - lo + held <= values.shape[0]:  # room at the front: slide down
        for j in range(hi - lo):
            values[j] = values[lo + j]
            counts[j] = counts[lo + j]
        lo, hi = 0, hi - lo
    if values.shape[0] - hi < held:
        size = hi - lo + held
        grown_values, grown_counts = np.empty(size + size // 4 + 64), np.zeros(size + size // 4 + 64, np.int64)
        for j in range(hi - lo):  # not grown_values[:hi - lo] = values[lo:hi] (compile time: see kernels/jit.py)
            grown_values[j] = values[lo + j]
            grown_counts[j] = counts[lo + j]
        values, counts, lo, hi = grown_values, grown_counts, 0, hi - lo
    a, b, w = hi - 1, held - 1, hi + held  # read values[a], batch[b]; the merged part is values[w:hi + held]
    while a >= lo or b >= 0:
        if b < 0 or (a >= lo and values[a] >= batch[b]):
            x, c = values[a], counts[a]
            a -= 1
        else:
            x, c = batch[b], 1
            b -= 1
        if w < hi + held and values[w] == x:
            counts[w] += c
        else:
            w -= 1
            values[w] = x
            counts[w] = c
    lo, hi = w, hi + held
    retained = 0
    for j in range(lo, hi):
        retained += counts[j]
    while retained > capacity and lo < hi:
        drop = min(counts[lo], retained - capacity)
        counts[lo] -= drop
        retained -= drop
        if counts[lo] == 0:
            lo += 1
    state[LO], state[HI], state[HELD], state[RETAINED] = lo, hi, 0, retained
    return values, counts
