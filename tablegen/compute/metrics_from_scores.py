"""Every metric of DESIGN §1 from binary labels and real-valued scores (compute layer, numpy only).

Conventions (DESIGN §1, as in scikit-learn):

- Items are read from the highest score down.  **Tied scores form one threshold group**: the only
  cut-offs are the empty one, one after each group of equal scores, and the full one, so no cut-off
  splits a tie.  The ``best_*`` metrics maximise over exactly these cut-offs, and
  ``average_precision`` gives every positive of a group the precision at the end of its group
  (scikit-learn's ``average_precision_score``, a step-function sum over thresholds).
- ``auc`` counts a tied (positive, negative) pair as ½: U = #{positive above negative} + ½ #{tied
  pairs} (scikit-learn's ``roc_auc_score``, the trapezoid under the ROC curve).
- ``tp_at_k`` is TP_k, a count; ``precision_at_k`` is TP_k / min(k, P+N).  If a group of tied scores
  straddles the cut-off k, TP_k is not defined by any cut-off that keeps ties together (and an
  expected, fractional count is a score that cannot occur, DESIGN §1): this is refused with an error
  that names the tie.  k >= P+N counts all P positives.

Without ties every value equals the definition on the ranking itself (the reference scorers in
:mod:`tablegen.compute.metrics`).  ``tests/test_from_scores.py`` checks every metric against scikit-learn on
random data with and without ties, and against the reference scorers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from tablegen.errors import TablegenInputError

BASE_SCORE_METRICS = ("auc", "best_accuracy", "best_f1", "best_balanced_accuracy", "average_precision")
_AT_K = re.compile(r"^(tp|precision)_at_([1-9][0-9]*)$")


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
    order = np.argsort(-scores, kind="stable")
    s, y = scores[order], labels[order]
    starts = np.flatnonzero(np.concatenate([[True], s[1:] != s[:-1]]))
    group_pos = np.add.reduceat(y, starts) if y.size else np.zeros(0, np.int64)
    group_neg = np.diff(np.append(starts, y.size)) - group_pos
    tp = np.concatenate([[0], np.cumsum(group_pos)])
    fp = np.concatenate([[0], np.cumsum(group_neg)])
    return ThresholdGroups(tp, fp, group_pos, group_neg)


def _auc(g: ThresholdGroups) -> float:
    below_neg = g.N - g.fp[1:]  # negatives in lower groups
    u = np.sum(g.group_pos * below_neg) + 0.5 * np.sum(g.group_pos * g.group_neg)
    return float(u / (g.P * g.N))


def _best_accuracy(g: ThresholdGroups) -> float:
    return float(np.max((g.tp + g.N - g.fp) / (g.P + g.N)))


def _best_f1(g: ThresholdGroups) -> float:
    k = g.tp + g.fp
    return float(np.max(2 * g.tp / (g.P + k)))  # the empty cut-off gives 0 / P = 0


def _best_balanced_accuracy(g: ThresholdGroups) -> float:
    return float(np.max(0.5 * (g.tp / g.P + 1 - g.fp / g.N)))


def _average_precision(g: ThresholdGroups) -> float:
    k = (g.tp + g.fp)[1:]
    return float(np.sum(g.group_pos * (g.tp[1:] / k)) / g.P)


def tp_at_k(g: ThresholdGroups, k: int) -> int:
    """TP_k: positives among the top k, refused when a group of tied scores straddles the cut-off k.

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
            f"tp_at_{k}: items ranked {first} to {last} have tied scores, so no cut-off keeps ties together at "
            f"k = {k} (DESIGN §1: tied scores form one threshold group). Use a k at a group boundary "
            f"(here {first - 1} or {last}) or break the ties in the scores")
    return int(g.tp[at])


_BASE = {"auc": _auc, "best_accuracy": _best_accuracy, "best_f1": _best_f1,
         "best_balanced_accuracy": _best_balanced_accuracy, "average_precision": _average_precision}


def check_score_metric(name: str) -> str:
    """``name`` if it is a metric computable from scores, else an error listing them."""
    if name in _BASE or (isinstance(name, str) and _AT_K.match(name)):
        return name
    raise TablegenInputError(f"metrics: unknown metric {name!r}; from scores tablegen computes "
                             f"{', '.join(BASE_SCORE_METRICS)}, tp_at_<k> and precision_at_<k> (k >= 1)")


def metric_from_groups(name: str, g: ThresholdGroups) -> float:
    """The value of metric ``name`` at the cut-offs ``g`` (see the module docstring)."""
    if name in _BASE:
        return _BASE[name](g)
    match = _AT_K.match(check_score_metric(name))
    k = int(match.group(2))
    count = tp_at_k(g, k)
    if match.group(1) == "tp":
        return float(count)
    return count / min(k, g.P + g.N)


def check_binary_labels(labels, positive_label=None, name: str = "labels") -> np.ndarray:
    """``labels`` as a 0/1 int array (1 = positive), with at least one positive and one negative.

    The positive class is ``positive_label`` if given; otherwise 1 for labels {0, 1} or {-1, 1},
    True for booleans (also the strings "true"/"false"); other label sets need ``positive_label``.

    Examples
    --------
    >>> check_binary_labels(["spam", "ham", "spam"], positive_label="spam").tolist()
    [1, 0, 1]
    """
    array = np.asarray(labels)
    if array.ndim != 1 or array.size == 0:
        raise TablegenInputError(f"{name} must be a non-empty 1-D sequence, got shape {array.shape}")
    if array.dtype.kind == "f" and not np.all(np.isfinite(array)):
        raise TablegenInputError(f"{name} holds a missing or non-finite value (NaN/inf) at position "
                                 f"{int(np.argmax(~np.isfinite(array)))}")
    values = np.unique(array)
    if values.size != 2:
        shown = ", ".join(repr(v.item() if hasattr(v, "item") else v) for v in values[:5])
        raise TablegenInputError(f"{name} must hold exactly two classes (binary), found {values.size}: {shown}"
                                 f"{', …' if values.size > 5 else ''}")
    positive = _positive(values, positive_label, name)
    return (array == positive).astype(np.int64)


def _positive(values: np.ndarray, positive_label, name: str):
    values = [v.item() if hasattr(v, "item") else v for v in values]
    if positive_label is not None:
        matches = [v for v in values if v == positive_label or str(v) == str(positive_label)]
        if not matches:
            raise TablegenInputError(f"positive_label {positive_label!r} is not one of the two classes in "
                                     f"{name}: {values[0]!r}, {values[1]!r}")
        return matches[0]
    as_text = {str(v).strip().lower() for v in values}
    for pair, positive in (({"0", "1"}, "1"), ({"-1", "1"}, "1"), ({"false", "true"}, "true"),
                           ({"0.0", "1.0"}, "1.0"), ({"-1.0", "1.0"}, "1.0")):
        if as_text == pair:
            return next(v for v in values if str(v).strip().lower() == positive)
    raise TablegenInputError(f"{name} has classes {values[0]!r} and {values[1]!r}: say which is positive "
                             "(positive_label=..., or --positive-label on the command line)")


def metrics_from_scores(labels, scores, metrics=BASE_SCORE_METRICS) -> dict[str, float]:
    """Compute ``metrics`` of one classifier from 0/1 ``labels`` and real-valued ``scores``.

    Parameters
    ----------
    labels : array_like of 0/1
        1 marks a positive (see :func:`check_binary_labels` for other label sets).
    scores : array_like of float
        Higher means more likely positive; ties allowed (one threshold group each).
    metrics : sequence of str
        Any of :data:`BASE_SCORE_METRICS`, ``tp_at_<k>`` and ``precision_at_<k>``.

    Returns
    -------
    dict
        Metric name -> value.

    Examples
    --------
    >>> metrics_from_scores([1, 0, 1, 0], [0.9, 0.5, 0.5, 0.1], ["auc", "best_accuracy"])
    {'auc': 0.875, 'best_accuracy': 0.75}
    """
    labels = np.asarray(labels)
    scores = np.asarray(scores, dtype=float)
    if scores.shape != labels.shape:
        raise TablegenInputError(f"scores has {scores.size} values but labels has {labels.size}")
    if not np.all(np.isfinite(scores)):
        raise TablegenInputError(f"scores holds a missing or non-finite value at position "
                                 f"{int(np.argmax(~np.isfinite(scores)))}")
    if not (np.any(labels == 1) and np.any(labels == 0)) or np.any((labels != 0) & (labels != 1)):
        raise TablegenInputError("labels must be 0/1 with at least one of each (see check_binary_labels)")
    groups = threshold_groups(labels, scores)
    return {name: metric_from_groups(name, groups) for name in metrics}
