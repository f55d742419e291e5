"""Bootstrap kernels: every metric of a resample by one weighted pass along each model's fixed order.

A bootstrap resample of a test set changes how often each item counts, never the order of the scores.
Each model's items are sorted once by descending score (``order``, ties in item order) with ``group_end``
1 at the last item of each group of tied scores (as
:func:`tablegen.compute.metric_scorers.threshold_groups` groups them); a resample is a vector of integer
multiplicities (``weights``, one per item), and a model's value on it is one pass over its sorted items,
adding each item's weight to the weighted TP (positives) or FP (negatives) and closing a cut-off at
each group end that holds any weight.  Copies of one item are tied scores, so they form one group, as
the registry's scorers group the explicitly resampled items; a group of weight 0 is absent from the
resample, and the cut-off after it repeats the one before, which changes no value (so the pass branches on
neither the weights nor the labels, both random).  O(n) per resample and model.

Every value is the registry scorer's expression (:mod:`tablegen.compute.metric_scorers`) on the weighted
counts, with its float operations, so the values equal the scorer applied to the resampled items bit
for bit, but average precision (a sequential sum here, numpy's pairwise sum there: a few ulps):

``0 auc``                     A = sum gp (N - FP after the group), B = sum gp gn, (A + 0.5 B) / (P N)
``1 best_accuracy``           max over the cut-offs of (TP + N - FP) / (P + N)
``2 best_f1``                 max of 2 TP / (P + k)
``3 best_balanced_accuracy``  max of 0.5 (TP / P + 1 - FP / N)
``4 average_precision``       sum of gp (TP / k) over groups, divided by P
``5 best_mcc``                max of (TP N - FP P) / sqrt(P N k (P + N - k)) (0 at k = 0 and k = P + N), capped at 1
``6 tp_at_k``                 TP at the cut-off holding exactly k items (P when k >= P + N); NaN when no
                              cut-off does (copies or tied scores straddle k: the scorer refuses such a
                              resample, and the interval has NaN ends)

Resamples: resample r draws its multiplicities from its own xoshiro256** stream
(:func:`~tablegen.compute.kernels.rng.replicate_state` of the question's key and r): P draws uniform
over the positives, then N over the negatives (stratified, every resample keeps P and N), each draw
Lemire's multiply-shift of the upper 32 bits of one output with its rejection step (as the label
permutation kernel draws).  A resample therefore depends on the key and r alone, never on blocks,
workers or the device.  Memory traffic, which sets the pace at 10^6 items: a draw of the j-th positive counts
into slot j (the j-th negative into slot P + j) of one byte per item, with no look-up of the item, and each
model's pass reads its sorted slots, labels and group ends in sequence, gathering only the counts (at 10^6
items, 1.9 ms to draw a resample and 3.2 ms per model to score it, against 23.6 and 24.4 ms with 8-byte counts
by item and labels gathered).  The jackknife (:func:`jackknife_values`) leaves each item out in turn: AUC by
each item's placement (its negatives below, or positives above, and ties), O(1) per item after one
pass; the best-threshold metrics from prefix and suffix maxima over the cut-offs (leaving out an item of
group g lowers its class's count after g by one), average precision from a prefix and two suffix sums, TP at
k from the cut-offs of k and k + 1 items: O(n) in all, every metric.
"""

import math

import numba as nb
import numpy as np

from tablegen.compute.kernels.jit import jit_cached
from tablegen.compute.kernels.ranking import draw_below
from tablegen.compute.kernels.rng import replicate_state

#: The spawn key's tag of the bootstrap streams (``SeedSequence(seed, spawn_key=(P, N, tag))``): apart from the
#: tables' and the label permutations' streams of the same (P, N), ``cell_key(seed, P, N)``.
BOOTSTRAP_TAG = 0xB007


def bootstrap_key(seed: int, P: int, N: int) -> tuple[np.uint64, np.uint64]:
    """The 128-bit key of the bootstrap resamples of a test set of P positives and N negatives under ``seed``.

    Examples
    --------
    >>> bootstrap_key(2005, 30, 40) == bootstrap_key(2005, 30, 40)
    True
    """
    words = np.random.SeedSequence(seed, spawn_key=(P, N, BOOTSTRAP_TAG)).generate_state(2, np.uint64)
    return np.uint64(words[0]), np.uint64(words[1])


def sorted_models(scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(orders, group_ends)`` of a (models, n) score array: each row sorted once, descending, ties in item order
    (as :func:`~tablegen.compute.metric_scorers.threshold_groups`), ``group_ends`` 1 at each tie group's last item.

    Examples
    --------
    >>> orders, ends = sorted_models(np.array([[0.2, 0.9, 0.9, 0.1]]))
    >>> orders.tolist(), ends.tolist()
    ([[1, 2, 0, 3]], [[0, 1, 1, 1]])
    """
    scores = np.atleast_2d(np.asarray(scores, dtype=np.float64))
    orders = np.ascontiguousarray(np.argsort(-scores, axis=1, kind="stable").astype(np.int64))
    ranked = np.take_along_axis(scores, orders, axis=1)
    ends = np.ones(scores.shape, np.uint8)
    ends[:, :-1] = ranked[:, 1:] != ranked[:, :-1]
    return orders, ends


@nb.njit(inline="always", nogil=True)
def draw_weights(key0, key1, replicate, n_pos, n_neg, weights):
    """Add resample ``replicate``'s multiplicities into ``weights`` (all zero on entry) by slot: P draws over the
    slots 0 .. P-1 (the positives, in item order), then N over the slots P .. P+N-1 (the negatives).  Returns the
    largest count any slot reached (a narrow ``weights`` may have wrapped after reaching its largest value: the
    caller checks)."""
    s0, s1, s2, s3 = replicate_state(key0, key1, replicate)
    top = 0
    for _ in range(n_pos):
        j, s0, s1, s2, s3 = draw_below(np.uint64(n_pos), s0, s1, s2, s3)
        weights[j] += 1
        top = max(top, int(weights[j]))
    for _ in range(n_neg):
        j, s0, s1, s2, s3 = draw_below(np.uint64(n_neg), s0, s1, s2, s3)
        weights[n_pos + j] += 1
        top = max(top, int(weights[n_pos + j]))
    return top


@nb.njit(nogil=True)
def _slots(orders, labels):
    """Each model's sorted items as slots of :func:`draw_weights` (a positive's slot is its rank among the
    positives in item order, a negative's P plus its rank among the negatives), and their labels, one byte each."""
    n = labels.size
    slot_of = np.empty(n, np.int64)
    n_pos = 0
    for i in range(n):
        n_pos += labels[i]
    pos = 0
    neg = 0
    for i in range(n):
        if labels[i]:
            slot_of[i] = pos
            pos += 1
        else:
            slot_of[i] = n_pos + neg
            neg += 1
    slots = np.empty(orders.shape, np.int64)
    for m in range(orders.shape[0]):
        for j in range(orders.shape[1]):
            slots[m, j] = slot_of[orders[m, j]]
    return slots


@nb.njit(inline="always", nogil=True)
def mcc_at(g, n_pos, n_neg, k):
    """(TP N - FP P) w_k with ``g`` = TP N - FP P, w_k = 1 / sqrt(P N k (P+N-k)), 0 at k = 0 and k = P + N (the
    scorer's operations, each correctly rounded)."""
    n = n_pos + n_neg
    if k <= 0 or k >= n:
        return 0.0 * g
    return g * (1.0 / math.sqrt(np.float64(n_pos * n_neg) * np.float64(k * (n - k))))


@nb.njit(inline="always", nogil=True)
def weighted_value(order, group_end, ranked, weights, n_pos, n_neg, column, k_cut):
    """One model's value on one resample: the weighted pass along ``order`` (see the module docstring), ``order[j]``
    the index in ``weights`` of the j-th item (its item index, or its slot), ``ranked`` the items' labels in that
    order (read in sequence: only the weights are gathered)."""
    n = n_pos + n_neg
    tp = 0
    fp = 0
    tp_before = 0
    fp_before = 0
    a = 0
    b = 0
    best_d = 0
    best_f1 = 0.0
    best_ba = 0.5  # the empty cut-off's 0.5 (0 / P + 1 - 0 / N)
    ap = 0.0
    best_m = 0.0
    tpk = n_pos if k_cut >= n else -1
    for j in range(order.size):
        item = order[j]
        w = np.int64(weights[item])
        positive = w * np.int64(ranked[j])  # no branch on the label or the weight: both are random
        tp += positive
        fp += w - positive
        if group_end[j]:
            k = tp + fp
            gp = tp - tp_before
            if column == 0:
                a += gp * (n_neg - fp)
                b += gp * (fp - fp_before)
            elif column == 1:
                best_d = max(best_d, tp - fp)
            elif column == 2:
                best_f1 = max(best_f1, (2 * tp) / (n_pos + k))
            elif column == 3:
                best_ba = max(best_ba, 0.5 * (tp / n_pos + 1 - fp / n_neg))
            elif column == 4:
                ap += gp * (tp / max(k, 1))  # k = 0: no item yet, gp = tp = 0
            elif column == 5:
                best_m = max(best_m, mcc_at(tp * n_neg - fp * n_pos, n_pos, n_neg, k))
            elif k == k_cut:
                tpk = tp
            tp_before = tp
            fp_before = fp
    if column == 0:
        return (a + 0.5 * b) / (n_pos * n_neg)
    if column == 1:
        return (best_d + n_neg) / (n_pos + n_neg)
    if column == 2:
        return best_f1
    if column == 3:
        return best_ba
    if column == 4:
        return ap / n_pos
    if column == 5:
        return min(best_m, 1.0)
    return math.nan if tpk < 0 else float(tpk)


@nb.njit(nogil=True)
def _ranked_labels(orders, labels):
    """Each model's labels in its sorted order, one byte each."""
    ranked = np.empty(orders.shape, np.uint8)
    for m in range(orders.shape[0]):
        for j in range(orders.shape[1]):
            ranked[m, j] = labels[orders[m, j]]
    return ranked


@jit_cached(nogil=True)
def resample_values(orders, group_ends, labels, positives, negatives, column, k_cut, key0, key1, first, out,
                    narrow_limit=255):
    """Resamples ``first .. first + out.shape[0] - 1``: every model's value on each, into ``out`` (resamples,
    models).  ``orders`` and ``group_ends`` are (models, n) (:func:`sorted_models`), ``labels`` 0/1 per item,
    ``positives`` and ``negatives`` the items of each class in item order (``np.flatnonzero``): a draw of slot j
    is the j-th of its class.

    The multiplicities are drawn into one byte per item (a million items fit in cache, where the pass gathers
    them in each model's order: 5x faster at 10^6 items than 4 bytes), and a resample in which some count reached
    ``narrow_limit`` (255, where a byte could wrap; smaller in tests) is drawn again, the same draws, into 8 bytes
    per item: never a wrapped count.
    """
    n = labels.size
    n_pos, n_neg = positives.size, negatives.size
    ranked = _ranked_labels(orders, labels)
    slots = _slots(orders, labels)
    narrow = np.zeros(n, np.uint8)
    wide = np.zeros(0, np.int64)
    for row in range(out.shape[0]):
        narrow[:] = 0
        if draw_weights(key0, key1, first + row, n_pos, n_neg, narrow) < narrow_limit:
            for m in range(orders.shape[0]):
                out[row, m] = weighted_value(slots[m], group_ends[m], ranked[m], narrow, n_pos, n_neg, column, k_cut)
            continue
        if wide.size == 0:
            wide = np.zeros(n, np.int64)
        wide[:] = 0
        draw_weights(key0, key1, first + row, n_pos, n_neg, wide)
        for m in range(orders.shape[0]):
            out[row, m] = weighted_value(slots[m], group_ends[m], ranked[m], wide, n_pos, n_neg, column, k_cut)


@jit_cached(nogil=True)
def resample_weights(positives, negatives, key0, key1, first, out):
    """The multiplicities of resamples ``first .. first + out.shape[0] - 1`` into ``out`` (resamples, n), all
    zero on entry: what :func:`resample_values` weighs the items by (for tests and explicit resamples)."""
    n_pos, n_neg = positives.size, negatives.size
    by_slot = np.zeros(n_pos + n_neg, np.int64)
    for row in range(out.shape[0]):
        by_slot[:] = 0
        draw_weights(key0, key1, first + row, n_pos, n_neg, by_slot)
        for j in range(n_pos):
            out[row, positives[j]] = by_slot[j]
        for j in range(n_neg):
            out[row, negatives[j]] = by_slot[n_pos + j]


@jit_cached(nogil=True)
def weighted_values(orders, group_ends, labels, weights, column, k_cut, out):
    """Every model's value on each row of given multiplicities ``weights`` (resamples, n) into ``out`` (resamples,
    models): the pass of :func:`resample_values` on resamples drawn elsewhere (scipy's, in the tests), each row
    with its own class totals."""
    ranked = _ranked_labels(orders, labels)
    for row in range(weights.shape[0]):
        n_pos = 0
        n_neg = 0
        for i in range(labels.size):
            n_pos += weights[row, i] * labels[i]
            n_neg += weights[row, i] * (1 - labels[i])
        for m in range(orders.shape[0]):
            out[row, m] = weighted_value(orders[m], group_ends[m], ranked[m], weights[row], n_pos, n_neg, column, k_cut)


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
