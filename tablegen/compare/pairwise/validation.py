"""The checked question of :func:`tablegen.compare.paired_test`: labels, two models' scores, metric, method."""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np

from tablegen.compute.metrics import Metric
from tablegen.errors import Argument, TablegenInputError

METHODS = ("auto", "delong", "permutation", "mcnemar")
#: Above this many items the bootstrap interval is the percentile one (BCa's jackknife costs n evaluations).
BCA_ITEMS = 2000


@dataclass(frozen=True)
class PairQuestion:
    """Two models on one test set, checked."""

    labels: np.ndarray
    scores_a: np.ndarray
    scores_b: np.ndarray
    spec: Metric | None
    method: str
    alternative: str
    threshold: float | None
    R: int
    seed: int
    key: tuple
    column: int
    k_cut: int
    divisor: int
    device: str = "cpu"

    def values(self) -> tuple[float, float]:
        """Each model's value of the metric (the registry's scorer)."""
        from tablegen.compute.metrics_from_scores import threshold_groups

        return tuple(float(self.spec.score_groups(threshold_groups(self.labels, s)))
                     for s in (self.scores_a, self.scores_b))

    def metric_difference(self, items: np.ndarray) -> float:
        """metric(a) - metric(b) on the items ``items`` (a bootstrap resample; NaN without both classes)."""
        return (metric_on_items(self.spec, self.labels, self.scores_a, items)
                - metric_on_items(self.spec, self.labels, self.scores_b, items))


def metric_on_items(spec: Metric, labels: np.ndarray, scores: np.ndarray, items: np.ndarray) -> float:
    """The metric of one model on the items ``items`` (a bootstrap resample): NaN without both classes, or
    where tied scores straddle tp_at_k's cut-off."""
    from tablegen.compute.metrics_from_scores import threshold_groups

    y = labels[items]
    if y.min() == y.max():
        return float("nan")
    try:
        return float(spec.score_groups(threshold_groups(y, scores[items])))
    except TablegenInputError:
        return float("nan")


def checked_pair(labels, scores_a, scores_b, metric, method, alternative, threshold, R, seed,
                 positive_label, device="cpu") -> PairQuestion:
    """Check every argument once; errors name the argument (``device`` resolved: ``"cpu"`` or ``"cuda"``)."""
    from tablegen.compare.pairwise.tests import ALTERNATIVES, DEFAULT_SWAPS
    from tablegen.compute.cell import DEFAULT_SEED
    from tablegen.compute.kernels.cuda.device import resolve_device
    from tablegen.compute.mc import cell_key
    from tablegen.compute.metrics_from_scores import check_binary_labels, check_model_scores
    from tablegen.compute.validation import check_integer, check_seed

    y = check_binary_labels(labels, positive_label)
    models = check_model_scores({"scores_a": scores_a, "scores_b": scores_b}, y.size)
    spec = None if is_accuracy(metric) else checked_metric(metric)
    if alternative not in ALTERNATIVES:
        raise TablegenInputError.naming(Argument("alternative"), f" must be one of {', '.join(ALTERNATIVES)}, "
                                        f"got {alternative!r}")
    method = resolved_method(spec, method, threshold, models.values())
    a, b = models["scores_a"], models["scores_b"]
    if method == "mcnemar":
        threshold = mcnemar_threshold(threshold, a, b)
    elif threshold is not None:
        raise TablegenInputError.naming(Argument("threshold"), f" applies to McNemar's test of accuracy, not to "
                                        f"method={method!r}")
    R = DEFAULT_SWAPS if R is None else check_integer("R", R, 100)
    seed = DEFAULT_SEED if seed is None else check_seed("seed", seed, allow_none=False)
    n, P = y.size, int(y.sum())
    key = cell_key(seed, P, n - P)  # the streams of (P, N) under the root seed, as everywhere
    device = resolve_device(device)
    if spec is None:  # accuracy at the threshold: McNemar's, which needs no kernel column
        return PairQuestion(y, a, b, spec, method, alternative, threshold, R, seed, key, 0, 0, 1, device)
    column, k_cut = kernel_column(spec)
    return PairQuestion(y, a, b, spec, method, alternative, threshold, R, seed, key, column, k_cut,
                        spec.count_divisor(P, n - P), device)


def kernel_column(spec: Metric) -> tuple[int, int]:
    """(the kernel column that scores ``spec``, its cut-off k or 0): the swap kernel's metric code.

    Examples
    --------
    >>> kernel_column(checked_metric("best_f1"))
    (2, 0)
    """
    from tablegen.compute.kernels.ranking import BASE_COLUMNS, TP_COLUMN

    entry = spec.counted_entry()
    return (TP_COLUMN if entry.k is not None else BASE_COLUMNS.index(entry.kernel_column)), int(entry.k or 0)


def is_accuracy(metric) -> bool:
    """Whether ``metric`` names accuracy at a threshold (``"accuracy"``, any case): McNemar's metric, which is
    not a metric of scores alone (``best_accuracy`` is)."""
    return isinstance(metric, str) and metric.strip().lower() == "accuracy"


def resolved_method(spec: Metric | None, method, threshold, models) -> str:
    """The method ``"auto"`` stands for, or ``method`` checked against the metric (``spec`` None: accuracy at a
    threshold): McNemar where the metric is accuracy, a threshold is given or every model gives 0/1 predictions,
    else the metric's own paired test.

    Examples
    --------
    >>> resolved_method(checked_metric("auc"), "auto", 0.5, [np.array([0.2, 0.7])])
    'mcnemar'
    >>> resolved_method(checked_metric("auc"), "auto", None, [np.array([0.2, 0.7])])
    'delong'
    """
    if method not in METHODS:
        raise TablegenInputError.naming(Argument("method"), f" must be one of {', '.join(METHODS)}, got {method!r}")
    if spec is None:
        if method not in ("auto", "mcnemar"):
            raise TablegenInputError.naming(
                Argument("metric", "accuracy"), " (at a threshold) is tested by McNemar's test: use ",
                Argument("method", "mcnemar"), f" (or 'auto'), not {method!r}; or compare best_accuracy by ",
                Argument("method", "permutation"))
        return "mcnemar"
    if method == "auto":
        predictions = all(np.isin(s, (0.0, 1.0)).all() for s in models)
        method = "mcnemar" if threshold is not None or predictions else spec.paired_test
    if method == "delong" and spec.paired_test != "delong":
        raise TablegenInputError.naming(Argument("method", "delong"), f" compares AUCs; for {spec.name} use ",
                                        Argument("method", "permutation"))
    if method == "permutation" and spec.k is not None:  # the count at a cut-off k
        raise TablegenInputError.naming(
            Argument("method", "permutation"), f" swaps the models' values item by item, which ties items across "
            f"the cut-off k, where {spec.name} is not defined; compare {spec.name} with ",
            Argument("method", "mcnemar"), " on the top-k predictions (threshold at the k-th score) instead")
    return method


def right_at(labels: np.ndarray, scores: np.ndarray, threshold: float) -> np.ndarray:
    """Which items a model classifies right when an item is predicted positive at score >= ``threshold``.

    Examples
    --------
    >>> right_at(np.array([1, 0, 1]), np.array([0.9, 0.6, 0.2]), 0.5).tolist()
    [True, False, False]
    """
    return (scores >= threshold) == (labels == 1)


def mcnemar_threshold(threshold, *models: np.ndarray) -> float:
    """McNemar's threshold: as given (a finite number), else 0.5 where every model gives 0/1 predictions."""
    if threshold is None:
        if not all(np.isin(s, (0.0, 1.0)).all() for s in models):
            raise TablegenInputError.naming(Argument("threshold"), " is needed for McNemar's test on scores: "
                                            "an item is predicted positive when its score is >= threshold (or "
                                            "give 0/1 predictions)")
        return 0.5
    if isinstance(threshold, (bool, np.bool_)) or not isinstance(threshold, numbers.Real) \
            or not math.isfinite(float(threshold)):
        raise TablegenInputError.naming(Argument("threshold"), f" must be a finite number, got {threshold!r}")
    return float(threshold)


def checked_metric(metric) -> Metric:
    """The registry entry of ``metric`` if it is a metric computable from scores, else an error naming
    ``metric``.

    Examples
    --------
    >>> checked_metric("AUC").name
    'auc'
    """
    from tablegen.compute.metrics import get_metric
    from tablegen.compute.metrics_from_scores import check_score_metric

    try:
        return get_metric(check_score_metric(metric))
    except TablegenInputError as error:
        raise TablegenInputError.naming(Argument("metric"), str(error).removeprefix("metrics")) from None
