"""Is a K-class classifier's accuracy (or Cohen's kappa) better than the best of C random classifiers?

The random classifier keeps the tested model's predictions and permutes them uniformly over the items: the
true class counts n_k and the predicted counts m_k stay fixed (the conditional null, as the tie-conditional
AUC null is for scores).  Its hits X follow the exact law of :mod:`tablegen.compute.exact.multiclass`; the
best of C independent random classifiers with the same predicted counts beats x with probability
1 - Pr(X < x)**C, the p-value.  Kappa is an increasing affine function of the hits when both margins are
fixed, so it has the same p-value and its critical value is the accuracy's, transformed.
``docs/explanation/multiclass-accuracy.md`` proves the law and the level.
"""

from __future__ import annotations

import logging
import numbers
from collections.abc import Hashable, Iterable
from dataclasses import dataclass

import numpy as np

from tablegen.compute.exact.multiclass import (
    accuracy_null,
    accuracy_seconds,
    chance_agreement,
    kappa_from_hits,
)
from tablegen.compute.limits import check_time
from tablegen.compute.stats import upper_tail_probability
from tablegen.compute.validation import check_alpha, check_competitors
from tablegen.errors import Argument, TablegenInputError

logger = logging.getLogger(__name__)

#: The metrics :func:`multiclass_test` answers exactly.
METRICS = ("accuracy", "kappa")


@dataclass(frozen=True)
class MulticlassTest:
    """A K-class model's accuracy or kappa against the best of C random classifiers (exact).

    Attributes
    ----------
    metric : str
        ``"accuracy"`` or ``"kappa"``.
    value : float
        The model's accuracy (hits / n) or Cohen's kappa.
    p_value : float
        1 - Pr(X < hits)**C under the permutation null; where ``p_bounded`` it is only an upper bound.
    p_bounded : bool
        True where the single-classifier tail fell below 1e-300 and ``p_value`` is the bound at that floor.
    critical_value : float or None
        The smallest value of the metric significant at ``alpha`` for this C (the value is significant iff it
        reaches it); None where no attainable value is (too few items for this C and alpha).
    significant : bool
        ``value >= critical_value``, equivalently p-value <= alpha.
    method : str
        ``"exact"`` (integer arithmetic; every probability the correctly rounded double of the exact rational).
    C, alpha : the question.
    n : int
        Items.
    hits, critical_hits : int, int or None
        The model's hits and the smallest significant number of hits.
    classes : tuple
        The classes, in the order of the counts (sorted where the labels sort, else as first seen).
    true_counts, predicted_counts : tuple of int
        n_k and m_k per class; a class only predicted has n_k = 0 (it is never a hit).
    expected_value : float
        The metric's expected value under the null (accuracy sum_k n_k m_k / n^2; kappa 0).
    tail_probability : float
        t = 1 - (1 - alpha)**(1/C): the single-classifier tail the critical value keeps.

    Examples
    --------
    >>> result = multiclass_test(["a", "a", "b", "b", "c", "c"], ["a", "a", "b", "c", "c", "b"], C=1)
    >>> result.hits, result.critical_hits, result.significant, result.to_dict()["predicted_counts"]
    (4, 5, False, [2, 2, 2])
    """

    metric: str
    value: float
    p_value: float
    p_bounded: bool
    critical_value: float | None
    significant: bool
    method: str
    C: int
    alpha: float
    n: int
    hits: int
    critical_hits: int | None
    classes: tuple
    true_counts: tuple
    predicted_counts: tuple
    expected_value: float
    tail_probability: float

    def sentence(self) -> str:
        """One plain sentence with the verdict.

        Examples
        --------
        >>> labels = ["cat"] * 4 + ["dog"] * 4 + ["fox"] * 4
        >>> predicted = ["cat"] * 4 + ["dog"] * 3 + ["fox"] * 5
        >>> print(multiclass_test(labels, predicted, C=10).sentence())  # doctest: +NORMALIZE_WHITESPACE
        accuracy = 0.916667 (11 of 12 hits, 3 classes) is significant at alpha = 0.05 against the best of 10
        random classifiers with the same predicted counts: p = 0.00144 (exact), critical value 0.833333.
        """
        who = ("a random classifier" if self.C == 1
               else f"the best of {self.C:,} random classifiers")
        p_text = f"p {'< ' if self.p_bounded else '= '}{self.p_value:.3g}"
        if self.critical_value is None:
            critical = "no attainable value is significant at this C and alpha"
        else:
            critical = f"critical value {self.critical_value:.6g}"
        verdict = "is significant" if self.significant else "is not significant"
        return (f"{self.metric} = {self.value:.6g} ({self.hits:,} of {self.n:,} hits, {len(self.classes)} classes) "
                f"{verdict} at alpha = {self.alpha:g} against {who} with the same predicted counts: "
                f"{p_text} ({self.method}), {critical}.")

    def to_dict(self) -> dict:
        """Plain Python values, for JSON (classes as their ``str``)."""
        return {
            "metric": self.metric, "value": self.value, "p_value": self.p_value,
            "p_bound": "<" if self.p_bounded else "", "critical_value": self.critical_value,
            "significant": self.significant, "method": self.method, "C": self.C, "alpha": self.alpha,
            "n": self.n, "hits": self.hits, "critical_hits": self.critical_hits,
            "classes": [str(c) for c in self.classes], "true_counts": list(self.true_counts),
            "predicted_counts": list(self.predicted_counts), "expected_value": self.expected_value,
            "tail_probability": self.tail_probability,
        }


def multiclass_test(labels: Iterable[Hashable], predicted: Iterable[Hashable], metric: str = "accuracy", C: int = 1,
                    alpha: float = 0.05) -> MulticlassTest:
    """Test a K-class model's accuracy or Cohen's kappa against the best of C random classifiers, exactly.

    The random classifiers share the model's predicted counts: each is the model's predictions permuted
    uniformly over the items (independent across the C).  The p-value 1 - Pr(X < x)**C comes from the exact
    law of the hits X (:mod:`tablegen.compute.exact.multiclass`); at C = 1 it is the permutation test's.

    Parameters
    ----------
    labels : sequence of hashable values
        The true class of each item (strings, integers, ...; at least two classes).  Values that compare
        equal are one class (``1``, ``1.0`` and ``True`` are the same class, as in a Python dict).
    predicted : sequence of hashable values
        The model's predicted class of each item, the same length.  A predicted class that no item has is
        allowed: it is counted as a class with no items, so its predictions are never hits (they count
        against accuracy, and kappa's chance agreement gets nothing from them).
    metric : {"accuracy", "kappa"}
        Accuracy (micro-F1 for single-label predictions) or Cohen's kappa; the same p-value.
    C : int
        The number of random classifiers the model is the best of (>= 1).
    alpha : float
        The level, in (0, 1); default 0.05, the level of the multi-class report (``evaluate``).

    Returns
    -------
    MulticlassTest

    Raises
    ------
    TablegenInputError
        Naming the argument: labels or predictions empty, of different lengths, not one-dimensional, with a
        missing value (None or NaN) or an unhashable one, or with a single true class; an unknown metric; C
        or alpha out of range.
    ResourceLimitError
        Where the exact law would take longer than the time limit (``TABLEGEN_TIME_LIMIT``).

    Examples
    --------
    >>> result = multiclass_test([0, 0, 1, 1, 2, 2, 2, 2], [0, 0, 1, 2, 2, 2, 2, 1])
    >>> result.value, result.hits, result.p_value, result.critical_value, result.significant
    (0.75, 6, 0.05, 0.75, True)
    >>> result.p_value == 0.05  # Pr(X >= 6) = 1/20 exactly: p <= alpha, significant
    True
    >>> kappa = multiclass_test([0, 0, 1, 1, 2, 2, 2, 2], [0, 0, 1, 2, 2, 2, 2, 1], metric="kappa")
    >>> round(kappa.value, 4), kappa.p_value == result.p_value
    (0.6, True)
    """
    metric = _check_metric(metric)
    C = check_competitors(C)
    alpha = check_alpha("alpha", alpha)
    classes, true_codes, predicted_codes = _encode(labels, predicted)
    K = len(classes)
    true_counts = tuple(int(c) for c in np.bincount(true_codes, minlength=K))
    predicted_counts = tuple(int(c) for c in np.bincount(predicted_codes, minlength=K))
    present = [classes[k] for k in range(K) if true_counts[k] > 0]
    if len(present) < 2:
        raise TablegenInputError.naming(
            Argument("labels"), f" has one class only ({present[0]!r}): a random classifier then scores 100% "
            "accuracy; at least two true classes are needed")
    check_time(accuracy_seconds(true_counts, predicted_counts),
               f"the exact multi-class null at n = {len(true_codes):,}, K = {K}",
               "use fewer items (a random subsample keeps the test valid) or raise TABLEGEN_TIME_LIMIT")
    null = accuracy_null(true_counts, predicted_counts)
    hits = int(np.count_nonzero(true_codes == predicted_codes))
    critical_hits = null.critical_hits(C, alpha)
    p_value, bounded = null.p_value(hits, C)
    logger.debug("multiclass_test: n=%d K=%d hits=%d critical=%s p=%g", null.n, K, hits, critical_hits, p_value)

    def as_metric(x: int) -> float:
        return x / null.n if metric == "accuracy" else kappa_from_hits(x, true_counts, predicted_counts)

    expected = float(chance_agreement(true_counts, predicted_counts)) if metric == "accuracy" else 0.0
    return MulticlassTest(
        metric=metric, value=as_metric(hits), p_value=p_value, p_bounded=bounded,
        critical_value=None if critical_hits is None else as_metric(critical_hits),
        significant=critical_hits is not None and hits >= critical_hits, method="exact", C=C, alpha=alpha,
        n=null.n, hits=hits, critical_hits=critical_hits, classes=classes, true_counts=true_counts,
        predicted_counts=predicted_counts, expected_value=expected,
        tail_probability=float(upper_tail_probability(C, alpha)))


def _check_metric(metric) -> str:
    if not isinstance(metric, str) or metric.lower() not in METRICS:
        raise TablegenInputError.naming(Argument("metric"), f" must be one of {', '.join(METRICS)} for the exact "
                                        f"multi-class test, got {metric!r}")
    return metric.lower()


def _encode(labels, predicted) -> tuple[tuple, np.ndarray, np.ndarray]:
    """The classes (union of both) and each item's class index in ``labels`` and in ``predicted``."""
    true_values = _values("labels", labels)
    predicted_values = _values("predicted", predicted)
    if len(true_values) != len(predicted_values):
        raise TablegenInputError.naming(
            Argument("labels"), " and ", Argument("predicted"),
            f" must have the same length (one entry per item), got {len(true_values):,} and "
            f"{len(predicted_values):,}")
    index: dict = {}
    for value in true_values:
        index.setdefault(value, len(index))
    for value in predicted_values:
        index.setdefault(value, len(index))
    classes = tuple(index)
    try:
        ordered = tuple(sorted(classes))
    except TypeError:  # labels of types that do not compare: first seen order
        ordered = classes
    order = {value: position for position, value in enumerate(ordered)}
    true_codes = np.fromiter((order[v] for v in true_values), dtype=np.int64, count=len(true_values))
    predicted_codes = np.fromiter((order[v] for v in predicted_values), dtype=np.int64, count=len(predicted_values))
    return ordered, true_codes, predicted_codes


def _values(name: str, values) -> list:
    """``values`` as a list of hashable, non-missing Python values (numpy scalars unwrapped)."""
    if isinstance(values, (str, bytes)) or values is None:
        raise TablegenInputError.naming(Argument(name), f" must be a sequence of class labels, got {values!r}")
    if isinstance(values, np.ndarray):
        if values.ndim != 1:
            raise TablegenInputError.naming(Argument(name), f" must be one-dimensional, got shape {values.shape}")
        items = values.tolist()
    else:
        try:
            items = list(values)
        except TypeError:
            raise TablegenInputError.naming(
                Argument(name), f" must be a sequence of class labels, got {type(values).__name__}") from None
    if not items:
        raise TablegenInputError.naming(Argument(name), " is empty: there are no items to test")
    for position, value in enumerate(items):
        where = Argument(name, python=f"{name}[{position}]", option=f"{name} (item {position})")
        try:
            hash(value)
        except TypeError:
            raise TablegenInputError.naming(
                where, f" is not a class label (unhashable {type(value).__name__})") from None
        if _missing(value):
            raise TablegenInputError.naming(where, f" is missing ({value!r}): every item needs a class")
    return items


def _missing(value) -> bool:
    """None, a float NaN or anything (pandas.NA, NaT) that is not equal to itself."""
    if value is None:
        return True
    if isinstance(value, numbers.Real) and not isinstance(value, numbers.Integral):
        return value != value
    try:
        return bool(value != value)
    except (TypeError, ValueError):
        return True
