"""Critical values of K-class metrics for balanced designs, exactly: what the multi-class tables hold.

A balanced design has n_per_class items of each of the K classes, and the random classifier shares the
balanced predicted counts (m_k = n_k = n_per_class: the model predicts every class equally often, and its
predictions are permuted uniformly over the items, :mod:`tablegen.compute.exact.multiclass`).  With X the hits
and n = K n_per_class the items, every metric is then an increasing affine function of X:

* accuracy X / n;
* balanced accuracy, the mean over the classes of their recall TP_k / n_k = TP_k / n_per_class, is
  sum_k TP_k / (K n_per_class) = X / n: equal to accuracy;
* macro-F1, the mean over the classes of F1_k = 2 TP_k / (n_k + m_k) = 2 TP_k / (2 n_per_class), is X / n too;
* Cohen's kappa, with chance agreement p_e = sum_k n_k m_k / n^2 = 1 / K, is (X / n - 1 / K) / (1 - 1 / K).

So one exact law (:class:`~tablegen.compute.exact.multiclass.AccuracyNull`) answers all four, with the same
p-values; only the scale differs.  Where the design is not balanced, balanced accuracy and macro-F1 are not
functions of X and :func:`tablegen.multiclass_test` answers them by Monte Carlo.

The critical value follows the convention of :func:`tablegen.critical_value`: the value to *exceed*, the
largest attainable value whose best-of-C p-value 1 - Pr(X < x)**C is above alpha (the metric's maximum where
no attainable value is significant).  The attainable hits of a balanced design are every x in 0..n except
n - 1 for K >= 3, and those of the parity of n for K = 2 (:func:`attainable_hits_below`).
"""

from __future__ import annotations

import functools
import math

from tablegen.compute.exact.multiclass import AccuracyNull, accuracy_null, accuracy_seconds
from tablegen.errors import Argument, TablegenInputError

__all__ = ["BALANCED_METRICS", "attainable_hits_below", "balanced_critical_hits", "balanced_null", "balanced_p_value",
           "balanced_seconds", "check_balanced_metric", "check_design", "hits_from_value", "value_from_hits"]

#: The metrics a balanced design's table holds: every one an increasing affine function of the hits.
BALANCED_METRICS = ("accuracy", "kappa", "balanced_accuracy", "macro_f1")
#: The largest K a table or a lookup takes (the classes' counts are Python ints; beyond it a design is not a
#: table's business).
MAX_CLASSES = 10_000
#: Values within this of an attainable value count as it (as :data:`tablegen.compute.exact.nulls.SNAP_TOLERANCE`).
VALUE_TOLERANCE = 1e-9


def check_design(K, n_per_class) -> tuple[int, int]:
    """``(K, n_per_class)`` as ints if they describe a balanced K-class design; else an error naming the argument.

    Examples
    --------
    >>> check_design(5, 40)
    (5, 40)
    >>> try:
    ...     check_design(1, 40)
    ... except TablegenInputError as error:
    ...     print(error)
    K must be an integer in [2, 10000] (the number of classes), got 1
    """
    for name, value, low, high, what in (("K", K, 2, MAX_CLASSES, "the number of classes"),
                                         ("n_per_class", n_per_class, 1, 10**9, "items of each class")):
        if isinstance(value, bool) or not isinstance(value, int) and not hasattr(value, "__index__"):
            raise TablegenInputError.naming(Argument(name), f" must be an integer in [{low}, {high}] ({what}), got "
                                            f"{value!r}")
        if not low <= int(value) <= high:
            raise TablegenInputError.naming(Argument(name), f" must be an integer in [{low}, {high}] ({what}), got "
                                            f"{int(value)}")
    return int(K), int(n_per_class)


def check_balanced_metric(metric) -> str:
    """``metric`` in lower case, if it is one of :data:`BALANCED_METRICS`; else an error naming ``metric``.

    Examples
    --------
    >>> check_balanced_metric("Macro_F1")
    'macro_f1'
    """
    if not isinstance(metric, str) or metric.lower() not in BALANCED_METRICS:
        raise TablegenInputError.naming(Argument("metric"), f" must be one of {', '.join(BALANCED_METRICS)} for a "
                                        f"K-class design (K, n_per_class), got {metric!r}")
    return metric.lower()


@functools.lru_cache(maxsize=2)  # a lookup's critical value then p-value; a null of 20,000 items holds ~100 MB
def balanced_null(K: int, n_per_class: int) -> AccuracyNull:
    """The exact law of the hits for K classes of ``n_per_class`` items, predicted counts balanced too (cached).

    Examples
    --------
    >>> balanced_null(3, 5).critical_hits(C=1, alpha=0.05)
    9
    """
    K, n_per_class = check_design(K, n_per_class)
    return accuracy_null([n_per_class] * K, [n_per_class] * K)


def balanced_seconds(K: int, n_per_class: int) -> float:
    """Estimated single-core seconds of one cell's exact law and critical values
    (:func:`~tablegen.compute.exact.multiclass.accuracy_seconds`, which leaves out the early stop of the tails).
    Measured with four Cs and two alphas (AMD EPYC, one core, python-flint products): 0.97-2.2 times it at
    n_per_class 500 and 1,000 (K = 20, n_per_class = 1,000: 52 s, estimated 38 s).

    Examples
    --------
    >>> balanced_seconds(5, 40) < 0.1
    True
    """
    K, n_per_class = check_design(K, n_per_class)
    return accuracy_seconds([n_per_class] * K, [n_per_class] * K)


def attainable_hits_below(hits: int, K: int, n_per_class: int) -> int:
    """The largest attainable number of hits below ``hits`` (``hits`` >= 1) of a balanced design.

    The items missed, m = n - x, carry labels of other classes only, and the labels among them have the same
    counts m_k as their classes (hits keep each label's count): such an arrangement exists iff every m_k <= m / 2,
    and some (m_k <= n_per_class) has that iff m = 0, or m >= 2 and (K >= 3 or m even).

    Examples
    --------
    >>> attainable_hits_below(6, 3, 2), attainable_hits_below(4, 3, 2)  # 5 of 6 hits cannot be
    (4, 3)
    >>> attainable_hits_below(6, 2, 3), attainable_hits_below(4, 2, 3)  # K = 2: hits of the parity of n
    (4, 2)
    """
    n = K * n_per_class
    x = min(hits, n + 1) - 1
    while x >= 0:
        missed = n - x
        if missed == 0 or (missed >= 2 and (K >= 3 or missed % 2 == 0)):
            return x
        x -= 1
    raise ValueError(f"no attainable number of hits below {hits}")


def value_from_hits(metric: str, hits: int, K: int, n_per_class: int) -> float:
    """The metric's value at ``hits`` of a balanced design (accuracy, balanced accuracy and macro-F1: hits / n;
    kappa: (K hits - n) / (n (K - 1))), each rounded once from the exact rational.

    Examples
    --------
    >>> value_from_hits("accuracy", 9, 3, 5), value_from_hits("kappa", 9, 3, 5)
    (0.6, 0.4)
    """
    n = K * n_per_class
    if check_balanced_metric(metric) == "kappa":
        return (K * hits - n) / (n * (K - 1))
    return hits / n


def hits_from_value(metric: str, value, K: int, n_per_class: int, name: str = "score") -> int:
    """The hits at which the metric takes ``value`` (within :data:`VALUE_TOLERANCE`), if it is an attainable value
    of the design; else an error naming ``name``.

    Examples
    --------
    >>> hits_from_value("kappa", 0.4, 3, 5)
    9
    """
    metric = check_balanced_metric(metric)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise TablegenInputError.naming(Argument(name), f" must be a finite number (a value of {metric}), got "
                                        f"{value!r}")
    n = K * n_per_class
    exact = (value * n * (K - 1) + n) / K if metric == "kappa" else value * n
    hits = round(exact)
    attainable = 0 <= hits <= n and (hits == n or attainable_hits_below(hits + 1, K, n_per_class) == hits)
    if not attainable or abs(value_from_hits(metric, hits, K, n_per_class) - value) > VALUE_TOLERANCE:
        raise TablegenInputError.naming(
            Argument(name), f" must be a value {metric} can take with K = {K} classes of {n_per_class} items "
            f"(hits / n for n = {n}, kappa affine in it; n - 1 hits cannot occur), got {value!r}")
    return hits


def balanced_critical_hits(K: int, n_per_class: int, C: int, alpha: float) -> int:
    """The hits to exceed: the largest attainable x whose best-of-C p-value is above ``alpha`` (n where none is
    significant); a model is significant iff its hits exceed it.

    Examples
    --------
    >>> balanced_critical_hits(3, 5, C=1, alpha=0.05)  # 9 hits are significant, 8 are not
    8
    """
    null = balanced_null(K, n_per_class)
    smallest = null.critical_hits(C, alpha)
    return null.n if smallest is None else attainable_hits_below(smallest, K, n_per_class)


def balanced_p_value(K: int, n_per_class: int, hits: int, C: int) -> tuple[float, bool]:
    """The best-of-C p-value of ``hits`` and whether it is only an upper bound
    (:meth:`~tablegen.compute.exact.multiclass.AccuracyNull.p_value`).

    Examples
    --------
    >>> round(balanced_p_value(3, 5, 9, C=1)[0], 6)
    0.036242
    """
    return balanced_null(K, n_per_class).p_value(hits, C)
