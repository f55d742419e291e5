"""The paired swap kernel with 64 random swap patterns in lockstep: the same differences, a fraction of the time.

Why
---
The swap kernel (:mod:`tablegen.compute.kernels.swaps`) lays out each pattern's two swapped vectors by a walk of
the merged order that sends every entry to its side (a data-dependent store per entry), then walks each side:
about 4.6 ns per pattern and item at 10^4 items, most of it the layout.  But no metric needs the layout.  Walking
the merged order once for :data:`~tablegen.compute.kernels.permutation_lanes.LANES` = 64 patterns, each pattern's
sides are counters in its lane: an entry (model a's or b's value of item i) goes to side A' in the lanes whose
pattern leaves item i alone when it is an a-value, swaps it when it is a b-value; its label is the same in every
lane.  Item i's 64 swap flags are the bits of one word (the 64 patterns' streams transposed, 64 items at a time).
Only side A' is counted per lane: every entry goes to one side, so side B''s counts are the walk's totals less side
A''s (half the counting per entry, and the last close's counts likewise: 165 -> 87 ms per 64 patterns of 10^6
items, all five columns, AMD EPYC AVX-512).

A side's tie group is its entries of one run of equal values of the merged order (values are sorted), so every
group of both sides closes where a run ends: at each run's end every lane closes both sides, a side with no entry
in the run closing an empty group (TP and k as at its last close: the maxima are unchanged, average precision and
AUC add a zero term, 0.0, which leaves their non-negative sums as they are).

Same differences, bit for bit
-----------------------------
Each lane's side values are :func:`~tablegen.compute.kernels.permutation.score_model`'s for the kernel columns 0-4:
AUC's 2U as gp (2 N - FP - FP before the group) summed over the closes, best accuracy's D = 2 TP - k and balanced
accuracy's G = n TP - k P, all exact integers; best F1 as the largest correctly rounded quotient 2 TP / (P + k) over
the closes (a vector division per close: the lanes' k differ, and a division beat reading fl(1 / (P + k)) from a
table lane by lane); average precision as gp (TP / k) added close by close.  ``out[c, r]`` is side A's value less
side B's, the float :func:`~tablegen.compute.kernels.swaps.swap_differences` writes
(``tests/compute/test_swap_lanes.py`` checks every difference against it, ties and no ties).  Patterns are the swap
kernel's (replicate r's stream, 64 flags per output); the patterns past the last whole group of 64, exact
enumerations and other columns (best MCC, TP at k) take the swap kernel itself.
"""

import numba as nb
import numpy as np

from tablegen.compute.kernels.jit import jit_cached
from tablegen.compute.kernels.permutation_lanes import LANE_COLUMNS, LANES
from tablegen.compute.kernels.prefetch import PREFETCH_DISTANCE, prefetch
from tablegen.compute.kernels.rng import replicate_state, xoshiro_next
from tablegen.compute.kernels.swaps import swap_differences

# Lane state, one flat int64 array of slots (slot * LANES + lane), side A's slot then side B's (+ 1) for the
# metrics' running values; side A's counts alone (K_A, TP_A, and their values at the last close), side B's being the
# walk's totals less side A's (every entry goes to one side: K_B = entries - K_A, TP_B = positives - TP_A), which
# halves the counting per entry:
U2, BEST_D, BEST_G = (2 * s for s in range(3))
K_A, TP_A, TP_BEFORE_A, FP_BEFORE_A = range(6, 10)
INT_SLOTS = 10
AP, F1_BEST = 0, 2  # float64 slots, side A's then side B's
FLOAT_SLOTS = 4


def swap_lanes_apply(columns, exact: bool) -> bool:
    """Whether the lane kernel draws these kernel columns' random patterns (else the swap kernel)."""
    return not exact and all(int(c) in LANE_COLUMNS for c in columns)


@nb.njit(nogil=True, error_model="numpy")
def _flag_words(key0, key1, first, n, streams, packed):
    """Patterns ``first .. first + 63``'s swap flags as bits: bit l of ``packed[i]`` is whether pattern ``first + l``
    swaps item i (its stream's output i // 64, bit i % 64, as the swap kernel reads it)."""
    words = streams.shape[0]
    for lane in range(LANES):
        s0, s1, s2, s3 = replicate_state(key0, key1, first + lane)
        for w in range(words):
            streams[w, lane], s0, s1, s2, s3 = xoshiro_next(s0, s1, s2, s3)
    for w in range(words):
        row = streams[w]
        for b in range(min(64, n - 64 * w)):
            shift = np.uint64(b)
            word = np.uint64(0)
            for lane in range(LANES):
                word |= ((row[lane] >> shift) & np.uint64(1)) << np.uint64(lane)
            packed[64 * w + b] = np.int64(word)


@nb.njit(inline="always", nogil=True)
def _close_side(W, F, n, n_pos, want, side, sign, k_total, tp_total, tp_before_total, fp_before_total):
    """Close one side's current group in every lane: its counts are ``total + sign x`` side A's (sign 1 and totals
    0 for side A; sign -1 and the walk's totals for side B)."""
    n_neg = n - n_pos
    if want[1]:
        for lane in range(LANES):
            tp = tp_total + sign * W[TP_A * LANES + lane]
            k = k_total + sign * W[K_A * LANES + lane]
            W[(BEST_D + side) * LANES + lane] = max(W[(BEST_D + side) * LANES + lane], 2 * tp - k)
    if want[3]:
        for lane in range(LANES):
            tp = tp_total + sign * W[TP_A * LANES + lane]
            k = k_total + sign * W[K_A * LANES + lane]
            W[(BEST_G + side) * LANES + lane] = max(W[(BEST_G + side) * LANES + lane], n * tp - k * n_pos)
    if want[2]:  # the largest correctly rounded quotient, as the scalar walk (a vector division beats a gather)
        for lane in range(LANES):
            tp = tp_total + sign * W[TP_A * LANES + lane]
            k = k_total + sign * W[K_A * LANES + lane]
            F[(F1_BEST + side) * LANES + lane] = max(F[(F1_BEST + side) * LANES + lane], (2 * tp) / (n_pos + k))
    if want[4]:
        for lane in range(LANES):
            tp = tp_total + sign * W[TP_A * LANES + lane]
            k = max(k_total + sign * W[K_A * LANES + lane], 1)  # k = 0: no entry yet, TP = 0, a zero term
            tp_before = tp_before_total + sign * W[TP_BEFORE_A * LANES + lane]
            F[(AP + side) * LANES + lane] += (tp - tp_before) * (tp / k)
    if want[0]:
        for lane in range(LANES):
            tp = tp_total + sign * W[TP_A * LANES + lane]
            k = k_total + sign * W[K_A * LANES + lane]
            tp_before = tp_before_total + sign * W[TP_BEFORE_A * LANES + lane]
            fp_before = fp_before_total + sign * W[FP_BEFORE_A * LANES + lane]
            W[(U2 + side) * LANES + lane] += (tp - tp_before) * (2 * n_neg - (k - tp) - fp_before)


@nb.njit(nogil=True, error_model="numpy")
def _close(W, F, n, n_pos, want, entries, positives, before_positives, before_negatives):
    """Close both sides' current groups in every lane (an empty group changes nothing); ``entries`` and
    ``positives`` walked so far, ``before_*`` the positives and negatives walked at the last close."""
    _close_side(W, F, n, n_pos, want, 0, 1, 0, 0, 0, 0)
    _close_side(W, F, n, n_pos, want, 1, -1, entries, positives, before_positives, before_negatives)
    for lane in range(LANES):
        W[TP_BEFORE_A * LANES + lane] = W[TP_A * LANES + lane]
        W[FP_BEFORE_A * LANES + lane] = W[K_A * LANES + lane] - W[TP_A * LANES + lane]


@nb.njit(nogil=True, error_model="numpy")
def _walk(entry_items, entry_sources, entry_labels, run_starts, packed, n_pos, want, W, F):
    """Every lane's two sides along the merged order: side A's counts per entry, both sides closed at each run's
    end."""
    n = packed.size
    for i in range(INT_SLOTS * LANES):
        W[i] = 0
    for i in range(FLOAT_SLOTS * LANES):
        F[i] = 0.0
    positives = 0  # entries and positive entries walked, and both at the last close (the two sides together)
    before_positives = before_negatives = 0
    ahead = 2 * n - PREFETCH_DISTANCE
    for e in range(2 * n):
        if e < ahead:  # the flag word PREFETCH_DISTANCE entries on (8 MB of words at 10^6 items)
            prefetch(packed, np.int64(entry_items[np.uint64(e + PREFETCH_DISTANCE)]))
        if e > 0 and run_starts[np.uint64(e)] != 0:
            _close(W, F, n, n_pos, want, e, positives, before_positives, before_negatives)
            before_positives, before_negatives = positives, e - positives
        word = packed[np.uint64(entry_items[np.uint64(e)])]
        on_a = 1 - np.int64(entry_sources[np.uint64(e)])
        label = np.int64(entry_labels[np.uint64(e)])
        positives += label
        for lane in range(LANES):
            to_a = ((word >> lane) & 1) ^ on_a  # side A' in this lane
            W[K_A * LANES + lane] += to_a
            W[TP_A * LANES + lane] += label * to_a
    _close(W, F, n, n_pos, want, 2 * n, positives, before_positives, before_negatives)


@nb.njit(nogil=True, error_model="numpy")
def _side_value(W, F, side, lane, column, n, n_pos):
    """One side's value of ``column`` in one lane (:func:`~tablegen.compute.kernels.permutation.score_model`'s)."""
    n_neg = n - n_pos
    if column == 0:
        return (W[(U2 + side) * LANES + lane] * 0.5) / (n_pos * n_neg)
    if column == 1:
        return (W[(BEST_D + side) * LANES + lane] + n_neg) / (n_pos + n_neg)
    if column == 3:
        return (W[(BEST_G + side) * LANES + lane] + n_pos * n_neg) / (2 * n_pos * n_neg)
    if column == 2:
        return F[(F1_BEST + side) * LANES + lane]
    return F[(AP + side) * LANES + lane] / n_pos


@jit_cached(nogil=True, error_model="numpy")
def lane_swap_differences(items, sources, values, labels, n_pos, columns, k_cut, weights, exact, key0, key1, first,
                          out):
    """:func:`~tablegen.compute.kernels.swaps.swap_differences`, the same arguments and differences bit for bit, 64
    random patterns per walk (columns in :data:`~tablegen.compute.kernels.permutation_lanes.LANE_COLUMNS`, not
    ``exact``: :func:`swap_lanes_apply`); the patterns past the last whole group of 64 by the swap kernel."""
    n = labels.size
    rows = out.shape[1]
    whole = rows - rows % LANES
    entry_items = np.empty(2 * n, np.uint32)
    entry_labels = np.empty(2 * n, np.uint8)
    run_starts = np.ones(2 * n, np.uint8)
    for e in range(2 * n):
        entry_items[e] = items[e]
        entry_labels[e] = labels[items[e]]
        if e > 0:
            run_starts[e] = values[e] != values[e - 1]
    want = np.zeros(5, np.bool_)
    for c in range(columns.size):
        want[columns[c]] = True
    streams = np.empty(((n + 63) // 64, LANES), np.uint64)
    packed = np.empty(n, np.int64)
    W = np.empty(INT_SLOTS * LANES, np.int64)
    F = np.empty(FLOAT_SLOTS * LANES)
    for start in range(0, whole, LANES):
        _flag_words(key0, key1, first + start, n, streams, packed)
        _walk(entry_items, sources, entry_labels, run_starts, packed, n_pos, want, W, F)
        for lane in range(LANES):
            for c in range(columns.size):
                column = columns[c]
                out[c, start + lane] = (_side_value(W, F, 0, lane, column, n, n_pos)
                                        - _side_value(W, F, 1, lane, column, n, n_pos))
    if whole < rows:
        swap_differences(items, sources, values, labels, n_pos, columns, k_cut, weights, exact, key0, key1,
                         first + whole, out[:, whole:])
