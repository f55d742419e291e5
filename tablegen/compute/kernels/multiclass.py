"""Multi-class permutation kernel: the predicted labels shuffled, every multi-class metric scored in one pass.

The null of :func:`tablegen.multiclass_test`: the model's predicted labels permuted uniformly over the items,
the true class counts n_k and the predicted counts m_k fixed.  Replicate r shuffles a fresh copy of the
predicted class codes by Fisher–Yates from the top (position i, from n - 1 down to 1, swaps with a uniform
position j <= i), each draw Lemire's multiply-shift of the upper 32 bits of one xoshiro256** output with its
rejection step (:func:`~tablegen.compute.kernels.ranking.draw_below`, the draw of the binary permutation kernel),
from the replicate's own stream (:func:`~tablegen.compute.kernels.rng.replicate_state` of the question's key and
r): every one of the n! orders is equally likely, so every distinct arrangement of the labels is, and a
replicate's arrangement does not depend on how the replicates are split into blocks.

Position i's label is final once it has been swapped, so the pass scores it at once: a hit where it equals the
item's true class, added to that class's diagonal count TP_k.  From the counts, per replicate (:data:`COLUMNS`):

``hits``               X = sum_k TP_k (an integer, exact as a float); accuracy X / n, kappa affine in X
``balanced_accuracy``  (sum over classes with n_k > 0 of TP_k * (1 / n_k)) / (number of such classes)
``macro_f1``           (sum over all classes of TP_k * (2 / (n_k + m_k))) / K

(the classes are the union of the true and the predicted ones, as in scikit-learn's ``balanced_accuracy_score``
and ``f1_score(average="macro")``: a class only predicted has recall undefined and is left out of balanced
accuracy, and F1 = 0 in macro-F1).  The weights 1 / n_k and 2 / (n_k + m_k) are doubles computed once by the
caller (:func:`class_weights`); each sum is taken in class order, every product and addition rounded
separately, then divided once, so the same diagonal counts give the same double on every device.  Two
diagonals with the same rational value may round to doubles an ulp or so apart: callers compare with a relative
tolerance (:data:`tablegen.compute.exact.multiclass.TIE_RTOL`).

Integer widths: int64 counts (n < 2**31 items), int32 class codes; the RNG is uint64.
"""

import numba as nb
import numpy as np

from tablegen.compute.kernels.jit import jit_cached
from tablegen.compute.kernels.ranking import draw_below
from tablegen.compute.kernels.rng import replicate_state

#: The kernel's output columns.
COLUMNS = ("hits", "balanced_accuracy", "macro_f1")
HITS, BALANCED_ACCURACY, MACRO_F1 = range(3)
#: The spawn key's tag of the multi-class permutation streams (``SeedSequence(seed, spawn_key=(n, K, tag))``).
MULTICLASS_TAG = 0x3C1A


def multiclass_key(seed: int, n: int, K: int) -> tuple[np.uint64, np.uint64]:
    """The 128-bit key of the permutations of ``n`` items' predicted labels over ``K`` classes under ``seed``.

    Examples
    --------
    >>> key = multiclass_key(2005, 30, 3)
    >>> key == multiclass_key(2005, 30, 3), key == multiclass_key(1, 30, 3)
    (True, False)
    """
    words = np.random.SeedSequence(seed, spawn_key=(n, K, MULTICLASS_TAG)).generate_state(2, np.uint64)
    return np.uint64(words[0]), np.uint64(words[1])


def class_weights(true_counts, predicted_counts) -> tuple[np.ndarray, np.ndarray, int, int]:
    """``(recall_weights, f1_weights, recall_classes, f1_classes)``: 1 / n_k (0 where n_k = 0), 2 / (n_k + m_k),
    the number of classes with items and the number of classes, for :func:`multiclass_permutations`.

    Examples
    --------
    >>> recall, f1, with_items, classes = class_weights([2, 2, 0], [1, 2, 1])
    >>> recall.tolist(), f1.tolist(), with_items, classes
    ([0.5, 0.5, 0.0], [0.6666666666666666, 0.5, 2.0], 2, 3)
    """
    true = np.asarray(true_counts, dtype=np.int64)
    predicted = np.asarray(predicted_counts, dtype=np.int64)
    recall = np.zeros(true.size)
    np.divide(1.0, true, out=recall, where=true > 0)
    f1 = 2.0 / (true + predicted)
    return recall, f1, int(np.count_nonzero(true)), int(true.size)


@nb.njit(inline="always", nogil=True)
def _values(tp, recall_weights, f1_weights, recall_classes, f1_classes, out, row):
    """The three columns from the diagonal counts ``tp`` (class order; products and sums rounded separately)."""
    hits = 0
    recall = 0.0
    f1 = 0.0
    for k in range(tp.size):
        hits += tp[k]
        recall += tp[k] * recall_weights[k]
        f1 += tp[k] * f1_weights[k]
    out[row, HITS] = hits
    out[row, BALANCED_ACCURACY] = recall / recall_classes
    out[row, MACRO_F1] = f1 / f1_classes


@jit_cached(nogil=True)
def observed_values(true_codes, predicted_codes, recall_weights, f1_weights, recall_classes, f1_classes, out):
    """The three columns of the labels as they are (``out`` of shape (1, 3)): the same arithmetic as a replicate.

    Examples
    --------
    >>> recall, f1, with_items, classes = class_weights([2, 2], [1, 3])
    >>> out = np.empty((1, 3))
    >>> observed_values(np.array([0, 0, 1, 1], np.int32), np.array([0, 1, 1, 1], np.int32), recall, f1,
    ...                 with_items, classes, out)
    >>> out.tolist()
    [[3.0, 0.75, 0.7333333333333334]]
    """
    tp = np.zeros(recall_weights.size, np.int64)
    for i in range(true_codes.size):
        tp[true_codes[i]] += 1 if predicted_codes[i] == true_codes[i] else 0
    _values(tp, recall_weights, f1_weights, recall_classes, f1_classes, out, 0)


@nb.njit(inline="always", nogil=True)
def _shuffle_count(key0, key1, replicate, true_codes, predicted_codes, work, tp):
    """Replicate ``replicate``'s Fisher–Yates shuffle of the predicted codes, scored as each position settles."""
    s0, s1, s2, s3 = replicate_state(key0, key1, replicate)
    n = true_codes.size
    for i in range(n):
        work[i] = predicted_codes[i]
    tp[:] = 0
    for i in range(n - 1, 0, -1):
        j, s0, s1, s2, s3 = draw_below(np.uint64(i + 1), s0, s1, s2, s3)
        label = work[j]
        work[j] = work[i]  # position i is final: its label need not be written back
        tp[label] += 1 if label == true_codes[i] else 0
    label = work[0]
    tp[label] += 1 if label == true_codes[0] else 0


@jit_cached(nogil=True)
def multiclass_permutations(true_codes, predicted_codes, recall_weights, f1_weights, recall_classes, f1_classes,
                            key0, key1, first, out):
    """Replicates ``first .. first + out.shape[0] - 1``: each row of ``out`` (rows, 3) the :data:`COLUMNS` of that
    replicate's shuffle of ``predicted_codes`` (int32 codes < K, K = ``recall_weights.size``).

    Examples
    --------
    >>> true = np.array([0, 0, 1, 1, 2, 2], np.int32)
    >>> recall, f1, with_items, classes = class_weights([2, 2, 2], [2, 2, 2])
    >>> key0, key1 = multiclass_key(2005, 6, 3)
    >>> out = np.empty((4, 3))
    >>> multiclass_permutations(true, true.copy(), recall, f1, with_items, classes, key0, key1, 0, out)
    >>> bool(np.all((out[:, 0] >= 0) & (out[:, 0] <= 6)))
    True
    """
    n = true_codes.size
    work = np.empty(n, np.int32)
    tp = np.zeros(recall_weights.size, np.int64)
    for row in range(out.shape[0]):
        _shuffle_count(key0, key1, first + row, true_codes, predicted_codes, work, tp)
        _values(tp, recall_weights, f1_weights, recall_classes, f1_classes, out, row)
