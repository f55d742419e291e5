"""Exact null distributions, critical values and p-values (DESIGN §1, "Exact values").

=========================  ==========================================  ============================
metric                     method                                      cost per cell
=========================  ==========================================  ============================
best_accuracy              reflection principle, running product       O(P)
tp_at_k                    hypergeometric (scipy)                      O(min(k, P))
best_f1                    half-plane lattice programme + bisection    O(P N log(P N))
best_balanced_accuracy     half-plane lattice programme + bisection    O(P N log(P N))
auc                        stable Mann–Whitney recursion               O(P^2 N^2 / 4), O(P N^2/2) memory
average_precision          none known; Monte Carlo only
=========================  ==========================================  ============================

Numerical error: every probability is a sum or product of non-negative terms, relative error of
order (P + N) * 2**-53 (tests hold them to 1e-11 relative against exact rationals).
"""

from __future__ import annotations

from tablegen.exact.auc import auc_null, auc_null_from_pmf, auc_pmf_sweep
from tablegen.exact.closed_form import best_accuracy_null, tp_at_k_null
from tablegen.exact.lattice import best_balanced_accuracy_null, best_f1_null
from tablegen.exact.nulls import critical_index, score_index
from tablegen.metrics import get_metric
from tablegen.stats import p_value_from_tail, upper_tail_probability

__all__ = [
    "auc_pmf_sweep",
    "auc_null_from_pmf",
    "null_distribution",
    "exact_critical_value",
    "exact_tail_ge",
    "exact_p_value",
    "has_exact",
]

_BUILDERS = {
    "auc": auc_null,
    "best_accuracy": best_accuracy_null,
    "best_f1": best_f1_null,
    "best_balanced_accuracy": best_balanced_accuracy_null,
}


def has_exact(metric: str) -> bool:
    """Whether ``metric`` has an exact null distribution."""
    return get_metric(metric).has_exact


def null_distribution(metric: str, P: int, N: int):
    """Exact null distribution object of ``metric`` at (P, N) (see :mod:`tablegen.exact.nulls`).

    Raises
    ------
    KeyError
        Unknown metric.  ``ValueError`` if the metric has no exact routine.
    """
    spec = get_metric(metric)
    if spec.k is not None:
        return tp_at_k_null(P, N, spec.k)
    if metric not in _BUILDERS:
        raise ValueError(f"metric {metric!r} has no exact null distribution; use the Monte Carlo")
    return _BUILDERS[metric](P, N)


def exact_critical_value(metric: str, P: int, N: int, C=10, alpha=0.01, null=None) -> float:
    """Exact m* = smallest x in the support with F(x) >= (1 - alpha)**(1/C).

    Examples
    --------
    >>> exact_critical_value("best_accuracy", 20, 20, C=10, alpha=0.01)
    0.775
    """
    null = null_distribution(metric, P, N) if null is None else null
    tail = float(upper_tail_probability(C, alpha))
    return float(null.values[critical_index(null, tail)])


def exact_tail_ge(metric: str, P: int, N: int, score: float, null=None) -> float:
    """Pr(X >= score) for one random ranking, X the metric."""
    null = null_distribution(metric, P, N) if null is None else null
    return null.tail_ge_at(score_index(null, score))


def exact_p_value(metric: str, score: float, P: int, N: int, C=10, null=None) -> float:
    """Exact p-value 1 - F(score-)**C of a best-of-C score against random rankings."""
    return float(p_value_from_tail(exact_tail_ge(metric, P, N, score, null=null), C))
