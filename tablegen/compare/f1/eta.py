"""The one-dimensional posterior of η in the F1 model, on a grid, and exact sampling from it.

Given η the model is conjugate, so η's posterior is its Beta(α₁, α₂) prior times a product of
Dirichlet–multinomial likelihoods of the confusion rows (Zhang et al., ICDM 2015)::

    p(η | C) ∝ η^(α₁−1) (1−η)^(α₂−1) ∏_j  Γ(η + c_jj)/Γ(η) · ∏_{k≠j} Γ(ω + c_jk)/Γ(ω),   ω = (1−η)/(M−1)

(the Dirichlet–multinomial's Γ(Σω)/Γ(Σω + n_j) is constant because Σ_k ω_jk = 1).  Cells with a zero
count contribute 1, so only nonzero counts enter, grouped by value.

Numerics
--------
- Work in t = logit η, density f(t) = p(η | C) η (1 − η): η near 1 (good classifiers) is spread out
  instead of crushed against the end, and η, 1 − η are computed as expit(±t), never as 1 − η.
- f is unimodal: in η, log p + log η + log(1−η) is a sum of concave terms (log(η + i) and
  log(ω + i) from the Γ ratios, α₁ log η + α₂ log(1−η)), so it is log-concave in η, hence unimodal,
  and t ↦ η is monotone.  The mode is found on a coarse grid (t ∈ [−700, 700], step 0.5) then by
  Brent's method inside the bracketing coarse cells.
- The grid spans the t where log f ≥ log f(mode) − 40 (ends found by Brent's root finder): beyond
  them the density is below e⁻⁴⁰ ≈ 4·10⁻¹⁸ of its peak and, f being unimodal with at worst
  exponential tails there, so is the mass.  ``grid`` points spaced evenly in t (default 2049).
- Normaliser and CDF by the trapezoid rule; the density is taken as linear between grid points, so
  the CDF is quadratic there and is inverted exactly (no interpolation error on top of the
  trapezoid's).  ``quadrature_error`` compares the trapezoid sums on the grid and on every other point
  (a Richardson estimate of the normaliser's relative error).
``tests/compare/test_compare_f1.py`` checks that the density integrates to 1 under adaptive quadrature
(``scipy.integrate.quad``) and that a 16× finer grid changes nothing the report shows.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import brentq, minimize_scalar
from scipy.special import expit, gammaln

#: The grid ends where the log density has dropped this far below its maximum.
LOG_DROP = 40.0
#: Points of the default grid in t = logit η.
DEFAULT_GRID = 2049
_COARSE = np.linspace(-700.0, 700.0, 2801)


@dataclass(frozen=True)
class _Terms:
    """The η-dependent part of the log posterior: nonzero counts grouped by value."""

    m: int
    alpha: tuple[float, float]
    diagonal_values: np.ndarray
    diagonal_multiplicity: np.ndarray
    off_values: np.ndarray
    off_multiplicity: np.ndarray


def _grouped(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    values, multiplicity = np.unique(values[values > 0], return_counts=True)
    return values.astype(float), multiplicity.astype(float)


def eta_terms(counts: np.ndarray, alpha: tuple[float, float]) -> _Terms:
    """Group a confusion matrix's counts for :func:`log_target`."""
    m = counts.shape[0]
    off = counts[~np.eye(m, dtype=bool)]
    return _Terms(m, alpha, *_grouped(np.diag(counts)), *_grouped(off))


def _gamma_ratio(x: np.ndarray, values: np.ndarray, multiplicity: np.ndarray) -> np.ndarray:
    """Σ_v mult_v · (log Γ(x + v) − log Γ(x)) for each x."""
    if values.size == 0:
        return np.zeros_like(x)
    x = x[:, None]
    return ((gammaln(x + values) - gammaln(x)) * multiplicity).sum(axis=1)


def log_target(t, terms: _Terms) -> np.ndarray:
    """Unnormalised log density of t = logit η (prior, likelihood and the Jacobian η(1−η))."""
    t = np.atleast_1d(np.asarray(t, dtype=float))
    eta, eta_bar = expit(t), expit(-t)
    log_eta, log_eta_bar = -np.logaddexp(0.0, -t), -np.logaddexp(0.0, t)
    off = eta_bar / (terms.m - 1)
    return (terms.alpha[0] * log_eta + terms.alpha[1] * log_eta_bar
            + _gamma_ratio(eta, terms.diagonal_values, terms.diagonal_multiplicity)
            + _gamma_ratio(off, terms.off_values, terms.off_multiplicity))


def _scalar(terms: _Terms):
    return lambda t: float(log_target(t, terms)[0])


def _mode(terms: _Terms) -> tuple[float, float]:
    """(t at the maximum of f, log f there)."""
    coarse = log_target(_COARSE, terms)
    i = int(np.argmax(coarse))
    lo, hi = _COARSE[max(i - 1, 0)], _COARSE[min(i + 1, _COARSE.size - 1)]
    f = _scalar(terms)
    best = minimize_scalar(lambda t: -f(t), bounds=(lo, hi), method="bounded", options={"xatol": 1e-10})
    t = float(best.x) if -best.fun >= coarse[i] else float(_COARSE[i])
    return t, f(t)


def _end(terms: _Terms, mode: float, level: float, direction: int) -> float:
    """The t beyond the mode (on the side ``direction``) where log f falls to ``level``."""
    f = _scalar(terms)
    outside = _COARSE[_COARSE > mode] if direction > 0 else _COARSE[_COARSE < mode][::-1]
    inner = mode
    for point in outside:
        if f(point) < level:
            return brentq(lambda t: f(t) - level, min(inner, point), max(inner, point), xtol=1e-12)
        inner = point
    return float(_COARSE[-1] if direction > 0 else _COARSE[0])


@dataclass(frozen=True)
class EtaPosterior:
    """η's posterior on a grid in t = logit η; :meth:`sample` draws from it exactly (inverse CDF).

    Attributes
    ----------
    t : grid points (evenly spaced).
    density : normalised density of t at ``t``.
    cdf : its trapezoid-rule CDF at ``t`` (0 at the first point, 1 at the last).
    mode : t at the density's maximum.
    log_normaliser : log ∫ exp(log_target) dt.
    quadrature_error : relative change of the normaliser on every other grid point, divided by 3.
    """

    terms: _Terms
    t: np.ndarray
    density: np.ndarray
    cdf: np.ndarray
    mode: float
    log_normaliser: float
    quadrature_error: float

    def logpdf(self, eta) -> np.ndarray:
        """Normalised log density of η itself (from the formula, not the grid)."""
        eta = np.asarray(eta, dtype=float)
        t = np.log(eta) - np.log1p(-eta)
        return log_target(t, self.terms) - self.log_normaliser - np.log(eta) - np.log1p(-eta)

    def mean_eta(self) -> float:
        """E[η] by the trapezoid rule on the grid."""
        return float(np.trapezoid(expit(self.t) * self.density, self.t))

    def sample(self, uniforms: np.ndarray) -> np.ndarray:
        """t = F⁻¹(u) for each u, F the CDF of the piecewise-linear density through the grid values."""
        u = np.asarray(uniforms, dtype=float)
        i = np.clip(np.searchsorted(self.cdf, u, side="right") - 1, 0, self.t.size - 2)
        h = self.t[1] - self.t[0]
        left, slope = self.density[i], (self.density[i + 1] - self.density[i]) / h
        need = np.maximum(u - self.cdf[i], 0.0)
        # F(t_i + d) = cdf_i + left d + slope d²/2; the stable root of that quadratic:
        d = 2.0 * need / (left + np.sqrt(np.maximum(left * left + 2.0 * slope * need, 0.0)))
        return self.t[i] + np.minimum(np.nan_to_num(d, nan=0.0, posinf=h), h)


def eta_posterior(counts: np.ndarray, alpha: tuple[float, float], grid: int = DEFAULT_GRID) -> EtaPosterior:
    """η's posterior for one confusion matrix (validated: square, integer counts, no empty row).

    Examples
    --------
    >>> post = eta_posterior(np.array([[40, 2, 0], [3, 30, 1], [0, 4, 20]]), (1.0, 1.0))
    >>> round(float(np.trapezoid(post.density, post.t)), 12)
    1.0
    >>> round(post.mean_eta(), 3)  # three rows say little about η: a wide posterior
    0.631
    """
    terms = eta_terms(np.asarray(counts, dtype=float), alpha)
    mode, peak = _mode(terms)
    lo, hi = _end(terms, mode, peak - LOG_DROP, -1), _end(terms, mode, peak - LOG_DROP, +1)
    t = np.linspace(lo, hi, grid)
    log_f = log_target(t, terms) - peak
    f = np.exp(log_f)
    h = t[1] - t[0]
    steps = 0.5 * h * (f[1:] + f[:-1])
    area = steps.sum()
    coarse = np.trapezoid(f[::2], t[::2]) if grid % 2 == 1 else area
    cdf = np.concatenate([[0.0], np.cumsum(steps)]) / area
    return EtaPosterior(terms, t, f / area, cdf, mode, float(peak + np.log(area)),
                        float(abs(coarse - area) / (3.0 * area)))
