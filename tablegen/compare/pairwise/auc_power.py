"""Planning the runner-up question for AUC: the power of DeLong's test of two correlated AUCs, and its size.

- **Two correlated AUCs** (:func:`paired_auc_power`, :func:`paired_auc_sample_size`), the formula of R pROC's
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
  the data's estimates (:func:`paired_auc_power_from_scores` takes the data's: with ``null_variance="reference"``,
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
from numpy.typing import ArrayLike

from tablegen.compare.pairwise.power import check_power
from tablegen.errors import TablegenInputError

#: pROC's "two.sided" and "one.sided" (one-sided in the direction of auc1 - auc2, whichever it is).
AUC_ALTERNATIVES = ("two-sided", "one-sided")
VARIANCES = ("delong", "obuchowski")
#: The variance of AUC1 - AUC2 that sets the critical value: under the alternative (v0 = va, what DeLong's test
#: divides by) or pROC's (model 1 taken as the reference for both).
NULL_VARIANCES = ("alternative", "reference")


@dataclass(frozen=True)
class PairedAucPower:
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

    Examples
    --------
    >>> result = paired_auc_power(0.8, 0.7, 0.5, 100, 100)
    >>> result.method, result.variance, 0.7 < result.power < 0.9
    ('normal approximation', 'delong', True)
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


def paired_auc_power(auc1: float, auc2: float, r: float, P: float, N: float, alpha: float = 0.05,
                     alternative: str = "two-sided", variance: str = "delong", r_negatives: float | None = None,
                     null_variance: str = "alternative") -> PairedAucPower:
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
    >>> round(paired_auc_power(0.8, 0.7, 0.5, 100, 100).power, 4)
    0.8083
    >>> round(paired_auc_power(0.8, 0.7, 0.5, 100, 100, null_variance="reference").power, 4)  # pROC's v0
    0.8866
    """
    auc1, auc2, v0, va, z = _auc_setup(auc1, auc2, r, r_negatives, P, N, alpha, alternative, variance,
                                       null_variance)
    return PairedAucPower(_power(auc1 - auc2, v0, va, z, float(P)), float(P), float(N), auc1, auc2, v0, va, z, variance,
                    null_variance)


def paired_auc_sample_size(auc1: float, auc2: float, r: float, power: float = 0.8, kappa: float = 1.0,
                           alpha: float = 0.05, alternative: str = "two-sided", variance: str = "delong",
                           r_negatives: float | None = None, null_variance: str = "alternative") -> PairedAucPower:
    """Positives P = (z_alpha sqrt(v0) + z_beta sqrt(va))**2 / delta**2 and negatives kappa P for ``power`` (pROC's
    ``solve.nd``; real-valued: round both up).  ``kappa`` = N / P.

    Examples
    --------
    >>> size = paired_auc_sample_size(0.8, 0.7, 0.5, power=0.8)
    >>> math.ceil(size.P), round(size.power, 6)
    (98, 0.8)
    """
    from scipy.stats import norm

    power = check_power(power)
    if isinstance(kappa, (bool, np.bool_)) or not isinstance(kappa, (int, float, np.floating)) \
            or not 0 < kappa < math.inf:
        raise TablegenInputError(f"kappa must be a positive number (N / P), got {kappa!r}")
    auc1, auc2, v0, va, z = _auc_setup(auc1, auc2, r, r_negatives, 1.0, float(kappa), alpha, alternative, variance,
                                       null_variance)
    P = (z * math.sqrt(v0) + float(norm.ppf(power)) * math.sqrt(va)) ** 2 / (auc1 - auc2) ** 2
    return PairedAucPower(power, P, kappa * P, auc1, auc2, v0, va, z, variance, null_variance)


def paired_auc_power_from_scores(labels: ArrayLike, scores_a: ArrayLike, scores_b: ArrayLike, alpha: float = 0.05,
                                 alternative: str = "two-sided",
                                 power: float | None = None,
                                 null_variance: str = "alternative") -> PairedAucPower:
    """The formula with DeLong's estimates from data (:func:`tablegen.compare.pairwise.delong.delong_covariance`,
    times P) and delta the difference of the data's AUCs; with ``null_variance="reference"`` it is pROC's
    ``power.roc.test(roc1, roc2, method = "delong")``.  Without ``power``: the power at the data's size; with it:
    the sample size (``P``, and ``N`` = the data's N / P times P) for that power.

    Examples
    --------
    >>> y = np.r_[np.ones(40, int), np.zeros(60, int)]
    >>> rng = np.random.default_rng(0)
    >>> a = y * 1.2 + rng.normal(size=100); b = 0.5 * a + y * 0.2 + rng.normal(size=100)
    >>> 0 < paired_auc_power_from_scores(y, a, b).power < 1
    True
    """
    from scipy.stats import norm

    from tablegen.compare.pairwise.delong import delong_covariance
    from tablegen.compute.metrics_from_scores import check_binary_labels, check_model_scores

    labels = check_binary_labels(labels)  # errors name the argument, as every function from scores does
    models = check_model_scores({"scores_a": scores_a, "scores_b": scores_b}, labels.size)
    a, b = models["scores_a"], models["scores_b"]
    alpha = _check_auc_alternative(alpha, alternative)
    P, N = int(labels.sum()), int(labels.size - labels.sum())
    estimate = delong_covariance(labels.astype(np.int64), np.vstack([a, b]))
    var1, var2, cov12 = (P * float(x) for x in (estimate.covariance[0, 0], estimate.covariance[1, 1],
                                                  estimate.covariance[0, 1]))
    delta = float(estimate.aucs[0] - estimate.aucs[1])
    (v0, va), z = _null_variance(var1, var2, cov12, null_variance), _z_alpha(alpha, alternative)
    aucs = float(estimate.aucs[0]), float(estimate.aucs[1])
    if power is None:
        return PairedAucPower(_power(delta, v0, va, z, P), P, N, *aucs, v0, va, z, "delong (data)", null_variance)
    power = check_power(power)
    cases = (z * math.sqrt(v0) + float(norm.ppf(power)) * math.sqrt(va)) ** 2 / delta ** 2
    return PairedAucPower(power, cases, N / P * cases, *aucs, v0, va, z, "delong (data)", null_variance)
