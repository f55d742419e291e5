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

- **Two correlated AUCs**: :mod:`tablegen.compare.pairwise.auc_power`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from tablegen.errors import TablegenInputError

ALTERNATIVES = ("two-sided", "greater", "less")
#: Single-core seconds per number of discordant pairs m of the exact power's rejection regions (a few exact
#: McNemar p-values each: measured 0.13 ms at n = 4,000 on an AVX-512 EPYC core), rounded up.
PAIR_SECONDS = 3e-4
#: Single-core seconds per (n, m) step of the sample-size sweep's law of the discordant count, rounded up.
SWEEP_STEP_SECONDS = 2e-9
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

    Examples
    --------
    >>> size = mcnemar_sample_size(0.75, 0.25)
    >>> size.first, size.stable, size.power_stable >= 0.8
    (30, 35, True)
    """

    first: int
    stable: int
    checked_to: int
    power_first: float
    power_stable: float
    target: float


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

    from tablegen.compute.limits import check_time
    from tablegen.compute.validation import check_integer
    from tablegen.errors import Argument

    p10, p01 = _check_probabilities(p10, p01)
    n = check_integer("n", n, 1)
    alpha = _check_common(alpha, alternative)
    check_time(PAIR_SECONDS * (n + 1.0), f"the exact McNemar power at n = {n:,} paired items",
               ("give a smaller ", Argument("n")))
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
    from tablegen.compute.limits import check_time
    from tablegen.compute.validation import check_integer
    from tablegen.errors import Argument

    p10, p01 = _check_probabilities(p10, p01)
    alpha = _check_common(alpha, alternative)
    power = check_power(power)
    max_pairs = check_integer("max_pairs", max_pairs, 1)
    if p10 == p01 or (alternative == "greater" and p10 < p01) or (alternative == "less" and p10 > p01):
        raise TablegenInputError(f"p10 = {p10} and p01 = {p01}: no difference in the direction of alternative = "
                                 f"{alternative!r}, so no test set size gives power above the level")
    approximate = _connor_pairs(p10, p01, alpha, alternative, power)
    if approximate > max_pairs:
        raise TablegenInputError(f"no test set of up to max_pairs = {max_pairs:,} paired items reaches power {power} "
                                 f"(the normal approximation needs about {approximate:,.0f}); raise max_pairs or "
                                 "plan for a larger difference")
    horizon = min(float(max_pairs), 2.0 * math.ceil(approximate) + 100.0)  # where the sweep is expected to stop
    check_time(PAIR_SECONDS * horizon + SWEEP_STEP_SECONDS * horizon ** 2,
               f"the exact McNemar sample-size search to about {horizon:,.0f} paired items",
               ("plan for a larger difference, or a smaller ", Argument("max_pairs")))
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


def check_power(power):
    if isinstance(power, (bool, np.bool_)) or not isinstance(power, (int, float, np.floating)) \
            or not 0.0 < power < 1.0:
        raise TablegenInputError(f"power must be a number in (0, 1), got {power!r}")
    return float(power)
