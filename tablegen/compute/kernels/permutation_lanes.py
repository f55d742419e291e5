"""The max-T kernel with 64 label arrangements in lockstep: the same values, a fraction of the time.

Why
---
The label-permutation kernel (:mod:`tablegen.compute.kernels.permutation`) walks one arrangement at a time: per
model and item a label read through the model's order, then each metric from the cut-offs where TP grew, about
1 ns per arrangement-model-item with the five default metrics (10^4 items).  Every arrangement walks the same
orders; only the labels differ.  Here :data:`LANES` = 64 arrangements share one walk: item i's 64 labels are the
bits of one 64-bit word (``packed[i]``, bit l for arrangement ``first + l``), read once per model and item, and
each metric's running state is an array of 64 lanes that LLVM updates 8 at a time (AVX-512) or 4 (AVX2).  A
model's group ends (its tied scores) are the same in every lane, so the test of a close is one branch per item,
not per lane.

Same values, bit for bit
------------------------
Each lane computes :func:`~tablegen.compute.kernels.permutation.score_model`'s value of its arrangement for the
metric columns 0-4 (AUC, best accuracy, best F1, best balanced accuracy, average precision), the floats the scalar
kernel's cut-off walk gives (``tests/compute/test_permutation_lanes.py`` checks every count and maximum against
it, ties and no ties, whole groups of 64 and remainders):

- AUC: the sum of the positives' doubled midranks, in item order, an exact integer (:func:`auc_from_ranks`);
- best accuracy and best balanced accuracy: the largest D = 2 TP - k and G = n TP - k P over the closes, exact
  integers, starting at the empty cut-off's 0;
- best F1: the close with the largest 2 TP * fl(1 / (P + k)) and one division there, the largest correctly
  rounded quotient (:func:`~tablegen.compute.kernels.permutation._best_f1` proves it, for n up to
  :data:`~tablegen.compute.kernels.permutation.F1_ARGMAX_ITEMS`);
- average precision: gp (TP / k) added at every close in walk order, gp = 0 where TP did not grow (adding 0.0
  leaves the non-negative sum as it is), one correctly rounded division per close and lane, as the scalar walk.

The arrangements are the scalar kernel's (:func:`~tablegen.compute.kernels.permutation.sample_labels` of each
replicate), drawn for the 64 replicates in lockstep (below: the same draws, a rejected one redrawn at once from its
own stream), and each arrangement's values are tallied in replicate order by the scalar kernel's ``tally``; a block
whose length is not a multiple of 64 ends with the scalar kernel's arrangements.  Drawing in lockstep took the
arrangements' share of a 10^6-item max-T pass from about a third to a tenth (best accuracy alone, 10 models: 0.23
-> 0.14 ns per arrangement-model-item).
Other columns (best MCC, TP at k) and more items than ``F1_ARGMAX_ITEMS`` take the scalar kernel.
"""

import numba as nb
import numpy as np

from tablegen.compute.kernels.jit import jit_cached
from tablegen.compute.kernels.permutation import F1_ARGMAX_ITEMS, count_metrics, f1_reciprocals, sample_labels, tally
from tablegen.compute.kernels.prefetch import PREFETCH_DISTANCE, prefetch
from tablegen.compute.kernels.rng import replicate_state, xoshiro_next_int64

#: Arrangements per walk: the bits of one 64-bit word per item.
LANES = 64
#: The kernel columns the lanes score (AUC, best accuracy, best F1, best balanced accuracy, average precision).
LANE_COLUMNS = (0, 1, 2, 3, 4)


def lanes_apply(columns, n: int) -> bool:
    """Whether the lane kernel scores these kernel columns at n items (else the scalar kernel does)."""
    return n <= F1_ARGMAX_ITEMS and all(int(c) in LANE_COLUMNS for c in columns)


# The 64 arrangements are drawn in lockstep, each lane its own replicate's stream (xoshiro256** in int64 arithmetic,
# vectorised over the lanes): item i's draw is Lemire's multiply-shift of the upper 32 bits of one output by n - i, as
# in :func:`~tablegen.compute.kernels.permutation.sample_labels`, and a lane whose low 32 bits fall below the
# rejection threshold (2^32 mod (n - i), the same for every lane) draws again at once, alone, until accepted:
# the draws sample_labels makes, in its order (``tests/compute/test_permutation_lanes.py`` checks the bits).
S0, S1, S2, S3, REMAINING, PRODUCT = range(6)
DRAW_SLOTS = 6
_LOW32 = 0xFFFFFFFF


@nb.njit(nogil=True, error_model="numpy")
def _start(key0, key1, first, n_pos, D):
    """Each lane's stream state (replicate ``first + lane``) and its positives left."""
    for lane in range(LANES):
        s0, s1, s2, s3 = replicate_state(key0, key1, first + lane)
        D[S0 * LANES + lane] = np.int64(s0)
        D[S1 * LANES + lane] = np.int64(s1)
        D[S2 * LANES + lane] = np.int64(s2)
        D[S3 * LANES + lane] = np.int64(s3)
        D[REMAINING * LANES + lane] = n_pos


@nb.njit(nogil=True, error_model="numpy")
def _draw(D, lane, bound):
    """One lane's next output from its stream (its state advanced): the output's upper 32 bits times ``bound``, kept
    in the lane's PRODUCT slot and returned."""
    result, x0, x1, x2, x3 = xoshiro_next_int64(D[S0 * LANES + lane], D[S1 * LANES + lane], D[S2 * LANES + lane],
                                                D[S3 * LANES + lane])
    D[S0 * LANES + lane] = x0
    D[S1 * LANES + lane] = x1
    D[S2 * LANES + lane] = x2
    D[S3 * LANES + lane] = x3
    product = ((result >> 32) & _LOW32) * bound
    D[PRODUCT * LANES + lane] = product
    return product


@nb.njit(nogil=True, error_model="numpy")
def _draw_lanes(D, bound, threshold):
    """Every lane's draw (:func:`_draw`); how many fall below ``threshold`` in their low 32 bits (Lemire's
    rejection)."""
    rejected = 0
    for lane in range(LANES):
        rejected += np.int64((_draw(D, lane, bound) & _LOW32) < threshold)
    return rejected


@nb.njit(nogil=True, error_model="numpy")
def _redraw(D, bound, threshold):
    """The lanes whose draw was rejected draw again from their own streams until accepted (rare: about
    bound / 2^32 per draw)."""
    for lane in range(LANES):
        while (D[PRODUCT * LANES + lane] & _LOW32) < threshold:
            _draw(D, lane, bound)


@nb.njit(nogil=True, error_model="numpy")
def _place(D):
    """Each lane's label of the item just drawn (positive where the draw falls below its positives left) as the bits
    of one word; the positives left updated."""
    word = 0
    for lane in range(LANES):
        positive = np.int64((D[PRODUCT * LANES + lane] >> 32) < D[REMAINING * LANES + lane])
        D[REMAINING * LANES + lane] -= positive
        word |= positive << lane
    return word


@nb.njit(nogil=True, error_model="numpy")
def _pack(key0, key1, first, n_pos, D, packed):
    """Replicates ``first .. first + 63``'s arrangements as bits: bit l of ``packed[i]`` is item i's label in
    replicate ``first + l`` (:func:`~tablegen.compute.kernels.permutation.sample_labels`' draws, 64 streams in
    lockstep)."""
    n = packed.size
    _start(key0, key1, first, n_pos, D)
    for i in range(n):
        bound = n - i
        threshold = ((1 << 32) - bound) % bound  # 2^32 mod bound, as bounded_draw computes it
        if _draw_lanes(D, bound, threshold) > 0:
            _redraw(D, bound, threshold)
        packed[np.uint64(i)] = _place(D)


@nb.njit(nogil=True, error_model="numpy")
def _auc_totals(packed, double_ranks, totals):
    """Each lane's sum of its positives' doubled midranks (item order)."""
    for lane in range(LANES):
        totals[lane] = 0
    for i in range(packed.size):
        word = packed[np.uint64(i)]
        rank = double_ranks[np.uint64(i)]
        for lane in range(LANES):
            totals[lane] += ((word >> lane) & 1) * rank


# Lane state: one flat int64 array of slots (slot * LANES + lane) and one float64 array, as the ranking lanes keep
# theirs (kernels/lanes.py): LLVM sees that the slots do not overlap and vectorises each lane loop.
TP, BEST_D, BEST_G, F1_TP, F1_K, TP_BEFORE = range(6)
INT_SLOTS = 6
AP, F1_LARGEST = range(2)
FLOAT_SLOTS = 2


@nb.njit(inline="always", nogil=True)
def _count_and_close_integers(W, word, k, n, n_pos, accuracy, balanced):
    """At a close: each lane's TP counts the item, and best accuracy's D and balanced accuracy's G (as asked) take
    the cut-off, in one loop over the lanes (TP read and written once: a third less time than a loop for the count
    and one per metric, 10^6 items in random order)."""
    if accuracy and balanced:
        for lane in range(LANES):
            tp = W[TP * LANES + lane] + ((word >> lane) & 1)
            W[TP * LANES + lane] = tp
            W[BEST_D * LANES + lane] = max(W[BEST_D * LANES + lane], 2 * tp - k)
            W[BEST_G * LANES + lane] = max(W[BEST_G * LANES + lane], n * tp - k * n_pos)
    elif accuracy:
        for lane in range(LANES):
            tp = W[TP * LANES + lane] + ((word >> lane) & 1)
            W[TP * LANES + lane] = tp
            W[BEST_D * LANES + lane] = max(W[BEST_D * LANES + lane], 2 * tp - k)
    elif balanced:
        for lane in range(LANES):
            tp = W[TP * LANES + lane] + ((word >> lane) & 1)
            W[TP * LANES + lane] = tp
            W[BEST_G * LANES + lane] = max(W[BEST_G * LANES + lane], n * tp - k * n_pos)
    else:
        for lane in range(LANES):
            W[TP * LANES + lane] += (word >> lane) & 1


@nb.njit(nogil=True, error_model="numpy")
def _walk(packed, order, group_end, n_pos, want, reciprocals, W, F):
    """One model's walk for every lane: ``W``'s slots TP, best D, best G, best F1's TP and k, TP at the last close;
    ``F``'s average precision's sums and best F1's largest approximation; ``want[c]`` whether column c is scored.
    Selects are written as arithmetic (a 0/1 mask times the change) so that no lane loop branches."""
    n = order.size
    for i in range(INT_SLOTS * LANES):
        W[i] = 0
    for i in range(FLOAT_SLOTS * LANES):
        F[i] = 0.0
    ahead = n - PREFETCH_DISTANCE
    for j in range(n):
        if j < ahead:  # the word PREFETCH_DISTANCE items on (8 MB of words at 10^6 items)
            prefetch(packed, np.int64(order[np.uint64(j + PREFETCH_DISTANCE)]))
        word = packed[np.uint64(order[np.uint64(j)])]
        if group_end[np.uint64(j)] == 0:
            for lane in range(LANES):
                W[TP * LANES + lane] += (word >> lane) & 1
            continue
        k = j + 1
        _count_and_close_integers(W, word, k, n, n_pos, want[1], want[3])
        if want[2]:
            reciprocal = reciprocals[np.uint64(k)]
            for lane in range(LANES):
                tp = W[TP * LANES + lane]
                approximate = (2 * tp) * reciprocal
                largest = F[F1_LARGEST * LANES + lane]
                better = np.int64(approximate > largest)
                F[F1_LARGEST * LANES + lane] = max(largest, approximate)
                W[F1_TP * LANES + lane] += better * (tp - W[F1_TP * LANES + lane])
                W[F1_K * LANES + lane] += better * (k - W[F1_K * LANES + lane])
        if want[4]:
            for lane in range(LANES):
                tp = W[TP * LANES + lane]
                F[AP * LANES + lane] += (tp - W[TP_BEFORE * LANES + lane]) * (tp / k)
                W[TP_BEFORE * LANES + lane] = tp


@nb.njit(nogil=True, error_model="numpy")
def _lane_values(packed, orders, group_ends, double_ranks, n_pos, columns, reciprocals, W, F, totals, values):
    """``values[t, m, lane]``: model m's value of column ``columns[t]`` in each lane's arrangement."""
    models, n = orders.shape
    n_neg = n - n_pos
    want = np.zeros(5, np.bool_)
    for t in range(columns.size):
        want[columns[t]] = True
    for m in range(models):
        if want[1] or want[2] or want[3] or want[4]:
            _walk(packed, orders[m], group_ends[m], n_pos, want, reciprocals, W, F)
        if want[0]:
            _auc_totals(packed, double_ranks[m], totals)
        for t in range(columns.size):
            column = columns[t]
            for lane in range(LANES):
                if column == 0:
                    value = ((totals[lane] - n_pos * (n_pos + 1)) * 0.5) / (n_pos * n_neg)
                elif column == 1:
                    value = (W[BEST_D * LANES + lane] + n_neg) / (n_pos + n_neg)
                elif column == 3:
                    value = (W[BEST_G * LANES + lane] + n_pos * n_neg) / (2 * n_pos * n_neg)
                elif column == 2:
                    f1_k = W[F1_K * LANES + lane]
                    value = 0.0 if f1_k == 0 else (2 * W[F1_TP * LANES + lane]) / (n_pos + f1_k)
                else:
                    value = F[AP * LANES + lane] / n_pos
                values[t, m, lane] = value


@jit_cached(nogil=True, error_model="numpy")
def lane_metrics_counts(orders, group_ends, double_ranks, untied, n_pos, columns, k_cuts, weights, members, sizes,
                        thresholds, ranked, key0, key1, first, maxima, raw_hits, step_hits):
    """:func:`~tablegen.compute.kernels.permutation.permutation_metrics_counts`, the same arguments and results bit
    for bit, 64 replicates per walk (columns in :data:`LANE_COLUMNS` only: :func:`lanes_apply`); the replicates
    past the last whole group of 64 by the scalar kernel's walk."""
    models, n = orders.shape
    rows = maxima.shape[1]
    labels = np.empty(n, np.uint8)
    packed = np.empty(n, np.int64)
    D = np.empty(DRAW_SLOTS * LANES, np.int64)
    reciprocals = f1_reciprocals(n_pos, n)
    W = np.empty(INT_SLOTS * LANES, np.int64)
    F = np.empty(FLOAT_SLOTS * LANES)
    totals = np.empty(LANES, np.int64)
    lane_values = np.empty((columns.size, models, LANES))
    values = np.empty((columns.size, models))
    whole = rows - rows % LANES
    for start in range(0, whole, LANES):
        _pack(key0, key1, first + start, n_pos, D, packed)
        _lane_values(packed, orders, group_ends, double_ranks, n_pos, columns, reciprocals, W, F, totals, lane_values)
        for lane in range(LANES):
            row = start + lane
            for t in range(columns.size):
                for m in range(models):
                    values[t, m] = lane_values[t, m, lane]
                tally(values[t], members[t], sizes[t], thresholds[t], ranked[t], row, maxima[t], raw_hits[t],
                       step_hits[t])
    cut_tp, cut_k = np.empty(n, np.int64), np.empty(n, np.int64)
    for row in range(whole, rows):
        sample_labels(key0, key1, first + row, n_pos, labels)
        count_metrics(labels, orders, group_ends, double_ranks, untied, n_pos, columns, k_cuts, weights, members,
                       sizes, thresholds, ranked, values, cut_tp, cut_k, reciprocals, row, maxima, raw_hits,
                       step_hits)


@jit_cached(nogil=True, error_model="numpy")
def lane_arrangement_values(orders, group_ends, double_ranks, n_pos, columns, key0, key1, first, values):
    """``values[t, m, lane]``: model m's value of kernel column ``columns[t]`` (in :data:`LANE_COLUMNS`) in arrangement
    ``first + lane``, for the 64 arrangements ``first .. first + 63``: the values :func:`lane_metrics_counts` tallies,
    bit for bit (the max-T test's follow-up reads where in a block a count reached its h-th arrangement from them)."""
    n = orders.shape[1]
    packed = np.empty(n, np.int64)
    D = np.empty(DRAW_SLOTS * LANES, np.int64)
    W = np.empty(INT_SLOTS * LANES, np.int64)
    F = np.empty(FLOAT_SLOTS * LANES)
    totals = np.empty(LANES, np.int64)
    _pack(key0, key1, first, n_pos, D, packed)
    _lane_values(packed, orders, group_ends, double_ranks, n_pos, columns, f1_reciprocals(n_pos, n), W, F, totals,
                 values)
