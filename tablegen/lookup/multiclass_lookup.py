"""Critical values and p-values of K-class metrics for balanced designs: what :func:`tablegen.critical_value` and
:func:`tablegen.p_value` answer when given ``K`` and ``n_per_class`` instead of P and N.

The design: K classes of ``n_per_class`` items each, and random classifiers that share the balanced predicted
counts (each class predicted ``n_per_class`` times; the predictions permuted uniformly over the items).  Accuracy,
balanced accuracy and macro-F1 are then all hits / n, and kappa is affine in the hits
(:mod:`tablegen.compute.exact.balanced_multiclass`), so every answer is exact.  Where does it come from:

1. **exact** when its estimated cost is within :data:`~tablegen.lookup.api.LOOKUP_SECONDS` (quicker than opening
   a table);
2. else the **table** given (``table=``, a multi-class store written by ``tablegen run`` of a ``kind: multiclass``
   config) when it holds the cell, C and alpha (its values are exact too);
3. else **exact**, within the time limit (``TABLEGEN_TIME_LIMIT``; beyond it, refused with the estimate).

``method="exact"`` or ``"table"`` forces one source; nothing is simulated (``R`` and ``seed`` are refused).
A significance test (:func:`multiclass_significance_test`) takes its critical value and p-value from one exact
law: a table would save nothing, since the p-value needs the law anyway.
"""

from __future__ import annotations

import os

from tablegen.compute.exact.balanced_multiclass import (
    balanced_critical_hits,
    balanced_p_value,
    balanced_seconds,
    check_balanced_metric,
    check_design,
    hits_from_value,
    value_from_hits,
)
from tablegen.compute.limits import check_time
from tablegen.compute.validation import check_alpha, check_competitors, check_method
from tablegen.errors import Argument, ResourceLimitError, TablegenInputError
from tablegen.lookup.answers import Answer, SignificanceResult, verdict

__all__ = ["multiclass_critical_value", "multiclass_p_value", "multiclass_significance_test"]

#: An exact answer estimated within this many seconds is computed rather than read from a table.
QUICK_SECONDS = 10.0


def check_not_mixed(P, N, K, n_per_class) -> None:
    """Refuse a question that mixes a binary test set (P, N) with a K-class design, or gives half a design.

    Examples
    --------
    >>> check_not_mixed(None, None, 5, 40)
    >>> try:
    ...     check_not_mixed(100, None, 5, 40)
    ... except TablegenInputError as error:
    ...     print(str(error)[:59])
    P describes a binary test set (positives); a K-class design
    """
    for name, value in (("P", P), ("N", N)):
        if value is not None:
            raise TablegenInputError.naming(
                Argument(name), f" describes a binary test set ({'positives' if name == 'P' else 'negatives'}); a "
                "K-class design is given by ", Argument("K"), " and ", Argument("n_per_class"), ": give one or the "
                f"other, got {name} = {value!r} with K = {K!r}, n_per_class = {n_per_class!r}")
    for name, value in (("K", K), ("n_per_class", n_per_class)):
        if value is None:
            raise TablegenInputError.naming(Argument(name), " is required with ",
                                            Argument("n_per_class" if name == "K" else "K"),
                                            ": a balanced K-class design is K classes of n_per_class items each")


def _question(metric, K, n_per_class, C, method, R, seed, table, P, N):
    """The checked common arguments: (metric, K, n_per_class, C, method, table)."""
    check_not_mixed(P, N, K, n_per_class)
    metric = check_balanced_metric(metric)
    K, n_per_class = check_design(K, n_per_class)
    if C is None:
        raise TablegenInputError.naming(
            Argument("C"), " is required: the number of classifiers compared on this test set, counting every "
            "model tried (discarded ones too); the winner is judged against the best of C random classifiers")
    C = check_competitors(C)
    method = check_method(method)
    if method == "simulate":
        raise TablegenInputError.naming(Argument("method", "simulate"), ": a balanced K-class design has an exact "
                                        "law, nothing is simulated; use ", Argument("method", "auto"), " or ",
                                        Argument("method", "exact"))
    for name, value in (("R", R), ("seed", seed)):
        if value is not None:
            raise TablegenInputError.naming(Argument(name), " applies only to simulated answers; a balanced K-class "
                                            "design is answered exactly (leave it out)")
    return metric, K, n_per_class, C, method, _check_table(table)


def _check_table(table):
    """``table`` if it is None, a store path or a :class:`~tablegen.lookup.multiclass_table.MulticlassTable`."""
    if table is None or isinstance(table, (str, os.PathLike)):
        return table
    from tablegen.lookup.multiclass_table import MulticlassTable

    if isinstance(table, MulticlassTable):
        return table
    raise TablegenInputError.naming(Argument("table"), f" must be a multi-class table or its store path for a "
                                    f"K-class question, got {type(table).__name__}")


def _exact_allowed(K: int, n_per_class: int, method: str) -> None:
    """Refuse an exact answer beyond the time limit, naming the way out."""
    try:
        check_time(balanced_seconds(K, n_per_class), f"the exact K-class law at K = {K}, n_per_class = "
                   f"{n_per_class:,}", "")
    except ResourceLimitError as error:
        raise ResourceLimitError.naming(
            Argument("method", method), ": ", str(error), "use a multi-class table that holds the cell (",
            Argument("table"), "; `tablegen run` of a kind: multiclass config writes one), or raise "
            "TABLEGEN_TIME_LIMIT") from None


def multiclass_critical_value(metric: str, K: int, n_per_class: int, *, C: int | None, alpha: float,
                              method: str = "auto", R=None, seed=None, table=None, P=None, N=None) -> Answer:
    """The critical value (the value to exceed) of a K-class metric for the best of C random classifiers,
    balanced design: the answer of ``tablegen.critical_value(metric, K=..., n_per_class=..., C=..., alpha=...)``.

    Parameters are those of :func:`tablegen.critical_value`, with ``K`` and ``n_per_class`` in place of P and N
    (giving P or N too is refused).  A model is significant iff its value exceeds the answer; where no attainable
    value is significant at this C and alpha the answer is the metric's maximum (1), which nothing exceeds.

    Examples
    --------
    >>> answer = multiclass_critical_value("accuracy", 5, 40, C=100, alpha=0.05)
    >>> answer.value, answer.method
    (0.3, 'exact')
    >>> multiclass_critical_value("macro_f1", 5, 40, C=100, alpha=0.05).value  # = accuracy on a balanced design
    0.3
    """
    metric, K, n_per_class, C, method, table = _question(metric, K, n_per_class, C, method, R, seed, table, P, N)
    alpha = _checked_alpha(alpha)
    opened = None if table is None else _open(table)
    quick = method == "auto" and balanced_seconds(K, n_per_class) <= QUICK_SECONDS
    if opened is not None and method != "exact" and not quick:
        hits = opened.critical_hits(K, n_per_class, C, alpha, required=method == "table")
        if hits is not None:
            value = value_from_hits(metric, hits, K, n_per_class)
            return Answer(value, value, value, "exact", source=opened.source)
    if method == "table":
        raise TablegenInputError.naming(Argument("method", "table"), ": no multi-class table was given (",
                                        Argument("table"), "); use ", Argument("method", "auto"))
    _exact_allowed(K, n_per_class, method)
    value = value_from_hits(metric, balanced_critical_hits(K, n_per_class, C, alpha), K, n_per_class)
    return Answer(value, value, value, "exact")


def multiclass_p_value(metric: str, K: int, n_per_class: int, *, C: int | None, score, method: str = "auto",
                       R=None, seed=None, table=None, P=None, N=None) -> Answer:
    """The best-of-C p-value 1 - Pr(X < x)**C of a K-class model's score, balanced design (exact): the answer of
    ``tablegen.p_value(metric, K=..., n_per_class=..., C=..., score=...)``.

    ``score`` must be a value the metric can take (hits / n, kappa affine in it; within 1e-9).  Below 1e-300 the
    single-classifier tail is reported as a bound (``bound="<"``), never 0.  Tables hold critical values only, so
    ``method="table"`` is refused.

    Examples
    --------
    >>> answer = multiclass_p_value("accuracy", 3, 5, C=1, score=0.6)
    >>> round(answer.value, 6), answer.method
    (0.036242, 'exact')
    """
    metric, K, n_per_class, C, method, table = _question(metric, K, n_per_class, C, method, R, seed, table, P, N)
    if table is not None:
        _open(table)  # a store the caller named is checked, as for a critical value
    if method == "table":
        raise TablegenInputError.naming(Argument("method", "table"), ": multi-class tables hold critical values, "
                                        "not p-values; use ", Argument("method", "auto"), " (exact)")
    hits = hits_from_value(metric, score, K, n_per_class)
    _exact_allowed(K, n_per_class, method)
    p, bounded = balanced_p_value(K, n_per_class, hits, C)
    return Answer(p, p, p, "exact", bound="<" if bounded else "")


def multiclass_significance_test(metric: str, K: int, n_per_class: int, *, C: int | None, alpha: float, score,
                                 method: str = "auto", R=None, seed=None, table=None, P=None, N=None
                                 ) -> SignificanceResult:
    """Is a K-class model's ``score`` significant against the best of C random classifiers, balanced design: the
    answer of ``tablegen.significance_test(metric, K=..., n_per_class=..., C=..., alpha=..., score=...)``.

    The critical value and the p-value come from one exact law, built once
    (:func:`~tablegen.compute.exact.balanced_multiclass.balanced_null`); the verdict is score > critical value, which
    here is p-value <= alpha.  A
    ``table`` given is checked (as for a p-value) but not read, and ``method="table"`` is refused: tables hold
    critical values, not p-values.  Parameters are those of :func:`multiclass_critical_value` and
    :func:`multiclass_p_value`.

    Examples
    --------
    >>> result = multiclass_significance_test("accuracy", 3, 5, C=1, alpha=0.05, score=0.6)
    >>> result.significant, result.critical_value.value, round(result.p_value.value, 6), result.method
    (True, 0.5333333333333333, 0.036242, 'exact')
    """
    metric, K, n_per_class, C, method, table = _question(metric, K, n_per_class, C, method, R, seed, table, P, N)
    alpha = _checked_alpha(alpha)
    if table is not None:
        _open(table)  # a store the caller named is checked, as for a critical value
    if method == "table":
        raise TablegenInputError.naming(Argument("method", "table"), ": multi-class tables hold critical values, "
                                        "not p-values, and a significance test gives both; use ",
                                        Argument("method", "auto"), " (exact)")
    hits = hits_from_value(metric, score, K, n_per_class)
    _exact_allowed(K, n_per_class, method)
    critical = value_from_hits(metric, balanced_critical_hits(K, n_per_class, C, alpha), K, n_per_class)
    p, bounded = balanced_p_value(K, n_per_class, hits, C)  # the law the critical value was read from (cached)
    return verdict(metric, float(score), None, None, C, alpha, Answer(critical, critical, critical, "exact"),
                   Answer(p, p, p, "exact", bound="<" if bounded else ""), K=K, n_per_class=n_per_class)


def _checked_alpha(alpha) -> float:
    """``alpha`` checked: required (a K-class question has no table default) and in (0, 1)."""
    if alpha is None:
        raise TablegenInputError.naming(Argument("alpha"), " is required: the significance level, a number in (0, 1) "
                                        "such as 0.05, got None")
    return check_alpha("alpha", alpha)


def _open(table):
    """The multi-class table ``table`` names (a MulticlassTable, or a store path); refused naming ``table``."""
    from tablegen.lookup.multiclass_table import MulticlassTable, open_multiclass_table

    return table if isinstance(table, MulticlassTable) else open_multiclass_table(table, argument="table")
