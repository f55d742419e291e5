"""Every metric from binary labels and real-valued scores (compute layer, numpy only).

Each metric's scorer is its registry entry's (:attr:`tablegen.compute.metrics.Metric.from_scores`,
in :mod:`tablegen.compute.metric_scorers`); this module checks the inputs, groups the scores and asks
the entries.  Conventions (as in scikit-learn):

- Items are read from the highest score down.  **Tied scores form one threshold group**: the only
  cut-offs are the empty one, one after each group of equal scores, and the full one, so no cut-off
  splits a tie.  The ``best_*`` metrics maximise over exactly these cut-offs (``best_mcc`` is 0 at
  the empty and full ones, where the correlation is undefined), and ``average_precision`` gives
  every positive of a group the precision at the end of its group (scikit-learn's
  ``average_precision_score``, a step-function sum over thresholds).
- ``auc`` counts a tied (positive, negative) pair as ½: U = #{positive above negative} + ½ #{tied
  pairs} (scikit-learn's ``roc_auc_score``, the trapezoid under the ROC curve).
- ``tp_at_k`` is TP_k, a count; ``precision_at_k`` is TP_k / min(k, P+N).  If a group of tied scores
  straddles the cut-off k, TP_k is not defined by any cut-off that keeps ties together (and an
  expected, fractional count is a score that cannot occur): this is refused with an error
  that names the tie.  k >= P+N counts all P positives.

Without ties every value equals the definition on the ranking itself (the entries' reference
scorers).  ``tests/lookup/test_from_scores.py`` and ``tests/compute/test_scores_registry.py`` check every metric
against scikit-learn on random data with and without ties, and against the reference scorers.
"""

from __future__ import annotations

import numpy as np

from tablegen.compute.metric_scorers import ThresholdGroups, threshold_groups, tp_at_k
from tablegen.compute.metrics import BASE_METRICS, DEFAULT_METRICS, get_metric, unknown_metric_text
from tablegen.errors import TablegenInputError

__all__ = ["BASE_SCORE_METRICS", "ThresholdGroups", "check_binary_labels", "check_model_scores", "check_score_metric",
           "metric_from_groups", "metrics_from_scores", "threshold_groups", "tp_at_k"]

#: The metrics scored when none are named: a run's defaults without a cut-off (fixed, like them).
BASE_SCORE_METRICS = tuple(name for name in DEFAULT_METRICS if get_metric(name).k is None)


def check_score_metric(name: str) -> str:
    """``name`` if it is a metric computable from scores, else an error listing them.

    Examples
    --------
    >>> check_score_metric("Best_MCC")
    'best_mcc'
    """
    try:
        return get_metric(name).name
    except (KeyError, TypeError):
        known = f"from scores tablegen computes {', '.join(BASE_METRICS)}, tp_at_<k> and precision_at_<k> (k >= 1)"
        raise TablegenInputError(f"metrics: {unknown_metric_text(name, known)}") from None


def metric_from_groups(name: str, g: ThresholdGroups) -> float:
    """The value of metric ``name`` at the cut-offs ``g`` (see the module docstring).

    Examples
    --------
    >>> metric_from_groups("tp_at_1", threshold_groups([1, 0, 1, 0], [0.9, 0.5, 0.5, 0.1]))
    1.0
    """
    return get_metric(check_score_metric(name)).score_groups(g)


def check_model_scores(scores, n: int) -> dict[str, np.ndarray]:
    """``scores`` as {model name: finite float vector of length n}, or an error naming the model.

    ``scores`` is one score vector, a 2-D array with one column per model (named ``model 1``, ...), or a
    mapping (or pandas DataFrame) model name -> vector.

    Examples
    --------
    >>> sorted(check_model_scores({"a": [0.1, 0.9], "b": [1, 0]}, 2))
    ['a', 'b']
    """
    if isinstance(scores, dict):
        models = {str(k): v for k, v in scores.items()}
    elif hasattr(scores, "columns") and hasattr(scores, "to_numpy"):
        models = {str(c): scores[c].to_numpy() for c in scores.columns}
    else:
        array = np.asarray(scores)
        if array.ndim == 1:
            models = {"model": array}
        elif array.ndim == 2:
            if array.shape[0] != n and array.shape[1] == n:
                raise TablegenInputError(f"scores has shape {array.shape}: give one column per model, shape "
                                         f"({n}, models) (pass scores.T)")
            models = {f"model {j + 1}": array[:, j] for j in range(array.shape[1])}
        else:
            raise TablegenInputError(f"scores must be one vector, a 2-D array (items x models) or a mapping "
                                     f"name -> vector; got {array.ndim} dimensions")
    if not models:
        raise TablegenInputError("scores names no model")
    return {name: _model_scores(name, values, n) for name, values in models.items()}


def _model_scores(name: str, values, n: int) -> np.ndarray:
    try:
        array = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise TablegenInputError(f"scores of {name!r} must be numbers") from None
    if array.ndim != 1 or array.size != n:
        raise TablegenInputError(f"scores of {name!r} has {array.size} value(s) but labels has {n}: one score per "
                                 "labelled item")
    if not np.all(np.isfinite(array)):
        raise TablegenInputError(f"scores of {name!r} holds a missing or non-finite value (NaN/inf) at position "
                                 f"{int(np.argmax(~np.isfinite(array)))}")
    return array


def check_binary_labels(labels, positive_label=None, name: str = "labels") -> np.ndarray:
    """``labels`` as a 0/1 int array (1 = positive), with at least one positive and one negative (0/1 int64
    labels come back as a read-only view of themselves, not a copy).

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
    values = _classes(array)
    if values.size != 2:
        shown = ", ".join(repr(v.item() if hasattr(v, "item") else v) for v in values[:5])
        more = ("; for more than two classes, tablegen.multiclass_test(labels, predicted) tests a model's predicted "
                "classes (accuracy, kappa, balanced accuracy, macro-F1)" if values.size > 2 else "")
        raise TablegenInputError(f"{name} must hold exactly two classes (binary), found {values.size}: {shown}"
                                 f"{', …' if values.size > 5 else ''}{more}")
    positive = _positive(values, positive_label, name)
    if array.dtype == np.int64 and values[0] == 0 and positive == 1:  # already 0/1: a read-only view, no copy
        view = array.view()
        view.flags.writeable = False
        return view
    return (array == positive).astype(np.int64)


def _classes(array: np.ndarray) -> np.ndarray:
    """``np.unique(array)``; for numbers and booleans holding two values, from their minimum and maximum (a report
    checks its labels dozens of times: 0.4 ms rather than 10 at 10^6 items)."""
    if array.dtype.kind in "biuf":
        low, high = array.min(), array.max()
        if low != high and bool(np.all((array == low) | (array == high))):
            return np.array([low, high], dtype=array.dtype) + array.dtype.type(0)  # -0.0 read as 0.0, as unique
    return np.unique(array)


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
        Any of :data:`tablegen.compute.metrics.BASE_METRICS` (default :data:`BASE_SCORE_METRICS`), ``tp_at_<k>`` and
        ``precision_at_<k>``.

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
