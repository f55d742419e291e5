"""Planning the runner-up question: the power of the paired tests, and the test-set size they need.

- **Exact McNemar** (:func:`mcnemar_power`, :func:`mcnemar_sample_size`).  Of n paired items, model A alone is
  right with probability p10 and model B alone with p01 (discordant pairs).  The number of discordant pairs is
  m ~ Binomial(n, p10 + p01) and, given m, A's share b ~ Binomial(m, p10 / (p10 + p01)); the test rejects by
  the rule of :func:`tablegen.compare.pairwise.tests.mcnemar_p` (p <= alpha).  So

      power = sum over m of Pr(m) Pr(the test rejects | m),

  where, for each m, the rejection region comes from ``mcnemar_p`` itself: the counts min(b, m - b) <= k*(m)
  (two-sided), b >= t(m) ("greater") or b <= m - t'(m) ("less"), k* and t found by walking m upward (a
  boundary moves by at most one count per discordant pair added, and every candidate is confirmed by
  ``mcnemar_p``).  A sum of binomial probabilities: exact up to floating-point rounding.  Exact power is
  saw-toothed in n, so the sample size reports both the first n that reaches the target and the n from which
  it stays at or above it, up to the largest n it checked (:class:`PairedSampleSize`).

- **Two correlated AUCs** (:func:`auc_power`, :func:`auc_sample_size`), the formula of R pROC's
  ``power.roc.test`` for two paired ROC curves (Obuchowski & McClish 1997, formula 2), a normal approximation::

      z_beta = (sqrt(P delta**2) - z_alpha sqrt(v0)) / sqrt(va),    power = Phi(z_beta),
      P = (z_alpha sqrt(v0) + z_beta sqrt(va))**2 / delta**2     (the sample size, N = kappa P),

  with delta = AUC1 - AUC2, kappa = N / P, z_alpha = Phi^-1(1 - alpha) (alpha / 2 two-sided: pROC halves it and,
  like pROC, the power counts only the rejections on delta's side; "one-sided" is one-sided in delta's direction,
  whichever it is, as pROC's "one.sided"), va = var1 + var2 - 2 cov12, each variance and covariance multiplied by
  P (per positive), and v0 the variance that sets the critical value: ``null_variance="alternative"`` (default)
  v0 = va, since DeLong's test divides the difference by its variance estimated from the data, which under the
  alternative estimates va, so the formula is the asymptotic power of the test tablegen runs
  (:func:`tablegen.compare.paired_test`; checked against a simulation of that test); ``"reference"``
  v0 = 2 var1 - 2 cov12, pROC's choice (both models taken like model 1), which overstates the power of DeLong's
  test when model 1 has the smaller variance (at AUC 0.8 against 0.7, r = 0.5, P = N = 100: 0.887 against the
  test's simulated 0.807 and the default's 0.808).  The variances come from the binormal model with unit
  variances: the positives' scores of the two models are N(d_i, 1) with correlation ``r`` between the models
  (pROC's ``ra``), the negatives' N(0, 1) with correlation ``r_negatives`` (pROC's ``rn``, default ``r``),
  d_i = sqrt 2 Phi^-1(AUC_i).  Two variance models:

  ``"delong"`` (default): the variances DeLong's test estimates, at their population values.  DeLong's
  estimate of cov(AUC_i, AUC_j) is xi10_ij / P + xi01_ij / N, xi10 the covariance of the positives' placements
  Phi(X_i) (the share of negatives below), xi01 of the negatives' Phi(d_i - Y_i); under the binormal model
  E[Phi(X_i) Phi(X_j)] = Phi2(d_i / sqrt 2, d_j / sqrt 2; rho) with rho = 1/2 for i = j and r / 2 across the
  models (r_negatives / 2 for the negatives), exactly (a bivariate normal probability).  This is what pROC's
  ``power.roc.test(roc1, roc2, method = "delong")`` computes from data, with the population values in place of
  the data's estimates (:func:`auc_power_from_scores` takes the data's: with ``null_variance="reference"``,
  pROC's number exactly).

  ``"obuchowski"``: pROC's ``power.roc.test`` with a parameter list (``A1 = d1, B1 = 1, A2 = d2, B2 = 1,
  rn = r_negatives, ra = r, delta = AUC1 - AUC2``): Obuchowski's (1997, formulas 4 and 5) variances of the
  binormal maximum-likelihood AUC, transcribed from pROC (``var.params.obuchowski``, ``cov.params.obuchowski``);
  with ``null_variance="reference"``, pROC's number exactly.

  Both are normal approximations; neither is exact.  Checked against pROC 1.18.0 in
  ``tests/compare/test_paired_power.py`` (R script and outputs in ``tests/data/proc_power/``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from tablegen.errors import TablegenInputError

ALTERNATIVES = ("two-sided", "greater", "less")
#: pROC's "two.sided" and "one.sided" (one-sided in the direction of auc1 - auc2, whichever it is).
AUC_ALTERNATIVES = ("two-sided", "one-sided")
VARIANCES = ("delong", "obuchowski")
#: The variance of AUC1 - AUC2 that sets the critical value: under the alternative (v0 = va, what DeLong's test
#: divides by) or pROC's (model 1 taken as the reference for both).
NULL_VARIANCES = ("alternative", "reference")
#: Largest n the McNemar sample-size search tries by default.
MAX_PAIRS = 20_000


@dataclass(frozen=True)
class PairedSampleSize:
    """The smallest paired test set whose exact McNemar power reaches the target.

    Attributes
    ----------
    first : int
        The first n whose power reaches ``target``.
    stable : int
        The n from which the power stays at or above ``target`` for every n up to ``checked_to``.
    checked_to : int
        The largest n whose power was computed (exact power is saw-toothed in n; no dip below the target was
        found between ``stable`` and here).
    power_first, power_stable : float
        The power at ``first`` and at ``stable``.
    target : float
        The power asked for.
    """

    first: int
    stable: int
    checked_to: int
    power_first: float
    power_stable: float
    target: float


@dataclass(frozen=True)
class AucPower:
    """Power (or size) of the paired AUC comparison by the normal approximation (module docstring).

    Attributes
    ----------
    power : float
        Phi(z_beta) at ``P`` positives and ``N`` negatives.
    P, N : float
        Positives and negatives (for a sample size, the formula's real-valued P and kappa P; round up).
    auc1, auc2 : float
        The two AUCs.
    v0, va : float
        The per-positive variances of AUC1 - AUC2 under the null and the alternative.
    z_alpha : float
        The normal quantile of the level (alpha / 2 two-sided).
    variance : str
        ``"delong"``, ``"obuchowski"`` or ``"delong (data)"``.
    null_variance : str
        ``"alternative"`` (v0 = va) or ``"reference"`` (pROC's v0 = 2 var1 - 2 cov12).
    method : str
        ``"normal approximation"``.
    """

    power: float
    P: float
    N: float
    auc1: float
    auc2: float
    v0: float
    va: float
    z_alpha: float
    variance: str
    null_variance: str
    method: str = "normal approximation"


# -- exact McNemar --------------------------------------------------------------------------------

def _check_probabilities(p10, p01):
    for name, value in (("p10", p10), ("p01", p01)):
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)) \
                or not 0.0 <= value <= 1.0:
            raise TablegenInputError(f"{name} must be a probability in [0, 1], got {value!r}")
    if p10 + p01 > 1.0 + 1e-12:
        raise TablegenInputError(f"p10 + p01 must be at most 1 (the discordant share), got {p10} + {p01}")
    return float(p10), float(p01)


def _check_common(alpha, alternative):
    from tablegen.compute.validation import check_alpha

    alpha = check_alpha("alpha", alpha)
    if alternative not in ALTERNATIVES:
        raise TablegenInputError(f"alternative must be one of {', '.join(map(repr, ALTERNATIVES))}, "
                                 f"got {alternative!r}")
    return alpha


class _RejectionRegions:
    """The exact McNemar test's rejection region for each number of discordant pairs m, extended on demand, and
    the probability of rejecting given m when A's share of the discordant pairs is ``share``."""

    def __init__(self, alpha: float, alternative: str, mid_p: bool, share: float):
        self.alpha, self.alternative, self.mid_p, self.share = alpha, alternative, mid_p, share
        self.bound = []  # two-sided: k*(m) (-1: none); greater: t(m) (m + 1: none)
        self.reject = np.zeros(0)  # Pr(reject | m)

    def _rejects(self, b: int, m: int) -> bool:
        from tablegen.compare.pairwise.tests import mcnemar_p

        return mcnemar_p(b, m - b, self.alternative, self.mid_p) <= self.alpha

    def _two_sided_bound(self, m: int, start: int) -> int:
        k = min(start, (m - 1) // 2)  # min(b, c) < m / 2: b = c never rejects
        while k >= 0 and not self._rejects(k, m):
            k -= 1
        while k + 1 <= (m - 1) // 2 and self._rejects(k + 1, m):
            k += 1
        return k

    def _greater_bound(self, m: int, start: int) -> int:
        t = min(start, m + 1)  # t(m) >= t(m - 1): Pr(X >= b) only grows with m
        while t <= m and not self._rejects(t, m):
            t += 1
        while t >= 1 and self._rejects(t - 1, m):  # Pr(X >= b) falls as b grows: the region is [t, m]
            t -= 1
        return t

    def extend(self, m_max: int) -> np.ndarray:
        """Pr(reject | m) for m = 0 .. m_max."""
        from scipy.stats import binom

        start = len(self.bound)
        for m in range(start, m_max + 1):
            if self.alternative == "two-sided":
                self.bound.append(self._two_sided_bound(m, (self.bound[-1] if self.bound else -1) + 1))
            else:
                self.bound.append(self._greater_bound(m, self.bound[-1] if self.bound else 0))
        if m_max >= start:
            m = np.arange(start, m_max + 1)
            bound = np.asarray(self.bound[start:], dtype=np.int64)
            if self.alternative == "two-sided":  # min(b, m - b) <= k*: b <= k* or b >= m - k*
                new = np.where(bound >= 0, binom.cdf(bound, m, self.share) + binom.sf(m - bound - 1, m, self.share),
                               0.0)
            else:  # b >= t
                new = np.where(bound <= m, binom.sf(bound - 1, m, self.share), 0.0)
            self.reject = np.concatenate([self.reject, new])
        return self.reject[:m_max + 1]


def _regions(p10, p01, alpha, alternative, mid_p):
    """The regions of the "greater" form: "less" is "greater" with the models' roles swapped."""
    if alternative == "less":
        p10, p01, alternative = p01, p10, "greater"
    discordant = p10 + p01
    share = p10 / discordant if discordant > 0 else 0.5
    return _RejectionRegions(alpha, alternative, bool(mid_p), share), discordant


def mcnemar_power(p10: float, p01: float, n: int, alpha: float = 0.05, alternative: str = "two-sided",
                  mid_p: bool = False) -> float:
    """Exact power of the exact McNemar test on ``n`` paired items.

    Parameters
    ----------
    p10, p01 : float
        Probability that an item is classified right by model A only (p10) and by model B only (p01).
    n : int
        Paired test items.
    alpha : float
        Level: the test rejects when :func:`~tablegen.compare.pairwise.tests.mcnemar_p` <= alpha.
    alternative : {"two-sided", "greater", "less"}
        As :func:`~tablegen.compare.pairwise.tests.mcnemar_p` ("greater": A more accurate).
    mid_p : bool
        Plan for the mid-p test instead.

    Returns
    -------
    float
        sum over m of Pr(m discordant pairs) Pr(reject | m) (module docstring).

    Examples
    --------
    >>> round(mcnemar_power(0.15, 0.05, 100), 4)
    0.5444
    """
    from scipy.stats import binom

    from tablegen.compute.validation import check_integer

    p10, p01 = _check_probabilities(p10, p01)
    n = check_integer("n", n, 1)
    alpha = _check_common(alpha, alternative)
    regions, discordant = _regions(p10, p01, alpha, alternative, mid_p)
    reject = regions.extend(n)
    weights = binom.pmf(np.arange(n + 1), n, discordant)
    return float(min(1.0, np.dot(weights, reject)))


def mcnemar_sample_size(p10: float, p01: float, power: float = 0.8, alpha: float = 0.05,
                        alternative: str = "two-sided", mid_p: bool = False,
                        max_pairs: int = MAX_PAIRS) -> PairedSampleSize:
    """The smallest number of paired items whose exact McNemar power reaches ``power``.

    The power of every n is computed in one sweep (the law of the number of discordant pairs updated from n to
    n + 1), up to twice the first n that reaches the target plus 100 (``checked_to``).

    Raises
    ------
    TablegenInputError
        If no n up to ``max_pairs`` reaches the target (named in the message), or on bad input.

    Examples
    --------
    >>> size = mcnemar_sample_size(0.15, 0.05, power=0.8)
    >>> size.first <= size.stable <= size.checked_to, size.power_stable >= 0.8
    (True, True)
    """
    from tablegen.compute.validation import check_integer

    p10, p01 = _check_probabilities(p10, p01)
    alpha = _check_common(alpha, alternative)
    power = _check_power(power)
    max_pairs = check_integer("max_pairs", max_pairs, 1)
    if p10 == p01 or (alternative == "greater" and p10 < p01) or (alternative == "less" and p10 > p01):
        raise TablegenInputError(f"p10 = {p10} and p01 = {p01}: no difference in the direction of alternative = "
                                 f"{alternative!r}, so no test set size gives power above the level")
    approximate = _connor_pairs(p10, p01, alpha, alternative, power)
    if approximate > max_pairs:
        raise TablegenInputError(f"no test set of up to max_pairs = {max_pairs:,} paired items reaches power {power} "
                                 f"(the normal approximation needs about {approximate:,.0f}); raise max_pairs or "
                                 "plan for a larger difference")
    regions, discordant = _regions(p10, p01, alpha, alternative, mid_p)
    pmf = np.ones(1)  # law of the discordant count at n = 0
    powers = [0.0]
    first = None
    n = 0
    while True:
        n += 1
        if n > (max_pairs if first is None else min(max_pairs, 2 * first + 100)):
            break
        pmf = np.append(pmf * (1.0 - discordant), 0.0) + np.append(0.0, pmf * discordant)
        if n >= regions.reject.size:  # extend the regions in batches (the binomial sums are vectorised)
            regions.extend(min(2 * n, max_pairs if first is None else 2 * first + 100))
        powers.append(float(np.dot(pmf, regions.reject[:n + 1])))
        if first is None and powers[-1] >= power:
            first = n
    if first is None:
        raise TablegenInputError(f"no test set of up to max_pairs = {max_pairs:,} paired items reaches power "
                                 f"{power} (at n = {max_pairs:,} it is {powers[-1]:.4f}); raise max_pairs or plan "
                                 "for a larger difference")
    checked = len(powers) - 1
    below = [m for m in range(first, checked + 1) if powers[m] < power]
    stable = below[-1] + 1 if below else first
    return PairedSampleSize(first, stable, checked, powers[first], powers[stable], power)


def _connor_pairs(p10, p01, alpha, alternative, power) -> float:
    """Connor's (1987) normal approximation of the pairs McNemar's test needs (a guard on the exact search only)."""
    from scipy.stats import norm

    discordant, difference = p10 + p01, abs(p10 - p01)
    z_alpha = norm.ppf(1 - (alpha / 2 if alternative == "two-sided" else alpha))
    z_beta = norm.ppf(power)
    spread = math.sqrt(max(discordant - difference ** 2, 0.0))
    return float((z_alpha * math.sqrt(discordant) + z_beta * spread) ** 2 / difference ** 2)


def _check_power(power):
    if isinstance(power, (bool, np.bool_)) or not isinstance(power, (int, float, np.floating)) \
            or not 0.0 < power < 1.0:
        raise TablegenInputError(f"power must be a number in (0, 1), got {power!r}")
    return float(power)


# -- two correlated AUCs --------------------------------------------------------------------------

def _check_auc(name, value):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.floating)) \
            or not 0.0 < value < 1.0:
        raise TablegenInputError(f"{name} must be an AUC in (0, 1), got {value!r}")
    return float(value)


def _check_correlation(name, value):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.floating)) \
            or not -1.0 <= value <= 1.0:
        raise TablegenInputError(f"{name} must be a correlation in [-1, 1], got {value!r}")
    return float(value)


def _check_auc_alternative(alpha, alternative) -> float:
    from tablegen.compute.validation import check_alpha

    alpha = check_alpha("alpha", alpha)
    if alternative not in AUC_ALTERNATIVES:
        raise TablegenInputError(f"alternative must be one of {', '.join(map(repr, AUC_ALTERNATIVES))} for the AUC "
                                 f"power (pROC's two.sided and one.sided), got {alternative!r}")
    return alpha


def _obuchowski_f_g(A: float, B: float = 1.0) -> tuple[float, float]:
    """pROC's ``f.full`` and ``g.full``: the derivatives of the binormal AUC Phi(A / sqrt(1 + B^2))."""
    expr1 = math.exp(-A * A / (2.0 * (1.0 + B * B)))
    expr2 = 1.0 + B * B
    return expr1 * (2.0 * math.pi * expr2) ** -0.5, -expr1 * A * B * (2.0 * math.pi * expr2 ** 3) ** -0.5


def obuchowski_covariances(d1: float, d2: float, ra: float, rn: float, kappa: float) -> tuple[float, float, float]:
    """(var1, var2, cov12) per positive of two binormal AUCs (B = 1), by pROC's ``var.params.obuchowski`` and
    ``cov.params.obuchowski`` (Obuchowski 1997, formulas 4 and 5)."""
    B = 1.0
    (f1, g1), (f2, g2) = _obuchowski_f_g(d1, B), _obuchowski_f_g(d2, B)

    def variance(A, f, g):
        return f * f * (1.0 + B * B / kappa + A * A / 2.0) + g * g * B * B * (1.0 + kappa) / (2.0 * kappa)

    cov = (f1 * f2 * (ra + rn * B * B / kappa + ra * ra * d1 * d2 / 2.0)
           + g1 * g2 * (B * B * (rn * rn + kappa * ra * ra) / (2.0 * kappa))
           + f1 * g2 * (ra * ra * d1 * B / 2.0) + f2 * g1 * (ra * ra * d2 * B / 2.0))
    return variance(d1, f1, g1), variance(d2, f2, g2), cov


def _placement_moment(d_i: float, d_j: float, rho: float) -> float:
    """E[Phi(X_i) Phi(X_j)] - Phi(d_i / sqrt 2) Phi(d_j / sqrt 2) for X ~ N(d, 1) with correlation 2 rho:
    Phi2(d_i / sqrt 2, d_j / sqrt 2; rho) less the product of the AUCs."""
    from scipy.stats import multivariate_normal, norm

    a, b = d_i / math.sqrt(2.0), d_j / math.sqrt(2.0)
    joint = multivariate_normal(mean=[0.0, 0.0], cov=[[1.0, rho], [rho, 1.0]]).cdf([a, b])
    return float(joint - norm.cdf(a) * norm.cdf(b))


def delong_covariances(d1: float, d2: float, ra: float, rn: float, kappa: float) -> tuple[float, float, float]:
    """(var1, var2, cov12) per positive: the population values of DeLong's covariance of two binormal AUCs,
    P (xi10 / P + xi01 / N) = xi10 + xi01 / kappa (module docstring)."""
    def per_positive(i_d, j_d, r_pos, r_neg):
        return _placement_moment(i_d, j_d, r_pos / 2.0) + _placement_moment(i_d, j_d, r_neg / 2.0) / kappa

    return per_positive(d1, d1, 1.0, 1.0), per_positive(d2, d2, 1.0, 1.0), per_positive(d1, d2, ra, rn)


def _z_alpha(alpha: float, alternative: str) -> float:
    from scipy.stats import norm

    return float(norm.ppf(1.0 - (alpha / 2.0 if alternative == "two-sided" else alpha)))


def _null_variance(var1, var2, cov12, null_variance):
    """(v0, va): va = var1 + var2 - 2 cov12; v0 = va ("alternative") or 2 var1 - 2 cov12 ("reference", pROC's)."""
    if null_variance not in NULL_VARIANCES:
        raise TablegenInputError(f"null_variance must be one of {', '.join(map(repr, NULL_VARIANCES))}, "
                                 f"got {null_variance!r}")
    va = var1 + var2 - 2.0 * cov12
    return (va if null_variance == "alternative" else 2.0 * var1 - 2.0 * cov12), va


def _auc_setup(auc1, auc2, r, r_negatives, P, N, alpha, alternative, variance, null_variance):
    from tablegen.compute.power_mc import separation_of_auc

    auc1, auc2 = _check_auc("auc1", auc1), _check_auc("auc2", auc2)
    if auc1 == auc2:
        raise TablegenInputError(f"auc1 and auc2 are equal ({auc1}): there is no difference to detect")
    ra = _check_correlation("r", r)
    rn = ra if r_negatives is None else _check_correlation("r_negatives", r_negatives)
    for name, value in (("P", P), ("N", N)):
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)) \
                or not 0 < value < math.inf:
            raise TablegenInputError(f"{name} must be a positive number, got {value!r}")
    alpha = _check_auc_alternative(alpha, alternative)
    if variance not in VARIANCES:
        raise TablegenInputError(f"variance must be one of {', '.join(map(repr, VARIANCES))}, got {variance!r}")
    kappa = float(N) / float(P)
    d1, d2 = separation_of_auc(auc1), separation_of_auc(auc2)
    covariances = obuchowski_covariances if variance == "obuchowski" else delong_covariances
    v0, va = _null_variance(*covariances(d1, d2, ra, rn, kappa), null_variance)
    return auc1, auc2, v0, va, _z_alpha(alpha, alternative)


def _power(delta, v0, va, z_alpha, P):
    from scipy.stats import norm

    return float(norm.cdf((math.sqrt(P * delta * delta) - z_alpha * math.sqrt(v0)) / math.sqrt(va)))


def auc_power(auc1: float, auc2: float, r: float, P: float, N: float, alpha: float = 0.05,
              alternative: str = "two-sided", variance: str = "delong", r_negatives: float | None = None,
              null_variance: str = "alternative") -> AucPower:
    """Power of the paired comparison of two correlated binormal AUCs (pROC's formula; module docstring).

    Parameters
    ----------
    auc1, auc2 : float
        The two models' AUCs.
    r : float
        Correlation of the two models' scores among the positives (and the negatives, unless ``r_negatives``).
    P, N : int
        Positives and negatives.
    alpha : float
        Level.
    alternative : {"two-sided", "one-sided"}
        pROC's "two.sided" (alpha halved) or "one.sided" (in the direction of auc1 - auc2).
    variance : {"delong", "obuchowski"}
        The variance model (module docstring).
    r_negatives : float, optional
        Correlation among the negatives, if it differs from ``r``.
    null_variance : {"alternative", "reference"}
        v0 (module docstring): ``"alternative"`` (default) the variance under the alternative, what DeLong's test
        divides by; ``"reference"`` pROC's 2 var1 - 2 cov12.

    Examples
    --------
    >>> round(auc_power(0.8, 0.7, 0.5, 100, 100).power, 4)
    0.8083
    >>> round(auc_power(0.8, 0.7, 0.5, 100, 100, null_variance="reference").power, 4)  # pROC's v0
    0.8866
    """
    auc1, auc2, v0, va, z = _auc_setup(auc1, auc2, r, r_negatives, P, N, alpha, alternative, variance,
                                       null_variance)
    return AucPower(_power(auc1 - auc2, v0, va, z, float(P)), float(P), float(N), auc1, auc2, v0, va, z, variance,
                    null_variance)


def auc_sample_size(auc1: float, auc2: float, r: float, power: float = 0.8, kappa: float = 1.0, alpha: float = 0.05,
                    alternative: str = "two-sided", variance: str = "delong",
                    r_negatives: float | None = None, null_variance: str = "alternative") -> AucPower:
    """Positives P = (z_alpha sqrt(v0) + z_beta sqrt(va))**2 / delta**2 and negatives kappa P for ``power`` (pROC's
    ``solve.nd``; real-valued: round both up).  ``kappa`` = N / P.

    Examples
    --------
    >>> size = auc_sample_size(0.8, 0.7, 0.5, power=0.8)
    >>> math.ceil(size.P), round(size.power, 6)
    (98, 0.8)
    """
    from scipy.stats import norm

    power = _check_power(power)
    if isinstance(kappa, (bool, np.bool_)) or not isinstance(kappa, (int, float, np.floating)) \
            or not 0 < kappa < math.inf:
        raise TablegenInputError(f"kappa must be a positive number (N / P), got {kappa!r}")
    auc1, auc2, v0, va, z = _auc_setup(auc1, auc2, r, r_negatives, 1.0, float(kappa), alpha, alternative, variance,
                                       null_variance)
    P = (z * math.sqrt(v0) + float(norm.ppf(power)) * math.sqrt(va)) ** 2 / (auc1 - auc2) ** 2
    return AucPower(power, P, kappa * P, auc1, auc2, v0, va, z, variance, null_variance)


def auc_power_from_scores(labels, scores_a, scores_b, alpha: float = 0.05, alternative: str = "two-sided",
                          power: float | None = None, null_variance: str = "alternative") -> AucPower:
    """The formula with DeLong's estimates from data (:func:`tablegen.compare.pairwise.delong.delong_covariance`,
    times P) and delta the difference of the data's AUCs; with ``null_variance="reference"`` it is pROC's
    ``power.roc.test(roc1, roc2, method = "delong")``.  Without ``power``: the power at the data's size; with it:
    the sample size (``P``, and ``N`` = the data's N / P times P) for that power.

    Examples
    --------
    >>> y = np.r_[np.ones(40, int), np.zeros(60, int)]
    >>> rng = np.random.default_rng(0)
    >>> a = y * 1.2 + rng.normal(size=100); b = 0.5 * a + y * 0.2 + rng.normal(size=100)
    >>> 0 < auc_power_from_scores(y, a, b).power < 1
    True
    """
    from scipy.stats import norm

    from tablegen.compare.pairwise.delong import delong_covariance

    labels = np.asarray(labels)
    if labels.ndim != 1 or not np.isin(labels, (0, 1)).all() or labels.min() == labels.max():
        raise TablegenInputError("labels must be a 1-d array of 0/1 with both classes present")
    a, b = (np.asarray(s, dtype=float) for s in (scores_a, scores_b))
    if a.shape != labels.shape or b.shape != labels.shape or not (np.isfinite(a).all() and np.isfinite(b).all()):
        raise TablegenInputError("scores_a and scores_b must be finite and one per label")
    alpha = _check_auc_alternative(alpha, alternative)
    P, N = int(labels.sum()), int(labels.size - labels.sum())
    estimate = delong_covariance(labels.astype(np.int64), np.vstack([a, b]))
    var1, var2, cov12 = (P * float(x) for x in (estimate.covariance[0, 0], estimate.covariance[1, 1],
                                                  estimate.covariance[0, 1]))
    delta = float(estimate.aucs[0] - estimate.aucs[1])
    (v0, va), z = _null_variance(var1, var2, cov12, null_variance), _z_alpha(alpha, alternative)
    aucs = float(estimate.aucs[0]), float(estimate.aucs[1])
    if power is None:
        return AucPower(_power(delta, v0, va, z, P), P, N, *aucs, v0, va, z, "delong (data)", null_variance)
    power = _check_power(power)
    cases = (z * math.sqrt(v0) + float(norm.ppf(power)) * math.sqrt(va)) ** 2 / delta ** 2
    return AucPower(power, cases, N / P * cases, *aucs, v0, va, z, "delong (data)", null_variance)
