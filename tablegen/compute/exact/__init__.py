"""Exact null distributions, critical values and p-values (DESIGN §1, "Exact values").

=========================  ==========================================  ===============================
metric                     method                                      cost per answer
=========================  ==========================================  ===============================
best_accuracy              reflection principle, running product       O(P)
tp_at_k, precision_at_k    hypergeometric (scipy)                      O(min(k, P))
best_f1                    half-plane lattice programme, bracketed     a few O(P N) programmes
best_balanced_accuracy     half-plane lattice programme, bracketed     a few O(P N) programmes
auc                        stable Mann–Whitney recursion (small) or    O(P^2 N^2 / 4), or
                           tilted Fourier inversion (any size)         O(min(P, N) x ~800)
average_precision          none known; Monte Carlo only
=========================  ==========================================  ===============================

Numerical error: the closed forms, the recursion and the lattice programmes sum or multiply
non-negative terms, relative error of order (P + N) * 2**-53; the tilted inversion is held to
:data:`tablegen.compute.exact.auc_fft.RELATIVE_ERROR_BOUND` (tests hold every routine to 1e-12 relative
against exact rationals and integer counts).

Every null object answers :func:`null_critical_value` and :func:`null_tail_ge`; tabulated ones
(closed forms, the recursion) also expose their whole support as ``values`` / ``tail_ge``.
"""

from __future__ import annotations

from tablegen.compute.exact.auc import auc_exact_cost, auc_null, auc_null_from_pmf, auc_pmf_sweep
from tablegen.compute.exact.closed_form import best_accuracy_null, tp_at_k_null
from tablegen.compute.exact.nulls import TabulatedNull, critical_index, score_index
from tablegen.compute.metrics import get_metric
from tablegen.compute.stats import p_value_from_tail, upper_tail_probability

__all__ = [
    "auc_pmf_sweep",
    "auc_null_from_pmf",
    "null_distribution",
    "tabulated_null",
    "null_critical_value",
    "null_tail_ge",
    "exact_cost",
    "exact_critical_value",
    "exact_tail_ge",
    "exact_p_value",
    "has_exact",
]

def _lazy(module: str, name: str):
    """``module.name``, imported on first call (the lattice routines load numba; a lookup of another
    metric, and ``import tablegen.compute.exact.nulls``, should not)."""
    def call(*args, **kwargs):
        import importlib

        return getattr(importlib.import_module(module), name)(*args, **kwargs)

    call.__name__ = name
    return call


best_f1_null = _lazy("tablegen.compute.exact.lattice", "best_f1_null")
best_balanced_accuracy_null = _lazy("tablegen.compute.exact.lattice", "best_balanced_accuracy_null")
lattice_cost = _lazy("tablegen.compute.exact.lattice", "lattice_cost")

_BUILDERS = {
    "auc": auc_null,
    "best_accuracy": best_accuracy_null,
    "best_f1": best_f1_null,
    "best_balanced_accuracy": best_balanced_accuracy_null,
}

_COSTS = {"auc": auc_exact_cost,
          "best_f1": lambda P, N: lattice_cost(P, N, metric="best_f1"),
          "best_balanced_accuracy": lambda P, N: lattice_cost(P, N, metric="best_balanced_accuracy")}
#: Seconds and bytes of a closed-form answer (O(P + N) at most): negligible at any size a user has.
_CLOSED_FORM_SECONDS = 1e-3


def has_exact(metric: str) -> bool:
    """Whether ``metric`` has an exact null distribution."""
    return get_metric(metric).has_exact


def null_distribution(metric: str, P: int, N: int):
    """Exact null distribution object of ``metric`` at (P, N) (see :mod:`tablegen.compute.exact.nulls`).

    Raises
    ------
    KeyError
        Unknown metric.  ``ValueError`` if the metric has no exact routine.
    """
    spec = get_metric(metric)
    if spec.k is not None:
        null = tp_at_k_null(P, N, spec.k)
        divisor = spec.count_divisor(P, N)
        return null if divisor == 1 else TabulatedNull(values=null.values / divisor, tail_ge=null.tail_ge)
    if metric not in _BUILDERS:
        raise ValueError(f"metric {metric!r} has no exact null distribution; use the Monte Carlo")
    return _BUILDERS[metric](P, N)


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
    if metric == "auc":
        ((_, pmf),) = auc_pmf_sweep([(P, N)])
        return auc_null_from_pmf(P, N, pmf)
    return null_distribution(metric, P, N)


def exact_cost(metric: str, P: int, N: int) -> tuple[float, float]:
    """Estimated (single-core seconds, peak bytes) of one exact critical value or p-value at (P, N).

    ``(inf, inf)`` for a metric without an exact routine.

    Examples
    --------
    >>> seconds, memory = exact_cost("auc", 1000, 1000)
    >>> seconds < 1, memory < 1e8
    (True, True)
    """
    spec = get_metric(metric)
    if not spec.has_exact:
        return float("inf"), float("inf")
    if metric in _COSTS:
        return _COSTS[metric](P, N)
    return _CLOSED_FORM_SECONDS, 16.0 * (min(spec.k or P, P) + 1)


def null_critical_value(null, tail: float) -> float:
    """m* = smallest x in the support with F(x) >= 1 - tail, from any exact null object."""
    if hasattr(null, "critical_value"):
        return float(null.critical_value(tail))
    return float(null.values[critical_index(null, tail)])


def null_tail_ge(null, score: float) -> float:
    """Pr(X >= score) from any exact null object, the score snapped to the support within 1e-9."""
    if hasattr(null, "tail_ge_score"):
        return float(null.tail_ge_score(score))
    return null.tail_ge_at(score_index(null, score))


def exact_critical_value(metric: str, P: int, N: int, C: int, alpha: float = 0.01, null=None) -> float:
    """Exact m* = smallest x in the support with F(x) >= (1 - alpha)**(1/C).

    Examples
    --------
    >>> exact_critical_value("best_accuracy", 20, 20, C=10, alpha=0.01)
    0.775
    """
    null = null_distribution(metric, P, N) if null is None else null
    return null_critical_value(null, float(upper_tail_probability(C, alpha)))


def exact_tail_ge(metric: str, P: int, N: int, score: float, null=None) -> float:
    """Pr(X >= score) for one random ranking, X the metric."""
    null = null_distribution(metric, P, N) if null is None else null
    return null_tail_ge(null, score)


def exact_p_value(metric: str, score: float, P: int, N: int, C: int, null=None) -> float:
    """Exact p-value 1 - F(score-)**C of a best-of-C score against random rankings."""
    return float(p_value_from_tail(exact_tail_ge(metric, P, N, score, null=null), C))
