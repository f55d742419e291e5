"""The K-class report's max-T test (Westfall–Young) over the models given, from the null's pass of
:mod:`tablegen.compare.report.multiclass_tests`: raw, step-down and single-step adjusted p-values and the critical
value of the maximum.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tablegen.compare.report.multiclass_tests import METRICS, PermutationNull, critical_from, null_tail, reaching_count


@dataclass(frozen=True)
class MulticlassSelection:
    """The winner among the models given against the label-permutation null (Westfall–Young max-T).

    Attributes
    ----------
    metric : str
    values : dict
    winner : str
        The model with the largest value.
    raw_p_values, adjusted_p_values, single_step_p_values : dict
        Per model: Pr(its value on a random arrangement >= observed); the step-down adjusted p-value (models ranked
        by value, each against the maximum over itself and the models ranked below it, then made monotone); the
        single-step one (against the maximum over every model).
    adjusted_p_intervals : dict
        95% Clopper–Pearson intervals of the exact adjusted p-values (Monte Carlo); equal ends when exact.
    critical_value : float or None
        The smallest value of the maximum whose tail is <= alpha (the winner is significant iff it reaches it).
    method : str
        ``"exact"`` (every distinct arrangement) or ``"permutation"`` (R random shuffles, ``seed``).
    """

    metric: str
    alpha: float
    values: dict
    winner: str
    raw_p_values: dict
    adjusted_p_values: dict
    single_step_p_values: dict
    adjusted_p_intervals: dict
    critical_value: float | None
    method: str
    arrangements: int
    R: int | None = None
    seed: int | None = None

    @property
    def p_value(self) -> float:
        return self.adjusted_p_values[self.winner]

    @property
    def significant(self) -> bool:
        return self.p_value <= self.alpha

    @property
    def settled(self) -> bool:
        low, high = self.adjusted_p_intervals[self.winner]
        return high <= self.alpha or low > self.alpha

    def sentence(self) -> str:
        how = ("exact, over every distinct arrangement of the labels" if self.method == "exact" else
               f"{self.R:,} random label permutations, seed {self.seed}; 95% interval "
               f"[{self.adjusted_p_intervals[self.winner][0]:.3g}, {self.adjusted_p_intervals[self.winner][1]:.3g}]")
        unsettled = " (not settled: alpha is inside the p-value's 95% interval; raise R)"
        verdict = ("is" if self.significant else "is not") + ("" if self.settled else unsettled)
        critical = "" if self.critical_value is None else f"; critical value {self.critical_value:.4g}"
        return (f"{self.winner}'s {self.metric} = {self.values[self.winner]:.4g} {verdict} significantly better than "
                f"the best of the {len(self.values)} models given on randomly permuted labels at alpha = "
                f"{self.alpha:g}: max-T p = {self.p_value:.3g} ({how}){critical}")

    def to_dict(self) -> dict:
        from tablegen.common.outputs import json_ready

        return json_ready({"metric": self.metric, "alpha": self.alpha, "values": self.values, "winner": self.winner,
                           "p_value": self.p_value, "significant": self.significant, "settled": self.settled,
                           "raw_p_values": self.raw_p_values, "adjusted_p_values": self.adjusted_p_values,
                           "single_step_p_values": self.single_step_p_values,
                           "adjusted_p_intervals": self.adjusted_p_intervals,
                           "critical_value": self.critical_value, "method": self.method,
                           "arrangements": self.arrangements, "R": self.R, "seed": self.seed})


def selection(names: tuple, observed: np.ndarray, null: PermutationNull, metric: str,
              alpha: float, columns: tuple = METRICS) -> MulticlassSelection:
    """Westfall–Young max-T over the models given, from the pass (``observed`` (M, columns), ``metric`` one of the
    ``columns``: the label metrics, or the probability metrics' pass of :mod:`.multiclass_probabilities`).

    Examples
    --------
    >>> null = PermutationNull(np.array([[[0.5, 0, 0, 0], [1.0, 0, 0, 0]], [[1.0, 0, 0, 0], [0.5, 0, 0, 0]]]),
    ...                        True, None, None)
    >>> result = selection(("a", "b"), np.array([[1.0, 0, 0, 0], [0.5, 0, 0, 0]]), null, "accuracy", 0.5)
    >>> result.adjusted_p_values, result.raw_p_values
    ({'a': 1.0, 'b': 1.0}, {'a': 0.5, 'b': 1.0})
    """
    column = columns.index(metric)
    x = observed[:, column]
    values = null.values[:, :, column]
    order = np.argsort(-x, kind="stable")
    below = np.maximum.accumulate(values[:, order][:, ::-1], axis=1)[:, ::-1]  # max over ranks j..M
    step = [null_tail(int(reaching_count(below[:, j], x[order[j]])), null) for j in range(order.size)]
    adjusted = np.maximum.accumulate([p for p, _ in step])
    highs = np.maximum.accumulate([hi for _, (_, hi) in step])
    lows = np.maximum.accumulate([lo for _, (lo, _) in step])
    raw = {names[m]: float(null_tail(int(reaching_count(values[:, m], x[m])), null)[0]) for m in range(len(names))}
    single = {names[m]: float(null_tail(int(reaching_count(below[:, 0], x[m])), null)[0]) for m in range(len(names))}
    winner = names[order[0]]
    return MulticlassSelection(
        metric, alpha, {names[m]: float(x[m]) for m in range(len(names))}, winner, raw,
        {names[order[j]]: float(adjusted[j]) for j in range(order.size)}, single,
        {names[order[j]]: (float(lows[j]), float(highs[j])) for j in range(order.size)},
        critical_from(below[:, 0], null, alpha), "exact" if null.exact else "permutation", null.size, null.R,
        null.seed)
