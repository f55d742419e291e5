"""Multi-class resampling kernels of the K-class report: every model and every metric scored in one pass.

Three kernels, each keyed (the replicate's stream from :func:`~tablegen.compute.kernels.rng.replicate_state` of the
question's key and the replicate's index, so a replicate does not depend on how the replicates are split into
blocks), each scoring the four :data:`COLUMNS` of every model from its per-class counts with :func:`_scores`:

- :func:`stratified_resamples` (bootstrap intervals): each true class's items drawn with replacement, n_k of them
  (the class counts stay fixed), the same items for every model (so differences between models are paired);
  each draw Lemire's multiply-shift of the upper 32 bits of one xoshiro256** output
  (:func:`~tablegen.compute.kernels.ranking.draw_below`).
- :func:`label_permutations` (the max-T test, and each model's permutation null): the true labels shuffled by
  Fisher–Yates from the top (the multi-class permutation kernel's walk, :mod:`.multiclass`), one shuffle applied
  to every model, so their dependence is kept; each model's predicted counts stay fixed.
- :func:`swap_differences` (paired tests): on the items where two models predict differently, each item's two
  predictions swapped or not (one bit of a xoshiro256** output per item, low bit first; or, exactly, the bits of the
  pattern's index), and the difference of the four columns, model A less model B.

The columns from the diagonal counts TP_k, the true counts n_k and the predicted counts m_k (classes in order,
each product and sum rounded separately, then one division):

``accuracy``           X / n, X = sum_k TP_k
``kappa``              (n X - S) / (n^2 - S), S = sum_k n_k m_k (two integers, exact as doubles for n < 9.4e7,
                       so the correctly rounded value of Cohen's kappa)
``balanced_accuracy``  (sum over classes with n_k > 0 of TP_k * (1 / n_k)) / (number of such classes)
``macro_f1``           (sum over classes with n_k + m_k > 0 of TP_k * (2 / (n_k + m_k))) / F, F the model's number
                       of classes (those with items or predicted by it), fixed by the caller

the same arithmetic as :mod:`tablegen.compute.kernels.multiclass` (:func:`tablegen.multiclass_test`'s values, bit for
bit).  Integer widths: int64 counts (n < 2**31), int32 class codes, uint64 RNG.
"""

import numba as nb
import numpy as np

from tablegen.compute.kernels.jit import jit_cached
from tablegen.compute.kernels.ranking import draw_below
from tablegen.compute.kernels.rng import replicate_state, xoshiro_next

#: The kernels' output columns (the last axis of ``out``).
COLUMNS = ("accuracy", "kappa", "balanced_accuracy", "macro_f1")
#: Spawn-key tags of the three kernels' streams (``SeedSequence(seed, spawn_key=(n, K, tag))``).
BOOTSTRAP_TAG, PERMUTATION_TAG, SWAP_TAG = 0x3C1B, 0x3C1C, 0x3C1D
_U1 = np.uint64(1)


def resample_key(seed: int, n: int, K: int, tag: int) -> tuple[np.uint64, np.uint64]:
    """The 128-bit key of one kernel's streams (``tag``) for ``n`` items over ``K`` classes under ``seed``.

    Examples
    --------
    >>> resample_key(2005, 30, 3, BOOTSTRAP_TAG) == resample_key(2005, 30, 3, PERMUTATION_TAG)
    False
    """
    words = np.random.SeedSequence(seed, spawn_key=(n, K, tag)).generate_state(2, np.uint64)
    return np.uint64(words[0]), np.uint64(words[1])


def recall_weights(true_counts) -> tuple[np.ndarray, int]:
    """(1 / n_k, 0 where n_k = 0; the number of classes with items): balanced accuracy's weights.

    Examples
    --------
    >>> weights, classes = recall_weights([2, 4, 0])
    >>> weights.tolist(), classes
    ([0.5, 0.25, 0.0], 2)
    """
    true = np.asarray(true_counts, dtype=np.int64)
    weights = np.zeros(true.size)
    np.divide(1.0, true, out=weights, where=true > 0)
    return weights, int(np.count_nonzero(true))


@nb.njit(inline="always", nogil=True)
def _scores(tp, pc, true_counts, weights, recall_classes, f1_classes, n, out):
    """The four columns into ``out`` from the diagonal ``tp``, the predicted counts ``pc`` and the true counts."""
    hits = 0
    chance = 0
    recall = 0.0
    f1 = 0.0
    for k in range(tp.size):
        hits += tp[k]
        chance += true_counts[k] * pc[k]
        recall += tp[k] * weights[k]
        total = true_counts[k] + pc[k]
        if total > 0:
            f1 += tp[k] * (2.0 / total)
    out[0] = hits / n
    out[1] = (n * hits - chance) / (n * n - chance)
    out[2] = recall / recall_classes
    out[3] = f1 / f1_classes


@jit_cached(nogil=True)
def confusion_scores(matrices, f1_classes, out):
    """The four columns of each confusion matrix (``matrices`` (A, K, K) int64 counts, rows true; ``out`` (A, 4));
    the arithmetic of every replicate.  A matrix whose items are all of one class and all predicted so scores NaN
    kappa (0 / 0).

    Examples
    --------
    >>> out = np.empty((1, 4))
    >>> confusion_scores(np.array([[[2, 0, 0], [1, 1, 0], [0, 1, 1]]]), np.array([3]), out)
    >>> [round(float(v), 6) for v in out[0]]
    [0.666667, 0.5, 0.666667, 0.655556]
    """
    K = matrices.shape[1]
    true = np.zeros(K, np.int64)
    pc = np.zeros(K, np.int64)
    tp = np.zeros(K, np.int64)
    weights = np.zeros(K)
    for a in range(matrices.shape[0]):
        n = 0
        recall_classes = 0
        for k in range(K):
            true[k] = 0
            pc[k] = 0
        for k in range(K):
            tp[k] = matrices[a, k, k]
            for j in range(K):
                true[k] += matrices[a, k, j]
                pc[j] += matrices[a, k, j]
            n += true[k]
        for k in range(K):
            if true[k] > 0:
                weights[k] = 1.0 / true[k]
                recall_classes += 1
            else:
                weights[k] = 0.0
        _scores(tp, pc, true, weights, recall_classes, f1_classes[a], n, out[a])


@jit_cached(nogil=True)
def stratified_resamples(order, starts, predicted, true_counts, weights, recall_classes, f1_classes, key0, key1,
                         first, out):
    """Bootstrap resamples ``first .. first + out.shape[0] - 1``, stratified by true class: ``out[r, m]`` the four
    columns of model m on resample r.

    ``order`` lists the items grouped by true class (class k's are ``order[starts[k]:starts[k + 1]]``);
    ``predicted`` (n, M) int32 holds each item's predicted class per model; ``f1_classes`` (M,) each model's
    macro-F1 denominator.

    Examples
    --------
    >>> predicted = np.array([[0], [0], [1], [1]], np.int32)  # always right: every resample scores 1
    >>> weights, with_items = recall_weights([2, 2])
    >>> out = np.empty((3, 1, 4))
    >>> stratified_resamples(np.arange(4), np.array([0, 2, 4]), predicted, np.array([2, 2]), weights, with_items,
    ...                      np.array([2]), *resample_key(1, 4, 2, BOOTSTRAP_TAG), 0, out)
    >>> out[:, 0].tolist() == [[1.0, 1.0, 1.0, 1.0]] * 3
    True
    """
    K = true_counts.size
    M = predicted.shape[1]
    n = order.size
    tp = np.zeros((M, K), np.int64)
    pc = np.zeros((M, K), np.int64)
    for row in range(out.shape[0]):
        s0, s1, s2, s3 = replicate_state(key0, key1, first + row)
        tp[:] = 0
        pc[:] = 0
        for k in range(K):
            size = starts[k + 1] - starts[k]
            for _ in range(size):
                j, s0, s1, s2, s3 = draw_below(np.uint64(size), s0, s1, s2, s3)
                item = order[starts[k] + j]
                for m in range(M):
                    p = predicted[item, m]
                    pc[m, p] += 1
                    if p == k:
                        tp[m, k] += 1
        for m in range(M):
            _scores(tp[m], pc[m], true_counts, weights, recall_classes, f1_classes[m], n, out[row, m])


@nb.njit(inline="always", nogil=True)
def _count_hits(predicted, item, label, tp):
    for m in range(predicted.shape[1]):
        if predicted[item, m] == label:
            tp[m, label] += 1


@jit_cached(nogil=True)
def label_permutations(true_codes, predicted, predicted_counts, true_counts, weights, recall_classes, f1_classes,
                       key0, key1, first, out):
    """Replicates ``first .. first + out.shape[0] - 1`` of the label-permutation null: the true labels shuffled
    once per replicate and every model (``predicted`` (n, M) int32, ``predicted_counts`` (M, K)) scored on that
    shuffle, ``out[r, m]`` its four columns.

    Examples
    --------
    >>> true = np.array([0, 0, 1, 1, 2, 2], np.int32)
    >>> predicted = true.reshape(-1, 1).copy()
    >>> weights, with_items = recall_weights([2, 2, 2])
    >>> out = np.empty((5, 1, 4))
    >>> label_permutations(true, predicted, np.array([[2, 2, 2]]), np.array([2, 2, 2]), weights, with_items,
    ...                    np.array([3]), *resample_key(1, 6, 3, PERMUTATION_TAG), 0, out)
    >>> bool(np.all(out[:, 0, 0] * 6 == np.round(out[:, 0, 0] * 6)))
    True
    """
    n = true_codes.size
    M = predicted.shape[1]
    work = np.empty(n, np.int32)
    tp = np.zeros((M, true_counts.size), np.int64)
    for row in range(out.shape[0]):
        s0, s1, s2, s3 = replicate_state(key0, key1, first + row)
        for i in range(n):
            work[i] = true_codes[i]
        tp[:] = 0
        for i in range(n - 1, 0, -1):
            j, s0, s1, s2, s3 = draw_below(np.uint64(i + 1), s0, s1, s2, s3)
            label = work[j]
            work[j] = work[i]  # position i is final
            _count_hits(predicted, i, label, tp)
        _count_hits(predicted, 0, work[0], tp)
        for m in range(M):
            _scores(tp[m], predicted_counts[m], true_counts, weights, recall_classes, f1_classes[m], n, out[row, m])


@jit_cached(nogil=True)
def arrangement_scores(arrangements, predicted, predicted_counts, true_counts, weights, recall_classes, f1_classes,
                       out):
    """Every model scored on each given arrangement of the true labels (``arrangements`` (A, n) int32): the
    exact max-T null at tiny n, each distinct arrangement once.

    Examples
    --------
    >>> predicted = np.array([[0], [1]], np.int32)
    >>> weights, with_items = recall_weights([1, 1])
    >>> out = np.empty((2, 1, 4))
    >>> arrangement_scores(np.array([[0, 1], [1, 0]], np.int32), predicted, np.array([[1, 1]]), np.array([1, 1]),
    ...                    weights, with_items, np.array([2]), out)
    >>> out[:, 0, 0].tolist()
    [1.0, 0.0]
    """
    n = arrangements.shape[1]
    M = predicted.shape[1]
    tp = np.zeros((M, true_counts.size), np.int64)
    for row in range(arrangements.shape[0]):
        tp[:] = 0
        for i in range(n):
            _count_hits(predicted, i, arrangements[row, i], tp)
        for m in range(M):
            _scores(tp[m], predicted_counts[m], true_counts, weights, recall_classes, f1_classes[m], n, out[row, m])


@jit_cached(nogil=True)
def swap_differences(true_codes, predicted_a, predicted_b, base_tp, base_pc, true_counts, weights, recall_classes,
                     f1_classes, n, key0, key1, first, exact, out):
    """Swap patterns ``first .. first + out.shape[0] - 1`` of two models' predictions on the items where they differ
    (``true_codes``, ``predicted_a``, ``predicted_b`` over those items; ``base_tp``, ``base_pc`` the counts of the
    items where they agree, the same for both): ``out[r]`` the four columns of A less B's.  Exact: pattern r swaps
    item i where bit i of r is set (pattern 0 is the data); else each item's bit from the replicate's stream.

    Examples
    --------
    >>> weights, with_items = recall_weights([1, 1])
    >>> out = np.empty((4, 4))
    >>> swap_differences(np.array([0, 1], np.int32), np.array([0, 1], np.int32), np.array([1, 0], np.int32),
    ...                  np.zeros(2, np.int64), np.zeros(2, np.int64), np.array([1, 1]), weights, with_items,
    ...                  2, 2, np.uint64(1), np.uint64(2), 0, True, out)
    >>> out[:, 0].tolist()  # no swap, swap the first, the second, both
    [1.0, 0.0, 0.0, -1.0]
    """
    d = true_codes.size
    K = true_counts.size
    # the counts with nothing swapped, and what swapping item i moves between the two diagonals (branch-free)
    start_tp_a, start_tp_b = base_tp.copy(), base_tp.copy()
    start_pc_a, start_pc_b = base_pc.copy(), base_pc.copy()
    moved = np.empty(d, np.int64)
    for i in range(d):
        a = predicted_a[i]
        b = predicted_b[i]
        k = true_codes[i]
        hit_a = 1 if a == k else 0
        hit_b = 1 if b == k else 0
        start_pc_a[a] += 1
        start_pc_b[b] += 1
        start_tp_a[k] += hit_a
        start_tp_b[k] += hit_b
        moved[i] = hit_b - hit_a
    tp_a = np.zeros(K, np.int64)
    tp_b = np.zeros(K, np.int64)
    pc_a = np.zeros(K, np.int64)
    pc_b = np.zeros(K, np.int64)
    value_a = np.empty(4)
    value_b = np.empty(4)
    for row in range(out.shape[0]):
        pattern = first + row
        s0, s1, s2, s3 = replicate_state(key0, key1, pattern)
        bits = np.uint64(0)
        left = 0
        for k in range(K):
            tp_a[k] = start_tp_a[k]
            tp_b[k] = start_tp_b[k]
            pc_a[k] = start_pc_a[k]
            pc_b[k] = start_pc_b[k]
        for i in range(d):
            if exact:
                swap = (pattern >> i) & 1
            else:
                if left == 0:
                    bits, s0, s1, s2, s3 = xoshiro_next(s0, s1, s2, s3)
                    left = 64
                swap = np.int64(bits & _U1)
                bits >>= _U1
                left -= 1
            a = predicted_a[i]
            b = predicted_b[i]
            pc_a[a] -= swap
            pc_a[b] += swap
            pc_b[b] -= swap
            pc_b[a] += swap
            change = swap * moved[i]
            tp_a[true_codes[i]] += change
            tp_b[true_codes[i]] -= change
        _scores(tp_a, pc_a, true_counts, weights, recall_classes, f1_classes, n, value_a)
        _scores(tp_b, pc_b, true_counts, weights, recall_classes, f1_classes, n, value_b)
        for c in range(4):
            out[row, c] = value_a[c] - value_b[c]
