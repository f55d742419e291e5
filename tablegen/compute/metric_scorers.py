"""The scorers the metric registry names: each metric on rankings (reference) and on real scores.

Two families, one per metric and both named by its registry entry (:mod:`tablegen.compute.metrics`),
which sits above this module (this module never imports it):

- **Reference scorers** ``reference_<metric>(labels, P, N)`` score each row of a (R, P+N) 0/1 label
  matrix, a ranking read from the top, by its definition.  Deliberately plain numpy over
  whole prefix arrays: they are the independent check of the numba kernels (``tests/compute/test_kernel.py``),
  not the production path.
- **Scores scorers** ``<metric>_from_groups(g)`` score one classifier from its labels and real-valued
  scores, grouped by :func:`threshold_groups`.  Conventions (as in scikit-learn): items
  are read from the highest score down and **tied scores form one threshold group**, so the only
  cut-offs are the empty one, one after each group and the full one, and no cut-off splits a tie.
  The ``best_*`` metrics maximise over exactly these cut-offs; ``average_precision`` gives every
  positive of a group the precision at the end of its group (scikit-learn's
  ``average_precision_score``); ``auc`` counts a tied (positive, negative) pair as ½ (scikit-learn's
  ``roc_auc_score``).  ``tp_at_k`` is refused when a tie straddles the cut-off k (:func:`tp_at_k`).
  Without ties every value equals the reference scorer's on the ranking itself
  (``tests/lookup/test_from_scores.py``, ``tests/compute/test_scores_registry.py``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tablegen.errors import TablegenInputError


# -- reference scorers: rankings (0/1 label rows, top first) ---------------------------------------
def _prefix_counts(labels: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """TP_k, FP_k and k for k = 0..n of each row of a (R, n) 0/1 label matrix."""
    labels = np.asarray(labels, dtype=np.int64)
    tp = np.concatenate([np.zeros((labels.shape[0], 1), np.int64), np.cumsum(labels, axis=1)], axis=1)
    k = np.arange(labels.shape[1] + 1)
    return tp, k - tp, k


def reference_auc(labels, P, N):
    tp, _, _ = _prefix_counts(labels)
    negatives = 1 - np.asarray(labels, dtype=np.int64)
    return (negatives * tp[:, :-1]).sum(axis=1) / (P * N)


def reference_best_accuracy(labels, P, N):
    tp, fp, _ = _prefix_counts(labels)
    return ((tp + N - fp) / (P + N)).max(axis=1)


def reference_best_f1(labels, P, N):
    tp, _, k = _prefix_counts(labels)
    f1 = 2 * tp / (P + k)  # k = 0 gives 0 / P = 0, as defined
    return f1.max(axis=1)


def reference_best_balanced_accuracy(labels, P, N):
    tp, fp, _ = _prefix_counts(labels)
    return (0.5 * (tp / P + 1 - fp / N)).max(axis=1)


def reference_average_precision(labels, P, N):
    tp, _, k = _prefix_counts(labels)
    labels = np.asarray(labels, dtype=np.int64)
    precision_at_rank = tp[:, 1:] / k[1:]
    return (labels * precision_at_rank).sum(axis=1) / P


def _mcc_weights(P: int, N: int, k: np.ndarray) -> np.ndarray:
    """w_k = 1 / sqrt(P N k (P+N-k)), 0 at k = 0 and k = P+N (the kernels' correctly rounded operations)."""
    n = P + N
    k = np.asarray(k, dtype=np.int64)
    inner = (k > 0) & (k < n)
    weights = np.zeros(k.shape)
    weights[inner] = 1.0 / np.sqrt(np.float64(P * N) * (k[inner] * (n - k[inner])).astype(np.float64))
    return weights


def reference_best_mcc(labels, P, N):
    """max_k of (TP_k N - FP_k P) w_k, w_k = 1 / sqrt(P N k (P+N-k)) (0 at k = 0, P+N), capped at 1.

    The weights and products are the kernels' operations (:func:`~tablegen.compute.kernels.ranking.mcc_weights`),
    in numpy: correctly rounded, so the same floats.
    """
    tp, fp, k = _prefix_counts(labels)
    return np.minimum(((tp * N - fp * P) * _mcc_weights(P, N, k)).max(axis=1), 1.0)


def reference_tp_at(k_cut):
    """The reference scorer of ``tp_at_<k_cut>``: TP at min(k_cut, P+N)."""
    def score(labels, P, N):
        tp, _, _ = _prefix_counts(labels)
        return tp[:, min(k_cut, P + N)].astype(np.float64)

    return score


def reference_precision_at(k_cut):
    """The reference scorer of ``precision_at_<k_cut>``: TP_k / min(k_cut, P+N)."""
    count = reference_tp_at(k_cut)

    def score(labels, P, N):
        return count(labels, P, N) / min(k_cut, P + N)

    return score


# -- scores scorers: labels and real-valued scores, ties kept together -----------------------------
@dataclass(frozen=True)
class ThresholdGroups:
    """Counts at the cut-offs of one score vector, groups of tied scores read from the top.

    Attributes
    ----------
    tp, fp : ndarray of int64
        Positives and negatives above each cut-off: index 0 is the empty cut-off, index g the cut-off
        after the g-th group (the last one holds everything).
    group_pos, group_neg : ndarray of int64
        Positives and negatives inside each group.
    """

    tp: np.ndarray
    fp: np.ndarray
    group_pos: np.ndarray
    group_neg: np.ndarray

    @property
    def P(self) -> int:
        return int(self.tp[-1])

    @property
    def N(self) -> int:
        return int(self.fp[-1])


def threshold_groups(labels, scores) -> ThresholdGroups:
    """Group tied scores and count positives/negatives at each cut-off (labels are 0/1).

    Examples
    --------
    >>> g = threshold_groups([1, 0, 1, 0], [0.9, 0.5, 0.5, 0.1])
    >>> g.tp.tolist(), g.fp.tolist()
    ([0, 1, 2, 2], [0, 0, 1, 2])
    """
    labels = np.asarray(labels, dtype=np.int64)
    scores = np.asarray(scores, dtype=float)
    from tablegen.compute.kernels.orders import descending_order  # lazy: a table lookup never sorts

    order = descending_order(scores)  # sorted once per report (kernels.orders)
    s, y = scores[order], labels[order]
    starts = np.flatnonzero(np.concatenate([[True], s[1:] != s[:-1]]))
    group_pos = np.add.reduceat(y, starts) if y.size else np.zeros(0, np.int64)
    group_neg = np.diff(np.append(starts, y.size)) - group_pos
    tp = np.concatenate([[0], np.cumsum(group_pos)])
    fp = np.concatenate([[0], np.cumsum(group_neg)])
    return ThresholdGroups(tp, fp, group_pos, group_neg)


def auc_from_groups(g: ThresholdGroups) -> float:
    below_neg = g.N - g.fp[1:]  # negatives in lower groups
    u = np.sum(g.group_pos * below_neg) + 0.5 * np.sum(g.group_pos * g.group_neg)
    return float(u / (g.P * g.N))


def best_accuracy_from_groups(g: ThresholdGroups) -> float:
    return float(np.max((g.tp + g.N - g.fp) / (g.P + g.N)))


def best_f1_from_groups(g: ThresholdGroups) -> float:
    k = g.tp + g.fp
    return float(np.max(2 * g.tp / (g.P + k)))  # the empty cut-off gives 0 / P = 0


def best_balanced_accuracy_from_groups(g: ThresholdGroups) -> float:
    return float(np.max(0.5 * (g.tp / g.P + 1 - g.fp / g.N)))


def average_precision_from_groups(g: ThresholdGroups) -> float:
    k = (g.tp + g.fp)[1:]
    return float(np.sum(g.group_pos * (g.tp[1:] / k)) / g.P)


def best_mcc_from_groups(g: ThresholdGroups) -> float:
    """max over the cut-offs between groups of the Matthews correlation, 0 at the empty and full ones.

    The operations of :func:`reference_best_mcc`, so without ties the same float.

    Examples
    --------
    >>> best_mcc_from_groups(threshold_groups([1, 1, 0, 0], [0.9, 0.8, 0.3, 0.1]))
    1.0
    >>> round(best_mcc_from_groups(threshold_groups([1, 1, 0, 0], [0.9, 0.5, 0.5, 0.1])), 6)  # ties: 1/sqrt(3)
    0.57735
    """
    P, N = g.P, g.N
    values = (g.tp * N - g.fp * P) * _mcc_weights(P, N, g.tp + g.fp)
    return float(min(np.max(values), 1.0))


def tp_at_k(g: ThresholdGroups, k: int, name: str | None = None) -> int:
    """TP_k: positives among the top k, refused when a group of tied scores straddles the cut-off k.

    ``name`` is the metric asked for (``tp_at_<k>`` or ``precision_at_<k>``), which the error names.

    Examples
    --------
    >>> tp_at_k(threshold_groups([1, 0, 1, 0], [0.9, 0.8, 0.5, 0.1]), 2)
    1
    """
    n = g.P + g.N
    if k >= n:
        return g.P
    ends = g.tp + g.fp
    at = int(np.searchsorted(ends, k))
    if ends[at] != k:
        first, last = int(ends[at - 1]) + 1, int(ends[at])
        raise TablegenInputError(
            f"{name or f'tp_at_{k}'}: items ranked {first} to {last} have tied scores, so no cut-off keeps ties "
            f"together at k = {k} (tied scores form one threshold group, and a fractional count is not a value the "
            f"metric can take). Use a k at a group boundary (here {first - 1} or {last}) or break the ties in the "
            "scores")
    return int(g.tp[at])


def tp_at_from_groups(k_cut: int):
    """The scores scorer of ``tp_at_<k_cut>``: :func:`tp_at_k` as a float."""
    return lambda g: float(tp_at_k(g, k_cut, f"tp_at_{k_cut}"))


def precision_at_from_groups(k_cut: int):
    """The scores scorer of ``precision_at_<k_cut>``: :func:`tp_at_k` / min(k_cut, P+N)."""
    return lambda g: tp_at_k(g, k_cut, f"precision_at_{k_cut}") / min(k_cut, g.P + g.N)
