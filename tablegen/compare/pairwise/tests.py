"""The paired tests of two models on one test set: exact McNemar, and the exact or Monte Carlo swap permutation.

- McNemar (accuracy at a threshold, or 0/1 predictions): of the items exactly one model gets right, b are
  model A's and c model B's; under "equally accurate" b ~ Binomial(b + c, ½) given b + c.  Two-sided exact
  p = min(1, 2 Pr(X <= min(b, c))); mid-p subtracts Pr(X = min(b, c)) once from that sum.  One-sided:
  Pr(X >= b) (A more accurate) or Pr(X <= b).
- Swap permutation (any metric from scores): each item's two values swapped or not, every pattern equally
  likely under exchangeability (:mod:`tablegen.compute.kernels.swaps`); p = Pr(|D*| >= |d|) two-sided
  (D* >= d, D* <= d one-sided), "reaching" within the snap tolerance 1e-9.  Exact over all 2^n patterns
  when n <= :data:`EXACT_SWAP_ITEMS`, else R keyed random patterns: p = (b + 1)/(R + 1) with the 95%
  Clopper–Pearson interval of the exact p.
"""

from __future__ import annotations

import numpy as np

from tablegen.compute.exact.nulls import SNAP_TOLERANCE

#: Items up to which every swap pattern is enumerated (2^16 = 65,536 patterns).
EXACT_SWAP_ITEMS = 16
#: Random swap patterns when none is given.
DEFAULT_SWAPS = 10_000
ALTERNATIVES = ("two-sided", "greater", "less")


def mcnemar_p(b: int, c: int, alternative: str = "two-sided", mid_p: bool = False) -> float:
    """Exact McNemar p-value from the discordant counts (b: only A right, c: only B right).

    Examples
    --------
    >>> round(mcnemar_p(10, 2), 6), round(mcnemar_p(10, 2, mid_p=True), 6), mcnemar_p(3, 3)
    (0.038574, 0.022461, 1.0)
    """
    from scipy.stats import binom

    n = b + c
    if n == 0 or (b == c and alternative == "two-sided"):  # no evidence either way (mid-p too: the whole law)
        return 1.0
    if alternative == "greater":
        tail, point = binom.sf(b - 1, n, 0.5), binom.pmf(b, n, 0.5)
    elif alternative == "less":
        tail, point = binom.cdf(b, n, 0.5), binom.pmf(b, n, 0.5)
    else:
        k = min(b, c)
        tail, point = 2.0 * binom.cdf(k, n, 0.5), 2.0 * binom.pmf(k, n, 0.5)
    p = tail - (0.5 * point if mid_p else 0.0)
    return float(min(1.0, p))


def swap_null(labels: np.ndarray, scores_a: np.ndarray, scores_b: np.ndarray, column: int, k_cut: int, *,
              R: int, key: tuple) -> tuple[np.ndarray, bool]:
    """The differences metric(a) - metric(b) over every swap pattern (exact, n <= EXACT_SWAP_ITEMS) or R keyed
    random ones; (differences, exact)."""
    from scipy.stats import rankdata

    from tablegen.compute.kernels.ranking import mcc_weights
    from tablegen.compute.kernels.swaps import swap_differences

    n = labels.size
    P = int(labels.sum())
    ranks_a, ranks_b = (rankdata(s, method="average") / n for s in (scores_a, scores_b))
    exact = n <= EXACT_SWAP_ITEMS
    count = 2 ** n if exact else R
    out = np.empty(count)
    swap_differences(ranks_a, ranks_b, labels.astype(np.uint8), P, column, k_cut, mcc_weights(P, n - P, n + 1),
                     exact, key[0], key[1], 0, out)
    return out, exact


def swap_p(differences: np.ndarray, observed: float, alternative: str) -> int:
    """How many of ``differences`` reach ``observed`` in the direction of ``alternative`` (snap tolerance)."""
    if alternative == "greater":
        return int(np.count_nonzero(differences >= observed - SNAP_TOLERANCE))
    if alternative == "less":
        return int(np.count_nonzero(differences <= observed + SNAP_TOLERANCE))
    return int(np.count_nonzero(np.abs(differences) >= abs(observed) - SNAP_TOLERANCE))
