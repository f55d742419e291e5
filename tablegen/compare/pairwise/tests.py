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
    differences, exact = swap_nulls(labels, scores_a, scores_b, [column], k_cut, R=R, key=key)
    return differences[0], exact


def swap_nulls(labels: np.ndarray, scores_a: np.ndarray, scores_b: np.ndarray, columns, k_cut: int, *,
               R: int, key: tuple) -> tuple[np.ndarray, bool]:
    """:func:`swap_null` of several kernel columns from one pass over the patterns: (differences, one row per
    column, exact).  Each row is the one :func:`swap_null` gives its column alone, bit for bit.

    Examples
    --------
    >>> y = np.array([1, 0, 1, 0, 1, 0])
    >>> a, b = np.arange(6.0)[::-1], np.arange(6.0)
    >>> differences, exact = swap_nulls(y, a, b, [1, 2], 0, R=100, key=(np.uint64(1), np.uint64(2)))
    >>> differences.shape, exact, bool(differences[1].max() > 0)
    ((2, 64), True, True)
    """
    from scipy.stats import rankdata

    from tablegen.compute.kernels.ranking import mcc_weights
    from tablegen.compute.kernels.swaps import swap_differences, swap_order

    n = labels.size
    P = int(labels.sum())
    ranks_a, ranks_b = (rankdata(s, method="average") / n for s in (scores_a, scores_b))
    exact = n <= EXACT_SWAP_ITEMS
    columns = np.asarray(columns, np.int64).reshape(-1)
    out = np.empty((columns.size, 2 ** n if exact else R))
    swap_differences(*swap_order(ranks_a, ranks_b), labels.astype(np.uint8), P, columns, k_cut,
                     mcc_weights(P, n - P, n + 1), exact, key[0], key[1], 0, out)
    return out, exact


class SwapNulls:
    """The swap nulls of one report, each pair's computed in one pass for every metric planned with it.

    A pair's patterns depend on the key (root seed and (P, N)) and R alone, never on the metric, so
    :meth:`differences` asked for one metric of a pair scores on the same patterns every metric :meth:`plan`
    named with either model of the pair (the metrics whose winner it is), keeps those rows, and hands each
    out once when it is asked for (then forgets it: memory holds only rows not yet asked for).  A row asked
    for with the pair's models the other way round is the row negated, which is the difference the kernel
    gives that way round (x - y = -(y - x) in floating point; a zero may come back as -0.0, which every
    p-value counts alike).  Keys hold digests of the labels and both score vectors, R and the key: an object
    asked about other data computes afresh, never answers from the wrong pair.  Passed explicitly
    (:func:`tablegen.evaluate` makes one per call); ``passes`` counts the kernel passes.

    Examples
    --------
    >>> y = np.r_[np.ones(10), np.zeros(10)]
    >>> a, b = y + np.linspace(0, 2, 20), np.linspace(0, 2, 20)[::-1]
    >>> nulls = SwapNulls()
    >>> nulls.plan(2, a)  # best_f1 will be tested with a as the winner
    >>> nulls.plan(4, a)  # and average precision
    >>> key = (np.uint64(1), np.uint64(2))
    >>> f1, _ = nulls.differences(y, a, b, 2, 0, R=200, key=key)
    >>> ap, _ = nulls.differences(y, a, b, 4, 0, R=200, key=key)
    >>> nulls.passes, bool(np.array_equal(ap, swap_null(y, a, b, 4, 0, R=200, key=key)[0]))
    (1, True)
    """

    def __init__(self):
        self._planned: dict[bytes, set] = {}
        self._rows: dict[tuple, tuple[np.ndarray, bool]] = {}
        self.passes = 0

    def plan(self, column: int, scores: np.ndarray) -> None:
        """Kernel column ``column`` will be asked for with the model of ``scores`` on one side of its pairs."""
        self._planned.setdefault(_digest(scores), set()).add(int(column))

    def differences(self, labels: np.ndarray, scores_a: np.ndarray, scores_b: np.ndarray, column: int, k_cut: int,
                    *, R: int, key: tuple) -> tuple[np.ndarray, bool]:
        """:func:`swap_null`'s answer, from a pass made for this pair before or made now for every column
        planned with either model."""
        a, b, common = _digest(scores_a), _digest(scores_b), (_digest(labels), int(R), int(key[0]), int(key[1]),
                                                              int(k_cut))
        found = self._rows.pop((a, b, *common, column), None)
        if found is not None:
            return found
        found = self._rows.pop((b, a, *common, column), None)
        if found is not None:
            return -found[0], found[1]
        planned = (self._planned.get(a, set()) | self._planned.get(b, set())) - {column}
        columns = sorted({column} | {c for c in planned if (a, b, *common, c) not in self._rows
                                     and (b, a, *common, c) not in self._rows})
        differences, exact = swap_nulls(labels, scores_a, scores_b, columns, k_cut, R=R, key=key)
        self.passes += 1
        for c, row in zip(columns, differences):
            if c != column:
                self._rows[a, b, *common, c] = row, exact
        return differences[columns.index(column)], exact


def _digest(values: np.ndarray) -> bytes:
    import hashlib

    return hashlib.blake2b(np.ascontiguousarray(values, np.float64).tobytes(), digest_size=16).digest()


def swap_p(differences: np.ndarray, observed: float, alternative: str) -> int:
    """How many of ``differences`` reach ``observed`` in the direction of ``alternative`` (snap tolerance)."""
    if alternative == "greater":
        return int(np.count_nonzero(differences >= observed - SNAP_TOLERANCE))
    if alternative == "less":
        return int(np.count_nonzero(differences <= observed + SNAP_TOLERANCE))
    return int(np.count_nonzero(np.abs(differences) >= abs(observed) - SNAP_TOLERANCE))
