"""Bayes factors for δ = ψ_A − ψ_B from independent prior and posterior draws.

The interval (ROPE) Bayes factor
--------------------------------
For the region of practical equivalence R = [r₋, r₊] around 0,

    BF₀₁ = [Pr(δ ∈ R | data) / Pr(δ ∉ R | data)] / [Pr(δ ∈ R) / Pr(δ ∉ R)],

the posterior odds of "practically no difference" over its prior odds (BF₁₀ = 1/BF₀₁).  Both masses
are shares of independent draws: the posterior's from the posterior draws, the prior's from draws of
the same model without data.  A share p̂ of S draws has Monte Carlo error √(p̂(1 − p̂)/S); BF₀₁'s
(delta method) is BF₀₁ · √(1/(S p̂(1 − p̂)) + 1/(S' q̂(1 − q̂))).  The 95% interval is rigorous rather
than asymptotic: Clopper–Pearson intervals for the two counts at level √0.95 each hold together with
probability ≥ 0.95 (the two sets of draws are independent), and BF₀₁ rises with the posterior mass and
falls with the prior mass, so its extremes over the two intervals bound it.  When no posterior draw
falls in R (or every one does) only one side is finite: the report is a bound, never 0 or ∞.

Why not the point-null (Savage–Dickey) ratio
--------------------------------------------
p(δ = 0 | data) / p(δ = 0) needs the prior density of δ at 0, and under the paper's priors that is
infinite: θ_j ~ Dir(ω_j(η)) has total concentration 1, so θ_jj ~ Beta(η, 1 − η), which piles up near
1 when η is near 1 (and near 0 when η is near 0); with η ~ U(0, 1) the chance that every θ_jj of one
classifier lies within x of 1 falls only like 1/(M log(1/x)), so ψ has a logarithmic spike at 1 and at 0,
and Pr(|δ| ≤ h) / 2h grows like 1/(h log² h) as h → 0.  A window estimate of the density therefore
grows without limit as its window shrinks (:func:`point_null_ratios` shows it: ``point_null=True``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

#: Half-widths of the windows :func:`point_null_ratios` shows side by side.
POINT_NULL_WINDOWS = (0.05, 0.01, 0.002, 5e-4, 1e-4)
#: Level of each of the two Clopper–Pearson intervals: together they hold with probability 0.95.
_EACH = math.sqrt(0.95)


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None


@dataclass(frozen=True)
class RopeMass:
    """The share of S independent draws of δ inside the ROPE: ``mass`` = ``count`` / ``draws``.

    ``mc_error`` is √(p(1 − p)/S); ``low``/``high`` is Clopper–Pearson's interval at level
    ``level`` (√0.95 inside :class:`IntervalBayesFactor`).
    """

    mass: float
    count: int
    draws: int
    mc_error: float
    low: float
    high: float
    level: float

    def to_dict(self) -> dict:
        return {"mass": self.mass, "count": self.count, "draws": self.draws, "mc_error": self.mc_error,
                "low": self.low, "high": self.high, "level": self.level}


def rope_mass(draws: np.ndarray, rope: tuple[float, float], level: float = 0.95) -> RopeMass:
    """The share of ``draws`` in the closed interval ``rope``, its Monte Carlo error and exact interval.

    Examples
    --------
    >>> m = rope_mass(np.arange(-100, 101), (-10, 10))
    >>> m.count, round(m.mass, 4), bool(m.low < m.mass < m.high)
    (21, 0.1045, True)
    """
    x = np.asarray(draws, dtype=float)
    k, s = int(np.count_nonzero((x >= rope[0]) & (x <= rope[1]))), int(x.size)
    p = k / s
    ci = stats.binomtest(k, s).proportion_ci(level, method="exact")
    return RopeMass(p, k, s, math.sqrt(p * (1 - p) / s), float(ci.low), float(ci.high), level)


def _odds(p: float) -> float:
    return math.inf if p >= 1.0 else p / (1.0 - p)


@dataclass(frozen=True)
class IntervalBayesFactor:
    """The ROPE Bayes factor BF₀₁: posterior odds of δ ∈ ROPE over its prior odds (module docstring).

    ``bf01`` is ``None`` where the draws give only a bound (no posterior draw in the ROPE, or all of
    them, or no prior draw): then ``bound`` is ``"upper"`` (BF₀₁ < ``high``) or ``"lower"`` (BF₀₁ >
    ``low``), or ``"none"`` where neither side is bounded.
    ``low``/``high`` is a 95% interval (``high`` infinite when there is no upper bound).
    ``mc_error`` is the delta-method Monte Carlo error of ``bf01``.

    Examples
    --------
    >>> rng = np.random.default_rng(2)   # posterior N(0, 0.1), prior N(0, 1), ROPE +-0.1: BF01 = 24.8 exactly
    >>> bf = interval_bayes_factor(rng.normal(0, 0.1, 100_000), rng.normal(0, 1, 100_000), (-0.1, 0.1))
    >>> bool(bf.low < 24.84 < bf.high), bf.bound, round(bf.bf10, 2)
    (True, None, 0.04)
    """

    bf01: float | None
    low: float
    high: float
    mc_error: float | None
    rope: tuple[float, float]
    posterior: RopeMass
    prior: RopeMass

    @property
    def bf10(self) -> float | None:
        """1/BF₀₁: evidence that δ lies outside the ROPE."""
        if self.bf01 is None:
            return None
        return math.inf if self.bf01 == 0 else 1.0 / self.bf01

    @property
    def bound(self) -> str | None:
        """``"upper"`` or ``"lower"`` when only a bound is known, ``"none"`` when not even one is (no
        draw of either set in the ROPE, say), ``None`` when BF₀₁ is estimated."""
        if self.bf01 is not None:
            return None
        if self.low > 0 and math.isinf(self.high):
            return "lower"
        return "upper" if self.low == 0 and math.isfinite(self.high) else "none"

    def short_text(self) -> str:
        """BF₀₁ alone, or its bound: ``'ROPE BF01 = 0.219'``, ``'ROPE BF01 < 0.0037'``."""
        if self.bound == "none":
            return "ROPE BF01 not estimated"
        if self.bound == "upper":
            return f"ROPE BF01 < {self.high:.3g}"
        if self.bound == "lower":
            return f"ROPE BF01 > {self.low:.3g}"
        return f"ROPE BF01 = {self.bf01:.3g}"

    def masses_text(self) -> str:
        """The two ROPE masses with their Monte Carlo errors."""
        return (f"Pr(δ in ROPE) = {self.posterior.mass:.4f} ± {self.posterior.mc_error:.1e} posterior, "
                f"{self.prior.mass:.4f} ± {self.prior.mc_error:.1e} prior")

    def text(self) -> str:
        """One line: BF₀₁ with its 95% interval and BF₁₀, or its bound."""
        head = "ROPE Bayes factor BF01"
        if self.bound == "none":
            return (f"{head} not estimated: {self.posterior.count} of {self.posterior.draws:,} posterior and "
                    f"{self.prior.count} of {self.prior.draws:,} prior draws in the ROPE (widen it or draw more)")
        if self.bound == "upper":
            return f"{head} < {self.high:.3g} (BF10 > {1 / self.high:.3g}; no posterior draw in the ROPE)"
        if self.bound == "lower":
            why = "every posterior draw" if self.posterior.count == self.posterior.draws else "no prior draw"
            return f"{head} > {self.low:.3g} (BF10 < {1 / self.low:.3g}; {why} in the ROPE)"
        return f"{head} = {self.bf01:.3g} (95% interval {self.low:.3g} to {self.high:.3g}; BF10 = {self.bf10:.3g})"

    def to_dict(self) -> dict:
        """JSON-ready (no NaN or infinity: an absent value or side is ``None``)."""
        return {"method": "interval (ROPE) Bayes factor", "bf01": self.bf01, "bf10": self.bf10, "low": self.low,
                "high": _finite(self.high),
                "mc_error": self.mc_error, "bound": self.bound, "rope": list(self.rope),
                "posterior_rope_mass": self.posterior.to_dict(), "prior_rope_mass": self.prior.to_dict()}


def interval_bayes_factor(posterior: np.ndarray, prior: np.ndarray, rope: tuple[float, float]) -> IntervalBayesFactor:
    """The ROPE Bayes factor BF₀₁ from independent posterior and prior draws of δ, with a 95% interval.

    Parameters
    ----------
    posterior, prior : ndarray
        Independent draws of δ from its posterior and from its prior (two independent sets).
    rope : (float, float)
        The region of practical equivalence, r₋ < 0 < r₊ (closed).

    Returns
    -------
    IntervalBayesFactor

    Examples
    --------
    Prior N(0, 1), posterior N(0, 0.1²), ROPE ±0.1: BF₀₁ = [0.6827/0.3173] / [0.0797/0.9203] = 24.8.

    >>> rng = np.random.default_rng(1)
    >>> bf = interval_bayes_factor(rng.normal(0, 0.1, 200_000), rng.normal(0, 1, 200_000), (-0.1, 0.1))
    >>> bool(bf.low < 24.84 < bf.high), round(bf.bf01)
    (True, 25)
    >>> interval_bayes_factor(rng.normal(1, 0.1, 10_000), rng.normal(0, 1, 10_000), (-0.1, 0.1)).text()[:25]
    'ROPE Bayes factor BF01 < '
    """
    post, pri = rope_mass(posterior, rope, _EACH), rope_mass(prior, rope, _EACH)
    low = 0.0 if post.low == 0.0 or pri.high >= 1.0 else _odds(post.low) / _odds(pri.high)
    high = math.inf if post.high >= 1.0 or pri.low == 0.0 else _odds(post.high) / _odds(pri.low)
    known = 0 < post.count < post.draws and 0 < pri.count < pri.draws
    bf01 = _odds(post.mass) / _odds(pri.mass) if known else None
    error = None
    if known:
        error = bf01 * math.sqrt(1 / (post.draws * post.mass * (1 - post.mass))
                                 + 1 / (pri.draws * pri.mass * (1 - pri.mass)))
    return IntervalBayesFactor(bf01, low, high, error, (float(rope[0]), float(rope[1])), post, pri)


@dataclass(frozen=True)
class WindowRatio:
    """One window h: the posterior's and the prior's window density at 0 and their ratio, with a 95% interval."""

    half_width: float
    posterior_density: float
    prior_density: float
    ratio: float | None
    low: float
    high: float
    posterior_count: int
    prior_count: int


@dataclass(frozen=True)
class PointNullRatios:
    """Window estimates of the point-null ratio p(δ = 0 | data) / p(δ = 0) at several windows, side by side.

    Not a Bayes factor: the prior density of δ at 0 is infinite under this model (module docstring),
    so the ratio is set by the window, not by the data.  Shown only on request (``point_null=True``).
    """

    rows: tuple[WindowRatio, ...]
    posterior_draws: int
    prior_draws: int

    def text(self) -> str:
        lines = ["Point-null ratio p(δ = 0 | data) / p(δ = 0) by window: NOT a Bayes factor.  The prior density",
                 "of δ at 0 is infinite under these priors, so each estimate is set by its window, not by the data;",
                 "the ROPE Bayes factor is the one that exists.",
                 f"{'window ±h':>10}{'prior p(0)':>12}{'posterior p(0)':>16}{'ratio':>10}  95% interval"]
        for r in self.rows:
            ratio = "-" if r.ratio is None else f"{r.ratio:.3g}"
            high = "inf" if math.isinf(r.high) else f"{r.high:.3g}"
            lines.append(f"{r.half_width:>10g}{r.prior_density:>12.3g}{r.posterior_density:>16.3g}{ratio:>10}  "
                         f"{r.low:.3g} to {high}")
        lines.append(f"({self.posterior_draws:,} posterior and {self.prior_draws:,} prior draws)")
        return "\n".join(lines)

    def to_dict(self) -> dict:
        return {"note": "window estimates of a ratio whose prior density at 0 is infinite: not a Bayes factor",
                "posterior_draws": self.posterior_draws, "prior_draws": self.prior_draws,
                "windows": [{"half_width": r.half_width, "posterior_density": r.posterior_density,
                             "prior_density": r.prior_density, "ratio": r.ratio, "low": r.low,
                             "high": _finite(r.high), "posterior_count": r.posterior_count,
                             "prior_count": r.prior_count} for r in self.rows]}


def window_density(draws: np.ndarray, half_width: float, point: float = 0.0) -> float:
    """The window estimate k / (S · 2h) of the draws' density at ``point``: k of S draws within h of it.

    Examples
    --------
    >>> window_density(np.arange(-1000, 1000) + 0.5, 100.0)  # evenly spread over [-1000, 1000]: 1/2000
    0.0005
    """
    x = np.asarray(draws, dtype=float)
    return int(np.count_nonzero(np.abs(x - point) <= half_width)) / (x.size * 2.0 * half_width)


def point_null_ratios(posterior: np.ndarray, prior: np.ndarray,
                      half_widths: tuple[float, ...] = POINT_NULL_WINDOWS) -> PointNullRatios:
    """Window estimates of p(δ = 0 | data) / p(δ = 0), one per half-width, each with a 95% interval.

    The interval of each row takes Clopper–Pearson intervals of the two counts at √0.95 each; it
    covers the sampling error only, and says nothing of the window's effect (which is the point).

    Examples
    --------
    >>> rng = np.random.default_rng(2)
    >>> table = point_null_ratios(rng.normal(0, 0.01, 100_000), rng.normal(0, 0.1, 100_000), (0.01, 0.001))
    >>> [round(r.ratio) for r in table.rows]  # smooth densities: both windows near the true 10
    [9, 10]
    """
    post, pri = np.asarray(posterior, dtype=float), np.asarray(prior, dtype=float)
    rows = []
    for h in half_widths:
        counts = [int(np.count_nonzero(np.abs(x) <= h)) for x in (post, pri)]
        (p_low, p_high), (q_low, q_high) = [
            stats.binomtest(k, x.size).proportion_ci(_EACH, method="exact") for k, x in zip(counts, (post, pri))]
        scale = pri.size / post.size
        ratio = counts[0] / counts[1] * scale if counts[1] else None
        rows.append(WindowRatio(float(h), window_density(post, h), window_density(pri, h), ratio,
                                p_low / q_high, p_high / q_low if q_low > 0 else math.inf, *counts))
    return PointNullRatios(tuple(rows), int(post.size), int(pri.size))
