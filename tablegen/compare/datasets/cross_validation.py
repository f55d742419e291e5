"""Two algorithms on one data set from (repeated) k-fold cross-validation: the correlated Bayesian t-test
(Corani & Benavoli, Machine Learning 100, 2015) and Nadeau & Bengio's corrected resampled t-test (Machine
Learning 52, 2003).

The J = k × runs fold scores are not independent (the training sets overlap), so the variance of their
mean is not s²/J.  With d_j = score(A) − score(B) on fold j, d̄ their mean, s² their sample variance
(ddof 1) and ρ the correlation between folds, taken as the test fraction n_test / n_total (1/k for k-fold
cross-validation, the default):

* **correlated Bayesian t-test**: the posterior of the mean difference δ (under the
  correlated normal model with the matching non-informative prior) is Student t with J − 1 degrees of
  freedom, location d̄ and scale s √(1/J + ρ/(1 − ρ)); reported: P(δ > r) (A better), P(|δ| ≤ r)
  (equivalent), P(δ < −r) (B better), exact (Student CDF), and the decision at a probability as for the
  other Bayesian tests;
* **corrected resampled t-test**: t = d̄ / (s √(1/J + n_test/n_train)), n_test/n_train = ρ/(1 − ρ),
  two-sided p from Student t with J − 1 degrees of freedom.

Both use the same corrected scale; with zero variance (all differences equal) the posterior is the point
d̄ and the p-value is 1 if d̄ = 0, else 0.  baycomp's ``CorrelatedTTest`` is the same model.

:func:`cross_validated` gives both; :func:`correlated_bayesian_ttest` and :func:`corrected_resampled_ttest`
each one, by name, from the same computation.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

import numpy as np

from tablegen.compare.datasets.validation import (
    check_flag,
    check_names,
    check_pair_scores,
    check_probability,
    check_rope,
)
from tablegen.compute.validation import check_integer
from tablegen.errors import Argument, TablegenInputError

if TYPE_CHECKING:
    from numpy.typing import ArrayLike


@dataclass(frozen=True)
class CrossValidationComparison:
    """Both tests on the fold scores of two algorithms (see the module docstring).

    Attributes
    ----------
    a, b : str
    folds, runs : int
        J = ``folds`` scores in all, from ``runs`` repetitions.
    rho : float
        Correlation between folds (the test fraction).
    mean, sd, scale : float
        d̄, s, and the corrected scale s √(1/J + ρ/(1 − ρ)).
    df : int
        J − 1.
    t, p_value : float
        The corrected resampled t statistic and its two-sided p-value.
    rope, probability : float
    p_a_better, p_rope, p_b_better : float
        Posterior probabilities of δ > rope, −rope ≤ δ ≤ rope, δ < −rope (exact).
    decision : str
        "a better", "equivalent (ROPE)", "b better" or "no decision".

    Examples
    --------
    >>> a = [0.81, 0.84, 0.79, 0.85, 0.83, 0.80, 0.86, 0.82, 0.84, 0.83]
    >>> b = [0.78, 0.80, 0.79, 0.81, 0.80, 0.77, 0.83, 0.80, 0.80, 0.79]
    >>> result = cross_validated(a, b, rope=0.01)
    >>> round(result.t, 3), round(result.p_value, 5), round(result.p_a_better, 4), result.decision
    (5.235, 0.00054, 0.9966, 'a better')
    """

    a: str
    b: str
    folds: int
    runs: int
    rho: float
    mean: float
    sd: float
    scale: float
    df: int
    t: float
    p_value: float
    rope: float
    probability: float
    p_a_better: float
    p_rope: float
    p_b_better: float
    decision: str

    def sentence(self) -> str:
        """Both verdicts in plain words."""
        verdict = {"a better": f"{self.a} better", "b better": f"{self.b} better"}.get(self.decision, self.decision)
        return (f"{self.folds} cross-validation folds ({self.runs} run(s), rho = {self.rho:.4g}): mean difference "
                f"{self.a} - {self.b} = {self.mean:.4g}. Corrected resampled t-test: t = {self.t:.4g} (df {self.df}), "
                f"p = {self.p_value:.3g}. Correlated Bayesian t-test, ROPE ±{self.rope:g}: P({self.a} better) = "
                f"{self.p_a_better:.4f}, P(equivalent) = {self.p_rope:.4f}, P({self.b} better) = {self.p_b_better:.4f}"
                f"; at probability {self.probability:g}: {verdict}.")

    def to_dict(self) -> dict:
        """JSON-ready fields."""
        return asdict(self)


def _check(x, y, runs, rho, rope, probability):
    a, b = check_pair_scores(x, y, 2)
    runs = check_integer("runs", runs, 1)
    if a.size % runs:
        raise TablegenInputError(f"runs = {runs} does not divide the {a.size} fold scores")
    if rho is None:
        if a.size // runs < 2:
            raise TablegenInputError("rho: with one fold per run give rho (the test fraction) explicitly")
        rho = runs / a.size
    if isinstance(rho, (bool, np.bool_)) or not isinstance(rho, numbers.Real) or not 0 < rho < 1:
        raise TablegenInputError.naming(Argument("rho"), " must be a number in (0, 1) (the test fraction "
                                        "n_test/n_total: a test fold holds at least one item and not all), "
                                        f"got {rho!r}")
    return a, b, runs, float(rho), check_rope(rope, a, b), check_probability(probability)


def _regions(mean, scale, df, rope):
    from scipy.stats import t as student

    if scale == 0:
        return float(mean > rope), float(abs(mean) <= rope), float(mean < -rope)
    above = float(student.sf(rope, df, loc=mean, scale=scale))
    below = float(student.cdf(-rope, df, loc=mean, scale=scale))
    return above, max(0.0, 1.0 - above - below), below


def _fold_statistics(x, y, runs, rho, rope, probability, higher_is_better, names):
    """The checked options and (J, mean, sd, corrected scale) of the fold differences."""
    a, b, runs, rho, rope, probability = _check(x, y, runs, rho, rope, probability)
    names = check_names(names)
    d = (a - b) if check_flag("higher_is_better", higher_is_better) else (b - a)
    J = d.size
    mean, sd = float(d.mean()), float(d.std(ddof=1))
    return names, runs, rho, rope, probability, J, mean, sd, sd * math.sqrt(1.0 / J + rho / (1.0 - rho))


def _t_test(mean: float, scale: float, J: int) -> tuple[float, float]:
    """The corrected resampled t statistic and its two-sided p-value (Student t, J - 1 df)."""
    from scipy.stats import t as student

    t = mean / scale if scale > 0 else (0.0 if mean == 0 else math.copysign(math.inf, mean))
    return float(t), (float(2 * student.sf(abs(t), J - 1)) if scale > 0 else float(mean == 0))


def _posterior(mean: float, scale: float, J: int, rope: float, probability: float) -> tuple:
    """(P(δ > r), P(|δ| <= r), P(δ < -r)) of the correlated Bayesian t-test, and the decision."""
    p = _regions(mean, scale, J - 1, rope)
    above = [k for k in range(3) if p[k] > probability]
    return p, ("a better", "equivalent (ROPE)", "b better")[above[0]] if above else "no decision"


@dataclass(frozen=True)
class CorrelatedBayesianTTest:
    """The correlated Bayesian t-test (Corani & Benavoli 2015) of two algorithms' fold scores.

    Attributes
    ----------
    p_a_better, p_rope, p_b_better : float
        Posterior probabilities of δ > rope, −rope ≤ δ ≤ rope, δ < −rope (exact: Student t).
    decision : str
        "a better", "equivalent (ROPE)", "b better" or "no decision" at ``probability``.
    mean, scale : float
        The posterior's location d̄ and scale s √(1/J + ρ/(1 − ρ)).
    df : int
        J − 1.
    rope, probability, rho : float

    Examples
    --------
    >>> r = correlated_bayesian_ttest([0.81, 0.84, 0.79, 0.85, 0.83], [0.78, 0.80, 0.79, 0.81, 0.80])
    >>> r.decision, round(r.p_a_better, 3)
    ('no decision', 0.911)
    """

    p_a_better: float
    p_rope: float
    p_b_better: float
    decision: str
    mean: float
    scale: float
    df: int
    rope: float
    probability: float
    rho: float


@dataclass(frozen=True)
class CorrectedResampledTTest:
    """Nadeau & Bengio's corrected resampled t-test (Machine Learning 52, 2003) of two algorithms' fold scores.

    Attributes
    ----------
    t : float
        d̄ / (s √(1/J + n_test/n_train)).
    p_value : float
        Two-sided, Student t with ``df`` = J − 1 degrees of freedom.
    df : int
    mean, scale : float
        d̄ and the corrected scale.
    rho : float
        The test fraction n_test / n_total.

    Examples
    --------
    >>> r = corrected_resampled_ttest([0.81, 0.84, 0.79, 0.85, 0.83], [0.78, 0.80, 0.79, 0.81, 0.80])
    >>> round(r.t, 3), round(r.p_value, 4), r.df
    (2.54, 0.064, 4)
    """

    t: float
    p_value: float
    df: int
    mean: float
    scale: float
    rho: float


def correlated_bayesian_ttest(x: ArrayLike, y: ArrayLike, *, runs: int = 1, rho: float | None = None,
                              rope: float = 0.01, probability: float = 0.95,
                              higher_is_better: bool = True) -> CorrelatedBayesianTTest:
    """The correlated Bayesian t-test of two algorithms on one data set from their (repeated) k-fold
    cross-validation scores (Corani & Benavoli, Machine Learning 100, 2015; baycomp's ``CorrelatedTTest`` and
    ``two_on_single``): the posterior of the mean difference is Student t (module docstring).

    Parameters are those of :func:`cross_validated`; it reports this test and the corrected resampled t-test
    together.

    Returns
    -------
    CorrelatedBayesianTTest

    Examples
    --------
    >>> a = [0.81, 0.84, 0.79, 0.85, 0.83, 0.80, 0.86, 0.82, 0.84, 0.83]
    >>> b = [0.78, 0.80, 0.79, 0.81, 0.80, 0.77, 0.83, 0.80, 0.80, 0.79]
    >>> r = correlated_bayesian_ttest(a, b, rope=0.01)
    >>> round(r.p_a_better, 4), r.decision
    (0.9966, 'a better')
    """
    _, _, rho, rope, probability, J, mean, _, scale = _fold_statistics(x, y, runs, rho, rope, probability,
                                                                      higher_is_better, ("A", "B"))
    p, decision = _posterior(mean, scale, J, rope, probability)
    return CorrelatedBayesianTTest(*p, decision, mean, scale, J - 1, rope, probability, rho)


def corrected_resampled_ttest(x: ArrayLike, y: ArrayLike, *, runs: int = 1, rho: float | None = None,
                              higher_is_better: bool = True) -> CorrectedResampledTTest:
    """Nadeau & Bengio's corrected resampled t-test of two algorithms on one data set from their (repeated)
    k-fold cross-validation scores: t = d̄ / (s √(1/J + n_test/n_train)), two-sided p from Student t with J − 1
    degrees of freedom (module docstring).

    Parameters are those of :func:`cross_validated` (``runs``, ``rho``: the test fraction, default 1/k), which
    reports this test and the correlated Bayesian t-test together.

    Returns
    -------
    CorrectedResampledTTest

    Examples
    --------
    >>> a = [0.81, 0.84, 0.79, 0.85, 0.83, 0.80, 0.86, 0.82, 0.84, 0.83]
    >>> b = [0.78, 0.80, 0.79, 0.81, 0.80, 0.77, 0.83, 0.80, 0.80, 0.79]
    >>> r = corrected_resampled_ttest(a, b)
    >>> round(r.t, 3), round(r.p_value, 5)
    (5.235, 0.00054)
    """
    _, _, rho, _, _, J, mean, _, scale = _fold_statistics(x, y, runs, rho, 0.0, 0.95, higher_is_better, ("A", "B"))
    return CorrectedResampledTTest(*_t_test(mean, scale, J), J - 1, mean, scale, rho)


def cross_validated(x: ArrayLike, y: ArrayLike, *, runs: int = 1, rho: float | None = None, rope: float = 0.01,
                    probability: float = 0.95, higher_is_better: bool = True,
                    names: tuple[str, str] = ("A", "B")) -> CrossValidationComparison:
    """The correlated Bayesian t-test and the corrected resampled t-test on two algorithms' fold scores.

    Parameters
    ----------
    x, y : array_like
        Scores of the two algorithms on the same J folds (fold j of run r in the same place in both).
    runs : int
        Repetitions of k-fold cross-validation (J = k × runs).
    rho : float, optional
        Correlation between folds: the test fraction n_test/n_total, in (0, 1); default 1/k = runs/J.
    rope : float
        Half-width of the region of practical equivalence (score units): finite, >= 0, and below 1 where
        every score lies in [0, 1] (a ROPE of 1 would hold every difference of such scores).
    probability : float
        Posterior probability a decision needs, in [0.5, 1).
    higher_is_better : bool
    names : (str, str)
        The names of x and y (two strings).

    Returns
    -------
    CrossValidationComparison

    Examples
    --------
    >>> r = cross_validated([0.8, 0.82, 0.79, 0.81, 0.8], [0.8, 0.81, 0.8, 0.8, 0.81], rope=0.01)
    >>> r.decision, round(r.p_rope, 2)
    ('no decision', 0.79)
    """
    names, runs, rho, rope, probability, J, mean, sd, scale = _fold_statistics(x, y, runs, rho, rope, probability,
                                                                               higher_is_better, names)
    t, p_value = _t_test(mean, scale, J)
    p, decision = _posterior(mean, scale, J, rope, probability)
    return CrossValidationComparison(names[0], names[1], J, runs, rho, mean, sd, scale, J - 1, t,
                                     p_value, rope, probability, *p, decision)
