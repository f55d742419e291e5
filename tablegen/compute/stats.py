"""The statistical rules of every answer, in one place: tail probability, order-statistic ranks, p-values.

Everything is phrased through the upper tail t = 1 - q, q = (1 - alpha)**(1/C), which is computed as
``-expm1(log1p(-alpha) / C)`` and never as ``1 - q`` (for C = 1000, alpha = 0.01, t ~ 1.0e-5 and
``1 - q`` would keep only 11 significant digits).
"""

from __future__ import annotations

import math

import numpy as np

#: Confidence level of the order-statistic intervals.
CI_LEVEL = 0.95


def upper_tail_probability(C, alpha):
    """t = 1 - (1 - alpha)**(1/C), the per-competitor tail mass of a critical value.

    Examples
    --------
    >>> round(float(upper_tail_probability(1000, 0.01)) * 1e5, 6)
    1.005029
    """
    return -np.expm1(np.log1p(-np.asarray(alpha, dtype=float)) / np.asarray(C, dtype=float))


def p_value_from_tail(tail_ge, C):
    """p-value 1 - F(m-)**C of a best-of-C score m, given s = Pr(X >= m) = 1 - F(m-).

    Computed as ``-expm1(C * log1p(-s))`` so that small p-values keep their digits.
    """
    s = np.clip(np.asarray(tail_ge, dtype=float), 0.0, 1.0)  # a summed pmf may exceed 1 by an ulp
    with np.errstate(divide="ignore"):
        return -np.expm1(np.asarray(C, dtype=float) * np.log1p(-s))


def of_winners(single: float, winners: int) -> float:
    """1 - (1 - single)**winners, without cancellation: the power of ``winners`` equally good models.

    Examples
    --------
    >>> of_winners(0.5, 2), round(of_winners(0.25, 1), 15)
    (0.75, 0.25)
    """
    if single >= 1.0:
        return 1.0
    return float(-math.expm1(winners * math.log1p(-single)))


def minimum_replicates(C, alpha):
    """Smallest R with R t >= 1: at least one sample expected above the critical value.

    Below it the estimate would be the sample maximum whatever R is, which is no estimate.  (The
    upper end of the 95% interval needs more, R with q**R < 0.025, i.e. 367,041 at C = 1000,
    alpha = 0.01; below that :func:`upper_ranks` reports it as rank 0, "no order statistic", and
    the caller bounds it by the metric's maximum, which is still a valid one-sided bound.)

    Examples
    --------
    >>> minimum_replicates(1000, 0.01)
    99500
    """
    return int(math.ceil(1.0 / float(upper_tail_probability(C, alpha))))


# -- scipy.stats's quantile functions, without importing scipy.stats ------------------------------------------
# Importing scipy.stats costs 0.5-0.9 s of CPU (it loads scipy.linalg, optimize, integrate, interpolate, spatial),
# more than the rest of a 10^4-item report's verdicts.  The binomial and beta quantiles below call the very ufuncs
# scipy.stats's ``binom.ppf`` and ``beta.ppf`` call (scipy.special's Boost wrappers), with the distribution
# classes' handling of q = 0, q = 1 and invalid arguments; where scipy.special lacks those (private) ufuncs they
# fall back to scipy.stats itself.  ``tests/compute/test_stats.py`` checks both against scipy.stats, element for
# element, on grids of the arguments the callers pass.


def _distribution_ppf(ufunc: str, distribution: str, q, first, second, valid, at_zero, at_one):
    """scipy.stats ``distribution``'s ppf at q: scipy.special's private ``ufunc`` (the one scipy.stats calls) where
    ``valid(q, first, second)`` holds and 0 < q < 1, ``at_zero`` and ``at_one(first, second)`` at q = 0 and 1 (the
    distribution class's support ends), NaN elsewhere; scipy.stats itself where scipy.special lacks the ufunc."""
    from scipy.special import _ufuncs

    ppf = getattr(_ufuncs, ufunc, None)
    if ppf is None:
        import scipy.stats

        return getattr(scipy.stats, distribution).ppf(q, first, second)
    q, first, second = np.broadcast_arrays(*(np.asarray(v, dtype=float) for v in (q, first, second)))
    ok = valid(q, first, second) & (q >= 0) & (q <= 1)
    with np.errstate(all="ignore"):
        inner = ppf(np.where(ok, q, 0.5), np.where(ok, first, 1.0), np.where(ok, second, 0.5))
    value = np.where(q == 0, at_zero, np.where(q == 1, at_one(first, second), inner))
    return np.where(ok, value, np.nan)[()]


def binomial_quantile(q, n, p):
    """``scipy.stats.binom.ppf(q, n, p)``, element for element: the smallest k with Pr(Binomial(n, p) <= k) >= q.

    Examples
    --------
    >>> float(binomial_quantile(0.5, 10, 0.5)), float(binomial_quantile(1.0, 10, 0.3))
    (5.0, 10.0)
    """
    return _distribution_ppf("_binom_ppf", "binom", q, n, p,
                             lambda q, n, p: (n >= 0) & (n == np.floor(n)) & (p >= 0) & (p <= 1), -1.0,
                             lambda n, p: n)


def beta_quantile(q, a, b):
    """``scipy.stats.beta.ppf(q, a, b)``, element for element (0 at q = 0, 1 at q = 1, NaN where a or b <= 0).

    Examples
    --------
    >>> float(beta_quantile(0.5, 1, 1)), float(beta_quantile(0.25, 2, 1))
    (0.5, 0.5)
    """
    return _distribution_ppf("_beta_ppf", "beta", q, a, b, lambda q, a, b: (a > 0) & (b > 0), 0.0,
                             lambda a, b: np.ones_like(a))


def linear_quantile(values, levels):
    """``scipy.stats.quantile(values, levels)`` of a 1-D sample (its default ``method="linear"``, Hyndman & Fan's
    type 7), operation for operation: NaN at levels outside [0, 1] and everywhere if a value is NaN.

    Examples
    --------
    >>> linear_quantile(np.array([3.0, 1.0, 2.0, 4.0]), np.array([0.0, 0.5, 1.0])).tolist()
    [1.0, 2.5, 4.0]
    """
    y = np.sort(np.asarray(values, dtype=float))
    if y.size == 0:
        y = np.full(1, np.nan)
    p = np.asarray(levels, dtype=float)
    outside = (p > 1) | (p < 0) | np.isnan(p)
    p = np.where(outside, 0.5, p)
    n = np.float64(y.size)
    jg = p * n + (1 - p)
    jp1 = jg // 1
    j = jp1 - 1
    g = jg % 1
    g = np.where(j < 0, 0.0, g)
    j, jp1 = np.clip(j, 0.0, n - 1), np.clip(jp1, 0.0, n - 1)
    result = (1 - g) * y[j.astype(np.int64)] + g * y[jp1.astype(np.int64)]
    if np.isnan(y).any():
        result = np.full_like(result, np.nan)
    return np.where(outside, np.nan, result)[()]


def midranks(scores, axis=-1):
    """Each value's ascending midrank along ``axis`` (ties averaged), ``scipy.stats.rankdata(scores,
    method="average", axis=axis)`` to the bit (half-integers, exact in float64); a slice holding a NaN is all NaN.

    Examples
    --------
    >>> midranks(np.array([0.3, 0.1, 0.3])).tolist()
    [2.5, 1.0, 2.5]
    """
    values = np.moveaxis(np.asarray(scores, dtype=float), axis, -1)
    if values.ndim == 1 and not np.isnan(values).any():  # one vector: its order sorted once per report
        from tablegen.compute.kernels.orders import ascending_midranks

        return ascending_midranks(values)
    from tablegen.compute.kernels.orders import tie_spans

    order = np.argsort(values, axis=-1, kind="stable")
    first, last = tie_spans(np.take_along_axis(values, order, axis=-1))
    ranks = np.empty(values.shape)
    np.put_along_axis(ranks, order, (first + last + 2) / 2, axis=-1)
    ranks[np.isnan(values).any(axis=-1)] = np.nan
    return np.moveaxis(ranks, -1, axis)


def upper_ranks(R, C, alpha, level=CI_LEVEL):
    """Ranks, counted from the largest sample (1 = the maximum), of the estimate and its CI.

    The estimate is the ceil(qR)-th smallest sample, i.e. the (floor(tR) + 1)-th largest.  The 95%
    interval [X_(l), X_(u)] (ascending ranks l < u) covers the q-quantile with probability >= level
    for any distribution, discrete ones included: with E ~ Binomial(R, t) the number of samples
    above the quantile, l = R - e_hi and u = R - e_lo + 1 where e_hi, e_lo are the upper and lower
    (1 - level)/2 quantiles of E.  Computed on E (small t) rather than on Binomial(R, q) because
    scipy resolves quantiles near 0 better than near 1.

    Returns
    -------
    estimate, ci_low, ci_high : int
        Upper ranks of the estimate, of the CI's low end (a deeper rank) and of its high end.
        ``ci_high`` is 0 when e_lo = 0 (u = R + 1: no sample is high enough to be the upper end;
        use the metric's maximum instead).
    """
    t = float(upper_tail_probability(C, alpha))
    half = (1.0 - level) / 2.0
    e_hi = int(binomial_quantile(1.0 - half, R, t))
    e_lo = int(binomial_quantile(half, R, t))
    if R < minimum_replicates(C, alpha):
        raise ValueError(
            f"R = {R} is too small for C = {C}, alpha = {alpha}: need R >= {minimum_replicates(C, alpha)}"
        )
    return int(math.floor(R * t)) + 1, e_hi + 1, max(e_lo, 0)


def tail_rank(R, tail_probability):
    """Upper rank floor(R t) + 1 of the tail quantile at tail probability t (0 if unresolved: R t < 1)."""
    product = R * float(tail_probability)
    return int(math.floor(product)) + 1 if product >= 1.0 else 0


#: Tail probabilities at which the upper-tail quantile function is kept (1, 2, 5 per decade).
DEFAULT_TAIL_PROBABILITIES = tuple(
    float(f"{m}e{e}") for e in range(-7, -1) for m in (1, 2, 5)
) + (0.1,)


def clopper_pearson(hits_low, hits_high, R, level=CI_LEVEL):
    """Two-sided ``level`` interval for a proportion whose count lies somewhere in [hits_low, hits_high].

    With ``hits_low == hits_high == h`` this is the Clopper–Pearson interval of h successes in R
    trials; with a range of counts it is the union of their intervals (low end from the smallest
    count, high end from the largest), which keeps the coverage.  Vectorised.
    """
    hits_low, hits_high, R = (np.asarray(v, dtype=float) for v in (hits_low, hits_high, R))
    half = (1.0 - level) / 2.0
    with np.errstate(invalid="ignore", divide="ignore"):
        low = np.where(hits_low > 0, beta_quantile(half, hits_low, R - hits_low + 1), 0.0)
        high = np.where(hits_high < R, beta_quantile(1.0 - half, hits_high + 1, R - hits_high), 1.0)
    return low, high


def exceedance_bounds(quantiles, tail_probabilities, R, score, tolerance=1e-9):
    """Bounds on how many of R samples were >= ``score``, read from stored upper-tail quantiles.

    ``quantiles[..., i]`` is the (floor(R t_i) + 1)-th largest sample (NaN where R t_i < 1), with
    ``tail_probabilities`` ascending, so the quantiles are non-increasing along the last axis.  If
    Q(t_i) >= score, at least floor(R t_i) + 1 samples reached the score; if Q(t_i) < score, at
    most floor(R t_i) did.  Scores within ``tolerance`` of a quantile count as equal to it.

    Parameters
    ----------
    quantiles : array, shape (..., T)
    tail_probabilities : array, shape (T,)
    R : int or array broadcastable to ``quantiles[..., 0]``
    score : float or array broadcastable to ``quantiles[..., 0]``

    Returns
    -------
    low, high : int arrays
        The count of samples >= score lies in [low, high]; ``high`` is R when no stored quantile is
        below the score (the count is then only bounded from below).

    Examples
    --------
    >>> q = np.array([0.9, 0.8, 0.7])              # at t = 0.01, 0.1, 0.5 of R = 100 samples
    >>> [int(v) for v in exceedance_bounds(q, [0.01, 0.1, 0.5], 100, 0.75)]
    [11, 50]
    """
    quantiles = np.asarray(quantiles, dtype=float)
    t = np.asarray(tail_probabilities, dtype=float)
    R = np.asarray(R, dtype=np.int64)
    score = np.asarray(score, dtype=float)
    ranks = np.floor(R[..., None] * t).astype(np.int64)  # samples strictly above rank floor(R t) + 1
    valid = np.isfinite(quantiles)
    reached = valid & (quantiles >= score[..., None] - tolerance)
    missed = valid & ~reached
    low = np.max(np.where(reached, ranks + 1, 0), axis=-1)
    high = np.min(np.where(missed, ranks, R[..., None]), axis=-1)
    return low, high
