"""One entry point for answers: critical values, p-values and significance tests, by the best method.

``method="auto"`` (the default) answers

1. **exactly**, where the metric has an exact null distribution that is cheap at (P, N) (estimated
   at most :data:`AUTO_EXACT_SECONDS` on one core, see :func:`tablegen.cost.exact_seconds`);
2. else from the **table** (the bundled one, or ``table=``), if the cell — and for a critical
   value its C and alpha — is in it;
3. else it raises a :class:`TablegenInputError` that names ``method="simulate"`` (and
   ``method="exact"`` where that exists but is slow).  Nothing is interpolated between cells.

``method="exact"``, ``"table"`` and ``"simulate"`` force one source.
"""

from __future__ import annotations

import functools
import logging
import os

import numpy as np

from tablegen.accumulator import critical_order_statistics
from tablegen.cost import exact_seconds
from tablegen.exact import exact_critical_value, exact_p_value, null_distribution
from tablegen.exact.auc import auc_cost
from tablegen.exact.nulls import SNAP_TOLERANCE
from tablegen.mc import count_at_least, simulate_tails_and_counts, tail_capacity
from tablegen.metrics import get_metric
from tablegen.stats import clopper_pearson, minimum_replicates, p_value_from_tail, upper_ranks
from tablegen.table import Answer, SignificanceResult, Table, open_table, verdict
from tablegen.validation import TablegenInputError, validate_lookup_args

logger = logging.getLogger(__name__)

#: Replicates used by method="simulate" when R is not given (raised to 4x the minimum if needed).
DEFAULT_SIMULATION_REPLICATES = 1_000_000
#: method="auto" computes exactly when the estimate of :func:`tablegen.cost.exact_seconds` is below this.
AUTO_EXACT_SECONDS = 5.0
#: The smallest positive double: an exact p-value that underflows is reported as "< this".
_SMALLEST_P = float(np.finfo(float).tiny)

_bundled: Table | None = None


def _table(table) -> Table:
    """The table to read: a :class:`Table`, a store path, or None for the bundled table (opened once)."""
    global _bundled
    if isinstance(table, Table):
        return table
    if table is not None:
        return open_table(table)
    if _bundled is None:
        _bundled = open_table()
    return _bundled


@functools.lru_cache(maxsize=8)
def _null(metric: str, P: int, N: int):
    """Exact null distributions, cached: a critical value then a p-value at one cell costs one AUC recursion."""
    return null_distribution(metric, P, N)


def _fresh_seed(seed):
    return int(np.random.SeedSequence().entropy) if seed is None else seed


def _memory_bytes() -> float:
    return float(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))


def _check_exact_memory(metric: str, P: int, N: int) -> None:
    """Refuse an exact AUC whose recursion buffer would not fit in half this machine's memory."""
    if metric != "auc":
        return
    needed, limit = auc_cost(P, N)[1], _memory_bytes() / 2
    if needed > limit:
        raise TablegenInputError(
            f"method='exact': exact auc at P = {P}, N = {N} needs {needed / 1e9:,.1f} GB of memory, more than half "
            f"of this machine's {2 * limit / 1e9:,.1f} GB; use method='simulate'")


def _choose(a: dict, need_c_alpha: bool) -> str:
    """The method "auto" picks for validated arguments ``a`` (see the module docstring)."""
    if a["method"] == "exact":
        _check_exact_memory(a["metric"], a["P"], a["N"])
    if a["method"] != "auto":
        return a["method"]
    metric, P, N = a["metric"], a["P"], a["N"]
    seconds = exact_seconds(metric, P, N)
    if seconds <= AUTO_EXACT_SECONDS:
        return "exact"
    table = _table(a["table"])
    C, alpha = (a["C"], a.get("alpha")) if need_c_alpha else (None, None)
    if table.contains(metric, P, N, C, alpha):
        return "table"
    reasons = [f"the cell (P = {P}, N = {N}{f', C = {C}, alpha = {alpha:g}' if need_c_alpha else ''}) "
               f"is not in the {table.source} and nothing is interpolated between cells"]
    if get_metric(metric).has_exact:
        fits = metric != "auc" or auc_cost(P, N)[1] <= _memory_bytes() / 2
        reasons.insert(0, f"exact {metric} at P = {P}, N = {N} would take about {seconds:,.0f} s"
                          + (" (method='exact' runs it anyway)" if fits else " and more memory than this machine has"))
    else:
        reasons.insert(0, f"{metric} has no exact null distribution")
    raise TablegenInputError("method='auto' cannot answer: " + "; ".join(reasons) +
                             f". Use method='simulate' (R = {DEFAULT_SIMULATION_REPLICATES:,} by default) "
                             "for a Monte Carlo answer with its confidence interval.")


def _replicates_for(a: dict) -> int:
    if a["R"] is not None:
        return a["R"]
    return max(DEFAULT_SIMULATION_REPLICATES, 4 * minimum_replicates(a["C"], a["alpha"]))


def _exact_p(metric, score, P, N, C, null) -> Answer:
    value = exact_p_value(metric, score, P, N, C, null=null)
    if value <= 0.0:  # underflow: the tail is below 2.2e-308
        return Answer(_SMALLEST_P, 0.0, _SMALLEST_P, "exact", bound="<")
    return Answer(value, value, value, "exact")


def _simulated_critical(metric, P, N, C, alpha, R, seed, tail) -> Answer:
    estimate, low, high = critical_order_statistics(tail, upper_ranks(R, C, alpha), get_metric(metric).range(P, N)[1])
    return Answer(estimate, low, high, "simulate", R, seed)


def _simulated_p(C, R, seed, hits) -> Answer:
    tail_low, tail_high = clopper_pearson(hits, hits, R)
    low, high = (float(p_value_from_tail(s, C)) for s in (tail_low, tail_high))
    if hits == 0:
        return Answer(high, low, high, "simulate", R, seed, bound="<")
    return Answer(float(p_value_from_tail(hits / R, C)), low, high, "simulate", R, seed)


def critical_value(metric, P, N, C=10, alpha=0.01, method="auto", R=None, seed=None, table=None,
                   progress=None) -> Answer:
    """Critical value m* of ``metric`` for the best of C random classifiers at level alpha.

    A winner's score m is significant at level alpha iff m > m*.

    Parameters
    ----------
    metric : str
        Metric name (see :mod:`tablegen.metrics`).
    P, N : int
        Positives and negatives in the test set.
    C : int
        Number of competing classifiers.
    alpha : float
        Significance level in (0, 1).
    method : {"auto", "exact", "table", "simulate"}
        See the module docstring; ``"simulate"`` runs R rankings (95% order-statistic CI).
    R : int, optional
        Replicates for ``"simulate"`` (default 1,000,000, or 4x the minimum the CI needs).
    seed : int, optional
        Root seed for ``"simulate"`` (default: fresh entropy, reported in the answer).
    table : Table or str, optional
        Table for ``"auto"``/``"table"`` (default: the bundled one).
    progress : callable(done, total), optional
        Called as ``"simulate"`` advances.

    Returns
    -------
    Answer

    Examples
    --------
    >>> answer = critical_value("auc", 100, 300, C=1000, alpha=0.01)
    >>> round(float(answer), 4), answer.method
    (0.6411, 'exact')
    """
    a = validate_lookup_args(metric, P, N, C=C, alpha=alpha, method=method, R=R, seed=seed, table=table)
    chosen = _choose(a, need_c_alpha=True)
    if chosen == "table":
        return _table(a["table"]).critical_value(a["metric"], a["P"], a["N"], a["C"], a["alpha"])
    if chosen == "exact":
        value = exact_critical_value(a["metric"], a["P"], a["N"], a["C"], a["alpha"],
                                     null=_null(a["metric"], a["P"], a["N"]))
        return Answer(value, value, value, "exact")
    R, seed = _replicates_for(a), _fresh_seed(a["seed"])
    tails, _ = simulate_tails_and_counts(a["P"], a["N"], R, seed, [a["metric"]],
                                         tail_capacity(R, (a["C"],), (a["alpha"],), ()), {}, progress=progress)
    return _simulated_critical(a["metric"], a["P"], a["N"], a["C"], a["alpha"], R, seed, tails[a["metric"]])


def p_value(metric, score, P, N, C=10, method="auto", R=None, seed=None, table=None, progress=None) -> Answer:
    """p-value 1 - F(score-)**C of a winner's score against the best of C random classifiers.

    Parameters are as for :func:`critical_value`; ``score`` must lie in the metric's range at
    (P, N).  Scores within 1e-9 of an attainable value count as that value.  A p-value below what
    the source resolves is a bound (``bound="<"``), never 0: with ``"simulate"``, if no ranking
    reaches the score, ``value`` is the upper end of the 95% Clopper–Pearson interval of the tail,
    mapped through s -> 1 - (1 - s)**C; a table p-value is bounded by its stored tail quantiles
    (see :meth:`tablegen.table.Table.p_value`).

    Examples
    --------
    >>> round(float(p_value("auc", 0.65, 100, 300, C=1000)), 4)
    0.0028
    """
    a = validate_lookup_args(metric, P, N, C=C, score=score, method=method, R=R, seed=seed, table=table)
    chosen = _choose(a, need_c_alpha=False)
    if chosen == "table":
        return _table(a["table"]).p_value(a["metric"], a["score"], a["P"], a["N"], a["C"])
    if chosen == "exact":
        return _exact_p(a["metric"], a["score"], a["P"], a["N"], a["C"], _null(a["metric"], a["P"], a["N"]))
    R, seed = a["R"] or DEFAULT_SIMULATION_REPLICATES, _fresh_seed(a["seed"])
    hits = count_at_least(a["P"], a["N"], R, seed, a["metric"], a["score"] - SNAP_TOLERANCE, progress=progress)
    return _simulated_p(a["C"], R, seed, hits)


def significance_test(metric, score, P, N, C=10, alpha=0.01, method="auto", R=None, seed=None, table=None,
                      progress=None) -> SignificanceResult:
    """Is a winner's ``score`` significant against the best of C classifiers that learned nothing?

    The verdict is score > critical value (DESIGN §1); the result also carries the p-value, both
    answers' intervals, the method and R.  With ``"exact"`` one null distribution serves both
    answers; with ``"simulate"`` one pass of R rankings does.

    Parameters are as for :func:`critical_value` and :func:`p_value`.

    Returns
    -------
    SignificanceResult
        ``.significant``, ``.settled``, ``.critical_value``, ``.p_value``, ``.method``,
        ``.replicates``, ``.sentence()``, ``.to_dict()``.

    Examples
    --------
    >>> result = significance_test("auc", 0.70, 100, 300, C=1000)
    >>> bool(result.significant), result.method
    (True, 'exact')
    """
    a = validate_lookup_args(metric, P, N, C=C, alpha=alpha, score=score, method=method, R=R, seed=seed,
                             table=table)
    chosen = _choose(a, need_c_alpha=True)
    m, P, N, C, alpha, score = (a[k] for k in ("metric", "P", "N", "C", "alpha", "score"))
    if chosen == "table":
        return _table(a["table"]).significance_test(m, score, P, N, C, alpha)
    if chosen == "exact":
        null = _null(m, P, N)
        value = exact_critical_value(m, P, N, C, alpha, null=null)
        return verdict(m, score, P, N, C, alpha, Answer(value, value, value, "exact"),
                       _exact_p(m, score, P, N, C, null))
    R, seed = _replicates_for(a), _fresh_seed(a["seed"])
    tails, counts = simulate_tails_and_counts(P, N, R, seed, [m], tail_capacity(R, (C,), (alpha,), ()),
                                              {m: score - SNAP_TOLERANCE}, progress=progress)
    return verdict(m, score, P, N, C, alpha, _simulated_critical(m, P, N, C, alpha, R, seed, tails[m]),
                   _simulated_p(C, R, seed, counts[m]))
