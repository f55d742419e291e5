"""Summaries of posterior draws: HDI, ROPE shares and the decision (the Bayes factor: :mod:`.f1_bayes_factor`).

Everything here works on independent draws (the F1 sampler's are), so a mean's Monte Carlo error is
sd/√S and a share's is √(p(1 − p)/S).

Decision, for δ = ψ_A − ψ_B, its 95% HDI [l, h] and the ROPE (r₋, r₊) around 0:

====== ==============================================================================
``≈``  the HDI lies inside the ROPE: r₋ ≤ l and h ≤ r₊ (practically equivalent)
``≫``  the HDI lies wholly right of the ROPE: l > r₊ (A better)
``≪``  the HDI lies wholly left of the ROPE: h < r₋ (B better)
``>``  otherwise, and δ is mostly above 0: Pr(δ > 0) ≥ Pr(δ < 0)
``<``  otherwise, and δ is mostly below 0: Pr(δ < 0) > Pr(δ > 0)
====== ==============================================================================
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np

#: What each decision says, in words, for classifiers named {a} and {b}.
DECISIONS = {"≈": "{a} and {b} are practically equivalent", "≫": "{a} is clearly better than {b}",
             "≪": "{a} is clearly worse than {b}", ">": "undecided, leaning to {a}",
             "<": "undecided, leaning to {b}", "?": "undecided, leaning to neither"}


def decision_text(decision: str, a: str = "A", b: str = "B") -> str:
    """The decision in words.

    Examples
    --------
    >>> decision_text("≫", "SVM", "kNN")
    'SVM is clearly better than kNN'
    """
    return DECISIONS[decision].format(a=a, b=b)


def hdi(draws: np.ndarray, mass: float = 0.95) -> tuple[float, float]:
    """The shortest interval holding ⌈mass·S⌉ of the S draws (highest density interval).

    Examples
    --------
    >>> hdi(np.arange(101.0), 0.9)
    (0.0, 90.0)
    """
    x = np.sort(np.asarray(draws, dtype=float))
    inside = min(max(int(math.ceil(mass * x.size)), 1), x.size)
    widths = x[inside - 1:] - x[:x.size - inside + 1]
    i = int(np.argmin(widths))
    return float(x[i]), float(x[i + inside - 1])


def decide(interval: tuple[float, float], rope: tuple[float, float], below: float, above: float,
           margin: float = 0.0) -> str:
    """The decision symbol (module docstring) from the HDI, the ROPE and Pr(δ < 0), Pr(δ > 0).

    Where the HDI overlaps the ROPE, ``<``/``>`` say which side of 0 holds more of δ; ``?`` where the
    two shares differ by no more than ``margin`` (their Monte Carlo error: a coin flip leans nowhere).

    Examples
    --------
    >>> decide((0.01, 0.03), (-0.005, 0.005), 0.0, 1.0), decide((-0.004, 0.002), (-0.005, 0.005), 0.7, 0.3)
    ('≫', '≈')
    >>> decide((-0.02, 0.001), (-0.005, 0.005), 0.9, 0.1), decide((-0.02, 0.02), (-0.005, 0.005), 0.5, 0.5)
    ('<', '?')
    """
    low, high = interval
    if rope[0] <= low and high <= rope[1]:
        return "≈"
    if low > rope[1]:
        return "≫"
    if high < rope[0]:
        return "≪"
    if abs(above - below) <= margin:
        return "?"
    return "<" if below > above else ">"


@dataclass(frozen=True)
class Summary:
    """Posterior mean, sd, Monte Carlo error of the mean (sd/√S) and HDI of one quantity's draws."""

    mean: float
    sd: float
    mc_error: float
    hdi_low: float
    hdi_high: float
    hdi_mass: float

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class DeltaSummary(Summary):
    """The paper's Table IV row for δ: :class:`Summary` plus the shares around 0 and the ROPE.

    ``share_mc_error`` is the largest Monte Carlo error of the five shares, √(p(1 − p)/S).
    """

    below_zero: float = 0.0
    above_zero: float = 0.0
    in_rope: float = 0.0
    left_of_rope: float = 0.0
    right_of_rope: float = 0.0
    share_mc_error: float = 0.0


def summarize(draws: np.ndarray, mass: float = 0.95) -> Summary:
    """Mean, sd, Monte Carlo error and HDI of independent draws.

    Examples
    --------
    >>> s = summarize(np.linspace(0.0, 1.0, 101) ** 2, 0.9)
    >>> round(s.mean, 6), (s.hdi_low, s.hdi_high)
    (0.335, (0.0, 0.81))
    """
    x = np.asarray(draws, dtype=float)
    sd = float(x.std(ddof=1))
    return Summary(float(x.mean()), sd, sd / math.sqrt(x.size), *hdi(x, mass), mass)


def summarize_delta(draws: np.ndarray, rope: tuple[float, float], mass: float = 0.95) -> DeltaSummary:
    """:func:`summarize` plus the shares of the draws below/above 0 and inside/left/right of the ROPE.

    Examples
    --------
    >>> s = summarize_delta(np.linspace(-0.01, 0.03, 401), (-0.005, 0.005))
    >>> round(s.mean, 6), round(s.in_rope, 3), s.below_zero < s.above_zero
    (0.01, 0.249, True)
    """
    x = np.asarray(draws, dtype=float)
    shares = [float(np.mean(c)) for c in (x < 0, x > 0, (x >= rope[0]) & (x <= rope[1]), x < rope[0], x > rope[1])]
    worst = max(p * (1 - p) for p in shares)
    return DeltaSummary(*asdict(summarize(x, mass)).values(), *shares, math.sqrt(worst / x.size))


def observed_f1(confusion: np.ndarray, average: str) -> float:
    """The F1 of a confusion matrix: micro (= accuracy, single-label) or macro (mean of per-class F1).

    Examples
    --------
    >>> c = np.array([[8, 2], [1, 9]])
    >>> observed_f1(c, "micro"), round(observed_f1(c, "macro"), 4)
    (0.85, 0.8496)
    """
    if average == "micro":
        return float(np.trace(confusion) / confusion.sum())
    return float(per_class_f1(confusion).mean())


def per_class_f1(confusion: np.ndarray) -> np.ndarray:
    """F1 of each class, 2 c_kk / (n_k + Σ_u c_uk): 0 for a class never predicted correctly.

    Examples
    --------
    >>> per_class_f1(np.array([[8, 2], [1, 9]])).round(4).tolist()
    [0.8421, 0.8571]
    """
    c = np.asarray(confusion, dtype=float)
    return 2.0 * np.diag(c) / (c.sum(axis=1) + c.sum(axis=0))
