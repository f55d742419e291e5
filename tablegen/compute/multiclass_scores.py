"""Multi-class metrics from a probability matrix (one row per item, one column per class): their values and the
tables their permutation null reads (compute layer).

The metrics (the ranking metrics of a K-class score matrix; ``SCORE_METRICS``):

``hand_till_auc``   Hand & Till (2001): M = the mean over the K (K - 1) / 2 class pairs of (A(i|j) + A(j|i)) / 2,
                    A(i|j) the probability that an item of class i scores higher in column i than an item of class
                    j (a tie counted ½); scikit-learn's ``roc_auc_score(multi_class="ovo", average="macro")``.
``ovr_macro_auc``   the unweighted mean over the classes of the AUC of column c separating class c from the rest
                    (ties ½); scikit-learn's ``roc_auc_score(multi_class="ovr", average="macro")``.  Its
                    ``average="weighted"`` weights the classes by prevalence instead: not this metric.
``top_k_accuracy``  the mean over the items of the credit of the true class c being among the k highest scores of
                    its row: with g the classes scoring strictly higher than c and t those tied with c (c
                    included), min(1, max(0, (k - g) / t)), the chance that c lands in the top k were the tie
                    broken at random (the tie rule).
                    Without a tie straddling the k-th place this is 0 or 1 and equals scikit-learn's
                    ``top_k_accuracy_score``; where a tie straddles it, scikit-learn breaks it by column order
                    (the higher column first) and this metric gives the fair share instead.

Log-loss, the Brier score and other calibration scores are not ranking metrics and are refused
(:func:`check_score_metric` says why).  Both AUCs are invariant under any increasing transformation of a column;
top-k under any increasing transformation of all the scores at once.
"""

from __future__ import annotations

import numpy as np

from tablegen.errors import Argument, TablegenInputError

#: The ranking metrics of a probability matrix, in the kernel's column order.
SCORE_METRICS = ("hand_till_auc", "ovr_macro_auc", "top_k_accuracy")
#: How far a row's sum may be from 1.
ROW_SUM_TOLERANCE = 1e-6
#: The most items: 2**25 keeps every pair count 4 n_i n_j below 2**53 (exact as a double) and the codes in int32.
MAX_ITEMS = 1 << 25
#: The metric names refused as not ranking metrics (calibration or likelihood scores).
NOT_RANKING = ("log_loss", "logloss", "cross_entropy", "neg_log_loss", "brier", "brier_score", "brier_score_loss",
               "ece", "expected_calibration_error", "calibration_error", "nll")
#: Metrics of predicted labels: answered by :func:`tablegen.multiclass_test` from the predicted classes.
LABEL_METRICS = ("accuracy", "kappa", "balanced_accuracy", "macro_f1")


def check_score_metric(metric) -> str:
    """``metric`` (lower case) if it is one of :data:`SCORE_METRICS`, else an error naming ``metric`` that says why.

    Examples
    --------
    >>> check_score_metric("Hand_Till_AUC")
    'hand_till_auc'
    >>> check_score_metric("log_loss")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    tablegen.errors.TablegenInputError: metric='log_loss' is not a ranking metric: ...
    """
    name = metric.lower() if isinstance(metric, str) else metric
    if name in SCORE_METRICS:
        return name
    if name in NOT_RANKING:
        raise TablegenInputError.naming(
            Argument("metric", metric), " is not a ranking metric: it scores calibration (how close the "
            "probabilities are to the outcomes), which the best-of-C question does not ask.  The question is whether "
            "the model orders the items better than C random classifiers would, and a random classifier here is the "
            "model's own rows dealt to the items at random: a calibration score's permutation null mixes how "
            "confident the rows are with how well they rank, so its critical value would not answer the question.  "
            f"Test a ranking metric ({', '.join(SCORE_METRICS)}); compare the calibration of two models on the "
            "same items with a paired test instead")
    if name in LABEL_METRICS:
        raise TablegenInputError.naming(
            Argument("metric", metric), " is a metric of predicted labels: take the predicted classes "
            "(probabilities.argmax(axis=1)) and call tablegen.multiclass_test(labels, predicted, metric=...); "
            f"from probabilities the metrics are {', '.join(SCORE_METRICS)}")
    raise TablegenInputError.naming(Argument("metric"), f" must be one of {', '.join(SCORE_METRICS)} for a "
                                    f"probability matrix, got {metric!r}")


def check_probabilities(probabilities, n: int | None = None) -> np.ndarray:
    """``probabilities`` as a float (n, K) array with K >= 2 columns, every entry finite and >= 0, every row summing
    to 1 within :data:`ROW_SUM_TOLERANCE`; else an error naming ``probabilities`` (and the first bad row).

    Examples
    --------
    >>> check_probabilities([[0.2, 0.8], [0.5, 0.5]]).shape
    (2, 2)
    """
    name = Argument("probabilities")
    try:
        array = np.asarray(probabilities, dtype=float)
    except (TypeError, ValueError):
        raise TablegenInputError.naming(name, " must be a 2-D array of numbers (items x classes)") from None
    if array.ndim != 2:
        raise TablegenInputError.naming(name, f" must be 2-D (one row per item, one column per class), got shape "
                                        f"{array.shape}")
    if n is not None and array.shape[0] != n:
        hint = " (pass probabilities.T)" if array.shape[1] == n else ""
        raise TablegenInputError.naming(name, f" has {array.shape[0]:,} rows but ", Argument("labels"),
                                        f" has {n:,} items: one row per item{hint}")
    if array.shape[1] < 2:
        raise TablegenInputError.naming(name, f" has {array.shape[1]} column(s): one per class, at least two")
    bad = ~np.isfinite(array)
    if bad.any():
        row, column = np.argwhere(bad)[0]
        raise TablegenInputError.naming(name, f" holds a missing or non-finite value ({float(array[row, column])!r}) "
                                        f"at row {row}, column {column}")
    if (array < 0).any():
        row, column = np.argwhere(array < 0)[0]
        raise TablegenInputError.naming(name, f" holds a negative entry ({float(array[row, column])!r}) at row {row}, "
                                        f"column {column}: probabilities are >= 0")
    off = np.abs(array.sum(axis=1) - 1.0)
    if (off > ROW_SUM_TOLERANCE).any():
        row = int(np.argmax(off > ROW_SUM_TOLERANCE))
        raise TablegenInputError.naming(name, f" row {row} sums to {float(array[row].sum())!r}, not 1 (within "
                                        f"{ROW_SUM_TOLERANCE:g}): each row is one item's class probabilities")
    return array


def check_k(k, K: int) -> int:
    """``k`` as an int in [1, K - 1] (k >= K makes every item a hit), else an error naming ``k``.

    Examples
    --------
    >>> check_k(2, 5)
    2
    """
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= k <= K - 1:
        raise TablegenInputError.naming(Argument("k"), f" must be an integer in [1, {K - 1}] for K = {K} classes "
                                        f"(k >= K puts every class in the top k), got {k!r}")
    return int(k)


def top_k_credit(probabilities: np.ndarray, k: int) -> np.ndarray:
    """(n, K): item i's top-k credit were its true class c, min(1, max(0, (k - g) / t)), g the classes of the row
    scoring strictly higher than c and t those tied with c (c included).

    Examples
    --------
    >>> top_k_credit(np.array([[0.5, 0.25, 0.25], [0.1, 0.6, 0.3]]), 2).tolist()
    [[1.0, 0.5, 0.5], [0.0, 1.0, 1.0]]
    """
    n, K = probabilities.shape
    order = np.argsort(probabilities, axis=1, kind="stable")
    ordered = np.take_along_axis(probabilities, order, axis=1)
    first, last = _tie_bounds(ordered, axis=1)
    higher = K - 1 - last
    tied = last - first + 1
    credit_sorted = np.clip((k - higher) / tied, 0.0, 1.0)
    credit = np.empty((n, K))
    np.put_along_axis(credit, order, credit_sorted, axis=1)
    return credit


def _tie_bounds(ordered: np.ndarray, axis: int) -> tuple[np.ndarray, np.ndarray]:
    """For each position of ``ordered`` (ascending along ``axis``), the first and last position of its tie."""
    moved = np.moveaxis(ordered, axis, -1)
    m = moved.shape[-1]
    positions = np.broadcast_to(np.arange(m), moved.shape)
    change = moved[..., 1:] != moved[..., :-1]
    starts = np.concatenate([np.ones(moved.shape[:-1] + (1,), bool), change], axis=-1)
    ends = np.concatenate([change, np.ones(moved.shape[:-1] + (1,), bool)], axis=-1)
    first = np.maximum.accumulate(np.where(starts, positions, 0), axis=-1)
    last = np.minimum.accumulate(np.where(ends, positions, m - 1)[..., ::-1], axis=-1)[..., ::-1]
    return np.moveaxis(first, -1, axis), np.moveaxis(last, -1, axis)


def score_tables(probabilities: np.ndarray, k: int | None = None) -> tuple[np.ndarray, ...]:
    """The tables the kernel reads, computed once per matrix: ``(double_ranks, orders, group_last, credit)``.

    ``double_ranks`` (n, K) int64, twice each item's ascending midrank in each column; ``orders`` (K, n) int32, each
    column's items by descending score; ``group_last`` (K, n) int32, the last position of each position's tie in
    ``orders``; ``credit`` (n, K), :func:`top_k_credit` (zeros without ``k``).

    Examples
    --------
    >>> double_ranks, orders, group_last, credit = score_tables(np.array([[0.6, 0.4], [0.6, 0.4], [0.2, 0.8]]))
    >>> double_ranks[:, 0].tolist(), orders[0].tolist(), group_last[0].tolist()
    ([5, 5, 2], [1, 0, 2], [1, 1, 2])
    """
    n, K = probabilities.shape
    ascending = np.argsort(probabilities, axis=0, kind="stable")
    first, last = _tie_bounds(np.take_along_axis(probabilities, ascending, axis=0), axis=0)
    double_ranks = np.empty((n, K), np.int64)
    np.put_along_axis(double_ranks, ascending, first + last + 2, axis=0)
    orders = np.ascontiguousarray(ascending[::-1].T, dtype=np.int32)
    group_last = np.ascontiguousarray((n - 1 - first[::-1]).T, dtype=np.int32)
    credit = top_k_credit(probabilities, k) if k is not None else np.zeros((n, K))
    return double_ranks, orders, group_last, credit


def check_codes(labels_codes, K: int, every_class: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Class codes as int32 in [0, K), every class present where ``every_class`` (an AUC needs items of each; top-k
    does not), and their counts.

    Examples
    --------
    >>> codes, counts = check_codes([0, 1, 2, 1], 3)
    >>> counts.tolist()
    [1, 2, 1]
    """
    codes = np.asarray(labels_codes)
    if codes.ndim != 1 or codes.dtype.kind not in "iu" or (codes.size and (codes.min() < 0 or codes.max() >= K)):
        raise TablegenInputError.naming(Argument("labels_codes"), f" must be a 1-D array of class codes in [0, {K}) "
                                        "(column indices of probabilities)")
    if codes.size > MAX_ITEMS:
        raise TablegenInputError.naming(Argument("labels"), f" has {codes.size:,} items, more than the {MAX_ITEMS:,} "
                                        "the multi-class scores kernel counts exactly: test a random subsample")
    counts = np.bincount(codes, minlength=K).astype(np.int64)
    absent = np.flatnonzero(counts == 0)
    if absent.size and every_class:
        raise TablegenInputError.naming(
            Argument("labels"), f" has no item of class {int(absent[0])} (column {int(absent[0])} of probabilities): "
            "every column's class needs at least one item (an AUC of a class without items is undefined)")
    return codes.astype(np.int32), counts


def score_metric_values(labels_codes, probabilities, metrics=SCORE_METRICS, k: int | None = None) -> dict[str, float]:
    """The multi-class ranking metrics of one model: {metric: value}.

    Parameters
    ----------
    labels_codes : array_like of int
        Each item's true class as a column index of ``probabilities``; every class has at least one item.
    probabilities : 2-D array_like
        Row i the model's class probabilities for item i (entries >= 0, rows summing to 1 within 1e-6).
    metrics : sequence of str
        Any of :data:`SCORE_METRICS` (default all).
    k : int, optional
        The k of ``top_k_accuracy`` (required for it), in [1, K - 1].

    Returns
    -------
    dict
        Metric -> value, the same doubles the permutation kernel gives the labels as they stand.

    Examples
    --------
    >>> probabilities = [[0.7, 0.2, 0.1], [0.3, 0.4, 0.3], [0.2, 0.3, 0.5], [0.1, 0.6, 0.3]]
    >>> score_metric_values([0, 1, 2, 2], probabilities, k=1)
    {'hand_till_auc': 0.875, 'ovr_macro_auc': 0.8472222222222222, 'top_k_accuracy': 0.75}
    """
    from tablegen.compute.kernels.multiclass_scores import COLUMNS, arrangement_values

    names = [check_score_metric(m) for m in ([metrics] if isinstance(metrics, str) else metrics)]
    array = check_probabilities(probabilities)
    codes, counts = check_codes(labels_codes, array.shape[1], every_class=names != ["top_k_accuracy"])
    if codes.size != array.shape[0]:
        raise TablegenInputError.naming(Argument("probabilities"), f" has {array.shape[0]:,} rows but ",
                                        Argument("labels"), f" has {codes.size:,} items: one row per item")
    if "top_k_accuracy" in names:
        if k is None:
            raise TablegenInputError.naming(Argument("k"), " is needed for top_k_accuracy")
        k = check_k(k, array.shape[1])
    out = np.empty((1, len(COLUMNS)))
    arrangement_values(codes, *score_tables(array, k if "top_k_accuracy" in names else None), counts,
                       "hand_till_auc" in names, out, 0)
    return {name: float(out[0, COLUMNS.index(name)]) for name in names}
