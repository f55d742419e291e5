"""One entry point for answers: critical values and p-values, exact or simulated."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats as _scipy_stats

from tablegen.accumulator import critical_order_statistics
from tablegen.exact import exact_critical_value, exact_p_value
from tablegen.exact.nulls import SNAP_TOLERANCE
from tablegen.mc import count_at_least, simulate_tails, tail_capacity
from tablegen.metrics import get_metric
from tablegen.stats import CI_LEVEL, minimum_replicates, p_value_from_tail, upper_ranks
from tablegen.validation import validate_critical_value_args, validate_p_value_args

#: Replicates used by method="simulate" when R is not given (raised to 4x the minimum if needed).
DEFAULT_SIMULATION_REPLICATES = 1_000_000


@dataclass(frozen=True)
class Answer:
    """A critical value or p-value with its provenance.

    Attributes
    ----------
    value : float
        The answer; for a p-value with no sampled exceedance, its upper confidence bound.
    ci_low, ci_high : float
        95% confidence interval (equal to ``value`` for exact answers).
    method : str
        ``"exact"`` or ``"simulate"``.
    replicates : int or None
        R for simulated answers.
    seed : int or None
        Root seed of a simulated answer (pass it back to reproduce it).
    upper_bound : bool
        True when ``value`` is only an upper bound (p-value below what R can resolve).
    """

    value: float
    ci_low: float
    ci_high: float
    method: str
    replicates: int | None = None
    seed: int | None = None
    upper_bound: bool = False

    def __float__(self) -> float:
        return float(self.value)


def _fresh_seed(seed):
    return int(np.random.SeedSequence().entropy) if seed is None else seed


def critical_value(metric, P, N, C=10, alpha=0.01, method="exact", R=None, seed=None) -> Answer:
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
    method : {"exact", "simulate"}
        Exact null distribution, or Monte Carlo with R rankings (95% order-statistic CI).
    R : int, optional
        Replicates for ``"simulate"`` (default 1,000,000, or 4x the minimum the CI needs).
    seed : int, optional
        Root seed for ``"simulate"`` (default: fresh entropy, reported in the answer).

    Returns
    -------
    Answer

    Examples
    --------
    >>> float(critical_value("best_accuracy", 20, 20, C=10, alpha=0.01))
    0.775
    """
    a = validate_critical_value_args(metric, P, N, C, alpha, method, R, seed)
    if a["method"] == "exact":
        value = exact_critical_value(a["metric"], a["P"], a["N"], a["C"], a["alpha"])
        return Answer(value, value, value, "exact")
    R = a["R"] or max(DEFAULT_SIMULATION_REPLICATES, 4 * minimum_replicates(a["C"], a["alpha"]))
    seed = _fresh_seed(a["seed"])
    capacity = tail_capacity(R, (a["C"],), (a["alpha"],), ())
    (tail,) = simulate_tails(a["P"], a["N"], R, seed, [a["metric"]], capacity).values()
    estimate, low, high = critical_order_statistics(tail, upper_ranks(R, a["C"], a["alpha"]),
                                                    get_metric(a["metric"]).range(a["P"], a["N"])[1])
    return Answer(estimate, low, high, "simulate", R, seed)


def p_value(metric, score, P, N, C=10, method="exact", R=None, seed=None) -> Answer:
    """p-value 1 - F(score-)**C of a winner's score against the best of C random classifiers.

    Parameters are as for :func:`critical_value`; ``score`` must lie in the metric's range at
    (P, N).  Scores within 1e-9 of an attainable value count as that value.  With
    ``method="simulate"`` the tail Pr(X >= score) is estimated from R rankings with a 95%
    Clopper–Pearson interval, mapped through s -> 1 - (1 - s)**C; if no ranking reaches the
    score, ``value`` is the upper end of that interval and ``upper_bound`` is True.

    Examples
    --------
    >>> round(float(p_value("auc", 0.65, 100, 300, C=1000)), 4)
    0.0028
    """
    a = validate_p_value_args(metric, score, P, N, C, method, R, seed)
    if a["method"] == "exact":
        value = exact_p_value(a["metric"], a["score"], a["P"], a["N"], a["C"])
        return Answer(value, value, value, "exact")
    R = a["R"] or DEFAULT_SIMULATION_REPLICATES
    seed = _fresh_seed(a["seed"])
    hits = count_at_least(a["P"], a["N"], R, seed, a["metric"], a["score"] - SNAP_TOLERANCE)
    half = (1 - CI_LEVEL) / 2
    tail_low = _scipy_stats.beta.ppf(half, hits, R - hits + 1) if hits > 0 else 0.0
    tail_high = _scipy_stats.beta.ppf(1 - half, hits + 1, R - hits) if hits < R else 1.0
    low, high = (float(p_value_from_tail(s, a["C"])) for s in (tail_low, tail_high))
    if hits == 0:
        return Answer(high, low, high, "simulate", R, seed, upper_bound=True)
    return Answer(float(p_value_from_tail(hits / R, a["C"])), low, high, "simulate", R, seed)
