"""Results of the Bayesian F1 comparison: one classifier's ψ, and δ = ψ_A − ψ_B with its decision."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from tablegen.compare.f1.bayes_factor import IntervalBayesFactor, PointNullRatios
from tablegen.compare.f1.summary import DeltaSummary, Summary, decision_text
from tablegen.compare.f1.validation import F1Prior

if TYPE_CHECKING:
    import os

    from matplotlib.figure import Figure

_WHERE = {"≈": "inside the ROPE", "≫": "wholly right of the ROPE", "≪": "wholly left of the ROPE",
          ">": "overlapping the ROPE", "<": "overlapping the ROPE", "?": "overlapping the ROPE"}


@dataclass(frozen=True)
class EtaInfo:
    """η's posterior grid: mean and mode of η, grid points, its ends in t = logit η, quadrature error."""

    mean: float
    mode: float
    grid_points: int
    t_low: float
    t_high: float
    quadrature_error: float


def _first_upper(text: str) -> str:
    return text[:1].upper() + text[1:]


def _share(p: float, draws: int) -> str:
    if p == 0.0:
        return f"0 (none of {draws:,} draws)"
    if p == 1.0:
        return f"1 (all {draws:,} draws)"
    return f"{p:.4f}"


@dataclass(frozen=True, eq=False)
class F1Posterior:
    """One classifier's posterior of ψ (micro or macro F1): ``summary``, ``draws`` and the observed F1.

    Made by :func:`tablegen.compare.f1_score_posterior` (and, one per classifier, by
    :func:`tablegen.compare.f1_posterior`).

    Examples
    --------
    >>> from tablegen.compare import f1_score_posterior
    >>> post = f1_score_posterior([[45, 3, 2], [4, 40, 6], [1, 2, 47]], average="micro", samples=20_000, seed=1)
    >>> post.observed, post.samples, post.draws.shape
    (0.88, 20000, (20000,))
    >>> s = post.summary
    >>> round(s.mean, 4), s.hdi_mass, round(s.hdi_low, 4), round(s.hdi_high, 4)
    (0.8731, 0.95, 0.819, 0.9227)
    """

    average: str
    observed: float
    summary: Summary
    draws: np.ndarray = field(repr=False)
    seed: int
    prior: F1Prior
    eta: EtaInfo

    @property
    def samples(self) -> int:
        return int(self.draws.size)

    def to_dict(self) -> dict:
        """Everything but the draws, JSON-ready."""
        return {"average": self.average, "observed": self.observed, "samples": self.samples, "seed": self.seed,
                "prior": asdict(self.prior), **self.summary.to_dict(), "eta": asdict(self.eta)}

    def sentence(self) -> str:
        s = self.summary
        return (f"{self.average} F1 = {self.observed:.4f} on the test set; posterior mean {s.mean:.4f} "
                f"(sd {s.sd:.4f}, Monte Carlo error {s.mc_error:.1e}), {s.hdi_mass:.0%} HDI "
                f"{s.hdi_low:.4f} to {s.hdi_high:.4f} ({self.samples:,} independent draws, seed {self.seed}).")


@dataclass(frozen=True, eq=False)
class F1Comparison:
    """δ = ψ_A − ψ_B: its summary, the ROPE Bayes factor and the decision.

    ``decision`` is one of ≈, ≫, ≪, >, < (see :mod:`tablegen.compare.f1.summary`), read "A ≫ B".
    ``bayes_factor`` is the interval (ROPE) Bayes factor (:class:`.IntervalBayesFactor`); ``point_null``
    holds window estimates of the point-null ratio only when asked for (``point_null=True``), since
    under these priors it is not a property of the data (:mod:`tablegen.compare.f1.bayes_factor`).
    Made by :func:`tablegen.compare.f1_posterior`.

    Examples
    --------
    >>> from tablegen.compare import f1_posterior
    >>> a = [[45, 3, 2], [4, 40, 6], [1, 2, 47]]
    >>> b = [[40, 6, 4], [8, 33, 9], [3, 5, 42]]
    >>> result = f1_posterior(a, b, rope=0.01, samples=20_000, seed=1)
    >>> result.decision, result.samples, round(result.observed_delta, 4), result.a.observed > result.b.observed
    ('≫', 20000, 0.1144, True)
    >>> print(result.table(names=("A", "B")))  # doctest: +NORMALIZE_WHITESPACE
            observed      mean       sd  MC error  95% HDI                in ROPE   δ < 0   δ > 0
    ψ(A)      0.8791    0.8712   0.0270   1.9e-04  [0.8162, 0.9207]
    ψ(B)      0.7647    0.7574   0.0347   2.5e-04  [0.6877, 0.8224]
    δ        +0.1144   +0.1138   0.0439   3.1e-04  [+0.0292, +0.2013]      0.0066  0.0045  0.9955
    ROPE (-0.01, +0.01); 20,000 independent draws (shares ± 6.6e-04); μ joint; seed 1
    ROPE Bayes factor BF01 = 0.213 (95% interval 0.168 to 0.266; BF10 = 4.7)
    from Pr(δ in ROPE) = 0.0066 ± 5.7e-04 posterior, 0.0303 ± 3.8e-04 prior
    decision: A ≫ B (A is clearly better than B)
    """

    average: str
    rope: tuple[float, float]
    mu: str
    seed: int
    prior: F1Prior
    a: F1Posterior
    b: F1Posterior
    summary: DeltaSummary
    bayes_factor: IntervalBayesFactor
    decision: str
    delta: np.ndarray = field(repr=False)
    prior_delta: np.ndarray = field(repr=False)
    point_null: PointNullRatios | None = None

    @property
    def samples(self) -> int:
        return int(self.delta.size)

    @property
    def observed_delta(self) -> float:
        """The difference of the two matrices' own F1."""
        return self.a.observed - self.b.observed

    def to_dict(self) -> dict:
        """Everything but the draws, JSON-ready."""
        return {"average": self.average, "rope": list(self.rope), "mu": self.mu, "samples": self.samples,
                "prior_samples": int(self.prior_delta.size), "seed": self.seed, "prior": asdict(self.prior),
                "decision": self.decision, "meaning": decision_text(self.decision),
                "observed_delta": self.observed_delta, "delta": self.summary.to_dict(),
                "bayes_factor": self.bayes_factor.to_dict(),
                **({"point_null_ratios": self.point_null.to_dict()} if self.point_null is not None else {}),
                "a": self.a.to_dict(), "b": self.b.to_dict(), "sentence": self.sentence()}

    def sentence(self, names: tuple[str, str] = ("A", "B")) -> str:
        """The answer in words, the classifiers called ``names``."""
        s, d, (a, b) = self.summary, self.decision, names
        side = (f"Pr(δ < 0) = {_share(s.below_zero, self.samples)}" if d in "<≪"
                else f"Pr(δ > 0) = {_share(s.above_zero, self.samples)}" if d in ">≫"
                else f"Pr(δ in ROPE) = {_share(s.in_rope, self.samples)}")
        return (f"{a} {d} {b} on {self.average} F1: δ = ψ({a}) − ψ({b}) has posterior mean {s.mean:+.4f} and "
                f"{s.hdi_mass:.0%} HDI [{s.hdi_low:+.4f}, {s.hdi_high:+.4f}], {_WHERE[d]} ({self.rope[0]:+g}, "
                f"{self.rope[1]:+g}); {side}; {self.bayes_factor.text()}. {_first_upper(decision_text(d, a, b))}.")

    def table(self, names: tuple[str, str] = ("A", "B")) -> str:
        """The paper's Table IV layout: ψ of each classifier and δ, then the ROPE Bayes factor and the decision.

        With ``point_null=True`` the window estimates of the point-null ratio follow, side by side.
        """
        n, width = self.samples, max(6, *(len(x) + 4 for x in names))
        lines = [f"{'':{width}}{'observed':>10}{'mean':>10}{'sd':>9}{'MC error':>10}  "
                 f"{f'{self.summary.hdi_mass:.0%} HDI':<21}{'in ROPE':>9}{'δ < 0':>8}{'δ > 0':>8}"]
        for name, post in zip(names, (self.a, self.b)):
            s = post.summary
            lines.append(f"{f'ψ({name})':{width}}{post.observed:>10.4f}{s.mean:>10.4f}{s.sd:>9.4f}{s.mc_error:>10.1e}  "
                         f"[{s.hdi_low:.4f}, {s.hdi_high:.4f}]")
        s = self.summary
        lines.append(f"{'δ':{width}}{self.observed_delta:>+10.4f}{s.mean:>+10.4f}{s.sd:>9.4f}{s.mc_error:>10.1e}  "
                     f"{f'[{s.hdi_low:+.4f}, {s.hdi_high:+.4f}]':<21}{s.in_rope:>9.4f}{s.below_zero:>8.4f}"
                     f"{s.above_zero:>8.4f}")
        lines.append(f"ROPE ({self.rope[0]:+g}, {self.rope[1]:+g}); {n:,} independent draws (shares ± "
                     f"{s.share_mc_error:.1e}); μ {self.mu}; seed {self.seed}")
        lines.append(f"{self.bayes_factor.text()} from {self.bayes_factor.masses_text()}")
        lines.append(f"decision: {names[0]} {self.decision} {names[1]} ({decision_text(self.decision, *names)})")
        if self.point_null is not None:
            lines.append(self.point_null.text())
        return "\n".join(lines)

    def plot(self, path: str | os.PathLike[str] | None = None, labels: tuple[str, str] = ("A", "B")) -> Figure:
        """δ's posterior, its HDI, the ROPE and the decision (:func:`tablegen.compare.f1.plot.plot_f1_comparison`)."""
        from tablegen.compare.f1.plot import plot_f1_comparison  # matplotlib is optional

        return plot_f1_comparison(self, path=path, labels=labels)
