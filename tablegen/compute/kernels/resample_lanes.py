"""The bootstrap kernel with 64 resamples in lockstep: the same values, a fraction of the time.

Why
---
The bootstrap kernel (:mod:`tablegen.compute.kernels.resample`) walks one resample at a time along each model's
order, gathering each item's multiplicity from a byte per item: about 3 ns per resample, model and item at 10^6
items.  Every resample walks the same orders; only the multiplicities differ.  Here :data:`LANES` = 64 resamples
share one walk: their multiplicities are drawn as before (one byte per item and resample, by slot), then
transposed so that an item's 64 multiplicities are 64 consecutive bytes (one cache line), read once per model and
item, and every metric's running state is an array of 64 lanes updated 8 at a time (AVX-512) or 4 (AVX2).  At 10^6
items the walk waits on memory for each row, however many lanes it holds: 64 lanes against 32 halve the rows
fetched per resample (0.81 -> 0.59 ns per resample-model-item, 10 models x 10^6 items, all five metrics, EPYC
AVX-512), for 2 x 64 bytes an item of tables (128 MB at 10^6 items).  A model's labels and
group ends are the same in every lane, so the branches on them are per item, not per lane: a model without tied
scores closes a cut-off only at its positives (a cut-off after a negative holds the same TP and more FP, no larger
a value of any of these metrics, and adds nothing to AUC or average precision).

Same values, bit for bit
------------------------
Each lane's values are :func:`~tablegen.compute.kernels.resample.metrics_pass`'s for AUC, best accuracy, best F1,
best balanced accuracy and average precision (``tests/compute/test_resample_lanes.py`` checks every value
against it, ties and no ties, wide multiplicities, whole groups and remainders):

- AUC: A and B (the weighted pairs, and the tied ones) as exact integers, summed at the closes;
- best accuracy: the largest TP - FP, an integer;
- best F1: the largest correctly rounded 2 TP / (P + k), which is the scalar kernel's one division at the largest
  fraction (rounding is monotone);
- best balanced accuracy: the scorer's float 0.5 (TP / P + 1 - FP / N), kept where the integer key TP N - FP P
  reaches its running maximum (every cut-off when P N is past
  :data:`~tablegen.compute.kernels.resample.EXACT_BA_LIMIT`), as the scalar kernel keeps it; a close where TP did
  not grow has a smaller key, or the same cut-off's;
- average precision: gp (TP / k) added close by close (gp = 0 adds 0.0).

Resamples are the scalar kernel's (:func:`~tablegen.compute.kernels.resample.draw_weights` of each replicate); one
whose count reached the byte's limit is scored again from eight-byte counts by the scalar pass, as the scalar kernel
does.  Best MCC, TP at k and the resamples past the last whole group of 64 take the scalar kernel.
"""

import numba as nb
import numpy as np

from tablegen.compute.kernels.jit import jit_cached
from tablegen.compute.kernels.prefetch import PREFETCH_DISTANCE, prefetch
from tablegen.compute.kernels.resample import (
    EXACT_BA_LIMIT,
    draw_weights,
    metrics_pass,
    resample_metrics,
    untied_models,
)

#: Resamples per walk: an item's multiplicities are 64 consecutive bytes (one cache line).
LANES = 64
# Lane state: one flat int64 array of slots (slot * LANES + lane) and one float64 array (kernels/lanes.py's layout:
# LLVM sees that the slots do not overlap and vectorises each lane loop).
TP, FP, TP_BEFORE, FP_BEFORE, A, B, BEST_D, BA_KEY = range(8)
INT_SLOTS = 8
F1, BA, AP = range(3)
FLOAT_SLOTS = 3


def resample_lanes_apply(want, k_cuts) -> bool:
    """Whether the lane kernel scores these columns (no best MCC, no TP at k)."""
    return int(want[5]) == 0 and len(k_cuts) == 0


@nb.njit(nogil=True, error_model="numpy")
def _transpose(rows, lane_weights):
    """``lane_weights[slot * LANES + lane]`` = ``rows[lane, slot]``, 64 slots at a time (both sides in cache)."""
    n = rows.shape[1]
    for start in range(0, n, 64):
        stop = min(start + 64, n)
        for lane in range(LANES):
            for slot in range(start, stop):
                lane_weights[np.uint64(slot * LANES + lane)] = rows[lane, np.uint64(slot)]


@nb.njit(nogil=True, error_model="numpy")
def _close(W, F, n_pos, n_neg, want, exact_ba):
    """Every lane's cut-off at its TP and FP: the maxima and average precision's term."""
    every_cutoff = not exact_ba
    for lane in range(LANES):
        tp = W[TP * LANES + lane]
        fp = W[FP * LANES + lane]
        W[BEST_D * LANES + lane] = max(W[BEST_D * LANES + lane], tp - fp)
    if want[2]:
        for lane in range(LANES):
            tp = W[TP * LANES + lane]
            k = tp + W[FP * LANES + lane]
            F[F1 * LANES + lane] = max(F[F1 * LANES + lane], (2 * tp) / (n_pos + k))
    if want[3]:
        for lane in range(LANES):
            tp = W[TP * LANES + lane]
            fp = W[FP * LANES + lane]
            key = tp * n_neg - fp * n_pos
            reach = (key >= W[BA_KEY * LANES + lane]) | every_cutoff
            value = 0.5 * (tp / n_pos + 1 - fp / n_neg)
            best = F[BA * LANES + lane]
            F[BA * LANES + lane] = max(best, value) if reach else best
            W[BA_KEY * LANES + lane] = max(W[BA_KEY * LANES + lane], key)
    if want[4]:
        for lane in range(LANES):
            tp = W[TP * LANES + lane]
            k = max(tp + W[FP * LANES + lane], 1)  # k = 0: nothing yet, TP = 0, a zero term
            F[AP * LANES + lane] += (tp - W[TP_BEFORE * LANES + lane]) * (tp / k)
            W[TP_BEFORE * LANES + lane] = tp


@nb.njit(inline="always", nogil=True)
def _count_and_close_all(W, F, lane_weights, base, n_pos, n_neg, exact_ba):
    """An untied model's positive with every column of the lanes wanted: each lane counts its weight (TP, A) and
    closes (:func:`_close`'s five updates) in one loop, reading TP and FP once (the same operations lane by lane: the
    same values, bit for bit).  The updates are written out as in :func:`_close`: a per-lane helper called in the
    loop, inlined or not, stopped LLVM vectorising it (39 -> 114 ms a model walk)."""
    every_cutoff = not exact_ba
    for lane in range(LANES):
        w = np.int64(lane_weights[np.uint64(base + lane)])
        tp = W[TP * LANES + lane] + w
        fp = W[FP * LANES + lane]
        W[TP * LANES + lane] = tp
        W[A * LANES + lane] += w * (n_neg - fp)
        W[BEST_D * LANES + lane] = max(W[BEST_D * LANES + lane], tp - fp)
        k = tp + fp
        F[F1 * LANES + lane] = max(F[F1 * LANES + lane], (2 * tp) / (n_pos + k))
        key = tp * n_neg - fp * n_pos
        reach = (key >= W[BA_KEY * LANES + lane]) | every_cutoff
        value = 0.5 * (tp / n_pos + 1 - fp / n_neg)
        best = F[BA * LANES + lane]
        F[BA * LANES + lane] = max(best, value) if reach else best
        W[BA_KEY * LANES + lane] = max(W[BA_KEY * LANES + lane], key)
        F[AP * LANES + lane] += (tp - W[TP_BEFORE * LANES + lane]) * (tp / max(k, 1))
        W[TP_BEFORE * LANES + lane] = tp


@nb.njit(nogil=True, error_model="numpy")
def _walk(codes, untied, lane_weights, n_pos, n_neg, want, exact_ba, W, F):
    """One model's weighted walk for every lane (the scalar ``_walk``'s sums and closes)."""
    for i in range(INT_SLOTS * LANES):
        W[i] = 0
    for lane in range(LANES):
        F[F1 * LANES + lane] = 0.0
        F[BA * LANES + lane] = 0.5  # the empty cut-off's
        F[AP * LANES + lane] = 0.0
    every_column = want[0] and want[1] and want[2] and want[3] and want[4]
    ahead = codes.size - PREFETCH_DISTANCE
    for j in range(codes.size):
        if j < ahead:  # the row PREFETCH_DISTANCE items on: at 10^6 items the rows are far beyond the caches
            prefetch(lane_weights, (np.int64(codes[np.uint64(j + PREFETCH_DISTANCE)]) >> 2) * LANES)
        code = np.int64(codes[np.uint64(j)])
        base = (code >> 2) * LANES
        if (code >> 1) & 1:
            if untied and every_column:  # the report's five columns: the count and every close in one loop
                _count_and_close_all(W, F, lane_weights, base, n_pos, n_neg, exact_ba)
                continue
            if untied:  # each positive its own group: A += w (N - FP), B stays 0
                for lane in range(LANES):
                    w = np.int64(lane_weights[np.uint64(base + lane)])
                    W[TP * LANES + lane] += w
                    W[A * LANES + lane] += w * (n_neg - W[FP * LANES + lane])
                _close(W, F, n_pos, n_neg, want, exact_ba)
                continue
            for lane in range(LANES):
                W[TP * LANES + lane] += np.int64(lane_weights[np.uint64(base + lane)])
        else:
            for lane in range(LANES):
                W[FP * LANES + lane] += np.int64(lane_weights[np.uint64(base + lane)])
        if not untied and code & 1:
            if want[0]:
                for lane in range(LANES):
                    tp = W[TP * LANES + lane]
                    fp = W[FP * LANES + lane]
                    gp = tp - W[TP_BEFORE * LANES + lane]
                    W[A * LANES + lane] += gp * (n_neg - fp)
                    W[B * LANES + lane] += gp * (fp - W[FP_BEFORE * LANES + lane])
                    W[FP_BEFORE * LANES + lane] = fp
            _close(W, F, n_pos, n_neg, want, exact_ba)
            if not want[4]:  # TP at the last close (average precision's close keeps it otherwise)
                for lane in range(LANES):
                    W[TP_BEFORE * LANES + lane] = W[TP * LANES + lane]


@nb.njit(nogil=True, error_model="numpy")
def _lane_values(W, F, lane, n_pos, n_neg, want, out):
    """One lane's values into ``out`` (the scalar pass's columns; NaN where not wanted)."""
    out[0] = (W[A * LANES + lane] + 0.5 * W[B * LANES + lane]) / (n_pos * n_neg) if want[0] else np.nan
    out[1] = (W[BEST_D * LANES + lane] + n_neg) / (n_pos + n_neg) if want[1] else np.nan
    out[2] = F[F1 * LANES + lane] if want[2] else np.nan
    out[3] = F[BA * LANES + lane] if want[3] else np.nan
    out[4] = F[AP * LANES + lane] / n_pos if want[4] else np.nan
    out[5] = np.nan


@jit_cached(nogil=True, error_model="numpy")
def lane_resample_metrics(codes, n_pos, n_neg, want, k_cuts, key0, key1, first, out, narrow_limit):
    """:func:`~tablegen.compute.kernels.resample.resample_metrics`, the same arguments (``narrow_limit`` given) and
    values bit for bit, 64 resamples per walk (no best MCC, no TP at k: :func:`resample_lanes_apply`)."""
    n = n_pos + n_neg
    models = codes.shape[0]
    rows = out.shape[0]
    whole = rows - rows % LANES
    untied = untied_models(codes)
    exact_ba = np.float64(n_pos) * np.float64(n_neg) < EXACT_BA_LIMIT
    narrow = np.zeros((LANES, n), np.uint8)
    lane_weights = np.empty(n * LANES, np.uint8)
    wide = np.zeros(0, np.int64)
    overflowed = np.zeros(LANES, np.bool_)
    tpk = np.empty(0, np.int64)
    cutoffs = np.empty(2 * (n_pos + 1), np.int64)
    W = np.empty(INT_SLOTS * LANES, np.int64)
    F = np.empty(FLOAT_SLOTS * LANES)
    for start in range(0, whole, LANES):
        for lane in range(LANES):
            row = narrow[lane]
            for i in range(n):
                row[i] = 0
            overflowed[lane] = draw_weights(key0, key1, first + start + lane, n_pos, n_neg, row) >= narrow_limit
        _transpose(narrow, lane_weights)
        for m in range(models):
            _walk(codes[m], untied[m], lane_weights, n_pos, n_neg, want, exact_ba, W, F)
            for lane in range(LANES):
                _lane_values(W, F, lane, n_pos, n_neg, want, out[start + lane, m])
        for lane in range(LANES):  # a count past the byte's limit: that resample again from eight-byte counts
            if overflowed[lane]:
                if wide.size == 0:
                    wide = np.zeros(n, np.int64)
                for i in range(n):
                    wide[i] = 0
                draw_weights(key0, key1, first + start + lane, n_pos, n_neg, wide)
                for m in range(models):
                    metrics_pass(codes[m], untied[m], wide, n_pos, n_neg, want, k_cuts, tpk, cutoffs,
                                 out[start + lane, m])
    if whole < rows:
        resample_metrics(codes, n_pos, n_neg, want, k_cuts, key0, key1, first + whole, out[whole:], narrow_limit)
