"""Input validation of the lookups, beside their entry points (:mod:`tablegen.lookup.api`).

One call checks every argument of a question — metric, P, N, C, alpha, score, method, R, seed and the
table — and returns a :class:`LookupArgs` holding the metric's registry entry and the checked table, so the
layers below look nothing up again.  The generic ``check_*`` helpers it uses are
:mod:`tablegen.compute.validation`'s.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from tablegen.compute.metrics import Metric, get_metric
from tablegen.compute.validation import (
    check_alpha,
    check_class_size,
    check_competitors,
    check_method,
    check_metric,
    check_replicates,
    check_score,
    check_seed,
)
from tablegen.errors import Argument, TablegenInputError

__all__ = ["LookupArgs", "check_table", "validate_lookup_args"]


def check_table(table):
    """``table`` if it is a Table, a store path or None (the bundled table); else an input error.

    Examples
    --------
    >>> check_table("paper.zarr"), check_table(None)
    ('paper.zarr', None)
    """
    if table is None or isinstance(table, (str, os.PathLike)):
        return table
    from tablegen.lookup.table import Table

    if isinstance(table, Table):
        return table
    raise TablegenInputError(f"table must be a tablegen Table, a store path or None (the bundled table), "
                             f"got {table!r}")


@dataclass(frozen=True)
class LookupArgs:
    """The checked arguments of :func:`tablegen.critical_value`, ``p_value`` and ``significance_test``.

    ``alpha`` is None for a p-value and ``score`` None for a critical value; ``R`` and ``seed`` are
    None where the caller left them to the answer policy.  ``spec`` is the metric's registry entry
    (looked up once) and ``table`` the checked table argument (a Table, a store path, or None for the
    bundled table).
    """

    metric: str
    P: int
    N: int
    C: int
    method: str
    alpha: float | None = None
    score: float | None = None
    R: int | None = None
    seed: int | None = None
    spec: Metric | None = field(default=None, repr=False, compare=False)
    table: object = field(default=None, repr=False, compare=False)


def validate_lookup_args(metric, P, N, *, C, alpha=None, score=None, needs_score=False, method="auto", R=None,
                         seed=None, table=None, needs_alpha=False) -> LookupArgs:
    """Checked and normalised arguments of :func:`tablegen.critical_value`, ``p_value`` and
    ``significance_test`` (``alpha`` is None for a p-value, ``score`` None for a critical value; where
    ``needs_alpha``, None is refused naming it).

    Examples
    --------
    >>> validate_lookup_args("auc", 100, 300, C=10, alpha=0.01)
    LookupArgs(metric='auc', P=100, N=300, C=10, method='auto', alpha=0.01, score=None, R=None, seed=None)
    """
    metric, method = check_metric("metric", metric), check_method(method)
    P, N = check_class_size("P", P), check_class_size("N", N)
    if C is None:
        raise TablegenInputError(
            "C is required: the number of classifiers compared on this test set, counting every model tried "
            "(discarded ones too); the winner is judged against the best of C random classifiers")
    C = check_competitors(C)
    seed = check_seed("seed", seed, allow_none=True)
    if alpha is None and needs_alpha:
        raise TablegenInputError.naming(Argument("alpha"), " is required: the significance level, a number in (0, 1) "
                                        "such as 0.01, got None")
    alpha = check_alpha("alpha", alpha) if alpha is not None else None
    score = check_score(metric, score, P, N) if score is not None or needs_score else None
    spec = get_metric(metric)
    _check_exact_available(spec, method, P, N)
    if method in ("exact", "table") and (R is not None or seed is not None):
        raise TablegenInputError.naming(
            Argument("R" if R is not None else "seed"), " applies only to simulated answers (",
            Argument("method", python="method 'simulate' or 'auto'", option="--method simulate or auto"),
            "), not to ", Argument("method", method))
    if R is not None:
        R = check_replicates(R, (C,), (alpha,) if alpha is not None else ())
    return LookupArgs(metric=metric, P=P, N=N, C=C, method=method, alpha=alpha, score=score, R=R, seed=seed,
                      spec=spec, table=check_table(table))


def _check_exact_available(spec: Metric, method: str, P: int, N: int) -> None:
    metric = spec.name
    if method == "exact" and not spec.exact_at(P, N):
        where = f" at P = {P}, N = {N}" if spec.has_exact else ""
        raise TablegenInputError.naming(Argument("method", "exact"), f": metric {metric!r} has no exact null "
                                        f"distribution{where}; use ", Argument("method", "simulate"))
