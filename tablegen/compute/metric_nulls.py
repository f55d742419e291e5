"""A metric's exact answers, the metric named by its registry name: its null, the critical value, tail and
p-value of a best-of-C score (the registry, :mod:`tablegen.compute.metrics`, holds the entries; these ask them).
"""

from __future__ import annotations

from tablegen.compute.metrics import get_metric


def has_exact(metric: str) -> bool:
    """Whether ``metric`` has an exact null distribution."""
    return get_metric(metric).has_exact


def null_distribution(metric: str, P: int, N: int):
    """Exact null distribution object of ``metric`` at (P, N) (:meth:`Metric.exact_null`).

    Raises
    ------
    KeyError
        Unknown metric.  ``ValueError`` if the metric has no exact routine.
    """
    return get_metric(metric).exact_null(P, N)


def tabulated_null(metric: str, P: int, N: int):
    """The whole exact null at (P, N): every candidate value with Pr(X >= value) (``values``, ``tail_ge_at``).

    For pictures of the distribution and small cells: AUC comes from the recursion (P^2 N^2 / 4
    multiply-adds) whatever :func:`null_distribution` would pick, the lattice metrics list all
    P (N + 1) candidates.

    Examples
    --------
    >>> null = tabulated_null("auc", 2, 2)
    >>> null.values.tolist(), [round(float(p), 4) for p in null.tail_ge]
    ([0.0, 0.25, 0.5, 0.75, 1.0], [1.0, 0.8333, 0.6667, 0.3333, 0.1667])
    """
    return get_metric(metric).tabulated_null(P, N)


def exact_cost(metric: str, P: int, N: int) -> tuple[float, float]:
    """Estimated (single-core seconds, peak bytes) of one exact critical value or p-value at (P, N).

    ``(inf, inf)`` for a metric without an exact routine.

    Examples
    --------
    >>> seconds, memory = exact_cost("auc", 1000, 1000)
    >>> seconds < 1, memory < 1e8
    (True, True)
    """
    return get_metric(metric).exact_cost(P, N)


def exact_critical_value(metric: str, P: int, N: int, C: int, alpha: float = 0.01, null=None) -> float:
    """Exact m* = smallest x in the support with F(x) >= (1 - alpha)**(1/C).

    Examples
    --------
    >>> exact_critical_value("best_accuracy", 20, 20, C=10, alpha=0.01)
    0.775
    """
    from tablegen.compute.exact import null_critical_value
    from tablegen.compute.stats import upper_tail_probability

    null = null_distribution(metric, P, N) if null is None else null
    return null_critical_value(null, float(upper_tail_probability(C, alpha)))


def exact_tail_ge(metric: str, P: int, N: int, score: float, null=None) -> float:
    """Pr(X >= score) for one random ranking, X the metric."""
    from tablegen.compute.exact import null_tail_ge

    null = null_distribution(metric, P, N) if null is None else null
    return null_tail_ge(null, score)


def exact_p_value(metric: str, score: float, P: int, N: int, C: int, null=None) -> float:
    """Exact p-value 1 - F(score-)**C of a best-of-C score against random rankings."""
    from tablegen.compute.stats import p_value_from_tail

    return float(p_value_from_tail(exact_tail_ge(metric, P, N, score, null=null), C))
