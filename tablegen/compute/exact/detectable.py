"""The minimum detectable AUC: the smallest AUC of a Lehmann alternative whose exact power reaches a target.

Exact power rises with the Lehmann exponent k (a larger k moves positives up the ranking, and every metric rises
when a positive moves above a negative), so for each target power the answer is the root of a monotone function
of the AUC k / (k + 1).  :func:`detectable_aucs` finds it for several targets at once from one event (one critical
value per (C, alpha)), every probability computed once and shared between the targets: each target's search starts
from the tightest bracket the probabilities already computed give (those of the lower targets, and of the answers
at a smaller C, which lie below), then closes it by interpolation (inverse quadratic, else secant) of the logit of
the power against log k (:func:`_close`), bisecting where that fails.  It stops
with a bracket [low, high] of width <= :data:`AUC_TOLERANCE` where the power at ``high`` reaches the target and
the power at ``low`` does not, and reports ``high``: the answer of :func:`tablegen.minimum_detectable`'s
bisection to within that width (both brackets hold the same root).  Three levels take about 14 exact
probabilities per (C, alpha) over a cell's Cs (measured: 959 for 69 events of five metrics at five cells, against
1,211 with secant steps alone and about 75 per event by bisection); the power at AUC 0.5 is not computed where the
test's size is known to lie below every level, nor at 1 - 1e-9 where a smaller AUC already reaches them.

The batch job tabulates it for every cell, metric, C and alpha (:func:`cell_detectable_aucs`).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from tablegen.compute.stats import of_winners

#: The width of the bracket of each minimum detectable AUC (what :func:`tablegen.minimum_detectable` bisects to).
AUC_TOLERANCE = 1e-7
#: The smallest and largest AUC searched: the null, and a model just short of a perfect ranking.
LOWEST_AUC, HIGHEST_AUC = 0.5, 1.0 - 1e-9
#: What is stored where no AUC below 1 reaches the target (the test detects nothing with that power).
UNDETECTABLE = 1.0


class _Curve:
    """The exact power of one event as a function of the AUC, each AUC's probability computed once."""

    def __init__(self, probability: Callable[[float], float], winners: int):
        self.probability, self.winners, self.seen = probability, winners, {}
        self.floor = False  # True: the power at AUC 0.5 is known to lie below every target, without computing it

    def __call__(self, auc: float) -> float:
        if auc not in self.seen:
            self.seen[auc] = of_winners(min(max(float(self.probability(auc / (1.0 - auc))), 0.0), 1.0),
                                         self.winners)
        return self.seen[auc]

    def bracket(self, target: float) -> tuple[float, float, float, float]:
        """(low, power at low, high, power at high): the tightest bracket of the target among the AUCs seen."""
        below = [(a, g) for a, g in self.seen.items() if g < target] + ([(LOWEST_AUC, 0.0)] if self.floor else [])
        above = [(a, g) for a, g in self.seen.items() if g >= target]
        low, high = max(below), min(above)
        return (*low, *high)


def _logit(p: float) -> float:
    p = min(max(p, _CLIP), _TOP)
    return math.log(p) - math.log1p(-p)


#: Powers are clipped to [_CLIP, _TOP] before their logit (the interpolation's scale only, never a decision).
_CLIP, _TOP = 1e-300, math.nextafter(1.0, 0.0)


def _secant(curve: _Curve, goal: float) -> float | None:
    """log k where the inverse quadratic through the three computed points closest to the target (in the logit of
    the power, against log k; the secant through two where there are not three distinct powers) meets it; None
    without two such points of different power strictly inside (0, 1)."""
    points = sorted((abs(_logit(g) - goal), math.log(a / (1.0 - a)), _logit(g))
                    for a, g in curve.seen.items() if 0.0 < g < 1.0)
    if len(points) < 2 or points[0][2] == points[1][2]:
        return None
    if len(points) >= 3 and len({p[2] for p in points[:3]}) == 3:  # inverse quadratic through the closest three
        (_, x0, y0), (_, x1, y1), (_, x2, y2) = points[:3]
        return (x0 * (goal - y1) * (goal - y2) / ((y0 - y1) * (y0 - y2))
                + x1 * (goal - y0) * (goal - y2) / ((y1 - y0) * (y1 - y2))
                + x2 * (goal - y0) * (goal - y1) / ((y2 - y0) * (y2 - y1)))
    (_, x0, y0), (_, x1, y1) = points[:2]
    return x0 + (goal - y0) * (x1 - x0) / (y1 - y0)


def _close(curve: _Curve, target: float, tolerance: float) -> float:
    """The upper end of a bracket of width <= ``tolerance`` of the smallest AUC reaching ``target``.

    Interpolation steps (:func:`_secant`) on the logit of the power against log k = logit(AUC) (where a power curve
    is nearly a straight line) through the computed powers closest to the target, a bisection wherever a step
    leaves the bracket or two steps fail to halve it; a point is never closer than half the tolerance to an end of
    the bracket, so the step after convergence closes it.  Every decision compares an exact power with the target:
    the bracket is rigorous whatever the interpolation does."""
    low, _, high, _ = curve.bracket(target)
    goal, widths = _logit(target), [high - low]
    step = 0.5 * tolerance
    while high - low > tolerance:
        t = None if len(widths) >= 3 and high - low > 0.5 * widths[-3] else _secant(curve, goal)
        x = 1.0 / (1.0 + math.exp(-t)) if t is not None and -700.0 < t < 700.0 else None
        if x is None or not low < x < high:
            x = 0.5 * (low + high)
        x = min(max(x, low + step), high - step)
        if curve(x) >= target:
            high = x
        else:
            low = x
        widths.append(high - low)
    return high


def _reach(curve: _Curve, target: float, tries: int = 3) -> bool:
    """Compute powers until one reaches ``target`` (secant steps up from the powers computed, at most ``tries``,
    then AUC 1 - 1e-9); whether one does (False: no AUC below 1 reaches it)."""
    goal = _logit(target)
    for _ in range(tries):
        if any(g >= target for g in curve.seen.values()):
            return True
        low = max([a for a, g in curve.seen.items() if g < target] + [LOWEST_AUC])
        t = _secant(curve, goal)
        x = 1.0 / (1.0 + math.exp(-t)) if t is not None and -700.0 < t < 700.0 else None
        x = 0.5 * (low + 1.0) if x is None or not low < x else x  # no secant: halfway to a perfect ranking
        curve(min(x, 1.0 - 1e-6))
    return any(g >= target for g in curve.seen.values()) or curve(HIGHEST_AUC) >= target


def detectable_aucs(probability: Callable[[float], float], levels, winners: int = 1,
                    tolerance: float = AUC_TOLERANCE, null_bound: float | None = None, hints=()) -> np.ndarray:
    """The smallest AUC whose exact power reaches each of ``levels`` (module docstring), one event's probabilities
    shared between the levels.

    Parameters
    ----------
    probability : callable
        ``probability(k)``: the exact Lehmann probability of the event "metric > m*" (an
        :class:`~tablegen.compute.exact.power.ExceedEvent`'s ``probability``), non-decreasing in k.
    levels : sequence of float
        Target powers in (0, 1).
    winners : int
        Equally good models (1: one informative model among C).
    tolerance : float
        The width of each bracket.
    null_bound : float, optional
        An upper bound on the power at AUC 0.5 (the test's size); where it lies below every level, the power there
        is not computed (default: it is).
    hints : sequence of float
        AUCs computed first (the answers at a smaller C, which lie at or below these: good starting points).

    Returns
    -------
    numpy.ndarray
        One AUC per level: the upper end of its bracket; 0.5 where the null itself reaches the level;
        :data:`UNDETECTABLE` (1.0) where no AUC below 1 (:data:`HIGHEST_AUC`) does.

    Examples
    --------
    >>> from tablegen.compute.exact.power import best_accuracy_event
    >>> event = best_accuracy_event(20, 20, 0.01)  # C = 1, alpha = 0.01: minimum_detectable gives the same
    >>> aucs = detectable_aucs(event.probability, [0.5, 0.8])
    >>> [round(float(a), 4) for a in aucs]
    [0.7418, 0.804]
    """
    curve = _Curve(probability, winners)
    curve.floor = null_bound is not None and null_bound < min(levels)
    bottom = None if curve.floor else curve(LOWEST_AUC)
    for hint in hints:
        if LOWEST_AUC < hint < HIGHEST_AUC:
            curve(float(hint))
    out = np.empty(len(levels))
    detectable = True
    for i in np.argsort(levels, kind="stable"):
        target = float(levels[i])
        detectable = detectable and _reach(curve, target)
        if not detectable:
            out[i] = UNDETECTABLE
        elif bottom is not None and bottom >= target:
            out[i] = LOWEST_AUC
        else:
            out[i] = _close(curve, target, tolerance)
    return out


def cell_detectable_aucs(spec, P: int, N: int, Cs, alphas, levels, max_seconds: float | None = None) -> np.ndarray:
    """(power level, alpha, C) minimum detectable AUCs of one metric at (P, N): one event per (C, alpha), its
    probabilities shared between the levels (:func:`detectable_aucs`); NaN where the metric has no exact Lehmann
    power at the cell, or one exact probability there is estimated (:meth:`~tablegen.compute.metrics.Metric.power_cost`)
    over ``max_seconds``.

    Examples
    --------
    >>> from tablegen.compute.metrics import get_metric
    >>> values = cell_detectable_aucs(get_metric("best_accuracy"), 20, 20, [10], [0.01], [0.5, 0.8])
    >>> values.shape, bool(values[0, 0, 0] < values[1, 0, 0])
    ((2, 1, 1), True)
    """
    from tablegen.compute.stats import upper_tail_probability

    out = np.full((len(levels), len(alphas), len(Cs)), np.nan)
    if not spec.power_exact_at(P, N) or (max_seconds is not None and spec.power_cost(P, N)[0] > max_seconds):
        return out
    for a, alpha in enumerate(alphas):
        hints, previous = (), None
        for c, C in enumerate(Cs):
            tail = float(upper_tail_probability(C, alpha))
            event = spec.lehmann_event(P, N, tail)
            hints = hints if previous is not None and C > previous else ()  # a larger C's answers lie above
            out[:, a, c] = detectable_aucs(event.probability, levels, null_bound=min(1.0, 2.0 * tail), hints=hints)
            hints, previous = [v for v in out[:, a, c] if LOWEST_AUC < v < UNDETECTABLE], C
    return out


#: Exact probabilities :func:`detectable_aucs` takes per power level (about 14 measured for three levels, over a
#: cell's Cs): what the cost model counts, with two more per event.
PROBABILITIES_PER_LEVEL = 5


def detectable_seconds(spec, P: int, N: int, pairs: int, levels: int, max_seconds: float | None = None) -> float:
    """Estimated single-core seconds of :func:`cell_detectable_aucs` for one metric at (P, N): ``pairs`` (C, alpha)
    events of 2 + :data:`PROBABILITIES_PER_LEVEL` x ``levels`` exact probabilities each, at the metric's estimated
    cost of one (:meth:`~tablegen.compute.metrics.Metric.power_cost`); 0 where it leaves the cell NaN.

    Examples
    --------
    >>> from tablegen.compute.metrics import get_metric
    >>> spec = get_metric("best_f1")
    >>> detectable_seconds(spec, 100, 100, 3, 3) == 3 * 17 * spec.power_cost(100, 100)[0]
    True
    >>> detectable_seconds(get_metric("auc"), 300, 300, 3, 3, max_seconds=0.05)
    0.0
    """
    if not spec.power_exact_at(P, N):
        return 0.0
    seconds = float(spec.power_cost(P, N)[0])
    if max_seconds is not None and seconds > max_seconds:
        return 0.0
    return pairs * (2 + PROBABILITIES_PER_LEVEL * levels) * seconds
