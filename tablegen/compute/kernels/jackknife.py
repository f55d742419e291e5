"""BCa's jackknife in O(n) per model and metric: each item left out in turn, by leave-one-out updates.

Each model's items sorted once by descending score (``order``, ties in item order) with ``group_end`` 1 at the
last item of each group of tied scores, as the bootstrap kernels (:mod:`tablegen.compute.kernels.resample`) take
them.  AUC by each item's placement (its negatives below, or positives above, and ties), O(1) per item after one
pass; the best-threshold metrics from prefix and suffix maxima over the cut-offs (leaving out an item of group g
lowers its class's count after g by one), average precision from a prefix and two suffix sums, TP at k from the
cut-offs of k and k + 1 items: O(n) in all, every metric (:func:`jackknife_values`).
"""

import math

import numba as nb
import numpy as np

from tablegen.compute.kernels.jit import jit_cached
from tablegen.compute.kernels.resample import mcc_at


@nb.njit(nogil=True)
def _auc_jackknife(order, group_end, labels, out):
    """Leave-one-out AUC of each item from its placement: removing a positive of a group takes the group's
    negatives' ties and the negatives below it out of U, removing a negative the positives above and the ties."""
    n = order.size
    n_pos = 0
    for i in range(n):
        n_pos += labels[i]
    n_neg = n - n_pos
    # per item: the group's positives and negatives and the negatives below / positives above it
    gp_of = np.empty(n, np.int64)
    gn_of = np.empty(n, np.int64)
    below_neg = np.empty(n, np.int64)
    above_pos = np.empty(n, np.int64)
    tp = 0
    fp = 0
    start = 0
    a = 0
    b = 0
    for j in range(n):
        if labels[order[j]]:
            tp += 1
        else:
            fp += 1
        if group_end[j]:
            gp = 0
            for t in range(start, j + 1):
                gp += labels[order[t]]
            gn = j + 1 - start - gp
            a += gp * (n_neg - fp)
            b += gp * gn
            for t in range(start, j + 1):
                item = order[t]
                gp_of[item] = gp
                gn_of[item] = gn
                below_neg[item] = n_neg - fp
                above_pos[item] = tp - gp
            start = j + 1
    for i in range(n):
        if labels[i]:
            out[i] = ((a - below_neg[i]) + 0.5 * (b - gn_of[i])) / ((n_pos - 1) * n_neg)
        else:
            out[i] = ((a - above_pos[i]) + 0.5 * (b - gp_of[i])) / (n_pos * (n_neg - 1))


@nb.njit(inline="always", nogil=True)
def cutoff_value(column, tp, fp, n_pos, n_neg):
    """A best-threshold metric's value at one cut-off (column 1, 2, 3 or 5), the scorer's expression: the maximum
    over the cut-offs is :func:`weighted_value`'s, float for float (rounding is monotone)."""
    k = tp + fp
    if column == 1:
        return (tp - fp + n_neg) / (n_pos + n_neg)
    if column == 2:
        return (2 * tp) / (n_pos + k)
    if column == 3:
        return 0.5 * (tp / n_pos + 1 - fp / n_neg)
    return mcc_at(tp * n_neg - fp * n_pos, n_pos, n_neg, k)


@nb.njit(nogil=True)
def _best_jackknife(order, group_end, labels, column, out):
    """Leave-one-out values of a best-threshold metric in O(n): leaving out an item of group g lowers its class's
    count at every cut-off after g by one and its class's total by one, so the value is the larger of the
    maximum over the cut-offs up to g (counts kept) and over those after it (one fewer): prefix and suffix
    maxima, one pair per class, computed once."""
    n = order.size
    group, tp, fp, g = _cutoffs(order, group_end, labels)
    n_pos, n_neg = tp[g], fp[g]
    # prefix maxima with the class's total one fewer; suffix maxima with its count one fewer as well
    pre_pos = np.empty(g + 1)
    pre_neg = np.empty(g + 1)
    suf_pos = np.full(g + 2, -np.inf)
    suf_neg = np.full(g + 2, -np.inf)
    running_pos = -np.inf
    running_neg = -np.inf
    for c in range(g + 1):
        running_pos = max(running_pos, cutoff_value(column, tp[c], fp[c], n_pos - 1, n_neg))
        running_neg = max(running_neg, cutoff_value(column, tp[c], fp[c], n_pos, n_neg - 1))
        pre_pos[c] = running_pos
        pre_neg[c] = running_neg
    running_pos = -np.inf
    running_neg = -np.inf
    for c in range(g, 0, -1):
        if tp[c] > 0:
            running_pos = max(running_pos, cutoff_value(column, tp[c] - 1, fp[c], n_pos - 1, n_neg))
        if fp[c] > 0:
            running_neg = max(running_neg, cutoff_value(column, tp[c], fp[c] - 1, n_pos, n_neg - 1))
        suf_pos[c] = running_pos
        suf_neg[c] = running_neg
    for i in range(n):
        h = group[i]  # item i is counted at the cut-offs h + 1 .. g
        if labels[i]:
            value = max(pre_pos[h], suf_pos[h + 1])
        else:
            value = max(pre_neg[h], suf_neg[h + 1])
        out[i] = min(value, 1.0) if column == 5 else value


@nb.njit(nogil=True)
def _cutoffs(order, group_end, labels):
    """(group of each item, TP and FP at each cut-off c = 0 .. G (after the first c groups), G)."""
    n = order.size
    tp = np.zeros(n + 1, np.int64)
    fp = np.zeros(n + 1, np.int64)
    group = np.empty(n, np.int64)
    g = 0
    t = 0
    f = 0
    for j in range(n):
        item = order[j]
        t += labels[item]
        f += 1 - labels[item]
        group[item] = g
        if group_end[j]:
            g += 1
            tp[g] = t
            fp[g] = f
    return group, tp, fp, g


@nb.njit(nogil=True)
def _ap_jackknife(order, group_end, labels, out):
    """Leave-one-out average precision in O(n): the groups before the item's keep their terms gp TP / k (a prefix
    sum), the groups after it lose one from k (and from TP if the item is a positive: two suffix sums), its own
    group loses the item; a sum in another order than the pass's, so equal to it within a few ulps."""
    n = order.size
    group, tp, fp, g = _cutoffs(order, group_end, labels)
    n_pos = tp[g]
    before = np.zeros(g + 1)  # before[h] = sum over groups < h of gp TP / k
    after_pos = np.zeros(g + 1)  # after_pos[h] = sum over groups > h of gp (TP - 1) / (k - 1)
    after_neg = np.zeros(g + 1)  # after_neg[h] = sum over groups > h of gp TP / (k - 1)
    for h in range(g):
        gp = tp[h + 1] - tp[h]
        before[h + 1] = before[h] + gp * (tp[h + 1] / (tp[h + 1] + fp[h + 1]))
    for h in range(g - 1, 0, -1):
        gp = tp[h + 1] - tp[h]
        k = tp[h + 1] + fp[h + 1]
        after_pos[h - 1] = after_pos[h] + gp * (max(tp[h + 1] - 1, 0) / (k - 1))
        after_neg[h - 1] = after_neg[h] + gp * (tp[h + 1] / (k - 1))
    for i in range(n):
        h = group[i]
        gp = tp[h + 1] - tp[h]
        k = tp[h + 1] + fp[h + 1]
        if labels[i]:
            own = (gp - 1) * ((tp[h + 1] - 1) / max(k - 1, 1))
            out[i] = (before[h] + own + after_pos[h]) / (n_pos - 1)
        else:
            own = gp * (tp[h + 1] / max(k - 1, 1))
            out[i] = (before[h] + own + after_neg[h]) / n_pos


@nb.njit(nogil=True)
def _tp_at_k_jackknife(order, group_end, labels, k_cut, out):
    """Leave-one-out TP at k in O(n): without an item of group h the cut-offs up to h keep their k and TP, those
    after it hold one item fewer (and one positive fewer if it is one), so the count is TP at the cut-off of k
    items before h, or at the cut-off of k + 1 items after it; NaN where neither exists (ties straddle k)."""
    n = order.size
    group, tp, fp, g = _cutoffs(order, group_end, labels)
    at_k = -1  # the cut-off holding k items, and the one holding k + 1
    at_k1 = -1
    for c in range(g + 1):
        if tp[c] + fp[c] == k_cut:
            at_k = c
        if tp[c] + fp[c] == k_cut + 1:
            at_k1 = c
    for i in range(n):
        h = group[i]
        if k_cut >= n - 1:
            out[i] = float(tp[g] - labels[i])
        elif at_k >= 0 and at_k <= h:
            out[i] = float(tp[at_k])
        elif at_k1 >= h + 1:
            out[i] = float(tp[at_k1] - labels[i])
        else:
            out[i] = math.nan


@jit_cached(nogil=True)
def jackknife_values(order, group_end, labels, column, k_cut, out):
    """The leave-one-out values of one model, ``out[i]`` without item i (see the module docstring), O(n)."""
    if column == 0:
        _auc_jackknife(order, group_end, labels, out)
        return
    if column in (1, 2, 3, 5):
        _best_jackknife(order, group_end, labels, column, out)
        return
    if column == 4:
        _ap_jackknife(order, group_end, labels, out)
        return
    _tp_at_k_jackknife(order, group_end, labels, k_cut, out)
