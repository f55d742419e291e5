"""A rigorous upper bound on the exact swap-permutation p-value (over all 2^n swap patterns), from McDiarmid's
inequality: no pattern is drawn.

Under the swap null each item's two values are swapped or not with probability ½, independently, and the paired
difference D = metric(A') - metric(B') is a function of the n independent flags.  Swapping every item exchanges
A' and B', so D is symmetric about 0 and E D = 0.  Flipping item i's flag moves item i's score in A' and in B'
and nothing else, so it changes D by at most 2 c_i, where c_i bounds how much one metric can change when one item
of its class moves to any score (the other scores and every label fixed).  McDiarmid's bounded-differences
inequality gives, for t > 0,

    Pr(D >= t) <= exp(-2 t^2 / sum_i (2 c_i)^2)

and the same for Pr(D <= -t); two-sided, twice that.  An item whose two values are equal (the same within-model
midrank in both models) changes nothing when swapped: its c_i is 0.

The constants (labels fixed, P positives and N negatives, n = P + N; each best-threshold metric is a maximum over
every threshold t of the real line, k = 0 and k = n included, and moving one item's score changes only that
item's prediction at each t, so the maximum moves by at most the largest change at one threshold — for best F1
only at a threshold where the larger of the two values is at least the all-positive value, below):

- ``best_accuracy``: (TP + TN)/n at each t moves by at most 1/n.  c_i = 1/n.
- ``best_balanced_accuracy``: (TP/P + TN/N)/2 moves by 1/(2P) (a positive) or 1/(2N) (a negative).
- ``auc``: a positive takes part in N of the PN pairs, each worth at most 1: 1/P; a negative 1/N.
- ``best_f1``: F1(t) = 2 TP/(P + k), k the items predicted positive.  A negative moves k by one:
  |2TP/s - 2TP/(s + 1)| = F/(s + 1), s = P + k >= P + TP, F = 2TP/s <= 1, so s >= P/(1 - F/2) and the change is
  at most F (1 - F/2)/(P + 1 - F/2) <= 1/(2P + 1).  A positive moves TP and k by one: the change is
  2(s - TP)/(s(s + 1)), s = P + k of the lower state.  The all-positive threshold (k = n) always gives
  f0 = 2P/(2P + N), before and after the move, so max F - max G <= F(t*) - G(t*) at F's maximiser t*, where
  F(t*) >= f0: with the higher value 2(TP + 1)/(s + 1) >= f0 the change is at most (2 - f0)/s and
  s >= (P - 1 + f0/2)/(1 - f0/2), so at most (2 - f0)^2/(2P - 2 + f0); also at most 2/(P + 1) (TP = FP = 0).
  c_i = min(2/(P + 1), (2 - f0)^2/(2P - 2 + f0)) for a positive, 1/(2P + 1) for a negative.
- ``average_precision`` and ``best_mcc`` have no constant here (bound 1): average precision's is Θ(log P / P)
  for a negative (negatives ranked first, one moved to the bottom, changes AP by (H_{P+1} - 1)/P), so the bound
  would need a difference of order sqrt(n) log P / P (over 1 at n = 10^4, P = 3,000); best MCC moves by order
  1/sqrt(P) where few items are predicted positive.  A constant for average precision from the data (the most item
  i's move between its two values can change it over every choice of the other items' values, bounded through
  the counts of items whose both values lie above a threshold) is no help either: on two models with independent
  noise it needs a difference above 2.4 at n = 10^4 (the worst choice puts every other item at its lower value).

``tests/compute/test_swap_bounds.py`` checks every constant by brute force (the largest change of the registry's
scorer over every single-item move, exhaustively at tiny n and on random and adversarial data) and the bound
against the exact p-value over every pattern.

The differences are floating-point values of the metrics; they differ from the exact ones by a few ulps, so the
bound is taken at t = |d| - tolerance - 1e-12 (``tolerance``: the p-value counts a pattern reaching d within it).
"""

from __future__ import annotations

import math

import numpy as np

#: Rounding of the metrics' floating-point values, below the p-value's snap tolerance.
ROUNDING = 1e-12


def _classes(labels) -> tuple[np.ndarray, int, int]:
    y = np.asarray(labels) == 1
    return y, int(y.sum()), int(y.size - y.sum())


def best_accuracy_constants(labels) -> np.ndarray:
    """Best accuracy: 1/n for every item (the registry's ``swap_constant_routine``; proof in the module docstring).

    Examples
    --------
    >>> best_accuracy_constants(np.array([1, 0, 0, 0])).tolist()
    [0.25, 0.25, 0.25, 0.25]
    """
    return np.full(np.asarray(labels).size, 1.0 / np.asarray(labels).size)


def best_balanced_accuracy_constants(labels) -> np.ndarray:
    """Best balanced accuracy: 1/(2P) for a positive, 1/(2N) for a negative.

    Examples
    --------
    >>> best_balanced_accuracy_constants(np.array([1, 0, 0, 0])).tolist()
    [0.5, 0.16666666666666666, 0.16666666666666666, 0.16666666666666666]
    """
    y, P, N = _classes(labels)
    return np.where(y, 1.0 / (2 * P), 1.0 / (2 * N))


def auc_constants(labels) -> np.ndarray:
    """AUC: 1/P for a positive, 1/N for a negative.

    Examples
    --------
    >>> auc_constants(np.array([1, 1, 0])).tolist()
    [0.5, 0.5, 1.0]
    """
    y, P, N = _classes(labels)
    return np.where(y, 1.0 / P, 1.0 / N)


def best_f1_constants(labels) -> np.ndarray:
    """Best F1: min(2/(P + 1), (2 - f0)^2/(2P - 2 + f0)) for a positive (f0 = 2P/(2P + N), the all-positive F1 the
    maximum never falls below), 1/(2P + 1) for a negative.

    Examples
    --------
    >>> [round(c, 4) for c in best_f1_constants(np.array([1, 1, 0, 0])).tolist()]
    [0.6667, 0.6667, 0.2, 0.2]
    """
    y, P, N = _classes(labels)
    f0 = 2 * P / (2 * P + N)
    refined = (2 - f0) ** 2 / (2 * P - 2 + f0) if 2 * P - 2 + f0 > 0 else math.inf
    return np.where(y, min(2 / (P + 1), refined), 1.0 / (2 * P + 1))


def bounded_metrics() -> tuple[str, ...]:
    """The registry's metrics with a bounded-difference constant (:attr:`Metric.swap_constant_routine`).

    Examples
    --------
    >>> bounded_metrics()
    ('auc', 'best_accuracy', 'best_f1', 'best_balanced_accuracy')
    """
    from tablegen.compute.metrics import BASE_METRICS, get_metric

    return tuple(name for name in BASE_METRICS if get_metric(name).swap_constant_routine is not None)


def has_swap_bound(metric: str) -> bool:
    """Whether ``metric`` has a bounded-difference constant (McDiarmid's bound can settle its swap test).

    Examples
    --------
    >>> has_swap_bound("best_accuracy"), has_swap_bound("average_precision")
    (True, False)
    """
    from tablegen.compute.metrics import get_metric

    return get_metric(metric).swap_constant_routine is not None


def item_constants(metric: str, labels: np.ndarray) -> np.ndarray | None:
    """c_i, how much ``metric`` can change when item i moves to any score (labels fixed); None where no constant
    is proved (average precision, best MCC, counts at a cut-off).

    Examples
    --------
    >>> item_constants("best_balanced_accuracy", np.array([1, 0, 0, 0])).tolist()
    [0.5, 0.16666666666666666, 0.16666666666666666, 0.16666666666666666]
    >>> item_constants("average_precision", np.array([1, 0])) is None
    True
    """
    from tablegen.compute.metrics import get_metric

    return get_metric(metric).swap_constants(labels)


def swap_p_bound(metric: str, labels: np.ndarray, ranks_a: np.ndarray, ranks_b: np.ndarray, observed: float,
                 alternative: str, tolerance: float) -> float:
    """McDiarmid's upper bound on the exact swap-permutation p-value of ``observed`` = metric(a) - metric(b)
    (1 where no constant is proved, or where the bound says nothing).

    ``ranks_a``, ``ranks_b``: each model's within-model ranks (an item with equal ranks changes nothing when
    swapped); ``alternative``: ``"greater"`` (Pr(D >= d)), ``"less"`` (Pr(D <= d)) or ``"two-sided"``
    (Pr(|D| >= |d|)); each counts a pattern reaching d within ``tolerance``.

    Examples
    --------
    >>> y = np.r_[np.ones(300), np.zeros(700)]
    >>> r = np.arange(1000.0)
    >>> bound = swap_p_bound("best_accuracy", y, r, r[::-1], 0.2, "greater", 1e-9)
    >>> 0 < bound < 1e-8
    True
    >>> swap_p_bound("best_accuracy", y, r, r[::-1], -0.2, "greater", 1e-9)
    1.0
    """
    constants = item_constants(metric, labels)
    if constants is None:
        return 1.0
    moving = np.asarray(ranks_a) != np.asarray(ranks_b)
    spread = float(np.sum((2.0 * constants[moving]) ** 2))
    if alternative == "greater":
        t, sides = observed, 1.0
    elif alternative == "less":
        t, sides = -observed, 1.0
    else:
        t, sides = abs(observed), 2.0
    t -= tolerance + ROUNDING
    if t <= 0:
        return 1.0
    if spread == 0.0:  # no item moves D (then d = 0 and t <= 0 above): claim nothing
        return 1.0
    return float(min(1.0, sides * math.exp(-2.0 * t * t / spread)))
