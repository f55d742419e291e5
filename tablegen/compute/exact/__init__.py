"""Exact null distributions, critical values and p-values (``docs/explanation/``: one page per routine).

=========================  ==========================================  ===============================
metric                     method                                      cost per answer
=========================  ==========================================  ===============================
best_accuracy              reflection principle, running product       O(P)
tp_at_k, precision_at_k    hypergeometric (scipy)                      O(min(k, P))
best_f1                    half-plane lattice programme, bracketed     a few O(P N) programmes
best_balanced_accuracy     half-plane lattice programme, bracketed     a few O(P N) programmes
best_mcc                   per-diagonal-boundary lattice programme,    2-16 O(P N) programmes
                           exactly ordered candidates (:mod:`.best_mcc`)
auc                        stable Mann–Whitney recursion (small) or    O(P^2 N^2 / 4), or
                           tilted Fourier inversion (any size)         O(min(P, N) x ~800)
auc given tie groups       programme over groups (small n) or tilted   sum_g (m_g + 1) x states, or
(:mod:`.auc_ties`)         2-D inversion with a proven band (any n)    ~3,000 band points x G groups
average_precision          enumeration of every arrangement, its       C(P+N, P) x ~1.5e-7 s, or
                           values grouped at 1e-11 (small cells); a    ~9e-6 (P+N) P^1.5 s
                           bracket beyond (rounded programmes)
=========================  ==========================================  ===============================

Numerical error: the closed forms, the recursion and the lattice programmes sum or multiply
non-negative terms, relative error of order (P + N) * 2**-53; the tilted inversion is held to
:data:`tablegen.compute.exact.auc_fft.RELATIVE_ERROR_BOUND` (tests hold every routine to 1e-12 relative
against exact rationals and integer counts); the tied inversion reports a bound with every answer and is
held to :data:`tablegen.compute.exact.auc_ties_fft.RELATIVE_ERROR_BOUND`.

Every null object answers :func:`null_critical_value` and :func:`null_tail_ge`; tabulated ones
(closed forms, the recursion) also expose their whole support as ``values`` / ``tail_ge``.
:func:`null_critical_bracket` and :func:`null_tail_ge_bracket` give rigorous (low, high) bounds
from any null: (v, v) for an exact one; a bracketed null (one that bounds its law from both
sides) provides its own ``critical_bracket(tail)`` and ``tail_ge_bracket(score)``.

Which routine serves which metric, and what it costs, is the metric registry's to say
(:mod:`tablegen.compute.metrics`: ``get_metric(name).exact_null(P, N)``, ``.exact_cost(P, N)``, and
the name-keyed :func:`~tablegen.compute.metric_nulls.exact_critical_value`,
:func:`~tablegen.compute.metric_nulls.exact_p_value`, ...); nothing here knows a metric by its name.
"""

from __future__ import annotations

from tablegen.compute.exact.auc import auc_null_from_pmf, auc_pmf_sweep
from tablegen.compute.exact.nulls import critical_index, score_index

__all__ = ["auc_pmf_sweep", "auc_null_from_pmf", "null_critical_value", "null_tail_ge", "null_critical_bracket",
           "null_tail_ge_bracket"]


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


def null_critical_bracket(null, tail: float) -> tuple[float, float]:
    """Rigorous (low, high) around m* (the smallest x with F(x) >= 1 - tail); (m*, m*) for an exact null.

    Examples
    --------
    >>> from tablegen.compute.exact.closed_form import best_accuracy_null
    >>> null_critical_bracket(best_accuracy_null(20, 20), 0.001)
    (0.775, 0.775)
    """
    if hasattr(null, "critical_bracket"):
        low, high = null.critical_bracket(tail)
        return float(low), float(high)
    value = null_critical_value(null, tail)
    return value, value


def null_tail_ge_bracket(null, score: float, within: float | None = None,
                         rtol: float | None = None) -> tuple[float, float]:
    """Rigorous (low, high) around Pr(X >= score); (p, p) for an exact null (same snapping as :func:`null_tail_ge`).
    ``within``: a bracketed null may answer with a cheaper bracket at most that wide (average precision's coarse
    programmes), for a caller that needs no more; ``rtol``: a lattice null may answer with the bracket of a
    programme its searches already ran, at most ``rtol`` x low wide (``known_tail_bracket``).

    Examples
    --------
    >>> from tablegen.compute.exact.closed_form import best_accuracy_null
    >>> null_tail_ge_bracket(best_accuracy_null(2, 2), 1.0)
    (0.16666666666666666, 0.16666666666666666)
    """
    known = null.known_tail_bracket(score, rtol) if rtol is not None and hasattr(null, "known_tail_bracket") else None
    if known is not None:
        return float(known[0]), float(known[1])
    if hasattr(null, "tail_ge_bracket"):
        low, high = null.tail_ge_bracket(score) if within is None else null.tail_ge_bracket(score, within=within)
        return float(low), float(high)
    value = null_tail_ge(null, score)
    return value, value
