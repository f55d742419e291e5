"""The paired tests of two models on one test set: exact McNemar, and the exact or Monte Carlo swap permutation.

- McNemar (accuracy at a threshold, or 0/1 predictions): of the items exactly one model gets right, b are
  model A's and c model B's; under "equally accurate" b ~ Binomial(b + c, ½) given b + c.  Two-sided exact
  p = min(1, 2 Pr(X <= min(b, c))); mid-p subtracts Pr(X = min(b, c)) once from that sum.  One-sided:
  Pr(X >= b) (A more accurate) or Pr(X <= b).
- Swap permutation (any metric from scores): each item's two values swapped or not, every pattern equally
  likely under exchangeability (:mod:`tablegen.compute.kernels.swaps`); p = Pr(|D*| >= |d|) two-sided
  (D* >= d, D* <= d one-sided), "reaching" within the snap tolerance 1e-9.  Exact over all 2^n patterns
  when n <= :data:`EXACT_SWAP_ITEMS`; else McDiarmid's bound where it is below what R patterns could resolve,
  or up to R keyed random patterns, stopped at the h-th reaching one (:mod:`.sequential`).
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
              R: int, key: tuple, device: str = "cpu") -> tuple[np.ndarray, bool]:
    """The differences metric(a) - metric(b) over every swap pattern (exact, n <= EXACT_SWAP_ITEMS) or R keyed
    random ones; (differences, exact)."""
    differences, exact = swap_nulls(labels, scores_a, scores_b, [column], k_cut, R=R, key=key, device=device)
    return differences[0], exact


def swap_nulls(labels: np.ndarray, scores_a: np.ndarray, scores_b: np.ndarray, columns, k_cut: int, *,
               R: int, key: tuple, device: str = "cpu") -> tuple[np.ndarray, bool]:
    """:func:`swap_null` of several kernel columns from one pass over the patterns: (differences, one row per
    column, exact).  Each row is the one :func:`swap_null` gives its column alone, bit for bit, on either
    ``device`` (``"cpu"``, or ``"cuda"``: the kernel's CUDA twin, the same values).

    Examples
    --------
    >>> y = np.array([1, 0, 1, 0, 1, 0])
    >>> a, b = np.arange(6.0)[::-1], np.arange(6.0)
    >>> differences, exact = swap_nulls(y, a, b, [1, 2], 0, R=100, key=(np.uint64(1), np.uint64(2)))
    >>> differences.shape, exact, bool(differences[1].max() > 0)
    ((2, 64), True, True)
    """
    n = labels.size
    exact = n <= EXACT_SWAP_ITEMS
    columns = np.asarray(columns, np.int64).reshape(-1)
    out = np.empty((columns.size, 2 ** n if exact else R))
    items, sources, values, y, P, weights = _kernel_arguments(labels, scores_a, scores_b)
    _swap_kernel(columns, exact, device)(items, sources, values, y, P, columns, k_cut, weights, exact, key[0], key[1],
                                         0, out)
    return out, exact


def _swap_kernel(columns: np.ndarray, exact: bool, device: str):
    """The kernel that scores these columns' patterns on ``device``: on the CPU 64 random patterns per walk where the
    lanes score every column (:mod:`tablegen.compute.kernels.swap_lanes`), else the swap kernel or its CUDA twin;
    the same differences, bit for bit."""
    from tablegen.compute.kernels.cuda.device import twin
    from tablegen.compute.kernels.swap_lanes import lane_swap_differences, swap_lanes_apply
    from tablegen.compute.kernels.swaps import swap_differences

    if device == "cpu" and swap_lanes_apply(columns, exact):
        return lane_swap_differences
    return twin(swap_differences, device)


def _scored_patterns(kernel, rows: int) -> int:
    """How many patterns to score for ``rows`` of them: the lane kernel scores whole groups of 64 (the patterns past
    ``rows`` are keyed like every other, and unused), which at 10^6 items costs a sixth of the swap kernel's 39 rows
    that the look at 359 patterns left after 5 groups; other kernels score ``rows``."""
    from tablegen.compute.kernels.swap_lanes import LANES, lane_swap_differences

    return -(-rows // LANES) * LANES if kernel is lane_swap_differences else rows


def swap_counts(labels: np.ndarray, scores_a: np.ndarray, scores_b: np.ndarray, columns, observed, k_cut: int, *,
                R: int, key: tuple, device: str = "cpu", look=None, ranks=None) -> list:
    """The :class:`~.sequential.SwapCounts` of each kernel column ``columns[c]`` against its observed difference
    ``observed[c]`` (kernel units): over every pattern when n <= :data:`EXACT_SWAP_ITEMS`, else over the keyed
    patterns 0, 1, ... in blocks, each column until Besag & Clifford's rule (with the
    :class:`~.sequential.EarlyLook` ``look`` if given) stops all three alternatives or R are drawn (the patterns of
    :func:`swap_nulls`, which the counts equal over the patterns drawn).  ``device`` (``"cpu"`` or ``"cuda"``)
    scores each block with the swap kernel or its CUDA twin: the same counts.  ``ranks``: the two models' midranks
    (:func:`midranks`) where already known.

    Examples
    --------
    >>> y = np.r_[np.ones(15), np.zeros(15)]
    >>> a, b = np.arange(30.0), np.arange(30.0)[::-1]
    >>> found, = swap_counts(y, a, b, [1], [0.0], 0, R=1000, key=(np.uint64(1), np.uint64(2)))
    >>> found.exact, found.of("two-sided")
    (False, (20, 20))
    """
    from tablegen.compare.pairwise.sequential import (
        FIRST_BLOCK,
        LARGEST_BLOCK,
        SEQUENTIAL_HITS,
        SequentialCounter,
        SwapCounts,
        reaching,
    )
    columns = np.asarray(columns, np.int64).reshape(-1)
    observed = np.asarray(observed, np.float64).reshape(-1)
    if labels.size <= EXACT_SWAP_ITEMS:
        differences, _ = swap_nulls(labels, scores_a, scores_b, columns, k_cut, R=R, key=key, device=device)
        total = differences.shape[1]
        return [SwapCounts(tuple(int(r.sum()) for r in reaching(row, d)), (total,) * 3, total, True)
                for row, d in zip(differences, observed)]
    arguments = _kernel_arguments(labels, scores_a, scores_b, ranks)
    counter = SequentialCounter(observed, SEQUENTIAL_HITS, R, look)
    size = FIRST_BLOCK
    while counter.drawn < R and counter.active.any():
        rows = min(size, R - counter.drawn)
        if look is not None and counter.drawn < look.drawn:
            rows = min(rows, look.drawn - counter.drawn)  # no pattern past the look where it may stop every column
        active = columns[counter.active]
        kernel = _swap_kernel(active, False, device)
        out = np.empty((active.size, _scored_patterns(kernel, rows)))
        kernel(*arguments[:5], active, k_cut, arguments[5], False, key[0], key[1], counter.drawn, out)
        counter.add(out[:, :rows])
        size = min(2 * size, LARGEST_BLOCK)
    return [counter.counts(c) for c in range(columns.size)]


def _kernel_arguments(labels: np.ndarray, scores_a: np.ndarray, scores_b: np.ndarray, ranks=None) -> tuple:
    """(items, sources, values, labels as uint8, P, MCC weights): the swap kernel's inputs but the columns
    (``ranks``: the two models' :func:`midranks`, computed here if None)."""
    from tablegen.compute.kernels.orders import descending_order
    from tablegen.compute.kernels.ranking import mcc_weights
    from tablegen.compute.kernels.swaps import swap_order

    n = labels.size
    P = int(labels.sum())
    ranks = (midranks(scores_a), midranks(scores_b)) if ranks is None else ranks
    ranks_a, ranks_b = (r / n for r in ranks)
    orders = (descending_order(scores_a), descending_order(scores_b))  # the ranks' orders: the scores' (kept)
    return (*swap_order(ranks_a, ranks_b, orders), labels.astype(np.uint8), P, mcc_weights(P, n - P, n + 1))


def midranks(scores: np.ndarray) -> np.ndarray:
    """Each item's midrank among one model's scores (ascending, ties averaged: scipy's ``rankdata``).

    Examples
    --------
    >>> midranks(np.array([0.3, 0.1, 0.3])).tolist()
    [2.5, 1.0, 2.5]
    """
    from tablegen.compute.stats import midranks as average_ranks

    return average_ranks(scores)


def column_value(labels: np.ndarray, scores: np.ndarray, column: int) -> float:
    """The registry's value of the metric of kernel column ``column`` (a base column) on one model's scores."""
    from tablegen.compute.kernels.ranking import BASE_COLUMNS
    from tablegen.compute.metrics import get_metric
    from tablegen.compute.metrics_from_scores import threshold_groups

    return float(get_metric(BASE_COLUMNS[column]).score_groups(threshold_groups(labels, scores)))


class SwapNulls:
    """The swap-permutation counts of one report, each pair's patterns drawn once for every metric planned with it.

    A pair's patterns depend on the key (root seed and (P, N)) and R alone, never on the metric, so
    :meth:`counts` asked for one metric of a pair draws patterns for every metric :meth:`plan` named with either
    model of the pair (the metrics whose winner it is) at once, each column until its own sequential rule stops
    it (:func:`swap_counts`), and keeps the counts; a planned metric the bound already settles one-sided (below
    1/(R + 1), :mod:`.sequential`) is not sampled.  Counts asked for with the pair's models the other way round
    are the same counts with "greater" and "less" exchanged (D negated).  Keys hold digests of the labels and
    both score vectors, R and the key: an object asked about other data computes afresh, never answers from the
    wrong pair.  Each array's digest is computed once per array object while it lives: an array must not change in
    place while this object is in use.  Passed explicitly (:func:`tablegen.evaluate` makes one per call,
    on the report's own arrays); ``passes`` counts the pairs sampled.

    Examples
    --------
    >>> y = np.r_[np.ones(10), np.zeros(10)]
    >>> a, b = y + np.linspace(0, 2, 20), np.linspace(0, 2, 20)[::-1]
    >>> nulls = SwapNulls()
    >>> nulls.plan(2, a)  # best_f1 will be tested with a as the winner
    >>> nulls.plan(4, a)  # and average precision
    >>> key = (np.uint64(1), np.uint64(2))
    >>> f1 = nulls.counts(y, a, b, 2, 0, column_value(y, a, 2) - column_value(y, b, 2), R=200, key=key)
    >>> ap = nulls.counts(y, a, b, 4, 0, column_value(y, a, 4) - column_value(y, b, 4), R=200, key=key)
    >>> nulls.passes, ap.patterns
    (1, 200)
    """

    def __init__(self):
        self._digests: dict[int, tuple] = {}
        self._planned: dict[bytes, set] = {}
        self._counts: dict[tuple, object] = {}
        self._values: dict[tuple, float] = {}
        self._ranks: dict[bytes, np.ndarray] = {}
        self._delong_ranks: dict[tuple, tuple] = {}
        self.passes = 0

    def _digest(self, values: np.ndarray) -> bytes:
        """The content digest of ``values`` (:func:`_digest`), computed once per array object while that object lives
        (a weak reference tells a reused id from it): the arrays of one report do not change while it runs, and a
        digest of a 10^6-item vector costs 14 ms (473 of them were 6.5 s of a report at 10^6 items)."""
        import weakref

        found = self._digests.get(id(values))
        if found is not None and found[0]() is values:  # the object itself, still alive: not a reused id
            return found[1]
        digest = _digest(values)
        self._digests[id(values)] = (weakref.ref(values), digest)
        return digest

    def metric_value(self, labels: np.ndarray, scores: np.ndarray, spec) -> float:
        """The registry's value of metric ``spec`` on one model's scores, computed once per report: the first
        question about a model sorts its scores once and keeps every base metric's value from that one sort (a
        sort each cost half of the paired tests' time at 10^6 items when each of 206 questions sorted)."""
        from tablegen.compute.kernels.ranking import BASE_COLUMNS
        from tablegen.compute.metrics import get_metric
        from tablegen.compute.metrics_from_scores import threshold_groups

        model = (self._digest(labels), self._digest(scores))
        found = self._values.get((*model, spec.name))
        if found is None:
            groups = threshold_groups(labels, scores)
            for name in {spec.name, *BASE_COLUMNS}:
                self._values[(*model, name)] = float(get_metric(name).score_groups(groups))
            found = self._values[(*model, spec.name)]
        return found

    def ranks(self, scores: np.ndarray) -> np.ndarray:
        """:func:`midranks` of one model's scores, computed once per report."""
        key = self._digest(scores)
        found = self._ranks.get(key)
        if found is None:
            found = self._ranks[key] = midranks(scores)
        return found

    def delong_ranks(self, labels: np.ndarray, scores: np.ndarray) -> tuple:
        """:func:`~tablegen.compare.pairwise.delong.delong_midranks` of one model's scores, computed once per report
        (the winner's were sorted again for each of its pairs)."""
        from tablegen.compare.pairwise.delong import delong_midranks

        key = (self._digest(labels), self._digest(scores))
        found = self._delong_ranks.get(key)
        if found is None:
            found = self._delong_ranks[key] = delong_midranks(labels, scores)
        return found

    def plan(self, column: int, scores: np.ndarray) -> None:
        """Kernel column ``column`` will be asked for with the model of ``scores`` on one side of its pairs."""
        self._planned.setdefault(self._digest(scores), set()).add(int(column))

    def counts(self, labels: np.ndarray, scores_a: np.ndarray, scores_b: np.ndarray, column: int, k_cut: int,
               observed: float, *, R: int, key: tuple, device: str = "cpu", look=None):
        """:func:`swap_counts` of one column against ``observed`` (its difference, A's value less B's), from a pass
        made for this pair (with the same early ``look``) before or made now (on ``device``) for every column
        planned with either model."""
        a, b, common = self._digest(scores_a), self._digest(scores_b), (self._digest(labels), int(R), int(key[0]),
                                                                         int(key[1]),
                                                              int(k_cut))
        common = (*common, look)
        found = self._counts.get((a, b, *common, column))
        if found is not None:
            return found
        found = self._counts.get((b, a, *common, column))
        if found is not None:
            return found.reversed()
        planned = (self._planned.get(a, set()) | self._planned.get(b, set())) - {column}
        planned = {c for c in planned if (a, b, *common, c) not in self._counts
                   and (b, a, *common, c) not in self._counts}
        columns, differences = [column], [float(observed)]
        from tablegen.compute.kernels.ranking import BASE_COLUMNS
        from tablegen.compute.metrics import get_metric

        ranks = (self.ranks(scores_a), self.ranks(scores_b))
        for c in sorted(planned):
            spec = get_metric(BASE_COLUMNS[c])
            d = self.metric_value(labels, scores_a, spec) - self.metric_value(labels, scores_b, spec)
            if not _settled_by_the_bound(c, labels, scores_a, scores_b, d, R, ranks):
                columns.append(c)
                differences.append(d)
        self.passes += 1
        for c, found in zip(columns, swap_counts(labels, scores_a, scores_b, columns, differences, k_cut, R=R,
                                                 key=key, device=device, look=look, ranks=ranks)):
            self._counts[a, b, *common, c] = found
        return self._counts[a, b, *common, column]


def _settled_by_the_bound(column: int, labels, scores_a, scores_b, observed: float, R: int, ranks=None) -> bool:
    """Whether McDiarmid's one-sided bound in the direction of ``observed`` settles the column (no patterns)."""
    from tablegen.compute.kernels.ranking import BASE_COLUMNS

    if labels.size <= EXACT_SWAP_ITEMS:
        return False
    bound = p_bound(BASE_COLUMNS[column], labels, scores_a, scores_b, observed,
                    "greater" if observed >= 0 else "less", ranks)
    return bound < 1.0 / (R + 1)


def p_bound(metric: str, labels: np.ndarray, scores_a: np.ndarray, scores_b: np.ndarray, observed: float,
            alternative: str, ranks=None) -> float:
    """McDiarmid's bound on the exact swap-permutation p-value (:func:`tablegen.compute.swap_bounds.swap_p_bound`)
    from the two models' scores (``ranks``: their :func:`midranks` where already known)."""
    from tablegen.compute.swap_bounds import has_swap_bound, swap_p_bound

    if not has_swap_bound(metric):
        return 1.0
    ranks_a, ranks_b = (midranks(scores_a), midranks(scores_b)) if ranks is None else ranks
    return swap_p_bound(metric, labels, ranks_a, ranks_b, observed, alternative, SNAP_TOLERANCE)


def _digest(values: np.ndarray) -> bytes:
    from tablegen.compute.kernels.orders import content_digest

    return content_digest(values)
