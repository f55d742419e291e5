"""Label-permutation kernel: every model scored on the same random (or enumerated) label arrangement.

The null of a selection-aware test (:mod:`tablegen.compare.selection`) permutes the labels once and
scores every model on that permutation.  Each model's items are sorted once, by descending score
(``order``), with ``group_end`` marking the last item of each group of tied scores; a permutation is a
0/1 label per item (``labels``, P ones among n), and a model's value is one pass over its sorted
items, closing a threshold group at each ``group_end``: the cut-offs of
:mod:`tablegen.compute.metrics_from_scores` (tied scores form one group, a tied positive-negative pair
counts ½ in AUC).

Scoring, at the close of a group holding ``gp`` positives and ``gn`` negatives (integers only, but
average precision and best MCC), with the registry entry's kernel column as ``column``:
``0 auc``                     2U += 2 gp (N - FP) + gp gn (FP after the group), value (2U / 2) / (P N)
                              (the loop over random arrangements reads it from doubled midranks instead:
                              :func:`auc_from_ranks`, the same integer)
``1 best_accuracy``           max of D = TP - FP, value (D + N) / (P + N)
``2 best_f1``                 max of the quotients 2 TP / (P + k), each one correctly rounded division
``3 best_balanced_accuracy``  max of G = TP N - FP P, value (G + P N) / (2 P N)
``4 average_precision``       sum of gp TP / k over groups, divided by P
``5 best_mcc``                max of G w_k (the tabulated :func:`~tablegen.compute.kernels.ranking.mcc_weights`),
                              capped at 1; 0 at the empty and full cut-offs
``6 tp_at_k``                 TP at the group boundary k (P when k >= n); the caller leaves out
                              models whose tied scores straddle k
Every value but average precision and best MCC is one correctly rounded division of two exact integers,
so the integer-valued metrics equal the registry's scorers bit for bit; average precision and best MCC
agree to a few ulps (``tests/compute/test_permutation_kernel.py`` checks every metric against the
registry's ``score_groups`` on random labels and tied scores).

Label arrangements: replicate r draws its arrangement from its own xoshiro256** stream
(:func:`~tablegen.compute.kernels.rng.replicate_state` of the question's key and r), by sequential
sampling over the items (item i is positive with probability p_rem / (n - i)), each draw a
Lemire multiply-shift of the upper 32 bits of one output with its rejection step, so every one of
the C(n, P) arrangements is equally likely and a replicate's arrangement does not depend on how the
replicates are split into blocks.  :func:`~tablegen.compute.kernels.enumeration.enumeration_metrics_counts` visits
the arrangements themselves, in lexicographic order of the positives' positions, from any rank (the combinatorial
number system).

Per arrangement the kernels record the maximum over models and count, for each model, whether its
value reaches its observed one (``raw_hits``) and whether the maximum over the models ranked at or
below it by observed value reaches it (``step_hits``, Westfall & Young's step-down).  "Reaches" is
``value >= threshold``; the caller passes thresholds already lowered by the snap tolerance.
Integer widths: int64 counters (n <= 2**31 items); the RNG is uint64.
"""

import math

import numba as nb
import numpy as np

from tablegen.compute.kernels.jit import jit_cached
from tablegen.compute.kernels.ranking import draw_below
from tablegen.compute.kernels.rng import replicate_state

#: Kernel column codes this kernel scores (the registry's kernel columns; tp_at_k is 6).
SCORED_COLUMNS = 7


@nb.njit(inline="always", nogil=True)
def sample_labels(key0, key1, replicate, n_pos, labels):
    """Replicate ``replicate``'s arrangement of ``n_pos`` positives over the items (sequential sampling)."""
    s0, s1, s2, s3 = replicate_state(key0, key1, replicate)
    n = labels.size
    remaining = n_pos
    for i in range(n):
        j, s0, s1, s2, s3 = draw_below(np.uint64(n - i), s0, s1, s2, s3)
        positive = 1 if j < np.uint64(remaining) else 0
        labels[i] = positive
        remaining -= positive


# The walks below close a group without branching on where groups end: at every item they compute what a
# close would add and keep it only where the item ends a group (a select, or a zero term that leaves the sum
# or the maximum as it is).  Tied scores put group ends at unpredictable places (the swap kernel's swapped
# midranks tie at random), where a branch mispredicted: 2.5-3x the time per item.  Where groups are few (heavily
# tied scores) the branch is predicted, and AUC, best F1 and average precision, whose closes cost a chain of
# additions or a division per item as selects, take it instead (:func:`_sparse_walk`).  Every value is the float
# the branching walk gave, bit for bit (tests/compute/test_score_model.py keeps that walk as its oracle).

#: Fewer closes than one in this many items: AUC, best F1 and average precision branch at the closes (measured
#: on the swap kernel's walks: the branch costs less below about 1 close in 20 items, the selects above).
SPARSE_CLOSES = 32


@nb.njit(inline="always", nogil=True)
def _auc_walk(labels, order, group_end, n_pos):
    """AUC: 2U += gp (2 N - FP - FP before the group) at each close (= 2 gp (N - FP) + gp gn)."""
    n_neg = order.size - n_pos
    tp = 0
    tp_before = 0
    fp_before = 0
    u2 = 0
    for j in range(order.size):
        tp += labels[order[j]]
        fp = j + 1 - tp
        close = group_end[j] != 0
        term = (tp - tp_before) * (2 * n_neg - fp - fp_before)
        u2 += term if close else 0
        tp_before = tp if close else tp_before
        fp_before = fp if close else fp_before
    return (u2 * 0.5) / (n_pos * n_neg)


@nb.njit(inline="always", nogil=True)
def _best_integer_walk(labels, order, group_end, n_pos, column):
    """Best accuracy (column 1: D = TP - FP = 2 TP - k) or best balanced accuracy (3: G = TP N - FP P =
    n TP - k P), each kept as a running sum; the maximum starts at the empty cut-off's 0."""
    n = order.size
    n_neg = n - n_pos
    up, down = (2, 1) if column == 1 else (n, n_pos)
    value = 0
    best = 0
    for j in range(n):
        value += labels[order[j]] * up - down
        best = max(best, value if group_end[j] != 0 else 0)
    if column == 1:
        return (best + n_neg) / (n_pos + n_neg)
    return (best + n_pos * n_neg) / (2 * n_pos * n_neg)


@nb.njit(inline="always", nogil=True)
def _best_f1_walk(labels, order, group_end, n_pos):
    """Best F1: the maximum of the correctly rounded quotients 2 TP / (P + k) at the closes (0 / (P + k) = 0.0
    elsewhere, below or at the maximum, which starts at 0.0)."""
    tp = 0
    best = 0.0
    for j in range(order.size):
        tp += labels[order[j]]
        numerator = 2 * tp if group_end[j] != 0 else 0
        best = max(best, numerator / (n_pos + j + 1))
    return best


@nb.njit(inline="always", nogil=True)
def _average_precision_walk(labels, order, group_end, n_pos):
    """Average precision: the sum of gp (TP / k) over the closes, divided by P (elsewhere the term is 0 (TP / k)
    = 0.0, and adding 0.0 leaves the non-negative sum as it is)."""
    tp = 0
    tp_before = 0
    ap = 0.0
    for j in range(order.size):
        tp += labels[order[j]]
        close = group_end[j] != 0
        gp = tp - tp_before if close else 0
        ap += gp * (tp / (j + 1))
        tp_before = tp if close else tp_before
    return ap / n_pos


@nb.njit(inline="always", nogil=True)
def _best_mcc_walk(labels, order, group_end, n_pos, weights):
    """Best MCC: the maximum of G w_k at the closes, G = TP N - FP P = n TP - k P as a running sum (elsewhere
    0 w_k = 0.0, below or at the maximum, which starts at 0.0), capped at 1."""
    n = order.size
    g = 0
    best = 0.0
    for j in range(n):
        g += labels[order[j]] * n - n_pos
        closed = g if group_end[j] != 0 else 0
        best = max(best, closed * weights[j + 1])
    return min(best, 1.0)


@nb.njit(inline="always", nogil=True)
def _tp_at_k(labels, order, group_end, n_pos, k_cut):
    """TP at k = ``k_cut`` where a group ends there; P when k >= n and no group ends at k; NaN otherwise."""
    n = order.size
    if 1 <= k_cut <= n and group_end[k_cut - 1] != 0:
        tp = 0
        for j in range(k_cut):
            tp += labels[order[j]]
        return float(tp)
    return float(n_pos) if k_cut >= n else math.nan


@nb.njit(inline="always", nogil=True)
def _sparse(group_end):
    """Whether fewer than one item in :data:`SPARSE_CLOSES` ends a group."""
    closes = 0
    for j in range(group_end.size):
        closes += group_end[j] != 0
    return closes * SPARSE_CLOSES < group_end.size


@nb.njit(inline="always", nogil=True)
def _sparse_walk(labels, order, group_end, n_pos, column):
    """AUC (column 0), best F1 (2) or average precision (4) with a branch at each close: where the closes are
    few the branch is predicted, and the items between closes cost only the running count."""
    n_neg = order.size - n_pos
    tp = 0
    tp_before = 0
    fp_before = 0
    u2 = 0
    best_f1 = 0.0
    ap = 0.0
    for j in range(order.size):
        tp += labels[order[j]]
        if group_end[j] != 0:
            k = j + 1
            fp = k - tp
            if column == 0:
                u2 += (tp - tp_before) * (2 * n_neg - fp - fp_before)
            elif column == 2:
                best_f1 = max(best_f1, (2 * tp) / (n_pos + k))
            else:
                ap += (tp - tp_before) * (tp / k)
            tp_before = tp
            fp_before = fp
    if column == 0:
        return (u2 * 0.5) / (n_pos * n_neg)
    return best_f1 if column == 2 else ap / n_pos


@jit_cached(nogil=True)
def score_model(labels, order, group_end, n_pos, column, k_cut, weights):
    """One model's value on one arrangement: ``order`` its items by descending score, ``group_end`` 1 at
    the last item of each tied group, ``column`` the metric's kernel column, ``k_cut`` tp_at_k's k.

    TP is the running count of positives over the sorted items; at a group's end (after item j) the
    cut-off holds k = j + 1 items, FP = k - TP, and the group's positives are TP less TP at the previous
    end.  Each column has its own walk, which keeps a close's update by a select rather than a branch on where
    the groups end (with tied scores that branch mispredicted), but for AUC, best F1 and average precision where
    fewer than one item in :data:`SPARSE_CLOSES` ends a group; best F1 is the maximum of the
    correctly rounded quotients 2 TP / (P + k), which is the correctly rounded maximum quotient (rounding is
    monotone), as in the registry's scorer.

    Examples
    --------
    >>> labels = np.array([1, 0, 1, 0], np.uint8)  # scores 0.9, 0.5, 0.5, 0.1: items 1 and 2 tied
    >>> order, group_end = np.arange(4), np.array([1, 0, 1, 1], np.uint8)
    >>> weights = np.zeros(5)
    >>> [score_model(labels, order, group_end, 2, column, 0, weights) for column in (0, 1, 2)]
    [0.875, 0.75, 0.8]
    >>> score_model(labels, order, group_end, 2, 6, 2, weights)  # the tied pair straddles k = 2
    nan
    """
    if (column == 0 or column == 2 or column == 4) and _sparse(group_end):
        return _sparse_walk(labels, order, group_end, n_pos, column)
    if column == 0:
        return _auc_walk(labels, order, group_end, n_pos)
    if column == 1 or column == 3:
        return _best_integer_walk(labels, order, group_end, n_pos, column)
    if column == 2:
        return _best_f1_walk(labels, order, group_end, n_pos)
    if column == 4:
        return _average_precision_walk(labels, order, group_end, n_pos)
    if column == 5:
        return _best_mcc_walk(labels, order, group_end, n_pos, weights)
    return _tp_at_k(labels, order, group_end, n_pos, k_cut)


@jit_cached(nogil=True)
def auc_from_ranks(labels, double_ranks, n_pos):
    """AUC from the doubled midranks (ascending, ties averaged) in item order: 2U = sum over positives of
    2 rank - P (P + 1), the tied pairs counted ½ as in :func:`score_model`; one pass over the items in their
    own order (no gather), the same float as :func:`score_model`'s column 0."""
    total = 0
    for i in range(labels.size):
        total += labels[i] * double_ranks[i]
    n_neg = labels.size - n_pos
    return ((total - n_pos * (n_pos + 1)) * 0.5) / (n_pos * n_neg)


# -- every metric of a report on one arrangement (the max-T kernels) -----------------------------------------
# Each model's sorted walk runs once per arrangement whatever the metrics: it keeps the cut-offs (TP, k) at the
# group ends where TP grew since the last group end (written at every item, kept where it grew: no branch on the
# random labels), and each metric's value is one short loop over those cut-offs.  No other cut-off can hold a
# maximum or add to average precision: past a kept cut-off, with TP fixed, 2 TP - k, TP N - FP P, 2 TP / (P + k)
# and MCC fall (MCC by a relative 1 / n at least, far beyond rounding; a non-positive MCC is below the empty
# cut-off's 0), and average precision's terms there are 0 (adding 0.0 leaves the sum as it is).  So every value is
# the float :func:`score_model` gives, bit for bit (``tests/compare/test_selection_fused.py``).


@nb.njit(inline="always", nogil=True)
def grown_cutoffs(labels, order, group_end, untied, cut_tp, cut_k):
    """The cut-offs (TP in ``cut_tp``, k in ``cut_k``) at the group ends of the walk where TP grew, in order; their
    number.  ``untied``: every item ends its group (no group-end test; a cut-off grew where its item is positive)."""
    tp = 0
    count = 0
    if untied:  # each kept cut-off holds one more positive than the last: TP = its index + 1
        for j in range(order.size):
            cut_k[count] = j + 1
            count += np.int64(labels[order[j]])
        for c in range(count):
            cut_tp[c] = c + 1
        return count
    tp_before = 0
    for j in range(order.size):
        tp += np.int64(labels[order[j]])
        close = group_end[j] != 0
        cut_tp[count] = tp
        cut_k[count] = j + 1
        count += np.int64(close and tp > tp_before)
        tp_before = tp if close else tp_before
    return count


@nb.njit(inline="always", nogil=True)
def _best_integer(cut_tp, cut_k, count, up, down):
    """max(0, the largest up TP - down k over the cut-offs): D = 2 TP - k or G = n TP - k P."""
    best = 0
    for c in range(count):
        best = max(best, up * cut_tp[c] - down * cut_k[c])
    return best


#: Items up to which best F1's maximum is found by approximate quotients and one division (:func:`_best_f1`).
F1_ARGMAX_ITEMS = 20_000_000


@nb.njit(inline="always", nogil=True)
def f1_reciprocals(n_pos, n):
    """1 / (P + k) rounded, for k = 0 .. n: :func:`_best_f1`'s table, built once per kernel call."""
    table = np.empty(n + 1)
    for k in range(n + 1):
        table[np.uint64(k)] = 1.0 / (n_pos + k)
    return table


@nb.njit(inline="always", nogil=True)
def _larger(cut_tp, cut_k, reciprocals, c, largest, at):
    """(approximation, cut-off) of the larger of the running one and cut-off c's 2 TP * fl(1 / (P + k))."""
    approximate = (2 * cut_tp[c]) * reciprocals[np.uint64(cut_k[c])]
    better = approximate > largest
    return (approximate if better else largest), (c if better else at)


@nb.njit(inline="always", nogil=True)
def _best_f1(cut_tp, cut_k, count, n, n_pos, reciprocals):
    """Best F1 over the kept cut-offs: the largest correctly rounded quotient 2 TP / (P + k), bit for bit.

    Rounding is monotone, so that largest quotient is the correctly rounded largest fraction, and one division at
    the cut-off holding it gives it.  That cut-off is found from the approximations 2 TP * fl(1 / (P + k)), a
    multiplication each instead of a division: each is within 2.01 u (u = 2^-53) of its fraction, relative, and
    every fraction is at most 1 (TP <= P and TP <= k), while two distinct fractions with denominators at most 2 n
    differ by at least 1 / (4 n^2) > 4.02 u for n <= :data:`F1_ARGMAX_ITEMS` (< 2.37e7).  So the approximations
    order distinct fractions as the fractions are ordered: any cut-off with the largest approximation holds the
    largest fraction (equal approximations, equal fractions).  Four running maxima over interleaved cut-offs (no
    chain of dependent selects): 1.09 -> 0.60 ns per cut-off (10^4 items, EPYC AVX-512).  Beyond that n, a division
    per cut-off.
    """
    if n > F1_ARGMAX_ITEMS:
        best = 0.0
        for c in range(count):
            best = max(best, (2 * cut_tp[c]) / (n_pos + cut_k[c]))
        return best
    l0, l1, l2, l3 = 0.0, 0.0, 0.0, 0.0  # a kept cut-off has TP >= 1: its approximation beats 0
    a0, a1, a2, a3 = -1, -1, -1, -1
    c = 0
    while c + 4 <= count:
        l0, a0 = _larger(cut_tp, cut_k, reciprocals, c, l0, a0)
        l1, a1 = _larger(cut_tp, cut_k, reciprocals, c + 1, l1, a1)
        l2, a2 = _larger(cut_tp, cut_k, reciprocals, c + 2, l2, a2)
        l3, a3 = _larger(cut_tp, cut_k, reciprocals, c + 3, l3, a3)
        c += 4
    while c < count:
        l0, a0 = _larger(cut_tp, cut_k, reciprocals, c, l0, a0)
        c += 1
    l0, a0 = (l1, a1) if l1 > l0 else (l0, a0)
    l0, a0 = (l2, a2) if l2 > l0 else (l0, a0)
    l0, a0 = (l3, a3) if l3 > l0 else (l0, a0)
    return 0.0 if a0 < 0 else (2 * cut_tp[a0]) / (n_pos + cut_k[a0])


@nb.njit(inline="always", nogil=True)
def cutoff_value(column, cut_tp, cut_k, count, n, n_pos, k_cut, group_end, weights, reciprocals):
    """A threshold column's value (1-5) or TP at ``k_cut`` (6) from the kept cut-offs: :func:`score_model`'s
    float (its expressions on the same integers; best F1 by :func:`_best_f1`, ``reciprocals`` its table)."""
    n_neg = n - n_pos
    if column == 1:
        return (_best_integer(cut_tp, cut_k, count, 2, 1) + n_neg) / (n_pos + n_neg)
    if column == 3:
        return (_best_integer(cut_tp, cut_k, count, n, n_pos) + n_pos * n_neg) / (2 * n_pos * n_neg)
    if column == 2:
        return _best_f1(cut_tp, cut_k, count, n, n_pos, reciprocals)
    if column == 4:
        ap = 0.0
        before = 0
        for c in range(count):
            tp = cut_tp[c]
            ap += (tp - before) * (tp / cut_k[c])
            before = tp
        return ap / n_pos
    if column == 5:
        best = 0.0
        for c in range(count):
            k = cut_k[c]
            best = max(best, (n * cut_tp[c] - k * n_pos) * weights[k])
        return min(best, 1.0)
    if 1 <= k_cut <= n and group_end[k_cut - 1] != 0:  # TP at k: the last kept cut-off within the first k items
        tp = 0
        for c in range(count):
            if cut_k[c] > k_cut:
                break
            tp = cut_tp[c]
        return float(tp)
    return float(n_pos) if k_cut >= n else math.nan


@nb.njit(inline="always", nogil=True)
def _score_models(labels, orders, group_ends, double_ranks, untied, n_pos, columns, k_cuts, weights, values, cut_tp,
                  cut_k, reciprocals):
    """``values[t, m]``: model m's value of metric column ``columns[t]`` on ``labels``, one walk per model."""
    models, n = orders.shape
    walk = False
    auc_wanted = False
    for t in range(columns.size):
        walk = walk or columns[t] != 0
        auc_wanted = auc_wanted or columns[t] == 0
    for m in range(models):
        count = grown_cutoffs(labels, orders[m], group_ends[m], untied[m] != 0, cut_tp, cut_k) if walk else 0
        auc = auc_from_ranks(labels, double_ranks[m], n_pos) if auc_wanted else math.nan
        for t in range(columns.size):
            if columns[t] == 0:
                values[t, m] = auc
            else:
                values[t, m] = cutoff_value(columns[t], cut_tp, cut_k, count, n, n_pos, k_cuts[t], group_ends[m],
                                             weights, reciprocals)


@nb.njit(inline="always", nogil=True)
def tally(values, members, size, thresholds, ranked, row, maxima, raw_hits, step_hits):
    """One metric on one arrangement: the maximum over its ``size`` models (``members``) in ``maxima[row]``, and
    their hits (``raw_hits`` per model, ``step_hits`` per rank of ``ranked``, by descending observed value)."""
    largest = -np.inf
    for j in range(size):
        v = values[members[j]]
        largest = max(largest, v)
        if v >= thresholds[j]:
            raw_hits[j] += 1
    maxima[row] = largest
    running = -np.inf
    for r in range(size - 1, -1, -1):  # ranked[0] has the largest observed value
        j = ranked[r]
        running = max(running, values[members[j]])
        if running >= thresholds[j]:
            step_hits[r] += 1


# A plain njit function (one call per arrangement), not inline="always": both kernels below call it, and numba's
# inlining copied and retyped its whole IR into each (compiling them from a cold cache 4.2 -> 2.9 s of CPU)
@nb.njit(nogil=True)
def count_metrics(labels, orders, group_ends, double_ranks, untied, n_pos, columns, k_cuts, weights, members, sizes,
                   thresholds, ranked, values, cut_tp, cut_k, reciprocals, row, maxima, raw_hits, step_hits):
    """Every metric's tally (:func:`tally`) of one arrangement, each model walked once."""
    _score_models(labels, orders, group_ends, double_ranks, untied, n_pos, columns, k_cuts, weights, values, cut_tp,
                  cut_k, reciprocals)
    for t in range(columns.size):
        tally(values[t], members[t], sizes[t], thresholds[t], ranked[t], row, maxima[t], raw_hits[t], step_hits[t])


@jit_cached(nogil=True)
def permutation_metrics_counts(orders, group_ends, double_ranks, untied, n_pos, columns, k_cuts, weights, members,
                               sizes, thresholds, ranked, key0, key1, first, maxima, raw_hits, step_hits):
    """Replicates ``first .. first + maxima.shape[1] - 1``: each scored for every metric of the report at once.

    ``orders``, ``group_ends``, ``double_ranks`` are (models, n) (:class:`~tablegen.compare.selection.engine
    .SortedModels`), ``untied`` 1 for a model without tied scores; metric t is kernel column ``columns[t]``
    (``k_cuts[t]`` its k for TP at k) over the ``sizes[t]`` models ``members[t, :sizes[t]]``, with
    ``thresholds[t, j]`` member j's observed value less the snap tolerance and ``ranked[t]`` the members by
    descending observed value.  Fills ``maxima[t]`` and adds to ``raw_hits[t]`` (per member) and ``step_hits[t]``
    (per rank): for each metric what the one-metric kernel (:func:`permutation_counts`) gives, bit for bit.
    """
    models, n = orders.shape
    labels = np.empty(n, np.uint8)
    values = np.empty((columns.size, models))
    cut_tp, cut_k, reciprocals = np.empty(n, np.int64), np.empty(n, np.int64), f1_reciprocals(n_pos, n)
    for row in range(maxima.shape[1]):
        sample_labels(key0, key1, first + row, n_pos, labels)
        count_metrics(labels, orders, group_ends, double_ranks, untied, n_pos, columns, k_cuts, weights, members,
                       sizes, thresholds, ranked, values, cut_tp, cut_k, reciprocals, row, maxima, raw_hits, step_hits)


@jit_cached(nogil=True)
def permutation_counts(orders, group_ends, double_ranks, n_pos, column, k_cut, weights, thresholds, ranked, key0,
                       key1, first, maxima, raw_hits, step_hits):
    """:func:`permutation_metrics_counts` of one metric over every model: replicates ``first .. first +
    maxima.size - 1``, each model scored on the replicate's random arrangement; fills ``maxima`` and adds to
    ``raw_hits`` (per model) and ``step_hits`` (per rank in ``ranked``, the models by descending observed value)."""
    models, n = orders.shape
    untied = np.ones(models, np.uint8)
    for m in range(models):
        for j in range(n):
            if group_ends[m, j] == 0:
                untied[m] = 0
    members = np.arange(models).reshape(1, models)
    out = np.empty((1, maxima.size))
    raw, step = raw_hits.reshape(1, models), step_hits.reshape(1, models)
    permutation_metrics_counts(orders, group_ends, double_ranks, untied, n_pos, np.array([column]),
                               np.array([k_cut]), weights, members, np.array([models]), thresholds.reshape(1, models),
                               ranked.reshape(1, models), key0, key1, first, out, raw, step)
    for r in range(maxima.size):  # not maxima[:] = out[0] (compile time: see kernels/jit.py)
        maxima[r] = out[0, r]
